//! dto's report: `benchmp::Report<DtoData>` (host, build, topology, placement, calibration,
//! run quality and one measurement per round, as every socbench tool), with dto's own results
//! (the cells, the speedup summary and the verdict) in its `extra` section, and pure functions
//! rendering that section as the guide's text tables and as CSV (one row per cell).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::bench::{Config, PageKind};
use crate::check::Mismatch;
use crate::impls::ImplSpec;
use crate::measure::{RoundTicks, Sources};
use benchmp::stats::descriptive::Summary;
use benchmp::stats::ks::KsMethod;
use benchmp::stats::verdict::Verdict;

/// The dto subcommand a result comes from (the JSON's `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// `dto check`: functional checks.
    Check,
    /// `dto ab`: a baseline against a current implementation.
    Ab,
    /// `dto speedup`: implementations against cpu.
    Speedup,
}

/// The verdict of a whole run (the JSON's `result`): a check with no wrong result, or A/B
/// cells none of which regressed, pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum PassFail {
    /// Nothing wrong found.
    Pass,
    /// A wrong result, or a regressed A/B cell.
    Fail,
}

impl PassFail {
    /// [`PassFail::Pass`] when `failures` is 0.
    pub fn of(failures: u64) -> PassFail {
        if failures == 0 {
            PassFail::Pass
        } else {
            PassFail::Fail
        }
    }

    /// `PASS` or `FAIL`, as the JSON spells it.
    pub fn label(self) -> &'static str {
        match self {
            PassFail::Pass => "PASS",
            PassFail::Fail => "FAIL",
        }
    }
}

impl std::fmt::Display for PassFail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// `v` as pretty JSON and a newline, every object's keys in alphabetical order (through
/// serde_json's `Value`): the layout `dto list --json` and `dto check --json` have always had.
pub fn sorted_json<T: Serialize>(v: &T) -> serde_json::Result<String> {
    Ok(format!(
        "{}\n",
        serde_json::to_string_pretty(&serde_json::to_value(v)?)?
    ))
}

/// dto's report data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DtoData;

impl benchmp::ToolData for DtoData {
    type Params = RoundParams;
    type Sample = RoundTicks;
    type Child = Sources;
    type Extra = Extra;

    /// The bytes per operation (the test, pages and implementation are in the name).
    fn sizing(p: &RoundParams) -> benchmp::schema::Sizing {
        benchmp::schema::Sizing {
            size_bytes: Some(p.size_bytes as u64),
            ..Default::default()
        }
    }

    /// Every sample is in distributions.csv and the current side's in the figures: the
    /// rounds' records keep their timing, not a third copy of the ticks.
    const SAMPLE_DETAIL_KEPT: bool = false;
}

/// dto's report.
pub type Report = benchmp::Report<DtoData>;

/// What one measurement (one round of one cell, on every CPU) was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundParams {
    /// Benchmark name.
    pub test: String,
    /// memcpy, memset or memcmp.
    pub op: String,
    /// Bytes per operation.
    pub size_bytes: usize,
    /// Fault-injection percentage.
    pub pf_pct: u32,
    /// 4k or 2m.
    pub pages: PageKind,
    /// Configuration label.
    pub config: String,
    /// Round number, from 1.
    pub round: u32,
    /// Timed iterations (each times both sides once).
    pub iterations: u32,
}

/// Everything one `dto ab` / `dto speedup` run found (the report's `extra`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extra {
    /// Subcommand (ab, speedup).
    pub mode: Mode,
    /// How the run was set up.
    pub setup: Setup,
    /// The A/B configurations.
    pub configs: Vec<Config>,
    /// Per page size: measured or skipped, and why.
    pub page_sizes: Vec<PageStatus>,
    /// Every measured cell, on every CPU.
    pub cells: Vec<Cell>,
    /// Current-version speedup of every configuration over `cpu`, per CPU.
    pub speedup: Vec<Speedup>,
    /// Judged cells whose trimmed mean grew by more than the minimum effect.
    pub regressions: usize,
    /// A/A cells (an implementation against itself) that moved by more than the minimum effect.
    pub noisy: usize,
    /// PASS or FAIL (from the A/B cells only).
    pub result: PassFail,
}

