//! The measured clock: a chain of dependent integer adds, one cycle each on every x86_64 and
//! aarch64 core (lmbench's `mhz` idea), timed on the monotonic clock. It is what a child ran
//! at when no counter or cpufreq statistics can say, and is labelled an estimate: a core that
//! fuses or eliminates such adds would read high.

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Adds per timed run: 50 µs at 4 GHz, 0.4 ms at 500 MHz.
const ADDS: u64 = 200_000;
/// Timed runs per probe; the fastest counts (an interrupt only ever slows a run).
const RUNS: usize = 7;

/// One probe: the clock it measured and what it cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// Adds per microsecond of the fastest run: the clock in MHz.
    pub mhz: f64,
    /// Wall time of the whole probe, ns.
    pub cost_ns: u64,
}

/// A child's clock over its timed intervals: probed before the first and after the last.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProbedClock {
    /// The probe before the first timed interval.
    pub before: Probe,
    /// The probe after the last.
    pub after: Probe,
}

impl ProbedClock {
    /// The clock over the intervals: the mean of the two probes, MHz.
    pub fn mhz(&self) -> f64 {
        (self.before.mhz + self.after.mhz) / 2.0
    }

    /// How far the clock moved across the intervals, after over before − 1.
    pub fn change(&self) -> f64 {
        self.after.mhz / self.before.mhz - 1.0
    }

    /// What both probes cost, ns.
    pub fn cost_ns(&self) -> u64 {
        self.before.cost_ns.saturating_add(self.after.cost_ns)
    }
}

/// Probes the clock of the CPU the caller runs on; `None` where there is no add chain for
/// this architecture or the timer did not advance.
pub fn probe() -> Option<Probe> {
    let start = Instant::now();
    // One untimed run first: the code and the branch predictor warm.
    chain(ADDS)?;
    let fastest = (0..RUNS)
        .filter_map(|_| {
            let t = Instant::now();
            chain(ADDS)?;
            Some(t.elapsed().as_nanos())
        })
        .min()
        .filter(|&ns| ns > 0)?;
    Some(Probe {
        mhz: ADDS as f64 * 1e3 / fastest as f64,
        cost_ns: u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX),
    })
}

/// Ten dependent adds of 1 to `{x}`.
#[cfg(target_arch = "x86_64")]
macro_rules! ten_adds {
    () => {
        "add {x}, 1\nadd {x}, 1\nadd {x}, 1\nadd {x}, 1\nadd {x}, 1\nadd {x}, 1\nadd {x}, 1\nadd {x}, 1\nadd {x}, 1\nadd {x}, 1\n"
    };
}

/// Ten dependent adds of 1 to `{x}`.
#[cfg(target_arch = "aarch64")]
macro_rules! ten_adds {
    () => {
        "add {x}, {x}, #1\nadd {x}, {x}, #1\nadd {x}, {x}, #1\nadd {x}, {x}, #1\nadd {x}, {x}, #1\nadd {x}, {x}, #1\nadd {x}, {x}, #1\nadd {x}, {x}, #1\nadd {x}, {x}, #1\nadd {x}, {x}, #1\n"
    };
}

/// `adds` (a multiple of 50) dependent adds: 50 a loop iteration, the loop counter a chain of
/// its own beside them. Returns the chain's value, `adds`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(never)]
#[allow(unsafe_code)]
fn chain(adds: u64) -> Option<u64> {
    let mut x = 0u64;
    let mut n = adds / 50;
    if n == 0 {
        return Some(0);
    }
    // SAFETY: register arithmetic only: no memory is read or written, no stack used; the
    // counter is at least 1, so the loop ends after `n` iterations.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        std::arch::asm!(
            "2:",
            ten_adds!(), ten_adds!(), ten_adds!(), ten_adds!(), ten_adds!(),
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            n = inout(reg) n,
            options(nomem, nostack),
        );
        #[cfg(target_arch = "aarch64")]
        std::arch::asm!(
            "2:",
            ten_adds!(), ten_adds!(), ten_adds!(), ten_adds!(), ten_adds!(),
            "subs {n}, {n}, #1",
            "b.ne 2b",
            x = inout(reg) x,
            n = inout(reg) n,
            options(nomem, nostack),
        );
    }
    let _ = n;
    Some(x)
}

/// No add chain for this architecture.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn chain(_adds: u64) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_makes_every_add() {
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            assert_eq!(chain(ADDS), Some(ADDS));
            assert_eq!(chain(100), Some(100));
            assert_eq!(chain(10), Some(0), "below one loop iteration, nothing");
        } else {
            assert_eq!(chain(ADDS), None);
        }
    }

    #[test]
    fn a_probe_gives_a_positive_clock_and_its_cost() {
        let Some(p) = probe() else {
            assert!(chain(ADDS).is_none(), "a chain, yet no probe");
            return;
        };
        assert!(p.mhz.is_finite() && p.mhz > 0.0, "{p:?}");
        // Its cost holds RUNS timed runs, none faster than the fastest.
        let fastest_ns = ADDS as f64 * 1e3 / p.mhz;
        assert!(
            p.cost_ns as f64 >= fastest_ns * RUNS as f64 * 0.999,
            "{p:?}"
        );
    }
}
