//! Portable kernels: lmbench's unrolled operations, the libc ones, and plain-Rust fallbacks for
//! the vector operations (which also serve as the reference every variant is tested against).
//!
//! lmbench's loops (bw_mem.c, built with `-O`) make one 4-byte access per int they name. Here
//! every such access is a volatile load or store, so the compiler keeps each one exactly as
//! written: no widening into vectors, no library call in place of a loop, no dead store
//! removed. Sums are wrapping 32-bit like lmbench's `int` sums, split over independent
//! accumulators so the add chain does not limit a core that can issue several loads a cycle
//! (the total is the same number modulo 2^32), except where the reference's single chain
//! measured faster (`rd`).
#![allow(unsafe_code)]

use std::ptr;

/// Ints in one 512-byte chunk.
pub const CHUNK_WORDS: usize = 128;

/// A byte buffer seen as 32-bit words (its first `len / 4` of them).
///
/// # Panics
/// When the buffer is not 4-byte aligned.
pub fn words(b: &[u8]) -> &[u32] {
    assert_eq!(b.as_ptr() as usize % 4, 0, "buffers must be 4-byte aligned");
    // SAFETY: the pointer is 4-byte aligned (checked above), `len / 4` words fit inside the
    // `len` bytes borrowed, every bit pattern is a valid u32, and the borrow is carried over.
    unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<u32>(), b.len() / 4) }
}

/// A mutable byte buffer seen as 32-bit words (its first `len / 4` of them).
///
/// # Panics
/// When the buffer is not 4-byte aligned.
pub fn words_mut(b: &mut [u8]) -> &mut [u32] {
    assert_eq!(b.as_ptr() as usize % 4, 0, "buffers must be 4-byte aligned");
    // SAFETY: as in `words`, and the exclusive borrow of the bytes becomes the exclusive
    // borrow of the words.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr().cast::<u32>(), b.len() / 4) }
}

#[inline(always)]
fn load(x: &u32) -> u32 {
    // SAFETY: a reference is valid, aligned and readable.
    unsafe { ptr::read_volatile(x) }
}

#[inline(always)]
fn store(x: &mut u32, v: u32) {
    // SAFETY: a mutable reference is valid, aligned and writable.
    unsafe { ptr::write_volatile(x, v) }
}

/// lmbench `rd`: per chunk, the sum of ints 0, 4, … 124 (32 loads, 16-byte stride), added up
/// in one chain per chunk as lmbench's `sum += p[0] + p[4] + … + p[124]` is. Splitting it over
/// independent accumulators measured 5-8 % slower from memory on x86_64 (Zen 5), so the
/// reference's shape is kept.
#[inline(never)]
pub fn rd(buf: &[u32]) -> u32 {
    let mut sum = 0u32;
    for c in buf.as_chunks::<CHUNK_WORDS>().0 {
        let mut s = load(&c[0]);
        for k in 1..CHUNK_WORDS / 4 {
            s = s.wrapping_add(load(&c[4 * k]));
        }
        sum = sum.wrapping_add(s);
    }
    sum
}

/// lmbench `wr`: per chunk, 1 into ints 0, 4, … 124.
#[inline(never)]
pub fn wr(buf: &mut [u32]) {
    for c in buf.as_chunks_mut::<CHUNK_WORDS>().0 {
        for k in 0..CHUNK_WORDS / 4 {
            store(&mut c[4 * k], 1);
        }
    }
}

/// lmbench `rdwr`: per chunk, for ints 0, 4, … 124: add it to the sum, then store 1 into it.
#[inline(never)]
pub fn rdwr(buf: &mut [u32]) -> u32 {
    let mut s = [0u32; 4];
    for c in buf.as_chunks_mut::<CHUNK_WORDS>().0 {
        // One 64-byte line (16 ints, 4 of them targeted) at a time, with constant indices, so
        // the accumulators stay in registers.
        for g in c.as_chunks_mut::<16>().0 {
            for j in 0..4 {
                s[j] = s[j].wrapping_add(load(&g[4 * j]));
                store(&mut g[4 * j], 1);
            }
        }
    }
    s.iter().fold(0, |a, &x| a.wrapping_add(x))
}

