//! socbench `coremark`: runs the CoreMark-compatible workload, one context per forked,
//! pinned process through benchmp, and prints the reference's report (or benchmp's JSON /
//! CSV with this report inside). See README.md in this folder.

use std::io::IsTerminal;
use std::time::Duration;

use benchmp::cli::{OutputArgs, PlacementArgs, TimingArgs};
use benchmp::sys::affinity::with_pinned;
use benchmp::{EXIT_FAILED, Iterations, Session, Spec, Usage};
use clap::Parser;
use coremark::parallel::{self, ContextBench};
use coremark::report::{BuildInfo, CoreMarkData, Report};
use coremark::timing::MIN_VALID_SECONDS;
use coremark::{Context, DEFAULT_TOTAL_SIZE, Seeds, parse, timing};

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
        value_parser = seeds_arg,
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
        value_parser = size_arg,
        allow_hyphen_values = true
    )]
    size: u32,

    /// Iterations each context times (up to 4294967295; K and M suffixes allowed). By
    /// default (or with 0) the count is chosen once, as the reference does, on the fastest
    /// CPU of the run: ×10 until a run takes at least 1 s, then scaled so the timed run
    /// lasts at least 10 s. A context that runs under 10 s makes the result invalid.
    #[arg(long, value_name = "N", value_parser = iterations_arg, allow_hyphen_values = true)]
    iterations: Option<u32>,

    #[command(flatten)]
    placement: PlacementArgs,

    #[command(flatten)]
    output: OutputArgs,
}

fn seeds_arg(text: &str) -> Result<Seeds, String> {
    parse::seeds(text).map_err(|e| e.to_string())
}

fn size_arg(text: &str) -> Result<u32, String> {
    parse::size(text).map_err(|e| e.to_string())
}

fn iterations_arg(text: &str) -> Result<u32, String> {
    parse::iterations(text).map_err(|e| e.to_string())
}

fn main() {
    let cli: Cli = benchmp::cli::parse();
    benchmp::cli::init_logging(cli.output.trace);
    let code = match run(&cli) {
        Ok(code) => code,
        Err(e) => benchmp::cli::report_error("coremark", &e),
    };
    benchmp::cli::exit(code);
}

/// Longest deadline given to a silent child, however slow the run looks.
const MAX_TIMEOUT: Duration = Duration::from_secs(30 * 24 * 3600);

