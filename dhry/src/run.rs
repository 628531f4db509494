//! One `dhry` run: the run count sized on the children's CPUs before any fork, one timed loop
//! in every child, and for `--time` a larger count timed again, in a fresh session, when a
//! loop fell short of the target (a clock that rose after the probe, say).

use std::io::IsTerminal;
use std::time::Duration;

use benchmp::cli::{OutputArgs, PlacementArgs, TimingArgs};
use benchmp::run::{Iterations, Sample};
use benchmp::{ChildInfo, Session, Spec};

use crate::measure::scale_runs;
use crate::parallel::{self, LoopBench, Probe, RunPlan};
use crate::report::LoopDetail;
use crate::report::{Dhry, Params};
use crate::{Error, VAX_11_780_DHRYSTONES_PER_SECOND, Variant};

/// Timed loops tried for `--time` before settling for one shorter than the target.
pub const MAX_ATTEMPTS: u32 = 4;

/// The probe of a benchmp ab worker (the probe of `--runs`).
const WORKER_PROBE: Duration = Duration::from_millis(5);

/// The timed loops of a run and what sized them.
#[derive(Debug)]
pub struct Timed {
    /// The session holding the one measurement of the last attempt.
    pub session: Session<Dhry>,
    /// The parent's probes that sized the run count.
    pub probes: Vec<Probe>,
    /// Each child's timed loop and its record, in child order.
    pub loops: Vec<(Sample<LoopDetail>, LoopDetail)>,
    /// Timed loops made (1 unless `--time` needed more).
    pub attempts: u32,
}

/// Sizes the run count for `plan`, times `variant` once in every child `placement` asks
/// for, and for `--time` again with a larger count while a loop falls short.
pub fn time(
    variant: Variant,
    plan: RunPlan,
    placement: &PlacementArgs,
    reports: &OutputArgs,
) -> Result<Timed, Error> {
    let timing = TimingArgs {
        repetitions: 1,
        ..TimingArgs::default()
    };
    let mut session = Session::start("dhry", placement, &timing, Some(reports))?;
    let probes = probe(variant, plan, &session)?;
    let mut runs = parallel::size_runs(plan, &probes);
    let mut attempts = 1;
    loop {
        let expected_s = parallel::expected_seconds(runs, &probes);
        announce(session.parallel(), runs, expected_s);
        session.set_repetitions(1);
        session.set_min_timeout(Duration::from_secs_f64(expected_s * 3.0 + 60.0));
        let mut spec = Spec::rate(
            "dhrystone",
            1.0 / VAX_11_780_DHRYSTONES_PER_SECOND,
            "DMIPS",
            Params { variant, runs },
        );
        spec.iterations = Iterations::Fixed(runs);
        spec.subtract_loop_overhead = false;
        let m = session.measure(spec, |_: &ChildInfo| Ok(LoopBench::new(variant, runs)))?;
        let loops = parallel::loop_results(m)?;
        match rerun_count(plan, runs, &loops) {
            // Under benchmp ab the repetitions are the driver's: no second run.
            Some(more) if attempts < MAX_ATTEMPTS && !session.paced() => {
                // A fresh session, so the report holds only the loop it describes.
                attempts += 1;
                runs = more;
                session = Session::start("dhry", placement, &timing, Some(reports))?;
            }
            _ => {
                return Ok(Timed {
                    session,
                    probes,
                    loops,
                    attempts,
                });
            }
        }
    }
}

/// Times the variant on one CPU per cluster the children run on (the parent pinned there
/// for the probe, its mask restored after), before any child is forked.
fn probe(variant: Variant, plan: RunPlan, session: &Session<Dhry>) -> Result<Vec<Probe>, Error> {
    // Under benchmp ab the driver sizes the repetitions: a short probe only sets the timeout,
    // where --time's 0.2 s probe cost every worker 0.3-0.4 s before its first pair.
    let time = if session.paced() {
        WORKER_PROBE
    } else {
        parallel::probe_time(plan)
    };
    parallel::sizing_cpus(&session.topology, &session.placement.cpus)
        .into_iter()
        .map(|cpu| {
            benchmp::sys::affinity::with_pinned(cpu, || parallel::probe_here(variant, cpu, time))
                .map_err(|source| Error::Sizing { source })?
                .map_err(|e| Error::Probe {
                    source: Box::new(e),
                })
        })
        .collect()
}

/// For `--time`: a larger run count when a child's loop fell short of the target; `None`
/// when every loop reached it.
pub fn rerun_count(
    plan: RunPlan,
    runs: u64,
    loops: &[(Sample<LoopDetail>, LoopDetail)],
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
        benchmp::errln!(
            "dhry: {children} {} of {runs} runs, about {expected_s:.0} s",
            if children == 1 { "child" } else { "children" }
        );
    }
}
