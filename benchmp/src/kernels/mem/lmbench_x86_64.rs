//! lmbench's seven unrolled operations on x86_64, in assembly with the instruction shape the
//! reference build (GCC `-O`, lmbench's own flags) gives its C loops, so that the two tools time
//! the same instructions and not only the same addresses; and `fwr` as GCC `-O2` builds it, the
//! one operation whose shape `-O2` changes (it vectorizes the 128 stores).
//!
//! The shape is part of the figure. One pointer per buffer is advanced by 512 bytes after each
//! chunk, and every access addresses `[pointer + offset of the int in the chunk]`. The sums are
//! one dependent add chain per chunk, added into the sum after the chunk (`rd`, `frd`), or one
//! chain through the sum (`rdwr`); the sum runs on from pass to pass, as lmbench's register
//! does. The loop ends with `cmp`/`jb` against the end of the
//! last whole chunk. Measured on an AMD EPYC (Zen 4) KVM guest, one core, against lmbench's own
//! `bw_mem` in A B B A order, before this module:
//!
//! - `fwr` at 64 MiB: 2.3-3.1× lmbench's figure. The same 128 stores, int 127 first, run about
//!   3× faster addressed base + index (`movl $1, -4(%rdi,%rcx)`, what rustc had chosen) than
//!   base + displacement (`movl $1, 0x1fc(%rax)`, what GCC emits and this module too): a C
//!   loop of each, timed alone, gave 11.5 and 3.7 GB/s.
//! - `frd` and `rdwr`: independent accumulators ran 1.2-1.8× lmbench's single add chain in the
//!   caches; `fcp`: rustc's partly rolled loop ran 0.7-0.9× lmbench's fully unrolled one.
//!
//! Every function reads and writes exactly the ints the portable kernels do (the tests compare
//! them) and returns the same checksum, the wrapping 32-bit sum of every int read. Each takes a pass count and loops over the passes
//! itself, as lmbench's functions do.
#![allow(unsafe_code)]

use std::arch::asm;

use super::portable::CHUNK_WORDS;

/// Calls `$m!` with the byte offsets 16, 32, … 496 of ints 4, 8, … 124 of a chunk, after the
/// literals given first.
macro_rules! quads_from_16 {
    ($m:ident $(, $first:literal)*) => {
        $m!($($first)*
            16 32 48 64 80 96 112 128 144 160 176 192 208 224 240 256
            272 288 304 320 336 352 368 384 400 416 432 448 464 480 496)
    };
}

/// Calls `$m!` with the byte offsets 4, 8, … 508 of ints 1 … 127 of a chunk, after the
/// literals given first.
macro_rules! words_from_4 {
    ($m:ident $(, $first:literal)*) => {
        $m!($($first)*
            4 8 12 16 20 24 28 32 36 40 44 48 52 56 60 64
            68 72 76 80 84 88 92 96 100 104 108 112 116 120 124 128
            132 136 140 144 148 152 156 160 164 168 172 176 180 184 188 192
            196 200 204 208 212 216 220 224 228 232 236 240 244 248 252 256
            260 264 268 272 276 280 284 288 292 296 300 304 308 312 316 320
            324 328 332 336 340 344 348 352 356 360 364 368 372 376 380 384
            388 392 396 400 404 408 412 416 420 424 428 432 436 440 444 448
            452 456 460 464 468 472 476 480 484 488 492 496 500 504 508)
    };
}

/// Calls `$m!` with the byte offsets of ints 127, 126, … 0 of a chunk (`fwr`'s order).
macro_rules! words_down {
    ($m:ident) => {
        $m!(508 504 500 496 492 488 484 480 476 472 468 464 460 456 452 448
            444 440 436 432 428 424 420 416 412 408 404 400 396 392 388 384
            380 376 372 368 364 360 356 352 348 344 340 336 332 328 324 320
            316 312 308 304 300 296 292 288 284 280 276 272 268 264 260 256
            252 248 244 240 236 232 228 224 220 216 212 208 204 200 196 192
            188 184 180 176 172 168 164 160 156 152 148 144 140 136 132 128
            124 120 116 112 108 104 100 96 92 88 84 80 76 72 68 64
            60 56 52 48 44 40 36 32 28 24 20 16 12 8 4 0)
    };
}

