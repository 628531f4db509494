//! The operations `bw_mem` measures: lmbench's nine (spec bw_mem.md §2) and the peak-bandwidth
//! kernels beyond it, with what each touches and what it counts.
//!
//! lmbench counts `nbytes` per iteration for every operation, whatever it touches: a copy does
//! not add its other half, `rd` and `wr` count the three ints in four they skip, and the
//! unrolled operations ignore a tail of `nbytes mod 512` bytes yet count it. socbench keeps that
//! rule for the figure it prints, and reports separately the bytes actually loaded and stored and
//! a model of the bytes moved between the caches and memory.

use serde::{Deserialize, Serialize};

/// Bytes in one unrolled chunk (lmbench's 128 ints).
pub const CHUNK_BYTES: u64 = 512;

/// Offset of the copy destination inside the second buffer with the `conflict` argument
/// (lmbench: 2048 - 128).
pub const CONFLICT_OFFSET: usize = 1920;

/// Extra bytes lmbench allocates in the second buffer (room for the conflict offset).
pub const SECOND_BUFFER_SLACK: usize = 2048;

/// One operation; reports spell it as on the command line (`rd`, `mix3_1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// lmbench `rd`.
    Rd,
    /// lmbench `wr`.
    Wr,
    /// lmbench `rdwr`.
    Rdwr,
    /// lmbench `cp`.
    Cp,
    /// lmbench `frd`.
    Frd,
    /// lmbench `fwr`.
    Fwr,
    /// lmbench `fcp`.
    Fcp,
    /// lmbench `bzero`.
    Bzero,
    /// lmbench `bcopy`.
    Bcopy,
    /// Widest vector loads of every byte.
    Rdvec,
    /// Non-temporal vector stores of every byte.
    Wrnt,
    /// Vector loads and non-temporal vector stores.
    Cpnt,
    /// libc memcpy of the whole buffer.
    Memcpy,
    /// libc memset of the whole buffer.
    Memset,
    /// Three 512-byte chunks read for every one written.
    Mix3_1,
    /// Two chunks read for every one written.
    Mix2_1,
    /// One chunk read for every one written.
    Mix1_1,
}

/// How an operation's stores reach memory (for the bus model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stores {
    /// The operation only reads.
    None,
    /// Ordinary stores: each line written is first read (write-allocate), then written back.
    Normal,
    /// Non-temporal stores: lines are written without being read.
    NonTemporal,
    /// Whatever libc chooses (glibc switches to non-temporal stores above a size threshold);
    /// the model assumes ordinary stores, so the bus figure is an upper bound.
    Libc,
}

/// What one iteration of an operation does to memory, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Traffic {
    /// Bytes counted for the figure (lmbench: the size argument, for every operation).
    pub counted_bytes: u64,
    /// Bytes of the source buffer the operation walks (the unrolled ones skip the tail of
    /// size mod 512).
    pub touched_bytes: u64,
    /// Bytes the program loads.
    pub load_bytes: u64,
    /// Bytes the program stores.
    pub store_bytes: u64,
    /// Bytes moved between the caches and memory when the buffers do not fit in the caches:
    /// every line touched moves once, and each line written with ordinary stores moves twice
    /// more (the write-allocate read and the write-back).
    pub bus_bytes: u64,
    /// How the stores reach memory.
    pub stores: Stores,
}

impl Op {
    /// Every operation: lmbench's nine in its usage order, then the others.
    pub const ALL: [Op; 17] = [
        Op::Rd,
        Op::Wr,
        Op::Rdwr,
        Op::Cp,
        Op::Fwr,
        Op::Frd,
        Op::Fcp,
        Op::Bzero,
        Op::Bcopy,
        Op::Rdvec,
        Op::Wrnt,
        Op::Cpnt,
        Op::Memcpy,
        Op::Memset,
        Op::Mix3_1,
        Op::Mix2_1,
        Op::Mix1_1,
    ];

