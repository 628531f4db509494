//! dto's own kernels (portable, and each of ERMS, AVX2, AVX-512 and non-temporal stores on
//! x86_64, NEON on aarch64) against the portable one, on the CPU running the test: the test
//! command also runs this file's build for aarch64 under qemu-user. An integration test, so
//! that build links the library the dto binary links rather than a second, test-only build
//! of it.

use dto::kernels::{Kernel, MemFns};

#[test]
fn names_round_trip_and_portable_is_always_there() {
    for k in Kernel::ALL {
        assert_eq!(Kernel::from_name(k.name()), Some(k));
    }
    assert!(Kernel::Portable.available().is_ok());
    assert!(Kernel::from_name("bogus").is_none());
}

/// Every kernel function, available on this CPU or not, sits at the same offset within
/// its cache lines in every build.
#[test]
fn every_kernel_starts_on_a_cache_line() {
    for k in Kernel::ALL {
        let f = k.fns_unchecked();
        let n = ["memcpy", "memmove", "memset", "memcmp"].map(|op| format!("{} {op}", k.name()));
        benchmp::testing::assert_code_aligned(&[
            (&n[0], f.memcpy as *const ()),
            (&n[1], f.memmove as *const ()),
            (&n[2], f.memset as *const ()),
            (&n[3], f.memcmp as *const ()),
        ]);
    }
}

/// Every kernel this CPU runs copies, moves (overlapping both ways), fills and compares
/// as the portable one does, at sizes around each vector width and offsets within a line.
#[test]
#[allow(unsafe_code)]
fn every_available_kernel_agrees_with_the_portable_one() {
    let reference = Kernel::Portable.fns().unwrap();
    let pattern: Vec<u8> = (0..600u32).map(|i| (i * 7 + 3) as u8).collect();
    for k in Kernel::ALL {
        let Ok(f) = k.fns() else { continue };
        for n in [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 300] {
            for off in [0, 1, 5] {
                let run = |fns: MemFns| {
                    let mut dst = vec![0u8; 600];
                    let mut mv = pattern.clone();
                    let mut set = vec![9u8; 600];
                    // SAFETY: every range lies inside its 600-byte vector; n + off + 8 < 600.
                    let cmp = unsafe {
                        (fns.memcpy)(dst[off..].as_mut_ptr().cast(), pattern.as_ptr().cast(), n);
                        let base = mv.as_mut_ptr();
                        (fns.memmove)(base.add(off + 8).cast(), base.add(off).cast(), n);
                        (fns.memmove)(base.add(off).cast(), base.add(off + 3).cast(), n);
                        (fns.memset)(set[off..].as_mut_ptr().cast(), 0xab, n);
                        let mut other = pattern.clone();
                        if n > 0 {
                            other[off + n - 1] ^= 1;
                        }
                        (fns.memcmp)(
                            pattern[off..].as_ptr().cast(),
                            other[off..].as_ptr().cast(),
                            n,
                        )
                    };
                    (dst, mv, set, cmp.signum())
                };
                assert!(run(f) == run(reference), "{} n={n} off={off}", k.name());
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn neon_is_refused_on_x86() {
    assert!(Kernel::Neon.fns().unwrap_err().contains("not built"));
}