/// lmbench `cp`: per chunk, ints 0, 4, … 124 copied to the same place in `dst`.
#[inline(never)]
pub fn cp(src: &[u32], dst: &mut [u32]) {
    let d = dst.as_chunks_mut::<CHUNK_WORDS>().0;
    for (s, d) in src.as_chunks::<CHUNK_WORDS>().0.iter().zip(d) {
        for k in 0..CHUNK_WORDS / 4 {
            store(&mut d[4 * k], load(&s[4 * k]));
        }
    }
}

/// lmbench `frd`: the sum of every int of every chunk.
#[inline(never)]
pub fn frd(buf: &[u32]) -> u32 {
    let mut s = [0u32; 8];
    for c in buf.as_chunks::<CHUNK_WORDS>().0 {
        // Groups of eight with constant indices keep the accumulators in registers.
        for g in c.as_chunks::<8>().0 {
            for j in 0..8 {
                s[j] = s[j].wrapping_add(load(&g[j]));
            }
        }
    }
    s.iter().fold(0, |a, &x| a.wrapping_add(x))
}

/// lmbench `fwr`: 1 into every int of every chunk, from the chunk's last int down to its
/// first. lmbench writes the chunk as one chained assignment `p[0] = p[1] = … = p[127] = 1`,
/// which GCC (the reference build) compiles into stores from `p[127]` down to `p[0]`; the
/// order matters, because hardware prefetchers follow ascending streams only.
#[inline(never)]
pub fn fwr(buf: &mut [u32]) {
    for c in buf.as_chunks_mut::<CHUNK_WORDS>().0 {
        for x in c.iter_mut().rev() {
            store(x, 1);
        }
    }
}

/// lmbench `fwr` as GCC `-O2` (12 and later) builds it: 1 into every int of every chunk,
/// 16 bytes per store from the chunk's first int up (`-O2` vectorizes the 128 stores).
#[inline(never)]
pub fn fwr_wide(buf: &mut [u32]) {
    const ONES: u128 = 0x0000_0001_0000_0001_0000_0001_0000_0001;
    for c in buf.as_chunks_mut::<CHUNK_WORDS>().0 {
        // SAFETY: every bit pattern is a valid u32 and u128, and `align_to_mut` hands out
        // only aligned blocks (none when the chunk is not 4-byte aligned to 16).
        let (head, blocks, tail) = unsafe { c.align_to_mut::<u128>() };
        head.iter_mut().for_each(|x| store(x, 1));
        for b in blocks {
            // SAFETY: a mutable reference is valid, aligned and writable.
            unsafe { ptr::write_volatile(b, ONES) }
        }
        tail.iter_mut().for_each(|x| store(x, 1));
    }
}

/// lmbench `fcp`: every int of every chunk copied to `dst`.
#[inline(never)]
pub fn fcp(src: &[u32], dst: &mut [u32]) {
    let d = dst.as_chunks_mut::<CHUNK_WORDS>().0;
    for (s, d) in src.as_chunks::<CHUNK_WORDS>().0.iter().zip(d) {
        for k in 0..CHUNK_WORDS {
            store(&mut d[k], load(&s[k]));
        }
    }
}

/// Tells the compiler that the memory at `p` may have been read here: no instruction, but no
/// store to it before can be dropped as dead, so one pass's libc call cannot be merged with
/// the next one's or hoisted out of the loop.
#[inline(always)]
fn touched(p: *const u8) {
    // SAFETY: an empty assembly statement executes nothing; given `p` and without `nomem`, it
    // only stops the compiler from assuming the memory `p` reaches unread across it.
    unsafe { std::arch::asm!("/* {0} */", in(reg) p, options(nostack, preserves_flags)) };
}

