//! aarch64 Advanced SIMD (NEON) kernels: `rdvec`, `wrnt`, `cpnt` and the read/write mixes.
//!
//! Loads use LD1 of four registers (64 bytes an instruction) into four accumulators. The
//! non-temporal stores are STNP of register pairs, written in inline assembly because Rust has
//! no intrinsic for them; STNP is a hint the core may or may not honour, so `wrnt`/`cpnt`
//! show what the hardware does with it.
#![allow(unsafe_code)]

use std::arch::aarch64::*;
use std::arch::asm;

use super::portable::CHUNK_WORDS;

/// Proof that this CPU has Advanced SIMD (every Linux aarch64 CPU does; still detected).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Neon(());

impl Neon {
    /// Some when NEON is available.
    pub fn detect() -> Option<Neon> {
        std::arch::is_aarch64_feature_detected!("neon").then_some(Neon(()))
    }
}

#[target_feature(enable = "neon")]
fn rdvec_neon(buf: &[u32]) -> u32 {
    let mut acc = [vdupq_n_u32(0); 4];
    for c in buf.as_chunks::<CHUNK_WORDS>().0 {
        for i in 0..CHUNK_WORDS / 16 {
            // SAFETY: ints 16i..16i+16 lie inside the 128-int chunk `c`.
            let v = unsafe { vld1q_u32_x4(c.as_ptr().add(16 * i)) };
            acc[0] = vaddq_u32(acc[0], v.0);
            acc[1] = vaddq_u32(acc[1], v.1);
            acc[2] = vaddq_u32(acc[2], v.2);
            acc[3] = vaddq_u32(acc[3], v.3);
        }
    }
    vaddvq_u32(vaddq_u32(
        vaddq_u32(acc[0], acc[1]),
        vaddq_u32(acc[2], acc[3]),
    ))
}

/// Stores two registers at `p` and `p + 32` bytes each, 64 bytes in all, with STNP.
///
/// # Safety
/// `p` must be valid for 64 bytes of writes.
#[target_feature(enable = "neon")]
unsafe fn stnp64(p: *mut u32, v: uint32x4x4_t) {
    // SAFETY: the caller guarantees 64 writable bytes at p; STNP has no alignment
    // requirement for q registers beyond the usual unaligned-access support of Linux.
    unsafe {
        asm!(
            "stnp {a:q}, {b:q}, [{p}]",
            "stnp {c:q}, {d:q}, [{p}, #32]",
            p = in(reg) p,
            a = in(vreg) v.0,
            b = in(vreg) v.1,
            c = in(vreg) v.2,
            d = in(vreg) v.3,
            options(nostack, preserves_flags),
        );
    }
}

#[target_feature(enable = "neon")]
fn wrnt_neon(buf: &mut [u32]) {
    let one = vdupq_n_u32(1);
    let v = uint32x4x4_t(one, one, one, one);
    for c in buf.as_chunks_mut::<CHUNK_WORDS>().0 {
        for i in 0..CHUNK_WORDS / 16 {
            // SAFETY: ints 16i..16i+16 (64 bytes) lie inside the exclusively borrowed chunk.
            unsafe { stnp64(c.as_mut_ptr().add(16 * i), v) };
        }
    }
}

#[target_feature(enable = "neon")]
fn cpnt_neon(src: &[u32], dst: &mut [u32]) {
    let d = dst.as_chunks_mut::<CHUNK_WORDS>().0;
    for (s, d) in src.as_chunks::<CHUNK_WORDS>().0.iter().zip(d) {
        for i in 0..CHUNK_WORDS / 16 {
            // SAFETY: ints 16i..16i+16 lie inside both 128-int chunks; `d` is exclusive.
            unsafe {
                let v = vld1q_u32_x4(s.as_ptr().add(16 * i));
                stnp64(d.as_mut_ptr().add(16 * i), v);
            }
        }
    }
}

#[target_feature(enable = "neon")]
fn mix_neon(buf: &mut [u32], reads: usize) -> u32 {
    let one = vdupq_n_u32(1);
    let ones = uint32x4x4_t(one, one, one, one);
    let mut acc = [vdupq_n_u32(0); 4];
    let mut k = 0;
    for c in buf.as_chunks_mut::<CHUNK_WORDS>().0 {
        if k == reads {
            for i in 0..CHUNK_WORDS / 16 {
                // SAFETY: ints 16i..16i+16 lie inside the exclusively borrowed chunk.
                unsafe { vst1q_u32_x4(c.as_mut_ptr().add(16 * i), ones) };
            }
            k = 0;
        } else {
            for i in 0..CHUNK_WORDS / 16 {
                // SAFETY: ints 16i..16i+16 lie inside the chunk.
                let v = unsafe { vld1q_u32_x4(c.as_ptr().add(16 * i)) };
                acc[0] = vaddq_u32(acc[0], v.0);
                acc[1] = vaddq_u32(acc[1], v.1);
                acc[2] = vaddq_u32(acc[2], v.2);
                acc[3] = vaddq_u32(acc[3], v.3);
            }
            k += 1;
        }
    }
    vaddvq_u32(vaddq_u32(
        vaddq_u32(acc[0], acc[1]),
        vaddq_u32(acc[2], acc[3]),
    ))
}

/// `rdvec` with NEON.
pub fn rdvec(_: Neon, buf: &[u32]) -> u32 {
    // SAFETY: a Neon value exists only after NEON was detected on this CPU.
    unsafe { rdvec_neon(buf) }
}

/// `wrnt` with NEON (STNP).
pub fn wrnt(_: Neon, buf: &mut [u32]) {
    // SAFETY: a Neon value exists only after NEON was detected on this CPU.
    unsafe { wrnt_neon(buf) }
}

/// `cpnt` with NEON loads and STNP stores.
pub fn cpnt(_: Neon, src: &[u32], dst: &mut [u32]) {
    // SAFETY: a Neon value exists only after NEON was detected on this CPU.
    unsafe { cpnt_neon(src, dst) }
}

/// A read/write mix with NEON.
pub fn mix(_: Neon, buf: &mut [u32], reads: usize) -> u32 {
    // SAFETY: a Neon value exists only after NEON was detected on this CPU.
    unsafe { mix_neon(buf, reads) }
}
