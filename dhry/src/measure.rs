//! Timing of the measured loop in the calling thread, and the choice of a run count.
//!
//! Only the loop is timed, as in the reference. The headline figures use the monotonic clock
//! (nanoseconds); the thread's CPU time is taken over the same interval because the reference
//! (v2.1 `times()`) measures user CPU time, and the ratio of the two shows whether the thread
//! had the core to itself. The reference refuses loops under 2 s; v2.2 multiplies the run
//! count by 10 until it gets there. Here a probe ([`probe`], [`calibrate`]) picks the count
//! directly, and [`measure`] repeats a loop that still falls short with a scaled count.
//!
//! The `dhry` binary times its loops in benchmp's children ([`crate::parallel`]) and uses
//! this module for the parent's probes; [`measure`] is the same measurement for a caller
//! that wants it in its own thread.

use std::time::{Duration, Instant};

use nix::time::{ClockId, clock_gettime};
use serde::{Deserialize, Serialize};

use crate::{Dhrystone, Error, Variant};

/// Margin added when scaling a run count to a target time, so the loop lands just above it.
const SCALE_MARGIN: f64 = 1.05;
/// Measured loops tried before settling for one shorter than the target.
const MAX_ATTEMPTS: u32 = 4;
/// Run count of the first calibration step.
const FIRST_CALIBRATION_RUNS: u64 = 1000;

/// One timed call of [`Dhrystone::run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// Runs through Dhrystone in the timed loop.
    pub runs: u64,
    /// Monotonic-clock time of the loop.
    pub elapsed_ns: u64,
    /// The thread's CPU time (user + system) over the same interval.
    pub thread_cpu_ns: u64,
    /// CPU the thread was on when the loop started, if known.
    pub cpu_start: Option<usize>,
    /// CPU the thread was on when the loop ended, if known.
    pub cpu_end: Option<usize>,
}

impl Sample {
    /// Thread CPU time as a percentage of elapsed time (about 100 when nothing else ran).
    pub fn cpu_share_percent(&self) -> f64 {
        if self.elapsed_ns == 0 {
            return 0.0;
        }
        100.0 * self.thread_cpu_ns as f64 / self.elapsed_ns as f64
    }
}

/// How many runs to time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Plan {
    /// Exactly this many runs (must be at least 1).
    Runs(u64),
    /// Enough runs for the loop to last at least this long.
    AtLeast(Duration),
}

/// The outcome of [`measure`]: the final state (for verification and the printout) and its
/// timing.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// The benchmark state after the timed loop, fresh before it.
    pub dhrystone: Dhrystone,
    /// The timed loop.
    pub sample: Sample,
    /// Timed loops made, including ones discarded for falling short of the target.
    pub attempts: u32,
    /// Number of CPUs the thread was allowed to run on (1 when pinned), if known.
    pub allowed_cpus: Option<usize>,
}

