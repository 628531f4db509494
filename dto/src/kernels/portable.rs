//! The portable kernels: 8-byte word loops with unaligned loads and stores, always compiled.
//! They are the reference the functional checks compare every other kernel against, and the
//! small-size and fallback paths of the architecture kernels.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::ptr::{read_unaligned, write_unaligned};

/// Copies `n` bytes forwards, a word at a time; correct for overlap when `dst <= src`.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` bytes.
#[inline]
pub(crate) unsafe fn copy_forward(dst: *mut u8, src: *const u8, n: usize) {
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: i + 8 <= n keeps both 8-byte accesses inside the caller's ranges; the word is
        // read before it is written, so an overlap with dst below src is handled.
        unsafe {
            write_unaligned(
                dst.add(i).cast::<u64>(),
                read_unaligned(src.add(i).cast::<u64>()),
            )
        };
        i += 8;
    }
    while i < n {
        // SAFETY: i < n.
        unsafe { *dst.add(i) = *src.add(i) };
        i += 1;
    }
}

/// Copies `n` bytes backwards (from the end), a word at a time; correct when `dst >= src`.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` bytes.
#[inline]
pub(crate) unsafe fn copy_backward(dst: *mut u8, src: *const u8, n: usize) {
    let mut i = n;
    while i >= 8 {
        i -= 8;
        // SAFETY: i + 8 <= n; reading before writing keeps overlap with dst above src correct.
        unsafe {
            write_unaligned(
                dst.add(i).cast::<u64>(),
                read_unaligned(src.add(i).cast::<u64>()),
            )
        };
    }
    while i > 0 {
        i -= 1;
        // SAFETY: i < n.
        unsafe { *dst.add(i) = *src.add(i) };
    }
}

/// True when copying forwards would overwrite source bytes not yet read.
#[inline]
pub(crate) fn must_copy_backward(dst: *const u8, src: *const u8, n: usize) -> bool {
    let (d, s) = (dst as usize, src as usize);
    d > s && d - s < n
}

/// Fills `n` bytes with `byte`, a word at a time.
///
/// # Safety
/// `dst` must be writable for `n` bytes.
#[inline]
pub(crate) unsafe fn fill(dst: *mut u8, byte: u8, n: usize) {
    let word = u64::from_ne_bytes([byte; 8]);
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: i + 8 <= n.
        unsafe { write_unaligned(dst.add(i).cast::<u64>(), word) };
        i += 8;
    }
    while i < n {
        // SAFETY: i < n.
        unsafe { *dst.add(i) = byte };
        i += 1;
    }
}

/// Compares `n` bytes as unsigned chars; the sign of the result orders `a` against `b`.
///
/// # Safety
/// `a` and `b` must be readable for `n` bytes.
#[inline]
pub(crate) unsafe fn compare(a: *const u8, b: *const u8, n: usize) -> c_int {
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: i + 8 <= n.
        let (x, y) = unsafe {
            (
                read_unaligned(a.add(i).cast::<[u8; 8]>()),
                read_unaligned(b.add(i).cast::<[u8; 8]>()),
            )
        };
        if x != y {
            // Big-endian words order like the bytes they hold.
            let (x, y) = (u64::from_be_bytes(x), u64::from_be_bytes(y));
            let at = ((x ^ y).leading_zeros() / 8) as usize;
            return c_int::from(x.to_be_bytes()[at]) - c_int::from(y.to_be_bytes()[at]);
        }
        i += 8;
    }
    while i < n {
        // SAFETY: i < n.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return c_int::from(x) - c_int::from(y);
        }
        i += 1;
    }
    0
}

/// memcpy with C linkage.
///
/// # Safety
/// As C's memcpy: both ranges valid for `n` bytes and not overlapping.
pub unsafe extern "C" fn memcpy(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller upholds memcpy's contract.
    unsafe { copy_forward(dst.cast(), src.cast(), n) };
    dst
}

/// memmove with C linkage.
///
/// # Safety
/// As C's memmove: both ranges valid for `n` bytes; they may overlap.
pub unsafe extern "C" fn memmove(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    let (d, s) = (dst.cast::<u8>(), src.cast::<u8>());
    if must_copy_backward(d, s, n) {
        // SAFETY: the caller upholds memmove's contract; backwards is safe for dst above src.
        unsafe { copy_backward(d, s, n) };
    } else {
        // SAFETY: as above; forwards is safe for dst at or below src, or no overlap.
        unsafe { copy_forward(d, s, n) };
    }
    dst
}

/// memset with C linkage (the value is converted to unsigned char, as C does).
///
/// # Safety
/// As C's memset: `dst` writable for `n` bytes.
pub unsafe extern "C" fn memset(dst: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    // SAFETY: the caller upholds memset's contract.
    unsafe { fill(dst.cast(), c as u8, n) };
    dst
}

/// memcmp with C linkage.
///
/// # Safety
/// As C's memcmp: both ranges readable for `n` bytes.
pub unsafe extern "C" fn memcmp(a: *const c_void, b: *const c_void, n: usize) -> c_int {
    // SAFETY: the caller upholds memcmp's contract.
    unsafe { compare(a.cast(), b.cast(), n) }
}
