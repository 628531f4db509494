//! The exit-status contract (README "Exit status") over every binary of the workspace, every
//! command and every option, as each binary describes itself (`SOCBENCH_CLI_SPEC`,
//! `foundation::contract`): a command or option added later is reached without editing this test,
//! and a command without an example of how to run it fails here.
//!
//! Each command's quick example is run as it is, then with each option given each hostile
//! value (a missing path, a folder, a FIFO, `/dev/zero`, `/dev/full`, nothing, a value with a
//! newline and an escape sequence, the program itself, a file in a read-only folder and one on
//! a full file system), with each flag it does not carry added, with stdout and with stderr on
//! `/dev/full`; each long example is
//! stopped by SIGINT, SIGTERM and SIGKILL. Every run must end (no hang), with a status of the
//! contract (never a panic's 101 or a signal's death), say a refusal in one line that names
//! the tool, leave the program and the inputs as they were, leave no process and no partial
//! file behind, and never let an escape sequence through to the terminal.
//!
//! Then every command runs in each hostile environment of `contract/environments.rs`
//! (resource limits, closed standard streams, FIFOs and links to `/dev/zero` in place of the
//! files it reads by default, links planted at its temporary names, a power meter that
//! breaks, one allowed CPU, SIGKILL followed by a run that must restore what it left): a table
//! of environments applied to the enumerated commands.
//!
//! The binaries are the ones `cargo test --workspace` built next to this test; run on its own
//! (`cargo test -p benchmp --test contract`) after `cargo build --workspace --bins`.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use benchmp::testing::{FIXED_CALIBRATION, skip, temp_dir};
use serde::Deserialize;

#[path = "contract/environments.rs"]
mod environments;

/// Longest any run may take before it counts as a hang (debug builds on a busy machine).
const HANG: Duration = Duration::from_secs(90);
/// When the signal goes to a long example.
const SIGNAL_AFTER: Duration = Duration::from_millis(1500);

#[derive(Debug, Deserialize)]
struct Spec {
    commands: Vec<SpecCommand>,
    examples: Vec<Example>,
}

#[derive(Debug, Deserialize)]
struct SpecCommand {
    path: Vec<String>,
    args: Vec<SpecArg>,
    has_subcommands: bool,
}

#[derive(Debug, Clone, Deserialize)]
struct SpecArg {
    id: String,
    long: Option<String>,
    short: Option<char>,
    positional: bool,
    takes_value: bool,
}

#[derive(Debug, Clone, Deserialize)]
struct Example {
    command: String,
    quick: String,
    long: String,
}

/// The workspace's binaries: every bin target of every member (cargo metadata).
fn workspace_binaries() -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(repo())
        .output()
        .expect("cargo metadata");
    assert!(out.status.success(), "{out:?}");
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut bins: Vec<String> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    bins.sort();
    bins
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The folder the binaries were built into: this test's `target/<profile>`.
fn bin_dir() -> PathBuf {
    let me = std::env::current_exe().unwrap();
    me.parent().unwrap().parent().unwrap().to_path_buf()
}

/// What a run's placeholders stand for.
#[derive(Debug, Clone)]
struct Places {
    bin: PathBuf,
    repo: PathBuf,
    report_a: PathBuf,
    report_b: PathBuf,
    suite: PathBuf,
    stubs: PathBuf,
}

impl Places {
    fn fill(&self, text: &str, tmp: &Path) -> Vec<String> {
        let filled = text
            .replace("{bin}", &self.bin.display().to_string())
            .replace("{repo}", &self.repo.display().to_string())
            .replace("{report_a}", &self.report_a.display().to_string())
            .replace("{report_b}", &self.report_b.display().to_string())
            .replace("{suite}", &self.suite.display().to_string())
            .replace("{stubs}", &self.stubs.display().to_string())
            .replace("{tmp}", &tmp.display().to_string());
        shlex::split(&filled).unwrap_or_else(|| panic!("example does not split: {text}"))
    }
}

/// Streams a run's standard output and errors go to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Streams {
    Captured,
    FullStdout,
    FullStderr,
    /// Captured through pipes, which no file-size limit reaches.
    Piped,
}

