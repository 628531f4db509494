//! Test support shared by every tool's `tests/cli.rs` (feature `testing`, a dev-dependency):
//! run a tool's binary with the calibration fixed, read its JSON, and check the error
//! contract (exit status, one line on stderr with the tool's prefix, no panic, nothing
//! measured). Tests that cannot run here say why through [`skip`], which the runner counts.
//!
//! Every tool runs as its own process, so forks never happen inside the multi-threaded test
//! runner.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod freeze;
mod temp;
pub use freeze::{
    Freeze, TIMED_FRAMES, children_of, freeze_second_child, output_with_each_second_child_frozen,
    output_with_second_child_frozen,
};
pub use temp::{TempDir, fixture_copy, temp_dir};

/// Environment every run starts from: lmbench's calibration variables fixed (nothing is
/// calibrated, no cache is read or written) and no placement or trace settings inherited.
pub const FIXED_CALIBRATION: [(&str, &str); 4] = [
    ("ENOUGH", "2000"),
    ("TIMING_O", "0"),
    ("LOOP_O", "0"),
    ("BENCHMP_CALIBRATION", "off"),
];

/// Variables removed from every run so the caller's shell cannot change a test.
pub const CLEARED: [&str; 5] = [
    "LMBENCH_SCHED",
    "BENCHMP_SYSFS_ROOT",
    "BENCHMP_TRACE",
    "RUST_LOG",
    "RUST_BACKTRACE",
];

/// The lock every test that changes tracefs's settings (an `ftrace record` run) holds for as
/// long as it does: tracefs is one per machine, and a test that takes a snapshot of its
/// settings while another test's capture has changed them would find them "not restored".
/// (ftrace's own tests, below this crate, name the same file.)
pub const TRACEFS_LOCK: &str = "/tmp/socbench-tracefs.lock";

/// Waits for and takes [`TRACEFS_LOCK`] (exclusive); released when dropped.
pub fn tracefs_lock() -> nix::fcntl::Flock<std::fs::File> {
    // flock works on a read-only descriptor too, for a lock file another user created.
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(TRACEFS_LOCK)
        .or_else(|_| std::fs::File::open(TRACEFS_LOCK))
        .unwrap_or_else(|e| panic!("cannot open the tracefs lock {TRACEFS_LOCK}: {e}"));
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| e)
        .unwrap_or_else(|e| panic!("cannot lock {TRACEFS_LOCK}: {e}"))
}

/// Tries of a parallel run whose children ran apart before a test accepts the refusal.
pub const TOGETHER_TRIES: usize = 3;

/// Whether `o` is the refusal of a parallel run whose children did not run together (exit 1),
/// the documented outcome when another task holds one child's CPU.
pub fn ran_apart(o: &Output) -> bool {
    o.status.code() == Some(1)
        && String::from_utf8_lossy(&o.stderr).contains(crate::run::overlap::RAN_APART)
}

/// Runs a parallel command (`run` starts it and waits) again while its children ran apart
/// (another task held one child's CPU, as on a busy machine), up to [`TOGETHER_TRIES`] times.
/// Returns the first output that is not that refusal, or `None` when every try was refused
/// that way, each refusal held to the error contract (exit 1, one line starting with
/// `name: `): the documented outcome, which the caller accepts instead of its own checks.
pub fn output_together(name: &str, mut run: impl FnMut() -> Output) -> Option<Output> {
    for _ in 0..TOGETHER_TRIES {
        let o = run();
        if !ran_apart(&o) {
            return Some(o);
        }
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(err.starts_with(&format!("{name}: ")), "{err}");
    }
    crate::errln!(
        "{name}: the children ran apart in {TOGETHER_TRIES} tries (a busy machine); the refusal was checked instead"
    );
    None
}

/// A tool binary under test (`Tool::new("bw_mem", env!("CARGO_BIN_EXE_bw_mem"))`).
#[derive(Debug, Clone)]
pub struct Tool {
    /// The prefix of its error lines (`bw_mem`).
    pub name: String,
    /// Path of the binary.
    pub bin: PathBuf,
    env: Vec<(String, Option<String>)>,
}

impl Tool {
    /// The binary with [`FIXED_CALIBRATION`] set and [`CLEARED`] removed.
    pub fn new(name: &str, bin: impl AsRef<Path>) -> Tool {
        let mut env: Vec<(String, Option<String>)> =
            CLEARED.iter().map(|k| (k.to_string(), None)).collect();
        env.extend(
            FIXED_CALIBRATION
                .iter()
                .map(|(k, v)| (k.to_string(), Some(v.to_string()))),
        );
        Tool {
            name: name.to_string(),
            bin: bin.as_ref().to_path_buf(),
            env,
        }
    }