/// Run conditions shown in the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// CPUs the rounds ran on, one after another.
    pub cpus: Vec<usize>,
    /// How they were chosen: a wrapped PERF_CPU, or PERF_CPU left unused.
    pub cpu_note: Option<String>,
    /// Timer used.
    pub timer: String,
    /// Timer frequency in Hz (TSC on x86_64).
    pub timer_hz: f64,
    /// Core frequency state.
    pub core_freq: String,
    /// Uncore frequency state.
    pub uncore_freq: String,
    /// Rounds per cell.
    pub rounds: u32,
    /// Iterations per round.
    pub iterations: u32,
    /// Untimed iterations of both versions per round.
    pub warmup_iterations: u32,
    /// PERF_MIN_EFFECT.
    pub min_effect_pct: f64,
    /// Caches flushed before every operation.
    pub cold_cache: bool,
    /// Flush instruction.
    pub flush: String,
    /// PERF_SHORT.
    pub short: bool,
    /// Seconds a round's child may stay silent before it is called hung.
    pub round_timeout_s: u64,
    /// Where distributions.csv was written (none under `benchmp ab`, which keeps the
    /// repetitions itself).
    pub distributions_csv: String,
}

/// Whether a page size was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageStatus {
    /// 4k or 2m.
    pub pages: PageKind,
    /// True when measured.
    pub measured: bool,
    /// Why not, when skipped.
    pub note: Option<String>,
}

/// One benchmark × configuration × page size on one CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Benchmark name.
    pub test: String,
    /// memcpy, memset or memcmp.
    pub op: String,
    /// Bytes per operation.
    pub size_bytes: usize,
    /// Fault-injection percentage.
    pub pf_pct: u32,
    /// Reference-only row (never judged).
    pub reference_only: bool,
    /// Configuration label.
    pub config: String,
    /// 4k or 2m.
    pub pages: PageKind,
    /// CPU the cell's rounds ran on.
    pub cpu: usize,
    /// Rounds pooled.
    pub rounds: u32,
    /// Baseline samples (ns), all rounds pooled.
    pub baseline: Summary,
    /// Current samples (ns), all rounds pooled.
    pub current: Summary,
    /// Trimmed mean (10th–90th percentile) of the baseline, ns.
    pub baseline_trimmed_mean_ns: f64,
    /// Trimmed mean of the current version, ns.
    pub current_trimmed_mean_ns: f64,
    /// (current − baseline) / baseline × 100.
    pub change_pct: f64,
    /// KS D on the trimmed distributions.
    pub ks_d: f64,
    /// KS p-value (two-sided).
    pub ks_p: f64,
    /// KS p-value branch.
    pub ks_method: KsMethod,
    /// Shared outlier threshold, ns.
    pub outlier_threshold_ns: f64,
    /// Baseline samples above the threshold.
    pub outliers_baseline: usize,
    /// Current samples above the threshold.
    pub outliers_current: usize,
    /// PASS, FAIL, NOISY or REF.
    pub verdict: Verdict,
}

impl Cell {
    /// The name of its figure (`memcpy_64k 4k ab`), the same in every run of the same command.
    pub fn figure_name(&self) -> String {
        format!("{} {} {}", self.test, self.pages, self.config)
    }
}

/// Speedup of one configuration's current version over cpu's, for one test, page size and CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Speedup {
    /// Benchmark name.
    pub test: String,
    /// 4k or 2m.
    pub pages: PageKind,
    /// CPU.
    pub cpu: usize,
    /// Configuration label.
    pub config: String,
    /// cpu current trimmed mean / this configuration's current trimmed mean.
    pub speedup: f64,
}

/// The speedup rows (cpu must be one of the configurations), each against cpu on its CPU.
pub fn speedups(cells: &[Cell]) -> Vec<Speedup> {
    let mut out = Vec::new();
    for c in cells.iter().filter(|c| c.config != "cpu") {
        if let Some(cpu) = cells
            .iter()
            .find(|r| r.config == "cpu" && r.test == c.test && r.pages == c.pages && r.cpu == c.cpu)
        {
            out.push(Speedup {
                test: c.test.clone(),
                pages: c.pages,
                cpu: c.cpu,
                config: c.config.clone(),
                speedup: cpu.current_trimmed_mean_ns / c.current_trimmed_mean_ns,
            });
        }
    }
    out
}