/// The calling thread's CPU time in nanoseconds.
pub fn thread_cpu_ns() -> Result<u64, Error> {
    let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map_err(|source| Error::ThreadCpuClock { source })?;
    Ok(t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
}

/// How many CPUs the calling thread may run on, if the system says.
pub fn allowed_cpu_count() -> Option<usize> {
    benchmp::sys::affinity::allowed_cpus().ok().map(|c| c.len())
}

/// Times `runs` more runs of `d`.
pub fn time_runs(d: &mut Dhrystone, runs: u64) -> Result<Sample, Error> {
    let cpu_start = benchmp::sys::affinity::current_cpu();
    let cpu_0 = thread_cpu_ns()?;
    let t_0 = Instant::now();
    d.run(runs);
    let elapsed = t_0.elapsed();
    let cpu_1 = thread_cpu_ns()?;
    let cpu_end = benchmp::sys::affinity::current_cpu();
    Ok(Sample {
        runs,
        elapsed_ns: u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
        thread_cpu_ns: cpu_1.saturating_sub(cpu_0),
        cpu_start,
        cpu_end,
    })
}

/// The run count that should make a loop last `target_ns`, given that `runs` took
/// `elapsed_ns`; never less than `runs + 1` when the loop fell short.
pub fn scale_runs(runs: u64, elapsed_ns: u64, target_ns: u64) -> u64 {
    let per_run_ns = elapsed_ns.max(1) as f64 / runs.max(1) as f64;
    let wanted = (target_ns as f64 / per_run_ns * SCALE_MARGIN).ceil();
    let wanted = if wanted >= u64::MAX as f64 {
        u64::MAX / 2
    } else {
        wanted as u64
    };
    if elapsed_ns < target_ns {
        wanted.max(runs.saturating_add(1))
    } else {
        wanted.max(1)
    }
}

/// The run count that makes a loop last about `target_ns` (no margin), given that `runs`
/// took `elapsed_ns`; at least 1.
pub fn runs_lasting(runs: u64, elapsed_ns: u64, target_ns: u64) -> u64 {
    let per_run_ns = elapsed_ns.max(1) as f64 / runs.max(1) as f64;
    let wanted = (target_ns as f64 / per_run_ns).round();
    if wanted >= u64::MAX as f64 {
        u64::MAX / 2
    } else {
        (wanted as u64).max(1)
    }
}

/// Picks a run count for a loop of at least `target` by timing growing counts on a scratch
/// instance until one lasts a tenth of the target (capped to 1 ms ... 200 ms), then scaling.
pub fn calibrate(target: Duration) -> Result<u64, Error> {
    let target_ns = duration_ns(target)?;
    let probe_ns = (target_ns / 10).clamp(1_000_000, 200_000_000);
    let s = probe(Variant::Strict, Duration::from_nanos(probe_ns))?;
    Ok(scale_runs(s.runs, s.elapsed_ns, target_ns))
}

/// Times growing run counts of `variant` on a scratch instance until one lasts at least
/// `at_least` (1 ms at the least); returns that last timing.
pub fn probe(variant: Variant, at_least: Duration) -> Result<Sample, Error> {
    let probe_ns = duration_ns(at_least)?.max(1_000_000);
    let mut scratch = Dhrystone::with_variant(variant);
    let mut runs = FIRST_CALIBRATION_RUNS;
    loop {
        let s = time_runs(&mut scratch, runs)?;
        if s.elapsed_ns >= probe_ns || runs >= u64::MAX / 100 {
            return Ok(s);
        }
        // Aim past the probe time, but grow at least tenfold when the step was too short to
        // trust (as v2.2 does), and at least double otherwise.
        let factor = if s.elapsed_ns < probe_ns / 100 {
            10.0
        } else {
            (1.5 * probe_ns as f64 / s.elapsed_ns.max(1) as f64).max(2.0)
        };
        runs = (runs as f64 * factor).ceil() as u64;
    }
}

/// Times one fresh [`Dhrystone`] according to `plan`.
pub fn measure(plan: Plan) -> Result<Measurement, Error> {
    let allowed_cpus = allowed_cpu_count();
    match plan {
        Plan::Runs(0) => Err(Error::ZeroRuns),
        Plan::Runs(runs) => {
            let mut d = Dhrystone::new();
            let sample = time_runs(&mut d, runs)?;
            Ok(Measurement {
                dhrystone: d,
                sample,
                attempts: 1,
                allowed_cpus,
            })
        }
        Plan::AtLeast(target) => {
            let target_ns = duration_ns(target)?;
            let mut runs = calibrate(target)?;
            let mut attempts = 0;
            loop {
                attempts += 1;
                let mut d = Dhrystone::new();
                let sample = time_runs(&mut d, runs)?;
                if sample.elapsed_ns >= target_ns || attempts >= MAX_ATTEMPTS {
                    return Ok(Measurement {
                        dhrystone: d,
                        sample,
                        attempts,
                        allowed_cpus,
                    });
                }
                runs = scale_runs(runs, sample.elapsed_ns, target_ns);
            }
        }
    }
}

fn duration_ns(target: Duration) -> Result<u64, Error> {
    match u64::try_from(target.as_nanos()) {
        Ok(ns) if ns > 0 => Ok(ns),
        _ => Err(Error::InvalidTarget {
            seconds: target.as_secs_f64(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_reaches_the_target_with_a_margin() {
        // 1000 runs in 1 ms: 2 s needs 2e6 runs, plus 5 %.
        assert_eq!(scale_runs(1000, 1_000_000, 2_000_000_000), 2_100_000);
        // A loop that fell just short always grows.
        assert_eq!(scale_runs(100, 999, 1000), 106);
        assert!(scale_runs(u64::MAX / 2, 1, u64::MAX) > 0);
        assert_eq!(scale_runs(10, 0, 1), 11);
    }

    #[test]
    fn run_counts_for_a_duration_have_no_margin() {
        assert_eq!(runs_lasting(1000, 1_000_000, 2_000_000_000), 2_000_000);
        assert_eq!(runs_lasting(10, 1_000_000_000, 1), 1);
        assert_eq!(runs_lasting(0, 0, 5), 5);
        assert!(runs_lasting(u64::MAX / 2, 1, u64::MAX) > 0);
    }

    #[test]
    fn a_probe_lasts_at_least_its_time() {
        for variant in [Variant::Strict, Variant::PackInline] {
            let s = probe(variant, Duration::from_millis(2)).unwrap();
            assert!(s.elapsed_ns >= 2_000_000);
            assert!(s.runs >= FIRST_CALIBRATION_RUNS);
        }
        assert!(matches!(
            probe(Variant::Strict, Duration::ZERO),
            Err(Error::InvalidTarget { .. })
        ));
    }

    #[test]
    fn a_fixed_plan_times_exactly_that_many_runs_and_verifies() {
        let m = measure(Plan::Runs(2000)).unwrap();
        assert_eq!(m.sample.runs, 2000);
        assert_eq!(m.dhrystone.runs_done(), 2000);
        assert_eq!(m.dhrystone.verify(), Ok(()));
        assert_eq!(m.attempts, 1);
    }

    #[test]
    fn a_target_plan_reaches_its_target_or_says_how_often_it_tried() {
        let target = Duration::from_millis(20);
        let m = measure(Plan::AtLeast(target)).unwrap();
        assert_eq!(m.dhrystone.verify(), Ok(()));
        assert!(m.sample.runs >= FIRST_CALIBRATION_RUNS);
        assert!(m.sample.elapsed_ns >= 20_000_000 || m.attempts == MAX_ATTEMPTS);
    }

    #[test]
    fn bad_plans_are_errors() {
        assert!(matches!(measure(Plan::Runs(0)), Err(Error::ZeroRuns)));
        assert!(matches!(
            measure(Plan::AtLeast(Duration::ZERO)),
            Err(Error::InvalidTarget { .. })
        ));
    }

    #[test]
    fn the_thread_cpu_clock_advances() {
        let a = thread_cpu_ns().unwrap();
        let mut d = Dhrystone::new();
        d.run(100_000);
        let b = thread_cpu_ns().unwrap();
        assert!(b > a);
    }
}
