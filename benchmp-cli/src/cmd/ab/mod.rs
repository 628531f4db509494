//! `benchmp ab 'CMD_A' 'CMD_B'`: a paired, interleaved A/B verdict for two builds (or two
//! settings) of one tool.
//!
//! Both commands start as workers ([`benchmp::run::worker`]): their children are forked,
//! pinned, sized and warm before anything is timed. Then, measurement by measurement, the
//! driver asks each side for one repetition at a time, the two halves of a pair back to back
//! in random order, so the machine's drift falls on both alike. Each figure is paired in
//! several fresh pairs of workers (`--processes`), since two processes of one build can
//! differ for their whole life; each process pair's estimate is one unit of the test
//! ([`benchmp_cli::stats::paired`]: Student's t interval on the process pairs' mean, looked at
//! after every process pair with alpha spent over the looks by an O'Brien-Fleming-type
//! function). B is the current side: FAIL means B is worse than A by more than `--min-effect`.
//!
//! The driver is here; each figure's pairs as they accumulate are [`tally`], a side's worker
//! process [`side`], and the result's text, JSON and CSV (`benchmp compare`'s layout) [`export`].

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use benchmp::run::worker::{self, StepSample, ToDriver, ToWorker};
use benchmp::schema::Better;
use benchmp::schema::Metric;
use benchmp::stats::verdict::Verdict;
use benchmp::{EXIT_FAILED, EXIT_OK, Pages, Usage};
use benchmp_cli::compare::paired::{
    AbLayout, AbRule, Order, PairedFigure, ProcessPair, SideInfo, Unit,
};
use benchmp_cli::stats::paired::sequential::{Spending, confidence_at};
use benchmp_cli::stats::paired::{self, Decision, Judgement, Looks};

mod args;
mod driver;
mod export;
mod layout;
mod plan;
mod side;
mod tally;
#[cfg(test)]
mod tests;

pub use args::AbArgs;
use export::write_outputs;
use plan::Plan;
use side::{Prepared, Worker, XorShift, bounded};
use tally::{Ready, Tally, pair_block};

/// How long a command may take to say hello: a socbench tool does so as its session starts,
/// before any calibration or measurement, in milliseconds; a command silent this long is not
/// one.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// The most [`HELLO_TIMEOUT`] grows by the time a command waited for a CPU on a busy machine.
const HELLO_TIMEOUT_MAX: Duration = Duration::from_secs(60);
/// The longest line a worker may send (a step's samples of a thousand children take a few
/// hundred KiB); a longer one is not a message.
const MAX_LINE: usize = 1 << 20;
/// How much of the end of a worker's output is kept, and read for its error line.
const OUTPUT_TAIL: u64 = 64 << 10;
/// A worker's output file is cut back to its tail once it grows past this.
const OUTPUT_LIMIT: u64 = 4 << 20;
/// The most characters of a worker's text (a name, a unit, an error line) shown.
const SHOWN: usize = 300;
/// How long a worker may take to get a measurement's children ready (buffers allocated and
/// first touched, counts sized).
const READY_TIMEOUT: Duration = Duration::from_secs(600);
/// How long one step may take beyond 100 repetitions' worth.
const STEP_SLACK: Duration = Duration::from_secs(60);
/// Pairs before the first look, without `--pairs`.
const FIRST_LOOK: usize = 16;
/// Pairs at most per figure, without `--pairs`.
const MAX_PAIRS: usize = 4096;
/// Process pairs before the first look over them: the t interval of fewer is too wide to
/// decide anything at the confidence an early look has.
const FIRST_PROCESS_LOOK: usize = 4;
/// The least information (share of the budget) between two looks over process pairs: closer
/// looks add nothing and cost the boundaries' accuracy.
const MIN_LOOK_STEP: f64 = 0.02;
/// Repetition pairs at least per figure in each process pair.
const MIN_BLOCK_PAIRS: usize = 3;
/// The process pairs the budget is first planned over, until the figure's variance
/// components say how to spend it.
const PLANNED_PROCESSES: usize = 16;
/// The process pairs after which a figure's block length is planned from its variance
/// components (and again after twice as many, and so on: few process pairs tell the between
/// part only roughly).
const REPLAN_AFTER: usize = 3;
/// The F test's p-value at or below which a figure's between-process part is taken as real.
const BETWEEN_SHOWN: f64 = 0.05;
/// The fewest process pairs a plan keeps, so the t interval has degrees of freedom.
const MIN_PLANNED: usize = 8;
/// Repetition pairs at least between two renewals of a figure's buffers.
const RENEW_PAIRS: usize = 4;
/// The most of a process pair's time its buffer renewals may take.
const RENEW_SHARE: f64 = 0.1;

