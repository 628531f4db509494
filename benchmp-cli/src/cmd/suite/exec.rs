//! Runs the plan's entries one after another: each tool in a process group of its own that
//! ends with the suite however the suite ends (SIGKILL included) and holds the folder's lock
//! for as long as anything of it runs, its standard output and errors in the entry's files,
//! its row in `status.tsv`; a failed entry is reported and the next one runs. A stop signal
//! (SIGINT, SIGTERM, SIGHUP) is passed to the running entry's group, which gets a grace
//! period, then SIGTERM, then SIGKILL, before the suite records it as interrupted and exits
//! 128+n.

use std::fs::File;
use std::os::fd::RawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::plan::{SuiteEntry, Word};
use crate::cmd::summary::{STATUS_HEADER, StatusRow};

/// Time a stopped entry has before SIGTERM, and as much again before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);
/// How often the executor looks at its running entry.
const POLL: Duration = Duration::from_millis(20);
/// The status of an entry stopped by `--entry-timeout` (as timeout(1) reports it).
pub const TIMED_OUT: i32 = 124;

/// How one command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// With this status (128+n for a signal, as a shell reports it).
    Status(i32),
    /// The suite was told to stop by this signal; the command was stopped.
    Interrupted(Signal),
}

/// The paths an entry's placeholders stand for.
#[derive(Debug, Clone)]
pub struct EntryFiles {
    /// `LABEL.json`.
    pub json: PathBuf,
    /// `LABEL.csv`.
    pub csv: PathBuf,
    /// `LABEL/` (made when the entry needs it).
    pub dir: PathBuf,
}

impl EntryFiles {
    /// The files of `label` in `out`.
    pub fn of(out: &Path, label: &str) -> EntryFiles {
        EntryFiles {
            json: out.join(format!("{label}.json")),
            csv: out.join(format!("{label}.csv")),
            dir: out.join(label),
        }
    }

    /// The names, relative to the results folder, of everything running `entry` makes
    /// there (with `ab`, its pairing's too): its text, errors and reports, its folder.
    pub fn names(entry: &SuiteEntry, ab: bool) -> Vec<String> {
        let l = &entry.label;
        let words = || entry.args.iter().chain(entry.env.iter().map(|(_, w)| w));
        let mut v = vec![format!("{l}.txt"), format!("{l}.err")];
        if words().any(|w| matches!(w, Word::Json(_))) {
            v.push(format!("{l}.json"));
        }
        if words().any(|w| matches!(w, Word::Csv(_))) {
            v.push(format!("{l}.csv"));
        }
        if entry.needs_dir() {
            v.push(format!("{l}/"));
        }
        if ab {
            v.extend(["json", "txt", "err"].map(|x| format!("ab/{l}.{x}")));
            if entry.needs_dir() {
                v.extend(["base", "current"].map(|s| format!("ab/{l}-{s}/")));
            }
        }
        v
    }

    /// A word with its placeholder filled in.
    pub fn fill(&self, w: &Word) -> String {
        match w {
            Word::Text(t) => t.clone(),
            Word::Json(p) => format!("{p}{}", self.json.display()),
            Word::Csv(p) => format!("{p}{}", self.csv.display()),
            Word::Dir(p) => format!("{p}{}", self.dir.display()),
        }
    }
}

/// One command to run: program, arguments, environment, where its output goes.
#[derive(Debug)]
pub struct Job {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment added to the suite's own.
    pub env: Vec<(String, String)>,
    /// Standard output goes here (inherited when `None`).
    pub stdout: Option<PathBuf>,
    /// Standard errors go here (inherited when `None`).
    pub stderr: Option<PathBuf>,
    /// Stopped with SIGTERM (then SIGKILL) after this long.
    pub timeout: Option<Duration>,
    /// A descriptor the job inherits (the folder's lock), so that what it starts holds it.
    pub hold: Option<RawFd>,
}

