//! socbench `dhry`: Dhrystone 2.1 with DMIPS and DMIPS/MHz, one copy per forked, pinned
//! child through benchmp (one child by default). See README.md.

use anyhow::Result;
use benchmp::EXIT_FAILED;
use benchmp::cli::{OutputArgs, PlacementArgs};
use clap::Parser;
use dhry::Variant;
use dhry::parallel::{self, RunPlan};
use dhry::report::{self, Setup, Summary};

/// Runs Dhrystone 2.1 and reports Dhrystones per second, DMIPS (Dhrystones per second /
/// 1757) and DMIPS/MHz, per core, per cluster and in total.
///
/// One copy runs in each forked child, pinned to its CPU (-P, --cpus, --sched or
/// LMBENCH_SCHED; by default one child on the first allowed CPU), all starting together. The
/// text starts with the reference's printout of the final values and their "should be"
/// values; a child whose values differ is named on stderr and the exit status is 1. Exit
/// status: 0 ok, 1 measurement or verification failed (or a noisy run with
/// --fail-on-noise), 2 bad usage or input.
#[derive(Debug, Parser)]
#[command(name = "dhry", version)]
struct Cli {
    /// Make every child's timed loop last at least this many seconds (0.001 to 86400); the
    /// run count is calibrated to it on the fastest CPU of the run. The reference requires at
    /// least 2 seconds.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 2.0,
        value_parser = parallel::parse_seconds,
        allow_negative_numbers = true
    )]
    time: f64,

    /// Time exactly this many runs through Dhrystone in every child; overrides --time. By
    /// default the count is calibrated to --time.
    #[arg(long, value_name = "N", value_parser = parallel::parse_runs, allow_negative_numbers = true)]
    runs: Option<u64>,

    /// Load every child's core for about this many seconds (0.001 to 86400), all starting
    /// together (power and temperature tests): the run count is sized on the slowest CPU of the run, and children
    /// that finish first keep running untimed until the last one ends. Not with --time or
    /// --runs.
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = parallel::parse_seconds,
        allow_negative_numbers = true,
        conflicts_with_all = ["time", "runs"]
    )]
    duration: Option<f64>,

    /// Core clock in MHz for DMIPS/MHz, the same for every child. Default: the clock each
    /// child measured right before and after its loop (three instruction chains that must
    /// agree, labelled an estimate); where it cannot, cpufreq's cpuinfo_max_freq; with
    /// neither, DMIPS/MHz is unavailable and the report says why.
    #[arg(long, value_name = "MHZ", value_parser = benchmp::freq::parse_mhz, allow_negative_numbers = true)]
    mhz: Option<f64>,

    /// Build variant to run: strict keeps every procedure a call, as the Dhrystone rules
    /// require (compare with C at gcc -O2 -fno-inline); pack-inline adds exactly the inlining
    /// gcc -O2 performs within each source file, which the rules forbid but published -O2
    /// figures include.
    #[arg(long, value_enum, default_value_t = Variant::Strict)]
    variant: Variant,

    #[command(flatten)]
    placement: PlacementArgs,

    #[command(flatten)]
    output: OutputArgs,
}

/// How the contract test runs dhry (benchmp::cli::Example).
const EXAMPLES: &[benchmp::cli::Example] = &[benchmp::cli::Example {
    command: "",
    quick: "--runs 1000",
    long: "--time 1000 --json={tmp}/out.json --md={tmp}/out.md",
}];

fn main() {
    benchmp::tool::main(
        "dhry",
        EXAMPLES,
        &[benchmp::error::probe::<dhry::Error>],
        |c: &Cli| c.output.trace,
        |c| run(&c),
    )
}

fn run(cli: &Cli) -> Result<i32> {
    cli.output.check()?;
    let plan = match (cli.duration, cli.runs) {
        (Some(seconds), _) => RunPlan::AboutSeconds(seconds),
        (None, Some(runs)) => RunPlan::Runs(runs),
        (None, None) => RunPlan::AtLeastSeconds(cli.time),
    };
    let timed = dhry::run::time(cli.variant, plan, &cli.placement, &cli.output)?;
    let session = timed.session;
    let setup = Setup {
        variant: cli.variant,
        plan,
        attempts: timed.attempts,
        probes: timed.probes,
        aggregate: cli.output.aggregate,
        build: benchmp::host::Build::current(),
    };
    let clock_of =
        |cpu, probed| benchmp::freq::clock_of_child(&session.topology, cpu, cli.mhz, probed);
    let m = &session.measurements()[0];
    let summary = Summary::new(m, &timed.loops, &session.topology, setup, clock_of);
    let report = session.finish(&cli.output, Some(summary.clone()));
    // Decided before the report is written, which it is either way.
    let failed = !summary.verification_passed;
    let code = benchmp::emit(&report, &cli.output, |_| report::render_text(&summary))?;

    if let Some(warning) = report::text::short_loop_warning(&summary) {
        benchmp::console::err(&warning);
    }
    if failed {
        benchmp::console::err(&report::text::verification_failure(&summary));
        return Ok(EXIT_FAILED);
    }
    Ok(code)
}
