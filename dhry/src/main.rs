//! socbench `dhry`: Dhrystone 2.1 with DMIPS and DMIPS/MHz, one copy per forked, pinned
//! child through benchmp (one child by default). See README.md.

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{Context, Result};
use benchmp::cli::{OutputArgs, PlacementArgs, TimingArgs};
use benchmp::run::Iterations;
use benchmp::{ChildInfo, EXIT_FAILED, Session, Spec};
use clap::Parser;
use dhry::measure::scale_runs;
use dhry::parallel::{self, LoopBench, Probe, RunPlan};
use dhry::report::{self, Setup, Summary};
use dhry::{VAX_11_780_DHRYSTONES_PER_SECOND, Variant};

/// Largest accepted `--runs` (about a day at 10^10 runs per second).
const MAX_RUNS: u64 = 1_000_000_000_000_000;
/// Shortest accepted `--time` and `--duration`, in seconds: the probe that sizes the run
/// count lasts at least this long, so a shorter target cannot be sized.
const MIN_SECONDS: f64 = 0.001;
/// Longest accepted `--time` and `--duration`, in seconds.
const MAX_SECONDS: f64 = 86_400.0;
/// Timed loops tried for `--time` before settling for one shorter than the target.
const MAX_ATTEMPTS: u32 = 4;

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
        value_parser = parse_seconds,
        allow_negative_numbers = true
    )]
    time: f64,

    /// Time exactly this many runs through Dhrystone in every child; overrides --time. By
    /// default the count is calibrated to --time.
    #[arg(long, value_name = "N", value_parser = parse_runs, allow_negative_numbers = true)]
    runs: Option<u64>,

    /// Load every child's core for about this many seconds (0.001 to 86400), all starting
    /// together (power and temperature tests): the run count is sized on the slowest CPU of the run, and children
    /// that finish first keep running untimed until the last one ends. Not with --time or
    /// --runs.
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = parse_seconds,
        allow_negative_numbers = true,
        conflicts_with_all = ["time", "runs"]
    )]
    duration: Option<f64>,

    /// Core clock in MHz for DMIPS/MHz, the same for every child. Default: the clock each
    /// child measured right before and after its loop (a chain of 1-cycle adds, labelled an
    /// estimate); where it cannot, cpufreq's cpuinfo_max_freq, then /proc/cpuinfo's "cpu MHz".
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
        Ok(x) if (MIN_SECONDS..=MAX_SECONDS).contains(&x) => Ok(x),
        Ok(_) => Err(format!(
            "must be at least {MIN_SECONDS} and at most {MAX_SECONDS} seconds"
        )),
        Err(_) => Err("not a number of seconds".to_string()),
    }
}

fn main() {
    let cli: Cli = benchmp::cli::parse();
    benchmp::cli::init_logging(cli.output.trace);
    let code = match run(&cli) {
        Ok(code) => code,
        Err(e) => benchmp::cli::report_error("dhry", &e),
    };
    benchmp::cli::exit(code);
}

