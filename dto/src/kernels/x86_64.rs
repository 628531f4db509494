//! x86_64 kernels: `rep movsb`/`rep stosb` (ERMS), 32-byte AVX2 and 64-byte AVX-512 vector
//! loops, and non-temporal (streaming) stores. Each `#[target_feature]` function is reached
//! only through [`super::Kernel::fns`], which checks the CPU first.
#![allow(unsafe_code)]

use std::arch::asm;
use std::arch::x86_64::*;
use std::ffi::{c_int, c_void};

use super::portable;

// ---------------------------------------------------------------- ERMS (rep movsb / stosb)

/// memcpy by `rep movsb`.
///
/// # Safety
/// As C's memcpy.
pub unsafe extern "C" fn erms_memcpy(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
) -> *mut c_void {
    // SAFETY: rep movsb copies rcx bytes from [rsi] to [rdi] forwards (DF is clear by the ABI);
    // the caller guarantees both ranges; the registers are declared clobbered.
    unsafe {
        asm!("rep movsb",
            inout("rcx") n => _, inout("rdi") dst => _, inout("rsi") src => _,
            options(nostack, preserves_flags));
    }
    dst
}

/// memmove by `rep movsb`, run backwards (DF set) when the ranges overlap with dst above src.
///
/// # Safety
/// As C's memmove.
pub unsafe extern "C" fn erms_memmove(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
) -> *mut c_void {
    if n == 0 {
        return dst;
    }
    if portable::must_copy_backward(dst.cast(), src.cast(), n) {
        let (d, s) = (
            dst.cast::<u8>().wrapping_add(n - 1),
            src.cast::<u8>().wrapping_add(n - 1),
        );
        // SAFETY: with DF set, rep movsb copies rcx bytes from [rsi] downwards to [rdi]
        // downwards, starting at the last byte of each range; cld restores the ABI state.
        unsafe {
            asm!("std", "rep movsb", "cld",
                inout("rcx") n => _, inout("rdi") d => _, inout("rsi") s => _,
                options(nostack));
        }
        dst
    } else {
        // SAFETY: forwards is correct when dst is at or below src, or the ranges are disjoint.
        unsafe { erms_memcpy(dst, src, n) }
    }
}

/// memset by `rep stosb`.
///
/// # Safety
/// As C's memset.
pub unsafe extern "C" fn erms_memset(dst: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    // SAFETY: rep stosb stores al into rcx bytes from [rdi] forwards; the caller guarantees the
    // range.
    unsafe {
        asm!("rep stosb",
            inout("rcx") n => _, inout("rdi") dst => _, in("al") c as u8,
            options(nostack, preserves_flags));
    }
    dst
}

// ---------------------------------------------------------------- AVX2 (32-byte vectors)

vector_copy_fill! {
    feature: "avx2",
    name: "AVX2 (32-byte)",
    width: 32,
    load: _mm256_loadu_si256,
    store: _mm256_storeu_si256,
    splat: _mm256_set1_epi8,
    fns: (avx2_forward, avx2_backward, avx2_memcpy, avx2_memmove, avx2_memset),
}

/// memcmp comparing 32 bytes per step with AVX2.
///
/// # Safety
/// As C's memcmp, and the CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub unsafe extern "C" fn avx2_memcmp(a: *const c_void, b: *const c_void, n: usize) -> c_int {
    let (a, b) = (a.cast::<u8>(), b.cast::<u8>());
    if n < 32 {
        // SAFETY: forwarded contract.
        return unsafe { portable::compare(a, b, n) };
    }
    // SAFETY: loads lie in [0, n) of both ranges. The final chunk overlaps bytes already found
    // equal, so its first difference is the first difference overall.
    unsafe {
        let first_diff = |at: usize| -> Option<c_int> {
            let x = _mm256_loadu_si256(a.add(at).cast());
            let y = _mm256_loadu_si256(b.add(at).cast());
            let eq = _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, y)) as u32;
            (eq != u32::MAX).then(|| {
                let k = at + (!eq).trailing_zeros() as usize;
                c_int::from(*a.add(k)) - c_int::from(*b.add(k))
            })
        };
        let mut i = 0;
        while i + 32 <= n {
            if let Some(r) = first_diff(i) {
                return r;
            }
            i += 32;
        }
        first_diff(n - 32).unwrap_or(0)
    }
}

// ---------------------------------------------------------------- AVX-512 (64-byte vectors)

vector_copy_fill! {
    feature: "avx512f",
    name: "AVX-512F (64-byte)",
    width: 64,
    load: _mm512_loadu_si512,
    store: _mm512_storeu_si512,
    splat: _mm512_set1_epi8,
    fns: (avx512_forward, avx512_backward, avx512_memcpy, avx512_memmove, avx512_memset),
}

