//! The kernels: passes of an operation over its buffers, and the choice of implementation.
//!
//! lmbench's nine operations have one implementation each: the unrolled ones in
//! [`lmbench_x86_64`] on x86_64 (assembly with the instruction shape of a GCC build of lmbench:
//! the figure depends on it; `fwr` has a `-O` and a `-O2` shape, [`LmbenchBuild`]) and in
//! [`portable`] elsewhere (4-byte scalar accesses through
//! volatile loads and stores, so the compiler can neither widen nor drop them), `bzero` and
//! `bcopy` through libc. The peak-bandwidth kernels (`rdvec`, `wrnt`, `cpnt`, the mixes) have a variant
//! per instruction set, chosen once at run time (AVX-512, AVX2 or SSE2 on x86_64, NEON on
//! aarch64) with a portable fallback, and the choice is recorded in the report.

use std::hint::black_box;

use crate::error::{Unsupported, Usage};
use serde::{Deserialize, Serialize};

pub use buffers::Buffers;
pub use ops::{Op, Stores, Traffic};

mod buffers;
pub mod ops;
pub mod portable;

#[cfg(target_arch = "x86_64")]
pub mod x86_64;

#[cfg(target_arch = "x86_64")]
pub mod lmbench_x86_64;

/// lmbench's unrolled operations, `n` passes a call: in assembly with the reference build's
/// loop shape on x86_64, the portable volatile-access code elsewhere.
#[cfg(target_arch = "x86_64")]
use lmbench_x86_64 as lm;
#[cfg(not(target_arch = "x86_64"))]
use portable::repeated as lm;

/// How the implementation of lmbench's unrolled operations is named in reports.
const LMBENCH_LOOPS: &str = if cfg!(target_arch = "x86_64") {
    "x86_64 asm, gcc -O shape (4-byte)"
} else {
    "portable (4-byte volatile)"
};

/// How `fwr` in GCC `-O2`'s shape is named in reports.
const LMBENCH_WIDE_FWR: &str = if cfg!(target_arch = "x86_64") {
    "x86_64 asm, gcc -O2 shape (16-byte SSE2 stores)"
} else {
    "portable (16-byte volatile stores, gcc -O2 shape)"
};

#[cfg(target_arch = "aarch64")]
pub mod aarch64;

/// An instruction set a kernel can be written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Isa {
    /// Plain Rust (scalar, or whatever the compiler makes of it for the build's target).
    Portable,
    /// x86_64 SSE2, 16-byte vectors.
    Sse2,
    /// x86_64 AVX2, 32-byte vectors.
    Avx2,
    /// x86_64 AVX-512F, 64-byte vectors.
    Avx512,
    /// aarch64 Advanced SIMD, 16-byte vectors (LD1 of four registers, STNP pairs).
    Neon,
}

impl Isa {
    /// Lower-case name, as `--isa` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Sse2 => "sse2",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }

    /// Vector register width in bytes (0 for portable code).
    pub fn vector_bytes(self) -> u32 {
        match self {
            Isa::Portable => 0,
            Isa::Sse2 | Isa::Neon => 16,
            Isa::Avx2 => 32,
            Isa::Avx512 => 64,
        }
    }

    /// True when this CPU (and this build's architecture) can run it.
    pub fn available(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 => x86_64::Level::sse2().is_some(),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => x86_64::Level::avx2().is_some(),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => x86_64::Level::avx512().is_some(),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => aarch64::Neon::detect().is_some(),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }
}

/// The vector instruction sets of this build's architecture, widest first.
pub fn arch_isas() -> &'static [Isa] {
    if cfg!(target_arch = "x86_64") {
        &[Isa::Avx512, Isa::Avx2, Isa::Sse2]
    } else if cfg!(target_arch = "aarch64") {
        &[Isa::Neon]
    } else {
        &[]
    }
}

/// The buffers one pass works on.
#[derive(Debug)]
pub enum Io<'a> {
    /// Reads and writes in place (all but the copies).
    One(&'a mut [u8]),
    /// Copies from the first buffer into the second (same length).
    Two(&'a [u8], &'a mut [u8]),
}

impl Io<'_> {
    /// The same buffers, borrowed again for one pass.
    fn reborrow(&mut self) -> Io<'_> {
        match self {
            Io::One(b) => Io::One(b),
            Io::Two(s, d) => Io::Two(s, d),
        }
    }
}

