//! `benchmp ab 'CMD_A' 'CMD_B'`: a paired, interleaved A/B verdict for two builds (or two
//! settings) of one tool.
//!
//! Both commands start as workers ([`benchmp::run::worker`]): their children are forked,
//! pinned, sized and warm before anything is timed. Then, measurement by measurement, the
//! driver asks each side for one repetition at a time, the two halves of a pair back to back
//! in random order, so the machine's drift falls on both alike. Each figure is paired in
//! several fresh pairs of workers (`--processes`), since two processes of one build can
//! differ for their whole life; each process pair's estimate is one unit of the test
//! ([`benchmp::ab::paired`]: Hodges-Lehmann estimate, Wilcoxon signed-rank interval,
//! sequential looks with the error rate split over them). B is the current side: FAIL means
//! B is worse than A by more than `--min-effect`.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use benchmp::ab::paired::{self, Decision, Judgement, Looks};
use benchmp::ab::{Better, Verdict};
use benchmp::aggregate::Metric;
use benchmp::run::worker::{self, StepSample, ToDriver, ToWorker};
use benchmp::{EXIT_FAILED, EXIT_OK, Usage};
use serde::{Deserialize, Serialize};

/// How long a command may take to say hello: a socbench tool does so as its session starts,
/// before any calibration or measurement, in milliseconds; a command silent this long is not
/// one.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
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
/// Process pairs before the first look over them (the fewest whose signed-rank interval
/// reaches 97.5 %, the confidence of two looks at alpha 0.05).
const FIRST_PROCESS_LOOK: usize = 8;
/// Repetition pairs at least per figure in each process pair.
const MIN_BLOCK_PAIRS: usize = 3;

/// `benchmp ab`'s options.
#[derive(Debug, clap::Args)]
pub struct AbArgs {
    /// The baseline command (A), one string as for a shell: 'old/bw_mem 64m rd'. Leading
    /// VAR=VALUE words set its environment.
    pub base: String,
    /// The current command (B), judged against A: the same tool and figures.
    pub current: String,
    /// Smallest change that counts, percent: FAIL when B is worse than A by more than this
    /// with the interval's confidence, PASS when the interval lies within ± this.
    #[arg(long, value_name = "PCT", default_value_t = 2.0, value_parser = positive_pct)]
    pub min_effect: f64,
    /// False-alarm rate of the whole comparison, split over its figures and every look
    /// (Bonferroni); with --processes 1, per figure.
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = super::probability)]
    pub alpha: f64,
    /// Time budget per figure, seconds: pairs are added until the verdict is decided or the
    /// budget is spent (then NOISY when still undecided). Over several process pairs the
    /// whole comparison keeps to it (this times the figures), worker start-up included: each
    /// figure of each process pair gets an even share of what is left, at least 3 repetition
    /// pairs, and no process pair starts once it is spent, so --processes is only an upper
    /// bound. Not used with --pairs.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = seconds)]
    pub time: f64,
    /// Take exactly this many pairs per figure in each process pair and look once, at the
    /// end, instead of the time budget.
    #[arg(long, value_name = "N", value_parser = pair_count)]
    pub pairs: Option<usize>,
    /// Pairs of worker processes per figure, at most. Two processes of one build can differ
    /// by a few percent for their whole life (their physical pages, on a VM the host's
    /// backing), so each figure is paired in fresh processes, its budget split over them,
    /// and judged over their estimates: the process pair is the unit. Fewer run when --time
    /// is spent first (the verdict is then over those, NOISY when too few). Looks at 8 and
    /// every doubling. 1: one pair of workers and the repetition pair as the unit (quicker, but
    /// blind to a difference between the two processes).
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = process_count)]
    pub processes: usize,
    /// Length of one repetition, milliseconds (each side's count is sized to it once, and
    /// A's count is then used by both sides).
    #[arg(long, value_name = "MS", default_value_t = 20.0, value_parser = rep_ms)]
    pub rep_ms: f64,
    /// Order within each pair: random (a coin per pair) or abba (A B, B A, ...).
    #[arg(long, value_enum, default_value_t = Order::Random)]
    pub order: Order,
    /// Keep the workers' address-space randomisation. By default both start with it off, so
    /// two processes of one binary place code, stacks and buffers at the same addresses:
    /// otherwise 4 KiB aliasing between a copy's source and destination can differ between
    /// the two processes and show as a change that is neither build's.
    #[arg(long)]
    pub aslr: bool,
    /// Seed of the random order (default: from the clock; the report records it).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Write the verdicts as JSON: to stdout instead of the table (--json), or to a file
    /// besides it (--json=FILE).
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub json: Option<String>,
    /// Write one CSV row per figure: to stdout instead of the table (--csv), or to a file
    /// besides it (--csv=FILE).
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub csv: Option<String>,
}

/// The order of the two halves of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// A fair coin per pair.
    Random,
    /// A B, then B A, alternating.
    Abba,
}

fn positive_pct(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!("'{s}' is not a percentage above 0 and at most 100")),
    }
}

fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t > 0.0 && t <= 86_400.0 => Ok(t),
        _ => Err(format!(
            "'{s}' is not a number of seconds above 0 and at most a day"
        )),
    }
}

fn pair_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (2..=1_000_000).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a pair count from 2 to 1000000")),
    }
}

fn process_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a process pair count from 1 to 1000")),
    }
}

fn rep_ms(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if (0.01..=60_000.0).contains(&t) => Ok(t),
        _ => Err(format!(
            "'{s}' is not a repetition length from 0.01 to 60000 ms"
        )),
    }
}

/// One side as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideInfo {
    /// The command as given.
    pub command: String,
    /// The tool it runs.
    pub tool: String,
    /// Its exit status at the end.
    pub exit: Option<i32>,
    /// Its last error line, if it failed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// Stopped by the driver because the other side failed (its pairs so far are kept).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub stopped: bool,
}

/// How a worker ended.
#[derive(Debug, Clone, PartialEq)]
struct End {
    exit: Option<i32>,
    error: Option<String>,
    stopped: bool,
}

impl End {
    /// Stopped by the driver because the other side failed.
    fn stopped() -> End {
        End {
            exit: None,
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
            error: None,
            stopped: false,
        }
    }
}

