//! socbench `dhry`: Dhrystone 2.1 on one core, with DMIPS and DMIPS/MHz. See README.md.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use clap::error::ErrorKind;
use dhry::freq::{self, ClockSource, CoreClock};
use dhry::measure::{self, Plan};
use dhry::report::{self, BuildInfo, Report};

/// Exit status for a failed measurement or verification.
const EXIT_FAILED: u8 = 1;
/// Exit status for bad usage or input.
const EXIT_USAGE: u8 = 2;

/// Largest accepted `--runs` (about a day at 10^10 runs per second).
const MAX_RUNS: u64 = 1_000_000_000_000_000;
/// Longest accepted `--time`, in seconds.
const MAX_SECONDS: f64 = 86_400.0;
/// Largest accepted `--mhz`.
const MAX_MHZ: f64 = 1_000_000.0;
/// Below this share of CPU time during the loop, the result is flagged on stderr.
const LOW_CPU_SHARE_PERCENT: f64 = 95.0;

/// Runs Dhrystone 2.1 on the current core and reports Dhrystones per second, DMIPS
/// (Dhrystones per second / 1757) and DMIPS/MHz.
///
/// The output starts with the reference's printout of the final values and their "should be"
/// values; any difference is reported on stderr and the exit status is 1. Pin the process
/// with taskset to choose the core. Exit status: 0 ok, 1 measurement or verification failed,
/// 2 bad usage or input.
#[derive(Debug, Parser)]
#[command(name = "dhry", version)]
struct Cli {
    /// Make the timed loop last at least this many seconds; the run count is calibrated to
    /// it. The reference requires at least 2 seconds.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 2.0,
        value_parser = parse_seconds,
        allow_negative_numbers = true
    )]
    time: f64,

    /// Time exactly this many runs through Dhrystone; overrides --time. By default the
    /// count is calibrated to --time.
    #[arg(long, value_name = "N", value_parser = parse_runs, allow_negative_numbers = true)]
    runs: Option<u64>,

    /// Core clock in MHz for DMIPS/MHz. Default: cpufreq's cpuinfo_max_freq of the CPU the
    /// loop ran on; without cpufreq, the "cpu MHz" of /proc/cpuinfo labelled as an estimate.
    #[arg(long, value_name = "MHZ", value_parser = parse_mhz, allow_negative_numbers = true)]
    mhz: Option<f64>,

    /// Write the report as JSON: to FILE when given as --json=FILE, otherwise to stdout
    /// instead of the reference's text.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = STDOUT
    )]
    json: Option<PathBuf>,

    /// Write the report as CSV (a header line and one record): to FILE when given as
    /// --csv=FILE, otherwise to stdout instead of the reference's text.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = STDOUT
    )]
    csv: Option<PathBuf>,
}

/// The file name that stands for stdout in --json and --csv.
const STDOUT: &str = "-";

impl Cli {
    /// Arguments clap cannot check on its own; the message for a usage error.
    fn check(&self) -> Result<(), String> {
        let to_stdout = |f: &Option<PathBuf>| f.as_deref() == Some(Path::new(STDOUT));
        if to_stdout(&self.json) && to_stdout(&self.csv) {
            return Err(
                "--json and --csv cannot both go to stdout; give one a file (--csv=FILE)"
                    .to_string(),
            );
        }
        Ok(())
    }
}

fn parse_runs(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) if n <= MAX_RUNS => Ok(n),
        Ok(_) => Err(format!("must be at most {MAX_RUNS}")),
        Err(_) => Err("not a whole number of runs".to_string()),
    }
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= MAX_SECONDS => Ok(x),
        Ok(_) => Err(format!(
            "must be more than 0 and at most {MAX_SECONDS} seconds"
        )),
        Err(_) => Err("not a number of seconds".to_string()),
    }
}

fn parse_mhz(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= MAX_MHZ => Ok(x),
        Ok(_) => Err(format!("must be more than 0 and at most {MAX_MHZ} MHz")),
        Err(_) => Err("not a number of MHz".to_string()),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("dhry: {first} (see --help)");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if let Err(message) = cli.check() {
        eprintln!("dhry: {message}");
        return ExitCode::from(EXIT_USAGE);
    }
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dhry: error: {e:#}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn run(cli: &Cli) -> Result<()> {
    let plan = match cli.runs {
        Some(runs) => Plan::Runs(runs),
        None => Plan::AtLeast(Duration::from_secs_f64(cli.time)),
    };
    let m = measure::measure(plan).context("measuring Dhrystone")?;

    let clock = match cli.mhz {
        Some(mhz) => Some(CoreClock {
            mhz,
            source: ClockSource::Option,
            cpu: None,
        }),
        None => m.sample.cpu_end.and_then(freq::detect),
    };
    let report = Report::new(&m, clock, BuildInfo::current());

    let mut text_to_stdout = true;
    if let Some(path) = &cli.json {
        let json = report::render_json(&report).context("formatting JSON")?;
        text_to_stdout &= !emit(path, &json)?;
    }
    if let Some(path) = &cli.csv {
        let csv = report::render_csv(&report).context("formatting CSV")?;
        text_to_stdout &= !emit(path, &csv)?;
    }
    if text_to_stdout {
        emit(Path::new(STDOUT), &report::render_text(&report))?;
    }

    warn_about_quality(&report);
    if !report.verification.passed {
        for mismatch in &report.verification.mismatches {
            eprintln!("dhry: error: {mismatch}");
        }
        bail!(
            "verification failed: {} checked variable(s) differ from their expected values",
            report.verification.mismatches.len()
        );
    }
    Ok(())
}

/// Writes `text` to `path`, or to stdout for "-"; true when it went to stdout.
fn emit(path: &Path, text: &str) -> Result<bool> {
    if path == Path::new(STDOUT) {
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .context("writing the report to stdout")?;
        Ok(true)
    } else {
        fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        Ok(false)
    }
}

/// Notes on stderr that make a figure less trustworthy.
fn warn_about_quality(r: &Report) {
    if !r.reference_min_time_met {
        eprintln!(
            "dhry: warning: the timed loop lasted {:.3} s, less than the 2 s the reference \
             requires; use more runs or --time 2",
            r.elapsed_ns as f64 / 1e9
        );
    }
    if r.cpu_share_percent < LOW_CPU_SHARE_PERCENT && r.reference_min_time_met {
        eprintln!(
            "dhry: warning: the thread had the CPU for only {:.1} % of the loop; the figure is \
             low by about that much (another task or the hypervisor took the rest)",
            r.cpu_share_percent
        );
    }
    if let (Some(a), Some(b)) = (r.cpu_start, r.cpu_end) {
        if a != b {
            eprintln!(
                "dhry: warning: the thread moved from cpu {a} to cpu {b}; pin it with taskset"
            );
        }
    }
}
