//! aarch64 kernels: 16-byte NEON loads and stores. Reached only through
//! [`super::Kernel::fns`], which checks the CPU first.
#![allow(unsafe_code)]

use std::arch::aarch64::*;
use std::ffi::{c_int, c_void};

use super::portable;

vector_copy_fill! {
    feature: "neon",
    name: "NEON (16-byte)",
    width: 16,
    load: vld1q_u8,
    store: vst1q_u8,
    splat: vdupq_n_u8,
    fns: (forward, backward, neon_memcpy, neon_memmove, neon_memset),
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
