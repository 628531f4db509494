//! Runs the plan's entries one after another: each tool in a process group of its own, its
//! standard output and errors in the entry's files, its status and time in `status.tsv`;
//! a failed entry is reported and the next one runs. A stop signal (SIGINT, SIGTERM, SIGHUP)
//! is passed to the running entry's group, which gets a grace period, then SIGTERM, then
//! SIGKILL, before the suite exits 128+n.

use std::fs::File;
use std::io::Write as _;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::plan::{Entry, Word};

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
pub struct Files {
    /// `LABEL.json`.
    pub json: PathBuf,
    /// `LABEL.csv`.
    pub csv: PathBuf,
    /// `LABEL/` (made when the entry needs it).
    pub dir: PathBuf,
}

impl Files {
    /// The files of `label` in `out`.
    pub fn of(out: &Path, label: &str) -> Files {
        Files {
            json: out.join(format!("{label}.json")),
            csv: out.join(format!("{label}.csv")),
            dir: out.join(label),
        }
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
}

impl Job {
    /// The job of `entry` with `bin`'s binary, its files in `out`, `extra` arguments after
    /// its own and `extra_env` besides its own.
    pub fn of_entry(
        bin: &Path,
        out: &Path,
        entry: &Entry,
        extra: &[String],
        extra_env: &[(String, String)],
    ) -> Job {
        let files = Files::of(out, &entry.label);
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
        }
    }

    /// Runs the job to its end (or until the suite is told to stop) and reaps everything of
    /// it; an error when it cannot start.
    pub fn run(&self) -> std::io::Result<Ended> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .process_group(0);
        if let Some(p) = &self.stdout {
            cmd.stdout(File::create(p)?);
        }
        if let Some(p) = &self.stderr {
            cmd.stderr(File::create(p)?);
        }
        let mut child = cmd.spawn()?;
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait()? {
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

/// `status.tsv`: one row per entry run (label, tool, exit, seconds).
#[derive(Debug)]
pub struct StatusFile {
    file: File,
}

impl StatusFile {
    /// Starts the file with its header.
    pub fn create(path: &Path) -> std::io::Result<StatusFile> {
        let mut file = File::create(path)?;
        file.write_all(b"label\ttool\texit\tseconds\n")?;
        Ok(StatusFile { file })
    }

    /// Adds an entry's row.
    pub fn add(&mut self, label: &str, tool: &str, code: i32, seconds: f64) -> std::io::Result<()> {
        writeln!(self.file, "{label}\t{tool}\t{code}\t{seconds:.1}")
    }
}