fn run(cli: &Cli) -> Result<i32> {
    cli.output.check()?;
    let plan = match (cli.duration, cli.runs) {
        (Some(seconds), _) => RunPlan::AboutSeconds(seconds),
        (None, Some(runs)) => RunPlan::Runs(runs),
        (None, None) => RunPlan::AtLeastSeconds(cli.time),
    };
    let timing = TimingArgs {
        repetitions: 1,
        ..TimingArgs::default()
    };

    let mut session = Session::start("dhry", &cli.placement, &timing)?;
    let probes = probe(cli.variant, plan, &session)?;
    let mut runs = parallel::size_runs(plan, &probes);
    let mut attempts = 1;
    let loops = loop {
        let expected_s = parallel::expected_seconds(runs, &probes);
        announce(session.parallel(), runs, expected_s);
        session.set_repetitions(1);
        session.set_min_timeout(Duration::from_secs_f64(expected_s * 3.0 + 60.0));
        let mut spec = Spec::rate(
            "dhrystone",
            1.0 / VAX_11_780_DHRYSTONES_PER_SECOND,
            "DMIPS",
            report::Params {
                variant: cli.variant,
                runs,
            },
        );
        spec.iterations = Iterations::Fixed(runs);
        spec.subtract_loop_overhead = false;
        let variant = cli.variant;
        let m = session.measure(spec, |_: &ChildInfo| Ok(LoopBench::new(variant, runs)))?;
        let loops = parallel::loop_results(m)?;
        match rerun_count(plan, runs, &loops) {
            // Under benchmp ab the repetitions are the driver's: no second run.
            Some(more) if attempts < MAX_ATTEMPTS && !benchmp::run::worker::active() => {
                // A fresh session, so the report holds only the loop it describes.
                attempts += 1;
                runs = more;
                session = Session::start("dhry", &cli.placement, &timing)?;
            }
            _ => break loops,
        }
    };

    let setup = Setup {
        variant: cli.variant,
        plan,
        attempts,
        probes,
        aggregate: cli.output.aggregate,
        build: benchmp::host::Build::current(),
    };
    let clock_of =
        |cpu, probed| benchmp::freq::clock_of_child(&session.topology, cpu, cli.mhz, probed);
    let m = &session.measurements()[0];
    let summary = Summary::new(m, &loops, &session.topology, setup, clock_of);
    let mut report = session.finish(&cli.output, Some(summary.clone()));
    report.figures = benchmp::figure::default_figures(&report.measurements, |m| {
        format!("dhrystone {}", m.params.variant)
    });
    let code = benchmp::emit(&report, &cli.output, |_| report::render_text(&summary))?;

    warn_about_short_loops(&summary);
    if !summary.verification_passed {
        for line in summary.verification_errors() {
            eprintln!("dhry: error: {line}");
        }
        let failed = summary
            .children
            .iter()
            .filter(|c| !c.verification.passed)
            .count();
        eprintln!(
            "dhry: error: verification failed in {failed} of {} children",
            summary.children.len()
        );
        return Ok(EXIT_FAILED);
    }
    Ok(code)
}

/// Times the variant on one CPU per cluster the children run on (the parent pinned there
/// for the probe, its mask restored after), before any child is forked.
fn probe(variant: Variant, plan: RunPlan, session: &Session<report::Dhry>) -> Result<Vec<Probe>> {
    // Under benchmp ab the driver sizes the repetitions: a short probe only sets the timeout,
    // where --time's 0.2 s probe cost every worker 0.3-0.4 s before its first pair.
    let time = if benchmp::run::worker::active() {
        WORKER_PROBE
    } else {
        parallel::probe_time(plan)
    };
    parallel::sizing_cpus(&session.topology, &session.placement.cpus)
        .into_iter()
        .map(|cpu| {
            benchmp::sys::affinity::with_pinned(cpu, || parallel::probe_here(variant, cpu, time))
                .map_err(anyhow::Error::msg)
                .context("sizing the run count")?
                .context("sizing the run count")
        })
        .collect()
}

/// The probe of a benchmp ab worker (the probe of `--runs`).
const WORKER_PROBE: Duration = Duration::from_millis(5);

/// For `--time`: a larger run count when a child's loop fell short of the target (a clock
/// that rose after the probe, say); `None` when every loop reached it.
fn rerun_count(
    plan: RunPlan,
    runs: u64,
    loops: &[(
        benchmp::run::Sample<parallel::LoopDetail>,
        parallel::LoopDetail,
    )],
) -> Option<u64> {
    let RunPlan::AtLeastSeconds(seconds) = plan else {
        return None;
    };
    let target_ns = (seconds * 1e9) as u64;
    loops
        .iter()
        .filter(|(s, _)| s.elapsed_ns < target_ns)
        .map(|(s, _)| scale_runs(runs, s.elapsed_ns, target_ns))
        .max()
}

/// Says what is about to run, on a terminal only, when it takes a while.
fn announce(children: usize, runs: u64, expected_s: f64) {
    if expected_s >= 5.0 && std::io::stderr().is_terminal() {
        eprintln!(
            "dhry: {children} {} of {runs} runs, about {expected_s:.0} s",
            if children == 1 { "child" } else { "children" }
        );
    }
}

/// Flags loops shorter than the 2 s the reference requires.
fn warn_about_short_loops(s: &Summary) {
    let shortest = s
        .children
        .iter()
        .filter(|c| !c.reference_min_time_met)
        .min_by_key(|c| c.elapsed_ns);
    if let Some(c) = shortest {
        let whose = if s.children.len() == 1 {
            "the timed loop".to_string()
        } else {
            format!("the timed loop of {}", c.who())
        };
        eprintln!(
            "dhry: warning: {whose} lasted {:.3} s, less than the 2 s the reference requires; \
             use more runs or --time 2",
            c.elapsed_ns as f64 / 1e9
        );
    }
}