/// What a hostile environment changes about one run: variables, limits and descriptors, and
/// what it does to the run once started and while it runs.
#[derive(Default)]
struct Setting {
    /// Variables set last (over the test's and the example's own).
    set: Vec<(String, String)>,
    /// Variables removed.
    unset: Vec<&'static str>,
    /// Limits, a user, closed descriptors.
    confine: Option<benchmp::sys::process::Confinement>,
    /// Called with the program's pid as soon as it started (links planted at its names).
    started: Option<Box<dyn Fn(u32) + Send + Sync>>,
    /// Called every few milliseconds while it runs, with the time since it started: a
    /// signal to send its process group, if any (once).
    during: Option<Box<dyn Fn(Duration) -> Option<nix::sys::signal::Signal> + Send + Sync>>,
}

/// One finished run.
#[derive(Debug)]
struct Ran {
    what: String,
    code: Option<i32>,
    signal: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    hung: bool,
}

impl Ran {
    fn err_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

static RUNS: AtomicUsize = AtomicUsize::new(0);
/// Wall time spent per command, for the summary a `--nocapture` run prints.
static SPENT: Mutex<BTreeMap<String, (usize, Duration)>> = Mutex::new(BTreeMap::new());

/// The scene every run of the test shares: the binaries, their copies (the programs run), the
/// inputs made once, and the hostile places.
struct Scene {
    root: benchmp::testing::TempDir,
    places: Places,
    /// A copy of each binary, the program each run starts, with its identity to check.
    programs: BTreeMap<String, PathBuf>,
    /// Each copy's identity (device, inode, mtime, size), renewed when a broken copy is
    /// replaced.
    ids: Mutex<BTreeMap<String, (u64, u64, i64, u64)>>,
    fifo: PathBuf,
    folder: PathBuf,
    read_only: Option<PathBuf>,
    full: Option<PathBuf>,
    /// A captured sysfs tree whose every file is a FIFO, and one whose every file is a link
    /// to `/dev/zero` (the environment axis's `BENCHMP_SYSFS_ROOT`).
    fifo_tree: PathBuf,
    zero_tree: PathBuf,
    problems: Mutex<Vec<String>>,
}

fn identity(p: &Path) -> (u64, u64, i64, u64) {
    let m = std::fs::metadata(p).unwrap();
    (
        m.dev(),
        m.ino(),
        m.mtime_nsec() + m.mtime() * 1_000_000_000,
        m.len(),
    )
}

impl Scene {
    fn problem(&self, what: String) {
        self.problems.lock().unwrap().push(what);
    }

    /// Runs `program args` in `tmp` (its working folder), with the test's environment, its
    /// streams as asked; `signal` goes to its process group after [`SIGNAL_AFTER`].
    fn run(
        &self,
        binary: &str,
        args: &[String],
        tmp: &Path,
        streams: Streams,
        signal: Option<nix::sys::signal::Signal>,
        extra_env: &[(&str, &str)],
    ) -> Ran {
        self.run_in(
            binary,
            args,
            tmp,
            streams,
            signal,
            extra_env,
            &Setting::default(),
        )
    }