/// `n` passes of libc `memset` over the whole buffer, as lmbench's `bzero` loop calls
/// `bzero` once per iteration: no work between the calls but the loop.
#[inline(never)]
pub fn libc_memset_passes(buf: &mut [u8], byte: u8, n: u64) {
    for _ in 0..n {
        // SAFETY: the pointer and length describe exactly the borrowed, writable slice.
        unsafe { libc::memset(buf.as_mut_ptr().cast(), i32::from(byte), buf.len()) };
        touched(buf.as_ptr());
    }
}

/// `n` passes of libc `memmove` of `src` into `dst` (lmbench's `bcopy` loop). The compiler
/// calls `memcpy` for it (two borrows cannot overlap); glibc runs the same code for both on
/// x86_64.
///
/// # Panics
/// When `dst` is shorter than `src`.
#[inline(never)]
pub fn libc_memmove_passes(src: &[u8], dst: &mut [u8], n: u64) {
    assert!(dst.len() >= src.len(), "destination shorter than source");
    for _ in 0..n {
        // SAFETY: `src.len()` bytes are readable from `src` and writable in `dst` (checked
        // above); memmove allows any overlap, and the borrows rule out aliasing anyway.
        unsafe { libc::memmove(dst.as_mut_ptr().cast(), src.as_ptr().cast(), src.len()) };
        touched(dst.as_ptr());
    }
}

/// `n` passes of libc `memcpy` of `src` into `dst`.
///
/// # Panics
/// When `dst` is shorter than `src`.
#[inline(never)]
pub fn libc_memcpy_passes(src: &[u8], dst: &mut [u8], n: u64) {
    assert!(dst.len() >= src.len(), "destination shorter than source");
    for _ in 0..n {
        // SAFETY: `src.len()` bytes are readable from `src` and writable in `dst` (checked
        // above); a shared and an exclusive borrow cannot overlap, as memcpy requires.
        unsafe { libc::memcpy(dst.as_mut_ptr().cast(), src.as_ptr().cast(), src.len()) };
        touched(dst.as_ptr());
    }
}

/// `rdvec` fallback and reference: the wrapping sum of every int of every chunk (plain loads;
/// the compiler picks the width for the build's target).
#[inline(never)]
pub fn rdvec(buf: &[u32]) -> u32 {
    let mut s = [0u32; 16];
    for c in buf.as_chunks::<CHUNK_WORDS>().0 {
        for g in c.as_chunks::<16>().0 {
            for j in 0..16 {
                s[j] = s[j].wrapping_add(g[j]);
            }
        }
    }
    s.iter().fold(0, |a, &x| a.wrapping_add(x))
}

/// `wrnt` reference: 1 into every int of every chunk, with ordinary stores.
#[inline(never)]
pub fn wrnt(buf: &mut [u32]) {
    for c in buf.as_chunks_mut::<CHUNK_WORDS>().0 {
        c.fill(1);
    }
}

/// `cpnt` reference: every chunk copied to `dst`, with ordinary stores.
#[inline(never)]
pub fn cpnt(src: &[u32], dst: &mut [u32]) {
    let d = dst.as_chunks_mut::<CHUNK_WORDS>().0;
    for (s, d) in src.as_chunks::<CHUNK_WORDS>().0.iter().zip(d) {
        d.copy_from_slice(s);
    }
}

/// Read/write mix: chunk k is written (every int set to 1) when k mod (reads + 1) == reads,
/// otherwise read (its ints added to the sum). Returns the sum of the chunks read.
#[inline(never)]
pub fn mix(buf: &mut [u32], reads: usize) -> u32 {
    let mut s = [0u32; 16];
    let mut k = 0;
    for c in buf.as_chunks_mut::<CHUNK_WORDS>().0 {
        if k == reads {
            c.fill(1);
            k = 0;
        } else {
            for g in c.as_chunks::<16>().0 {
                for j in 0..16 {
                    s[j] = s[j].wrapping_add(g[j]);
                }
            }
            k += 1;
        }
    }
    s.iter().fold(0, |a, &x| a.wrapping_add(x))
}

/// lmbench's unrolled operations `n` passes a call, with the kernels above: what runs where
/// there is no assembly version, and the reference the assembly versions are tested against.
/// Sums come back as the wrapping 32-bit sum of every int read in all passes.
pub mod repeated {
    use super as p;