/// memcmp comparing 64 bytes per step with AVX-512BW byte masks.
///
/// # Safety
/// As C's memcmp, and the CPU must support AVX-512F and AVX-512BW.
#[target_feature(enable = "avx512f,avx512bw")]
pub unsafe extern "C" fn avx512_memcmp(a: *const c_void, b: *const c_void, n: usize) -> c_int {
    let (a, b) = (a.cast::<u8>(), b.cast::<u8>());
    if n < 64 {
        // SAFETY: forwarded contract.
        return unsafe { portable::compare(a, b, n) };
    }
    // SAFETY: as avx2_memcmp, with 64-byte chunks.
    unsafe {
        let first_diff = |at: usize| -> Option<c_int> {
            let x = _mm512_loadu_si512(a.add(at).cast());
            let y = _mm512_loadu_si512(b.add(at).cast());
            let ne = _mm512_cmpneq_epi8_mask(x, y);
            (ne != 0).then(|| {
                let k = at + ne.trailing_zeros() as usize;
                c_int::from(*a.add(k)) - c_int::from(*b.add(k))
            })
        };
        let mut i = 0;
        while i + 64 <= n {
            if let Some(r) = first_diff(i) {
                return r;
            }
            i += 64;
        }
        first_diff(n - 64).unwrap_or(0)
    }
}

// ---------------------------------------------------------------- non-temporal stores (SSE2)

/// Below this size streaming stores do not pay off; the portable loop is used.
const NT_MIN: usize = 256;

/// Copies with 16-byte streaming stores to a 16-byte aligned destination.
///
/// # Safety
/// Non-overlapping ranges valid for `n` bytes.
unsafe fn nt_copy(d: *mut u8, s: *const u8, n: usize) {
    if n < NT_MIN {
        // SAFETY: forwarded contract.
        unsafe { portable::copy_forward(d, s, n) };
        return;
    }
    let head = d.align_offset(16).min(n);
    // SAFETY: head, body and tail partition [0, n); the body's stores are 16-byte aligned as
    // _mm_stream_si128 requires; sfence orders the streaming stores before later stores.
    unsafe {
        portable::copy_forward(d, s, head);
        let mut i = head;
        while i + 64 <= n {
            let a = _mm_loadu_si128(s.add(i).cast());
            let b = _mm_loadu_si128(s.add(i + 16).cast());
            let c = _mm_loadu_si128(s.add(i + 32).cast());
            let e = _mm_loadu_si128(s.add(i + 48).cast());
            _mm_stream_si128(d.add(i).cast(), a);
            _mm_stream_si128(d.add(i + 16).cast(), b);
            _mm_stream_si128(d.add(i + 32).cast(), c);
            _mm_stream_si128(d.add(i + 48).cast(), e);
            i += 64;
        }
        while i + 16 <= n {
            _mm_stream_si128(d.add(i).cast(), _mm_loadu_si128(s.add(i).cast()));
            i += 16;
        }
        _mm_sfence();
        portable::copy_forward(d.add(i), s.add(i), n - i);
    }
}

/// memcpy with non-temporal stores (bypassing the caches for the destination).
///
/// # Safety
/// As C's memcpy.
pub unsafe extern "C" fn nt_memcpy(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: memcpy's ranges do not overlap.
    unsafe { nt_copy(dst.cast(), src.cast(), n) };
    dst
}

/// memmove with non-temporal stores when the ranges are disjoint, else the portable memmove.
///
/// # Safety
/// As C's memmove.
pub unsafe extern "C" fn nt_memmove(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    let (d, s) = (dst as usize, src as usize);
    let disjoint = d.abs_diff(s) >= n;
    // SAFETY: streaming copy only for disjoint ranges; the portable memmove handles overlap.
    unsafe {
        if disjoint {
            nt_copy(dst.cast(), src.cast(), n);
            dst
        } else {
            portable::memmove(dst, src, n)
        }
    }
}

/// memset with non-temporal stores.
///
/// # Safety
/// As C's memset.
pub unsafe extern "C" fn nt_memset(dst: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    let d = dst.cast::<u8>();
    let byte = c as u8;
    if n < NT_MIN {
        // SAFETY: forwarded contract.
        unsafe { portable::fill(d, byte, n) };
        return dst;
    }
    let head = d.align_offset(16).min(n);
    // SAFETY: head, body and tail partition [0, n); body stores are 16-byte aligned.
    unsafe {
        portable::fill(d, byte, head);
        let v = _mm_set1_epi8(byte as i8);
        let mut i = head;
        while i + 16 <= n {
            _mm_stream_si128(d.add(i).cast(), v);
            i += 16;
        }
        _mm_sfence();
        portable::fill(d.add(i), byte, n - i);
    }
    dst
}