    /// The name on the command line (exact, case-sensitive as lmbench).
    pub fn name(self) -> &'static str {
        match self {
            Op::Rd => "rd",
            Op::Wr => "wr",
            Op::Rdwr => "rdwr",
            Op::Cp => "cp",
            Op::Frd => "frd",
            Op::Fwr => "fwr",
            Op::Fcp => "fcp",
            Op::Bzero => "bzero",
            Op::Bcopy => "bcopy",
            Op::Rdvec => "rdvec",
            Op::Wrnt => "wrnt",
            Op::Cpnt => "cpnt",
            Op::Memcpy => "memcpy",
            Op::Memset => "memset",
            Op::Mix3_1 => "mix3_1",
            Op::Mix2_1 => "mix2_1",
            Op::Mix1_1 => "mix1_1",
        }
    }

    /// Looks an operation up by its exact name.
    pub fn parse(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Every name, space-separated (for messages).
    pub fn names() -> String {
        Op::ALL.map(Op::name).join(" ")
    }

    /// True for lmbench's own nine operations.
    pub fn is_lmbench(self) -> bool {
        matches!(
            self,
            Op::Rd
                | Op::Wr
                | Op::Rdwr
                | Op::Cp
                | Op::Frd
                | Op::Fwr
                | Op::Fcp
                | Op::Bzero
                | Op::Bcopy
        )
    }

    /// What it does, in one line.
    pub fn description(self) -> &'static str {
        match self {
            Op::Rd => "lmbench rd: sum one int in four (4-byte loads, 16-byte stride)",
            Op::Wr => "lmbench wr: store 1 into one int in four (4-byte stores, 16-byte stride)",
            Op::Rdwr => "lmbench rdwr: load, add and overwrite one int in four (16-byte stride)",
            Op::Cp => "lmbench cp: copy one int in four to the second buffer (16-byte stride)",
            Op::Frd => "lmbench frd: sum every int (4-byte loads)",
            Op::Fwr => {
                "lmbench fwr: store 1 into every int (16-byte stores up each chunk, gcc -O2; --lmbench-build O: 4-byte, last int first)"
            }
            Op::Fcp => "lmbench fcp: copy every int to the second buffer (4-byte accesses)",
            Op::Bzero => "lmbench bzero: libc memset(0) of the whole buffer",
            Op::Bcopy => "lmbench bcopy: libc memmove of the whole buffer to the second one",
            Op::Rdvec => "sum every int with the widest vector loads this CPU has",
            Op::Wrnt => "write every int with non-temporal vector stores (no write-allocate)",
            Op::Cpnt => "copy with vector loads and non-temporal vector stores",
            Op::Memcpy => "libc memcpy of the whole buffer to the second one",
            Op::Memset => "libc memset(0x01) of the whole buffer",
            Op::Mix3_1 => "read 3 chunks, write 1 (vector loads and ordinary vector stores)",
            Op::Mix2_1 => "read 2 chunks, write 1 (vector loads and ordinary vector stores)",
            Op::Mix1_1 => "read 1 chunk, write 1 (vector loads and ordinary vector stores)",
        }
    }

    /// True when the operation copies into a second buffer.
    pub fn uses_second_buffer(self) -> bool {
        matches!(self, Op::Cp | Op::Fcp | Op::Bcopy | Op::Cpnt | Op::Memcpy)
    }

    /// True when the operation goes through libc (exact byte count, libc's own access width).
    pub fn is_libc(self) -> bool {
        matches!(self, Op::Bzero | Op::Bcopy | Op::Memcpy | Op::Memset)
    }

    /// True when the operation has vector variants chosen at run time (`--isa`).
    pub fn has_variants(self) -> bool {
        matches!(
            self,
            Op::Rdvec | Op::Wrnt | Op::Cpnt | Op::Mix3_1 | Op::Mix2_1 | Op::Mix1_1
        )
    }

    /// True when the operation works in whole 512-byte chunks (ignoring the tail).
    pub fn is_chunked(self) -> bool {
        !self.is_libc()
    }

    /// For the mixes, chunks read per chunk written.
    pub fn mix_reads(self) -> Option<u64> {
        match self {
            Op::Mix3_1 => Some(3),
            Op::Mix2_1 => Some(2),
            Op::Mix1_1 => Some(1),
            _ => None,
        }
    }

    /// The access each operation makes, for reports (`4-byte loads, 16-byte stride`).
    pub fn access(self) -> &'static str {
        match self {
            Op::Rd | Op::Wr | Op::Rdwr | Op::Cp => {
                "4-byte scalar, one int in four (16-byte stride)"
            }
            Op::Frd | Op::Fwr | Op::Fcp => "4-byte scalar, every int",
            Op::Bzero | Op::Bcopy | Op::Memcpy | Op::Memset => "libc's choice",
            Op::Rdvec | Op::Wrnt | Op::Cpnt | Op::Mix3_1 | Op::Mix2_1 | Op::Mix1_1 => {
                "vector register width of the variant, every byte"
            }
        }
    }

    /// Bytes counted, touched, loaded, stored and moved per iteration for a size argument of
    /// `nbytes` (lmbench counts `nbytes` for every operation).
    pub fn traffic(self, nbytes: u64) -> Traffic {
        let chunks = nbytes / CHUNK_BYTES;
        let t = if self.is_chunked() {
            chunks * CHUNK_BYTES
        } else {
            nbytes
        };
        let (load, store, bus, stores) = match self {
            Op::Rd => (t / 4, 0, t, Stores::None),
            Op::Wr => (0, t / 4, 2 * t, Stores::Normal),
            // The load brings each line in; the store only adds its write-back.
            Op::Rdwr => (t / 4, t / 4, 2 * t, Stores::Normal),
            Op::Cp => (t / 4, t / 4, 3 * t, Stores::Normal),
            Op::Frd | Op::Rdvec => (t, 0, t, Stores::None),
            Op::Fwr => (0, t, 2 * t, Stores::Normal),
            Op::Fcp => (t, t, 3 * t, Stores::Normal),
            Op::Bzero | Op::Memset => (0, t, 2 * t, Stores::Libc),
            Op::Bcopy | Op::Memcpy => (t, t, 3 * t, Stores::Libc),
            Op::Wrnt => (0, t, t, Stores::NonTemporal),
            Op::Cpnt => (t, t, 2 * t, Stores::NonTemporal),
            Op::Mix3_1 | Op::Mix2_1 | Op::Mix1_1 => {
                let reads = self.mix_reads().unwrap_or(1);
                let written = chunks / (reads + 1) * CHUNK_BYTES;
                let read = t - written;
                (read, written, read + 2 * written, Stores::Normal)
            }
        };
        Traffic {
            counted_bytes: nbytes,
            touched_bytes: t,
            load_bytes: load,
            store_bytes: store,
            bus_bytes: bus,
            stores,
        }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_exact() {
        for op in Op::ALL {
            assert_eq!(Op::parse(op.name()), Some(op));
        }
        assert_eq!(Op::parse("RD"), None, "lmbench names are case-sensitive");
        assert_eq!(Op::parse("rd "), None);
        assert_eq!(Op::parse("mix3:1"), None);
        // lmbench's usage order first.
        assert!(Op::names().starts_with("rd wr rdwr cp fwr frd fcp bzero bcopy rdvec"));
    }

    #[test]
    fn reports_spell_every_op_as_its_name() {
        for op in Op::ALL {
            let json = serde_json::to_string(&op).unwrap();
            assert_eq!(json, format!("\"{}\"", op.name()));
            assert_eq!(serde_json::from_str::<Op>(&json).unwrap(), op);
        }
    }

    #[test]
    fn lmbench_counts_nbytes_for_every_op_and_size() {
        for op in Op::ALL {
            for n in [
                512u64,
                513,
                1000,
                1023,
                1024,
                4096 + 100,
                1 << 20,
                (64 << 20) + 7,
            ] {
                assert_eq!(op.traffic(n).counted_bytes, n, "{op} {n}");
            }
        }
    }

    #[test]
    fn unrolled_ops_skip_the_tail_and_libc_ops_do_not() {
        for op in Op::ALL {
            let t = op.traffic(1000);
            if op.is_libc() {
                assert_eq!(t.touched_bytes, 1000, "{op}");
            } else {
                assert_eq!(t.touched_bytes, 512, "{op}");
            }
        }
    }

    #[test]
    fn loads_stores_and_bus_model() {
        let n = 1 << 20;
        let t = |op: Op| op.traffic(n);
        assert_eq!((t(Op::Rd).load_bytes, t(Op::Rd).bus_bytes), (n / 4, n));
        assert_eq!((t(Op::Wr).store_bytes, t(Op::Wr).bus_bytes), (n / 4, 2 * n));
        assert_eq!(t(Op::Cp).bus_bytes, 3 * n);
        assert_eq!(t(Op::Fcp).bus_bytes, 3 * n);
        assert_eq!(t(Op::Cpnt).bus_bytes, 2 * n);
        assert_eq!(t(Op::Wrnt).bus_bytes, n);
        // 2048 chunks; mix3_1 writes every fourth: 512 chunks written, 1536 read.
        let m = t(Op::Mix3_1);
        assert_eq!((m.load_bytes, m.store_bytes), (1536 * 512, 512 * 512));
        assert_eq!(m.bus_bytes, 1536 * 512 + 2 * 512 * 512);
        let m = t(Op::Mix1_1);
        assert_eq!((m.load_bytes, m.store_bytes), (n / 2, n / 2));
        // 3 chunks with 1:1: chunk 1 written, chunks 0 and 2 read.
        let m = Op::Mix1_1.traffic(3 * 512 + 5);
        assert_eq!((m.load_bytes, m.store_bytes), (1024, 512));
    }

    #[test]
    fn second_buffer_only_for_copies() {
        let copies: Vec<Op> = Op::ALL
            .into_iter()
            .filter(|o| o.uses_second_buffer())
            .collect();
        assert_eq!(
            copies,
            vec![Op::Cp, Op::Fcp, Op::Bcopy, Op::Cpnt, Op::Memcpy]
        );
    }
}
