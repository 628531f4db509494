//! Running one entry of the plan: wait for a quiet machine ([`super::quiet`]), start the
//! tool with the entry's arguments and the suite's, record how it ended in status.tsv, and say
//! so. The same for the first run of each entry and for the second run of a noisy one.

use std::os::fd::RawFd;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

use super::exec::{Ended, Job, JobError, StatusFile};
use super::plan::SuiteEntry;
use super::quiet;
use super::{head, one_line, shown};
use crate::cmd::outdir::write_whole;
use crate::cmd::summary::{self, EntryReport, Outcome, StatusRow};

/// What running an entry needs from the suite.
#[derive(Debug)]
pub(super) struct Runner<'a> {
    /// The tools' folder.
    pub(super) bin: &'a Path,
    /// The results folder.
    pub(super) dest: &'a Path,
    /// Arguments every tool but dto gets (`--cpus`, `--trace`, the power options).
    pub(super) extra: Vec<String>,
    /// Arguments dto gets.
    pub(super) dto_extra: Vec<String>,
    /// Environment dto gets (`PERF_CPU`).
    pub(super) dto_env: Vec<(String, String)>,
    /// `--entry-timeout`.
    pub(super) timeout: Option<Duration>,
    /// The results folder's lock, held by every entry's process.
    pub(super) hold: RawFd,
    /// The CPUs the entries run on (waited on to be quiet).
    pub(super) cpus: Vec<usize>,
    /// The longest wait for a quiet machine before an entry (`--quiet-wait`); shorter after a
    /// wait that ran out.
    pub(super) quiet_limit: Duration,
    /// Whether the last wait ran out.
    pub(super) busy_before: bool,
}

/// How an entry's run ended.
#[derive(Debug)]
pub(super) enum Run {
    /// It ended by itself: its outcome and report.
    Ended {
        /// How status.tsv calls it.
        outcome: Outcome,
        /// Its report, where it wrote one that reads.
        report: Option<EntryReport>,
        /// It failed because its children ran apart in every attempt (a busy machine): run
        /// again at the end, as a noisy entry is.
        apart: bool,
    },
    /// A stop signal ended it (recorded as interrupted).
    Interrupted(nix::sys::signal::Signal),
}

/// An entry that ended with a status: what its lines say of it.
struct Finished<'a> {
    label: &'a str,
    code: i32,
    secs: &'a str,
    apart: bool,
    err_file: &'a std::path::Path,
}

impl Finished<'_> {
    /// Prints why it failed or was noisy (nothing when it measured).
    fn say(&self, outcome: Outcome, report: Option<&EntryReport>) -> Result<()> {
        let (code, secs) = (self.code, self.secs);
        match outcome {
            Outcome::Failed if code == 0 => {
                outln!(
                    "   FAILED (exit 0, {secs} s): it wrote no report ({}.json)",
                    self.label
                );
            }
            Outcome::Failed => {
                let why = if self.apart {
                    // The refusal itself, not a note printed before it.
                    benchmp::input::read_text(self.err_file, 64 * 1024)
                        .ok()
                        .and_then(|t| {
                            t.lines()
                                .find(|l| l.contains(benchmp::run::overlap::RAN_APART))
                                .map(|l| one_line(l, 300))
                        })
                        .unwrap_or_default()
                } else {
                    head(self.err_file)
                };
                outln!("   FAILED (exit {code}, {secs} s): {why}");
            }
            Outcome::Noisy => outln!(
                "   NOISY (exit {code}, measured on a busy machine): {}",
                reason(report)
            ),
            Outcome::Ok | Outcome::Interrupted => {}
        }
        Ok(())
    }
}

