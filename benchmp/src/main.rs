//! `benchmp`: the framework's own command line.
//!
//! - `benchmp calibrate` measures (or re-measures) the interval and overheads once, stores them
//!   in the cache every tool reads, and prints them as lmbench's `enough`, `timing_o` and
//!   `loop_o` would, ready to export on a phone (`ENOUGH=… TIMING_O=… LOOP_O=…`).
//! - `benchmp topology` prints the CPUs, clusters and caches as detected.
//! - `benchmp probe` runs a trivial workload through the framework (used by the tests to check
//!   placement, sample counts and failure handling from outside the test process).
//! - `benchmp overhead` measures the framework's own costs on this machine.
//! - `benchmp compare BASE CUR` gives an A/B verdict on every figure two runs share.

use std::hint::black_box;
use std::io::Write as _;
use std::time::Duration;

use anyhow::{Context, Result};
use benchmp::cli::{OutputArgs, PlacementArgs, TimingArgs};
use benchmp::run::Iterations;
use benchmp::sys::clock::now_ns;
use benchmp::{Benchmark, ChildInfo, NoData, Session, Spec};
use clap::{Parser, Subcommand, ValueEnum};

mod cmd;

/// `println!` that fails with an error (exit 1) instead of panicking when stdout cannot be
/// written (a full disk, `> /dev/full`, a closed pipe).
macro_rules! outln {
    ($($arg:tt)*) => {
        benchmp::cli::write_stdout(&format!("{}\n", format_args!($($arg)*)))?
    };
}