const RULE: &str = "  ===============================================";

/// The guide's text: header, then per CPU one detail table per page size and the speedup
/// summary, then the verdict. `arch` is the host's (the header names the TSC on x86_64).
pub fn render_text(r: &Extra, arch: &str) -> String {
    let s = &r.setup;
    let mut o = String::new();
    let cache = if s.cold_cache {
        "cold cache"
    } else {
        "warm cache"
    };
    let several = s.cpus.len() > 1;
    let _ = writeln!(o, "DTO A/B Performance Test ({cache})");
    let _ = writeln!(o, "================================================");
    if several {
        let list: Vec<String> = s.cpus.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(
            o,
            "Pinned CPUs:   {} (one after another; each CPU's rounds run alone)",
            list.join(", ")
        );
    } else {
        let cpu = s.cpus.first().map_or("-".into(), |c| c.to_string());
        let _ = writeln!(o, "Pinned CPU:    {cpu}");
    }
    if let Some(n) = &s.cpu_note {
        let _ = writeln!(o, "               ({n})");
    }
    if arch == "x86_64" {
        let _ = writeln!(o, "TSC freq:      {:.3} GHz", s.timer_hz / 1e9);
    } else {
        let _ = writeln!(o, "Timer:         {}", s.timer);
    }
    let _ = writeln!(o, "Core freq:     {}", s.core_freq);
    let _ = writeln!(o, "Uncore freq:   {}", s.uncore_freq);
    let _ = writeln!(
        o,
        "A/B rounds:    {} (interleaved, randomized order)",
        s.rounds
    );
    let _ = writeln!(
        o,
        "Iterations:    {} per round (+{} warmup)",
        s.iterations, s.warmup_iterations
    );
    let _ = writeln!(o, "Min effect:    {:.1}%", s.min_effect_pct);
    for &cpu in &s.cpus {
        let on = if several {
            format!(" on CPU {cpu}")
        } else {
            String::new()
        };
        detail_tables(&mut o, r, cpu, &on);
        speedup_tables(&mut o, r, cpu, &on);
    }
    let _ = writeln!(o, "\n{}", result_line(r));
    let _ = writeln!(o, "Samples: {}", s.distributions_csv);
    o
}

/// One detail table per page size, for the cells of one CPU.
fn detail_tables(o: &mut String, r: &Extra, cpu: usize, on: &str) {
    for ps in &r.page_sizes {
        let title = ps.pages.title();
        let _ = writeln!(o, "\n{RULE}\n  A/B Results — {title} pages{on}\n{RULE}");
        if !ps.measured {
            let _ = writeln!(
                o,
                "  skipped: {}",
                ps.note.as_deref().unwrap_or("not measured")
            );
            continue;
        }
        let _ = writeln!(
            o,
            "  {:<15} {:<9} {:>10} {:>10} {:>7}  {:>5}   {:<7}   Outliers",
            "Test", "Config", "Base mean", "Cur mean", "Change", "KS D", "Result"
        );
        let _ = writeln!(
            o,
            "  {:<15} {:<9} {:>10} {:>10} {:>7}  {:>5}   {:<7}   {}",
            "-".repeat(15),
            "-".repeat(9),
            "-".repeat(9),
            "-".repeat(9),
            "-".repeat(7),
            "-".repeat(5),
            "-".repeat(7),
            "-".repeat(8)
        );
        let mut last = "";
        for c in r
            .cells
            .iter()
            .filter(|c| c.pages == ps.pages && c.cpu == cpu)
        {
            let name = if c.test == last { "" } else { c.test.as_str() };
            last = &c.test;
            let _ = writeln!(
                o,
                "  {:<15} {:<9} {:>7.0} ns {:>7.0} ns {:>+6.1}%  {:>5.3}   {:<7}   bl={} cur={}",
                name,
                c.config,
                c.baseline_trimmed_mean_ns,
                c.current_trimmed_mean_ns,
                c.change_pct,
                c.ks_d,
                c.verdict.label(),
                c.outliers_baseline,
                c.outliers_current
            );
        }
    }
}

