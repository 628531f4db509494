//! The driver of `benchmp ab` in its steps: the two sides prepared once ([`Sides`]: each
//! command parsed, its program opened for one exec path, its environment, the room its stack
//! takes), then process pair after process pair ([`Driver::process_pair`]: started in random
//! order at one random stack offset, greeted, paired figure by figure, ended, and the looks at
//! the figures' verdicts taken), then the report ([`Driver::report`]).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::ops::ControlFlow;

use super::*;

/// What a process pair needs of each side, made once.
pub(super) struct Sides {
    /// A's and B's commands.
    cmds: [Prepared; 2],
    /// Each program opened for the one exec path both run through (`None`: run as named).
    opened: (Option<layout::Program>, Option<layout::Program>),
    /// The `argv[0]` both get.
    arg0: OsString,
    /// Each side's environment before its stack is evened.
    envs: (BTreeMap<OsString, OsString>, BTreeMap<OsString, OsString>),
    /// What each side's exec path, arguments and environment take on its stack.
    room: (layout::Room, layout::Room),
}

impl Sides {
    /// Parses both commands, refuses a result file that is one of their programs, and evens
    /// out what the two processes start with (layout.rs); the layout as the rule records it.
    fn prepare(args: &AbArgs, rule: &AbRule) -> Result<(Sides, AbLayout)> {
        let cmds = [
            Prepared::parse("A", &args.base)?,
            Prepared::parse("B", &args.current)?,
        ];
        // No report replaces a program being compared (by inode: `./d`, a link to it).
        let programs = benchmp::cli::Protected::new()
            .file("A's program", &cmds[0].program)
            .file("B's program", &cmds[1].program);
        args.files.check_besides(&programs)?;
        // Both programs through one exec path and argv[0], both environments evened.
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
        let recorded = AbLayout {
            equal_paths: opened.0.is_some() && opened.1.is_some(),
            evened_bytes: layout::evening(room.0, room.1, 0)[0]
                .iter()
                .map(|(k, v)| k.len() + v.len() + 2 + 8)
                .sum::<usize>()
                + room.0.bytes(),
            max_offset_bytes: layout::MAX_OFFSET,
            aslr: args.aslr,
        };
        Ok((
            Sides {
                cmds,
                opened,
                arg0,
                envs,
                room,
            },
            recorded,
        ))
    }

    /// Starts both sides, their stacks evened and moved by `offset`, the one to start first
    /// chosen by a coin (it sets its buffers up while the other is still starting).
    fn spawn(&self, offset: usize, a_first: bool, aslr: bool) -> Result<(Worker, Worker)> {
        let [even_a, even_b] = layout::evening(self.room.0, self.room.1, offset);
        let (mut env_a, mut env_b) = self.envs.clone();
        env_a.extend(even_a);
        env_b.extend(even_b);
        let (a_cmd, b_cmd) = (&self.cmds[0], &self.cmds[1]);
        let spawn_a = || Worker::spawn(a_cmd, self.opened.0.as_ref(), &self.arg0, &env_a, aslr);
        let spawn_b = || Worker::spawn(b_cmd, self.opened.1.as_ref(), &self.arg0, &env_b, aslr);
        let (mut a, mut b) = if a_first {
            let a = spawn_a()?;
            (a, spawn_b()?)
        } else {
            let b = spawn_b()?;
            (spawn_a()?, b)
        };
        a.stack_offset = offset;
        b.stack_offset = offset;
        Ok((a, b))
    }
}

/// The comparison as it goes: the rule, the figures' tallies, how the sides ended.
pub(super) struct Driver<'a> {
    args: &'a AbArgs,
    sides: Sides,
    pub(super) rule: AbRule,
    rng: XorShift,
    tallies: Vec<Tally>,
    tools: (String, String),
    ends: (End, End),
    started: Instant,
    /// Alpha spent over the looks at process pairs (per figure once the figures are known).
    spending: Spending,
    /// What a process pair costs each figure beyond its pairs (start-up, sizing, warm-up), s.
    overhead: Option<f64>,
}

