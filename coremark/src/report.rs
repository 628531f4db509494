//! The run report: one serde struct built from the contexts' timed runs, and its text.
//! The text keeps the reference's lines and layout (so existing log parsers read it) but
//! its final line names itself `CoreMark-compatible 1.0`, never a CoreMark score. JSON and
//! CSV come from benchmp's report, which carries this one as its `extra` part.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::iterate::IterResult;
use crate::timing::{MIN_VALID_SECONDS, Measurement};
use crate::validate::{KnownRun, Validation, Workload, validate};
use crate::{Context, Seeds};

/// The framework report's data for the CoreMark-compatible run: each measurement's seeds,
/// sizes and count, each context's CRCs for its timed interval, and this crate's [`Report`]
/// (the reference's report model) as the tool section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreMarkData;

impl benchmp::ToolData for CoreMarkData {
    type Params = Params;
    type Sample = IterResult;
    type Child = ();
    type Extra = Report;
}

/// The framework's report of a run.
pub type FrameworkReport = benchmp::Report<CoreMarkData>;

/// Parameters of one measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// First seed.
    pub seed1: i16,
    /// Second seed.
    pub seed2: i16,
    /// Third seed.
    pub seed3: i16,
    /// Data size of the three workloads together, bytes.
    pub total_size_bytes: u32,
    /// Data size of each workload, bytes.
    pub size_per_algorithm_bytes: u32,
    /// Iterations each context runs.
    pub iterations_per_context: u32,
}

/// Label of the score line and of reports: a CoreMark-compatible port, not CoreMark.
pub const SCORE_LABEL: &str = "CoreMark-compatible 1.0";

/// The reference's name for contexts run as forked processes (its `PARALLEL_METHOD`).
pub const PARALLEL_METHOD: &str = "Fork";

/// How this binary was compiled, as the reference's "Compiler version" and "Compiler flags"
/// lines show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// Compiler name and version, e.g. "rustc 1.95.0".
    pub compiler_version: String,
    /// Profile and code-generation settings, e.g. "profile=release opt-level=3 lto=fat ...".
    pub compiler_flags: String,
}

impl BuildInfo {
    /// The settings this binary was built with, as benchmp's build script recorded them.
    pub fn current() -> BuildInfo {
        BuildInfo::from_build(&benchmp::host::Build::current())
    }

    /// The two lines' values for a build: rustc's name and version without its commit, and
    /// benchmp's flags line.
    pub fn from_build(build: &benchmp::host::Build) -> BuildInfo {
        let version: Vec<&str> = build.rustc.split_whitespace().take(2).collect();
        BuildInfo {
            compiler_version: version.join(" "),
            compiler_flags: build.flags_line(),
        }
    }
}

/// One context's timed run, as its child reported it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextRun {
    /// CPU the context's process was pinned to (`None`: unpinned).
    pub cpu: Option<usize>,
    /// Its timed run and CRCs.
    pub run: Measurement,
}

/// Overall outcome, as the reference's final message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Known seeds, all CRCs right, every context ran long enough.
    Validated,
    /// A CRC mismatch or a context that ran under 10 s.
    ErrorsDetected,
    /// Unknown seeds and no other error: nothing to compare against.
    CannotValidate,
}

/// Outcome of one context's CRC check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextValidation {
    /// Known seeds and every CRC right.
    Passed,
    /// Known seeds and at least one CRC wrong (see the report's mismatches).
    Failed,
    /// Seeds the reference has no CRCs for.
    UnknownSeeds,
}

/// CRCs, timing and validation of one context.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ContextResult {
    /// Context number (the child's index; 0 for a single-context run).
    pub context: u32,
    /// CPU its process was pinned to (null: unpinned).
    pub cpu: Option<usize>,
    /// Wall-clock time of its timed run.
    pub elapsed_ns: u64,
    /// The same in whole milliseconds.
    pub ticks_ms: u64,
    /// ticks_ms / 1000.
    pub seconds: f64,
    /// Its own iterations / seconds; absent for a run under 1 ms.
    pub iterations_per_s: Option<f64>,
    /// Whether it ran under `min_valid_seconds`.
    pub short_run: bool,
    /// Its CRCs, with the reference's names (`crcfinal`, `crclist`, `crcmatrix`, `crcstate`).
    #[serde(flatten)]
    pub crcs: IterResult,
    /// The CRC check of this context.
    pub validation: ContextValidation,
}