/// The speedup summary of one CPU, one table per measured page size.
fn speedup_tables(o: &mut String, r: &Extra, cpu: usize, on: &str) {
    let rows: Vec<&Speedup> = r.speedup.iter().filter(|sp| sp.cpu == cpu).collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\n{RULE}\n  Speedup vs CPU (current library){on}\n{RULE}"
    );
    let mut labels: Vec<&str> = Vec::new();
    for sp in &rows {
        if !labels.contains(&sp.config.as_str()) {
            labels.push(&sp.config);
        }
    }
    for ps in r.page_sizes.iter().filter(|p| p.measured) {
        let title = ps.pages.title();
        let _ = writeln!(o, "\n  {title} pages:");
        let _ = write!(o, "  {:<14}", "Test");
        for l in &labels {
            let _ = write!(o, " {l:>10}");
        }
        let _ = write!(o, "\n  {}", "-".repeat(14));
        for _ in &labels {
            let _ = write!(o, " {}", "-".repeat(10));
        }
        let _ = writeln!(o);
        let mut tests: Vec<&str> = Vec::new();
        for sp in rows.iter().filter(|sp| sp.pages == ps.pages) {
            if !tests.contains(&sp.test.as_str()) {
                tests.push(&sp.test);
            }
        }
        for t in tests {
            let _ = write!(o, "  {t:<14}");
            for l in &labels {
                match rows
                    .iter()
                    .find(|sp| sp.test == t && sp.pages == ps.pages && sp.config == *l)
                {
                    Some(sp) => {
                        let _ = write!(o, " {:>9.2}x", sp.speedup);
                    }
                    None => {
                        let _ = write!(o, " {:>10}", "-");
                    }
                }
            }
            let _ = writeln!(o);
        }
    }
}

/// The closing verdict: A/B cells decide PASS or FAIL; A/A cells that moved are counted as noise.
fn result_line(r: &Extra) -> String {
    let judged = |aa: bool| {
        r.cells
            .iter()
            .filter(|c| c.verdict != Verdict::Ref)
            .filter(|c| {
                r.configs
                    .iter()
                    .any(|k| k.label == c.config && k.is_a_a() == aa)
            })
            .count()
    };
    let (ab, aa) = (judged(false), judged(true));
    let effect = r.setup.min_effect_pct;
    let mut line = if ab > 0 {
        format!(
            "Result: {} ({} of {} judged A/B cells regressed by more than {:.1}%)",
            r.result, r.regressions, ab, effect
        )
    } else {
        format!("Result: {} (no A/B cell judged)", r.result)
    };
    if aa > 0 {
        line.push_str(&format!(
            "; A/A noise: {} of {} cells of an implementation against itself moved by more than {:.1}%",
            r.noisy, aa, effect
        ));
    }
    line
}

/// One CSV row per cell.
pub fn render_csv(r: &Extra) -> Result<String, benchmp::output::OutputError> {
    benchmp::output::OutputError::csv_text(|buf| write_csv(r, buf))
}

fn write_csv(r: &Extra, buf: &mut Vec<u8>) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(buf);
    w.write_record([
        "test",
        "op",
        "size_bytes",
        "pf_pct",
        "pages",
        "config",
        "reference_only",
        "rounds",
        "baseline_n",
        "current_n",
        "baseline_trimmed_mean_ns",
        "current_trimmed_mean_ns",
        "change_pct",
        "ks_d",
        "ks_p",
        "ks_method",
        "outlier_threshold_ns",
        "outliers_baseline",
        "outliers_current",
        "verdict",
        "cpu",
    ])?;
    for c in &r.cells {
        let method = match c.ks_method {
            KsMethod::Exact => "exact",
            KsMethod::Asymp => "asymp",
        };
        let verdict = c.verdict.label();
        w.write_record([
            c.test.clone(),
            c.op.clone(),
            c.size_bytes.to_string(),
            c.pf_pct.to_string(),
            c.pages.short().to_string(),
            c.config.clone(),
            c.reference_only.to_string(),
            c.rounds.to_string(),
            c.baseline.n.to_string(),
            c.current.n.to_string(),
            format!("{:.3}", c.baseline_trimmed_mean_ns),
            format!("{:.3}", c.current_trimmed_mean_ns),
            format!("{:.4}", c.change_pct),
            format!("{:.6}", c.ks_d),
            format!("{:.6e}", c.ks_p),
            method.to_string(),
            format!("{:.3}", c.outlier_threshold_ns),
            c.outliers_baseline.to_string(),
            c.outliers_current.to_string(),
            verdict.to_string(),
            c.cpu.to_string(),
        ])?;
    }
    w.flush()
}

