//! The few system and CPU primitives the A/B measurement needs beyond benchmp: the cycle
//! counter, cache-line flushing and dropping a page (fault injection).
#![allow(unsafe_code)]

use std::ptr::NonNull;

use nix::sys::mman::{MmapAdvise, madvise};

/// Name of the timer the measurement uses on this architecture.
pub const TIMER: &str = if cfg!(target_arch = "x86_64") {
    "rdtsc/rdtscp"
} else {
    "CLOCK_MONOTONIC"
};

/// Reads the timer before a measured operation (x86_64: lfence; rdtsc, so earlier
/// instructions finish first).
#[inline(always)]
pub fn timer_start() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_lfence, _rdtsc};
        // SAFETY: lfence and rdtsc have no memory operands and exist on every x86_64 CPU.
        unsafe {
            _mm_lfence();
            _rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        benchmp::sys::clock::now_ns()
    }
}

/// Reads the timer after a measured operation (x86_64: rdtscp, which waits for earlier
/// instructions, then lfence so later ones do not start early).
#[inline(always)]
pub fn timer_end() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__rdtscp, _mm_lfence};
        let mut aux = 0u32;
        // SAFETY: rdtscp writes only `aux`; the CPU feature is checked by `timer_check`.
        unsafe {
            let t = __rdtscp(&mut aux);
            _mm_lfence();
            t
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        benchmp::sys::clock::now_ns()
    }
}

/// `Err` when the timer cannot be used here (x86_64 without rdtscp).
pub fn timer_check() -> Result<(), String> {
    #[cfg(target_arch = "x86_64")]
    {
        let ext = std::arch::x86_64::__cpuid(0x8000_0001);
        if ext.edx & (1 << 27) == 0 {
            return Err("the CPU lacks rdtscp".into());
        }
    }
    Ok(())
}

/// How caches are flushed before a cold measurement on this CPU.
pub fn flush_method() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if has_clflushopt() {
            "clflushopt"
        } else {
            "clflush"
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        "dc civac"
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        "none (no cache maintenance instruction on this architecture)"
    }
}

#[cfg(target_arch = "x86_64")]
fn has_clflushopt() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        let l0 = std::arch::x86_64::__cpuid(0);
        l0.eax >= 7 && std::arch::x86_64::__cpuid_count(7, 0).ebx & (1 << 23) != 0
    })
}

/// Writes back and evicts every cache line of `[ptr, ptr + len)` from all cache levels, then
/// waits for the evictions to complete.
pub fn flush_range(ptr: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        const LINE: usize = 64;
        let start = ptr as usize & !(LINE - 1);
        let end = ptr as usize + len;
        let opt = has_clflushopt();
        let mut a = start;
        while a < end {
            // SAFETY: clflush/clflushopt of an address inside a mapped buffer only evicts the
            // line; it does not change memory contents.
            unsafe {
                if opt {
                    std::arch::asm!("clflushopt [{0}]", in(reg) a, options(nostack, preserves_flags));
                } else {
                    std::arch::asm!("clflush [{0}]", in(reg) a, options(nostack, preserves_flags));
                }
            }
            a += LINE;
        }
        // SAFETY: mfence orders the flushes before the timed operation.
        unsafe { std::arch::x86_64::_mm_mfence() };
    }
    #[cfg(target_arch = "aarch64")]
    {
        let ctr: u64;
        // SAFETY: CTR_EL0 is readable from EL0 on Linux (trapped and emulated if needed).
        unsafe { std::arch::asm!("mrs {0}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
        let line = 4usize << ((ctr >> 16) & 0xf);
        let start = ptr as usize & !(line - 1);
        let end = ptr as usize + len;
        let mut a = start;
        while a < end {
            // SAFETY: dc civac cleans and invalidates one line of mapped memory to the point
            // of coherency; contents are unchanged.
            unsafe {
                std::arch::asm!("dc civac, {0}", in(reg) a, options(nostack, preserves_flags))
            };
            a += line;
        }
        // SAFETY: dsb ish waits for the maintenance to complete.
        unsafe { std::arch::asm!("dsb ish", options(nostack, preserves_flags)) };
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (ptr, len);
    }
}

/// Drops the page at `[ptr, ptr + page)` (MADV_DONTNEED) so the next touch takes a fault and
/// finds a fresh zero page.
///
/// # Safety
/// The range must be a page-aligned part of a private anonymous mapping the caller owns and
/// whose contents it no longer needs.
pub unsafe fn drop_page(ptr: *mut u8, page: usize) -> Result<(), String> {
    let p = NonNull::new(ptr.cast()).ok_or("null page")?;
    // SAFETY: forwarded from the caller; DONTNEED on a private anonymous range only discards
    // its contents.
    unsafe { madvise(p, page, MmapAdvise::MADV_DONTNEED) }.map_err(|e| format!("madvise: {e}"))
}

/// Measures the timer's frequency in Hz against CLOCK_MONOTONIC (x86_64: the TSC; elsewhere
/// the timer counts nanoseconds, so 1e9).
pub fn timer_hz() -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut rates: Vec<f64> = (0..3)
            .map(|_| {
                let (t0, c0) = (benchmp::sys::clock::now_ns(), timer_start());
                std::thread::sleep(std::time::Duration::from_millis(40));
                let (t1, c1) = (benchmp::sys::clock::now_ns(), timer_end());
                (c1 - c0) as f64 * 1e9 / (t1 - t0) as f64
            })
            .collect();
        rates.sort_by(|a, b| a.total_cmp(b));
        rates[1]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_runs_forward_and_flush_keeps_contents() {
        timer_check().unwrap();
        let a = timer_start();
        let v: Vec<u8> = (0..10_000).map(|i| i as u8).collect();
        flush_range(v.as_ptr(), v.len());
        let b = timer_end();
        assert!(b > a);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u8));
        assert!(timer_hz() > 1e6);
    }
}
