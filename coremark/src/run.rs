//! One `coremark` run: the iteration count chosen once on the fastest CPU of the run (as the
//! reference does on its main thread), one timed interval in every context's child, and a
//! count sized automatically that still gave a run under the reference's 10 s scaled up and
//! timed again.

use std::io::IsTerminal;
use std::time::Duration;

use benchmp::cli::{OutputArgs, PlacementArgs, TimingArgs};
use benchmp::sys::affinity::with_pinned;
use benchmp::{Iterations, Session, Spec};

use crate::parallel::{self, ContextBench};
use crate::report::{ContextRun, CoreMarkData, Params};
use crate::timing::{self, MAX_ATTEMPTS, MIN_VALID_SECONDS};
use crate::{Context, Error, text};

/// The nominal count of a benchmp ab worker, whose repetitions the driver sizes.
pub const WORKER_ITERATIONS: u32 = 100;

/// Longest deadline given to a silent child, however slow the run looks.
const MAX_TIMEOUT: Duration = Duration::from_secs(30 * 24 * 3600);

/// The timed runs of every context.
#[derive(Debug)]
pub struct Timed {
    /// The session holding the one measurement of the last attempt.
    pub session: Session<CoreMarkData>,
    /// Iterations each context timed.
    pub iterations: u32,
    /// Each context's timed run and CRCs.
    pub runs: Vec<ContextRun>,
}

/// Times `ctx`'s seeds and size in one context per child `placement` asks for: `given`
/// iterations (0 or `None`: chosen as the reference does), again with more while an
/// automatic count falls short of the 10 s a valid result needs.
pub fn time(
    ctx: &mut Context,
    given: Option<u32>,
    placement: &PlacementArgs,
    reports: &OutputArgs,
) -> Result<Timed, Error> {
    let timing = TimingArgs {
        repetitions: 1,
        ..Default::default()
    };
    let mut session = Session::start("coremark", placement, &timing, Some(reports))?;
    let contexts = session.parallel();
    let progress = std::io::stderr().is_terminal();
    let given = given.filter(|&n| n > 0);
    let paced = session.paced();
    let sizing_cpu = parallel::sizing_cpu(&session.topology, &session.placement.cpus);
    let (mut iterations, ns_per_iteration) = with_pinned(sizing_cpu, || match given {
        Some(n) => (n, timing::estimate_ns_per_iteration(ctx, n)),
        // Under benchmp ab the driver sizes one count for both builds: no 10 s sizing here.
        None if paced => (
            WORKER_ITERATIONS,
            timing::estimate_ns_per_iteration(ctx, WORKER_ITERATIONS),
        ),
        None => {
            if progress {
                benchmp::console::err(text::CHOOSING);
            }
            let auto = timing::auto_iterations(ctx);
            let m = auto.decided_by;
            let per = m.elapsed_ns as f64 / f64::from(m.iterations.max(1));
            (auto.iterations, per)
        }
    })
    .map_err(|source| Error::Sizing { source })?;
    if progress {
        benchmp::console::err(&text::timing(iterations, contexts));
    }

    // One timed interval per child. A count sized automatically that still gave a run under
    // the 10 s the reference needs (the machine was busier while sizing than while timing)
    // is scaled up and timed again, in a fresh session so the report holds only that run.
    let mut attempts = 1;
    loop {
        let runs = timed_run(&mut session, placement, ctx, iterations, ns_per_iteration)?;
        let shortest = runs
            .iter()
            .map(|r| r.run.seconds())
            .fold(f64::INFINITY, f64::min);
        // Under benchmp ab the repetitions are the driver's: no second run.
        if given.is_some() || paced || shortest >= MIN_VALID_SECONDS || attempts >= MAX_ATTEMPTS {
            return Ok(Timed {
                session,
                iterations,
                runs,
            });
        }
        let scaled = f64::from(iterations) * 1.2 * MIN_VALID_SECONDS / shortest.max(0.001);
        iterations = scaled.min(f64::from(u32::MAX)) as u32;
        attempts += 1;
        benchmp::console::err(&text::again(shortest, iterations, attempts));
        session = Session::start("coremark", placement, &timing, Some(reports))?;
    }
}

/// Times `iterations` in every context (one fixed-count interval per child) and returns the
/// contexts' runs and CRCs.
fn timed_run(
    session: &mut Session<CoreMarkData>,
    placement: &PlacementArgs,
    ctx: &Context,
    iterations: u32,
    ns_per_iteration: f64,
) -> Result<Vec<ContextRun>, Error> {
    // A silent child is called hung only well after the expected run time (a slow core may
    // take several times the sizing CPU's time).
    session.set_repetitions(1);
    let expected_s = ns_per_iteration * f64::from(iterations) / 1e9;
    let timeout = Duration::try_from_secs_f64(placement.timeout as f64 + 10.0 * expected_s)
        .unwrap_or(MAX_TIMEOUT)
        .min(MAX_TIMEOUT);
    session.set_min_timeout(timeout);
    let mut spec = Spec::rate(
        "coremark",
        1.0,
        "iterations/s",
        Params {
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
    let (seeds, size) = (ctx.seeds(), ctx.total_size());
    let measurement = session.measure(spec, |_child| {
        // Built in the child after pinning, so its data is first touched on its own core.
        Ok(ContextBench::new(seeds, size)?)
    })?;
    parallel::context_runs(measurement)
}