    /// [`Scene::run`] in a hostile environment ([`Setting`]).
    #[allow(clippy::too_many_arguments)]
    fn run_in(
        &self,
        binary: &str,
        args: &[String],
        tmp: &Path,
        streams: Streams,
        signal: Option<nix::sys::signal::Signal>,
        extra_env: &[(&str, &str)],
        setting: &Setting,
    ) -> Ran {
        // An ftrace run may change tracefs's settings for its time: never while a trace test
        // (run beside this one by scripts/test.sh) takes its snapshot of them.
        let _tracefs = (binary == "ftrace").then(benchmp::testing::tracefs_lock);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let tag = format!("contract-{}-{n}", std::process::id());
        let program = &self.programs[binary];
        // Leading NAME=VALUE words of an example set its environment, as in a shell.
        let assignments = args
            .iter()
            .take_while(|w| {
                w.split_once('=').is_some_and(|(k, _)| {
                    k.starts_with(|c: char| c.is_ascii_uppercase())
                        && k.chars()
                            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                })
            })
            .count();
        let (env_words, args) = args.split_at(assignments);
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(tmp)
            .stdin(Stdio::null())
            .process_group(0)
            .env("BENCHMP_TEST_TAG", &tag)
            .env("SOCBENCH_STATE_DIR", self.root.join("state"))
            .env("SOCBENCH_STUB_REPORT", &self.places.report_a)
            .env_remove("LMBENCH_SCHED")
            .env_remove("BENCHMP_SYSFS_ROOT")
            .env_remove("BENCHMP_TRACE")
            .env_remove("BENCHMP_AB_FDS")
            .env_remove("RUST_BACKTRACE")
            .env_remove("RUST_LOG");
        for (k, v) in FIXED_CALIBRATION.iter().chain(extra_env) {
            cmd.env(k, v);
        }
        for w in env_words {
            let (k, v) = w.split_once('=').unwrap_or_default();
            cmd.env(k, v);
        }
        for k in &setting.unset {
            cmd.env_remove(k);
        }
        for (k, v) in &setting.set {
            cmd.env(k, v);
        }
        if let Some(c) = &setting.confine {
            benchmp::sys::process::confine_command(&mut cmd, c.clone());
        }

        let full = || {
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap()
        };
        let (out_path, err_path) = (tmp.join(".stdout"), tmp.join(".stderr"));
        let file = |p: &Path| std::fs::File::create(p).unwrap();
        match streams {
            Streams::Captured => cmd.stdout(file(&out_path)).stderr(file(&err_path)),
            Streams::FullStdout => cmd.stdout(full()).stderr(file(&err_path)),
            Streams::FullStderr => cmd.stdout(file(&out_path)).stderr(full()),
            Streams::Piped => cmd.stdout(Stdio::piped()).stderr(Stdio::piped()),
        };
        let what = format!(
            "{binary} {}",
            shlex::try_join(args.iter().map(String::as_str)).unwrap_or_default()
        );
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                self.problem(format!("{what}: cannot start: {e}"));
                return Ran {
                    what,
                    code: Some(0),
                    signal: None,
                    stdout: Vec::new(),
                    stderr: Vec::new(),
                    hung: false,
                };
            }
        };
        let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
        let start = Instant::now();
        if let Some(f) = &setting.started {
            f(child.id());
        }
        // Pipes are drained as the run writes (at most 2 MiB kept each).
        let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
            r.map(|mut r| {
                std::thread::spawn(move || {
                    let mut kept = Vec::new();
                    let mut buf = [0u8; 8192];
                    while let Ok(n) = r.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        if kept.len() < 2 << 20 {
                            kept.extend_from_slice(&buf[..n]);
                        }
                    }
                    kept
                })
            })
        };
        let out_pipe = drain(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
        );
        let err_pipe = drain(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
        );
        let mut signalled = false;
        let mut hung = false;
        let mut during_sent = false;
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if !during_sent
                && let Some(f) = &setting.during
                && let Some(sig) = f(start.elapsed())
            {
                let _ = nix::sys::signal::killpg(pgid, sig);
                during_sent = true;
            }
            if let Some(sig) = signal
                && !signalled
                && start.elapsed() >= SIGNAL_AFTER
            {
                let _ = nix::sys::signal::killpg(pgid, sig);
                signalled = true;
            }
            if start.elapsed() >= HANG {
                hung = true;
                let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
                break child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        // Whatever the run left must be gone soon after it ended (children reaped, entries
        // stopped, nothing orphaned), however it ended.
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut left = tagged(&tag);
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            left = tagged(&tag);
        }
        if !left.is_empty() {
            self.problem(format!("{what}: processes left behind: {left:?}"));
            for p in &left {
                if let Ok(pid) = p.split(' ').next().unwrap_or("").parse::<i32>() {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
            }
        }
        {
            let key: String = what
                .split(" -")
                .next()
                .unwrap_or("")
                .chars()
                .take(40)
                .collect();
            let mut spent = SPENT.lock().unwrap();
            let e = spent.entry(key).or_default();
            e.0 += 1;
            e.1 += start.elapsed();
        }
        let read = |p: &Path| std::fs::read(p).unwrap_or_default();
        let joined = |t: Option<std::thread::JoinHandle<Vec<u8>>>| t.and_then(|t| t.join().ok());
        let (piped_out, piped_err) = (joined(out_pipe), joined(err_pipe));
        let ran = Ran {
            what,
            code: status.code(),
            signal: status.signal(),
            stdout: piped_out.unwrap_or_else(|| read(&out_path)),
            stderr: piped_err.unwrap_or_else(|| read(&err_path)),
            hung,
        };
        let _ = std::fs::remove_file(&out_path);
        let _ = std::fs::remove_file(&err_path);
        ran
    }

    /// The checks every run must pass; `codes` are the statuses its case allows.
    fn check(&self, binary: &str, ran: &Ran, codes: &[i32], streams: Streams) {
        for p in self.found(binary, ran, codes, streams) {
            self.problem(p);
        }
    }

    /// [`Scene::check`]'s problems, returned.
    fn found(&self, binary: &str, ran: &Ran, codes: &[i32], streams: Streams) -> Vec<String> {
        let mut found = Vec::new();
        let what = &ran.what;
        if ran.hung {
            found.push(format!("{what}: did not end within {HANG:?}"));
            return found;
        }
        let Some(code) = ran.code else {
            found.push(format!("{what}: died of signal {:?}", ran.signal));
            return found;
        };
        let err = ran.err_text();
        if err.contains("panicked at") || code == 101 {
            found.push(format!("{what}: panicked (exit {code}): {}", head(&err)));
            return found;
        }
        if !codes.contains(&code) {
            found.push(format!(
                "{what}: exit {code}, expected one of {codes:?}: {}",
                head(&err)
            ));
            return found;
        }
        if ran.stdout.contains(&0x1b) || ran.stderr.contains(&0x1b) {
            found.push(format!("{what}: an escape sequence reached the terminal"));
        }
        // `ftrace record` ends with its command's status (documented): not a refusal of its own.
        let passed_on = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| {
                l.contains("the command exited with status") || l.contains("stopped by signal")
            });
        if (code == 2 || code == 3) && streams != Streams::FullStderr && !passed_on {
            let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
            let prefix = format!("{}:", self.spec_name(binary));
            if lines.len() != 1 || !lines[0].starts_with(&prefix) || err.len() > 4096 {
                found.push(format!(
                    "{what}: a refusal (exit {code}) must be one line starting '{prefix}' of at most 4 KiB, got {} lines: {}",
                    lines.len(),
                    head(&err)
                ));
            }
        }
        // "cached" is said only of a file that is there (a full disk once said it of none).
        for line in err.lines() {
            if let Some((_, path)) = line.split_once("; cached in ")
                && !Path::new(path.trim()).is_file()
            {
                found.push(format!("{what}: said it cached {path}, which is not there"));
            }
        }
        if ran.stdout.len() > (1 << 20) || ran.stderr.len() > (1 << 20) {
            found.push(format!("{what}: wrote over a MiB to a terminal stream"));
        }
        let program = &self.programs[binary];
        let mut ids = self.ids.lock().unwrap();
        if identity(program) != ids[binary] {
            found.push(format!(
                "{what}: the program {} was changed",
                program.display()
            ));
            // Put it back, so later runs start the real program.
            let _ = std::fs::remove_file(program);
            std::fs::copy(bin_dir().join(binary), program).unwrap();
            ids.insert(binary.to_string(), identity(program));
        }
        drop(ids);
        for input in [&self.places.report_a, &self.places.report_b] {
            if std::fs::read(input).ok()
                != std::fs::read(self.root.join("inputs").join(input.file_name().unwrap())).ok()
            {
                found.push(format!("{what}: the input {} was changed", input.display()));
            }
        }
        found
    }

    fn spec_name(&self, binary: &str) -> String {
        binary.to_string()
    }
}