    fn repeat(n: u64, mut f: impl FnMut() -> u32) -> u64 {
        u64::from((0..n).fold(0u32, |s, _| s.wrapping_add(f())))
    }

    /// `n` passes of [`p::rd`].
    pub fn rd(b: &[u32], n: u64) -> u64 {
        repeat(n, || p::rd(b))
    }

    /// `n` passes of [`p::frd`].
    pub fn frd(b: &[u32], n: u64) -> u64 {
        repeat(n, || p::frd(b))
    }

    /// `n` passes of [`p::rdwr`].
    pub fn rdwr(b: &mut [u32], n: u64) -> u64 {
        repeat(n, || p::rdwr(b))
    }

    /// `n` passes of [`p::wr`].
    pub fn wr(b: &mut [u32], n: u64) {
        (0..n).for_each(|_| p::wr(b));
    }

    /// `n` passes of [`p::fwr`].
    pub fn fwr(b: &mut [u32], n: u64) {
        (0..n).for_each(|_| p::fwr(b));
    }

    /// `n` passes of [`p::fwr_wide`].
    pub fn fwr_o2(b: &mut [u32], n: u64) {
        (0..n).for_each(|_| p::fwr_wide(b));
    }

    /// `n` passes of [`p::cp`].
    pub fn cp(s: &[u32], d: &mut [u32], n: u64) {
        (0..n).for_each(|_| p::cp(s, d));
    }

    /// `n` passes of [`p::fcp`].
    pub fn fcp(s: &[u32], d: &mut [u32], n: u64) {
        (0..n).for_each(|_| p::fcp(s, d));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(n: usize) -> Vec<u32> {
        (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect()
    }

    #[test]
    fn rd_sums_one_int_in_four_of_whole_chunks() {
        let b = pattern(300); // 2 chunks and a 44-int tail
        let want = (0..256).step_by(4).fold(0u32, |a, i| a.wrapping_add(b[i]));
        assert_eq!(rd(&b), want);
    }

    #[test]
    fn frd_and_rdvec_sum_every_int_of_whole_chunks() {
        let b = pattern(300);
        let want = b[..256].iter().fold(0u32, |a, &x| a.wrapping_add(x));
        assert_eq!(frd(&b), want);
        assert_eq!(rdvec(&b), want);
    }

    #[test]
    fn mix_writes_every_nth_chunk() {
        let mut b = pattern(128 * 5);
        let orig = b.clone();
        let sum = mix(&mut b, 1);
        // chunks 1 and 3 written, 0, 2 and 4 read
        let want = [0, 2, 4].iter().fold(0u32, |a, &c| {
            orig[c * 128..(c + 1) * 128]
                .iter()
                .fold(a, |a, &x| a.wrapping_add(x))
        });
        assert_eq!(sum, want);
        assert!(b[128..256].iter().all(|&x| x == 1));
        assert_eq!(b[..128], orig[..128]);
    }

    #[test]
    fn both_fwr_shapes_write_1_into_every_int_of_whole_chunks() {
        for offset in [0, 1] {
            let mut v = pattern(300 + offset);
            let b = &mut v[offset..]; // also a chunk not aligned to 16 bytes
            fwr(b);
            let want: Vec<u32> = (0..300).map(|i| if i < 256 { 1 } else { b[i] }).collect();
            assert_eq!(b, &want[..]);
            let mut w = pattern(300 + offset);
            fwr_wide(&mut w[offset..]);
            assert_eq!(&w[offset..], &want[..], "offset {offset}");
        }
    }

    #[test]
    fn word_views_cover_whole_words() {
        let v = [0u32; 4];
        let bytes: &[u8] = {
            // A byte view of the u32 vector, 4-byte aligned.
            let p = v.as_ptr().cast::<u8>();
            // SAFETY: the vector owns 16 initialised bytes at p for the lifetime of `v`.
            unsafe { std::slice::from_raw_parts(p, 15) }
        };
        assert_eq!(words(bytes).len(), 3);
    }
}
