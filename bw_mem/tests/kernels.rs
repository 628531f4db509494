//! One harness for every kernel implementation this CPU can run (portable, and each vector
//! variant: SSE2/AVX2/AVX-512 on x86_64, NEON on aarch64), checked against a model of what the
//! operation must do and against the portable implementation:
//!
//! - copies (`cp`, `fcp`, `bcopy`, `cpnt`, `memcpy`) leave an exact copy of what they claim to
//!   copy and nothing else: `cp` the ints at indices 0, 4, 8, … of each whole 512-byte chunk,
//!   `fcp`/`cpnt` every int of each whole chunk, `bcopy`/`memcpy` all `size` bytes; every
//!   other byte of the second buffer keeps its sentinel;
//! - `bzero`/`memset` set every byte; `wr`/`fwr`/`wrnt`/`rdwr` and the mixes' written chunks
//!   store 1 into every targeted int and leave every other int alone;
//! - for every operation that reads (`rd`, `frd`, `rdvec`, `rdwr`, the mixes) the checksum is
//!   the sum of exactly the targeted ints: changing any targeted int changes it, changing any
//!   other int does not;
//! - the bytes loaded and stored, as observed, match the accounting the figures use.
//!
//! Sizes include ones that are not multiples of 512 (lmbench ignores the tail of the unrolled
//! operations but counts it) and the `conflict` layout of the copies.

use benchmp::Pages;
use bw_mem::bench::BwBench;
use bw_mem::kernels::portable::{CHUNK_WORDS, words, words_mut};
use bw_mem::kernels::{Isa, Kernel};
use bw_mem::ops::Op;

const SENTINEL: u8 = 0xA5;
const SIZES: [usize; 7] = [512, 513, 1000, 1536 + 100, 4096, 7 * 512 + 68, 65536 + 36];