    /// The same tool with one more variable set (`None`: removed) in every run.
    pub fn with_env(mut self, key: &str, value: Option<&str>) -> Tool {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), value.map(str::to_string)));
        self
    }

    /// A command for the binary with the tool's environment.
    pub fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut c = Command::new(&self.bin);
        c.args(args);
        for (k, v) in &self.env {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c
    }

    /// Runs the binary to completion.
    pub fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        self.command(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.bin.display()))
    }

    /// Runs the binary and asserts it succeeded.
    pub fn ok<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        self.succeeded(args, self.run(args))
    }

    /// `o`, the output of a run with `args`, after asserting it succeeded.
    fn succeeded<S: AsRef<OsStr>>(&self, args: &[S], o: Output) -> Output {
        assert!(
            o.status.success(),
            "{} {:?}: {:?}\nstdout: {}\nstderr: {}",
            self.name,
            strs(args),
            o.status,
            stdout(&o),
            stderr(&o)
        );
        o
    }

    /// Runs the binary with `--json` first and parses what it printed.
    pub fn json<S: AsRef<OsStr>>(&self, args: &[S]) -> serde_json::Value {
        let mut all: Vec<&OsStr> = vec![OsStr::new("--json")];
        all.extend(args.iter().map(AsRef::as_ref));
        parse_json(&self.ok(&all))
    }

    /// [`Tool::ok`] for a parallel run: tried again while its children ran apart (another
    /// task held one child's CPU, as on a busy machine), up to [`TOGETHER_TRIES`] times.
    /// `None` when every try was refused that way, each refusal held to the error contract
    /// (exit 1, one line): the documented outcome, which the caller accepts instead of its
    /// own checks.
    pub fn ok_together<S: AsRef<OsStr>>(&self, args: &[S]) -> Option<Output> {
        let o = output_together(&self.name, || self.run(args))?;
        Some(self.succeeded(args, o))
    }

    /// [`Tool::json`] for a parallel run, as [`Tool::ok_together`].
    pub fn json_together<S: AsRef<OsStr>>(&self, args: &[S]) -> Option<serde_json::Value> {
        let mut all: Vec<&OsStr> = vec![OsStr::new("--json")];
        all.extend(args.iter().map(AsRef::as_ref));
        self.ok_together(&all).map(|o| parse_json(&o))
    }

    /// Asserts the error contract for a run: exit status `code`, exactly one line on stderr
    /// starting with `name: `, no panic, nothing on stdout, and an end before any measurement
    /// could have finished ([`Tool::run_bounded`] with the calibrated interval set to a
    /// minute). Returns the line.
    pub fn fails<S: AsRef<OsStr>>(&self, args: &[S], code: i32) -> String {
        // Unless the case sets its own ENOUGH, make any interval that starts last a minute, so
        // a measurement that should not have started shows as a hang.
        let fixed = self
            .env
            .iter()
            .any(|(k, v)| k == "ENOUGH" && v.as_deref() == Some(FIXED_CALIBRATION[0].1));
        let tool = if fixed {
            self.clone().with_env("ENOUGH", Some("60000000"))
        } else {
            self.clone()
        };
        let o = tool.run_bounded(args, Duration::from_secs(30));
        let err = stderr(&o);
        let what = format!("{} {:?}", self.name, strs(args));
        assert_eq!(o.status.code(), Some(code), "{what}: stderr: {err}");
        assert!(!err.contains("panicked"), "{what} panicked: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: one line, got: {err:?}");
        assert!(
            err.starts_with(&format!("{}: ", self.name)),
            "{what}: no '{}:' prefix: {err:?}",
            self.name
        );
        assert!(
            o.stdout.is_empty(),
            "{what} wrote to stdout: {}",
            stdout(&o)
        );
        err.trim_end().to_string()
    }

    /// Runs the binary with stdout on /dev/full and asserts what a result that cannot be
    /// written must give: exit status 1, one line on stderr with the tool's prefix, no panic.
    /// Returns the line.
    pub fn fails_on_full_stdout<S: AsRef<OsStr>>(&self, args: &[S]) -> String {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let o = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(full)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.bin.display()));
        let err = stderr(&o);
        let what = format!("{} {:?}", self.name, strs(args));
        assert_eq!(o.status.code(), Some(1), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(
            err.starts_with(&format!("{}: ", self.name)),
            "{what}: {err}"
        );
        err.trim_end().to_string()
    }

    /// Runs the binary, killing it (and failing the test) when it has not ended after
    /// `limit`: a guard against hangs, not a timing assertion.
    pub fn run_bounded<S: AsRef<OsStr>>(&self, args: &[S], limit: Duration) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.bin.display()));
        let start = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if start.elapsed() > limit => {
                    let _ = child.kill();
                    let o = child.wait_with_output().expect("reaped");
                    panic!(
                        "{} {:?} was still running after {limit:?} (a measurement started?); stderr: {}",
                        self.name,
                        strs(args),
                        stderr(&o)
                    );
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => panic!("waiting for {}: {e}", self.name),
            }
        }
        child.wait_with_output().expect("output collected")
    }
}