fn run(cli: &Cli) -> anyhow::Result<i32> {
    let out = &cli.output;
    out.check()?;
    // Checks the size now, and sizes the iteration count in this (single-threaded) process.
    let mut ctx = Context::new(cli.seeds, cli.size).map_err(|e| Usage(e.to_string()))?;
    let timing = TimingArgs {
        repetitions: 1,
        ..Default::default()
    };
    let mut session = Session::start("coremark", &cli.placement, &timing)?;
    let contexts = session.parallel();
    let progress = std::io::stderr().is_terminal();
    let sizing_cpu = parallel::sizing_cpu(&session.topology, &session.placement.cpus);
    let (iterations, ns_per_iteration) = with_pinned(sizing_cpu, || match cli.iterations {
        Some(n) if n > 0 => (n, timing::estimate_ns_per_iteration(&mut ctx, n)),
        // Under benchmp ab the driver sizes one count for both builds: no 10 s sizing here.
        _ if benchmp::run::worker::active() => (
            WORKER_ITERATIONS,
            timing::estimate_ns_per_iteration(&mut ctx, WORKER_ITERATIONS),
        ),
        _ => {
            if progress {
                eprintln!(
                    "coremark: choosing the iteration count (runs of 10, 100, ... iterations)"
                );
            }
            let auto = timing::auto_iterations(&mut ctx);
            let m = auto.decided_by;
            let per = m.elapsed_ns as f64 / f64::from(m.iterations.max(1));
            (auto.iterations, per)
        }
    })
    .map_err(|m| anyhow::anyhow!("sizing the iteration count: {m}"))?;
    if progress {
        eprintln!("coremark: timing {iterations} iterations in each of {contexts} context(s)");
    }

    // One timed interval per child. A count sized automatically that still gave a run under
    // the 10 s the reference needs (the machine was busier while sizing than while timing)
    // is scaled up and timed again, in a fresh session so the report holds only that run.
    let mut iterations = iterations;
    let mut attempts = 1;
    let runs = loop {
        let runs = timed_run(&mut session, cli, &ctx, iterations, ns_per_iteration)?;
        let shortest = runs
            .iter()
            .map(|r| r.run.seconds())
            .fold(f64::INFINITY, f64::min);
        let given = matches!(cli.iterations, Some(n) if n > 0);
        // Under benchmp ab the repetitions are the driver's: no second run.
        let worker = benchmp::run::worker::active();
        if given || worker || shortest >= MIN_VALID_SECONDS || attempts >= MAX_ATTEMPTS {
            break runs;
        }
        let scaled = f64::from(iterations) * 1.2 * MIN_VALID_SECONDS / shortest.max(0.001);
        iterations = scaled.min(f64::from(u32::MAX)) as u32;
        attempts += 1;
        eprintln!(
            "coremark: the timed run lasted {shortest:.3} s, under the {MIN_VALID_SECONDS} s needed; timing {iterations} iterations again (attempt {attempts} of {MAX_ATTEMPTS})"
        );
        session = Session::start("coremark", &cli.placement, &timing)?;
    };

    let report = Report::new(&ctx, iterations, &runs, &BuildInfo::current());
    let framework = session.finish(out, Some(report.clone()));
    let code = benchmp::emit(&framework, out, |r| {
        report.text_with_figures(r, out.aggregate)
    })?;
    // Under benchmp ab a repetition lasts the driver's few milliseconds, not the 10 s a
    // CoreMark-compatible result needs: only a CRC mismatch makes that run fail.
    let paired = benchmp::run::worker::active() && report.mismatches.is_empty();
    if report.has_errors() && !paired {
        eprintln!(
            "coremark: result not valid: {}",
            report.problems().join("; ")
        );
        return Ok(EXIT_FAILED);
    }
    Ok(code)
}

/// The nominal count of a benchmp ab worker, whose repetitions the driver sizes.
const WORKER_ITERATIONS: u32 = 100;

/// Timed runs of an automatically sized count, at most (the first included).
const MAX_ATTEMPTS: u32 = 3;

/// Times `iterations` in every context (one fixed-count interval per child) and returns the
/// contexts' runs and CRCs.
fn timed_run(
    session: &mut Session<CoreMarkData>,
    cli: &Cli,
    ctx: &Context,
    iterations: u32,
    ns_per_iteration: f64,
) -> anyhow::Result<Vec<coremark::report::ContextRun>> {
    // A silent child is called hung only well after the expected run time (a slow core may
    // take several times the sizing CPU's time).
    session.set_repetitions(1);
    let expected_s = ns_per_iteration * f64::from(iterations) / 1e9;
    let timeout = Duration::try_from_secs_f64(cli.placement.timeout as f64 + 10.0 * expected_s)
        .unwrap_or(MAX_TIMEOUT)
        .min(MAX_TIMEOUT);
    session.set_min_timeout(timeout);
    let mut spec = Spec::rate(
        "coremark",
        1.0,
        "iterations/s",
        coremark::report::Params {
            seed1: ctx.seeds().seed1,
            seed2: ctx.seeds().seed2,
            seed3: ctx.seeds().seed3,
            total_size_bytes: ctx.total_size(),
            size_per_algorithm_bytes: ctx.size_per_algorithm(),
            iterations_per_context: iterations,
        },
    );
    spec.iterations = Iterations::Fixed(u64::from(iterations));
    spec.subtract_loop_overhead = false;
    let (seeds, size) = (cli.seeds, cli.size);
    let measurement = session.measure(spec, |_child| {
        // Built in the child after pinning, so its data is first touched on its own core.
        Ok(ContextBench::new(seeds, size)?)
    })?;
    parallel::context_runs(measurement)
}