/// The build of lmbench whose instruction shapes the unrolled operations follow. Only `fwr`
/// differs between the two: GCC's `-O2` (12 and later) turns its 128 4-byte stores per chunk
/// into 32 16-byte ones, which some cores run many times faster (bw_mem/README.md).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, clap::ValueEnum,
)]
pub enum LmbenchBuild {
    /// `gcc -O`, lmbench's own Makefile.
    #[value(name = "O")]
    #[serde(rename = "O")]
    O,
    /// `gcc -O2`, the build of distributions and the NDK, and of most published figures.
    #[default]
    #[value(name = "O2")]
    #[serde(rename = "O2")]
    O2,
}

impl LmbenchBuild {
    /// `O` or `O2`, as `--lmbench-build` takes it.
    pub fn name(self) -> &'static str {
        match self {
            LmbenchBuild::O => "O",
            LmbenchBuild::O2 => "O2",
        }
    }
}

/// An operation bound to an implementation this CPU can run. Only [`Kernel::select`] builds
/// one, after checking the CPU, so running it can never hit an illegal instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    op: Op,
    isa: Isa,
    build: LmbenchBuild,
}

impl Kernel {
    /// Chooses the implementation: for the vector operations the widest instruction set this
    /// CPU has, or `want` when given; lmbench's and libc's operations have one implementation
    /// (`want` may only name `portable` for them). A missing instruction set is
    /// [`Unsupported`] (exit 3); `--isa` on an operation without variants is [`Usage`].
    pub fn select(op: Op, want: Option<Isa>) -> Result<Kernel, crate::error::Refused> {
        if !op.has_variants() {
            return match want {
                None | Some(Isa::Portable) => Ok(Kernel::new(op, Isa::Portable)),
                Some(isa) => Err(Usage(format!(
                    "--isa {} applies only to rdvec, wrnt, cpnt and the mixes; {op} has one implementation",
                    isa.name()
                ))
                .into()),
            };
        }
        let nt = matches!(op, Op::Wrnt | Op::Cpnt);
        match want {
            Some(isa) => {
                if !isa.available() {
                    return Err(Unsupported(format!(
                        "--isa {}: this CPU ({}) cannot run it; available here: {}",
                        isa.name(),
                        std::env::consts::ARCH,
                        available_list(op)
                    ))
                    .into());
                }
                Ok(Kernel::new(op, isa))
            }
            None => {
                if let Some(&isa) = arch_isas().iter().find(|i| i.available()) {
                    tracing::debug!(%op, isa = isa.name(), "widest available variant");
                    return Ok(Kernel::new(op, isa));
                }
                if nt {
                    return Err(Unsupported(format!(
                        "{op} needs non-temporal vector stores, which socbench has no kernel for on {} (--isa portable runs ordinary stores)",
                        std::env::consts::ARCH
                    ))
                    .into());
                }
                Ok(Kernel::new(op, Isa::Portable))
            }
        }
    }

    /// Every implementation of `op` this CPU can run, widest first, portable last.
    pub fn all_available(op: Op) -> Vec<Kernel> {
        let mut v: Vec<Kernel> = if op.has_variants() {
            arch_isas()
                .iter()
                .filter(|i| i.available())
                .map(|&isa| Kernel::new(op, isa))
                .collect()
        } else {
            Vec::new()
        };
        v.push(Kernel::new(op, Isa::Portable));
        v
    }

    /// `op` on `isa`, lmbench's operations in the default build's shape.
    fn new(op: Op, isa: Isa) -> Kernel {
        Kernel {
            op,
            isa,
            build: LmbenchBuild::default(),
        }
    }

    /// The same operation with lmbench's unrolled operations in `build`'s shape.
    pub fn with_build(self, build: LmbenchBuild) -> Kernel {
        Kernel { build, ..self }
    }

    /// The lmbench build whose shapes lmbench's operations follow.
    pub fn build(&self) -> LmbenchBuild {
        self.build
    }

    /// True when this kernel's shape is the `-O2` `fwr` (16-byte stores).
    fn wide_fwr(&self) -> bool {
        self.op == Op::Fwr && self.build == LmbenchBuild::O2
    }