/// Processes whose environment carries the run's tag (whatever it started, however deep).
fn tagged(tag: &str) -> Vec<String> {
    let needle = format!("BENCHMP_TEST_TAG={tag}");
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.bytes().all(|b| b.is_ascii_digit())
            && let Ok(env) = std::fs::read(e.path().join("environ"))
            && env.split(|&b| b == 0).any(|kv| kv == needle.as_bytes())
        {
            let cmd = std::fs::read_to_string(e.path().join("cmdline"))
                .unwrap_or_default()
                .replace('\0', " ");
            found.push(format!("{name} {}", cmd.trim()));
        }
    }
    found
}

fn head(s: &str) -> String {
    let one: String = s
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(300)
        .collect();
    format!("{one:?}")
}

/// Files a run left that no run may leave: hidden staging copies.
fn partial_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() && !p.is_symlink() {
            found.extend(partial_files(&p));
        } else if name.starts_with('.') && name.ends_with(".tmp") {
            found.push(p);
        }
    }
    found
}

/// Mounts a small tmpfs at `dir` (`ro` read-only), or says why not.
fn mount_tmpfs(dir: &Path, options: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let o = Command::new("mount")
        .args(["-t", "tmpfs", "-o", options, "tmpfs"])
        .arg(dir)
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).trim().to_string())
    }
}

struct Unmount(Vec<PathBuf>);

impl Drop for Unmount {
    fn drop(&mut self) {
        for d in &self.0 {
            let _ = Command::new("umount").arg("-l").arg(d).status();
        }
    }
}

