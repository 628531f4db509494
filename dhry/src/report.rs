//! What `dhry` reports, built from benchmp's measurement: per-child results and per-cluster
//! and total figures (the JSON report's `extra`), and the reference's text.
//!
//! The text is a pure function of [`Summary`]. With one child it is the reference's v2.1
//! printout followed by this port's figures; with several, the printout once per distinct
//! set of final values, then a table of the children, the clusters and the total. JSON and
//! CSV are benchmp's, shared by every socbench tool; field names carry their units.

use std::fmt::Write as _;

use benchmp::AggregateMode;
use benchmp::cpulist::format_cpu_list;
use benchmp::host::Build;
use benchmp::run::{Sample, who};
use benchmp::topology::Topology;
use serde::Serialize;

use crate::parallel::{LoopDetail, Probe, RunPlan};
use crate::{
    FinalValues, Mismatch, REFERENCE_MIN_SECONDS, VAX_11_780_DHRYSTONES_PER_SECOND, Variant,
    dmips_per_mhz, microseconds_per_run,
};
use benchmp::freq::{ClockSource, CoreClock};

/// Outcome of the section-5 check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// True when every checked variable has its expected value.
    pub passed: bool,
    /// The variables that differ.
    pub mismatches: Vec<Mismatch>,
}

/// One child's timed loop and figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
    /// benchmp's DMIPS figure for it, and the core clock.
    pub fn new(
        child: usize,
        cpu: Option<usize>,
        cluster: usize,
        timed: &Sample,
        detail: &LoopDetail,
        dmips: f64,
        clock: Option<CoreClock>,
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
#[derive(Clone, Debug, PartialEq, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize)]
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
    /// `clock_of` gives the core clock of the CPU a loop ended on.
    pub fn new(
        m: &benchmp::Measurement,
        loops: &[(Sample, LoopDetail)],
        topology: &Topology,
        setup: Setup,
        mut clock_of: impl FnMut(Option<usize>) -> Option<CoreClock>,
    ) -> Summary {
        let children: Vec<ChildResult> = m
            .children
            .iter()
            .zip(loops)
            .map(|(c, (timed, detail))| {
                let figure = m.figures.iter().find(|f| f.index == c.index);
                let dmips = figure.map_or(0.0, |f| f.value);
                let cluster = figure.map_or(0, |f| f.cluster);
                let clock = clock_of(timed.cpu_end.or(c.cpu));
                ChildResult::new(c.index, c.cpu, cluster, timed, detail, dmips, clock)
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
            sum_dmips: m.aggregate.sum,
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

/// Width of the reference's result labels.
const LABEL: usize = 44;

/// The text report: the reference's layout for one child, the per-child table for several.
pub fn render_text(s: &Summary) -> String {
    match s.children.as_slice() {
        [only] => render_one(s, only),
        _ => render_many(s),
    }
}

fn header(o: &mut String, execution_starts: &str) {
    for l in [
        "",
        "Dhrystone Benchmark, Version 2.1 (Language: Rust)",
        "",
        "Program compiled without 'register' attribute",
        "",
        execution_starts,
        "Execution ends",
        "",
    ] {
        o.push_str(l);
        o.push('\n');
    }
}

/// The final values with their "should be" lines (v2.1 layout).
fn final_values_block(o: &mut String, v: &FinalValues) {
    let mut line = |s: &str| {
        o.push_str(s);
        o.push('\n');
    };
    let pair = |name: &str, value: &dyn std::fmt::Display, should: &dyn std::fmt::Display| {
        format!("{name:<21}{value}\n        should be:   {should}")
    };
    line(&pair("Int_Glob:", &v.int_glob, &5));
    line(&pair("Bool_Glob:", &v.bool_glob, &1));
    line(&pair("Ch_1_Glob:", &v.ch_1_glob, &'A'));
    line(&pair("Ch_2_Glob:", &v.ch_2_glob, &'B'));
    line(&pair("Arr_1_Glob[8]:", &v.arr_1_glob_8, &7));
    line(&pair(
        "Arr_2_Glob[8][7]:",
        &v.arr_2_glob_8_7,
        &"Number_Of_Runs + 10",
    ));
    for (title, rec, enum_should, int_should, same) in [
        ("Ptr_Glob->", &v.ptr_glob, 2, 17, ""),
        (
            "Next_Ptr_Glob->",
            &v.next_ptr_glob,
            1,
            18,
            ", same as above",
        ),
    ] {
        line(title);
        line(&pair(
            "  Ptr_Comp:",
            &rec.ptr_comp,
            &format!("(implementation-dependent){same}"),
        ));
        line(&pair("  Discr:", &rec.discr, &0));
        line(&pair("  Enum_Comp:", &rec.enum_comp, &enum_should));
        line(&pair("  Int_Comp:", &rec.int_comp, &int_should));
        line(&pair(
            "  Str_Comp:",
            &rec.str_comp,
            &"DHRYSTONE PROGRAM, SOME STRING",
        ));
    }
    line(&pair("Int_1_Loc:", &v.int_1_loc, &5));
    line(&pair("Int_2_Loc:", &v.int_2_loc, &13));
    line(&pair("Int_3_Loc:", &v.int_3_loc, &7));
    line(&pair("Enum_Loc:", &v.enum_loc, &1));
    line(&pair(
        "Str_1_Loc:",
        &v.str_1_loc,
        &"DHRYSTONE PROGRAM, 1'ST STRING",
    ));
    line(&pair(
        "Str_2_Loc:",
        &v.str_2_loc,
        &"DHRYSTONE PROGRAM, 2'ND STRING",
    ));
}

fn field(label: &str, value: String) -> String {
    format!("{label:<LABEL$}{value}\n")
}

fn compiled_with(b: &Build) -> String {
    format!(
        "{}, {} profile, opt-level {}, {}{}",
        b.rustc,
        b.profile,
        b.opt_level,
        b.target,
        if b.rustflags.is_empty() {
            String::new()
        } else {
            format!(", RUSTFLAGS {}", b.rustflags)
        }
    )
}

/// One child: the reference's printout, then this port's figures.
fn render_one(s: &Summary, r: &ChildResult) -> String {
    let mut o = String::new();
    header(
        &mut o,
        &format!("Execution starts, {} runs through Dhrystone", r.runs),
    );
    o.push_str("Final values of the variables used in the benchmark:\n\n");
    final_values_block(&mut o, &r.final_values);
    o.push('\n');
    if r.reference_min_time_met {
        let _ = writeln!(
            o,
            "{:<LABEL$}{:6.1} ",
            "Microseconds for one run through Dhrystone: ", r.us_per_run
        );
        let _ = writeln!(
            o,
            "{:<LABEL$}{:6.1} ",
            "Dhrystones per Second:", r.dhrystones_per_s
        );
    } else {
        o.push_str("Measured time too small to obtain meaningful results\n");
        o.push_str("Please increase number of runs\n");
    }
    o.push('\n');

    o.push_str("socbench figures (see dhry/README.md):\n");
    o.push_str(&field(
        "Microseconds for one run through Dhrystone:",
        format!("{:.4}", r.us_per_run),
    ));
    o.push_str(&field(
        "Dhrystones per Second:",
        format!("{:.0}", r.dhrystones_per_s),
    ));
    o.push_str(&field(
        "DMIPS (Dhrystones per Second / 1757):",
        format!("{:.1}", r.dmips),
    ));
    o.push_str(&field("DMIPS/MHz:", dmips_per_mhz_text(r)));
    o.push_str(&field("Timed loop:", loop_text(r)));
    o.push_str(&field("Compiled with:", compiled_with(&s.build)));
    o.push_str(&field("Compilation model:", s.compilation_model.clone()));
    o.push_str(&field(
        "Verification:",
        if r.verification.passed {
            "passed (every checked variable has its expected value)".to_string()
        } else {
            format!(
                "FAILED ({} checked variable(s) differ)",
                r.verification.mismatches.len()
            )
        },
    ));
    o
}

fn dmips_per_mhz_text(r: &ChildResult) -> String {
    match (&r.clock, r.dmips_per_mhz) {
        (Some(c), Some(x)) if c.source == ClockSource::CpuinfoEstimate => format!(
            "{x:.3} (estimate: {:.1} MHz from {}; give --mhz for an exact figure)",
            c.mhz,
            c.source_text()
        ),
        (Some(c), Some(x)) => format!("{x:.3} ({:.1} MHz, {})", c.mhz, c.source_text()),
        _ => match r.cpu_end {
            Some(cpu) => format!(
                "unavailable (no clock known for cpu {cpu}: no cpufreq, no \"cpu MHz\"; give --mhz)"
            ),
            None => "unavailable (the CPU the loop ran on is unknown; give --mhz)".to_string(),
        },
    }
}

fn loop_text(r: &ChildResult) -> String {
    let mut t = format!(
        "{} runs in {:.3} s monotonic",
        r.runs,
        r.elapsed_ns as f64 / 1e9
    );
    if let (Some(cpu_ns), Some(share)) = (r.thread_cpu_ns, r.cpu_share_percent) {
        let _ = write!(
            t,
            ", {:.3} s thread CPU ({share:.1} %)",
            cpu_ns as f64 / 1e9
        );
    }
    match (r.cpu_start, r.cpu_end) {
        (Some(a), Some(b)) if a == b => {
            let _ = write!(t, ", cpu {b}");
        }
        (Some(a), Some(b)) => {
            let _ = write!(t, ", cpu {a} -> {b} (migrated; pin with taskset)");
        }
        _ => {}
    }
    match r.allowed_cpus {
        Some(1) => t.push_str(", pinned"),
        Some(n) => {
            let _ = write!(t, ", not pinned ({n} CPUs allowed)");
        }
        None => {}
    }
    t
}

/// `children 0-3 (CPUs 4-7)`, `child 2 (CPU 6)`, `children 0-1 (unpinned)`.
fn who_all(children: &[&ChildResult]) -> String {
    let indices: Vec<usize> = children.iter().map(|c| c.child).collect();
    let cpus: Vec<usize> = children.iter().filter_map(|c| c.cpu).collect();
    let (noun, cpu_noun) = if children.len() == 1 {
        ("child", "CPU")
    } else {
        ("children", "CPUs")
    };
    let place = if cpus.is_empty() {
        "unpinned".to_string()
    } else {
        let mut sorted = cpus.clone();
        sorted.sort_unstable();
        sorted.dedup();
        format!("{cpu_noun} {}", format_cpu_list(&sorted))
    };
    format!("{noun} {} ({place})", format_cpu_list(&indices))
}

/// Several children: the printout once per distinct set of final values (addresses aside),
/// then the per-child table, the clusters and the total.
fn render_many(s: &Summary) -> String {
    let mut o = String::new();
    header(
        &mut o,
        &format!(
            "Execution starts, {} runs through Dhrystone in each of {} children",
            s.runs,
            s.children.len()
        ),
    );
    let mut groups: Vec<(FinalValues, Vec<&ChildResult>)> = Vec::new();
    for c in &s.children {
        let key = c.final_values.without_addresses();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(c),
            None => groups.push((key, vec![c])),
        }
    }
    for (_, members) in &groups {
        let _ = writeln!(
            o,
            "Final values of the variables used in the benchmark ({}):\n",
            who_all(members)
        );
        final_values_block(&mut o, &members[0].final_values);
        o.push('\n');
    }
    if !s.reference_min_time_met {
        o.push_str("Measured time too small to obtain meaningful results\n");
        o.push_str("Please increase number of runs\n\n");
    }

    o.push_str("socbench figures (see dhry/README.md):\n");
    let _ = writeln!(
        o,
        "{:>5}  {:>4}  {:>7}  {:>14}  {:>10}  {:>9}  {:>8}  {:>6}  verification",
        "child", "cpu", "cluster", "Dhrystones/s", "DMIPS", "DMIPS/MHz", "loop s", "CPU %"
    );
    for c in &s.children {
        let per_mhz = match (c.dmips_per_mhz, c.dmips_per_mhz_is_estimate) {
            (Some(x), false) => format!("{x:.3}"),
            (Some(x), true) => format!("~{x:.3}"),
            (None, _) => "-".to_string(),
        };
        let _ = writeln!(
            o,
            "{:>5}  {:>4}  {:>7}  {:>14.0}  {:>10.1}  {:>9}  {:>8.3}  {:>6}  {}",
            c.child,
            c.cpu.map_or("-".to_string(), |x| x.to_string()),
            c.cluster,
            c.dhrystones_per_s,
            c.dmips,
            per_mhz,
            c.elapsed_ns as f64 / 1e9,
            c.cpu_share_percent
                .map_or("-".to_string(), |x| format!("{x:.1}")),
            if c.verification.passed {
                "passed".to_string()
            } else {
                format!("FAILED ({})", c.verification.mismatches.len())
            }
        );
    }
    for c in &s.clusters {
        o.push_str(&field(
            &format!("Cluster {} (CPUs {}):", c.cluster, format_cpu_list(&c.cpus)),
            format!(
                "{:.1} DMIPS, {:.0} Dhrystones/s ({} children, mean {:.1} DMIPS)",
                c.dmips_total, c.dhrystones_per_s_total, c.children, c.dmips_mean
            ),
        ));
    }
    o.push_str(&field(
        &format!("Total (--aggregate {}):", aggregate_name(s.aggregate)),
        format!(
            "{:.1} DMIPS, {:.0} Dhrystones/s (sum {:.1}, lmbench median x children {:.1})",
            s.total_dmips, s.total_dhrystones_per_s, s.sum_dmips, s.lmbench_median_dmips
        ),
    ));
    o.push_str(&field("Clock for DMIPS/MHz:", clocks_text(&s.children)));
    o.push_str(&field("Compiled with:", compiled_with(&s.build)));
    o.push_str(&field("Compilation model:", s.compilation_model.clone()));
    let failed: Vec<&ChildResult> = s
        .children
        .iter()
        .filter(|c| !c.verification.passed)
        .collect();
    o.push_str(&field(
        "Verification:",
        if failed.is_empty() {
            format!(
                "passed ({} children; every checked variable has its expected value)",
                s.children.len()
            )
        } else {
            format!(
                "FAILED in {} of {} children ({})",
                failed.len(),
                s.children.len(),
                who_all(&failed)
            )
        },
    ));
    o
}

fn aggregate_name(mode: AggregateMode) -> &'static str {
    match mode {
        AggregateMode::Cluster => "cluster",
        AggregateMode::Sum => "sum",
        AggregateMode::Median => "median",
    }
}

/// The clock behind the DMIPS/MHz column: one description when every child has the same,
/// else one per child.
fn clocks_text(children: &[ChildResult]) -> String {
    let describe = |c: &CoreClock| {
        let what = CoreClock { cpu: None, ..*c }.source_text();
        if c.is_estimate() {
            format!(
                "~{:.1} MHz (estimate: {what}; give --mhz for an exact figure)",
                c.mhz
            )
        } else {
            format!("{:.1} MHz ({what})", c.mhz)
        }
    };
    let texts: Vec<String> = children
        .iter()
        .map(|c| {
            c.clock
                .as_ref()
                .map_or("unknown (give --mhz)".to_string(), describe)
        })
        .collect();
    if texts.windows(2).all(|w| w[0] == w[1]) {
        texts.into_iter().next().unwrap_or_default()
    } else {
        children
            .iter()
            .zip(texts)
            .map(|(c, t)| format!("child {}: {t}", c.child))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build() -> Build {
        Build {
            rustc: "rustc 1.0.0".to_string(),
            target: "x86_64-unknown-linux-gnu".to_string(),
            profile: "release".to_string(),
            opt_level: "3".to_string(),
            lto: "fat".to_string(),
            codegen_units: "1".to_string(),
            rustflags: String::new(),
            target_features: String::new(),
        }
    }

    /// A child whose state ran 20 times but shows the figures of a 200,000,000-run loop of
    /// 3.51 s on `cpu`.
    fn child(index: usize, cpu: usize, clock: Option<CoreClock>) -> ChildResult {
        let mut b = crate::parallel::LoopBench::new(Variant::Strict, 20);
        benchmp::Benchmark::run(&mut b, 20);
        let mut detail = b.detail();
        detail.thread_cpu_ns = Some(3_500_000_000);
        detail.allowed_cpus = Some(1);
        // Addresses differ between runs; pin them for the snapshot.
        detail.final_values.ptr_glob.ptr_comp = 1234;
        detail.final_values.next_ptr_glob.ptr_comp = 1234;
        detail.final_values.arr_2_glob_8_7 = 200_000_010;
        let timed = Sample {
            iterations: 200_000_000,
            elapsed_ns: 3_510_000_000,
            net_ns: 3_510_000_000,
            start_ns: 0,
            accepted: true,
            cpu_start: Some(cpu),
            cpu_end: Some(cpu),
            detail: serde_json::Value::Null,
        };
        let dmips = crate::dmips(crate::dhrystones_per_second(200_000_000, 3_510_000_000));
        ChildResult::new(index, Some(cpu), 0, &timed, &detail, dmips, clock)
    }

    fn summary(children: Vec<ChildResult>) -> Summary {
        let total: f64 = children.iter().map(|c| c.dmips).sum();
        let n = children.len();
        Summary {
            benchmark: "dhrystone".to_string(),
            version: "2.1".to_string(),
            variant: Variant::Strict,
            calls_per_run: 15,
            compilation_model: "one unit".to_string(),
            plan: RunPlan::AtLeastSeconds(2.0),
            runs: 200_000_000,
            attempts: 1,
            probes: Vec::new(),
            reference_min_time_met: children.iter().all(|c| c.reference_min_time_met),
            verification_passed: children.iter().all(|c| c.verification.passed),
            clusters: vec![ClusterResult {
                cluster: 0,
                cpus: (0..n).collect(),
                children: n,
                dmips_mean: total / n as f64,
                dmips_total: total,
                dhrystones_per_s_total: total * 1757.0,
            }],
            children,
            aggregate: AggregateMode::Cluster,
            total_dmips: total,
            total_dhrystones_per_s: total * 1757.0,
            sum_dmips: total,
            lmbench_median_dmips: total,
            build: build(),
        }
    }

    fn estimate(cpu: usize) -> Option<CoreClock> {
        Some(CoreClock {
            mhz: 2200.0,
            source: ClockSource::CpuinfoEstimate,
            cpu: Some(cpu),
        })
    }

    const SNAPSHOT: &str = "
Dhrystone Benchmark, Version 2.1 (Language: Rust)

Program compiled without 'register' attribute

Execution starts, 200000000 runs through Dhrystone
Execution ends

Final values of the variables used in the benchmark:

Int_Glob:            5
        should be:   5
Bool_Glob:           1
        should be:   1
Ch_1_Glob:           A
        should be:   A
Ch_2_Glob:           B
        should be:   B
Arr_1_Glob[8]:       7
        should be:   7
Arr_2_Glob[8][7]:    200000010
        should be:   Number_Of_Runs + 10
Ptr_Glob->
  Ptr_Comp:          1234
        should be:   (implementation-dependent)
  Discr:             0
        should be:   0
  Enum_Comp:         2
        should be:   2
  Int_Comp:          17
        should be:   17
  Str_Comp:          DHRYSTONE PROGRAM, SOME STRING
        should be:   DHRYSTONE PROGRAM, SOME STRING
Next_Ptr_Glob->
  Ptr_Comp:          1234
        should be:   (implementation-dependent), same as above
  Discr:             0
        should be:   0
  Enum_Comp:         1
        should be:   1
  Int_Comp:          18
        should be:   18
  Str_Comp:          DHRYSTONE PROGRAM, SOME STRING
        should be:   DHRYSTONE PROGRAM, SOME STRING
Int_1_Loc:           5
        should be:   5
Int_2_Loc:           13
        should be:   13
Int_3_Loc:           7
        should be:   7
Enum_Loc:            1
        should be:   1
Str_1_Loc:           DHRYSTONE PROGRAM, 1'ST STRING
        should be:   DHRYSTONE PROGRAM, 1'ST STRING
Str_2_Loc:           DHRYSTONE PROGRAM, 2'ND STRING
        should be:   DHRYSTONE PROGRAM, 2'ND STRING

Microseconds for one run through Dhrystone:    0.0 
Dhrystones per Second:                      56980057.0 

socbench figures (see dhry/README.md):
Microseconds for one run through Dhrystone: 0.0175
Dhrystones per Second:                      56980057
DMIPS (Dhrystones per Second / 1757):       32430.3
DMIPS/MHz:                                  14.741 (estimate: 2200.0 MHz from /proc/cpuinfo \"cpu MHz\" of CPU 1; no cpufreq; give --mhz for an exact figure)
Timed loop:                                 200000000 runs in 3.510 s monotonic, 3.500 s thread CPU (99.7 %), cpu 1, pinned
Compiled with:                              rustc 1.0.0, release profile, opt-level 3, x86_64-unknown-linux-gnu
Compilation model:                          one unit
Verification:                               passed (every checked variable has its expected value)
";

    #[test]
    fn text_snapshot() {
        let s = summary(vec![child(0, 1, estimate(1))]);
        assert_eq!(render_text(&s), SNAPSHOT);
    }

    #[test]
    fn text_without_a_clock_or_enough_time() {
        let mut s = summary(vec![child(0, 1, None)]);
        s.children[0].reference_min_time_met = false;
        let t = render_text(&s);
        assert!(t.contains("Measured time too small to obtain meaningful results\n"));
        assert!(t.contains("DMIPS/MHz:                                  unavailable"));
    }

    #[test]
    fn failed_verification_is_reported() {
        let mut s = summary(vec![child(0, 1, None)]);
        s.children[0].verification = Verification {
            passed: false,
            mismatches: vec![Mismatch {
                name: "Int_Glob".to_string(),
                actual: "4".to_string(),
                expected: "5".to_string(),
            }],
        };
        s.verification_passed = false;
        assert!(render_text(&s).contains("FAILED (1 checked variable(s) differ)"));
        assert_eq!(
            s.verification_errors(),
            vec!["child 0 (CPU 1): Int_Glob is 4, should be 5".to_string()]
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
    fn several_children_share_one_printout_and_a_table() {
        let s = summary(vec![child(0, 0, estimate(0)), child(1, 1, estimate(1))]);
        let t = render_text(&s);
        assert!(t.contains(
            "Execution starts, 200000000 runs through Dhrystone in each of 2 children\n"
        ));
        assert!(t.contains(
            "Final values of the variables used in the benchmark (children 0-1 (CPUs 0-1)):\n"
        ));
        assert_eq!(t.matches("        should be:   ").count(), 22);
        assert!(t.contains(
            "    0     0        0        56980057     32430.3    ~14.741     3.510    99.7  passed\n"
        ));
        assert!(t.contains(
            "Cluster 0 (CPUs 0-1):                       64860.6 DMIPS, 113960114 Dhrystones/s (2 children, mean 32430.3 DMIPS)\n"
        ), "{t}");
        assert!(t.contains("Total (--aggregate cluster):                64860.6 DMIPS"));
        assert!(t.contains(
            "Clock for DMIPS/MHz:                        ~2200.0 MHz (estimate: /proc/cpuinfo \"cpu MHz\"; no cpufreq; give --mhz for an exact figure)\n"
        ), "{t}");
        assert!(t.contains("Verification:                               passed (2 children;"));
        assert!(!t.contains("Microseconds for one run through Dhrystone:    0.0"));
    }

    #[test]
    fn children_with_different_values_get_a_printout_each() {
        let mut s = summary(vec![
            child(0, 0, None),
            child(1, 1, None),
            child(2, 2, None),
        ]);
        s.children[1].final_values.int_glob = 4;
        s.children[1].verification.passed = false;
        // Different addresses alone do not split the printout.
        s.children[2].final_values.ptr_glob.ptr_comp = 99;
        s.children[2].final_values.next_ptr_glob.ptr_comp = 99;
        let t = render_text(&s);
        assert!(t.contains("benchmark (children 0,2 (CPUs 0,2)):\n"), "{t}");
        assert!(t.contains("benchmark (child 1 (CPU 1)):\n"), "{t}");
        assert_eq!(t.matches("        should be:   ").count(), 44);
        assert!(t.contains("FAILED in 1 of 3 children (child 1 (CPU 1))"));
        assert!(t.contains("Clock for DMIPS/MHz:                        unknown (give --mhz)\n"));
        assert_eq!(
            s.verification_errors(),
            vec!["child 1 (CPU 1): its final values did not verify".to_string()]
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