    /// The access the kernel makes, for reports (`4-byte scalar, every int`).
    pub fn access(&self) -> &'static str {
        if self.wide_fwr() {
            "16-byte stores, every int"
        } else {
            self.op.access()
        }
    }

    /// The operation.
    pub fn op(&self) -> Op {
        self.op
    }

    /// The instruction set of the implementation.
    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// What runs, for reports: `avx512`, `portable`, `libc`, or `portable (ordinary stores)`
    /// for a non-temporal operation forced to the portable code.
    pub fn label(&self) -> String {
        if self.op.is_libc() {
            "libc".into()
        } else if self.isa == Isa::Portable && matches!(self.op, Op::Wrnt | Op::Cpnt) {
            "portable (ordinary stores, not non-temporal)".into()
        } else if self.wide_fwr() {
            LMBENCH_WIDE_FWR.into()
        } else if self.isa == Isa::Portable && self.op.is_lmbench() {
            LMBENCH_LOOPS.into()
        } else {
            self.isa.name().into()
        }
    }

    /// Runs one pass over the buffers and returns the checksum: the wrapping 32-bit sum of
    /// every word read (0 for operations that only write or copy).
    ///
    /// Chunked operations use the first `len / 512` whole chunks; libc operations the whole
    /// length. Buffers must be 64-byte aligned (the non-temporal stores need it); a copy's
    /// destination at least as long as its source.
    pub fn pass(&self, io: Io<'_>) -> u64 {
        self.passes(io, 1)
    }

    /// Runs `n` passes over the buffers and returns the checksum of them all: the wrapping
    /// 32-bit sum of every word read in every pass (see [`Kernel::pass`]).
    ///
    /// lmbench's operations and libc's loop over the passes right around the kernel, as
    /// lmbench's own loops do: at 512 bytes a pass lasts a few nanoseconds, so a dispatch and
    /// slice checks per pass would be part of the figure. The other operations hide the
    /// buffers' addresses from the optimiser at every pass, so that no pass's stores can be
    /// merged with the next one's or dropped; lmbench's kernels need no such help (assembly,
    /// or volatile accesses), and the libc loops hand the destination to an empty asm statement
    /// after each call.
    pub fn passes(&self, io: Io<'_>, n: u64) -> u64 {
        use portable as p;
        match (self.op, io) {
            (Op::Rd, Io::One(b)) => lm::rd(p::words(b), n),
            (Op::Frd, Io::One(b)) => lm::frd(p::words(b), n),
            (Op::Rdwr, Io::One(b)) => lm::rdwr(p::words_mut(b), n),
            (Op::Wr, Io::One(b)) => {
                lm::wr(p::words_mut(b), n);
                0
            }
            (Op::Fwr, Io::One(b)) => {
                match self.build {
                    LmbenchBuild::O => lm::fwr(p::words_mut(b), n),
                    LmbenchBuild::O2 => lm::fwr_o2(p::words_mut(b), n),
                }
                0
            }
            (Op::Cp, Io::Two(s, d)) => {
                lm::cp(p::words(s), p::words_mut(d), n);
                0
            }
            (Op::Fcp, Io::Two(s, d)) => {
                lm::fcp(p::words(s), p::words_mut(d), n);
                0
            }
            (op @ (Op::Bzero | Op::Memset), Io::One(b)) => {
                p::libc_memset_passes(b, u8::from(op == Op::Memset), n);
                0
            }
            (Op::Bcopy, Io::Two(s, d)) => {
                p::libc_memmove_passes(s, d, n);
                0
            }
            (Op::Memcpy, Io::Two(s, d)) => {
                p::libc_memcpy_passes(s, d, n);
                0
            }
            (_, mut io) => {
                let mut sum = 0u32;
                for _ in 0..n {
                    sum = sum.wrapping_add(self.vector_pass(black_box(io.reborrow())));
                }
                u64::from(sum)
            }
        }
    }

    /// One pass of a peak-bandwidth kernel; its checksum.
    fn vector_pass(&self, io: Io<'_>) -> u32 {
        use portable as p;
        match (self.op, io) {
            (Op::Rdvec, Io::One(b)) => self.rdvec(p::words(b)),
            (Op::Wrnt, Io::One(b)) => {
                self.wrnt(p::words_mut(b));
                0
            }
            (Op::Cpnt, Io::Two(s, d)) => {
                self.cpnt(p::words(s), p::words_mut(d));
                0
            }
            (op @ (Op::Mix3_1 | Op::Mix2_1 | Op::Mix1_1), Io::One(b)) => {
                let reads = op.mix_reads().unwrap_or(1) as usize;
                self.mix(p::words_mut(b), reads)
            }
            (op, io) => panic!("{op} given the wrong buffers: {io:?}"),
        }
    }

    fn rdvec(&self, b: &[u32]) -> u32 {
        match self.isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 | Isa::Avx2 | Isa::Avx512 => x86_64::rdvec(self.x86(), b),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => aarch64::rdvec(self.neon(), b),
            _ => portable::rdvec(b),
        }
    }

    fn wrnt(&self, b: &mut [u32]) {
        match self.isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 | Isa::Avx2 | Isa::Avx512 => x86_64::wrnt(self.x86(), b),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => aarch64::wrnt(self.neon(), b),
            _ => portable::wrnt(b),
        }
    }

    fn cpnt(&self, s: &[u32], d: &mut [u32]) {
        match self.isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 | Isa::Avx2 | Isa::Avx512 => x86_64::cpnt(self.x86(), s, d),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => aarch64::cpnt(self.neon(), s, d),
            _ => portable::cpnt(s, d),
        }
    }

    fn mix(&self, b: &mut [u32], reads: usize) -> u32 {
        match self.isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 | Isa::Avx2 | Isa::Avx512 => x86_64::mix(self.x86(), b, reads),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => aarch64::mix(self.neon(), b, reads),
            _ => portable::mix(b, reads),
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn x86(&self) -> x86_64::Level {
        let level = match self.isa {
            Isa::Avx512 => x86_64::Level::avx512(),
            Isa::Avx2 => x86_64::Level::avx2(),
            _ => x86_64::Level::sse2(),
        };
        level.expect("a Kernel is only built for an instruction set the CPU has")
    }

    #[cfg(target_arch = "aarch64")]
    fn neon(&self) -> aarch64::Neon {
        aarch64::Neon::detect().expect("a Kernel is only built for an instruction set the CPU has")
    }
}

