//! socbench `coremark`: runs the CoreMark-compatible workload on one context and prints
//! the reference's report (or JSON / CSV). See README.md in this folder.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use coremark::report::{BuildInfo, Report};
use coremark::{Context, DEFAULT_TOTAL_SIZE, Seeds, parse, timing};

/// Exit status: success.
const EXIT_OK: u8 = 0;
/// Exit status: the run failed (CRC mismatch, run under 10 s, output error).
const EXIT_FAILED: u8 = 1;
/// Exit status: bad command line or parameters.
const EXIT_USAGE: u8 = 2;

/// Runs CoreMark 1.0's list, matrix and state workloads (a CoreMark-compatible Rust port;
/// its figures are not CoreMark scores) and reports iterations per second with the
/// reference's CRC validation.
#[derive(Debug, Parser)]
#[command(name = "coremark", version)]
struct Cli {
    /// Three seeds separated by commas (decimal or 0x-hex). 0,0,0 selects the performance
    /// run (0,0,0x66), 1,0,0 the validation run (0x3415,0x3415,0x66), and 8,8,8 with
    /// --size 1200 the profile run; other seeds run but cannot be validated.
    #[arg(long, value_name = "A,B,C", default_value = "0,0,0", value_parser = seeds_arg)]
    seeds: Seeds,

    /// Total data size in bytes, split evenly between the three workloads (K and M
    /// suffixes allowed). The default 2000 is the standard "2K" run; 6000 gives the "6k"
    /// runs.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_TOTAL_SIZE, value_parser = size_arg)]
    size: u32,

    /// Iterations to time. By default (or with 0) the count is chosen as the reference
    /// does: ×10 until a run takes at least 1 s, then scaled so the timed run lasts at
    /// least 10 s. A run under 10 s is reported as an error.
    #[arg(long, value_name = "N")]
    iterations: Option<u32>,

    /// Print the report as JSON instead of the reference's text.
    #[arg(long, conflicts_with = "csv")]
    json: bool,

    /// Print the report as CSV (a header and one row) instead of the reference's text.
    #[arg(long)]
    csv: bool,
}

fn seeds_arg(text: &str) -> Result<Seeds, String> {
    parse::seeds(text).map_err(|e| e.to_string())
}

fn size_arg(text: &str) -> Result<u32, String> {
    parse::size(text).map_err(|e| e.to_string())
}

/// The run completed but its result is not valid.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct RunFailed(String);

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::from(EXIT_OK);
        }
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("coremark: {first} (see --help)");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match run(&cli) {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(e) => {
            eprintln!("coremark: {e:#}");
            if e.downcast_ref::<coremark::Error>().is_some() {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::from(EXIT_FAILED)
            }
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    let mut ctx = Context::new(cli.seeds, cli.size)?;
    let progress = std::io::stderr().is_terminal();
    let iterations = match cli.iterations {
        Some(n) if n > 0 => n,
        _ => {
            if progress {
                eprintln!(
                    "coremark: choosing the iteration count (runs of 10, 100, ... iterations)"
                );
            }
            timing::auto_iterations(&mut ctx)
        }
    };
    if progress {
        eprintln!("coremark: timing {iterations} iterations");
    }
    let m = timing::timed_iterate(&mut ctx, iterations);
    let report = Report::new(
        &ctx,
        iterations,
        m.elapsed_ns,
        &[m.result],
        &BuildInfo::current(),
    );

    let text = if cli.json {
        report.json()
    } else if cli.csv {
        report.csv()
    } else {
        report.text()
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .context("writing the report to stdout")?;

    if report.has_errors() {
        let mut problems: Vec<String> = report
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
        if report.short_run {
            problems.push(format!(
                "the timed run lasted {:.3} s, at least {} s are needed for a valid result",
                report.seconds, report.min_valid_seconds
            ));
        }
        return Err(RunFailed(format!("result not valid: {}", problems.join("; "))).into());
    }
    Ok(())
}
