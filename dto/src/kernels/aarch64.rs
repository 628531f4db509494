//! aarch64 kernels: 16-byte NEON loads and stores. Reached only through
//! [`super::Kernel::fns`], which checks the CPU first.
#![allow(unsafe_code)]

use std::arch::aarch64::*;
use std::ffi::{c_int, c_void};

use super::portable;

/// Forward 16-byte copy; correct for overlap when dst is at or below src.
///
/// # Safety
/// Ranges valid for `n` bytes; NEON present.
#[target_feature(enable = "neon")]
unsafe fn forward(d: *mut u8, s: *const u8, n: usize) {
    if n < 16 {
        // SAFETY: forwarded contract.
        unsafe { portable::copy_forward(d, s, n) };
        return;
    }
    // SAFETY: accesses lie in [0, n); the last 16 bytes are loaded before any store and each
    // chunk is loaded before a store can reach it.
    unsafe {
        let tail = vld1q_u8(s.add(n - 16));
        let mut i = 0;
        while i + 16 <= n {
            vst1q_u8(d.add(i), vld1q_u8(s.add(i)));
            i += 16;
        }
        vst1q_u8(d.add(n - 16), tail);
    }
}

/// Backward 16-byte copy; correct for overlap when dst is above src.
///
/// # Safety
/// Ranges valid for `n` bytes; NEON present.
#[target_feature(enable = "neon")]
unsafe fn backward(d: *mut u8, s: *const u8, n: usize) {
    if n < 16 {
        // SAFETY: forwarded contract.
        unsafe { portable::copy_backward(d, s, n) };
        return;
    }
    // SAFETY: accesses lie in [0, n); the first 16 bytes are loaded before any store.
    unsafe {
        let head = vld1q_u8(s);
        let mut i = n;
        while i >= 16 {
            i -= 16;
            vst1q_u8(d.add(i), vld1q_u8(s.add(i)));
        }
        vst1q_u8(d, head);
    }
}

/// memcpy with NEON.
///
/// # Safety
/// As C's memcpy.
#[target_feature(enable = "neon")]
pub unsafe extern "C" fn neon_memcpy(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
) -> *mut c_void {
    // SAFETY: memcpy's ranges do not overlap.
    unsafe { forward(dst.cast(), src.cast(), n) };
    dst
}

/// memmove with NEON, copying backwards when dst overlaps above src.
///
/// # Safety
/// As C's memmove.
#[target_feature(enable = "neon")]
pub unsafe extern "C" fn neon_memmove(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
) -> *mut c_void {
    let (d, s) = (dst.cast::<u8>(), src.cast::<u8>());
    // SAFETY: the direction is chosen so no source byte is overwritten before it is read.
    unsafe {
        if portable::must_copy_backward(d, s, n) {
            backward(d, s, n);
        } else {
            forward(d, s, n);
        }
    }
    dst
}

/// memset with NEON.
///
/// # Safety
/// As C's memset.
#[target_feature(enable = "neon")]
pub unsafe extern "C" fn neon_memset(dst: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    let d = dst.cast::<u8>();
    if n < 16 {
        // SAFETY: forwarded contract.
        unsafe { portable::fill(d, c as u8, n) };
        return dst;
    }
    // SAFETY: stores lie in [0, n).
    unsafe {
        let v = vdupq_n_u8(c as u8);
        let mut i = 0;
        while i + 16 <= n {
            vst1q_u8(d.add(i), v);
            i += 16;
        }
        vst1q_u8(d.add(n - 16), v);
    }
    dst
}

/// memcmp comparing 16 bytes per step with NEON.
///
/// # Safety
/// As C's memcmp.
#[target_feature(enable = "neon")]
pub unsafe extern "C" fn neon_memcmp(a: *const c_void, b: *const c_void, n: usize) -> c_int {
    let (a, b) = (a.cast::<u8>(), b.cast::<u8>());
    let mut i = 0;
    // SAFETY: loads lie in [0, n); a differing chunk is resolved byte by byte.
    unsafe {
        while i + 16 <= n {
            let eq = vceqq_u8(vld1q_u8(a.add(i)), vld1q_u8(b.add(i)));
            if vminvq_u8(eq) != 0xff {
                return portable::compare(a.add(i), b.add(i), 16);
            }
            i += 16;
        }
        portable::compare(a.add(i), b.add(i), n - i)
    }
}
