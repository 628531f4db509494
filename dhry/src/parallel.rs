//! Dhrystone through benchmp: one copy per forked, pinned child, all starting together.
//!
//! - [`LoopBench`] is what each child runs. benchmp calls it with the fixed run count for the
//!   one timed loop, and with single runs to keep the core busy before the common start and
//!   after the child has finished; those calls go to a spare instance, so the timed loop
//!   starts from `main`'s initial state and its final values are exactly those of the
//!   reference after that many runs.
//! - [`sizing_cpus`] (with benchmp's `with_pinned`) and [`size_runs`] let the parent choose the run count before
//!   forking, on the children's own CPUs (one per cluster), as the reference's run count is
//!   chosen before its loop.
//! - [`loop_results`] reads each child's timed loop and its [`LoopDetail`] back from the
//!   measurement.

use std::time::Duration;

use benchmp::Benchmark;
use benchmp::run::Sample;
use benchmp::topology::Topology;
use serde::{Deserialize, Serialize};

use crate::measure::{self, allowed_cpu_count, scale_runs, thread_cpu_ns};
use crate::report::LoopDetail;
use crate::{Dhrystone, Error, Variant};

/// One child's benchmark: an instance for the timed loop and a spare one for benchmp's
/// keep-busy calls.
///
/// Every timed call starts from the state as set up (a copy is restored if an earlier timed
/// call used it), so the timed loop ends with exactly the reference's values for its count.
#[derive(Debug)]
pub struct LoopBench {
    count: u64,
    timed: Dhrystone,
    as_set_up: Dhrystone,
    timed_used: bool,
    spare: Dhrystone,
    thread_cpu_ns: Option<u64>,
    allowed_cpus: Option<usize>,
}

impl LoopBench {
    /// Sets up the instances for a timed loop of `runs` runs. Call it in the child, after
    /// pinning, so the state is allocated and first touched on the child's own core.
    pub fn new(variant: Variant, runs: u64) -> LoopBench {
        let timed = Dhrystone::with_variant(variant);
        LoopBench {
            count: runs,
            as_set_up: timed.clone(),
            spare: timed.clone(),
            timed,
            timed_used: false,
            thread_cpu_ns: None,
            allowed_cpus: allowed_cpu_count(),
        }
    }

    /// The record of the timed loop (meaningful once it ran).
    pub fn detail(&self) -> LoopDetail {
        let mismatches = self.timed.verify().err().unwrap_or_default();
        LoopDetail {
            variant: self.timed.variant(),
            runs: self.count,
            runs_done: self.timed.runs_done(),
            keep_busy_runs: self.spare.runs_done(),
            thread_cpu_ns: self.thread_cpu_ns,
            allowed_cpus: self.allowed_cpus,
            passed: mismatches.is_empty(),
            mismatches,
            final_values: self.timed.final_values(),
            checksum: self.timed.checksum(),
        }
    }
}

impl Benchmark for LoopBench {
    type Sample = LoopDetail;
    type Child = ();

    fn run(&mut self, iterations: u64) -> u64 {
        if self.timed_used {
            self.timed.clone_from(&self.as_set_up);
        }
        self.timed_used = true;
        let cpu_0 = thread_cpu_ns().ok();
        self.timed.run(iterations);
        let cpu_1 = thread_cpu_ns().ok();
        self.thread_cpu_ns = cpu_0.zip(cpu_1).map(|(a, b)| b.saturating_sub(a));
        self.timed.checksum()
    }

    /// benchmp's untimed load before the common start and after the loop: the spare instance.
    fn keep_busy(&mut self, iterations: u64) -> u64 {
        self.spare.run(iterations);
        self.spare.runs_done()
    }

    /// The verification and final values of the loop just timed.
    fn sample_detail(&mut self) -> Option<LoopDetail> {
        Some(self.detail())
    }
}

/// Largest accepted `--runs` (about a day at 10^10 runs per second).
pub const MAX_RUNS: u64 = 1_000_000_000_000_000;
/// Shortest accepted `--time` and `--duration`, in seconds: the probe that sizes the run
/// count lasts at least this long, so a shorter target cannot be sized.
pub const MIN_SECONDS: f64 = 0.001;
/// Longest accepted `--time` and `--duration`, in seconds.
pub const MAX_SECONDS: f64 = 86_400.0;

/// Parses `--runs`: a whole number of runs from 1 to [`MAX_RUNS`].
pub fn parse_runs(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) if n <= MAX_RUNS => Ok(n),
        Ok(_) => Err(format!("must be at most {MAX_RUNS}")),
        Err(_) => Err("not a whole number of runs".to_string()),
    }
}