/// A CRC that differs from the known-good value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrcMismatch {
    /// Context number.
    pub context: u32,
    /// Workload whose CRC differs.
    pub workload: Workload,
    /// CRC this run produced.
    #[serde(with = "crate::hex")]
    pub got: u16,
    /// Known-good CRC.
    #[serde(with = "crate::hex")]
    pub expected: u16,
}

/// Everything one run reports. Field names carry units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Tool name.
    pub tool: String,
    /// What the figures are: [`SCORE_LABEL`].
    pub label: String,
    /// The standard run the seeds and size identify, if any.
    pub run_type: Option<KnownRun>,
    /// Seeds after the reference's shortcuts.
    pub seeds: Seeds,
    /// Requested total data size.
    pub total_size_bytes: u32,
    /// Data size per workload (the reference's "CoreMark Size").
    pub size_per_algorithm_bytes: u32,
    /// Contexts run, one per process.
    pub contexts: u32,
    /// [`PARALLEL_METHOD`] when more than one context ran, else null.
    pub parallel_method: Option<String>,
    /// Iterations run by each context.
    pub iterations_per_context: u32,
    /// Iterations of all contexts together.
    pub iterations: u64,
    /// The longest context's timed run (the reference times all contexts together, from
    /// the common start until the last one finishes).
    pub elapsed_ns: u64,
    /// The same in whole milliseconds (the reference's "Total ticks").
    pub ticks_ms: u64,
    /// ticks_ms / 1000, as the reference's "Total time (secs)".
    pub seconds: f64,
    /// iterations / seconds (all contexts); absent for a run under 1 ms.
    pub iterations_per_s: Option<f64>,
    /// Shortest timed run that gives a valid result.
    pub min_valid_seconds: f64,
    /// Compiler and version.
    pub compiler_version: String,
    /// Compiler settings.
    pub compiler_flags: String,
    /// Where the data lives.
    pub memory_location: String,
    /// CRC of seeds and size.
    #[serde(with = "crate::hex")]
    pub seedcrc: u16,
    /// CRCs, time and validation of each context.
    pub results: Vec<ContextResult>,
    /// CRCs that differ from the known-good values.
    pub mismatches: Vec<CrcMismatch>,
    /// Whether any context ran under `min_valid_seconds`.
    pub short_run: bool,
    /// Overall outcome.
    pub verdict: Verdict,
    /// The CoreMark-compatible score (iterations/s), only for an error-free 2K performance run.
    pub score: Option<f64>,
}

impl Report {
    /// Builds the report of a run whose contexts each ran `iterations_per_context`
    /// iterations, validating every context's CRCs. Time is the longest context's.
    pub fn new(
        ctx: &Context,
        iterations_per_context: u32,
        runs: &[ContextRun],
        build: &BuildInfo,
    ) -> Report {
        let contexts = runs.len() as u32;
        let longest = Measurement {
            iterations: iterations_per_context,
            elapsed_ns: runs.iter().map(|r| r.run.elapsed_ns).max().unwrap_or(0),
            result: Default::default(),
        };
        let seedcrc = ctx.seedcrc();
        let run_type = KnownRun::from_seedcrc(seedcrc);
        let (results, mismatches) = check_contexts(seedcrc, runs);
        let short_run = results.is_empty() || results.iter().any(|r| r.short_run);
        let verdict = if short_run || !mismatches.is_empty() {
            Verdict::ErrorsDetected
        } else if run_type.is_none() {
            Verdict::CannotValidate
        } else {
            Verdict::Validated
        };
        let iterations = u64::from(contexts) * u64::from(iterations_per_context);
        let seconds = longest.seconds();
        let iterations_per_s = (seconds > 0.0).then(|| iterations as f64 / seconds);
        let score = match (verdict, run_type) {
            (Verdict::Validated, Some(run)) if run.is_score_run() => iterations_per_s,
            _ => None,
        };
        Report {
            tool: "coremark".to_string(),
            label: SCORE_LABEL.to_string(),
            run_type,
            seeds: ctx.seeds(),
            total_size_bytes: ctx.total_size(),
            size_per_algorithm_bytes: ctx.size_per_algorithm(),
            contexts,
            parallel_method: (contexts > 1).then(|| PARALLEL_METHOD.to_string()),
            iterations_per_context,
            iterations,
            elapsed_ns: longest.elapsed_ns,
            ticks_ms: longest.ticks_ms(),
            seconds,
            iterations_per_s,
            min_valid_seconds: MIN_VALID_SECONDS,
            compiler_version: build.compiler_version.clone(),
            compiler_flags: build.compiler_flags.clone(),
            memory_location: "Heap".to_string(),
            seedcrc,
            results,
            mismatches,
            short_run,
            verdict,
            score,
        }
    }