/// The rule the verdicts were reached by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbRule {
    /// Smallest change that counts, percent.
    pub min_effect_pct: f64,
    /// False-alarm rate per figure.
    pub alpha: f64,
    /// Budget per figure, s (`None` with a fixed pair count).
    pub time_s: Option<f64>,
    /// Process pairs per figure at most (1: the repetition pair is the unit).
    #[serde(default = "one")]
    pub processes: usize,
    /// The looks at the pairs.
    pub looks: Looks,
    /// Figures the false-alarm rate is split over (over process pairs: all of the command's;
    /// with one process pair each figure is judged on its own).
    #[serde(default = "one")]
    pub figures: usize,
    /// Confidence of each look's interval: 1 − alpha/(looks × figures).
    pub confidence: f64,
    /// Repetition length asked for, µs.
    pub rep_us: u64,
    /// Order within pairs.
    pub order: Order,
    /// Seed of the random order.
    pub seed: u64,
    /// Process pairs run when the `--time` budget was spent before `--processes` of them.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub budget_spent_after: Option<usize>,
}

impl AbRule {
    /// What the verdicts count as their units: process pairs unless there is only one.
    fn unit(&self) -> Unit {
        if self.processes > 1 {
            Unit::ProcessPairs
        } else {
            Unit::RepetitionPairs
        }
    }
}

fn one() -> usize {
    1
}

/// What a figure's verdict counts as its independent units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Each process pair's estimate (the default).
    ProcessPairs,
    /// Each repetition pair, in one process pair (`--processes 1`).
    RepetitionPairs,
}

fn repetition_pairs() -> Unit {
    Unit::RepetitionPairs
}

/// One process pair's share of a figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessPair {
    /// Repetition pairs it took.
    pub pairs: usize,
    /// Hodges–Lehmann estimate of its pairs' log ratios (positive: B worse).
    pub estimate: f64,
    /// The same, percent.
    pub estimate_pct: f64,
}