/// The result of `dto check` (its `--json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckSummary {
    /// `dto`.
    pub tool: String,
    /// `check`.
    pub mode: Mode,
    /// The implementation checked, as named on the command line.
    #[serde(rename = "impl")]
    pub implementation: ImplSpec,
    /// Where its functions came from.
    pub source: String,
    /// Threads that ran the checks at once.
    pub threads: usize,
    /// Calls checked.
    pub cases: u64,
    /// Wrong results.
    pub failures: u64,
    /// The first wrong results.
    pub mismatches: Vec<Mismatch>,
    /// PASS when nothing was wrong.
    pub result: PassFail,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impls::ImplSpec;
    use benchmp::stats::descriptive::Summary;
    use benchmp::stats::verdict::Verdict;

    fn cell(test: &str, config: &str, cpu: usize, base: f64, cur: f64, verdict: Verdict) -> Cell {
        let s = Summary {
            n: 10,
            min: base,
            p10: base,
            median: base,
            p90: base,
            max: base,
            mean: base,
        };
        Cell {
            test: test.into(),
            op: "memcpy".into(),
            size_bytes: 65536,
            pf_pct: 0,
            reference_only: verdict == Verdict::Ref,
            config: config.into(),
            pages: PageKind::Small,
            cpu,
            rounds: 3,
            baseline: s,
            current: s,
            baseline_trimmed_mean_ns: base,
            current_trimmed_mean_ns: cur,
            change_pct: (cur - base) / base * 100.0,
            ks_d: 0.026,
            ks_p: 0.5,
            ks_method: KsMethod::Asymp,
            outlier_threshold_ns: base * 1.5,
            outliers_baseline: 5,
            outliers_current: 3,
            verdict,
        }
    }

    fn sample() -> Extra {
        let cells = vec![
            cell("memcpy_16k", "cpu", 1, 4033.0, 4036.0, Verdict::Pass),
            cell("memcpy_16k", "avx2", 1, 1520.0, 1600.0, Verdict::Fail),
            cell("memcpy_32k", "cpu", 1, 8000.0, 8400.0, Verdict::Noisy),
            cell("memcpy_32k", "avx2", 1, 3000.0, 3010.0, Verdict::Pass),
        ];
        let speedup = speedups(&cells);
        Extra {
            mode: Mode::Ab,
            setup: Setup {
                cpus: vec![1],
                cpu_note: None,
                timer: "rdtsc/rdtscp".into(),
                timer_hz: 2.0e9,
                core_freq: "not available (no cpufreq for CPU 1)".into(),
                uncore_freq: "not available (no intel_uncore_frequency)".into(),
                rounds: 3,
                iterations: 10000,
                warmup_iterations: 100,
                min_effect_pct: 2.0,
                cold_cache: true,
                flush: "clflushopt".into(),
                short: false,
                round_timeout_s: 120,
                distributions_csv: "perf_results/distributions.csv".into(),
            },
            configs: vec![
                Config {
                    label: "cpu".into(),
                    baseline: ImplSpec::Cpu,
                    current: ImplSpec::Cpu,
                    env: vec![],
                },
                Config {
                    label: "avx2".into(),
                    baseline: ImplSpec::Cpu,
                    current: ImplSpec::Kernel(crate::kernels::Kernel::Avx2),
                    env: vec![],
                },
            ],
            page_sizes: vec![
                PageStatus {
                    pages: PageKind::Small,
                    measured: true,
                    note: None,
                },
                PageStatus {
                    pages: PageKind::Huge,
                    measured: false,
                    note: Some("no huge pages".into()),
                },
            ],
            cells,
            speedup,
            regressions: 1,
            noisy: 1,
            result: PassFail::Fail,
        }
    }

    #[test]
    fn text_follows_the_guide_layout() {
        let t = render_text(&sample(), "x86_64");
        assert!(t.starts_with("DTO A/B Performance Test (cold cache)\n"));
        assert!(
            t.contains("Pinned CPU:    1\nTSC freq:      2.000 GHz\n"),
            "{t}"
        );
        assert!(t.contains("  A/B Results — 4KB pages\n"));
        assert!(t.contains(
            "  memcpy_16k      cpu          4033 ns    4036 ns   +0.1%  0.026   PASS      bl=5 cur=3\n"
        ));
        // The test name is printed on the first configuration row only.
        assert!(t.contains(
            "                  avx2         1520 ns    1600 ns   +5.3%  0.026   FAIL      bl=5 cur=3\n"
        ));
        assert!(t.contains("  A/B Results — 2MB pages\n"));
        assert!(t.contains("  skipped: no huge pages\n"));
        assert!(t.contains("  Speedup vs CPU (current library)\n"));
        assert!(t.contains("  memcpy_16k          2.52x\n"), "{t}");
        assert!(t.contains(
            "  memcpy_32k      cpu          8000 ns    8400 ns   +5.0%  0.026   NOISY     bl=5 cur=3\n"
        ));
        assert!(t.contains(
            "Result: FAIL (1 of 2 judged A/B cells regressed by more than 2.0%); A/A noise: 1 of 2 \
             cells of an implementation against itself moved by more than 2.0%"
        ));
        assert!(!t.contains("on CPU"), "{t}");
    }

    #[test]
    fn several_cpus_get_their_own_tables() {
        let mut r = sample();
        let more: Vec<Cell> = r
            .cells
            .iter()
            .map(|c| Cell {
                cpu: 0,
                current_trimmed_mean_ns: c.current_trimmed_mean_ns * 2.0,
                ..c.clone()
            })
            .collect();
        r.cells.splice(0..0, more);
        r.speedup = speedups(&r.cells);
        r.setup.cpus = vec![0, 1];
        assert_eq!(r.speedup.len(), 4);
        let t = render_text(&r, "aarch64");
        assert!(t.contains("Pinned CPUs:   0, 1 (one after another"), "{t}");
        assert!(t.contains("Timer:         rdtsc/rdtscp\n"), "{t}");
        for cpu in [0, 1] {
            assert!(
                t.contains(&format!("  A/B Results — 4KB pages on CPU {cpu}\n")),
                "{t}"
            );
            assert!(
                t.contains(&format!("  A/B Results — 2MB pages on CPU {cpu}\n")),
                "{t}"
            );
            assert!(t.contains(&format!(
                "  Speedup vs CPU (current library) on CPU {cpu}\n"
            )));
        }
        // CPU 0's tables come first and hold its own rows only.
        let cpu1 = t.find("4KB pages on CPU 1").unwrap();
        let first = &t[..cpu1];
        assert!(
            first.contains("  memcpy_16k      cpu          4033 ns    8072 ns"),
            "{t}"
        );
        assert!(!first.contains("4036 ns"), "{t}");
        assert!(t[cpu1..].contains("  memcpy_16k      cpu          4033 ns    4036 ns"));
    }

    #[test]
    fn a_run_without_a_b_cells_says_so() {
        let mut r = sample();
        r.configs.truncate(1);
        r.cells.retain(|c| c.config == "cpu");
        r.regressions = 0;
        r.result = PassFail::Pass;
        let t = render_text(&r, "x86_64");
        assert!(
            t.contains("Result: PASS (no A/B cell judged); A/A noise: 1 of 2 cells"),
            "{t}"
        );
    }

    #[test]
    fn csv_has_one_row_per_cell_and_json_round_trips() {
        let r = sample();
        let csv = render_csv(&r).unwrap();
        assert_eq!(csv.lines().count(), 5);
        assert!(csv.lines().next().unwrap().ends_with(",verdict,cpu"));
        assert!(csv.lines().nth(2).unwrap().ends_with(",FAIL,1"));
        assert!(csv.lines().nth(3).unwrap().ends_with(",NOISY,1"));
        let j: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(j["cells"][1]["verdict"], "FAIL");
        assert_eq!(j["cells"][2]["verdict"], "NOISY");
        assert_eq!(j["cells"][2]["cpu"], 1);
        assert_eq!(j["noisy"], 1);
        assert_eq!((&j["mode"], &j["result"]), (&"ab".into(), &"FAIL".into()));
        assert_eq!(j["speedup"][0]["config"], "avx2");
        assert_eq!(j["configs"][1]["current"], "avx2");
        let back: Extra = serde_json::from_value(j).unwrap();
        assert_eq!(back, r);
    }
}