/// One row of a bad-input table: arguments, extra environment, the exit status wanted and a
/// word the one-line message must contain.
#[derive(Debug, Clone)]
pub struct Bad {
    /// Arguments.
    pub args: Vec<String>,
    /// Environment set for this case only.
    pub env: Vec<(String, String)>,
    /// Wanted exit status (2 for usage errors).
    pub code: i32,
    /// A word the one-line message must contain.
    pub says: String,
}

impl Bad {
    /// Usage error (exit 2) for these arguments, whose message contains `says`.
    pub fn args(args: &[&str], says: &str) -> Bad {
        Bad::env(args, &[], says)
    }

    /// Usage error (exit 2) for these arguments under this environment.
    pub fn env(args: &[&str], env: &[(&str, &str)], says: &str) -> Bad {
        Bad {
            args: args.iter().map(|a| a.to_string()).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            code: 2,
            says: says.to_string(),
        }
    }

    /// The same case with another exit status (3 for unsupported here).
    pub fn exits(mut self, code: i32) -> Bad {
        self.code = code;
        self
    }
}

/// Checks every row of a bad-input table with [`Tool::fails`]; reports all rows that broke
/// the contract at once.
pub fn check_bad_inputs(tool: &Tool, table: &[Bad]) {
    let mut broken = Vec::new();
    for case in table {
        let mut t = tool.clone();
        for (k, v) in &case.env {
            t = t.with_env(k, Some(v));
        }
        let r = std::panic::catch_unwind(|| t.fails(&case.args, case.code));
        match r {
            Ok(line) if line.contains(&case.says) => {}
            Ok(line) => broken.push(format!(
                "{:?} {:?}: message lacks {:?}: {line}",
                case.env, case.args, case.says
            )),
            Err(p) => broken.push(format!(
                "{:?} {:?}: {}",
                case.env,
                case.args,
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
        }
    }
    assert!(
        broken.is_empty(),
        "{} of {} bad inputs broke the contract:\n{}",
        broken.len(),
        table.len(),
        broken.join("\n")
    );
}

/// Standard output as text (lossy).
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text (lossy).
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Parses a run's standard output as one JSON document.
pub fn parse_json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)))
}

/// Skips the rest of a test that cannot run on this machine, saying why, in a way the test
/// runner counts: with `SOCBENCH_REQUIRE_ALL=1` (set by scripts/test.sh after its set-up) a
/// skip is a failure; otherwise it prints `SKIPPED <test>: <why>` and returns true, and the
/// caller returns. Use `#[ignore = "..."]` instead when the reason is known at compile time.
pub fn skip(test: &str, why: &str) -> bool {
    if std::env::var("SOCBENCH_REQUIRE_ALL").is_ok_and(|v| v == "1") {
        panic!("{test} cannot run here: {why} (SOCBENCH_REQUIRE_ALL=1 forbids skipping)");
    }
    crate::errln!("SKIPPED {test}: {why}");
    true
}

/// The boundary every function starts on in this workspace's builds (`.cargo/config.toml`:
/// `-align-all-functions=6`), which keeps a kernel's loops at fixed offsets in their cache lines.
pub const CODE_ALIGN: usize = 64;