/// How a worker ended.
#[derive(Debug, Clone, PartialEq)]
struct End {
    exit: Option<i32>,
    signal: Option<String>,
    error: Option<String>,
    stopped: bool,
}

impl End {
    /// Stopped by the driver because the other side failed.
    fn stopped() -> End {
        End {
            exit: None,
            signal: None,
            error: Some("stopped by benchmp ab when the other side failed".into()),
            stopped: true,
        }
    }
}

impl Default for End {
    /// Ended with exit status 0.
    fn default() -> Self {
        End {
            exit: Some(0),
            signal: None,
            error: None,
            stopped: false,
        }
    }
}

/// One figure's paired comparison: its name, unit, direction and verdict, each side's median,
/// and its pairs as a comparison's row carries them.
#[derive(Debug, Clone, PartialEq)]
pub struct AbFigure {
    /// The measurement (`rd 64M`).
    pub measurement: String,
    /// Unit of the figure.
    pub unit: String,
    /// Which way is better.
    pub better: Better,
    /// Median of A's repetitions.
    pub base_median: f64,
    /// Median of B's.
    pub current_median: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// The pairs, their judgement and where their variance lives.
    pub paired: PairedFigure,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct AbReport {
    /// A.
    pub base: SideInfo,
    /// B.
    pub current: SideInfo,
    /// The rule.
    pub rule: AbRule,
    /// Every figure.
    pub figures: Vec<AbFigure>,
    /// Set when a stop signal ended the comparison early: the figures hold the pairs taken
    /// until then, judged as they stand.
    pub incomplete: Option<benchmp::report::Incomplete>,
}

impl AbReport {
    /// Figures per verdict.
    fn count(&self, v: Verdict) -> usize {
        self.figures.iter().filter(|f| f.verdict == v).count()
    }
}

/// Runs `benchmp ab`; the exit status: 1 when a figure regressed (or a side failed at the
/// end), 0 otherwise.
pub fn run(args: &AbArgs) -> Result<i32> {
    let mut driver = driver::Driver::new(args)?;
    let guard = benchmp::sys::process::InterruptGuard::install();
    // The process pairs; a stop signal ends them with the pairs taken kept (the report).
    let outcome = driver.pairs();
    let interrupted = benchmp::sys::process::interrupted();
    drop(guard);
    let report = driver.report(outcome, interrupted)?;
    write_outputs(&report, args)?;
    if let Some(i) = &report.incomplete {
        benchmp::errln!(
            "benchmp: ab interrupted by {}: the pairs of {} figure(s) taken so far are in the report, marked incomplete",
            i.signal,
            i.measured
        );
        if let Some(sig) = interrupted {
            return Err(benchmp::Error::Interrupted(sig).into());
        }
    }
    for (name, side) in [("A", &report.base), ("B", &report.current)] {
        if side.exit != Some(0) && !side.stopped {
            let how = match (side.exit, &side.signal) {
                (Some(c), _) => format!("ended with exit status {c}"),
                (None, Some(sig)) => format!("was killed by {sig}"),
                (None, None) => "failed".to_string(),
            };
            benchmp::errln!(
                "benchmp: {name} {how}: {}",
                side.error.as_deref().unwrap_or("(no message)")
            );
        }
    }
    let side_failed = report.base.exit != Some(0) || report.current.exit != Some(0);
    Ok(if report.count(Verdict::Fail) > 0 || side_failed {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}

/// True when `--time` bounds the process pairs (over several of them, without `--pairs`).
fn budgeted(args: &AbArgs) -> bool {
    args.processes > 1 && args.pairs.is_none()
}

/// The whole comparison's budget: `--time` for each of its figures (one before any is known).
fn total_budget(args: &AbArgs, figures: usize) -> Duration {
    Duration::from_secs_f64(args.time * figures.max(1) as f64)
}

/// One look at every undecided figure's process pairs at information fraction `t`: the
/// spending function gives this look's confidence, and a figure is decided when its interval
/// says so, or at the last look whatever it says (NOISY with the reason when undecided).
fn look(
    rule: &mut AbRule,
    spending: &mut Spending,
    tallies: &mut [Tally],
    t: f64,
    last: bool,
    processes: usize,
) {
    rule.confidence = confidence_at(spending.look(t));
    rule.looked_at = spending.times().to_vec();
    for tally in tallies.iter_mut().filter(|t| t.judgement.is_none()) {
        let mut j = tally.judge_processes(rule);
        if last || j.decision != Decision::Undecided {
            if let (Decision::Undecided, Some(n)) = (j.decision, rule.budget_spent_after) {
                j.why = Some(format!(
                    "{}; --time ran out after {n} of {processes} process pairs",
                    j.why.as_deref().unwrap_or("undecided"),
                ));
            }
            tally.judgement = Some(j);
        }
    }
}

/// Waits up to a second for either side to be seen ended, after an error that a side's end
/// may explain.
fn settle(a: &mut Worker, b: &mut Worker) {
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        a.poll_exit();
        b.poll_exit();
        if a.exit.is_some() || b.exit.is_some() || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Pairs every measurement of one process pair in turn (or passes over those decided); the
/// first process pair sizes each count and starts each figure's tally.
fn pair_round(
    args: &AbArgs,
    rule: &AbRule,
    plan: &Plan,
    rng: &mut XorShift,
    (a, b): (&mut Worker, &mut Worker),
    tallies: &mut Vec<Tally>,
    index: &mut usize,
) -> Result<()> {
    while let Some(ready) = next_measurement(a, b)? {
        let round = plan.round;
        if round == 0 {
            // A sizes the count alone on the CPUs (B waits); both sides, in every process
            // pair, then run that count.
            let iterations = a.size()?.into_iter().max().unwrap_or(1).max(1);
            tallies.push(Tally::new(ready, iterations, rule.alpha));
        } else if tallies.get(*index).map(|t| t.ready.figure()) != Some(ready.figure()) {
            anyhow::bail!(
                "process pair {}: measurement {} is '{}', not what the first pair measured there: each run of the command must measure the same figures in the same order",
                round + 1,
                *index + 1,
                ready.figure()
            );
        }
        let t = &mut tallies[*index];
        if t.judgement.is_some() {
            skip(a, b, rule)?;
        } else {
            // Planned after 3 process pairs, then after 6, 12, ...: a block length that
            // changes every process pair would weigh the process pairs unevenly.
            let n = t.processes.len();
            if n.is_multiple_of(REPLAN_AFTER) && (n / REPLAN_AFTER).is_power_of_two() {
                t.block_pairs = plan.block_pairs(t).or(t.block_pairs);
            }
            let budget = plan.block(t);
            pair_block(args, rule, budget, rng, a, b, t)?;
        }
        *index += 1;
    }
    Ok(())
}

/// When the pairs are looked at. Over process pairs: after each from `FIRST_PROCESS_LOOK` to
/// `--processes` (at least `MIN_LOOK_STEP` of the budget apart, and when it is spent). In
/// one process pair: at `FIRST_LOOK` repetition pairs, doubling, and when the budget is
/// spent; with `--pairs`, once, at the end.
fn looks(args: &AbArgs) -> Looks {
    let (first, max_pairs) = match (args.processes, args.pairs) {
        (1, Some(n)) => (n, n),
        (1, None) => (FIRST_LOOK, MAX_PAIRS),
        (k, _) => (FIRST_PROCESS_LOOK.min(k), k),
    };
    Looks {
        first,
        max_pairs,
        alpha: args.alpha,
    }
}

/// The next measurement both sides are ready for (A's account of it); `None` when both ended,
/// or one failed. Refuses two sides that measure different figures, or on different CPUs.
fn next_measurement(a: &mut Worker, b: &mut Worker) -> Result<Option<Ready>> {
    let ra = a.next_ready()?;
    if a.failed() {
        return Ok(None);
    }
    let rb = b.next_ready()?;
    let (ra, rb) = match (ra, rb) {
        (None, None) => return Ok(None),
        _ if b.failed() => return Ok(None),
        (Some(ra), Some(rb)) => (ra, rb),
        (Some(r), None) | (None, Some(r)) => {
            // A side that ends without an error measured fewer figures than the other: two
            // commands that a plan would have told apart (exit 2).
            let (ended, other) = if a.ended() { (&*a, &*b) } else { (&*b, &*a) };
            return Err(Usage(format!(
                "{} ended while {} went on to measure '{}': ab pairs the same figures of both commands",
                ended.name,
                other.name,
                r.figure()
            ))
            .into());
        }
    };
    same_plan(a, b)?;
    same_figure(&ra, &rb)?;
    // Renewed only when both sides can (an older build says nothing of it).
    Ok(Some(Ready {
        renews: ra.renews && rb.renews,
        params_b: rb.params,
        ..ra
    }))
}

/// Refuses two workers that announced different figures ([`ToDriver::Plan`]), before any
/// pair of them is timed; without both plans the figures are compared one by one.
fn same_plan(a: &Worker, b: &Worker) -> Result<()> {
    let (Some(pa), Some(pb)) = (&a.plan, &b.plan) else {
        return Ok(());
    };
    if pa == pb {
        return Ok(());
    }
    let at = pa.iter().zip(pb).take_while(|(x, y)| x == y).count();
    let figure = |p: &[String]| {
        p.get(at)
            .map_or("nothing more".to_string(), |f| format!("'{f}'"))
    };
    Err(Usage(format!(
        "A measures {} figures and B {}, from figure {} on A {} and B {}: ab pairs the same figures of both commands",
        pa.len(),
        pb.len(),
        at + 1,
        figure(pa),
        figure(pb)
    ))
    .into())
}

/// Refuses two measurements that are not the same figure, or not on the same CPUs.
fn same_figure(ra: &Ready, rb: &Ready) -> Result<()> {
    if ra.figure() != rb.figure() || ra.metric.unit() != rb.metric.unit() {
        return Err(Usage(format!(
            "A measures '{}' ({}) and B '{}' ({}): ab pairs the same figure of both",
            ra.figure(),
            ra.metric.unit(),
            rb.figure(),
            rb.metric.unit()
        ))
        .into());
    }
    if ra.cpus != rb.cpus {
        return Err(Usage(format!(
            "{}: A's children run on CPUs {} and B's on {}: pair them on the same CPUs (--cpus)",
            ra.figure(),
            cpus_text(&ra.cpus),
            cpus_text(&rb.cpus)
        ))
        .into());
    }
    if ra.sequential != rb.sequential && ra.cpus.len() > 1 {
        let how = |s: bool| if s { "one after another" } else { "together" };
        return Err(Usage(format!(
            "{}: A times its children {} and B {}: a figure added over children is not one averaged over them; give both --sequential or neither",
            ra.figure(),
            how(ra.sequential),
            how(rb.sequential)
        ))
        .into());
    }
    Ok(())
}

/// A side's CPUs as a line shows them: the first 16, then how many more (a worker may claim
/// any number).
fn cpus_text(cpus: &[Option<usize>]) -> String {
    const SHOWN_CPUS: usize = 16;
    let mut t = cpus
        .iter()
        .take(SHOWN_CPUS)
        .map(|c| c.map_or("-".to_string(), |c| c.to_string()))
        .collect::<Vec<_>>()
        .join(",");
    if cpus.len() > SHOWN_CPUS {
        t += &format!(" and {} more", cpus.len() - SHOWN_CPUS);
    }
    t
}

/// How long one step may take: 100 repetitions' worth and some slack.
fn step_timeout(rule: &AbRule) -> Duration {
    STEP_SLACK + Duration::from_micros(rule.rep_us.saturating_mul(100))
}

/// Passes over a measurement already decided: one repetition of one iteration on each side
/// (a tool's measurement wants a sample) and on.
fn skip(a: &mut Worker, b: &mut Worker, rule: &AbRule) -> Result<()> {
    a.step(1, step_timeout(rule))?;
    b.step(1, step_timeout(rule))?;
    a.send(ToWorker::Stop)?;
    b.send(ToWorker::Stop)
}
