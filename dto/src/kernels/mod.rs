//! Built-in memory-operation kernels and the function-pointer table every implementation
//! (libc, a loaded library, a kernel) is measured and checked through.
//!
//! The portable kernel is always compiled; architecture kernels are compiled per target and
//! chosen at run time after feature detection, so a missing feature is a clear error (exit 3)
//! and never an illegal instruction.

use std::ffi::{c_int, c_void};

#[macro_use]
mod vector;

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
pub mod portable;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;

/// C `memcpy`/`memmove` signature.
pub type CopyFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> *mut c_void;
/// C `memset` signature.
pub type SetFn = unsafe extern "C" fn(*mut c_void, c_int, usize) -> *mut c_void;
/// C `memcmp` signature.
pub type CmpFn = unsafe extern "C" fn(*const c_void, *const c_void, usize) -> c_int;

/// The four operations of one implementation.
#[derive(Debug, Clone, Copy)]
pub struct MemFns {
    /// memcpy.
    pub memcpy: CopyFn,
    /// memmove.
    pub memmove: CopyFn,
    /// memset.
    pub memset: SetFn,
    /// memcmp.
    pub memcmp: CmpFn,
}

/// A built-in kernel family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// 8-byte word loops, any CPU.
    Portable,
    /// `rep movsb` / `rep stosb` (x86_64 with ERMS).
    Erms,
    /// 32-byte AVX2 vectors (x86_64).
    Avx2,
    /// 64-byte AVX-512 vectors (x86_64 with AVX-512F and BW).
    Avx512,
    /// Non-temporal streaming stores (x86_64, SSE2).
    Nt,
    /// 16-byte NEON vectors (aarch64).
    Neon,
}

impl Kernel {
    /// Every kernel this program knows, on any architecture.
    pub const ALL: [Kernel; 6] = [
        Kernel::Portable,
        Kernel::Erms,
        Kernel::Avx2,
        Kernel::Avx512,
        Kernel::Nt,
        Kernel::Neon,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::Erms => "erms",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
            Kernel::Nt => "nt",
            Kernel::Neon => "neon",
        }
    }

    /// What it does, for `dto list`.
    pub fn describe(self) -> &'static str {
        match self {
            Kernel::Portable => "8-byte word loops (always available)",
            Kernel::Erms => "rep movsb / rep stosb; memcmp by word loop",
            Kernel::Avx2 => "32-byte AVX2 loads and stores",
            Kernel::Avx512 => "64-byte AVX-512 loads and stores",
            Kernel::Nt => "non-temporal 16-byte streaming stores; memcmp by word loop",
            Kernel::Neon => "16-byte NEON loads and stores",
        }
    }

    /// Looks a kernel up by name.
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// `Ok` when this CPU can run the kernel, else the reason it cannot.
    pub fn available(self) -> Result<(), String> {
        match self {
            Kernel::Portable => Ok(()),
            #[cfg(target_arch = "x86_64")]
            Kernel::Erms => need(
                cpu_has_erms(),
                "the CPU lacks ERMS (enhanced rep movsb/stosb)",
            ),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => need(is_x86_feature_detected!("avx2"), "the CPU lacks AVX2"),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => need(
                is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"),
                "the CPU lacks AVX-512F/BW",
            ),
            #[cfg(target_arch = "x86_64")]
            Kernel::Nt => Ok(()),
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => need(
                std::arch::is_aarch64_feature_detected!("neon"),
                "the CPU lacks NEON",
            ),
            #[allow(unreachable_patterns)]
            _ => Err(format!(
                "the {} kernel is not built for {}",
                self.name(),
                std::env::consts::ARCH
            )),
        }
    }

    /// The kernel's functions, after checking that this CPU can run them.
    pub fn fns(self) -> Result<MemFns, String> {
        self.available()?;
        Ok(self.fns_unchecked())
    }

    /// Its functions whether or not this CPU can run them: only their addresses may be used
    /// (where the code sits, checked by the kernel tests); call them only after [`Kernel::fns`]
    /// succeeded.
    pub fn fns_unchecked(self) -> MemFns {
        #[cfg(target_arch = "aarch64")]
        use self::aarch64 as k;
        #[cfg(target_arch = "x86_64")]
        use self::x86_64 as k;
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Erms => MemFns {
                memcpy: k::erms_memcpy,
                memmove: k::erms_memmove,
                memset: k::erms_memset,
                memcmp: portable::memcmp,
            },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => MemFns {
                memcpy: k::avx2_memcpy,
                memmove: k::avx2_memmove,
                memset: k::avx2_memset,
                memcmp: k::avx2_memcmp,
            },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => MemFns {
                memcpy: k::avx512_memcpy,
                memmove: k::avx512_memmove,
                memset: k::avx512_memset,
                memcmp: k::avx512_memcmp,
            },
            #[cfg(target_arch = "x86_64")]
            Kernel::Nt => MemFns {
                memcpy: k::nt_memcpy,
                memmove: k::nt_memmove,
                memset: k::nt_memset,
                memcmp: portable::memcmp,
            },
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => MemFns {
                memcpy: k::neon_memcpy,
                memmove: k::neon_memmove,
                memset: k::neon_memset,
                memcmp: k::neon_memcmp,
            },
            _ => MemFns {
                memcpy: portable::memcpy,
                memmove: portable::memmove,
                memset: portable::memset,
                memcmp: portable::memcmp,
            },
        }
    }
}

fn need(ok: bool, why: &str) -> Result<(), String> {
    if ok { Ok(()) } else { Err(why.to_string()) }
}

/// ERMS: CPUID leaf 7, sub-leaf 0, EBX bit 9 (std's feature detection does not report it).
#[cfg(target_arch = "x86_64")]
pub fn cpu_has_erms() -> bool {
    let leaf0 = std::arch::x86_64::__cpuid(0);
    if leaf0.eax < 7 {
        return false;
    }
    let l7 = std::arch::x86_64::__cpuid_count(7, 0);
    l7.ebx & (1 << 9) != 0
}