/// Asserts that each named function (a name and its address, `f as *const ()`) starts on a
/// [`CODE_ALIGN`] boundary. Fails for a build without the workspace's flags (a RUSTFLAGS
/// variable replaces them), where a figure can move when unrelated code moves.
pub fn assert_code_aligned(functions: &[(&str, *const ())]) {
    let off: Vec<String> = functions
        .iter()
        .filter(|(_, addr)| !(*addr as usize).is_multiple_of(CODE_ALIGN))
        .map(|(name, addr)| format!("{name} at {addr:p}"))
        .collect();
    assert!(
        off.is_empty(),
        "not on a {CODE_ALIGN}-byte boundary: {} (built without .cargo/config.toml's rustflags?)",
        off.join(", ")
    );
}

fn strs<S: AsRef<OsStr>>(args: &[S]) -> Vec<String> {
    args.iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect()
}

/// Processes whose environment carries `BENCHMP_TEST_TAG=tag` (a run's leftovers), and any
/// orphan reparented to this process (a subreaper; zombies have no environment left), this
/// process excluded.
pub fn tagged_processes(tag: &str) -> Vec<String> {
    let needle = format!("BENCHMP_TEST_TAG={tag}");
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) || name == me {
            continue;
        }
        if let Ok(env) = std::fs::read(e.path().join("environ"))
            && env.split(|&b| b == 0).any(|kv| kv == needle.as_bytes())
        {
            found.push(name);
            continue;
        }
        if let Ok(stat) = std::fs::read_to_string(e.path().join("stat"))
            && let Some(after) = stat.rsplit_once(") ").map(|(_, a)| a)
        {
            let fields: Vec<&str> = after.split_whitespace().collect();
            if fields.get(1) == Some(&me.as_str()) {
                found.push(format!("{name} (state {}, orphan)", fields[0]));
            }
        }
    }
    found
}

/// Asserts that no process of the tag is left, nor an orphan handed to this process, waiting
/// up to `grace` for the kernel to finish tearing them down.
pub fn assert_no_tagged_processes(tag: &str, grace: Duration) {
    let deadline = Instant::now() + grace;
    loop {
        let left = tagged_processes(tag);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "processes left behind: {left:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A sysfs file whose content changes between reads, as a throttle in the middle of a run
/// changes one: a regular file at `path` (a tool reads no FIFO) holding `values[0]`, replaced
/// whole by the next value each time a reader closes it (inotify's close-after-read), until
/// the last stays. The reads a test expects must be apart by more than the feed takes to put
/// the next value in place (a run's before and after, not two reads in a row).
#[derive(Debug)]
pub struct ReadFeed {
    ending: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<usize>,
}

impl ReadFeed {
    /// Writes the first value (the file must not exist) and starts watching its folder.
    pub fn start(path: &Path, values: &[&str]) -> ReadFeed {
        use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
        use std::sync::atomic::Ordering;
        assert!(
            !path.exists(),
            "{}: the feed makes the file",
            path.display()
        );
        let dir = path.parent().expect("a file in a folder").to_path_buf();
        let name = path.file_name().expect("a file name").to_os_string();
        let put = move |value: &str| {
            let mut tmp = name.clone();
            tmp.push(".feed");
            let tmp = dir.join(tmp);
            std::fs::write(&tmp, format!("{value}\n")).expect("write the feed's value");
            std::fs::rename(&tmp, dir.join(&name)).expect("put the feed's value in place");
        };
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        put(&values[0]);
        let inotify =
            Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).expect("inotify");
        inotify
            .add_watch(
                path.parent().expect("a folder"),
                AddWatchFlags::IN_CLOSE_NOWRITE,
            )
            .expect("watch the feed's folder");
        let ending = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let end = ending.clone();
        let watched = path.file_name().expect("a file name").to_os_string();
        let thread = std::thread::spawn(move || {
            use std::os::fd::AsFd;
            let mut reads = 0;
            loop {
                let mut fds = [nix::poll::PollFd::new(
                    inotify.as_fd(),
                    nix::poll::PollFlags::POLLIN,
                )];
                let _ = nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(5u8));
                for e in inotify.read_events().unwrap_or_default() {
                    if e.name.as_ref() == Some(&watched) {
                        reads += 1;
                        if let Some(next) = values.get(reads) {
                            put(next);
                        }
                    }
                }
                if end.load(Ordering::SeqCst) {
                    return reads;
                }
            }
        });
        ReadFeed { ending, thread }
    }

    /// Stops watching and returns how many times the file was read (closed after a read).
    pub fn finish(self) -> usize {
        self.ending.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().expect("the feed's thread")
    }
}