/// Calls `$m!` with the displacements -496, -480, … -16: the 16-byte blocks 1 … 31 of a
/// chunk, addressed from the next chunk's start.
macro_rules! blocks_back_from_496 {
    ($m:ident) => {
        $m!(496 480 464 448 432 416 400 384 368 352 336 320 304 288 272 256
            240 224 208 192 176 160 144 128 112 96 80 64 48 32 16)
    };
}

/// `movups [p - o], v` for each displacement.
macro_rules! store_vector_back {
    ($($o:literal)*) => { concat!($("movups xmmword ptr [{p} - ", $o, "], {v}\n",)*) };
}

/// `add t, [p + o]` for each offset: one add chain into `t`.
macro_rules! add_into_t {
    ($($o:literal)*) => { concat!($("add {t:e}, dword ptr [{p} + ", $o, "]\n",)*) };
}

/// `mov [p + o], 1` for each offset.
macro_rules! store_one {
    ($($o:literal)*) => { concat!($("mov dword ptr [{p} + ", $o, "], 1\n",)*) };
}

/// `add s, [p + o]` then `mov [p + o], 1` for each offset: the chain runs through the sum.
macro_rules! add_then_store_one {
    ($($o:literal)*) => {
        concat!($("add {s:e}, dword ptr [{p} + ", $o, "]\nmov dword ptr [{p} + ", $o, "], 1\n",)*)
    };
}

/// `mov t, [src + o]` then `mov [dst + o], t` for each offset.
macro_rules! copy_through_t {
    ($($o:literal)*) => {
        concat!($("mov {t:e}, dword ptr [{p} + ", $o, "]\nmov dword ptr [{d} + ", $o, "], {t:e}\n",)*)
    };
}

/// The start of `len` ints at `p` and the address just past their last whole chunk (equal
/// when there is none).
fn span(p: *const u32, len: usize) -> (*const u32, *const u32) {
    (p, p.wrapping_add(len / CHUNK_WORDS * CHUNK_WORDS))
}