#[derive(Debug, Parser)]
#[command(
    name = "benchmp",
    version,
    about = "socbench's timing framework: calibration, topology and self-checks"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Measure the interval (ENOUGH), timing and loop overheads, store them in the cache, and
    /// print them as shell exports.
    Calibrate {
        #[command(flatten)]
        timing: TimingArgs,
        /// Print JSON instead of shell exports.
        #[arg(long)]
        json: bool,
    },
    /// Print the CPUs, clusters and caches read from sysfs ($BENCHMP_SYSFS_ROOT or /sys).
    Topology {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run a trivial workload through the framework (spin or nothing), optionally making one
    /// child fail, to check placement, sample counts and failure handling.
    Probe(ProbeArgs),
    /// Compare separate runs: report files (any tool's --json) or result folders of
    /// scripts/suite.sh, one run per side (BASE CUR) or several (BASE... -- CUR...). Every
    /// figure both sides have gets a verdict: PASS, FAIL (a regression), IMPROVED, NOISY (a
    /// change that cannot be told from the drift between runs; the reason is shown) or
    /// MISSING. Exit status 1 when any figure regressed, 0 otherwise, 2 for bad input (an
    /// output file that is an input, by inode, included: inputs are never written).
    ///
    /// Two runs of one build on a shared host differ by 5-30 %, and every sample of a run
    /// shares that run's state, so the run, not the sample, is the unit. With one run per side
    /// the change of the samples' trimmed means is PASS within ±--min-effect, FAIL or IMPROVED
    /// only beyond both --min-effect and --run-spread, and NOISY otherwise (always beyond
    /// --min-effect when --run-spread is not given); the KS p of the samples is shown as a
    /// diagnostic only. With several runs on a side each run gives one value per figure (its
    /// trimmed mean) and the change is between the sides' medians: PASS within ±--min-effect,
    /// FAIL or IMPROVED beyond it when the Mann-Whitney U test of the runs gives p < --alpha,
    /// NOISY otherwise (4 runs a side at least can reach p < 0.05). A side's runs are matched
    /// by entry name; a run without an entry gives it no value. Two builds that can run side by
    /// side are better compared with benchmp ab, which pairs their repetitions so that drift
    /// cancels.
    #[command(
        override_usage = "benchmp compare [OPTIONS] BASE CUR\n       benchmp compare [OPTIONS] BASE... -- CUR..."
    )]
    Compare {
        /// BASE then CUR, one run each (a report file or a result folder); with `--`, every
        /// run of BASE.
        #[arg(value_name = "BASE", required = true, num_args = 1..)]
        runs: Vec<std::path::PathBuf>,
        /// After `--`: every run of CUR, the side judged against BASE (options go before `--`).
        #[arg(value_name = "CUR", last = true)]
        current_runs: Vec<std::path::PathBuf>,
        /// Smallest change that counts, percent of the baseline's figure.
        #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = min_effect)]
        min_effect: f64,
        /// With one run per side: how far two runs of one build drift apart on this machine,
        /// percent (the largest change between two baseline runs). A change within it is
        /// NOISY; without it (the default) every change beyond --min-effect is.
        #[arg(long, value_name = "PCT", value_parser = min_effect)]
        run_spread: Option<f64>,
        /// With several runs on a side: the Mann-Whitney p-value below which a change beyond
        /// --min-effect is a FAIL or IMPROVED rather than NOISY.
        #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = probability)]
        alpha: f64,
        /// Write the comparison as JSON: to stdout instead of the table (--json), or to a file
        /// besides it (--json=FILE).
        #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
        json: Option<String>,
        /// Write one CSV row per figure: to stdout instead of the table (--csv), or to a file
        /// besides it (--csv=FILE).
        #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
        csv: Option<String>,
    },
    /// Compare two builds (or two settings) of one tool, paired: both commands start as
    /// workers on the same CPUs, and each figure's repetitions are taken in pairs, A and B
    /// back to back in random order, in up to --processes fresh pairs of workers; the
    /// verdict is over the process pairs' estimates, looked at until decided or the budget
    /// is spent.
    /// Verdicts: PASS (within ±--min-effect), FAIL (B worse), IMPROVED, NOISY (undecided).
    /// Exit status 1 when a figure regressed or a side failed, 0 otherwise, 2 for bad input
    /// (a missing program, a command that is no socbench tool, two tools or figures).
    Ab(cmd::ab::AbArgs),
    /// Run socbench's plan (every tool with defaults that finish in a few minutes on a
    /// 2-core machine) with the binaries next to this one, into a results folder: each
    /// entry's JSON, CSV, text and errors and status.tsv; a failed entry is reported and the
    /// next one runs. Exit status: 0 every entry succeeded (and nothing regressed), 1
    /// otherwise, 2 refused before anything ran, 128+n stopped by signal n (the running
    /// entry and everything it forked are stopped first).
    Suite(cmd::suite::SuiteArgs),
    /// Print the summary of a results folder: every entry with its headline figure, its
    /// time and, after a comparison, its worst verdict.
    Summary(cmd::summary::SummaryArgs),
    /// Print the framework's own costs: timing and loop overhead, fork and handshake time per
    /// child, and the error of known-duration workloads measured through the framework.
    Overhead {
        #[command(flatten)]
        timing: TimingArgs,
    },
}

/// `benchmp probe`'s options.
#[derive(Debug, clap::Args)]
struct ProbeArgs {
    #[command(flatten)]
    placement: PlacementArgs,
    #[command(flatten)]
    timing: TimingArgs,
    #[command(flatten)]
    output: OutputArgs,
    /// Make this child fail.
    #[arg(long, value_name = "INDEX")]
    fail_child: Option<usize>,
    /// How the chosen child fails.
    #[arg(long, value_enum, default_value_t = Failure::Abort)]
    fail_how: Failure,
    /// Run exactly this many iterations per interval instead of calibrating.
    #[arg(long, value_name = "N")]
    iterations: Option<u64>,
    /// Spin steps per iteration: a known slowdown for the paired A/B tests (`--work 2` takes
    /// twice as long per iteration as the default 1).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    work: u64,
    /// Also run load children (the same spin, without pause) on these CPUs while the
    /// measuring children time their intervals.
    #[arg(long, value_name = "LIST", value_parser = benchmp::cli::cpu_list)]
    load_cpus: Option<benchmp::cli::CpuList>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Failure {
    /// abort() in the child: killed by SIGABRT.
    Abort,
    /// exit(5) in the middle of the timed run.
    Exit,
    /// Stop responding (sleep) during the timed run.
    Hang,
    /// Return an error from the child's setup.
    Error,
}

/// A dependent-add loop: cost per iteration is stable and it cannot be folded.
struct Spin {
    acc: u64,
    fail: Option<Failure>,
    runs: u64,
    /// Spin steps per iteration.
    work: u64,
}

impl Benchmark for Spin {
    type Sample = ();
    type Child = ();