/// Builds the scene: program copies, the inputs the examples name, the hostile places.
fn scene(binaries: &[String]) -> (Scene, Unmount) {
    let root = temp_dir("socbench-contract", "scene");
    let bin = bin_dir();
    let progs = root.join("programs");
    std::fs::create_dir_all(&progs).unwrap();
    let mut programs = BTreeMap::new();
    let mut ids = BTreeMap::new();
    for b in binaries {
        let src = bin.join(b);
        assert!(
            src.is_file(),
            "{} is not built: run `cargo build --workspace --bins` (cargo test --workspace does)",
            src.display()
        );
        let dst = progs.join(b);
        std::fs::copy(&src, &dst).unwrap();
        ids.insert(b.clone(), identity(&dst));
        programs.insert(b.clone(), dst);
    }
    // The stand-in tools of the suite's examples: each copies the test's report to its
    // --json=FILE and exits 0, or sleeps first ($SOCBENCH_STUB_SLEEP).
    let stubs = root.join("stubs");
    std::fs::create_dir_all(&stubs).unwrap();
    for t in benchmp_cli::suite_tools() {
        let p = stubs.join(t);
        std::fs::write(
            &p,
            "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in --json=*) cp \"$SOCBENCH_STUB_REPORT\" \"${a#--json=}\";; esac; done\n[ -n \"$SOCBENCH_STUB_SLEEP\" ] && exec sleep \"$SOCBENCH_STUB_SLEEP\"\nexit 0\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // Two reports of one tool (compare's inputs), and a pristine copy of each to check them by.
    let inputs = root.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    let mut reports = Vec::new();
    for name in ["a.json", "b.json"] {
        let p = root.join(name);
        let o = Command::new(bin.join("benchmp"))
            .args(["probe", "-N", "3"])
            .arg(format!("--json={}", p.display()))
            .envs(FIXED_CALIBRATION)
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        std::fs::copy(&p, inputs.join(name)).unwrap();
        reports.push(p);
    }
    let mut places = Places {
        bin: bin.clone(),
        repo: repo(),
        report_a: reports[0].clone(),
        report_b: reports[1].clone(),
        suite: root.join("suite"),
        stubs,
    };
    // A results folder, made by the suite itself with the stand-ins.
    let o = Command::new(bin.join("benchmp"))
        .args([
            "suite",
            "--quick",
            "--quiet-wait",
            "0",
            "--no-summary",
            "--out",
        ])
        .arg(&places.suite)
        .arg("--bin-dir")
        .arg(&places.stubs)
        .env("SOCBENCH_STUB_REPORT", &places.report_a)
        .envs(FIXED_CALIBRATION)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    places.suite = std::fs::canonicalize(&places.suite).unwrap();
    let fifo = root.join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let folder = root.join("folder");
    std::fs::create_dir_all(&folder).unwrap();
    let mut mounted = Vec::new();
    let ro = root.join("read-only");
    let read_only = match mount_tmpfs(&ro, "ro,size=64k") {
        Ok(()) => {
            mounted.push(ro.clone());
            Some(ro)
        }
        Err(why) => {
            skip(
                "contract: read-only folder",
                &format!("cannot mount a tmpfs: {why}"),
            );
            None
        }
    };
    let fs = root.join("full");
    let full = match mount_tmpfs(&fs, "size=128k") {
        Ok(()) => {
            mounted.push(fs.clone());
            // Fill it to the last byte.
            let mut f = std::fs::File::create(fs.join(".filler")).unwrap();
            use std::io::Write;
            while f.write_all(&[0u8; 4096]).is_ok() {}
            while f.write_all(&[0u8; 1]).is_ok() {}
            Some(fs)
        }
        Err(why) => {
            skip(
                "contract: full file system",
                &format!("cannot mount a tmpfs: {why}"),
            );
            None
        }
    };
    let fifo_tree = environments::hostile_tree(&root.join("fifo-sys"), "phone8-power", |f| {
        nix::unistd::mkfifo(f, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap()
    });
    let zero_tree = environments::hostile_tree(&root.join("zero-sys"), "phone8-power", |f| {
        std::os::unix::fs::symlink("/dev/zero", f).unwrap()
    });
    (
        Scene {
            root,
            places,
            programs,
            ids: Mutex::new(ids),
            fifo,
            folder,
            read_only,
            full,
            fifo_tree,
            zero_tree,
            problems: Mutex::new(Vec::new()),
        },
        Unmount(mounted),
    )
}

/// The binaries' specs.
fn specs(scene: &Scene, binaries: &[String]) -> Vec<(String, Spec)> {
    binaries
        .iter()
        .map(|b| {
            let program = &scene.programs[b];
            let o = Command::new(program)
                .env("SOCBENCH_CLI_SPEC", "1")
                .output()
                .unwrap();
            assert!(o.status.success(), "{b}: no spec: {o:?}");
            let spec: Spec = serde_json::from_slice(&o.stdout)
                .unwrap_or_else(|e| panic!("{b}: spec is not JSON ({e})"));
            (b.clone(), spec)
        })
        .collect()
}

/// A run's own scratch folder.
fn scratch(scene: &Scene) -> PathBuf {
    let n = RUNS.load(Ordering::Relaxed);
    let d = scene
        .root
        .join("runs")
        .join(format!("{n}-{}", rand_suffix()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rand_suffix() -> u64 {
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed) as u64
}

/// The hostile values an option is given, by name.
fn hostile_values(scene: &Scene, binary: &str) -> Vec<(&'static str, String)> {
    let mut v = vec![
        (
            "a missing path",
            "/nonexistent/socbench-contract/x".to_string(),
        ),
        ("a folder", scene.folder.display().to_string()),
        ("a FIFO", scene.fifo.display().to_string()),
        ("/dev/zero", "/dev/zero".to_string()),
        ("nothing", String::new()),
        ("a newline and an escape", "x\n\u{1b}[31mred".to_string()),
        ("the program", scene.programs[binary].display().to_string()),
    ];
    if let Some(ro) = &scene.read_only {
        v.push((
            "a file in a read-only folder",
            ro.join("x").display().to_string(),
        ));
    }
    if let Some(full) = &scene.full {
        v.push((
            "a file on a full disk",
            full.join("x").display().to_string(),
        ));
    }
    v
}

/// Every leaf command with its example; a command without one is a problem.
fn leaves<'a>(scene: &Scene, binary: &str, spec: &'a Spec) -> Vec<(&'a SpecCommand, &'a Example)> {
    let mut out = Vec::new();
    for c in spec.commands.iter().filter(|c| !c.has_subcommands) {
        let path = c.path.join(" ");
        match spec.examples.iter().find(|e| e.command == path) {
            Some(e) => out.push((c, e)),
            None => scene.problem(format!(
                "{binary} {path}: no contract example; add one to the binary's EXAMPLES"
            )),
        }
    }
    out
}

/// Runs `jobs` on a few threads (the runs mostly wait on their processes).
fn parallel<T: Sync>(jobs: &[T], f: impl Fn(&T) + Sync) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(j) = jobs.get(i) else { break };
                    f(j);
                }
            });
        }
    });
}