/// A summing kernel: per chunk, int 0 and the ints at `$offsets` summed in one chain `t`, then
/// added to the sum, which runs on over all passes as lmbench's does (wrapping, 32-bit).
macro_rules! summing_kernel {
    ($(#[$doc:meta])* $name:ident, $offsets:ident) => {
        $(#[$doc])*
        #[inline(never)]
        pub fn $name(buf: &[u32], passes: u64) -> u64 {
            let (start, end) = span(buf.as_ptr(), buf.len());
            if start == end {
                return 0;
            }
            let mut sum = 0u32;
            for _ in 0..passes {
                // SAFETY: the loop reads 4-byte ints at offsets below 512 of each chunk from
                // `start` up to `end`, the end of the last whole chunk of `buf`, so every load
                // lies inside the borrowed slice (4-byte aligned, as any &[u32]); it writes
                // only the named registers.
                unsafe {
                    asm!(
                        "2:",
                        "mov {t:e}, dword ptr [{p}]",
                        $offsets!(add_into_t),
                        "add {s:e}, {t:e}",
                        "add {p}, 512",
                        "cmp {p}, {end}",
                        "jb 2b",
                        p = inout(reg) start => _,
                        end = in(reg) end,
                        s = inout(reg) sum,
                        t = out(reg) _,
                        options(nostack, readonly),
                    );
                }
            }
            u64::from(sum)
        }
    };
}

/// A storing kernel: per chunk, 1 into the ints at `$offsets` (after the leading offsets
/// given), in that order.
macro_rules! storing_kernel {
    ($(#[$doc:meta])* $name:ident, $offsets:ident $(, $first:literal)*) => {
        $(#[$doc])*
        #[inline(never)]
        pub fn $name(buf: &mut [u32], passes: u64) {
            let start = buf.as_mut_ptr();
            let (_, end) = span(start, buf.len());
            if start.cast_const() == end {
                return;
            }
            for _ in 0..passes {
                // SAFETY: every store is at an offset below 512 of a whole chunk of `buf`,
                // from `start` up to `end`; `buf` is borrowed exclusively and nothing else is
                // written.
                unsafe {
                    asm!(
                        "2:",
                        $offsets!(store_one $(, $first)*),
                        "add {p}, 512",
                        "cmp {p}, {end}",
                        "jb 2b",
                        p = inout(reg) start => _,
                        end = in(reg) end,
                        options(nostack),
                    );
                }
            }
        }
    };
}

/// A copying kernel: per chunk, int 0 and the ints at `$offsets` of `src` copied to the same
/// place in `dst`, in that order.
macro_rules! copying_kernel {
    ($(#[$doc:meta])* $name:ident, $offsets:ident) => {
        $(#[$doc])*
        #[inline(never)]
        pub fn $name(src: &[u32], dst: &mut [u32], passes: u64) {
            let (start, end) = span(src.as_ptr(), src.len().min(dst.len()));
            if start == end {
                return;
            }
            let dst = dst.as_mut_ptr();
            for _ in 0..passes {
                // SAFETY: the loads are at offsets below 512 of whole chunks of `src` up to
                // `end`, the stores at the same offsets from the start of `dst`, which holds at
                // least as many whole chunks (their count comes from the shorter slice) and is
                // borrowed exclusively, so it cannot overlap `src`.
                unsafe {
                    asm!(
                        "2:",
                        $offsets!(copy_through_t, 0),
                        "add {p}, 512",
                        "add {d}, 512",
                        "cmp {p}, {end}",
                        "jb 2b",
                        p = inout(reg) start => _,
                        d = inout(reg) dst => _,
                        end = in(reg) end,
                        t = out(reg) _,
                        options(nostack),
                    );
                }
            }
        }
    };
}

summing_kernel!(
    /// lmbench `rd`, `passes` times: per chunk, ints 0, 4, … 124 summed in one chain, then
    /// added to the sum. Returns it.
    rd,
    quads_from_16
);

summing_kernel!(
    /// lmbench `frd`, `passes` times: per chunk, all 128 ints summed in one chain, then added
    /// to the sum. Returns it.
    frd,
    words_from_4
);

storing_kernel!(
    /// lmbench `wr`, `passes` times: per chunk, 1 into ints 0, 4, … 124.
    wr,
    quads_from_16,
    0
);

storing_kernel!(
    /// lmbench `fwr`, `passes` times: per chunk, 1 into every int from int 127 down to int 0.
    fwr,
    words_down
);

/// lmbench `fwr` as GCC `-O2` builds it (12 and later, whose `-O2` vectorizes straight-line
/// stores), `passes` times: per chunk, 1 into every int with 32 16-byte stores from block 0
/// up; a chunk counter ends the loop, and the pointer moves on after the first store, so the
/// other 31 are addressed back from the next chunk. The same ints as [`fwr`], a quarter of
/// the store instructions, in ascending order.
#[inline(never)]
pub fn fwr_o2(buf: &mut [u32], passes: u64) {
    let start = buf.as_mut_ptr();
    let chunks = buf.len() / CHUNK_WORDS;
    if chunks == 0 {
        return;
    }
    for _ in 0..passes {
        // SAFETY: `chunks` whole chunks of `buf` are stored to, 16 bytes at offsets 0 … 496 of
        // each, from `start`; `buf` is borrowed exclusively and nothing else is written.
        // `movups` needs no alignment, and SSE2 is part of every x86_64 CPU; the asm writes
        // only the named registers.
        unsafe {
            asm!(
                // Four ints of 1 in {v} (GCC loads them from its constant pool once a call).
                "mov {t:e}, 1",
                "movd {v}, {t:e}",
                "pshufd {v}, {v}, 0",
                "2:",
                "add {n}, 1",
                "movups xmmword ptr [{p}], {v}",
                "add {p}, 512",
                blocks_back_from_496!(store_vector_back),
                "cmp {n}, {chunks}",
                "jb 2b",
                p = inout(reg) start => _,
                n = inout(reg) 0usize => _,
                chunks = in(reg) chunks,
                t = out(reg) _,
                v = out(xmm_reg) _,
                options(nostack),
            );
        }
    }
}

/// lmbench `rdwr`, `passes` times: per chunk, for ints 0, 4, … 124: add it to the sum, then
/// store 1 into it. The sum is one dependent chain through every pass, as lmbench's (a chain
/// restarted at every pass let small buffers' passes overlap: 1.8× lmbench's figure at 512
/// bytes). Returns it (wrapping, 32-bit).
#[inline(never)]
pub fn rdwr(buf: &mut [u32], passes: u64) -> u64 {
    let start = buf.as_mut_ptr();
    let (_, end) = span(start, buf.len());
    if start.cast_const() == end {
        return 0;
    }
    let mut sum = 0u32;
    for _ in 0..passes {
        // SAFETY: as in the storing kernels (`wr`); the loads are at the same offsets as the
        // stores.
        unsafe {
            asm!(
                "2:",
                quads_from_16!(add_then_store_one, 0),
                "add {p}, 512",
                "cmp {p}, {end}",
                "jb 2b",
                p = inout(reg) start => _,
                end = in(reg) end,
                s = inout(reg) sum,
                options(nostack),
            );
        }
    }
    u64::from(sum)
}

copying_kernel!(
    /// lmbench `cp`, `passes` times: per chunk, ints 0, 4, … 124 of `src` copied to the same
    /// place in `dst`.
    cp,
    quads_from_16
);

copying_kernel!(
    /// lmbench `fcp`, `passes` times: per chunk, every int of `src` copied to the same place
    /// in `dst`, int 0 first.
    fcp,
    words_from_4
);

#[cfg(test)]
mod tests {
    use super::super::portable as p;
    use super::super::portable::repeated as r;
    use super::*;

    fn pattern(n: usize, seed: u32) -> Vec<u32> {
        (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(seed))
            .collect()
    }

    /// Lengths with no whole chunk, one, several, and a tail.
    const LENGTHS: [usize; 6] = [0, 100, 128, 300, 1024, 4096 + 44];

    /// Each kernel, and so its loop, sits at the same offset within its cache lines in
    /// every build.
    #[test]
    fn kernels_start_on_cache_lines() {
        crate::testing::assert_code_aligned(&[
            ("rd", rd as *const ()),
            ("wr", wr as *const ()),
            ("rdwr", rdwr as *const ()),
            ("cp", cp as *const ()),
            ("frd", frd as *const ()),
            ("fwr", fwr as *const ()),
            ("fwr_o2", fwr_o2 as *const ()),
            ("fcp", fcp as *const ()),
        ]);
    }

    #[test]
    fn sums_equal_the_portable_kernels() {
        for n in LENGTHS {
            let b = pattern(n, 7);
            for passes in [0, 1, 3] {
                assert_eq!(rd(&b, passes), r::rd(&b, passes), "rd {n}");
                assert_eq!(frd(&b, passes), r::frd(&b, passes), "frd {n}");
                let (mut x, mut y) = (b.clone(), b.clone());
                let want = r::rdwr(&mut y, passes);
                assert_eq!(rdwr(&mut x, passes), want, "rdwr {n} x {passes}");
                assert_eq!(x, y, "rdwr stores {n}");
            }
        }
    }

    #[test]
    fn stores_equal_the_portable_kernels() {
        for n in LENGTHS {
            let b = pattern(n, 3);
            for passes in [0, 2] {
                let (mut x, mut y) = (b.clone(), b.clone());
                wr(&mut x, passes);
                r::wr(&mut y, passes);
                assert_eq!(x, y, "wr {n}");
                let (mut x, mut y) = (b.clone(), b.clone());
                fwr(&mut x, passes);
                r::fwr(&mut y, passes);
                assert_eq!(x, y, "fwr {n}");
                let mut z = b.clone();
                fwr_o2(&mut z, passes);
                assert_eq!(z, y, "fwr_o2 {n}");
            }
        }
    }

    #[test]
    fn copies_equal_the_portable_kernels() {
        for n in LENGTHS {
            let src = pattern(n, 5);
            for extra in [0, 37] {
                let d = pattern(n + extra, 11);
                let (mut x, mut y) = (d.clone(), d.clone());
                cp(&src, &mut x, 2);
                p::cp(&src, &mut y);
                assert_eq!(x, y, "cp {n}+{extra}");
                let (mut x, mut y) = (d.clone(), d.clone());
                fcp(&src, &mut x, 2);
                p::fcp(&src, &mut y);
                assert_eq!(x, y, "fcp {n}+{extra}");
                let mut z = d.clone();
                fcp(&src, &mut z, 0);
                assert_eq!(z, d, "no pass, no store");
            }
        }
    }
}