    fn run(&mut self, iterations: u64) -> u64 {
        self.runs += 1;
        if let Some(f) = self.fail
            && self.runs > 3
        {
            match f {
                Failure::Abort => std::process::abort(),
                Failure::Exit => std::process::exit(5),
                Failure::Hang => std::thread::sleep(Duration::from_secs(3600)),
                Failure::Error => {}
            }
        }
        self.acc = spin(self.acc, iterations.saturating_mul(self.work));
        self.acc
    }
}

#[inline(never)]
fn spin(mut acc: u64, n: u64) -> u64 {
    for i in 0..n {
        acc = black_box(acc.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    acc
}

fn main() {
    let cli: Cli = benchmp::cli::parse();
    let trace = matches!(&cli.cmd, Cmd::Probe(p) if p.output.trace);
    benchmp::cli::init_logging(trace);
    match run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => std::process::exit(benchmp::cli::report_error("benchmp", &e)),
    }
}

fn min_effect(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (0.0..=1000.0).contains(&p) => Ok(p),
        _ => Err(format!("'{s}' is not a percentage from 0 to 1000")),
    }
}

fn probability(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 1.0 => Ok(p),
        _ => Err(format!("'{s}' is not a probability above 0 and at most 1")),
    }
}

/// `benchmp compare`: splits the paths into two sides, loads every run, judges every shared
/// figure, writes what was asked.
fn compare(
    runs: Vec<std::path::PathBuf>,
    current_runs: Vec<std::path::PathBuf>,
    how: benchmp::compare::Judging,
    json: Option<&str>,
    csv: Option<&str>,
) -> Result<i32> {
    use benchmp::compare::{self, Run};
    let (base, current) = compare::sides(runs, current_runs)?;
    let inputs: Vec<&std::path::Path> = base.iter().chain(&current).map(|p| p.as_path()).collect();
    compare::refuse_overwrite(&inputs, &[("--json", json), ("--csv", csv)])?;
    benchmp::cli::check_outputs(json, csv)?;
    let load = |side: &[std::path::PathBuf]| {
        side.iter()
            .map(|p| Run::load(p))
            .collect::<Result<Vec<_>, _>>()
    };
    let (b, c) = (load(&base)?, load(&current)?);
    let cmp = compare::compare(&b, &c, how)?;
    let shown = match (json, csv) {
        (Some("-"), _) => serde_json::to_string_pretty(&cmp)? + "\n",
        (_, Some("-")) => {
            let mut v = Vec::new();
            compare::write_csv(&cmp, &mut v)?;
            String::from_utf8(v)?
        }
        _ => compare::render_text(&cmp),
    };
    benchmp::cli::write_stdout(&shown)?;
    if let Some(path) = json.filter(|p| *p != "-") {
        benchmp::export::write_file(path, |w| {
            serde_json::to_writer_pretty(&mut *w, &cmp)?;
            writeln!(w)
        })?;
    }
    if let Some(path) = csv.filter(|p| *p != "-") {
        benchmp::export::write_file(path, |w| compare::write_csv(&cmp, w))?;
    }
    Ok(if cmp.regressed() {
        benchmp::EXIT_FAILED
    } else {
        benchmp::EXIT_OK
    })
}

fn run(cli: Cli) -> Result<i32> {
    match cli.cmd {
        Cmd::Compare {
            runs,
            current_runs,
            min_effect,
            run_spread,
            alpha,
            json,
            csv,
        } => compare(
            runs,
            current_runs,
            benchmp::compare::Judging {
                rule: benchmp::ab::Rule {
                    min_effect_pct: min_effect,
                    alpha,
                },
                run_spread_pct: run_spread,
            },
            json.as_deref(),
            csv.as_deref(),
        ),
        Cmd::Ab(args) => cmd::ab::run(&args),
        Cmd::Suite(args) => cmd::suite::run(&args),
        Cmd::Summary(args) => cmd::summary::run(&args),
        Cmd::Calibrate { timing, json } => calibrate(timing, json),
        Cmd::Topology { json } => topology(json),
        Cmd::Probe(args) => probe(args),
        Cmd::Overhead { timing } => overhead(&timing),
    }
}