/// What a [`LiveFiles`] update sees: when it runs and what the watched process is doing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moment {
    /// CLOCK_MONOTONIC ns: the clock of a report's windows.
    pub mono_ns: u64,
    /// Seconds since the previous update (0 at the first).
    pub dt_s: f64,
    /// The watched process's children now (its measuring children while it measures; 0
    /// before [`LiveFiles::watch`]).
    pub children: usize,
}

/// Sysfs files whose contents follow a profile in time, as a kernel's counters and gauges
/// do: a thread rewrites each (whole, by rename, so a reader sees one version or the next)
/// every `period`, with what the update function makes of the [`Moment`]. The timeline of
/// moments it kept is the fixture's own record, for a test to integrate the power it served
/// over a report's window ([`integral`]).
#[derive(Debug)]
pub struct LiveFiles {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    watched: std::sync::Arc<std::sync::atomic::AtomicU32>,
    thread: std::thread::JoinHandle<Vec<Moment>>,
}

/// How many children `pid` has now (`/proc/PID/task/PID/children`, else a scan of /proc).
fn child_count(pid: u32) -> usize {
    match std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
        Ok(list) => list.split_whitespace().count(),
        Err(_) => children_of(pid).len(),
    }
}

/// Writes `text` to `path` whole: to a hidden file beside it, then renamed over it.
fn replace_file(path: &Path, text: &str) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.live"));
    std::fs::write(&tmp, text).expect("write a live file");
    std::fs::rename(&tmp, path).expect("rename a live file");
}

impl LiveFiles {
    /// Writes the first version now, then keeps rewriting every `period` until
    /// [`LiveFiles::finish`].
    pub fn start(
        period: Duration,
        mut update: impl FnMut(&Moment) -> Vec<(PathBuf, String)> + Send + 'static,
    ) -> LiveFiles {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watched = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let write = |update: &mut dyn FnMut(&Moment) -> Vec<(PathBuf, String)>, m: &Moment| {
            for (path, text) in update(m) {
                replace_file(&path, &text);
            }
        };
        let first = Moment {
            mono_ns: crate::sys::clock::now_ns(),
            dt_s: 0.0,
            children: 0,
        };
        write(&mut update, &first);
        let (s, w) = (stop.clone(), watched.clone());
        let thread = std::thread::spawn(move || {
            let mut moments = vec![first];
            while !s.load(Ordering::SeqCst) {
                std::thread::sleep(period);
                let pid = w.load(Ordering::SeqCst);
                let now = crate::sys::clock::now_ns();
                let m = Moment {
                    mono_ns: now,
                    dt_s: (now - moments.last().map_or(now, |m| m.mono_ns)) as f64 / 1e9,
                    children: if pid == 0 { 0 } else { child_count(pid) },
                };
                write(&mut update, &m);
                moments.push(m);
            }
            moments
        });
        LiveFiles {
            stop,
            watched,
            thread,
        }
    }

    /// Follows `pid`'s children from now on ([`Moment::children`]).
    pub fn watch(&self, pid: u32) {
        self.watched.store(pid, std::sync::atomic::Ordering::SeqCst);
    }

    /// Stops rewriting and returns the timeline of every update.
    pub fn finish(self) -> Vec<Moment> {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().expect("the live files' thread")
    }
}

/// The energy (J) a profile served over `[from_ns, to_ns]`: each update's `power` (W) held
/// over the interval since the update before it, as the update accumulated it.
pub fn integral(
    moments: &[Moment],
    from_ns: u64,
    to_ns: u64,
    power: impl Fn(&Moment) -> f64,
) -> f64 {
    moments
        .windows(2)
        .map(|w| {
            let (a, b) = (w[0].mono_ns.max(from_ns), w[1].mono_ns.min(to_ns));
            if b > a {
                power(&w[1]) * (b - a) as f64 / 1e9
            } else {
                0.0
            }
        })
        .sum()
}

/// Runs a tool's command to its end (at most `limit`), telling `live` its pid as soon as it
/// starts, so the profile follows its measuring children.
pub fn run_watched(mut cmd: Command, live: &LiveFiles, limit: Duration) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the tool");
    live.watch(child.id());
    let start = Instant::now();
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let waiter = std::thread::spawn(move || child.wait_with_output().expect("the tool's output"));
    while !waiter.is_finished() {
        if start.elapsed() > limit {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            let o = waiter.join().expect("the waiter");
            panic!("still running after {limit:?}; stderr: {}", stderr(&o));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    waiter.join().expect("the waiter")
}