    /// Whether the result is not valid: a CRC mismatch or a context that ran under 10 s
    /// (exit status 1).
    pub fn has_errors(&self) -> bool {
        self.verdict == Verdict::ErrorsDetected
    }

    /// Why the result is not valid, one phrase per problem (empty when it is valid).
    pub fn problems(&self) -> Vec<String> {
        let mut problems: Vec<String> = self
            .mismatches
            .iter()
            .map(|m| {
                format!(
                    "[{}] {} crc {:#06x} should be {:#06x}",
                    m.context,
                    m.workload.name(),
                    m.got,
                    m.expected
                )
            })
            .collect();
        let short: Vec<&ContextResult> = self.results.iter().filter(|r| r.short_run).collect();
        match short[..] {
            [] if self.results.is_empty() => problems.push("no context reported".into()),
            [] => {}
            [r] if self.results.len() == 1 => problems.push(format!(
                "the timed run lasted {:.3} s, at least {} s are needed for a valid result",
                r.seconds, self.min_valid_seconds
            )),
            _ => {
                let each: Vec<String> = short
                    .iter()
                    .map(|r| {
                        let cpu = r.cpu.map_or("unpinned".into(), |c| format!("CPU {c}"));
                        format!("[{}] ({cpu}) {:.3} s", r.context, r.seconds)
                    })
                    .collect();
                problems.push(format!(
                    "timed runs under {} s, the least for a valid result: {}",
                    self.min_valid_seconds,
                    each.join(", ")
                ));
            }
        }
        problems
    }

    /// The reference-compatible text report.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let w = &mut out;
        if let Some(run) = self.run_type {
            let _ = writeln!(w, "{} run parameters for coremark.", run.name());
        }
        for m in &self.mismatches {
            let _ = writeln!(
                w,
                "[{}]ERROR! {} crc 0x{:04x} - should be 0x{:04x}",
                m.context,
                m.workload.name(),
                m.got,
                m.expected
            );
        }
        let _ = writeln!(w, "CoreMark Size    : {}", self.size_per_algorithm_bytes);
        let _ = writeln!(w, "Total ticks      : {}", self.ticks_ms);
        let _ = writeln!(w, "Total time (secs): {:.6}", self.seconds);
        if let Some(ips) = self.iterations_per_s {
            let _ = writeln!(w, "Iterations/Sec   : {ips:.6}");
        }
        if self.short_run {
            let _ = writeln!(
                w,
                "ERROR! Must execute for at least 10 secs for a valid result!"
            );
        }
        let _ = writeln!(w, "Iterations       : {}", self.iterations);
        let _ = writeln!(w, "Compiler version : {}", self.compiler_version);
        let _ = writeln!(w, "Compiler flags   : {}", self.compiler_flags);
        if let Some(method) = &self.parallel_method {
            let _ = writeln!(w, "Parallel {method} : {}", self.contexts);
        }
        let _ = writeln!(w, "Memory location  : {}", self.memory_location);
        let _ = writeln!(w, "seedcrc          : 0x{:04x}", self.seedcrc);
        for r in &self.results {
            let _ = writeln!(w, "[{}]crclist       : 0x{:04x}", r.context, r.crcs.crclist);
        }
        for r in &self.results {
            let _ = writeln!(
                w,
                "[{}]crcmatrix     : 0x{:04x}",
                r.context, r.crcs.crcmatrix
            );
        }
        for r in &self.results {
            let _ = writeln!(
                w,
                "[{}]crcstate      : 0x{:04x}",
                r.context, r.crcs.crcstate
            );
        }
        for r in &self.results {
            let _ = writeln!(w, "[{}]crcfinal      : 0x{:04x}", r.context, r.crcs.crc);
        }
        if self.verdict == Verdict::Validated {
            let _ = writeln!(
                w,
                "Correct operation validated. See README.md for run and reporting rules."
            );
            if let Some(score) = self.score {
                let _ = write!(
                    w,
                    "{SCORE_LABEL} : {score:.6} / {} {} / {}",
                    self.compiler_version, self.compiler_flags, self.memory_location
                );
                if let Some(method) = &self.parallel_method {
                    let _ = write!(w, " / {}:{method}", self.contexts);
                }
                let _ = writeln!(w);
            }
        }
        if self.has_errors() {
            let _ = writeln!(w, "Errors detected");
        }
        if self.run_type.is_none() {
            let _ = writeln!(
                w,
                "Cannot validate operation for these seed values, please compare with results on a known platform."
            );
        }
        out
    }

    /// The reference text followed, for more than one context, by socbench's figures from
    /// benchmp's report: each child's own iterations/s with its CPU and cluster, each
    /// cluster's total and the system figures. Those lines are indented and use no
    /// ` : ` separator, so parsers of the reference's lines skip them.
    pub fn text_with_figures(
        &self,
        framework: &FrameworkReport,
        mode: benchmp::AggregateMode,
    ) -> String {
        let mut out = self.text();
        if self.contexts > 1
            && let Some(m) = framework.measurements.first()
        {
            out.push_str("socbench figures, each context timed on its own (iterations/s):\n");
            for line in benchmp::export::cluster_lines(framework, m, mode) {
                out.push_str(&line);
                out.push('\n');
            }
        }
        out
    }
}