/// Parses `--time` and `--duration`: seconds from [`MIN_SECONDS`] to [`MAX_SECONDS`].
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if (MIN_SECONDS..=MAX_SECONDS).contains(&x) => Ok(x),
        Ok(_) => Err(format!(
            "must be at least {MIN_SECONDS} and at most {MAX_SECONDS} seconds"
        )),
        Err(_) => Err("not a number of seconds".to_string()),
    }
}

/// How long the timed loop should be.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunPlan {
    /// At least this many seconds on every child (`--time`): the count is sized on the
    /// fastest CPU of the run, and the loop is repeated with a larger count if a child still
    /// falls short.
    AtLeastSeconds(f64),
    /// About this many seconds, all children loaded together (`--duration`): the count is
    /// sized on the slowest CPU of the run, so no child's loop runs much past it, and faster
    /// children are kept busy by benchmp until the last one ends.
    AboutSeconds(f64),
    /// Exactly this many runs (`--runs`).
    Runs(u64),
}

/// A timed probe of the parent on one CPU, used to size the run count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// CPU the parent was pinned to (`None`: not pinned, as the children).
    pub cpu: Option<usize>,
    /// Runs timed.
    pub runs: u64,
    /// Their monotonic-clock time.
    pub elapsed_ns: u64,
}

impl Probe {
    /// Nanoseconds per run.
    pub fn ns_per_run(&self) -> f64 {
        self.elapsed_ns.max(1) as f64 / self.runs.max(1) as f64
    }
}

/// The CPUs to probe: the first CPU of each cluster the children are pinned to, and `None`
/// (wherever the parent runs) if any child is unpinned.
pub fn sizing_cpus(topology: &Topology, placement: &[Option<usize>]) -> Vec<Option<usize>> {
    let mut seen_clusters = Vec::new();
    let mut cpus = Vec::new();
    for &cpu in placement {
        match cpu {
            Some(c) => {
                let cluster = topology.cluster_of(c);
                if !seen_clusters.contains(&cluster) {
                    seen_clusters.push(cluster);
                    cpus.push(Some(c));
                }
            }
            None if !cpus.contains(&None) => cpus.push(None),
            None => {}
        }
    }
    cpus
}

/// How long the parent's probe should last for `plan`: a tenth of the target, between 1 ms
/// and 200 ms (enough for a phone's governor to raise the clock), or 5 ms for `--runs`, whose
/// probe only bounds how long the children may stay silent.
pub fn probe_time(plan: RunPlan) -> Duration {
    let ms = |s: f64| Duration::from_secs_f64((s / 10.0).clamp(0.001, 0.2));
    match plan {
        RunPlan::AtLeastSeconds(s) | RunPlan::AboutSeconds(s) => ms(s),
        RunPlan::Runs(_) => Duration::from_millis(5),
    }
}

/// Times growing run counts of `variant` on the calling CPU until one lasts `probe`.
pub fn probe_here(variant: Variant, cpu: Option<usize>, probe: Duration) -> Result<Probe, Error> {
    let s = measure::probe(variant, probe)?;
    Ok(Probe {
        cpu,
        runs: s.runs,
        elapsed_ns: s.elapsed_ns,
    })
}

/// The run count for `plan` from the probes: for `--time` enough for the fastest CPU to
/// reach the target (plus 5 %), for `--duration` what the slowest CPU does in that time.
pub fn size_runs(plan: RunPlan, probes: &[Probe]) -> u64 {
    let target_ns = |s: f64| (s * 1e9) as u64;
    match plan {
        RunPlan::Runs(n) => n,
        RunPlan::AtLeastSeconds(s) => probes
            .iter()
            .map(|p| scale_runs(p.runs, p.elapsed_ns, target_ns(s)))
            .max()
            .unwrap_or(1),
        RunPlan::AboutSeconds(s) => probes
            .iter()
            .map(|p| measure::runs_lasting(p.runs, p.elapsed_ns, target_ns(s)))
            .min()
            .unwrap_or(1),
    }
}

/// Seconds the slowest probed CPU needs for `runs` runs (0 without probes).
pub fn expected_seconds(runs: u64, probes: &[Probe]) -> f64 {
    probes
        .iter()
        .map(|p| p.ns_per_run() * runs as f64 / 1e9)
        .fold(0.0, f64::max)
}

