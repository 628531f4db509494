//! The data `dhry` reports: each child's timed loop and figures, the clusters' and the total
//! figures, built from benchmp's measurement. It is the JSON report's `extra` and what the text
//! ([`super::text`]) renders; field names carry their units.

use benchmp::AggregateMode;
use benchmp::freq::CoreClock;
use benchmp::host::Build;
use benchmp::run::{Sample, who};
use benchmp::topology::Topology;
use serde::{Deserialize, Serialize};

use super::LoopDetail;
use crate::parallel::{Probe, RunPlan};
use crate::{
    FinalValues, Mismatch, REFERENCE_MIN_SECONDS, VAX_11_780_DHRYSTONES_PER_SECOND, Variant,
    dmips_per_mhz, microseconds_per_run,
};

/// Outcome of the section-5 check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// True when every checked variable has its expected value.
    pub passed: bool,
    /// The variables that differ.
    pub mismatches: Vec<Mismatch>,
}

/// One child's timed loop and figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChildResult {
    /// Child number.
    pub child: usize,
    /// CPU it was pinned to (`None`: not pinned).
    pub cpu: Option<usize>,
    /// Cluster of that CPU in benchmp's topology.
    pub cluster: usize,
    /// Runs through Dhrystone in the timed loop.
    pub runs: u64,
    /// Monotonic-clock time of the loop.
    pub elapsed_ns: u64,
    /// The same less the cost of reading the clock (what the figures divide by).
    pub net_ns: u64,
    /// The thread's CPU time over the loop, if known.
    pub thread_cpu_ns: Option<u64>,
    /// Thread CPU time as a percentage of elapsed time, if known.
    pub cpu_share_percent: Option<f64>,
    /// CPU at the start of the loop, if known.
    pub cpu_start: Option<usize>,
    /// CPU at the end of the loop, if known.
    pub cpu_end: Option<usize>,
    /// CPUs the child was allowed on (1 when pinned), if known.
    pub allowed_cpus: Option<usize>,
    /// Microseconds for one run through Dhrystone.
    pub us_per_run: f64,
    /// Dhrystones per second.
    pub dhrystones_per_s: f64,
    /// DMIPS (Dhrystones per second / 1757).
    pub dmips: f64,
    /// The core clock used for DMIPS/MHz, if any.
    pub clock: Option<CoreClock>,
    /// DMIPS per MHz, when a clock is known.
    pub dmips_per_mhz: Option<f64>,
    /// True when `dmips_per_mhz` rests on an estimated clock.
    pub dmips_per_mhz_is_estimate: bool,
    /// Why there is no clock, when the child's clock probe could not say one (its chains
    /// disagreed, or the clock was implausible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_unknown: Option<String>,
    /// The loop lasted at least the 2 s the reference requires.
    pub reference_min_time_met: bool,
    /// The section-5 check of this child's final values.
    pub verification: Verification,
    /// The printed final values (in the JSON report they are the sample's `detail`).
    #[serde(skip)]
    pub final_values: FinalValues,
}

impl ChildResult {
    /// A child's result from its timed loop (benchmp's sample and the benchmark's detail),
    /// benchmp's DMIPS figure for it, and the core clock or why it is unknown.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        child: usize,
        cpu: Option<usize>,
        cluster: usize,
        timed: &Sample<LoopDetail>,
        detail: &LoopDetail,
        dmips: f64,
        clock: Option<CoreClock>,
        clock_unknown: Option<&str>,
    ) -> ChildResult {
        let cpu_share_percent = detail
            .thread_cpu_ns
            .map(|c| 100.0 * c as f64 / timed.elapsed_ns.max(1) as f64);
        ChildResult {
            child,
            cpu,
            cluster,
            runs: timed.iterations,
            elapsed_ns: timed.elapsed_ns,
            net_ns: timed.net_ns,
            thread_cpu_ns: detail.thread_cpu_ns,
            cpu_share_percent,
            cpu_start: timed.cpu_start,
            cpu_end: timed.cpu_end,
            allowed_cpus: detail.allowed_cpus,
            us_per_run: microseconds_per_run(timed.iterations, timed.net_ns),
            dhrystones_per_s: dmips * VAX_11_780_DHRYSTONES_PER_SECOND,
            dmips,
            dmips_per_mhz: clock.as_ref().map(|c| dmips_per_mhz(dmips, c.mhz)),
            dmips_per_mhz_is_estimate: clock.as_ref().is_some_and(CoreClock::is_estimate),
            clock_unknown: clock_unknown.filter(|_| clock.is_none()).map(String::from),
            clock,
            reference_min_time_met: timed.elapsed_ns as f64 >= REFERENCE_MIN_SECONDS * 1e9,
            verification: Verification {
                passed: detail.passed,
                mismatches: detail.mismatches.clone(),
            },
            final_values: detail.final_values.clone(),
        }
    }

    /// `child 1 (CPU 3)`, as benchmp names children.
    pub fn who(&self) -> String {
        who(self.child, self.cpu)
    }
}