impl<'a> Driver<'a> {
    /// The rule from the options, the sides prepared.
    pub(super) fn new(args: &'a AbArgs) -> Result<Driver<'a>> {
        let seed = args
            .seed
            .unwrap_or_else(|| benchmp::sys::clock::now_ns() | 1);
        let mut rule = AbRule {
            min_effect_pct: args.min_effect,
            alpha: args.alpha,
            time_s: args.pairs.is_none().then_some(args.time),
            processes: args.processes,
            looks: looks(args),
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
        let (sides, recorded) = Sides::prepare(args, &rule)?;
        rule.layout = Some(recorded);
        Ok(Driver {
            args,
            sides,
            rule,
            rng: XorShift(seed),
            tallies: Vec::new(),
            tools: (String::new(), String::new()),
            ends: (End::default(), End::default()),
            started: Instant::now(),
            spending: Spending::new(args.alpha),
            overhead: None,
        })
    }

    /// Every process pair until the figures are judged, the budget is spent or a side ends.
    pub(super) fn pairs(&mut self) -> Result<()> {
        for round in 0..self.args.processes {
            if self.process_pair(round)?.is_break() {
                break;
            }
        }
        Ok(())
    }

    /// Whether any figure has pairs.
    fn measured_any(&self) -> bool {
        self.tallies.iter().any(|t| !t.d.is_empty())
    }

    /// One process pair: started, greeted, paired figure by figure, ended, looked at. Break
    /// when no process pair should follow.
    fn process_pair(&mut self, round: usize) -> Result<ControlFlow<()>> {
        let args = self.args;
        let round_started = Instant::now();
        let paired_before: f64 = self.tallies.iter().map(|t| t.seconds).sum();
        let undecided_before = self
            .tallies
            .iter()
            .filter(|t| t.judgement.is_none())
            .count();
        if self.budget_spent_before(round) {
            return Ok(ControlFlow::Break(()));
        }
        let plan = Plan::new(args, self.started, round, &self.tallies, self.overhead);
        let offset = self.rng.below(layout::MAX_OFFSET);
        let a_first = self.rng.coin();
        let (mut a, mut b) = self.sides.spawn(offset, a_first, args.aslr)?;
        if self.greet(round, &mut a, &mut b)?.is_break() {
            return Ok(ControlFlow::Break(()));
        }
        let mut index = 0;
        let measured = pair_round(
            args,
            &self.rule,
            &plan,
            &mut self.rng,
            (&mut a, &mut b),
            &mut self.tallies,
            &mut index,
        );
        if round == 0 && self.rule.unit() == Unit::ProcessPairs {
            self.split_alpha();
        }
        if self
            .end_pair(round, &mut a, &mut b, measured, index)?
            .is_break()
        {
            return Ok(ControlFlow::Break(()));
        }
        if self.rule.unit() == Unit::ProcessPairs
            && self
                .account(round, round_started, paired_before, undecided_before)
                .is_break()
        {
            return Ok(ControlFlow::Break(()));
        }
        if self.tallies.iter().all(|t| t.judgement.is_some()) {
            return Ok(ControlFlow::Break(()));
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Whether the budget is spent before process pair `round` starts (never before the
    /// first), noted in the rule when it is.
    fn budget_spent_before(&mut self, round: usize) -> bool {
        let args = self.args;
        // The budget holds for the whole comparison, worker start-up included: no process
        // pair starts once it is spent.
        if round > 0
            && budgeted(args)
            && self.started.elapsed() >= total_budget(args, self.tallies.len())
        {
            self.rule.budget_spent_after = Some(round);
            return true;
        }
        false
    }

    /// Both sides' hellos, refusing two sides that run different tools; their tools' names
    /// kept. Break when a side failed to say it once pairs were taken ([`Driver::hellos`]).
    fn greet(&mut self, round: usize, a: &mut Worker, b: &mut Worker) -> Result<ControlFlow<()>> {
        let (tool_a, tool_b) = match self.hellos(round, a, b)? {
            ControlFlow::Continue(tools) => tools,
            ControlFlow::Break(()) => return Ok(ControlFlow::Break(())),
        };
        if tool_a != tool_b {
            return Err(Usage(format!(
                "A runs {tool_a} and B runs {tool_b}: ab compares two builds or settings of one tool"
            ))
            .into());
        }
        self.tools = (tool_a, tool_b);
        Ok(ControlFlow::Continue(()))
    }

    /// After the first process pair of a comparison over process pairs, when the figures are
    /// known: the false-alarm rate split over them.
    fn split_alpha(&mut self) {
        let alpha = self.args.alpha;
        // The false-alarm rate holds for the whole comparison: split over every figure
        // (a sweep's hundred points would otherwise give a few false verdicts by chance).
        self.rule.figures = self.tallies.len().max(1);
        self.rule.confidence = 1.0 - alpha / self.rule.figures as f64;
        self.spending = Spending::new(alpha / self.rule.figures as f64);
    }

    /// The end of process pair `round`, whose pairing gave `measured` over `index` figures: a
    /// side that failed ends the comparison (as its error when no figure has pairs yet); else
    /// a pairing error, or another count of figures than the first pair's, is the comparison's
    /// error; else both sides are waited for, their ends kept. Break when a side failed or did
    /// not exit with 0.
    fn end_pair(
        &mut self,
        round: usize,
        a: &mut Worker,
        b: &mut Worker,
        measured: Result<()>,
        index: usize,
    ) -> Result<ControlFlow<()>> {
        let unexplained = measured
            .as_ref()
            .err()
            .is_some_and(|e| e.downcast_ref::<Usage>().is_none());
        if unexplained && benchmp::sys::process::interrupted().is_none() {
            // A command that could not be sent (EPIPE) may come from a side that just died.
            settle(a, b);
        }
        if let Some(failed) = [&*a, &*b].into_iter().find(|w| w.failed()) {
            if !self.measured_any() {
                measured?;
                return Err(failed_before_pairs(failed));
            }
            // The pairs taken are kept: the report is written, with the side that failed.
            self.ends = (a.end_now(), b.end_now());
            return Ok(ControlFlow::Break(()));
        }
        measured?;
        if index != self.tallies.len() {
            anyhow::bail!(
                "process pair {}: the command measured {index} figures, the first pair {}: each run must measure the same figures",
                round + 1,
                self.tallies.len()
            );
        }
        self.ends = (a.finish()?, b.finish()?);
        if self.ends.0.exit != Some(0) || self.ends.1.exit != Some(0) {
            return Ok(ControlFlow::Break(()));
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Both sides' hellos, their tools' names. A side that fails to say it after the first
    /// process pair spoke the protocol is a failure of this run (Break, with the pairs taken
    /// kept); before, it is the comparison's error.
    fn hellos(
        &mut self,
        round: usize,
        a: &mut Worker,
        b: &mut Worker,
    ) -> Result<ControlFlow<(), (String, String)>> {
        let e = match a.hello().and_then(|ta| Ok((ta, b.hello()?))) {
            Ok(tools) => return Ok(ControlFlow::Continue(tools)),
            Err(e) if self.measured_any() => e,
            Err(e) => return Err(e),
        };
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
        self.ends = if a.tool.is_none() {
            (end(a), End::stopped())
        } else {
            (End::stopped(), end(b))
        };
        Ok(ControlFlow::Break(()))
    }

    /// After a process pair of a comparison over process pairs: its cost beyond its pairs
    /// (what the next one is planned with), whether the budget is spent, and a look at the
    /// verdicts when one is due. Break when the budget is spent.
    fn account(
        &mut self,
        round: usize,
        round_started: Instant,
        paired_before: f64,
        undecided_before: usize,
    ) -> ControlFlow<()> {
        let args = self.args;
        let n = round + 1;
        // The figures' share of this process pair beyond their pairs.
        let paired: f64 = self.tallies.iter().map(|t| t.seconds).sum::<f64>() - paired_before;
        let undecided = if round == 0 {
            self.tallies.len()
        } else {
            undecided_before
        };
        let cost =
            (round_started.elapsed().as_secs_f64() - paired).max(0.0) / undecided.max(1) as f64;
        // The first process pair's cost includes the sizing of every count.
        self.overhead = Some(match (round, self.overhead) {
            (0 | 1, _) | (_, None) => cost,
            (_, Some(o)) => 0.5 * (o + cost),
        });
        // Spent when what is left would not pay for half a process pair like this one.
        let total = total_budget(args, self.tallies.len());
        let elapsed = self.started.elapsed();
        let spent = budgeted(args) && elapsed + round_started.elapsed() / 2 >= total;
        let last = n == args.processes || spent;
        let t = if args.pairs.is_some() {
            n as f64 / args.processes as f64
        } else {
            elapsed.as_secs_f64() / total.as_secs_f64()
        };
        if spent && n < args.processes {
            self.rule.budget_spent_after = Some(n);
        }
        let due = n >= self.rule.looks.first && t - self.spending.last_time() >= MIN_LOOK_STEP;
        if last || due {
            let t = if last { 1.0 } else { t };
            look(
                &mut self.rule,
                &mut self.spending,
                &mut self.tallies,
                t,
                last,
                args.processes,
            );
        }
        if spent {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    /// The report of the pairs taken: judged at the end when the budget ran out before every
    /// figure was decided; marked incomplete when a stop signal ended them.
    pub(super) fn report(
        mut self,
        outcome: Result<()>,
        interrupted: Option<nix::sys::signal::Signal>,
    ) -> Result<AbReport> {
        let incomplete = match (outcome, interrupted) {
            (Ok(()), _) => None,
            // Nothing measured is lost: the pairs taken are judged as they stand and written,
            // marked incomplete, before the run ends with the signal's status.
            (Err(_), Some(sig)) => Some(benchmp::report::Incomplete {
                signal: sig.as_str().to_string(),
                running: None,
                measured: self.tallies.iter().filter(|t| !t.d.is_empty()).count(),
            }),
            (Err(e), None) => return Err(e),
        };
        if self.rule.budget_spent_after.is_some()
            && self.tallies.iter().any(|t| t.judgement.is_none())
        {
            look(
                &mut self.rule,
                &mut self.spending,
                &mut self.tallies,
                1.0,
                true,
                self.args.processes,
            );
        }
        let rule = self.rule;
        let figures = self.tallies.into_iter().map(|t| t.figure(&rule)).collect();
        let side = |command: &str, tool: String, end: End| SideInfo {
            command: command.to_string(),
            tool,
            exit: end.exit,
            signal: end.signal,
            error: end.error,
            stopped: end.stopped,
        };
        Ok(AbReport {
            base: side(&self.args.base, self.tools.0, self.ends.0),
            current: side(&self.args.current, self.tools.1, self.ends.1),
            rule,
            figures,
            incomplete,
        })
    }
}

/// The error of a side that failed before any figure had a pair: "not supported here" (3)
/// and "bad input" (2) make the comparison the same.
fn failed_before_pairs(failed: &Worker) -> anyhow::Error {
    let line = format!(
        "{} ({}) failed: {}",
        failed.name,
        failed.status_text(),
        failed.error_line().unwrap_or_else(|| "(no message)".into())
    );
    match failed.exit.and_then(|e| e.code()) {
        Some(benchmp::EXIT_UNSUPPORTED) => benchmp::Unsupported(line).into(),
        Some(benchmp::EXIT_USAGE) => Usage(line).into(),
        _ => anyhow::anyhow!(line),
    }
}
