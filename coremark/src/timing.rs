//! Timing of one context as the reference's POSIX port does it: millisecond ticks, the
//! automatic iteration count (×10 until a run takes at least 1 s, then scaled to about
//! 10 s), and the 10-second minimum for a valid result. Only the final run is timed;
//! initialisation and calibration are not.
//!
//! The clock is `std::time::Instant` (monotonic) rather than the reference's
//! CLOCK_REALTIME, so a clock step cannot distort a run.

use std::time::Instant;

use crate::{Context, IterResult};

/// A timed run shorter than this many seconds is not a valid result.
pub const MIN_VALID_SECONDS: f64 = 10.0;

/// Timed runs of an automatically sized count, at most (the first included).
pub const MAX_ATTEMPTS: u32 = 3;

/// One timed call of [`Context::iterate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measurement {
    /// Iterations run.
    pub iterations: u32,
    /// Wall-clock time of the run in nanoseconds.
    pub elapsed_ns: u64,
    /// The CRCs the run produced.
    pub result: IterResult,
}

impl Measurement {
    /// The reference's "ticks": whole milliseconds.
    pub fn ticks_ms(&self) -> u64 {
        self.elapsed_ns / 1_000_000
    }

    /// Seconds as the reference computes them: ticks / 1000.
    pub fn seconds(&self) -> f64 {
        self.ticks_ms() as f64 / 1000.0
    }

    /// Iterations per second (ticks-based, as the reference), or None for a run under 1 ms.
    pub fn iterations_per_s(&self) -> Option<f64> {
        let s = self.seconds();
        (s > 0.0).then(|| f64::from(self.iterations) / s)
    }

    /// Whether the run lasted the required 10 seconds.
    pub fn long_enough(&self) -> bool {
        self.seconds() >= MIN_VALID_SECONDS
    }
}

/// Times `ctx.iterate(iterations)`.
pub fn timed_iterate(ctx: &mut Context, iterations: u32) -> Measurement {
    let start = Instant::now();
    let result = ctx.iterate(iterations);
    let elapsed = start.elapsed();
    Measurement {
        iterations,
        elapsed_ns: u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
        result,
    }
}

/// The automatic iteration count and the calibration run that decided it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoIterations {
    /// Iterations to time.
    pub iterations: u32,
    /// The last calibration run (the first one of at least 1 s).
    pub decided_by: Measurement,
}

/// The reference's automatic iteration count: starting from 1, multiply by 10 and time a
/// full run until one takes at least 1 s; then multiply by 1 + 10 / whole seconds, which
/// makes the timed run last roughly 10–20 s.
pub fn auto_iterations(ctx: &mut Context) -> AutoIterations {
    let mut iterations: u32 = 1;
    loop {
        iterations = iterations.saturating_mul(10);
        let m = timed_iterate(ctx, iterations);
        let seconds = m.seconds();
        if seconds >= 1.0 || iterations == u32::MAX {
            let divisor = (seconds as u32).max(1);
            return AutoIterations {
                iterations: iterations.saturating_mul(1 + 10 / divisor),
                decided_by: m,
            };
        }
    }
}

/// A quick estimate of the time one iteration takes, in ns: runs of 1, 2, 4, ... iterations
/// until one lasts at least 10 ms or reaches `up_to` iterations. Used to set deadlines, not
/// as a result.
pub fn estimate_ns_per_iteration(ctx: &mut Context, up_to: u32) -> f64 {
    let mut iterations: u32 = 1;
    loop {
        let m = timed_iterate(ctx, iterations);
        if m.elapsed_ns >= 10_000_000 || iterations >= up_to || iterations >= 1 << 30 {
            return m.elapsed_ns as f64 / f64::from(iterations);
        }
        iterations *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(elapsed_ns: u64) -> Measurement {
        Measurement {
            iterations: 1000,
            elapsed_ns,
            result: IterResult::default(),
        }
    }

    #[test]
    fn ticks_truncate_to_milliseconds() {
        assert_eq!(m(1_999_999).ticks_ms(), 1);
        assert_eq!(m(12_345_678_901).seconds(), 12.345);
        assert_eq!(m(999_999).iterations_per_s(), None);
        assert_eq!(m(2_000_000_000).iterations_per_s(), Some(500.0));
    }

    #[test]
    fn ten_second_rule() {
        assert!(!m(9_999_999_999).long_enough());
        assert!(m(10_000_000_000).long_enough());
    }
}