#[test]
fn every_command_keeps_the_exit_contract() {
    // The signals the long examples get must stop them as they stop a user's run: started
    // from a shell's background job (SIGINT ignored), the test would pass the ignoring on.
    benchmp::sys::process::default_stop_signals();
    let binaries = workspace_binaries();
    let (scene, unmount) = scene(&binaries);
    let specs = specs(&scene, &binaries);

    // Each command's quick example as it is: the statuses its hostile runs are held to.
    struct Job {
        binary: String,
        /// The example the run starts from (filled for the run's own folder), or the bare
        /// command path.
        from: Start,
        /// Words added after it.
        extra: Vec<String>,
        codes: Vec<i32>,
        streams: Streams,
        /// Run alone: given the program itself (so a run that changes it is the one named),
        /// or held to an example's status that a parallel claim of its facility would change.
        serial: bool,
    }
    enum Start {
        Example(String),
        Path(Vec<String>),
    }
    let mut jobs: Vec<Job> = Vec::new();
    let mut long: Vec<(String, Example)> = Vec::new();
    let mut cases: Vec<environments::Case> = Vec::new();
    for (binary, spec) in &specs {
        for (cmd, ex) in leaves(&scene, binary, spec) {
            let tmp = scratch(&scene);
            let quick = scene.places.fill(&ex.quick, &tmp);
            let base = scene.run(binary, &quick, &tmp, Streams::Captured, None, &[]);
            scene.check(binary, &base, &[0, 1, 2, 3], Streams::Captured);
            let _ = std::fs::remove_dir_all(&tmp);
            let Some(base_code) = base.code else { continue };
            if base_code != 0 && base_code != 1 && !(binary == "ftrace" && base_code == 2) {
                scene.problem(format!(
                    "{}: the quick example itself fails (exit {base_code}): {}",
                    base.what,
                    head(&base.err_text())
                ));
            }
            cases.push(environments::Case {
                binary: binary.clone(),
                path: cmd.path.clone(),
                example: ex.clone(),
                options: cmd.args.iter().filter_map(|a| a.long.clone()).collect(),
                base: base_code,
            });
            let example = || Start::Example(ex.quick.clone());
            // ftrace's facilities (tracefs, the trace marker) are claimed one process at a
            // time: beside another ftrace run its example is refused as in use (exit 2), so
            // the runs held to the example's own status run alone.
            let alone = binary == "ftrace";
            // A full stdout: a result that cannot be written is exit 1, said on stderr.
            jobs.push(Job {
                binary: binary.clone(),
                from: example(),
                extra: Vec::new(),
                codes: vec![base_code, 1],
                streams: Streams::FullStdout,
                serial: alone,
            });
            // A full stderr changes nothing about the status, unless the result itself goes
            // there (lmbench's tools): then it is the result that cannot be written, exit 1.
            jobs.push(Job {
                binary: binary.clone(),
                from: example(),
                extra: Vec::new(),
                codes: vec![base_code, 1],
                streams: Streams::FullStderr,
                serial: alone,
            });
            jobs.push(Job {
                binary: binary.clone(),
                from: Start::Path(cmd.path.clone()),
                extra: vec!["--contract-no-such-option".into()],
                codes: vec![2],
                streams: Streams::FullStderr,
                serial: false,
            });
            for arg in cmd.args.iter().filter(|a| a.takes_value) {
                for (class, value) in hostile_values(&scene, binary) {
                    let (from, extra) = match (&arg.long, arg.short, arg.positional) {
                        // The hostile value as the command's only argument.
                        (_, _, true) => (Start::Path(cmd.path.clone()), vec![value.clone()]),
                        (Some(l), _, _) => (example(), vec![format!("--{l}={value}")]),
                        (None, Some(s), _) => (example(), vec![format!("-{s}"), value.clone()]),
                        _ => panic!("{binary}: argument {} has no name", arg.id),
                    };
                    jobs.push(Job {
                        binary: binary.clone(),
                        from,
                        extra,
                        codes: vec![0, 1, 2, 3],
                        streams: Streams::Captured,
                        serial: class == "the program",
                    });
                }
            }
            // Every flag the example does not carry, added to it: whatever it turns on, the
            // run keeps the contract.
            for arg in cmd.args.iter().filter(|a| !a.takes_value && !a.positional) {
                let flag = match (&arg.long, arg.short) {
                    (Some(l), _) => format!("--{l}"),
                    (None, Some(s)) => format!("-{s}"),
                    _ => panic!("{binary}: flag {} has no name", arg.id),
                };
                if ex.quick.split_whitespace().any(|w| w == flag) {
                    continue;
                }
                jobs.push(Job {
                    binary: binary.clone(),
                    from: example(),
                    extra: vec![flag],
                    codes: vec![0, 1, 2, 3],
                    streams: Streams::Captured,
                    serial: alone,
                });
            }
            if !ex.long.is_empty() {
                long.push((binary.clone(), ex.clone()));
            }
        }
    }
    let one = |j: &Job| {
        let tmp = scratch(&scene);
        let mut args = match &j.from {
            Start::Example(text) => scene.places.fill(text, &tmp),
            Start::Path(path) => path.clone(),
        };
        args.extend(j.extra.iter().cloned());
        let ran = scene.run(&j.binary, &args, &tmp, j.streams, None, &[]);
        scene.check(&j.binary, &ran, &j.codes, j.streams);
        if j.streams == Streams::FullStdout
            && ran.code == Some(1)
            && !ran.err_text().contains("stdout")
        {
            scene.problem(format!(
                "{}: a full stdout is not named: {}",
                ran.what,
                head(&ran.err_text())
            ));
        }
        for p in partial_files(&tmp)
            .into_iter()
            .chain(scene.full.iter().flat_map(|d| partial_files(d)))
        {
            scene.problem(format!("{}: left a partial file {}", ran.what, p.display()));
        }
        let _ = std::fs::remove_dir_all(&tmp);
    };
    let (serial, together): (Vec<Job>, Vec<Job>) = jobs.into_iter().partition(|j| j.serial);
    parallel(&together, one);
    serial.iter().for_each(one);

    // The long examples, stopped by each signal: the signal's status (or the example's own,
    // when it ended first), nothing left running, every report file whole or absent.
    use nix::sys::signal::Signal;
    let mut stops = Vec::new();
    for (binary, ex) in &long {
        for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGKILL] {
            stops.push((binary.clone(), ex.clone(), sig));
        }
    }
    parallel(&stops, |(binary, ex, sig)| {
        let tmp = scratch(&scene);
        let args = scene.places.fill(&ex.long, &tmp);
        let ran = scene.run(
            binary,
            &args,
            &tmp,
            Streams::Captured,
            Some(*sig),
            &[("SOCBENCH_STUB_SLEEP", "1000")],
        );
        if *sig == Signal::SIGKILL {
            if ran.signal != Some(Signal::SIGKILL as i32) && ran.code.is_none() {
                scene.problem(format!("{}: died of {:?}", ran.what, ran.signal));
            }
        } else if ran.signal != Some(*sig as i32) {
            // Ended by the signal's own action, or through the tool's handler with 128+n.
            scene.check(
                binary,
                &ran,
                &[128 + *sig as i32, 0, 1, 2, 3],
                Streams::Captured,
            );
        }
        // Nothing measured is lost: a run that ended through its handler (128+n) leaves its
        // report file, marked incomplete when it did not finish.
        let report = tmp.join("out.json");
        if ran.code == Some(128 + *sig as i32) && args.iter().any(|a| a.contains("out.json")) {
            let text = std::fs::read_to_string(&report).unwrap_or_default();
            let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            if v.is_null() || v["incomplete"].is_null() {
                scene.problem(format!(
                    "{} ({sig}): interrupted, it left no report marked incomplete in {}",
                    ran.what,
                    report.display()
                ));
            }
        }
        for p in partial_files(&tmp) {
            scene.problem(format!(
                "{} ({sig}): left a partial file {}",
                ran.what,
                p.display()
            ));
        }
        for json in walk_files(&tmp)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
        {
            let text = std::fs::read(&json).unwrap_or_default();
            if serde_json::from_slice::<serde_json::Value>(&text).is_err() {
                scene.problem(format!(
                    "{} ({sig}): {} is not whole JSON",
                    ran.what,
                    json.display()
                ));
            }
        }
        let _ = std::fs::remove_dir_all(&tmp);
    });

    // The environment axis: every command in every hostile environment.
    let mut axis = Vec::new();
    for case in &cases {
        for env in environments::ENVIRONMENTS {
            let pending = environments::PENDING
                .iter()
                .find(|(c, e, _)| *c == case.name() && *e == env.name);
            match pending {
                Some((_, _, why)) => {
                    benchmp::errln!("contract: pending ({why}): {} in {}", case.name(), env.name)
                }
                None => axis.push((case, env, axis.len())),
            }
        }
    }
    // ftrace's facilities are one process's at a time: its runs come after, one by one.
    let (alone, together): (Vec<_>, Vec<_>) = axis
        .into_iter()
        .partition(|(case, _, _)| case.binary == "ftrace");
    let in_environment =
        |(case, env, job): &(&environments::Case, &environments::Environment, usize)| {
            let tmp = scratch(&scene);
            let problems = match &env.how {
                environments::How::Own(run) => run(&scene, case, &tmp, *job),
                environments::How::Once(make) => {
                    let Some((args, setting, streams)) = make(&scene, case, &tmp, *job) else {
                        let _ = std::fs::remove_dir_all(&tmp);
                        return;
                    };
                    let ran = scene.run_in(&case.binary, &args, &tmp, streams, None, &[], &setting);
                    let mut problems =
                        scene.found(&case.binary, &ran, &(env.codes)(case.base), streams);
                    if let Some(p) = (env.check)(case, &ran, &tmp)
                        && problems.is_empty()
                    {
                        problems.push(format!("{}: {p}", ran.what));
                    }
                    for p in partial_files(&tmp) {
                        problems.push(format!("{}: left a partial file {}", ran.what, p.display()));
                    }
                    problems
                }
            };
            for p in problems {
                scene.problem(format!("[{}] {p}", env.name));
            }
            let _ = std::fs::remove_dir_all(&tmp);
        };
    parallel(&together, in_environment);
    alone.iter().for_each(in_environment);

    let mut spent: Vec<(String, (usize, Duration))> =
        SPENT.lock().unwrap().clone().into_iter().collect();
    spent.sort_by_key(|(_, (_, d))| std::cmp::Reverse(*d));
    for (what, (n, d)) in spent.iter().take(15) {
        benchmp::errln!("{d:>10.1?} in {n:>4} runs: {what}");
    }
    let problems = scene.problems.into_inner().unwrap();
    drop(unmount);
    let _ = std::fs::remove_dir_all(&scene.root);
    assert!(
        problems.is_empty(),
        "{} runs, {} broke the contract:\n{}",
        RUNS.load(Ordering::Relaxed),
        problems.len(),
        problems.join("\n")
    );
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}