/// `avx512 avx2 sse2 portable` (what `--isa` may name for `op` on this CPU).
pub fn available_list(op: Op) -> String {
    Kernel::all_available(op)
        .iter()
        .map(|k| k.isa.name())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ExitStatus as _;

    #[test]
    fn lmbench_ops_have_one_implementation() {
        for op in Op::ALL.into_iter().filter(|o| !o.has_variants()) {
            let k = Kernel::select(op, None).unwrap();
            assert_eq!(k.isa(), Isa::Portable);
            assert_eq!(Kernel::all_available(op).len(), 1);
            let e = Kernel::select(op, Some(Isa::Avx2)).unwrap_err();
            assert_eq!(e.exit_status(), 2);
        }
    }

    #[test]
    fn auto_picks_the_widest_available() {
        let k = Kernel::select(Op::Rdvec, None).unwrap();
        let widest = arch_isas()
            .iter()
            .copied()
            .find(|i| i.available())
            .unwrap_or(Isa::Portable);
        assert_eq!(k.isa(), widest);
        assert_eq!(
            Kernel::all_available(Op::Rdvec).last().unwrap().isa(),
            Isa::Portable
        );
    }

    /// Two buffers of `len` bytes (the second for copies) holding a pattern.
    fn buffers(len: usize) -> (crate::sys::mem::Buffer, crate::sys::mem::Buffer) {
        let mut a = crate::sys::mem::Buffer::new(len, crate::sys::mem::Pages::Small).unwrap();
        let mut b = crate::sys::mem::Buffer::new(len, crate::sys::mem::Pages::Small).unwrap();
        for (i, x) in a.as_mut_slice().iter_mut().enumerate() {
            *x = (i * 7 + 3) as u8;
        }
        b.as_mut_slice().fill(0xa5);
        (a, b)
    }

    fn io<'a>(
        op: Op,
        a: &'a mut crate::sys::mem::Buffer,
        b: &'a mut crate::sys::mem::Buffer,
    ) -> Io<'a> {
        if op.uses_second_buffer() {
            Io::Two(a.as_slice(), b.as_mut_slice())
        } else {
            Io::One(a.as_mut_slice())
        }
    }

    #[test]
    fn passes_equal_as_many_single_passes() {
        for op in Op::ALL {
            for k in Kernel::all_available(op) {
                for len in [512, 4096 + 200] {
                    let (mut a1, mut b1) = buffers(len);
                    let (mut a2, mut b2) = buffers(len);
                    let many = k.passes(io(op, &mut a1, &mut b1), 3);
                    let single = (0..3).fold(0u32, |s, _| {
                        s.wrapping_add(k.pass(io(op, &mut a2, &mut b2)) as u32)
                    });
                    let single = u64::from(single);
                    let what = format!("{op} {} {len}", k.label());
                    assert_eq!(many, single, "{what}: checksum");
                    assert_eq!(a1.as_slice(), a2.as_slice(), "{what}: first buffer");
                    assert_eq!(b1.as_slice(), b2.as_slice(), "{what}: second buffer");
                    assert_eq!(k.passes(io(op, &mut a1, &mut b1), 0), 0, "{what}: no pass");
                }
            }
        }
    }

    #[test]
    fn missing_isa_is_unsupported() {
        let foreign = if cfg!(target_arch = "x86_64") {
            Isa::Neon
        } else {
            Isa::Avx512
        };
        let e = Kernel::select(Op::Rdvec, Some(foreign)).unwrap_err();
        assert_eq!(e.exit_status(), 3, "{e}");
    }
}
