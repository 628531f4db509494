//! The run report: one serde struct built from measurements, and three pure exporters.
//! The text exporter keeps the reference's lines and layout (so existing log parsers read
//! it) but its final line names itself `CoreMark-compatible 1.0`, never a CoreMark score.

use std::fmt::Write as _;

use serde::{Serialize, Serializer};

use crate::timing::{MIN_VALID_SECONDS, Measurement};
use crate::validate::{KnownRun, Validation, Workload, validate};
use crate::{Context, Seeds};

/// Label of the score line and of reports: a CoreMark-compatible port, not CoreMark.
pub const SCORE_LABEL: &str = "CoreMark-compatible 1.0";

/// How this binary was compiled, captured by the build script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildInfo {
    /// Compiler name and version, e.g. "rustc 1.95.0".
    pub compiler_version: String,
    /// Profile and code-generation settings, e.g. "profile=release opt-level=3 lto=fat ...".
    pub compiler_flags: String,
}

impl BuildInfo {
    /// The settings this crate was built with.
    pub fn current() -> BuildInfo {
        BuildInfo {
            compiler_version: env!("COREMARK_RUSTC_VERSION").to_owned(),
            compiler_flags: env!("COREMARK_BUILD_FLAGS").to_owned(),
        }
    }
}

/// Overall outcome, as the reference's final message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Known seeds, all CRCs right, run long enough.
    Validated,
    /// A CRC mismatch or a run under 10 s.
    ErrorsDetected,
    /// Unknown seeds and no other error: nothing to compare against.
    CannotValidate,
}

/// CRCs of one context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ContextCrcs {
    /// Context number (0 for a single-context run).
    pub context: u32,
    /// CRC after the first iteration.
    #[serde(serialize_with = "hex")]
    pub crclist: u16,
    /// First matrix workload result.
    #[serde(serialize_with = "hex")]
    pub crcmatrix: u16,
    /// First state workload result.
    #[serde(serialize_with = "hex")]
    pub crcstate: u16,
    /// CRC after the last iteration (depends on the iteration count).
    #[serde(serialize_with = "hex")]
    pub crcfinal: u16,
}

/// A CRC that differs from the known-good value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CrcMismatch {
    /// Context number.
    pub context: u32,
    /// Workload whose CRC differs.
    pub workload: Workload,
    /// CRC this run produced.
    #[serde(serialize_with = "hex")]
    pub got: u16,
    /// Known-good CRC.
    #[serde(serialize_with = "hex")]
    pub expected: u16,
}

/// Everything one run reports. Field names carry units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Tool name.
    pub tool: &'static str,
    /// What the figures are: [`SCORE_LABEL`].
    pub label: &'static str,
    /// The standard run the seeds and size identify, if any.
    pub run_type: Option<KnownRun>,
    /// Seeds after the reference's shortcuts.
    pub seeds: Seeds,
    /// Requested total data size.
    pub total_size_bytes: u32,
    /// Data size per workload (the reference's "CoreMark Size").
    pub size_per_algorithm_bytes: u32,
    /// Contexts run (1 until multi-context runs exist).
    pub contexts: u32,
    /// Iterations run by each context.
    pub iterations_per_context: u32,
    /// Iterations of all contexts together.
    pub iterations: u64,
    /// Wall-clock time of the timed run.
    pub elapsed_ns: u64,
    /// The same in whole milliseconds (the reference's "Total ticks").
    pub ticks_ms: u64,
    /// ticks_ms / 1000, as the reference's "Total time (secs)".
    pub seconds: f64,
    /// iterations / seconds; absent for a run under 1 ms.
    pub iterations_per_s: Option<f64>,
    /// Shortest timed run that gives a valid result.
    pub min_valid_seconds: f64,
    /// Compiler and version.
    pub compiler_version: String,
    /// Compiler settings.
    pub compiler_flags: String,
    /// Where the data lives.
    pub memory_location: &'static str,
    /// CRC of seeds and size.
    #[serde(serialize_with = "hex")]
    pub seedcrc: u16,
    /// CRCs of each context.
    pub results: Vec<ContextCrcs>,
    /// CRCs that differ from the known-good values.
    pub mismatches: Vec<CrcMismatch>,
    /// Whether the timed run was shorter than `min_valid_seconds`.
    pub short_run: bool,
    /// Overall outcome.
    pub verdict: Verdict,
    /// The CoreMark-compatible score (iterations/s), only for an error-free 2K performance run.
    pub score: Option<f64>,
}