/// One cluster's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterResult {
    /// Cluster index in benchmp's topology.
    pub cluster: usize,
    /// Its CPUs.
    pub cpus: Vec<usize>,
    /// Children that ran on it.
    pub children: usize,
    /// Mean DMIPS of those children.
    pub dmips_mean: f64,
    /// The cluster's DMIPS: the mean × the children.
    pub dmips_total: f64,
    /// The same in Dhrystones per second.
    pub dhrystones_per_s_total: f64,
}

/// Everything `dhry` adds to benchmp's report (its `extra`), and what the text shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Always "dhrystone".
    pub benchmark: String,
    /// Dhrystone version reproduced ("2.1").
    pub version: String,
    /// The build variant measured.
    pub variant: Variant,
    /// Calls to `Proc_*`/`Func_*` per run in that variant (15 as written, 9 with gcc -O2's
    /// inlining).
    pub calls_per_run: u32,
    /// How the two packs were compiled (see README, "Ground rules").
    pub compilation_model: String,
    /// How the loop length was chosen.
    pub plan: RunPlan,
    /// Runs through Dhrystone in each child's timed loop.
    pub runs: u64,
    /// Measurements made to get every child's loop to the target time (`--time` only).
    pub attempts: u32,
    /// The parent's timed probes that sized the run count (last attempt).
    pub probes: Vec<Probe>,
    /// Each child's result, in child order.
    pub children: Vec<ChildResult>,
    /// Per-cluster figures.
    pub clusters: Vec<ClusterResult>,
    /// Which system figure `total_dmips` is (`--aggregate`).
    pub aggregate: AggregateMode,
    /// System DMIPS by that rule.
    pub total_dmips: f64,
    /// The same in Dhrystones per second.
    pub total_dhrystones_per_s: f64,
    /// The children's DMIPS added.
    pub sum_dmips: f64,
    /// lmbench's figure: the median child sample × the children.
    pub lmbench_median_dmips: f64,
    /// Every child's loop lasted at least 2 s.
    pub reference_min_time_met: bool,
    /// Every child's final values were as expected.
    pub verification_passed: bool,
    /// How the binary was compiled (in the JSON report as its `build`).
    #[serde(skip)]
    pub build: Build,
}

/// What the parent chose and knows besides the measurement.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The build variant measured.
    pub variant: Variant,
    /// How the loop length was chosen.
    pub plan: RunPlan,
    /// Measurements made so far.
    pub attempts: u32,
    /// The probes that sized the run count.
    pub probes: Vec<Probe>,
    /// The system figure to show.
    pub aggregate: AggregateMode,
    /// How the binary was compiled.
    pub build: Build,
}