/// Why a job did not run.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A file for its output cannot be made (a full disk): the suite cannot go on.
    #[error("cannot create {}", foundation::error::shown(.path))]
    Output {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The program cannot be started (the entry's status is 127).
    #[error("cannot start {}", foundation::error::shown(.program))]
    Start {
        /// The program.
        program: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Waiting for it failed.
    #[error("cannot wait for {}", foundation::error::shown(.program))]
    Wait {
        /// The program.
        program: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl Job {
    /// The job of `entry` with `bin`'s binary, its files in `out`, `extra` arguments after
    /// its own and `extra_env` besides its own.
    pub fn of_entry(
        bin: &Path,
        out: &Path,
        entry: &SuiteEntry,
        extra: &[String],
        extra_env: &[(String, String)],
    ) -> Job {
        let files = EntryFiles::of(out, &entry.label);
        let mut env: Vec<(String, String)> = entry
            .env
            .iter()
            .map(|(k, v)| (k.clone(), files.fill(v)))
            .collect();
        env.extend_from_slice(extra_env);
        let mut args: Vec<String> = entry.args.iter().map(|w| files.fill(w)).collect();
        args.extend_from_slice(extra);
        Job {
            program: bin.join(entry.tool),
            args,
            env,
            stdout: Some(out.join(format!("{}.txt", entry.label))),
            stderr: Some(out.join(format!("{}.err", entry.label))),
            timeout: None,
            hold: None,
        }
    }

    /// Runs the job to its end (or until the suite is told to stop) and reaps everything of
    /// it.
    pub fn run(&self) -> Result<Ended, JobError> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .process_group(0);
        benchmp::sys::process::end_with_this_process(&mut cmd, self.hold);
        let output = |p: &Path| {
            File::create(p).map_err(|source| JobError::Output {
                path: p.to_path_buf(),
                source,
            })
        };
        if let Some(p) = &self.stdout {
            cmd.stdout(output(p)?);
        }
        if let Some(p) = &self.stderr {
            cmd.stderr(output(p)?);
        }
        let mut child = cmd.spawn().map_err(|source| JobError::Start {
            program: self.program.clone(),
            source,
        })?;
        let wait = |source| JobError::Wait {
            program: self.program.clone(),
            source,
        };
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait().map_err(wait)? {
                // What it forked and left behind goes with it.
                stop_group(&mut child, Signal::SIGTERM, true);
                return Ok(Ended::Status(status.code().unwrap_or_else(|| {
                    128 + status.signal().unwrap_or(Signal::SIGKILL as i32)
                })));
            }
            if let Some(sig) = benchmp::sys::process::interrupted() {
                stop_group(&mut child, sig, false);
                return Ok(Ended::Interrupted(sig));
            }
            if self.timeout.is_some_and(|t| start.elapsed() >= t) {
                stop_group(&mut child, Signal::SIGTERM, false);
                return Ok(Ended::Status(TIMED_OUT));
            }
            std::thread::sleep(POLL);
        }
    }
}

/// Sends `sig` to the child's process group, then SIGTERM and SIGKILL to what is left after
/// each grace period; reaps the child. With `quiet`, only what is left after the child ended
/// is stopped (nothing is signalled when the group is already empty).
fn stop_group(child: &mut Child, sig: Signal, quiet: bool) {
    let pgid = Pid::from_raw(child.id() as i32);
    let alive = |child: &mut Child| {
        let _ = child.try_wait();
        killpg(pgid, None).is_ok()
    };
    if quiet && !alive(child) {
        return;
    }
    let _ = killpg(pgid, sig);
    for next in [Signal::SIGTERM, Signal::SIGKILL] {
        let deadline = Instant::now() + GRACE;
        while alive(child) && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        if !alive(child) {
            break;
        }
        let _ = killpg(pgid, next);
    }
    let _ = child.wait();
}

/// `status.tsv`: one row per entry run, in the plan's order, the whole file written again
/// (whole or not at all) each time a row changes, so it never holds half a row.
#[derive(Debug)]
pub struct StatusFile {
    path: PathBuf,
    /// The plan's labels, in order.
    order: Vec<String>,
    rows: Vec<StatusRow>,
}

impl StatusFile {
    /// Starts the file with its header and the rows kept from an earlier run (`--resume`).
    pub fn create(
        path: &Path,
        order: Vec<String>,
        kept: Vec<StatusRow>,
    ) -> anyhow::Result<StatusFile> {
        let f = StatusFile {
            path: path.to_path_buf(),
            order,
            rows: kept,
        };
        f.write()?;
        Ok(f)
    }

    /// Sets an entry's row (replacing an earlier one of its label).
    pub fn set(&mut self, row: StatusRow) -> anyhow::Result<()> {
        self.rows.retain(|r| r.label != row.label);
        self.rows.push(row);
        let at = |l: &str| self.order.iter().position(|o| o == l).unwrap_or(usize::MAX);
        let mut rows = std::mem::take(&mut self.rows);
        rows.sort_by_key(|r| at(&r.label));
        self.rows = rows;
        self.write()
    }

    fn write(&self) -> anyhow::Result<()> {
        let mut text = format!("{STATUS_HEADER}\n");
        for r in &self.rows {
            text += &r.line();
        }
        crate::cmd::outdir::write_whole(&self.path, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::summary::Outcome;

    #[test]
    fn an_entry_names_every_file_it_makes() {
        let plan = super::super::plan::plan(
            super::super::plan::Mode::Quick,
            super::super::plan::Machine {
                cpus: 2,
                llc_bytes: 1 << 20,
            },
        );
        let dhry = plan.iter().find(|e| e.label == "dhry-P1").unwrap();
        assert_eq!(
            EntryFiles::names(dhry, false),
            ["dhry-P1.txt", "dhry-P1.err", "dhry-P1.json", "dhry-P1.csv"]
        );
        let dto = plan.iter().find(|e| e.label == "dto-speedup").unwrap();
        assert_eq!(
            EntryFiles::names(dto, true),
            [
                "dto-speedup.txt",
                "dto-speedup.err",
                "dto-speedup.json",
                "dto-speedup/",
                "ab/dto-speedup.json",
                "ab/dto-speedup.txt",
                "ab/dto-speedup.err",
                "ab/dto-speedup-base/",
                "ab/dto-speedup-current/",
            ]
        );
    }

    #[test]
    fn status_rows_keep_the_plans_order_and_a_row_is_replaced_whole() {
        let d = std::env::temp_dir().join(format!("benchmp-status-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join("status.tsv");
        let row = |label: &str, exit: i32, outcome: Outcome| StatusRow {
            label: label.into(),
            tool: "dhry".into(),
            exit,
            seconds: "1.0".into(),
            outcome: Some(outcome),
        };
        let order = vec!["a".to_string(), "b".into(), "c".into()];
        let mut f = StatusFile::create(&path, order, vec![row("c", 0, Outcome::Ok)]).unwrap();
        f.set(row("b", 130, Outcome::Interrupted)).unwrap();
        f.set(row("a", 1, Outcome::Failed)).unwrap();
        f.set(row("b", 0, Outcome::Noisy)).unwrap();
        let rows = crate::cmd::summary::read_status(&d).unwrap();
        let got: Vec<(&str, i32, Option<Outcome>)> = rows
            .iter()
            .map(|r| (r.label.as_str(), r.exit, r.outcome))
            .collect();
        assert_eq!(
            got,
            [
                ("a", 1, Some(Outcome::Failed)),
                ("b", 0, Some(Outcome::Noisy)),
                ("c", 0, Some(Outcome::Ok)),
            ]
        );
        let _ = std::fs::remove_dir_all(d);
    }
}