fn hex<S: Serializer>(value: &u16, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{value:#06x}"))
}

impl Report {
    /// Builds the report of a run whose contexts all ran `iterations_per_context`
    /// iterations in `elapsed_ns` (timed together), given each context's CRCs.
    pub fn new(
        ctx: &Context,
        iterations_per_context: u32,
        elapsed_ns: u64,
        results: &[crate::IterResult],
        build: &BuildInfo,
    ) -> Report {
        let contexts = results.len() as u32;
        let timing = Measurement {
            iterations: iterations_per_context,
            elapsed_ns,
            result: results.first().copied().unwrap_or_default(),
        };
        let seedcrc = ctx.seedcrc();
        let mut run_type = None;
        let mut mismatches = Vec::new();
        for (i, r) in results.iter().enumerate() {
            if let Validation::Checked { run, mismatches: m } = validate(seedcrc, r) {
                run_type = Some(run);
                mismatches.extend(m.into_iter().map(|m| CrcMismatch {
                    context: i as u32,
                    workload: m.workload,
                    got: m.got,
                    expected: m.expected,
                }));
            }
        }
        let run_type = run_type.or_else(|| KnownRun::from_seedcrc(seedcrc));
        let short_run = !timing.long_enough();
        let verdict = if short_run || !mismatches.is_empty() {
            Verdict::ErrorsDetected
        } else if run_type.is_none() {
            Verdict::CannotValidate
        } else {
            Verdict::Validated
        };
        let iterations = u64::from(contexts) * u64::from(iterations_per_context);
        let seconds = timing.seconds();
        let iterations_per_s = (seconds > 0.0).then(|| iterations as f64 / seconds);
        let score = match (verdict, run_type) {
            (Verdict::Validated, Some(run)) if run.is_score_run() => iterations_per_s,
            _ => None,
        };
        Report {
            tool: "coremark",
            label: SCORE_LABEL,
            run_type,
            seeds: ctx.seeds(),
            total_size_bytes: ctx.total_size(),
            size_per_algorithm_bytes: ctx.size_per_algorithm(),
            contexts,
            iterations_per_context,
            iterations,
            elapsed_ns,
            ticks_ms: timing.ticks_ms(),
            seconds,
            iterations_per_s,
            min_valid_seconds: MIN_VALID_SECONDS,
            compiler_version: build.compiler_version.clone(),
            compiler_flags: build.compiler_flags.clone(),
            memory_location: "Heap",
            seedcrc,
            results: results
                .iter()
                .enumerate()
                .map(|(i, r)| ContextCrcs {
                    context: i as u32,
                    crclist: r.crclist,
                    crcmatrix: r.crcmatrix,
                    crcstate: r.crcstate,
                    crcfinal: r.crc,
                })
                .collect(),
            mismatches,
            short_run,
            verdict,
            score,
        }
    }

    /// Whether the result is not valid: a CRC mismatch or a run under 10 s (exit status 1).
    pub fn has_errors(&self) -> bool {
        self.verdict == Verdict::ErrorsDetected
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
        let _ = writeln!(w, "Memory location  : {}", self.memory_location);
        let _ = writeln!(w, "seedcrc          : 0x{:04x}", self.seedcrc);
        for r in &self.results {
            let _ = writeln!(w, "[{}]crclist       : 0x{:04x}", r.context, r.crclist);
        }
        for r in &self.results {
            let _ = writeln!(w, "[{}]crcmatrix     : 0x{:04x}", r.context, r.crcmatrix);
        }
        for r in &self.results {
            let _ = writeln!(w, "[{}]crcstate      : 0x{:04x}", r.context, r.crcstate);
        }
        for r in &self.results {
            let _ = writeln!(w, "[{}]crcfinal      : 0x{:04x}", r.context, r.crcfinal);
        }
        if self.verdict == Verdict::Validated {
            let _ = writeln!(
                w,
                "Correct operation validated. See README.md for run and reporting rules."
            );
            if let Some(score) = self.score {
                let _ = writeln!(
                    w,
                    "{SCORE_LABEL} : {score:.6} / {} {} / {}",
                    self.compiler_version, self.compiler_flags, self.memory_location
                );
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

    /// The report as pretty-printed JSON (one object, trailing newline).
    pub fn json(&self) -> String {
        // A struct of plain fields always serialises.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// The report as CSV: a header and one row (context 0's CRCs).
    pub fn csv(&self) -> String {
        let first = self.results.first();
        let crc = |f: fn(&ContextCrcs) -> u16| first.map(|c| format!("{:#06x}", f(c)));
        let row = CsvRow {
            tool: self.tool,
            label: self.label,
            run_type: self.run_type.map(KnownRun::name),
            seed1: self.seeds.seed1,
            seed2: self.seeds.seed2,
            seed3: self.seeds.seed3,
            total_size_bytes: self.total_size_bytes,
            size_per_algorithm_bytes: self.size_per_algorithm_bytes,
            contexts: self.contexts,
            iterations: self.iterations,
            elapsed_ns: self.elapsed_ns,
            ticks_ms: self.ticks_ms,
            iterations_per_s: self.iterations_per_s,
            seedcrc: format!("{:#06x}", self.seedcrc),
            crclist: crc(|c| c.crclist),
            crcmatrix: crc(|c| c.crcmatrix),
            crcstate: crc(|c| c.crcstate),
            crcfinal: crc(|c| c.crcfinal),
            verdict: self.verdict,
            score: self.score,
            compiler_version: &self.compiler_version,
            compiler_flags: &self.compiler_flags,
            memory_location: self.memory_location,
        };
        let mut w = csv::Writer::from_writer(Vec::new());
        // Serialising plain fields into memory cannot fail.
        let _ = w.serialize(row);
        let bytes = w.into_inner().unwrap_or_default();
        String::from_utf8(bytes).unwrap_or_default()
    }
}

#[derive(Serialize)]
struct CsvRow<'a> {
    tool: &'a str,
    label: &'a str,
    run_type: Option<&'a str>,
    seed1: i16,
    seed2: i16,
    seed3: i16,
    total_size_bytes: u32,
    size_per_algorithm_bytes: u32,
    contexts: u32,
    iterations: u64,
    elapsed_ns: u64,
    ticks_ms: u64,
    iterations_per_s: Option<f64>,
    seedcrc: String,
    crclist: Option<String>,
    crcmatrix: Option<String>,
    crcstate: Option<String>,
    crcfinal: Option<String>,
    verdict: Verdict,
    score: Option<f64>,
    compiler_version: &'a str,
    compiler_flags: &'a str,
    memory_location: &'a str,
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

    fn perf_result() -> IterResult {
        IterResult {
            crc: 0x65c5,
            crclist: 0xe714,
            crcmatrix: 0x1fd7,
            crcstate: 0x8e3a,
        }
    }

    #[test]
    fn text_snapshot_valid_2k_performance_run() {
        let ctx = Context::new(Seeds::PERFORMANCE, 2000).unwrap();
        let report = Report::new(&ctx, 400_000, 13_308_400_000, &[perf_result()], &build());
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
    }

    #[test]
    fn text_snapshot_short_run_with_wrong_crc() {
        let ctx = Context::new(Seeds::VALIDATION, 2000).unwrap();
        let mut r = perf_result();
        r.crclist = 0xe3c1;
        r.crcmatrix = 0x0747;
        let report = Report::new(&ctx, 10, 1_500_000, &[r], &build());
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
    }

    #[test]
    fn unknown_seeds_never_claim_validation() {
        let ctx = Context::new(Seeds::new(1, 1, 1), 2000).unwrap();
        // Long run: cannot validate, no error.
        let long = Report::new(&ctx, 5, 11_000_000_000, &[perf_result()], &build());
        assert_eq!(long.verdict, Verdict::CannotValidate);
        assert!(long.text().ends_with(
            "Cannot validate operation for these seed values, please compare with results on a known platform.\n"
        ));
        assert!(!long.text().contains("Correct operation validated"));
        // Short run: the reference would print "validated" here; this reports both problems.
        let short = Report::new(&ctx, 5, 5_000_000, &[perf_result()], &build());
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
        let report = Report::new(&ctx, 1000, 12_000_000_000, &[r], &build());
        assert_eq!(report.verdict, Verdict::Validated);
        assert_eq!(report.score, None);
        assert!(!report.text().contains(SCORE_LABEL));
    }

    #[test]
    fn json_and_csv_carry_units_and_hex_crcs() {
        let ctx = Context::new(Seeds::PERFORMANCE, 2000).unwrap();
        let report = Report::new(&ctx, 400_000, 13_308_400_000, &[perf_result()], &build());
        let v: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(v["elapsed_ns"], 13_308_400_000u64);
        assert_eq!(v["seedcrc"], "0xe9f5");
        assert_eq!(v["results"][0]["crclist"], "0xe714");
        assert_eq!(v["run_type"], "performance_2k");
        assert_eq!(v["verdict"], "validated");
        assert_eq!(v["seeds"]["seed3"], 0x66);
        assert!((v["score"].as_f64().unwrap() - 30057.108506).abs() < 1e-3);

        let csv = report.csv();
        let mut lines = csv.lines();
        let header = lines.next().unwrap();
        let row = lines.next().unwrap();
        assert!(lines.next().is_none());
        assert!(header.starts_with("tool,label,run_type,seed1,"));
        assert!(header.contains("elapsed_ns"));
        assert!(row.contains("0xe714"));
        assert!(row.contains("2K performance"));
    }
}