impl Summary {
    /// Builds the summary of a measurement whose children ran [`crate::parallel::LoopBench`]:
    /// `loops` are their timed loops in child order ([`crate::parallel::loop_results`]) and
    /// `clock_of` gives the core clock of the CPU a loop ended on, from the clock (MHz) its
    /// child measured if any, with its source.
    pub fn new(
        m: &benchmp::Measurement<super::Dhry>,
        loops: &[(Sample<LoopDetail>, LoopDetail)],
        topology: &Topology,
        setup: Setup,
        mut clock_of: impl FnMut(
            Option<usize>,
            Option<(f64, benchmp::freq::ClockSource)>,
        ) -> Option<CoreClock>,
    ) -> Summary {
        let children: Vec<ChildResult> = m
            .children
            .iter()
            .zip(loops)
            .map(|(c, (timed, detail))| {
                let figure = m.figures.iter().find(|f| f.index == c.index);
                let dmips = figure.map_or(0.0, |f| f.value);
                let cluster = figure.map_or(0, |f| f.cluster);
                let clock = clock_of(timed.cpu_end.or(c.cpu), c.measured_clock());
                ChildResult::new(
                    c.index,
                    c.cpu,
                    cluster,
                    timed,
                    detail,
                    dmips,
                    clock,
                    c.clock_unknown(),
                )
            })
            .collect();
        let clusters = m
            .aggregate
            .per_cluster
            .iter()
            .map(|c| ClusterResult {
                cluster: c.cluster,
                cpus: topology
                    .clusters
                    .get(c.cluster)
                    .map(|cl| cl.cpus.clone())
                    .unwrap_or_default(),
                children: c.children,
                dmips_mean: c.mean,
                dmips_total: c.total,
                dhrystones_per_s_total: c.total * VAX_11_780_DHRYSTONES_PER_SECOND,
            })
            .collect();
        let total_dmips = m.aggregate.get(setup.aggregate);
        Summary {
            benchmark: "dhrystone".to_string(),
            version: "2.1".to_string(),
            variant: setup.variant,
            calls_per_run: setup.variant.calls_per_run(),
            compilation_model: setup.variant.compilation_model(),
            plan: setup.plan,
            runs: loops.first().map_or(0, |(s, _)| s.iterations),
            attempts: setup.attempts,
            probes: setup.probes,
            reference_min_time_met: children.iter().all(|c| c.reference_min_time_met),
            verification_passed: children.iter().all(|c| c.verification.passed),
            children,
            clusters,
            aggregate: setup.aggregate,
            total_dmips,
            total_dhrystones_per_s: total_dmips * VAX_11_780_DHRYSTONES_PER_SECOND,
            // A throughput: the cluster figure is the children's sum.
            sum_dmips: m.aggregate.cluster,
            lmbench_median_dmips: m.aggregate.median,
            build: setup.build,
        }
    }

    /// One line per differing variable of every child that failed verification, naming the
    /// child and its CPU.
    pub fn verification_errors(&self) -> Vec<String> {
        self.children
            .iter()
            .filter(|c| !c.verification.passed)
            .flat_map(|c| {
                let who = c.who();
                let lines: Vec<String> = if c.verification.mismatches.is_empty() {
                    vec![format!("{who}: its final values did not verify")]
                } else {
                    c.verification
                        .mismatches
                        .iter()
                        .map(|m| format!("{who}: {m}"))
                        .collect()
                };
                lines
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::report::fixtures::{child, failed_int_glob, summary};

    #[test]
    fn failed_verification_is_named_and_recorded() {
        let mut s = summary(vec![child(0, 1, None), child(1, 2, None)]);
        s.children[0].verification = failed_int_glob();
        // A child that failed without a named variable is still named.
        s.children[1].verification.passed = false;
        s.verification_passed = false;
        assert_eq!(
            s.verification_errors(),
            vec![
                "child 0 (CPU 1): Int_Glob is 4, should be 5".to_string(),
                "child 1 (CPU 2): its final values did not verify".to_string()
            ]
        );
        let j = serde_json::to_value(&s).unwrap();
        assert_eq!(j["verification_passed"], false);
        assert_eq!(j["children"][0]["verification"]["passed"], false);
        assert_eq!(
            j["children"][0]["verification"]["mismatches"][0]["name"],
            "Int_Glob"
        );
    }

    #[test]
    fn summary_fields_carry_units() {
        let s = summary(vec![child(0, 1, None)]);
        let j = serde_json::to_value(&s).unwrap();
        assert_eq!(j["benchmark"], "dhrystone");
        assert_eq!(j["variant"], "strict");
        assert_eq!(j["plan"]["at_least_seconds"], 2.0);
        assert_eq!(j["children"][0]["elapsed_ns"], 3_510_000_000u64);
        assert_eq!(j["children"][0]["runs"], 200_000_000);
        assert!(j["children"][0].get("final_values").is_none());
        assert!(j.get("build").is_none());
        assert!((j["total_dmips"].as_f64().unwrap() - 32_430.31).abs() < 0.01);
        let dps = j["children"][0]["dhrystones_per_s"].as_f64().unwrap();
        assert!((dps / 1757.0 - j["children"][0]["dmips"].as_f64().unwrap()).abs() < 1e-9);
    }
}