/// `benchmp calibrate`: measures the interval and overheads, caches them, prints exports.
fn calibrate(mut timing: TimingArgs, json: bool) -> Result<i32> {
    timing.recalibrate = true;
    let req = benchmp::timing::CalibrationRequest {
        enough_us: timing.enough,
        cache: timing.cache_file()?,
        recalibrate: true,
    };
    let c = benchmp::timing::calibrate(&req)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        outln!("ENOUGH={}", c.enough_us);
        outln!("TIMING_O={}", c.timing_overhead_ns / 1000.0);
        outln!("LOOP_O={}", c.loop_overhead_ns / 1000.0);
        if let Some(p) = &c.cache_file {
            eprintln!(
                "benchmp: calibrated in {:.2} s; cached in {}",
                c.measured_ns as f64 / 1e9,
                p.display()
            );
        }
    }
    Ok(0)
}

/// `benchmp topology`: CPUs, clusters and caches as detected.
fn topology(json: bool) -> Result<i32> {
    let t = benchmp::topology::Topology::detect()?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&t)?);
    } else {
        outln!("{}", t.describe());
        for c in &t.clusters {
            outln!(
                "cluster {}: CPUs {} capacity {} max {} kHz",
                c.index,
                benchmp::cpulist::format_cpu_list(&c.cpus),
                c.capacity.map_or("-".into(), |v| v.to_string()),
                c.max_freq_khz.map_or("-".into(), |v| v.to_string())
            );
        }
        for k in &t.caches {
            outln!(
                "L{} {:<11} {:>8} line {:>3} shared by {}",
                k.level,
                k.kind,
                benchmp::size::HumanSize(k.size_bytes).to_string(),
                k.line_bytes,
                benchmp::cpulist::format_cpu_list(&k.shared_cpus)
            );
        }
    }
    Ok(0)
}

/// `benchmp probe`: the spin workload through the framework, optionally with a failing child
/// or load children.
fn probe(args: ProbeArgs) -> Result<i32> {
    let ProbeArgs {
        placement,
        timing,
        output,
        fail_child,
        fail_how,
        iterations,
        work,
        load_cpus,
    } = args;
    let mut s = Session::<NoData>::start("benchmp-probe", &placement, &timing)?;
    let mut spec = Spec::rate("spin", 1.0, "iterations/s", ());
    if let Some(n) = iterations {
        spec.iterations = Iterations::Fixed(n);
    }
    let make = |info: &ChildInfo| {
        let fail = (fail_child == Some(info.index)).then_some(fail_how);
        if fail == Some(Failure::Error) {
            anyhow::bail!("setup failed on purpose");
        }
        Ok(Spin {
            acc: info.index as u64,
            fail,
            runs: 0,
            work,
        })
    };
    let loads: Vec<Option<usize>> = load_cpus
        .map(|l| l.0.into_iter().map(Some).collect())
        .unwrap_or_default();
    let loads = benchmp::Loads {
        cpus: &loads,
        required: true,
    };
    s.measure_loaded(spec, make, loads, make)?;
    let report = s.finish(&output, None);
    let code = benchmp::emit(&report, &output, |r| {
        let m = &r.measurements[0];
        let mut out = format!("{:.2} {}\n", m.figure(output.aggregate), m.metric.unit());
        for l in benchmp::export::cluster_lines(r, m, output.aggregate) {
            out.push_str(&l);
            out.push('\n');
        }
        out
    })?;
    Ok(code)
}