impl Runner<'_> {
    /// Waits for a quiet machine, runs `e`, records its row in `status` and prints its lines;
    /// `again` marks the second run of a noisy entry.
    pub(super) fn run(
        &mut self,
        e: &SuiteEntry,
        status: &mut StatusFile,
        again: bool,
    ) -> Result<Run> {
        self.wait_quiet()?;
        if again {
            self.forget_first_run(e)?;
        }
        let job = self.job_of(e, again)?;
        let start = Instant::now();
        let row = |exit: i32, outcome: Outcome| StatusRow {
            label: e.label.clone(),
            tool: e.tool.to_string(),
            exit,
            seconds: format!("{:.1}", start.elapsed().as_secs_f64()),
            outcome: Some(outcome),
        };
        let code = match job.run() {
            Ok(Ended::Status(c)) => c,
            Ok(Ended::Interrupted(sig)) => {
                status.set(row(128 + sig as i32, Outcome::Interrupted))?;
                return Ok(Run::Interrupted(sig));
            }
            Err(err @ JobError::Start { .. }) => self.not_started(e, err, status, row)?,
            Err(err) => return Err(err.into()),
        };
        let report = summary::read_report(&self.dest.join(format!("{}.json", e.label)))
            .ok()
            .flatten();
        let outcome = summary::outcome(code, report.as_ref());
        let err_file = self.dest.join(format!("{}.err", e.label));
        let apart = outcome == Outcome::Failed
            && code == benchmp::EXIT_FAILED
            && benchmp::input::read_text(&err_file, 64 * 1024)
                .is_ok_and(|t| t.contains(benchmp::run::overlap::RAN_APART));
        let done = row(code, outcome);
        let secs = done.seconds.clone();
        status.set(done)?;
        let finished = Finished {
            label: &e.label,
            code,
            secs: &secs,
            apart,
            err_file: &err_file,
        };
        finished.say(outcome, report.as_ref())?;
        Ok(Run::Ended {
            outcome,
            report,
            apart,
        })
    }

    /// Removes the first run's report of an entry run again: a report of the first must not
    /// stand in for a second run that wrote none (refused, its children apart this time).
    fn forget_first_run(&self, e: &SuiteEntry) -> Result<()> {
        for ext in ["json", "csv"] {
            let f = self.dest.join(format!("{}.{ext}", e.label));
            match std::fs::remove_file(&f) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                    return Err(err).with_context(|| format!("cannot remove {}", shown(&f)));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The job that runs `e` (its folder made when it writes one), announced in its line.
    fn job_of(&self, e: &SuiteEntry, again: bool) -> Result<Job> {
        let (extra, env): (&[String], &[(String, String)]) = if e.tool == "dto" {
            (&self.dto_extra, &self.dto_env)
        } else {
            (&self.extra, &[])
        };
        let mut job = Job::of_entry(self.bin, self.dest, e, extra, env);
        job.timeout = self.timeout;
        job.hold = Some(self.hold);
        if e.needs_dir() {
            let d = self.dest.join(&e.label);
            std::fs::create_dir_all(&d).with_context(|| format!("cannot create {}", shown(&d)))?;
        }
        let again_word = if again { " (again: it was noisy)" } else { "" };
        outln!(
            "{:<22} {} {}{again_word}",
            e.label,
            e.tool,
            job.args.join(" ")
        );
        Ok(job)
    }

    /// An entry whose tool could not start: its line in `LABEL.err`, and its status (127); a
    /// resource limit ends the suite (exit 1) with the entry recorded and the limit named,
    /// since nothing else would start either.
    fn not_started(
        &self,
        e: &SuiteEntry,
        err: JobError,
        status: &mut StatusFile,
        row: impl Fn(i32, Outcome) -> StatusRow,
    ) -> Result<i32> {
        let limited = foundation::error::Limit::in_chain(&err).is_some();
        let err = anyhow::Error::from(err);
        let line = benchmp::error::chain_line(&*err);
        write_whole(
            &self.dest.join(format!("{}.err", e.label)),
            format!("{line}\n").as_bytes(),
        )?;
        if limited {
            status.set(row(127, Outcome::Failed))?;
            outln!("   FAILED (exit 127): {}", one_line(&line, 300));
            return Err(err);
        }
        Ok(127)
    }

    /// Waits (bounded) until none of the CPUs is busy; after a wait that ran out, the next
    /// ones are short.
    fn wait_quiet(&mut self) -> Result<()> {
        if self.quiet_limit.is_zero() {
            return Ok(());
        }
        let limit = if self.busy_before {
            self.quiet_limit.min(quiet::AFTER_TIMEOUT)
        } else {
            self.quiet_limit
        };
        // A stdout that fails shows at the next line written with `outln!`.
        let mut say = |line: String| {
            let _ = benchmp::cli::write_stdout(&format!("{line}\n"));
        };
        let Some(w) = quiet::wait(&self.cpus, limit, &mut say) else {
            return Ok(());
        };
        self.busy_before = !w.quiet();
        if !w.quiet() {
            outln!(
                "   went on after {:.0} s: {} (the entry may be noisy)",
                w.waited.as_secs_f64(),
                quiet::describe(&w.busy)
            );
        }
        Ok(())
    }
}

/// The first noise reason of a report, on one line.
pub(super) fn reason(report: Option<&EntryReport>) -> String {
    report
        .and_then(|r| r.reasons.first())
        .map_or(String::new(), |r| one_line(r, 300))
}
