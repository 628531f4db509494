//! The benchmark clock: CLOCK_MONOTONIC in nanoseconds (vDSO, no system call on Linux).

use nix::time::{ClockId, clock_getres, clock_gettime};

/// Nanoseconds on CLOCK_MONOTONIC (shared by all processes, so children's phases line up).
#[inline(always)]
pub fn now_ns() -> u64 {
    match clock_gettime(ClockId::CLOCK_MONOTONIC) {
        Ok(ts) => ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64,
        Err(_) => 0,
    }
}

/// Resolution of CLOCK_MONOTONIC in nanoseconds as the kernel reports it.
pub fn resolution_ns() -> u64 {
    clock_getres(ClockId::CLOCK_MONOTONIC)
        .map(|ts| ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64)
        .unwrap_or(0)
}

/// CPU time consumed by the calling thread, nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|ts| ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64)
        .unwrap_or(0)
}