/// One figure's paired comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbFigure {
    /// The measurement (`rd 64M`).
    pub measurement: String,
    /// Unit of the figure.
    pub unit: String,
    /// Which way is better.
    pub better: Better,
    /// CPUs of the children (the same on both sides).
    pub cpus: Vec<Option<usize>>,
    /// Iterations per repetition, both sides.
    pub iterations: u64,
    /// Median of A's repetitions.
    pub base_median: f64,
    /// Median of B's.
    pub current_median: f64,
    /// What the judgement's units are.
    #[serde(default = "repetition_pairs")]
    pub judged_over: Unit,
    /// The statistics of the units.
    pub judgement: Judgement,
    /// The verdict.
    pub verdict: Verdict,
    /// Wall time spent on the pairs, s.
    pub seconds: f64,
    /// Each process pair's part, in time order.
    #[serde(default)]
    pub processes: Vec<ProcessPair>,
    /// Involuntary context switches of A's and B's children during their repetitions.
    pub preempted: (u64, u64),
    /// Repetitions whose child ended on another CPU than it started on, A and B.
    pub migrated: (usize, usize),
    /// Wall time of A's and B's timed repetitions (the longest child's per step), ns.
    pub timed_ns: (u64, u64),
    /// CPU time A's and B's children got during their timed repetitions, ns: a side whose
    /// share (CPU over wall time) is lower lost time to other tasks or a CPU quota.
    pub cpu_ns: (u64, u64),
    /// Each pair's log ratio (positive: B worse), in time order.
    pub differences: Vec<f64>,
    /// Each side's figure per repetition, in time order.
    pub base_values: Vec<f64>,
    /// B's.
    pub current_values: Vec<f64>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    benchmp::cli::check_outputs_besides(args.json.as_deref(), args.csv.as_deref(), &programs)?;
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
        figures: 1,
        confidence: looks.confidence(),
        rep_us: (args.rep_ms * 1000.0).round().max(1.0) as u64,
        order: args.order,
        seed,
        budget_spent_after: None,
    };
    let guard = benchmp::sys::process::InterruptGuard::install();
    let (a_cmd, b_cmd) = (&cmds[0], &cmds[1]);
    let mut rng = XorShift(seed);
    let mut tallies: Vec<Tally> = Vec::new();
    let mut tools = (String::new(), String::new());
    let mut ends = (End::default(), End::default());
    let started = Instant::now();
    // The process pairs; a stop signal ends them with the pairs taken kept (below).
    let outcome = (|| -> Result<()> {
        for round in 0..args.processes {
            // The budget holds for the whole comparison, worker start-up included: no process
            // pair starts once it is spent.
            if round > 0 && budgeted(args) && started.elapsed() >= total_budget(args, tallies.len())
            {
                rule.budget_spent_after = Some(round);
                break;
            }
            let share = block_budget(args, started, round, &tallies);
            // Which side starts first (and sets its buffers up while the other is still
            // starting) is a coin per process pair, so that no order favours one build.
            let (mut a, mut b) = if rng.coin() {
                let a = Worker::spawn(a_cmd, rule.rep_us, args.aslr)?;
                (a, Worker::spawn(b_cmd, rule.rep_us, args.aslr)?)
            } else {
                let b = Worker::spawn(b_cmd, rule.rep_us, args.aslr)?;
                (Worker::spawn(a_cmd, rule.rep_us, args.aslr)?, b)
            };
            let hellos = a.hello().and_then(|ta| Ok((ta, b.hello()?)));
            let (tool_a, tool_b) = match hellos {
                Ok(tools) => tools,
                // The same commands spoke the protocol in the first process pair: a side that
                // fails to now is a failure of this run, and the pairs taken are kept.
                Err(e) if tallies.iter().any(|t| !t.d.is_empty()) => {
                    let end = |w: &Worker| End {
                        exit: w.exit.and_then(|s| s.code()),
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
                (round, share),
                &mut rng,
                (&mut a, &mut b),
                &mut tallies,
                &mut index,
            );
            if round == 0 && rule.unit() == Unit::ProcessPairs {
                // The false-alarm rate holds for the whole comparison: split over every figure
                // (a sweep's hundred points would otherwise give a few false verdicts by chance).
                rule.figures = tallies.len().max(1);
                rule.confidence = rule.looks.confidence_over(rule.figures);
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
                    anyhow::bail!(
                        "{} ({}) failed: {}",
                        failed.name,
                        failed.status_text(),
                        failed.error_line().unwrap_or_else(|| "(no message)".into())
                    );
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
                let last = n == args.processes;
                for t in tallies.iter_mut().filter(|t| t.judgement.is_none()) {
                    if last || rule.looks.is_look(n) {
                        let j = t.judge_processes(&rule);
                        if last || j.decision != Decision::Undecided {
                            t.judgement = Some(j);
                        }
                    }
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
    if let Some(n) = rule.budget_spent_after {
        for t in tallies.iter_mut().filter(|t| t.judgement.is_none()) {
            let mut j = t.judge_processes(&rule);
            if j.decision == Decision::Undecided {
                j.why = Some(format!(
                    "{}; --time ran out after {n} of {} process pairs",
                    j.why.as_deref().unwrap_or("undecided"),
                    args.processes
                ));
            }
            t.judgement = Some(j);
        }
    }
    let figures = tallies.into_iter().map(|t| t.figure(&rule)).collect();
    let report = AbReport {
        base: SideInfo {
            command: args.base.clone(),
            tool: tools.0,
            exit: ends.0.exit,
            error: ends.0.error,
            stopped: ends.0.stopped,
        },
        current: SideInfo {
            command: args.current.clone(),
            tool: tools.1,
            exit: ends.1.exit,
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
            benchmp::errln!(
                "benchmp: {name} {}: {}",
                side.exit.map_or("failed".to_string(), |c| format!(
                    "ended with exit status {c}"
                )),
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

/// Each figure's share of the budget in process pair `round` (0-based): in one process pair
/// all of `--time`; over several, an even share of what is left of the whole budget among
/// the process pairs still to come and the figures still undecided (the first pair, before
/// the figures are known: `--time / --processes`). Worker start-up, calibration and sizing
/// spent so far come out of what is left.
fn block_budget(args: &AbArgs, started: Instant, round: usize, tallies: &[Tally]) -> Duration {
    if args.processes == 1 {
        return Duration::from_secs_f64(args.time);
    }
    if round == 0 {
        return Duration::from_secs_f64(args.time / args.processes as f64);
    }
    let left = total_budget(args, tallies.len()).saturating_sub(started.elapsed());
    let undecided = tallies
        .iter()
        .filter(|t| t.judgement.is_none())
        .count()
        .max(1);
    left / ((args.processes - round) * undecided) as u32
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
    (round, share): (usize, Duration),
    rng: &mut XorShift,
    (a, b): (&mut Worker, &mut Worker),
    tallies: &mut Vec<Tally>,
    index: &mut usize,
) -> Result<()> {
    while let Some(ready) = next_measurement(a, b)? {
        if round == 0 {
            // A sizes the count alone on the CPUs (B waits); both sides, in every process
            // pair, then run that count.
            let iterations = a.size()?.into_iter().max().unwrap_or(1).max(1);
            tallies.push(Tally::new(ready, iterations));
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
            pair_block(args, rule, share, rng, a, b, t)?;
        }
        *index += 1;
    }
    Ok(())
}

/// When the pairs are looked at. Over process pairs: at `FIRST_PROCESS_LOOK` of them, doubling,
/// and at `--processes`; with `--pairs`, once, after the last process pair. In one process
/// pair: at `FIRST_LOOK` repetition pairs, doubling, and when the budget is spent.
fn looks(args: &AbArgs) -> Looks {
    let (first, max_pairs) = match (args.processes, args.pairs) {
        (1, Some(n)) => (n, n),
        (1, None) => (FIRST_LOOK, MAX_PAIRS),
        (k, Some(_)) => (k, k),
        (k, None) => (FIRST_PROCESS_LOOK.min(k), k),
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
    Ok(Some(ra))
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

fn cpus_text(cpus: &[Option<usize>]) -> String {
    cpus.iter()
        .map(|c| c.map_or("-".to_string(), |c| c.to_string()))
        .collect::<Vec<_>>()
        .join(",")
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

/// One figure's pairs as they accumulate over the process pairs.
#[derive(Debug)]
struct Tally {
    ready: Ready,
    iterations: u64,
    d: Vec<f64>,
    va: Vec<f64>,
    vb: Vec<f64>,
    pre: (u64, u64),
    mig: (usize, usize),
    timed: (u64, u64),
    cpu: (u64, u64),
    seconds: f64,
    processes: Vec<ProcessPair>,
    /// Set once decided, or at the last look.
    judgement: Option<Judgement>,
}

impl Tally {
    fn new(ready: Ready, iterations: u64) -> Tally {
        Tally {
            ready,
            iterations,
            d: Vec::new(),
            va: Vec::new(),
            vb: Vec::new(),
            pre: (0, 0),
            mig: (0, 0),
            timed: (0, 0),
            cpu: (0, 0),
            seconds: 0.0,
            processes: Vec::new(),
            judgement: None,
        }
    }

    /// The verdict over the process pairs' estimates so far.
    fn judge_processes(&self, rule: &AbRule) -> Judgement {
        let units: Vec<f64> = self.processes.iter().map(|p| p.estimate).collect();
        paired::judge(
            &units,
            rule.min_effect_pct,
            rule.confidence,
            "process pairs",
        )
    }

    fn figure(self, rule: &AbRule) -> AbFigure {
        let judgement = match self.judgement {
            Some(j) => j,
            // A side ended early: what there is.
            None if rule.unit() == Unit::ProcessPairs => self.judge_processes(rule),
            None => paired::judge_pairs(&self.d, rule.min_effect_pct, rule.confidence),
        };
        let verdict = match judgement.decision {
            Decision::Fail => Verdict::Fail,
            Decision::Improved => Verdict::Improved,
            Decision::Pass => Verdict::Pass,
            Decision::Undecided => Verdict::Noisy,
        };
        AbFigure {
            measurement: self.ready.figure(),
            unit: self.ready.metric.unit().to_string(),
            better: self.ready.metric.better(),
            cpus: self.ready.cpus,
            iterations: self.iterations,
            base_median: benchmp::stats::median_of(&self.va),
            current_median: benchmp::stats::median_of(&self.vb),
            judged_over: rule.unit(),
            judgement,
            verdict,
            seconds: self.seconds,
            processes: self.processes,
            preempted: self.pre,
            migrated: self.mig,
            timed_ns: self.timed,
            cpu_ns: self.cpu,
            differences: self.d,
            base_values: self.va,
            current_values: self.vb,
        }
    }
}

/// Pairs one measurement in one process pair: for its share of the budget ([`block_budget`],
/// at least `MIN_BLOCK_PAIRS` pairs) or `--pairs` pairs; with one process pair, until the
/// verdict over the repetition pairs is decided or the budget is spent.
#[allow(clippy::too_many_arguments)]
fn pair_block(
    args: &AbArgs,
    rule: &AbRule,
    budget: Duration,
    rng: &mut XorShift,
    a: &mut Worker,
    b: &mut Worker,
    t: &mut Tally,
) -> Result<()> {
    let iterations = t.iterations;
    let timeout = step_timeout(rule);
    // One untimed repetition on each side first: caches, TLBs and branch predictors warm.
    a.step(iterations, timeout)?;
    b.step(iterations, timeout)?;
    let metric = t.ready.metric.clone();
    let better = metric.better();
    let alone = rule.unit() == Unit::RepetitionPairs;
    let start = Instant::now();
    let first = t.d.len();
    loop {
        let a_first = match rule.order {
            Order::Random => rng.coin(),
            Order::Abba => t.d.len().is_multiple_of(2),
        };
        let (sa, sb) = if a_first {
            let sa = a.step(iterations, timeout)?;
            (sa, b.step(iterations, timeout)?)
        } else {
            let sb = b.step(iterations, timeout)?;
            (a.step(iterations, timeout)?, sb)
        };
        let (xa, xb) = (value(&metric, &sa), value(&metric, &sb));
        // Whatever counts a worker sends, the totals saturate rather than overflow.
        let sum = |v: &[StepSample], f: fn(&StepSample) -> u64| {
            v.iter().fold(0u64, |acc, s| acc.saturating_add(f(s)))
        };
        let longest = |v: &[StepSample]| v.iter().map(|s| s.elapsed_ns).max().unwrap_or(0);
        t.pre.0 = t.pre.0.saturating_add(sum(&sa, |s| s.preempted));
        t.pre.1 = t.pre.1.saturating_add(sum(&sb, |s| s.preempted));
        t.mig.0 += sa.iter().filter(|s| s.cpus.0 != s.cpus.1).count();
        t.mig.1 += sb.iter().filter(|s| s.cpus.0 != s.cpus.1).count();
        t.timed.0 = t.timed.0.saturating_add(longest(&sa));
        t.timed.1 = t.timed.1.saturating_add(longest(&sb));
        t.cpu.0 = t.cpu.0.saturating_add(sum(&sa, |s| s.cpu_ns));
        t.cpu.1 = t.cpu.1.saturating_add(sum(&sb, |s| s.cpu_ns));
        t.va.push(xa);
        t.vb.push(xb);
        t.d.push(paired::log_ratio(xa, xb, better));
        let n = t.d.len() - first;
        let spent = args.pairs.is_none() && start.elapsed() >= budget;
        if alone {
            let last = spent || n >= rule.looks.max_pairs;
            if last || rule.looks.is_look(n) {
                let j = paired::judge_pairs(&t.d, rule.min_effect_pct, rule.confidence);
                if last || j.decision != Decision::Undecided {
                    t.judgement = Some(j);
                    break;
                }
            }
        } else if args.pairs.map_or(spent && n >= MIN_BLOCK_PAIRS, |p| n >= p) {
            break;
        }
    }
    a.send(ToWorker::Stop)?;
    b.send(ToWorker::Stop)?;
    t.seconds += start.elapsed().as_secs_f64();
    let block = &t.d[first..];
    let estimate = paired::hodges_lehmann(block);
    t.processes.push(ProcessPair {
        pairs: block.len(),
        estimate,
        estimate_pct: estimate.exp_m1() * 100.0,
    });
    Ok(())
}

/// One side's figure for one step: the children's throughputs added, or their latencies
/// averaged, as the tool's own system figure is.
fn value(metric: &Metric, samples: &[StepSample]) -> f64 {
    let ns = |s: &StepSample| if s.net_ns > 0 { s.net_ns } else { s.elapsed_ns }.max(1) as f64;
    match metric {
        Metric::Rate { per_iteration, .. } => samples
            .iter()
            .map(|s| per_iteration * s.iterations as f64 * 1e9 / ns(s))
            .sum(),
        Metric::Latency { per_iteration, .. } => {
            let per = |s: &StepSample| ns(s) / (s.iterations as f64 * per_iteration);
            samples.iter().map(per).sum::<f64>() / samples.len().max(1) as f64
        }
    }
}

/// A measurement a worker is ready to pair.
#[derive(Debug, Clone)]
struct Ready {
    measurement: String,
    metric: Metric,
    params: serde_json::Value,
    cpus: Vec<Option<usize>>,
}

impl Ready {
    /// The figure this measurement is ([`figure_label`]).
    fn figure(&self) -> String {
        figure_label(&self.measurement, &self.params)
    }
}

/// What makes two measurements the same figure: the name and the parameters that size it
/// (array size, stride, access order). Other parameters (page size, implementation, variant)
/// are settings two commands may differ in. Shortened and printable, as a worker sent it.
fn figure_label(measurement: &str, p: &serde_json::Value) -> String {
    let mut label = bounded(measurement);
    let size = p.get("size_bytes").and_then(serde_json::Value::as_u64);
    if let Some(b) = size {
        let shown = benchmp::size::HumanSize(b).to_string();
        if !label.contains(&shown) {
            label = format!("{label} {shown}");
        }
    }
    if let Some(s) = p.get("stride_bytes").and_then(serde_json::Value::as_u64) {
        label = format!("{label} stride {s}");
    }
    if let Some(l) = p.get("layout").and_then(serde_json::Value::as_str) {
        label = format!("{label} {}", bounded(l));
    }
    label
}

/// A command split into environment, program and arguments, the program found.
#[derive(Debug)]
struct Prepared {
    name: &'static str,
    text: String,
    env: Vec<(String, String)>,
    program: PathBuf,
    args: Vec<String>,
}

impl Prepared {
    /// Splits a command as a shell would and finds its program; bad input is exit 2.
    fn parse(name: &'static str, text: &str) -> Result<Prepared> {
        let bad = |why: String| Usage(format!("{name} '{text}': {why}"));
        let words = shlex::split(text).ok_or_else(|| bad("unbalanced quotes".into()))?;
        let mut env = Vec::new();
        let mut rest = words.into_iter().peekable();
        while let Some(w) = rest.peek() {
            match w.split_once('=') {
                Some((k, v))
                    if !k.is_empty()
                        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && !k.starts_with(|c: char| c.is_ascii_digit()) =>
                {
                    env.push((k.to_string(), v.to_string()));
                    rest.next();
                }
                _ => break,
            }
        }
        let program = rest.next().ok_or_else(|| bad("no program to run".into()))?;
        let path = if program.contains('/') {
            let p = PathBuf::from(&program);
            let meta =
                std::fs::metadata(&p).map_err(|_| bad(format!("{program}: no such file")))?;
            use std::os::unix::fs::PermissionsExt;
            if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
                return Err(bad(format!("{program}: not an executable file")).into());
            }
            p
        } else {
            which::which(&program).map_err(|_| bad(format!("{program}: not found on PATH")))?
        };
        Ok(Prepared {
            name,
            text: text.to_string(),
            env,
            program: path,
            args: rest.collect(),
        })
    }
}

/// One running side.
#[derive(Debug)]
struct Worker {
    name: &'static str,
    text: String,
    /// The program's file name: its error lines may start with it before it says hello.
    program: String,
    child: Child,
    to: File,
    from: File,
    buf: Vec<u8>,
    eof: bool,
    /// Its standard output and errors, in one unnamed file cut back to its tail as it grows.
    output: File,
    /// The tool it runs, once it said hello.
    tool: Option<String>,
    /// The figures it announced it will measure, in order, if it did.
    plan: Option<Vec<String>>,
    exit: Option<std::process::ExitStatus>,
}

/// What listening to a worker gave.
#[derive(Debug)]
enum Heard {
    /// One message.
    Message(ToDriver),
    /// It closed its pipe and exited.
    Ended,
    /// Nothing within the time given.
    Silent,
}

impl Worker {
    /// Starts a command as a worker in its own process group, its standard output and
    /// errors kept in an unnamed file (its tail read for the error line when it fails).
    fn spawn(p: &Prepared, rep_us: u64, aslr: bool) -> Result<Worker> {
        use nix::fcntl::OFlag;
        let (to_r, to_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).context("pipe")?;
        let (from_r, from_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).context("pipe")?;
        let output = benchmp::sys::unnamed::unnamed_file(&format!("benchmp-ab-{}", p.name))
            .context("cannot make an unnamed file for a worker's output")?;
        let mut cmd = Command::new(&p.program);
        cmd.args(&p.args)
            .envs(p.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env(worker::FDS_ENV, "3,4")
            .env(worker::REP_ENV, rep_us.to_string())
            .stdin(Stdio::null())
            .stdout(output.try_clone().context("dup")?)
            .stderr(output.try_clone().context("dup")?);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        // A driver killed outright (SIGKILL, or a suite's entry killed with it) takes its
        // workers along: SIGTERM, so each still kills and reaps its own children.
        ftrace::die_with_parent(&mut cmd, nix::sys::signal::Signal::SIGTERM);
        benchmp::sys::process::pass_fds(&mut cmd, to_r.as_raw_fd(), from_w.as_raw_fd(), !aslr);
        let child = cmd
            .spawn()
            .map_err(|e| Usage(format!("{} '{}': cannot start: {e}", p.name, p.text)))?;
        drop(to_r);
        drop(from_w);
        let from = File::from(from_r);
        set_nonblocking(&from);
        Ok(Worker {
            name: p.name,
            text: p.text.clone(),
            program: p
                .program
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            child,
            to: File::from(to_w),
            from,
            buf: Vec::new(),
            eof: false,
            output,
            tool: None,
            plan: None,
            exit: None,
        })
    }

    /// Waits for the tool's hello and returns its name. A command that ends first, stays
    /// silent for [`HELLO_TIMEOUT`] or says something else is not a socbench tool (or failed
    /// on its arguments): exit 2 in every case.
    fn hello(&mut self) -> Result<String> {
        let not_a_tool = |w: &Worker, why: String| -> anyhow::Error {
            Usage(format!("{} '{}': {why}", w.name, w.text)).into()
        };
        match self.listen(HELLO_TIMEOUT)? {
            Heard::Message(ToDriver::Hello { tool, .. }) => {
                let tool = bounded(&tool);
                self.tool = Some(tool.clone());
                Ok(tool)
            }
            Heard::Message(other) => Err(not_a_tool(
                self,
                format!(
                    "sent a {} message before its hello: not a socbench tool",
                    kind(&other)
                ),
            )),
            Heard::Silent => Err(not_a_tool(
                self,
                format!(
                    "said nothing of benchmp's worker protocol within {} s of its start: not a socbench tool; stopped",
                    HELLO_TIMEOUT.as_secs()
                ),
            )),
            Heard::Ended => {
                let why = match (self.exit.and_then(|e| e.code()), self.error_line()) {
                    (Some(2), Some(line)) => line,
                    (_, Some(line)) => format!(
                        "it ended ({}) before speaking benchmp's worker protocol: not a socbench tool? ({line})",
                        self.status_text()
                    ),
                    _ => format!(
                        "it ended ({}) without speaking benchmp's worker protocol: not a socbench tool",
                        self.status_text()
                    ),
                };
                Err(not_a_tool(self, why))
            }
        }
    }

    /// The next measurement it is ready for (repeated hellos of tools that restart their
    /// session are passed over, a plan is kept); `None` when it ended ([`Worker::failed`]
    /// tells how).
    fn next_ready(&mut self) -> Result<Option<Ready>> {
        loop {
            match self.recv(READY_TIMEOUT)? {
                Some(ToDriver::Hello { .. }) => {}
                Some(ToDriver::Plan { measurements }) => {
                    self.plan = Some(
                        measurements
                            .iter()
                            .map(|m| figure_label(&m.measurement, &m.params))
                            .collect(),
                    );
                }
                Some(ToDriver::Ready {
                    measurement,
                    metric,
                    params,
                    cpus,
                }) => {
                    return Ok(Some(Ready {
                        measurement: bounded(&measurement),
                        metric: self.checked_metric(metric)?,
                        params,
                        cpus,
                    }));
                }
                Some(ToDriver::Refused { message }) => {
                    return Err(Usage(format!("{}: {}", self.name, bounded(&message))).into());
                }
                Some(other) => {
                    anyhow::bail!("{}: sent a {} nobody asked for", self.name, kind(&other))
                }
                None => return Ok(None),
            }
        }
    }

    /// A metric a figure can be made of (a positive, finite amount per iteration), its unit
    /// made printable; anything else is not a worker message.
    fn checked_metric(&self, metric: Metric) -> Result<Metric> {
        let (per, unit) = match &metric {
            Metric::Rate {
                per_iteration,
                unit,
            }
            | Metric::Latency {
                per_iteration,
                unit,
            } => (*per_iteration, bounded(unit)),
        };
        if !(per.is_finite() && per > 0.0) {
            return Err(Usage(format!(
                "{} '{}': not a worker message: a measurement of {per} per iteration",
                self.name, self.text
            ))
            .into());
        }
        Ok(match metric {
            Metric::Rate { per_iteration, .. } => Metric::Rate {
                per_iteration,
                unit,
            },
            Metric::Latency { per_iteration, .. } => Metric::Latency {
                per_iteration,
                unit,
            },
        })
    }

    /// Sizes the side's count to the repetition length (the other side waits meanwhile).
    fn size(&mut self) -> Result<Vec<u64>> {
        self.send(ToWorker::Size)?;
        match self.recv(READY_TIMEOUT)? {
            Some(ToDriver::Sized { counts }) if !counts.is_empty() => Ok(counts),
            Some(other) => anyhow::bail!(
                "{}: answered a size request with a {} message",
                self.name,
                kind(&other)
            ),
            None => anyhow::bail!(
                "{} ({}) failed while sizing its count: {}",
                self.name,
                self.status_text(),
                self.error_line().unwrap_or_else(|| "(no message)".into())
            ),
        }
    }

    /// Runs one repetition in every child of the side.
    fn step(&mut self, iterations: u64, timeout: Duration) -> Result<Vec<StepSample>> {
        self.send(ToWorker::Step { iterations })?;
        match self.recv(timeout)? {
            Some(ToDriver::Rep { samples })
                if !samples.is_empty() && samples.iter().all(|s| s.iterations > 0) =>
            {
                Ok(samples)
            }
            Some(ToDriver::Rep { .. }) => Err(Usage(format!(
                "{} '{}': not a worker message: a repetition without iterations",
                self.name, self.text
            ))
            .into()),
            Some(other) => anyhow::bail!(
                "{}: answered a step with a {} message",
                self.name,
                kind(&other)
            ),
            None => anyhow::bail!(
                "{} ({}) failed during a repetition: {}",
                self.name,
                self.status_text(),
                self.error_line().unwrap_or_else(|| "(no message)".into())
            ),
        }
    }

    fn send(&mut self, cmd: ToWorker) -> Result<()> {
        let mut line = serde_json::to_vec(&cmd)?;
        line.push(b'\n');
        self.to
            .write_all(&line)
            .with_context(|| format!("{}: cannot send it a command (did it end?)", self.name))
    }

    fn ended(&self) -> bool {
        self.eof && self.exit.is_some()
    }

    /// Notes its exit if it has ended (without reading its pipe).
    fn poll_exit(&mut self) {
        if self.exit.is_none()
            && let Ok(Some(status)) = self.child.try_wait()
        {
            self.exit = Some(status);
        }
    }

    /// True once it ended with a failure (an exit status other than 0, or a signal).
    fn failed(&self) -> bool {
        self.exit.is_some_and(|e| !e.success())
    }

    /// Its exit status and error line as the report gives them; a worker still running is
    /// stopped (by the drop that follows) because the other side failed.
    fn end_now(&self) -> End {
        match self.exit {
            Some(status) => End {
                exit: status.code(),
                error: (!status.success()).then(|| self.error_line()).flatten(),
                stopped: false,
            },
            None => End::stopped(),
        }
    }

    /// The next message, or `None` once the worker closed its pipe and exited. Interrupts
    /// and the timeout are errors (the worker is killed with the rest on drop).
    fn recv(&mut self, timeout: Duration) -> Result<Option<ToDriver>> {
        match self.listen(timeout)? {
            Heard::Message(m) => Ok(Some(m)),
            Heard::Ended => Ok(None),
            Heard::Silent => anyhow::bail!(
                "{} '{}' said nothing for {} s; killed",
                self.name,
                self.text,
                timeout.as_secs()
            ),
        }
    }

    /// Waits up to `timeout` for the next message, or for the worker's end. A line that is
    /// no message, or longer than [`MAX_LINE`], is exit 2.
    fn listen(&mut self, timeout: Duration) -> Result<Heard> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(sig) = benchmp::sys::process::interrupted() {
                return Err(benchmp::Error::Interrupted(sig).into());
            }
            if let Some(pos) = self.buf.iter().position(|&c| c == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                return match serde_json::from_slice(&line) {
                    Ok(msg) => Ok(Heard::Message(msg)),
                    Err(_) => Err(self.not_a_message(&line, "")),
                };
            }
            if self.buf.len() > MAX_LINE {
                let why = format!(" (a line of over {} MiB)", MAX_LINE >> 20);
                return Err(self.not_a_message(&self.buf.clone(), &why));
            }
            if self.eof {
                self.exit = Some(self.child.wait().context("waitpid")?);
                return Ok(Heard::Ended);
            }
            if Instant::now() >= deadline {
                return Ok(Heard::Silent);
            }
            self.fill()?;
        }
    }

    /// Exit 2 for what a worker sent that is not a message, with a short excerpt of it.
    fn not_a_message(&self, line: &[u8], why: &str) -> anyhow::Error {
        let what = if self.tool.is_some() {
            "not a worker message"
        } else {
            "not a socbench tool: not a worker message"
        };
        Usage(format!(
            "{} '{}': {what}{why}: {}",
            self.name,
            self.text,
            ftrace::error::excerpt(line.trim_ascii_end(), 60)
        ))
        .into()
    }

    /// Reads what is there (up to a little over [`MAX_LINE`] unread), waiting up to 100 ms
    /// for it, and cuts the worker's output file back to its tail when it grew long.
    fn fill(&mut self) -> Result<()> {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        use std::os::fd::AsFd;
        let mut fds = [PollFd::new(self.from.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(100u16)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(e).context("poll"),
        }
        let _ = benchmp::sys::unnamed::keep_tail(&self.output, OUTPUT_LIMIT, OUTPUT_TAIL);
        let mut chunk = vec![0u8; 65536];
        while self.buf.len() <= MAX_LINE {
            match self.from.read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(()),
                Err(e) => return Err(e).context("reading a worker's pipe"),
            }
        }
        Ok(())
    }

    /// Waits for it to end; its exit status and error line.
    fn finish(&mut self) -> Result<End> {
        let deadline = Instant::now() + READY_TIMEOUT;
        while self
            .recv(deadline.saturating_duration_since(Instant::now()))?
            .is_some()
        {}
        Ok(self.end_now())
    }

    fn status_text(&self) -> String {
        use std::os::unix::process::ExitStatusExt;
        match self.exit {
            Some(e) if e.code().is_some() => format!("exit status {}", e.code().unwrap_or(0)),
            Some(e) => format!("signal {}", e.signal().unwrap_or(0)),
            None => "still running".into(),
        }
    }

    /// Why it failed, from the tail of its output: its last error line (one starting with
    /// its tool's or program's name, not a note or warning), else its noise verdict (a run
    /// refused as noisy, `--fail-on-noise`), else its last line; shortened and printable.
    fn error_line(&self) -> Option<String> {
        let tail = benchmp::sys::unnamed::tail(&self.output, OUTPUT_TAIL).ok()?;
        let text = String::from_utf8_lossy(&tail);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .collect();
        let prefixes: Vec<String> = self
            .tool
            .iter()
            .chain(std::iter::once(&self.program))
            .filter(|p| !p.is_empty())
            .map(|p| format!("{p}: "))
            .collect();
        let own = |l: &&&str| prefixes.iter().any(|p| l.starts_with(p.as_str()));
        let after = |l: &str| {
            let p = prefixes.iter().find(|p| l.starts_with(p.as_str()));
            l[p.map_or(0, |p| p.len())..].to_string()
        };
        let is = |l: &str, what: &str| after(l).starts_with(what);
        let error = lines
            .iter()
            .rev()
            .filter(own)
            .find(|l| !is(l, "note:") && !is(l, "warning:") && !is(l, "noisy:"));
        let noisy = lines.iter().filter(own).find(|l| is(l, "noisy:"));
        let line = match (error, noisy) {
            (Some(l), _) => l.to_string(),
            (None, Some(l)) => format!("its run was judged noisy and refused ({l})"),
            (None, None) => lines.last()?.to_string(),
        };
        Some(bounded(&line))
    }
}

impl Drop for Worker {
    /// A worker still running when the driver gives up is killed with its children (its
    /// process group: SIGTERM, so it reaps them, then SIGKILL) and reaped.
    fn drop(&mut self) {
        if self.exit.is_none() {
            let pg = nix::unistd::Pid::from_raw(self.child.id() as i32);
            let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                match self.child.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() >= deadline => {
                        let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGKILL);
                        let _ = self.child.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            // Its children die with it (they are tied to its life), but the group may hold
            // stragglers: make sure.
            let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// A message's kind, for an error about it (its content may be anything a worker sent).
fn kind(m: &ToDriver) -> &'static str {
    match m {
        ToDriver::Hello { .. } => "hello",
        ToDriver::Ready { .. } => "ready",
        ToDriver::Sized { .. } => "sized",
        ToDriver::Rep { .. } => "repetition",
        ToDriver::Refused { .. } => "refused",
        ToDriver::Plan { .. } => "plan",
    }
}

/// A worker's text as a message or the table shows it: control characters escaped, at most
/// [`SHOWN`] characters.
fn bounded(text: &str) -> String {
    let shown = ftrace::error::printable(text);
    let mut chars = shown.chars();
    let mut out: String = chars.by_ref().take(SHOWN).collect();
    if chars.next().is_some() {
        out.push_str("...");
    }
    out
}

fn set_nonblocking(f: &File) {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    if let Ok(flags) = fcntl(f, FcntlArg::F_GETFL) {
        let _ = fcntl(
            f,
            FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK),
        );
    }
}

/// A small deterministic generator for the order within pairs (xorshift64*).
#[derive(Debug)]
struct XorShift(u64);

impl XorShift {
    fn coin(&mut self) -> bool {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 63) == 1
    }
}

/// Writes the table (or JSON/CSV on stdout) and any files asked for.
fn write_outputs(r: &AbReport, args: &AbArgs) -> Result<()> {
    let shown = match (args.json.as_deref(), args.csv.as_deref()) {
        (Some("-"), _) => serde_json::to_string_pretty(r)? + "\n",
        (_, Some("-")) => csv_text(r)?,
        _ => render_text(r),
    };
    benchmp::cli::write_stdout(&shown)?;
    if let Some(path) = args.json.as_deref().filter(|p| *p != "-") {
        benchmp::files::write_file(path, |w| {
            serde_json::to_writer_pretty(&mut *w, r)?;
            writeln!(w)
        })?;
    }
    if let Some(path) = args.csv.as_deref().filter(|p| *p != "-") {
        let text = csv_text(r)?;
        benchmp::files::write_file(path, |w| w.write_all(text.as_bytes()))?;
    }
    Ok(())
}

/// The table: one row per figure, then the counts.
pub fn render_text(r: &AbReport) -> String {
    use std::fmt::Write as _;
    let conf = format!("{:.4}", r.rule.confidence * 100.0);
    let conf = conf.trim_end_matches('0').trim_end_matches('.');
    let units = if r.rule.unit() == Unit::ProcessPairs {
        format!("up to {} process pairs", r.rule.processes)
    } else {
        "one process pair".to_string()
    };
    let mut out = format!(
        "benchmp ab: A '{}' vs B '{}' (minimum effect {:.1} %, alpha {} over {} figure(s): {conf} % intervals, {units}, {} order)\n",
        ftrace::error::printable(&r.base.command),
        ftrace::error::printable(&r.current.command),
        r.rule.min_effect_pct,
        r.rule.alpha,
        r.rule.figures,
        match r.rule.order {
            Order::Random => "random",
            Order::Abba => "ABBA",
        }
    );
    let w = r
        .figures
        .iter()
        .map(|f| f.measurement.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        out,
        "{:<w$}  {:>12}  {:>12}  {:<14}  {:>5}  {:>6}  {:>6}  {:>7}  {:<18}  verdict",
        "figure", "A median", "B median", "unit", "procs", "pairs", "s", "change", "interval"
    );
    for f in &r.figures {
        let j = &f.judgement;
        let arrow = match f.better {
            Better::Higher => "↑",
            Better::Lower => "↓",
        };
        let _ = writeln!(
            out,
            "{:<w$}  {:>12}  {:>12}  {:<14}  {:>5}  {:>6}  {:>6.1}  {:>+6.2}%  {:<18}  {}{}",
            f.measurement,
            benchmp::export::table_number(f.base_median, 2),
            benchmp::export::table_number(f.current_median, 2),
            format!("{} {arrow}", f.unit),
            f.processes.len(),
            f.differences.len(),
            f.seconds,
            j.estimate_pct,
            format!("[{:+.2}, {:+.2}]%", j.low_pct, j.high_pct),
            f.verdict.label(),
            j.why
                .as_deref()
                .map_or(String::new(), |w| format!(" ({w})"))
        );
    }
    let _ = writeln!(
        out,
        "{} figures: {} PASS, {} FAIL, {} IMPROVED, {} NOISY (change: B against A, positive = B worse)",
        r.figures.len(),
        r.count(Verdict::Pass),
        r.count(Verdict::Fail),
        r.count(Verdict::Improved),
        r.count(Verdict::Noisy)
    );
    out
}

/// One CSV row per figure.
fn csv_text(r: &AbReport) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "figure",
        "unit",
        "better",
        "cpus",
        "iterations",
        "base_median",
        "current_median",
        "processes",
        "pairs",
        "seconds",
        "estimate_pct",
        "low_pct",
        "high_pct",
        "confidence",
        "wilcoxon_p",
        "sign_p",
        "rho",
        "n_eff",
        "preempted_base",
        "preempted_current",
        "verdict",
        "why",
    ])?;
    for f in &r.figures {
        let j = &f.judgement;
        w.write_record([
            f.measurement.clone(),
            f.unit.clone(),
            f.better.word().to_string(),
            cpus_text(&f.cpus),
            f.iterations.to_string(),
            f.base_median.to_string(),
            f.current_median.to_string(),
            f.processes.len().to_string(),
            f.differences.len().to_string(),
            format!("{:.3}", f.seconds),
            j.estimate_pct.to_string(),
            j.low_pct.to_string(),
            j.high_pct.to_string(),
            j.confidence.to_string(),
            j.wilcoxon_p.to_string(),
            j.sign_p.to_string(),
            j.rho.to_string(),
            j.n_eff.to_string(),
            f.preempted.0.to_string(),
            f.preempted.1.to_string(),
            f.verdict.label().to_string(),
            j.why.clone().unwrap_or_default(),
        ])?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_into_environment_program_and_arguments() {
        let p = Prepared::parse("A", "LD_LIBRARY_PATH=/x FOO='a b' sh -c 'echo hi'").unwrap();
        assert_eq!(
            p.env,
            [
                ("LD_LIBRARY_PATH".to_string(), "/x".to_string()),
                ("FOO".to_string(), "a b".to_string())
            ]
        );
        assert!(p.program.ends_with("sh"), "{:?}", p.program);
        assert_eq!(p.args, ["-c", "echo hi"]);
        for (text, says) in [
            ("", "no program"),
            ("X=1", "no program"),
            ("'unclosed", "unbalanced quotes"),
            ("/nonexistent/bw_mem 64m rd", "no such file"),
            ("/etc/passwd", "not an executable file"),
            ("no-such-program-here", "not found on PATH"),
        ] {
            let e = Prepared::parse("B", text).unwrap_err();
            assert!(e.downcast_ref::<Usage>().is_some(), "{text}: {e}");
            assert!(e.to_string().contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn a_step_becomes_the_tools_system_figure() {
        let s = |iterations, net_ns| StepSample {
            iterations,
            elapsed_ns: net_ns,
            net_ns,
            start_ns: 0,
            cpus: (Some(0), Some(0)),
            preempted: 0,
            cpu_ns: net_ns,
        };
        let rate = Metric::Rate {
            per_iteration: 2.0,
            unit: "MB/s".into(),
        };
        // Two children, 10 iterations of 2 MB in 1 ms each: 20 000 MB/s each, added.
        assert_eq!(
            value(&rate, &[s(10, 1_000_000), s(10, 1_000_000)]),
            40_000.0
        );
        let lat = Metric::Latency {
            per_iteration: 100.0,
            unit: "ns".into(),
        };
        // 10 iterations of 100 loads in 5 µs and 7 µs: 5 ns and 7 ns, averaged.
        assert_eq!(value(&lat, &[s(10, 5_000), s(10, 7_000)]), 6.0);
    }

    #[test]
    fn a_figure_is_its_name_size_stride_and_layout_not_its_settings() {
        let ready = |name: &str, params: serde_json::Value, cpu| Ready {
            measurement: name.into(),
            metric: Metric::Latency {
                per_iteration: 1.0,
                unit: "ns".into(),
            },
            params,
            cpus: vec![Some(cpu)],
        };
        let p = |size: u64, pages: &str| serde_json::json!({"size_bytes": size, "stride_bytes": 64, "layout": "random", "pages": pages});
        let a = ready("loads", p(256 << 20, "thp"), 1);
        assert_eq!(a.figure(), "loads 256M stride 64 random");
        // Another page size is a setting: the same figure.
        assert!(same_figure(&a, &ready("loads", p(256 << 20, "small"), 1)).is_ok());
        let e = same_figure(&a, &ready("loads", p(64 << 20, "thp"), 1)).unwrap_err();
        assert!(e.downcast_ref::<Usage>().is_some(), "{e}");
        assert!(e.to_string().contains("the same figure"), "{e}");
        let e = same_figure(&a, &ready("loads", p(256 << 20, "thp"), 0)).unwrap_err();
        assert!(e.to_string().contains("on the same CPUs"), "{e}");
        // A name that already shows its size is not given it twice.
        let rd = ready("rd 64M", serde_json::json!({"size_bytes": 64u64 << 20}), 0);
        assert_eq!(rd.figure(), "rd 64M");
    }

    #[test]
    fn the_order_coin_is_fair_and_reproducible() {
        let mut r = XorShift(12345);
        let heads = (0..10_000).filter(|_| r.coin()).count();
        assert!((4_800..5_200).contains(&heads), "{heads}");
        let (mut x, mut y) = (XorShift(7), XorShift(7));
        assert!((0..100).all(|_| x.coin() == y.coin()));
    }
}
