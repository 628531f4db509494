//! socbench `coremark`: runs the CoreMark-compatible workload, one context per forked,
//! pinned process through benchmp, and prints the reference's report (or benchmp's JSON /
//! CSV with this report inside). See README.md in this folder.

use benchmp::cli::{OutputArgs, PlacementArgs};
use benchmp::{EXIT_FAILED, Usage};
use clap::Parser;
use coremark::report::{BuildInfo, Report};
use coremark::{Context, DEFAULT_TOTAL_SIZE, Seeds, parse, text};

/// Runs CoreMark 1.0's list, matrix and state workloads (a CoreMark-compatible Rust port;
/// its figures are not CoreMark scores) and reports iterations per second with the
/// reference's CRC validation, one context per pinned process.
#[derive(Debug, Parser)]
#[command(name = "coremark", version)]
struct Cli {
    /// Three seeds separated by commas (decimal or 0x-hex). 0,0,0 selects the performance
    /// run (0,0,0x66), 1,0,0 the validation run (0x3415,0x3415,0x66), and 8,8,8 with
    /// --size 1200 the profile run; other seeds run but cannot be validated.
    #[arg(
        long,
        value_name = "A,B,C",
        default_value = "0,0,0",
        value_parser = parse::seeds,
        allow_hyphen_values = true
    )]
    seeds: Seeds,

    /// Total data size in bytes per context, split evenly between the three workloads (K
    /// and M suffixes allowed). The default 2000 is the standard "2K" run; 6000 gives the
    /// "6k" runs.
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = DEFAULT_TOTAL_SIZE,
        value_parser = parse::size,
        allow_hyphen_values = true
    )]
    size: u32,

    /// Iterations each context times (up to 4294967295; K and M suffixes allowed). By
    /// default (or with 0) the count is chosen once, as the reference does, on the fastest
    /// CPU of the run: ×10 until a run takes at least 1 s, then scaled so the timed run
    /// lasts at least 10 s. A context that runs under 10 s makes the result invalid.
    #[arg(long, value_name = "N", value_parser = parse::iterations, allow_hyphen_values = true)]
    iterations: Option<u32>,

    #[command(flatten)]
    placement: PlacementArgs,

    #[command(flatten)]
    output: OutputArgs,
}

/// How the contract test runs coremark (benchmp::cli::Example).
const EXAMPLES: &[benchmp::cli::Example] = &[benchmp::cli::Example {
    command: "",
    quick: "--iterations 10",
    long: "--iterations 1000000000 --json={tmp}/out.json --md={tmp}/out.md",
}];

fn main() {
    benchmp::tool::main(
        "coremark",
        EXAMPLES,
        &[benchmp::error::probe::<coremark::Error>],
        |c: &Cli| c.output.trace,
        |c| run(&c),
    )
}

fn run(cli: &Cli) -> anyhow::Result<i32> {
    let out = &cli.output;
    out.check()?;
    // Checks the size now, and sizes the iteration count in this (single-threaded) process.
    let mut ctx = Context::new(cli.seeds, cli.size).map_err(|e| Usage(e.to_string()))?;
    let timed = coremark::run::time(&mut ctx, cli.iterations, &cli.placement, out)?;
    let report = Report::new(&ctx, timed.iterations, &timed.runs, &BuildInfo::current());
    // Under benchmp ab a repetition lasts the driver's few milliseconds, not the 10 s a
    // CoreMark-compatible result needs: only a CRC mismatch makes that run fail. Decided
    // before the report is written, which it is either way.
    let paired = timed.session.paced() && report.mismatches.is_empty();
    let invalid = report.has_errors() && !paired;
    let framework = timed.session.finish(out, Some(report.clone()));
    let code = benchmp::emit(&framework, out, |r| {
        report.text_with_figures(r, out.aggregate)
    })?;
    if invalid {
        benchmp::console::err(&text::not_valid(&report));
        return Ok(EXIT_FAILED);
    }
    Ok(code)
}