/// Each context's CRCs, time and validation, and the CRCs that differ from the known-good
/// values of the run `seedcrc` identifies.
fn check_contexts(seedcrc: u16, runs: &[ContextRun]) -> (Vec<ContextResult>, Vec<CrcMismatch>) {
    let mut mismatches = Vec::new();
    let mut results = Vec::with_capacity(runs.len());
    for (i, r) in runs.iter().enumerate() {
        let crcs = r.run.result;
        let validation = match validate(seedcrc, &crcs) {
            Validation::UnknownSeeds => ContextValidation::UnknownSeeds,
            Validation::Checked { mismatches: m, .. } if m.is_empty() => ContextValidation::Passed,
            Validation::Checked { mismatches: m, .. } => {
                mismatches.extend(m.into_iter().map(|m| CrcMismatch {
                    context: i as u32,
                    workload: m.workload,
                    got: m.got,
                    expected: m.expected,
                }));
                ContextValidation::Failed
            }
        };
        results.push(ContextResult {
            context: i as u32,
            cpu: r.cpu,
            elapsed_ns: r.run.elapsed_ns,
            ticks_ms: r.run.ticks_ms(),
            seconds: r.run.seconds(),
            iterations_per_s: r.run.iterations_per_s(),
            short_run: !r.run.long_enough(),
            crcs,
            validation,
        });
    }
    (results, mismatches)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IterResult;

    fn build() -> BuildInfo {
        BuildInfo {
            compiler_version: "rustc 1.95.0".into(),
            compiler_flags: "profile=release opt-level=3".into(),
        }
    }

    #[test]
    fn build_lines_come_from_benchmp() {
        let b = benchmp::host::Build {
            rustc: "rustc 1.95.0 (59807616e 2026-04-14)".into(),
            target: "x86_64-unknown-linux-gnu".into(),
            profile: "release".into(),
            opt_level: "3".into(),
            lto: "fat".into(),
            codegen_units: "1".into(),
            rustflags: "-C target-cpu=native".into(),
            target_features: String::new(),
            cargo_profile: "release".into(),
            debug_assertions: false,
        };
        let info = BuildInfo::from_build(&b);
        assert_eq!(info.compiler_version, "rustc 1.95.0");
        assert_eq!(
            info.compiler_flags,
            "profile=release opt-level=3 lto=fat codegen-units=1 target-cpu=native \
             RUSTFLAGS=\"-C target-cpu=native\""
        );
    }

    fn perf_result() -> IterResult {
        IterResult {
            crc: 0x65c5,
            crclist: 0xe714,
            crcmatrix: 0x1fd7,
            crcstate: 0x8e3a,
        }
    }

    /// A context on `cpu` that ran `iterations` in `elapsed_ns` with CRCs `result`.
    fn run(cpu: usize, iterations: u32, elapsed_ns: u64, result: IterResult) -> ContextRun {
        ContextRun {
            cpu: Some(cpu),
            run: Measurement {
                iterations,
                elapsed_ns,
                result,
            },
        }
    }

    #[test]
    fn text_snapshot_valid_2k_performance_run() {
        let ctx = Context::new(Seeds::PERFORMANCE, 2000).unwrap();
        let runs = [run(0, 400_000, 13_308_400_000, perf_result())];
        let report = Report::new(&ctx, 400_000, &runs, &build());
        let expected = "\
2K performance run parameters for coremark.
CoreMark Size    : 666
Total ticks      : 13308
Total time (secs): 13.308000
Iterations/Sec   : 30057.108506
Iterations       : 400000
Compiler version : rustc 1.95.0
Compiler flags   : profile=release opt-level=3
Memory location  : Heap
seedcrc          : 0xe9f5
[0]crclist       : 0xe714
[0]crcmatrix     : 0x1fd7
[0]crcstate      : 0x8e3a
[0]crcfinal      : 0x65c5
Correct operation validated. See README.md for run and reporting rules.
CoreMark-compatible 1.0 : 30057.108506 / rustc 1.95.0 profile=release opt-level=3 / Heap
";
        assert_eq!(report.text(), expected);
        assert_eq!(report.verdict, Verdict::Validated);
        assert!(!report.has_errors());
        assert!(report.problems().is_empty());
        assert_eq!(report.parallel_method, None);
    }

    #[test]
    fn text_snapshot_two_forked_contexts() {
        // Time and score follow the longest context: 2 × 400000 / 13.5 s.
        let ctx = Context::new(Seeds::PERFORMANCE, 2000).unwrap();
        let runs = [
            run(0, 400_000, 13_308_400_000, perf_result()),
            run(1, 400_000, 13_500_999_999, perf_result()),
        ];
        let report = Report::new(&ctx, 400_000, &runs, &build());
        let expected = "\
2K performance run parameters for coremark.
CoreMark Size    : 666
Total ticks      : 13500
Total time (secs): 13.500000
Iterations/Sec   : 59259.259259
Iterations       : 800000
Compiler version : rustc 1.95.0
Compiler flags   : profile=release opt-level=3
Parallel Fork : 2
Memory location  : Heap
seedcrc          : 0xe9f5
[0]crclist       : 0xe714
[1]crclist       : 0xe714
[0]crcmatrix     : 0x1fd7
[1]crcmatrix     : 0x1fd7
[0]crcstate      : 0x8e3a
[1]crcstate      : 0x8e3a
[0]crcfinal      : 0x65c5
[1]crcfinal      : 0x65c5
Correct operation validated. See README.md for run and reporting rules.
CoreMark-compatible 1.0 : 59259.259259 / rustc 1.95.0 profile=release opt-level=3 / Heap / 2:Fork
";
        assert_eq!(report.text(), expected);
        assert_eq!(report.elapsed_ns, 13_500_999_999);
        assert_eq!(report.results[1].cpu, Some(1));
        assert_eq!(report.results[0].ticks_ms, 13308);
        assert_eq!(report.results[1].validation, ContextValidation::Passed);
    }

    #[test]
    fn one_bad_context_is_named_and_fails_the_run() {
        let ctx = Context::new(Seeds::PERFORMANCE, 2000).unwrap();
        let mut bad = perf_result();
        bad.crcmatrix = 0x1234;
        let runs = [
            run(0, 400_000, 13_000_000_000, perf_result()),
            run(1, 400_000, 13_000_000_000, bad),
        ];
        let report = Report::new(&ctx, 400_000, &runs, &build());
        let text = report.text();
        assert!(text.starts_with(
            "2K performance run parameters for coremark.\n[1]ERROR! matrix crc 0x1234 - should be 0x1fd7\nCoreMark Size"
        ));
        assert!(text.ends_with("[1]crcfinal      : 0x65c5\nErrors detected\n"));
        assert!(!text.contains(SCORE_LABEL));
        assert_eq!(report.results[0].validation, ContextValidation::Passed);
        assert_eq!(report.results[1].validation, ContextValidation::Failed);
        assert_eq!(
            report.problems(),
            ["[1] matrix crc 0x1234 should be 0x1fd7"]
        );
        assert_eq!(report.score, None);
    }

    #[test]
    fn every_context_must_last_ten_seconds() {
        // The longest context passes the 10 s rule, the other does not: not valid.
        let ctx = Context::new(Seeds::PERFORMANCE, 2000).unwrap();
        let runs = [
            run(2, 1000, 12_000_000_000, perf_result()),
            run(3, 1000, 9_999_000_000, perf_result()),
        ];
        let report = Report::new(&ctx, 1000, &runs, &build());
        assert!(report.short_run);
        assert!(!report.results[0].short_run);
        assert!(report.results[1].short_run);
        assert!(report.has_errors());
        assert!(
            report
                .text()
                .contains("ERROR! Must execute for at least 10 secs for a valid result!\n")
        );
        assert_eq!(
            report.problems(),
            ["timed runs under 10 s, the least for a valid result: [1] (CPU 3) 9.999 s"]
        );
    }

    #[test]
    fn text_snapshot_short_run_with_wrong_crc() {
        let ctx = Context::new(Seeds::VALIDATION, 2000).unwrap();
        let mut r = perf_result();
        r.crclist = 0xe3c1;
        r.crcmatrix = 0x0747;
        let report = Report::new(&ctx, 10, &[run(0, 10, 1_500_000, r)], &build());
        let expected = "\
2K validation run parameters for coremark.
[0]ERROR! state crc 0x8e3a - should be 0x8d84
CoreMark Size    : 666
Total ticks      : 1
Total time (secs): 0.001000
Iterations/Sec   : 10000.000000
ERROR! Must execute for at least 10 secs for a valid result!
Iterations       : 10
Compiler version : rustc 1.95.0
Compiler flags   : profile=release opt-level=3
Memory location  : Heap
seedcrc          : 0x18f2
[0]crclist       : 0xe3c1
[0]crcmatrix     : 0x0747
[0]crcstate      : 0x8e3a
[0]crcfinal      : 0x65c5
Errors detected
";
        assert_eq!(report.text(), expected);
        assert!(report.has_errors());
        assert_eq!(report.score, None);
        assert_eq!(
            report.problems(),
            [
                "[0] state crc 0x8e3a should be 0x8d84",
                "the timed run lasted 0.001 s, at least 10 s are needed for a valid result"
            ]
        );
    }

    #[test]
    fn unknown_seeds_never_claim_validation() {
        let ctx = Context::new(Seeds::new(1, 1, 1), 2000).unwrap();
        // Long run: cannot validate, no error.
        let long = Report::new(
            &ctx,
            5,
            &[run(0, 5, 11_000_000_000, perf_result())],
            &build(),
        );
        assert_eq!(long.verdict, Verdict::CannotValidate);
        assert_eq!(long.results[0].validation, ContextValidation::UnknownSeeds);
        assert!(long.text().ends_with(
            "Cannot validate operation for these seed values, please compare with results on a known platform.\n"
        ));
        assert!(!long.text().contains("Correct operation validated"));
        // Short run: the reference would print "validated" here; this reports both problems.
        let short = Report::new(&ctx, 5, &[run(0, 5, 5_000_000, perf_result())], &build());
        let text = short.text();
        assert_eq!(short.verdict, Verdict::ErrorsDetected);
        assert!(!text.contains("Correct operation validated"));
        assert!(text.contains("Errors detected\nCannot validate operation"));
        assert!(!text.contains(" run parameters for coremark."));
    }

    #[test]
    fn only_the_2k_performance_run_prints_a_score() {
        let ctx = Context::new(Seeds::VALIDATION, 2000).unwrap();
        let r = IterResult {
            crc: 0,
            crclist: 0xe3c1,
            crcmatrix: 0x0747,
            crcstate: 0x8d84,
        };
        let report = Report::new(&ctx, 1000, &[run(0, 1000, 12_000_000_000, r)], &build());
        assert_eq!(report.verdict, Verdict::Validated);
        assert_eq!(report.score, None);
        assert!(!report.text().contains(SCORE_LABEL));
    }

    #[test]
    fn no_context_is_an_error() {
        let ctx = Context::new(Seeds::PERFORMANCE, 2000).unwrap();
        let report = Report::new(&ctx, 1000, &[], &build());
        assert!(report.has_errors());
        assert_eq!(report.problems(), ["no context reported"]);
    }

    #[test]
    fn json_carries_units_and_hex_crcs() {
        let ctx = Context::new(Seeds::PERFORMANCE, 2000).unwrap();
        let runs = [run(0, 400_000, 13_308_400_000, perf_result())];
        let report = Report::new(&ctx, 400_000, &runs, &build());
        let v = serde_json::to_value(&report).unwrap();
        assert_eq!(v["elapsed_ns"], 13_308_400_000u64);
        assert_eq!(v["seedcrc"], "0xe9f5");
        assert_eq!(v["results"][0]["crclist"], "0xe714");
        assert_eq!(v["results"][0]["crcfinal"], "0x65c5");
        assert_eq!(v["results"][0]["cpu"], 0);
        assert_eq!(v["results"][0]["validation"], "passed");
        assert_eq!(v["run_type"], "performance_2k");
        assert_eq!(v["verdict"], "validated");
        assert_eq!(v["seeds"]["seed3"], 0x66);
        assert!(v["parallel_method"].is_null());
        assert!((v["score"].as_f64().unwrap() - 30057.108506).abs() < 1e-3);
    }
}