/// A source word that is never 0, 1 or a memset pattern, and differs from its neighbours.
fn pattern(i: usize, seed: u32) -> u32 {
    0x8000_0000 | (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 1
}

/// One measurement state with a known source pattern and a sentinel-filled second buffer.
fn prepared(k: Kernel, size: usize, conflict: bool, seed: u32) -> BwBench {
    let mut b = BwBench::new(k, size, conflict, Pages::Small).expect("buffers");
    let bytes = b.buffers_mut().source_mut();
    let tail = bytes.len() % 4;
    let n = bytes.len();
    bytes[n - tail..].fill(0x3C);
    for (i, w) in words_mut(bytes).iter_mut().enumerate() {
        *w = pattern(i, seed);
    }
    if let Some(b2) = b.buffers_mut().second_buffer_mut() {
        b2.fill(SENTINEL);
    }
    b
}

/// Words of whole chunks in `size` bytes.
fn chunk_words(size: usize) -> usize {
    size / 512 * CHUNK_WORDS
}

/// Which source words the operation reads into its checksum.
fn read_targets(op: Op, size: usize) -> Vec<usize> {
    let t = chunk_words(size);
    match op {
        Op::Rd | Op::Rdwr => (0..t).step_by(4).collect(),
        Op::Frd | Op::Rdvec => (0..t).collect(),
        Op::Mix3_1 | Op::Mix2_1 | Op::Mix1_1 => {
            let r = op.mix_reads().unwrap() as usize;
            (0..t)
                .filter(|i| (i / CHUNK_WORDS) % (r + 1) != r)
                .collect()
        }
        _ => Vec::new(),
    }
}

/// Which source words the operation stores 1 into.
fn write_targets(op: Op, size: usize) -> Vec<usize> {
    let t = chunk_words(size);
    match op {
        Op::Wr | Op::Rdwr => (0..t).step_by(4).collect(),
        Op::Fwr | Op::Wrnt => (0..t).collect(),
        Op::Mix3_1 | Op::Mix2_1 | Op::Mix1_1 => {
            let r = op.mix_reads().unwrap() as usize;
            (0..t)
                .filter(|i| (i / CHUNK_WORDS) % (r + 1) == r)
                .collect()
        }
        _ => Vec::new(),
    }
}

/// Bytes of the destination a copy must fill with the source's bytes.
fn copied_bytes(op: Op, size: usize) -> Vec<usize> {
    let t = chunk_words(size);
    match op {
        Op::Cp => (0..t).step_by(4).flat_map(|w| 4 * w..4 * w + 4).collect(),
        Op::Fcp | Op::Cpnt => (0..4 * t).collect(),
        Op::Bcopy | Op::Memcpy => (0..size).collect(),
        _ => Vec::new(),
    }
}

fn wsum(w: &[u32], idx: &[usize]) -> u32 {
    idx.iter().fold(0u32, |a, &i| a.wrapping_add(w[i]))
}

/// Runs one pass and checks everything the operation must and must not do.
fn check(k: Kernel, size: usize, conflict: bool) -> (u64, Vec<u8>, Option<Vec<u8>>) {
    let op = k.op();
    let who = format!("{op} ({}) size {size} conflict {conflict}", k.isa().name());
    let mut b = prepared(k, size, conflict, 17);
    let before = b.buffers().source().to_vec();
    let ck = k.pass(b.buffers_mut().io());
    let after = b.buffers().source().to_vec();
    let wb = words(&before);
    let wa = words(&after);

    // Checksum: the wrapping sum of exactly the targeted words.
    let reads = read_targets(op, size);
    assert_eq!(ck, u64::from(wsum(wb, &reads)), "{who}: checksum");

    // Source after the pass.
    match op {
        Op::Bzero => assert!(after.iter().all(|&x| x == 0), "{who}: not all zero"),
        Op::Memset => assert!(after.iter().all(|&x| x == 1), "{who}: not all 0x01"),
        _ => {
            let writes = write_targets(op, size);
            let mut want = wb.to_vec();
            for &i in &writes {
                want[i] = 1;
            }
            assert_eq!(wa, &want[..], "{who}: source words after the pass");
            assert_eq!(
                after[4 * wa.len()..],
                before[4 * wb.len()..],
                "{who}: bytes after the last whole word"
            );
            let stored = wb.iter().zip(wa).filter(|(x, y)| x != y).count() as u64 * 4;
            assert_eq!(
                stored,
                op.traffic(size as u64).store_bytes * u64::from(!op.uses_second_buffer()),
                "{who}: bytes stored vs accounting"
            );
        }
    }
    assert_eq!(
        4 * reads.len() as u64,
        if op.uses_second_buffer() || matches!(op, Op::Wr | Op::Fwr | Op::Wrnt) {
            0
        } else {
            op.traffic(size as u64).load_bytes
        },
        "{who}: bytes summed vs accounting"
    );

    // Destination of copies: the claimed bytes copied, every other byte of buf2 untouched.
    let dst = b.buffers().destination().map(<[u8]>::to_vec);
    if op.uses_second_buffer() {
        let off = b.buffers().destination_offset();
        assert_eq!(off, if conflict { 1920 } else { 0 }, "{who}: offset");
        let copied = copied_bytes(op, size);
        let b2 = b.buffers_mut().second_buffer_mut().unwrap().to_vec();
        let mut want = vec![SENTINEL; b2.len()];
        for &i in &copied {
            want[off + i] = before[i];
        }
        assert!(
            b2 == want,
            "{who}: second buffer differs from an exact copy of the claimed bytes"
        );
        let t = op.traffic(size as u64);
        assert_eq!(
            copied.len() as u64,
            t.store_bytes,
            "{who}: bytes copied vs accounting"
        );
        assert_eq!(after, before, "{who}: a copy changed its source");
    } else {
        assert!(dst.is_none());
    }
    (ck, after, dst)
}

#[test]
fn every_implementation_does_what_its_operation_claims() {
    for op in Op::ALL {
        for k in Kernel::all_available(op) {
            for size in SIZES {
                check(k, size, false);
                if op.uses_second_buffer() {
                    check(k, size, true);
                }
            }
        }
    }
}

#[test]
fn every_variant_matches_the_portable_implementation() {
    for op in Op::ALL.into_iter().filter(|o| o.has_variants()) {
        let portable = Kernel::select(op, Some(Isa::Portable)).unwrap();
        for k in Kernel::all_available(op) {
            for size in SIZES {
                assert_eq!(
                    check(k, size, false),
                    check(portable, size, false),
                    "{op} {} vs portable at {size}",
                    k.isa().name()
                );
            }
        }
    }
}

/// Indices to perturb: all of them for small buffers, a spread (every chunk's first and last
/// word, and every 37th) for larger ones.
fn probe_indices(words: usize) -> Vec<usize> {
    if words <= 1024 {
        return (0..words).collect();
    }
    let mut v: Vec<usize> = (0..words).step_by(37).collect();
    for c in (0..words).step_by(CHUNK_WORDS) {
        v.push(c);
        v.push((c + CHUNK_WORDS - 1).min(words - 1));
    }
    v.push(words - 1);
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn checksums_depend_on_every_targeted_word_and_nothing_else() {
    for op in Op::ALL
        .into_iter()
        .filter(|o| !read_targets(*o, 4096).is_empty())
    {
        for k in Kernel::all_available(op) {
            for size in [1000usize, 1536 + 100, 65536 + 36] {
                let targets = read_targets(op, size);
                let base = {
                    let mut b = prepared(k, size, false, 5);
                    k.pass(b.buffers_mut().io())
                };
                let nwords = size / 4;
                for i in probe_indices(nwords) {
                    let mut b = prepared(k, size, false, 5);
                    words_mut(b.buffers_mut().source_mut())[i] ^= 0x0123_4567;
                    let ck = k.pass(b.buffers_mut().io());
                    let targeted = targets.binary_search(&i).is_ok();
                    assert_eq!(
                        ck != base,
                        targeted,
                        "{op} ({}) size {size}: word {i} {} the checksum",
                        k.isa().name(),
                        if targeted {
                            "is read but did not change"
                        } else {
                            "is not targeted but changed"
                        }
                    );
                }
            }
        }
    }
}

#[test]
fn rdvec_on_every_isa_equals_lmbench_frd() {
    // The vector read computes the same number as lmbench's frd (the sum of every int of the
    // whole chunks), so the two checksums can be compared across implementations.
    for size in SIZES {
        let frd = Kernel::select(Op::Frd, None).unwrap();
        let mut a = prepared(frd, size, false, 3);
        let want = frd.pass(a.buffers_mut().io());
        for k in Kernel::all_available(Op::Rdvec) {
            let mut b = prepared(k, size, false, 3);
            assert_eq!(
                k.pass(b.buffers_mut().io()),
                want,
                "{} {size}",
                k.isa().name()
            );
        }
    }
}

#[test]
fn byte_accounting_is_lmbench_for_every_op_and_size() {
    for op in Op::ALL {
        for size in SIZES
            .iter()
            .map(|&s| s as u64)
            .chain([1 << 20, (64 << 20) + 1])
        {
            let t = op.traffic(size);
            assert_eq!(
                t.counted_bytes, size,
                "{op} {size}: lmbench counts the size argument"
            );
            let touched = if op.is_libc() { size } else { size / 512 * 512 };
            assert_eq!(t.touched_bytes, touched, "{op} {size}");
            assert!(t.bus_bytes >= t.touched_bytes, "{op} {size}");
        }
    }
}