/// Each child's timed loop (benchmp's sample) and its [`LoopDetail`], in child order.
pub fn loop_results(
    m: &benchmp::Measurement<crate::report::Dhry>,
) -> Result<Vec<(Sample<LoopDetail>, LoopDetail)>, Error> {
    m.children
        .iter()
        .map(|c| {
            let (s, detail) = c.timed_detail()?;
            Ok((s.clone(), detail.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_values_in_range_only() {
        assert_eq!(parse_runs(" 20 "), Ok(20));
        assert_eq!(parse_runs("0"), Err("must be at least 1".to_string()));
        assert!(parse_runs(&(MAX_RUNS + 1).to_string()).is_err());
        assert!(parse_runs("-1").is_err());
        assert_eq!(parse_seconds("2"), Ok(2.0));
        assert_eq!(parse_seconds("0.001"), Ok(MIN_SECONDS));
        assert!(parse_seconds("0").is_err());
        assert!(parse_seconds("86401").is_err());
        assert!(parse_seconds("NaN").is_err());
        assert_eq!(
            parse_seconds("x"),
            Err("not a number of seconds".to_string())
        );
    }

    /// benchmp's order for a fixed count: keep-busy calls, the timed call, its detail, then
    /// more keep-busy calls.
    fn timed_detail(variant: Variant, count: u64, busy_before: usize) -> LoopDetail {
        let mut b = LoopBench::new(variant, count);
        for _ in 0..busy_before {
            b.keep_busy(1);
        }
        b.run(count);
        let detail: LoopDetail = b.sample_detail().expect("a record of the timed loop");
        for _ in 0..3 {
            b.keep_busy(count);
        }
        detail
    }

    #[test]
    fn keep_busy_calls_do_not_change_the_timed_loop() {
        for variant in [Variant::Strict, Variant::PackInline] {
            for count in [1u64, 2, 10, 1000] {
                for busy in [0, 1, 5] {
                    let d = timed_detail(variant, count, busy);
                    assert!(d.passed, "{variant} {count} {busy}: {:?}", d.mismatches);
                    assert_eq!(d.variant, variant);
                    assert_eq!(d.runs, count);
                    assert_eq!(d.runs_done, count);
                    assert_eq!(d.final_values.arr_2_glob_8_7, count as i32 + 10);
                    let mut fresh = Dhrystone::with_variant(variant);
                    fresh.run(count);
                    assert_eq!(d.checksum, fresh.checksum());
                    assert_eq!(d.keep_busy_runs, busy as u64, "{count} {busy}");
                }
            }
        }
    }

    #[test]
    fn the_detail_before_any_timed_loop_fails() {
        let b = LoopBench::new(Variant::Strict, 100);
        let d = b.detail();
        assert!(!d.passed);
        assert_eq!(d.runs_done, 0);
        assert!(!d.mismatches.is_empty());
    }

    #[test]
    fn run_counts_follow_the_plan() {
        // Two clusters: 10 ns and 40 ns per run.
        let probes = [
            Probe {
                cpu: Some(0),
                runs: 1_000_000,
                elapsed_ns: 10_000_000,
            },
            Probe {
                cpu: Some(4),
                runs: 1_000_000,
                elapsed_ns: 40_000_000,
            },
        ];
        // --time 2: the fast CPU needs 2e8 runs, plus 5 %.
        assert_eq!(
            size_runs(RunPlan::AtLeastSeconds(2.0), &probes),
            210_000_000
        );
        // --duration 2: what the slow CPU does in 2 s.
        assert_eq!(size_runs(RunPlan::AboutSeconds(2.0), &probes), 50_000_000);
        assert_eq!(size_runs(RunPlan::Runs(7), &probes), 7);
        assert!((expected_seconds(50_000_000, &probes) - 2.0).abs() < 1e-9);
        assert_eq!(expected_seconds(5, &[]), 0.0);
    }

    #[test]
    fn probes_last_a_tenth_of_the_target_within_bounds() {
        assert_eq!(
            probe_time(RunPlan::AtLeastSeconds(2.0)),
            Duration::from_millis(200)
        );
        assert_eq!(
            probe_time(RunPlan::AboutSeconds(600.0)),
            Duration::from_millis(200)
        );
        assert_eq!(
            probe_time(RunPlan::AtLeastSeconds(0.05)),
            Duration::from_millis(5)
        );
        assert_eq!(
            probe_time(RunPlan::AtLeastSeconds(0.001)),
            Duration::from_millis(1)
        );
        assert_eq!(probe_time(RunPlan::Runs(9)), Duration::from_millis(5));
    }

    #[test]
    fn one_probe_per_cluster_and_one_unpinned() {
        // benchmp's captured tree of an 8-core phone: clusters 0-1 | 2-4 | 5-6 | 7.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../benchmp/tests/fixtures/phone8/sys");
        let t = Topology::from_root(&root).unwrap();
        let all: Vec<Option<usize>> = (0..8).map(Some).collect();
        assert_eq!(
            sizing_cpus(&t, &all),
            vec![Some(0), Some(2), Some(5), Some(7)]
        );
        assert_eq!(
            sizing_cpus(&t, &[Some(6), Some(3), Some(5)]),
            vec![Some(6), Some(3)]
        );
        assert_eq!(sizing_cpus(&t, &[None, None]), vec![None]);
    }
}