/// Prints the framework's own costs (a benchmark, not a test).
fn overhead(timing: &TimingArgs) -> Result<i32> {
    let req = benchmp::timing::CalibrationRequest {
        enough_us: timing.enough,
        cache: None,
        recalibrate: true,
    };
    let t = now_ns();
    let cal = benchmp::timing::calibrate(&req)?;
    outln!(
        "calibration (measured, no cache): {:.3} s",
        (now_ns() - t) as f64 / 1e9
    );
    outln!("  interval (ENOUGH):  {} us", cal.enough_us);
    outln!(
        "  timing overhead:    {:.1} ns per clock read",
        cal.timing_overhead_ns
    );
    outln!(
        "  loop overhead:      {:.4} ns per iteration",
        cal.loop_overhead_ns
    );
    outln!("  clock resolution:   {} ns", cal.clock_resolution_ns);

    // Reference cost of one spin iteration, measured directly over ~0.5 s, best of 5.
    let mut per_iter = f64::INFINITY;
    let n = 50_000_000u64;
    for _ in 0..5 {
        let t0 = now_ns();
        black_box(spin(1, black_box(n)));
        per_iter = per_iter.min((now_ns() - t0) as f64 / n as f64);
    }
    outln!("spin reference:       {per_iter:.4} ns per iteration (direct, best of 5 x {n})");
    fork_costs()?;
    spin_errors(per_iter)?;
    Ok(0)
}

/// What forking, the handshake and reaping cost for one and two children.
fn fork_costs() -> Result<()> {
    let placement = PlacementArgs {
        timeout: 60,
        ..Default::default()
    };
    for p in [1usize, 2] {
        let pl = PlacementArgs {
            parallel: Some(p),
            ..placement.clone()
        };
        let tm = TimingArgs {
            repetitions: 1,
            calibration: Some("off".into()),
            enough: Some(1),
            ..Default::default()
        };
        let mut s = Session::<NoData>::start("benchmp-overhead", &pl, &tm).context("session")?;
        let mut spec = Spec::rate("null", 1.0, "it/s", ());
        spec.iterations = Iterations::Fixed(1);
        let wall = s
            .measure(spec, |_: &ChildInfo| {
                Ok(Spin {
                    acc: 0,
                    fail: None,
                    runs: 0,
                    work: 1,
                })
            })?
            .wall_ns;
        outln!(
            "fork + handshake + reap: {:.3} ms for {p} child{} ({:.3} ms per child)",
            wall as f64 / 1e6,
            if p == 1 { "" } else { "ren" },
            wall as f64 / 1e6 / p as f64
        );
    }
    Ok(())
}

/// Known-duration spins measured through the framework against the direct reference.
fn spin_errors(per_iter: f64) -> Result<()> {
    outln!("known-duration spins measured through benchmp (fixed count, 21 samples, median):");
    outln!(
        "  {:>8}  {:>12}  {:>12}  {:>9}",
        "target",
        "measured ns",
        "expected ns",
        "error"
    );
    for target_ns in [1_000u64, 10_000, 100_000] {
        let iters = ((target_ns as f64) / per_iter).round().max(1.0) as u64;
        let tm = TimingArgs {
            repetitions: 21,
            calibration: Some("off".into()),
            enough: Some(1),
            ..Default::default()
        };
        let pl = PlacementArgs {
            parallel: Some(1),
            timeout: 60,
            ..Default::default()
        };
        let mut s = Session::<NoData>::start("benchmp-overhead", &pl, &tm)?;
        let _ = s.calibration()?;
        let mut spec = Spec::rate("spin", 1.0, "it/s", ());
        spec.iterations = Iterations::Fixed(iters);
        spec.subtract_loop_overhead = false;
        let m = s.measure(spec, |_: &ChildInfo| {
            Ok(Spin {
                acc: 0,
                fail: None,
                runs: 0,
                work: 1,
            })
        })?;
        let measured = m.figures[0].pair.u as f64 / m.figures[0].pair.n as f64 * iters as f64;
        let expected = iters as f64 * per_iter;
        outln!(
            "  {:>6}us  {:>12.1}  {:>12.1}  {:>+8.2}%",
            target_ns / 1000,
            measured,
            expected,
            (measured - expected) / expected * 100.0
        );
    }
    Ok(())
}
