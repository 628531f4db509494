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
    let inputs = [("A", args.base.as_str()), ("B", args.current.as_str())];
    let mut cmds = Vec::new();
    for (name, text) in inputs {
        cmds.push(Prepared::parse(name, text)?);
    }
    // No report replaces a program being compared (by inode: `./d`, a link to it).
    let programs = benchmp::cli::Protected::new()
        .file("A's program", &cmds[0].program)
        .file("B's program", &cmds[1].program);
    args.files.check_besides(&programs)?;
    let seed = args
        .seed
        .unwrap_or_else(|| benchmp::sys::clock::now_ns() | 1);
    let looks = looks(args);
    let mut rule = AbRule {
        min_effect_pct: args.min_effect,
        alpha: args.alpha,
        time_s: args.pairs.is_none().then_some(args.time),
        processes: args.processes,
        looks,
        looked_at: Vec::new(),
        figures: 1,
        confidence: 1.0 - args.alpha,
        rep_us: (args.rep_ms * 1000.0).round().max(1.0) as u64,
        order: args.order,
        seed,
        budget_spent_after: None,
        pages: args.pages.asked(),
        // Renewed between blocks of a process pair: not with one process pair for all.
        renew: !args.no_renew && args.processes > 1,
        layout: None,
    };
    // Both programs through one exec path and argv[0], both environments evened (layout.rs).
    let opened = (
        layout::Program::open(&cmds[0].program)?,
        layout::Program::open(&cmds[1].program)?,
    );
    let arg0 = cmds[0]
        .program
        .file_name()
        .unwrap_or_default()
        .to_os_string();
    let exec = |p: &Option<layout::Program>, c: &Prepared| match p {
        Some(_) => PathBuf::from(layout::EXEC_PATH),
        None => c.program.clone(),
    };
    let extra = [
        (worker::FDS_ENV, Some("3,4".to_string())),
        (worker::REP_ENV, Some(rule.rep_us.to_string())),
        (worker::PAGES_ENV, rule.pages.clone()),
    ];
    let envs = (
        layout::environment(&cmds[0].env, &extra),
        layout::environment(&cmds[1].env, &extra),
    );
    let room = (
        layout::Room::of(&exec(&opened.0, &cmds[0]), &arg0, &cmds[0].args, &envs.0),
        layout::Room::of(&exec(&opened.1, &cmds[1]), &arg0, &cmds[1].args, &envs.1),
    );
    rule.layout = Some(AbLayout {
        equal_paths: opened.0.is_some() && opened.1.is_some(),
        evened_bytes: layout::evening(room.0, room.1, 0)[0]
            .iter()
            .map(|(k, v)| k.len() + v.len() + 2 + 8)
            .sum::<usize>()
            + room.0.bytes(),
        max_offset_bytes: layout::MAX_OFFSET,
        aslr: args.aslr,
    });
    let guard = benchmp::sys::process::InterruptGuard::install();
    let (a_cmd, b_cmd) = (&cmds[0], &cmds[1]);
    let mut rng = XorShift(seed);
    let mut tallies: Vec<Tally> = Vec::new();
    let mut tools = (String::new(), String::new());
    let mut ends = (End::default(), End::default());
    let started = Instant::now();
    // Alpha spent over the looks at process pairs (per figure once the figures are known).
    let mut spending = Spending::new(args.alpha);
    // What a process pair costs each figure beyond its pairs (start-up, sizing, warm-up), s.
    let mut overhead: Option<f64> = None;
    // The process pairs; a stop signal ends them with the pairs taken kept (below).
    let outcome = (|| -> Result<()> {
        for round in 0..args.processes {
            let round_started = Instant::now();
            let paired_before: f64 = tallies.iter().map(|t| t.seconds).sum();
            let undecided_before = tallies.iter().filter(|t| t.judgement.is_none()).count();
            // The budget holds for the whole comparison, worker start-up included: no process
            // pair starts once it is spent.
            if round > 0 && budgeted(args) && started.elapsed() >= total_budget(args, tallies.len())
            {
                rule.budget_spent_after = Some(round);
                break;
            }
            let plan = Plan::new(args, started, round, &tallies, overhead);
            // Both stacks evened and moved by one random offset for this process pair.
            let offset = rng.below(layout::MAX_OFFSET);
            let [even_a, even_b] = layout::evening(room.0, room.1, offset);
            let (mut env_a, mut env_b) = envs.clone();
            env_a.extend(even_a);
            env_b.extend(even_b);
            let spawn_a = || Worker::spawn(a_cmd, opened.0.as_ref(), &arg0, &env_a, args.aslr);
            let spawn_b = || Worker::spawn(b_cmd, opened.1.as_ref(), &arg0, &env_b, args.aslr);
            // Which side starts first (and sets its buffers up while the other is still
            // starting) is a coin per process pair, so that no order favours one build.
            let (mut a, mut b) = if rng.coin() {
                let a = spawn_a()?;
                (a, spawn_b()?)
            } else {
                let b = spawn_b()?;
                (spawn_a()?, b)
            };
            a.stack_offset = offset;
            b.stack_offset = offset;
            let hellos = a.hello().and_then(|ta| Ok((ta, b.hello()?)));
            let (tool_a, tool_b) = match hellos {
                Ok(tools) => tools,
                // The same commands spoke the protocol in the first process pair: a side that
                // fails to now is a failure of this run, and the pairs taken are kept.
                Err(e) if tallies.iter().any(|t| !t.d.is_empty()) => {
                    let end = |w: &Worker| End {
                        exit: w.exit.and_then(|s| s.code()),
                        signal: w.signal_name(),
                        error: Some(match w.exit {
                            Some(_) => format!(
                                "before its hello in process pair {}: {}",
                                round + 1,
                                w.error_line().unwrap_or_else(|| "(no message)".into())
                            ),
                            None => bounded(&format!("{e:#}")),
                        }),
                        stopped: false,
                    };
                    ends = if a.tool.is_none() {
                        (end(&a), End::stopped())
                    } else {
                        (End::stopped(), end(&b))
                    };
                    break;
                }
                Err(e) => return Err(e),
            };
            if tool_a != tool_b {
                return Err(Usage(format!(
                "A runs {tool_a} and B runs {tool_b}: ab compares two builds or settings of one tool"
            ))
            .into());
            }
            tools = (tool_a, tool_b);
            let mut index = 0;
            let measured = pair_round(
                args,
                &rule,
                &plan,
                &mut rng,
                (&mut a, &mut b),
                &mut tallies,
                &mut index,
            );
            if round == 0 && rule.unit() == Unit::ProcessPairs {
                // The false-alarm rate holds for the whole comparison: split over every figure
                // (a sweep's hundred points would otherwise give a few false verdicts by chance).
                rule.figures = tallies.len().max(1);
                rule.confidence = 1.0 - args.alpha / rule.figures as f64;
                spending = Spending::new(args.alpha / rule.figures as f64);
            }
            let unexplained = measured
                .as_ref()
                .err()
                .is_some_and(|e| e.downcast_ref::<Usage>().is_none());
            if unexplained && benchmp::sys::process::interrupted().is_none() {
                // A command that could not be sent (EPIPE) may come from a side that just died.
                settle(&mut a, &mut b);
            }
            if let Some(failed) = [&a, &b].into_iter().find(|w| w.failed()) {
                if !tallies.iter().any(|t| !t.d.is_empty()) {
                    measured?;
                    let line = format!(
                        "{} ({}) failed: {}",
                        failed.name,
                        failed.status_text(),
                        failed.error_line().unwrap_or_else(|| "(no message)".into())
                    );
                    // Before any pair, a side that said "not supported here" (3) or "bad
                    // input" (2) makes the comparison the same.
                    return Err(match failed.exit.and_then(|e| e.code()) {
                        Some(benchmp::EXIT_UNSUPPORTED) => benchmp::Unsupported(line).into(),
                        Some(benchmp::EXIT_USAGE) => Usage(line).into(),
                        _ => anyhow::anyhow!(line),
                    });
                }
                // The pairs taken are kept: the report is written, with the side that failed.
                ends = (a.end_now(), b.end_now());
                break;
            }
            measured?;
            if index != tallies.len() {
                anyhow::bail!(
                    "process pair {}: the command measured {index} figures, the first pair {}: each run must measure the same figures",
                    round + 1,
                    tallies.len()
                );
            }
            ends = (a.finish()?, b.finish()?);
            if ends.0.exit != Some(0) || ends.1.exit != Some(0) {
                break;
            }
            if rule.unit() == Unit::ProcessPairs {
                let n = round + 1;
                // The figures' share of this process pair beyond their pairs.
                let paired: f64 = tallies.iter().map(|t| t.seconds).sum::<f64>() - paired_before;
                let undecided = if round == 0 {
                    tallies.len()
                } else {
                    undecided_before
                };
                let cost = (round_started.elapsed().as_secs_f64() - paired).max(0.0)
                    / undecided.max(1) as f64;
                // The first process pair's cost includes the sizing of every count.
                overhead = Some(match (round, overhead) {
                    (0 | 1, _) | (_, None) => cost,
                    (_, Some(o)) => 0.5 * (o + cost),
                });
                // Spent when what is left would not pay for half a process pair like this one.
                let total = total_budget(args, tallies.len());
                let elapsed = started.elapsed();
                let spent = budgeted(args) && elapsed + round_started.elapsed() / 2 >= total;
                let last = n == args.processes || spent;
                let t = if args.pairs.is_some() {
                    n as f64 / args.processes as f64
                } else {
                    elapsed.as_secs_f64() / total.as_secs_f64()
                };
                if spent && n < args.processes {
                    rule.budget_spent_after = Some(n);
                }
                let due = n >= rule.looks.first && t - spending.last_time() >= MIN_LOOK_STEP;
                if last || due {
                    let t = if last { 1.0 } else { t };
                    look(
                        &mut rule,
                        &mut spending,
                        &mut tallies,
                        t,
                        last,
                        args.processes,
                    );
                }
                if spent {
                    break;
                }
            }
            if tallies.iter().all(|t| t.judgement.is_some()) {
                break;
            }
        }
        Ok(())
    })();
    let interrupted = benchmp::sys::process::interrupted();
    drop(guard);
    let incomplete = match (outcome, interrupted) {
        (Ok(()), _) => None,
        // Nothing measured is lost: the pairs taken are judged as they stand and written,
        // marked incomplete, before the run ends with the signal's status.
        (Err(_), Some(sig)) => Some(benchmp::report::Incomplete {
            signal: sig.as_str().to_string(),
            running: None,
            measured: tallies.iter().filter(|t| !t.d.is_empty()).count(),
        }),
        (Err(e), None) => return Err(e),
    };
    if rule.budget_spent_after.is_some() && tallies.iter().any(|t| t.judgement.is_none()) {
        look(
            &mut rule,
            &mut spending,
            &mut tallies,
            1.0,
            true,
            args.processes,
        );
    }
    let figures = tallies.into_iter().map(|t| t.figure(&rule)).collect();
    let report = AbReport {
        base: SideInfo {
            command: args.base.clone(),
            tool: tools.0,
            exit: ends.0.exit,
            signal: ends.0.signal,
            error: ends.0.error,
            stopped: ends.0.stopped,
        },
        current: SideInfo {
            command: args.current.clone(),
            tool: tools.1,
            exit: ends.1.exit,
            signal: ends.1.signal,
            error: ends.1.error,
            stopped: ends.1.stopped,
        },
        rule,
        figures,
        incomplete,
    };
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
