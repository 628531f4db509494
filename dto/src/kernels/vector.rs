//! The copy and fill loops every vector kernel shares, written once for any vector width.
//!
//! `vector_copy_fill!` expands, for one instruction set, to a forward and a backward copy, and
//! to memcpy, memmove and memset on top of them: whole vectors from the start (or the end),
//! then one last vector overlapping the bytes already written, and the portable loops below
//! one vector. The arguments name the target feature, the vector width in bytes and the
//! unaligned load, store and byte-splat intrinsics.

/// Defines `$forward`, `$backward`, `$memcpy`, `$memmove` and `$memset` for one instruction
/// set; see the module documentation.
macro_rules! vector_copy_fill {
    (
        feature: $feature:literal,
        name: $name:literal,
        width: $w:literal,
        load: $load:path,
        store: $store:path,
        splat: $splat:path,
        fns: ($forward:ident, $backward:ident, $memcpy:ident, $memmove:ident, $memset:ident) $(,)?
    ) => {
        #[doc = concat!("Forward ", $name, " copy; correct for overlap when dst is at or below src.")]
        ///
        /// # Safety
        #[doc = concat!("Ranges valid for `n` bytes; ", $name, " present.")]
        #[target_feature(enable = $feature)]
        unsafe fn $forward(d: *mut u8, s: *const u8, n: usize) {
            if n < $w {
                // SAFETY: forwarded contract.
                unsafe { super::portable::copy_forward(d, s, n) };
                return;
            }
            // SAFETY: every access lies in [0, n) of its range. The last vector is loaded
            // before any store, and each chunk is loaded before stores can reach it
            // (dst <= src).
            unsafe {
                let tail = $load(s.add(n - $w).cast());
                let mut i = 0;
                while i + $w <= n {
                    $store(d.add(i).cast(), $load(s.add(i).cast()));
                    i += $w;
                }
                $store(d.add(n - $w).cast(), tail);
            }
        }

        #[doc = concat!("Backward ", $name, " copy; correct for overlap when dst is above src.")]
        ///
        /// # Safety
        #[doc = concat!("Ranges valid for `n` bytes; ", $name, " present.")]
        #[target_feature(enable = $feature)]
        unsafe fn $backward(d: *mut u8, s: *const u8, n: usize) {
            if n < $w {
                // SAFETY: forwarded contract.
                unsafe { super::portable::copy_backward(d, s, n) };
                return;
            }
            // SAFETY: accesses lie in [0, n); the first vector is loaded before any store and
            // each chunk is loaded before a store can reach it (copying from the end).
            unsafe {
                let head = $load(s.cast());
                let mut i = n;
                while i >= $w {
                    i -= $w;
                    $store(d.add(i).cast(), $load(s.add(i).cast()));
                }
                $store(d.cast(), head);
            }
        }

        #[doc = concat!("memcpy with ", $name, " loads and stores.")]
        ///
        /// # Safety
        #[doc = concat!("As C's memcpy, and the CPU must support ", $name, ".")]
        #[target_feature(enable = $feature)]
        pub unsafe extern "C" fn $memcpy(
            dst: *mut c_void,
            src: *const c_void,
            n: usize,
        ) -> *mut c_void {
            // SAFETY: memcpy's ranges do not overlap, so the forward routine applies.
            unsafe { $forward(dst.cast(), src.cast(), n) };
            dst
        }

        #[doc = concat!("memmove with ", $name, ", copying backwards when dst overlaps above src.")]
        ///
        /// # Safety
        #[doc = concat!("As C's memmove, and the CPU must support ", $name, ".")]
        #[target_feature(enable = $feature)]
        pub unsafe extern "C" fn $memmove(
            dst: *mut c_void,
            src: *const c_void,
            n: usize,
        ) -> *mut c_void {
            let (d, s) = (dst.cast::<u8>(), src.cast::<u8>());
            // SAFETY: the direction is chosen so no source byte is overwritten before it is
            // read.
            unsafe {
                if super::portable::must_copy_backward(d, s, n) {
                    $backward(d, s, n);
                } else {
                    $forward(d, s, n);
                }
            }
            dst
        }

        #[doc = concat!("memset with ", $name, " stores.")]
        ///
        /// # Safety
        #[doc = concat!("As C's memset, and the CPU must support ", $name, ".")]
        #[target_feature(enable = $feature)]
        pub unsafe extern "C" fn $memset(dst: *mut c_void, c: c_int, n: usize) -> *mut c_void {
            let d = dst.cast::<u8>();
            if n < $w {
                // SAFETY: forwarded contract.
                unsafe { super::portable::fill(d, c as u8, n) };
                return dst;
            }
            // SAFETY: stores lie in [0, n) of the caller's range.
            unsafe {
                let v = $splat(c as u8 as _);
                let mut i = 0;
                while i + $w <= n {
                    $store(d.add(i).cast(), v);
                    i += $w;
                }
                $store(d.add(n - $w).cast(), v);
            }
            dst
        }
    };
}
