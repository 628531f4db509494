//! `benchmp suite` and `benchmp summary` from outside. The suite runs stand-in tools (a small
//! shell script per tool, in a `--bin-dir` of the test's own) that write a report as the real
//! ones do, or fail, hang or fill the disk, so each case takes seconds and checks what the
//! suite does with its folder, its entries and their outcomes, never a measurement.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use benchmp::testing::{Bad, Tool, check_bad_inputs, stderr, stdout, temp_dir};

const BIN: &str = env!("CARGO_BIN_EXE_benchmp");
/// A bound on anything a stand-in suite does: only a hang reaches it.
const HANG: Duration = Duration::from_secs(120);

/// Every tool: `STANDIN_<tool>` says what it does (ok by default); each start is logged to
/// `$STANDIN_LOG` as `TOOL PID` before it does it.
const STANDIN: &str = r#"#!/bin/sh
tool=${0##*/}
json=""
for a in "$@"; do case $a in --json=*) json=${a#--json=} ;; esac; done
eval "how=\${STANDIN_$tool:-ok}"
[ -z "${STANDIN_LOG:-}" ] || echo "$tool $$" >> "$STANDIN_LOG"
[ -z "${STANDIN_ARGS:-}" ] || echo "$tool $*" >> "$STANDIN_ARGS"
report() {
  [ -z "$json" ] || printf '{"tool":"%s","figures":[{"name":"score","cpu":0,"cluster":0,"unit":"DMIPS","better":"higher","value":100.0,"samples":[100.0]}],"measurements":[{"name":"score"%s}],"quality":{"verdict":{"noisy":%s,"reasons":["child 0 on CPU 0 lost 9%% of its run to other tasks"]}}}\n' "$tool" "${2:-}" "$1" > "$json"
}
case $how in
  ok) report false; echo "$tool result" ;;
  power) report false ',"power":{"per_energy":{"value":40.0,"unit":"DMIPS/W"}}'; echo "$tool result" ;;
  noisy) report true; echo "$tool result" ;;
  noisy-once) if [ -e "$json.first" ]; then report false; else : > "$json.first"; report true; fi
              echo "$tool result" ;;
  hi) echo hi ;;
  noisy-then-apart) if [ -e "$json.first" ]; then
                      echo "$tool: note: before the refusal" >&2
                      echo "$tool: score: the children did not run together in 3 attempts: (stand-in)" >&2; exit 1
                    fi
                    : > "$json.first"; report true; echo "$tool result" ;;
  apart-once) if [ -e "$json.first" ]; then report false; echo "$tool result"; exit 0; fi
              : > "$json.first"
              echo "$tool: score: the children did not run together in 3 attempts: (stand-in)" >&2; exit 1 ;;
  noisy-fail) report true; echo "$tool: the run was noisy" >&2; exit 1 ;;
  fail) echo "$tool: it broke" >&2; exit 1 ;;
  hang) exec sleep 1000 ;;
  hang-bg) sleep 1000 & echo "bg $!" >> "$STANDIN_LOG"; exec sleep 1000 ;;
  fill) head -c 1048576 /dev/zero > "$json"; exit 1 ;;
esac
"#;

fn benchmp() -> Tool {
    Tool::new("benchmp", BIN)
}

/// A folder of stand-in tools.
fn standins(test: &str) -> benchmp::testing::TempDir {
    let d = temp_dir("benchmp-suite-bin", test);
    for &t in benchmp_cli::suite_tools() {
        let p = d.join(t);
        std::fs::write(&p, STANDIN).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// `benchmp suite --quick --bin-dir BIN ARGS...`, bounded.
fn suite(tool: &Tool, bin: &Path, args: &[&str]) -> Output {
    let mut all = vec!["suite", "--quick", "--quiet-wait", "0", "--bin-dir", s(bin)];
    all.extend_from_slice(args);
    tool.run_bounded(&all, HANG)
}

fn ok(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        stdout(o),
        stderr(o)
    );
}

/// The names in a folder, sorted.
fn names(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// status.tsv's rows (without its header), each cut into its columns.
fn rows(out: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(out.join("status.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// Files of a user's beside an earlier suite's results, named like a suite's own.
const USERS: [(&str, &str); 5] = [
    ("base/dhry", "a build"),
    ("ab/notes.txt", "notes"),
    ("compare.c", "int main;"),
    ("dhry-notes.md", "# notes"),
    ("coremark-paper.pdf", "%PDF"),
];

fn put_users_files(u: &Path) {
    for (name, text) in USERS {
        let p = u.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

fn assert_users_files(u: &Path) {
    for (name, text) in USERS {
        assert_eq!(
            std::fs::read_to_string(u.join(name)).ok().as_deref(),
            Some(text),
            "{name} in {}: {:?}",
            u.display(),
            names(u)
        );
    }
}

#[test]
fn force_refuses_a_folder_no_suite_recorded_and_changes_nothing() {
    let bin = standins("force-unrecorded");
    let u = temp_dir("benchmp-suite", "force-unrecorded");
    put_users_files(&u);
    std::fs::write(u.join("status.tsv"), "old").unwrap();
    std::fs::write(u.join("dhry-P1.json"), "old").unwrap();
    let line = benchmp().fails(
        &[
            "suite",
            "--quick",
            "--quiet-wait",
            "0",
            "--only",
            "dhry",
            "--bin-dir",
            s(&bin),
            "--out",
            s(&u),
            "--force",
        ],
        2,
    );
    assert!(line.contains("no record"), "{line}");
    assert_users_files(&u);
    assert_eq!(
        std::fs::read_to_string(u.join("status.tsv")).unwrap(),
        "old"
    );
    assert_eq!(
        std::fs::read_to_string(u.join("dhry-P1.json")).unwrap(),
        "old"
    );
    // An empty folder needs no record.
    let empty = temp_dir("benchmp-suite", "force-empty");
    ok(&suite(
        &benchmp(),
        &bin,
        &["--only", "dhry", "--out", s(&empty), "--force"],
    ));
    let _ = std::fs::remove_dir_all(&u);
    let _ = std::fs::remove_dir_all(&empty);
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn force_removes_only_what_an_earlier_suite_recorded() {
    let bin = standins("force-recorded");
    let u = temp_dir("benchmp-suite", "force-recorded");
    let t = benchmp();
    ok(&suite(
        &t,
        &bin,
        &["--only", "dhry", "--only", "coremark", "--out", s(&u)],
    ));
    assert!(u.join("coremark-P1.json").is_file());
    put_users_files(&u);
    std::fs::write(u.join("dhry-P1-notes.txt"), "mine").unwrap();
    ok(&suite(
        &t,
        &bin,
        &["--only", "dhry", "--out", s(&u), "--force"],
    ));
    assert_users_files(&u);
    assert_eq!(
        std::fs::read_to_string(u.join("dhry-P1-notes.txt")).unwrap(),
        "mine"
    );
    // The earlier suite's files went, this one's are there.
    assert!(!u.join("coremark-P1.json").exists(), "{:?}", names(&u));
    assert!(u.join("dhry-P1.json").is_file());
    let labels: Vec<String> = rows(&u).into_iter().map(|r| r[0].clone()).collect();
    assert_eq!(labels, ["dhry-P1"]);
    // A file at a name the suite writes that it did not write is never replaced.
    std::fs::remove_file(u.join("dhry-P1.json")).unwrap();
    std::fs::write(u.join("dhry-P1.json"), "mine").unwrap();
    let other = temp_dir("benchmp-suite", "force-recorded-other");
    ok(&suite(
        &t,
        &bin,
        &["--only", "coremark", "--out", s(&other)],
    ));
    std::fs::write(other.join("dhry-P1.json"), "mine").unwrap();
    let line = t.fails(
        &[
            "suite",
            "--quick",
            "--quiet-wait",
            "0",
            "--only",
            "dhry",
            "--bin-dir",
            s(&bin),
            "--out",
            s(&other),
            "--force",
        ],
        2,
    );
    assert!(line.contains("dhry-P1.json"), "{line}");
    assert_eq!(
        std::fs::read_to_string(other.join("dhry-P1.json")).unwrap(),
        "mine"
    );
    let _ = std::fs::remove_dir_all(&u);
    let _ = std::fs::remove_dir_all(&other);
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn force_never_removes_an_input() {
    let bin = standins("force-inputs");
    let u = temp_dir("benchmp-suite", "force-inputs");
    let t = benchmp();
    // dto's entry has a folder of its own, which --force removes with the rest.
    ok(&suite(&t, &bin, &["--only", "dto", "--out", s(&u)]));
    let inner = u.join("dto-speedup/bin");
    std::fs::create_dir_all(&inner).unwrap();
    for &tool in benchmp_cli::suite_tools() {
        std::fs::copy(bin.join(tool), inner.join(tool)).unwrap();
    }
    let me = u.join("dto-speedup/benchmp");
    std::fs::copy(BIN, &me).unwrap();
    let base = u.join("dto-speedup/base");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::copy(u.join("dto-speedup.json"), base.join("dto-speedup.json")).unwrap();
    let common = [
        "suite",
        "--quick",
        "--quiet-wait",
        "0",
        "--only",
        "dto",
        "--out",
        s(&u),
        "--force",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        common.iter().chain(extra).map(|a| a.to_string()).collect()
    };
    for (args, says) in [
        (with(&["--bin-dir", s(&inner)]), "--bin-dir"),
        (with(&["--bin-dir", s(&bin), "--ab", s(&inner)]), "--ab"),
        (
            with(&["--bin-dir", s(&bin), "--baseline", s(&base)]),
            "--baseline",
        ),
    ] {
        let line = t.fails(&args, 2);
        assert!(
            line.contains(says) && line.contains("dto-speedup"),
            "{line}"
        );
    }
    // benchmp itself, run from the folder --force would remove.
    let line = Tool::new("benchmp", &me).fails(&with(&["--bin-dir", s(&bin)]), 2);
    assert!(line.contains("dto-speedup"), "{line}");
    for &tool in benchmp_cli::suite_tools() {
        assert!(inner.join(tool).is_file(), "{tool}");
    }
    assert!(me.is_file() && base.join("dto-speedup.json").is_file());
    let _ = std::fs::remove_dir_all(&u);
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn what_every_entry_would_refuse_is_refused_before_anything_runs() {
    let bin = standins("refusals");
    let root = temp_dir("benchmp-suite", "refusals");
    let out = root.join("o");
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    let absent = (online + 3).to_string();
    let listed = format!("0,{absent}");
    let args = |extra: &[&str]| -> Vec<String> {
        [
            "suite",
            "--quick",
            "--quiet-wait",
            "0",
            "--only",
            "dhry",
            "--bin-dir",
            s(&bin),
            "--out",
            s(&out),
        ]
        .iter()
        .chain(extra)
        .map(|a| a.to_string())
        .collect()
    };
    let plain = args(&[]);
    let plain = strs(&plain);
    let absent_cpu = args(&["--cpus", &absent]);
    let listed_cpus = args(&["--cpus", &listed]);
    check_bad_inputs(
        &benchmp(),
        &[
            Bad::args(&strs(&absent_cpu), &format!("CPU {absent}")),
            Bad::args(&strs(&listed_cpus), &format!("CPU {absent}")),
            Bad::env(&plain, &[("BENCHMP_AB_FDS", "7,8")], "BENCHMP_AB_FDS"),
            Bad::env(&plain, &[("LMBENCH_SCHED", "NOPE")], "LMBENCH_SCHED"),
            Bad::env(&plain, &[("ENOUGH", "0")], "ENOUGH"),
            Bad::env(&plain, &[("LOOP_O", "x")], "LOOP_O"),
            Bad::env(
                &plain,
                &[("BENCHMP_SYSFS_ROOT", "/nonexist")],
                "BENCHMP_SYSFS_ROOT",
            ),
        ],
    );
    assert!(!out.exists(), "a refused suite made its folder");
    // A CPU this process may not use.
    if online < 2 {
        benchmp::testing::skip(
            "what_every_entry_would_refuse_is_refused_before_anything_runs",
            "one CPU: no CPU outside the allowed set",
        );
    } else {
        let mut c = Command::new("taskset");
        c.args(["-c", "0", BIN]).args(args(&["--cpus", "1"]));
        for (k, v) in benchmp::testing::FIXED_CALIBRATION {
            c.env(k, v);
        }
        for k in benchmp::testing::CLEARED {
            c.env_remove(k);
        }
        match c.stdin(Stdio::null()).output() {
            Ok(o) => {
                assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
                assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
                assert!(stderr(&o).contains("allowed"), "{}", stderr(&o));
                assert!(!out.exists());
            }
            Err(e) => {
                benchmp::testing::skip(
                    "what_every_entry_would_refuse_is_refused_before_anything_runs",
                    &format!("no taskset here ({e})"),
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&bin);
}

/// Tests that start a suite in the background: its log, and the processes to stop at the end
/// whatever happened.
struct Background {
    log: PathBuf,
    pids: Vec<i32>,
    /// The log's folder, removed at the end.
    _dir: benchmp::testing::TempDir,
}

impl Background {
    fn new(test: &str) -> Background {
        let dir = temp_dir("benchmp-suite-log", test);
        let log = dir.join("log");
        std::fs::write(&log, "").unwrap();
        Background {
            log,
            pids: Vec::new(),
            _dir: dir,
        }
    }

    /// A suite started with `env` besides the stand-ins' log.
    fn start(&mut self, bin: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
        let mut all = vec!["suite", "--quick", "--quiet-wait", "0", "--bin-dir", s(bin)];
        all.extend_from_slice(args);
        let mut c = benchmp().command(&all);
        c.env("STANDIN_LOG", &self.log);
        for (k, v) in env {
            c.env(k, v);
        }
        let child = c
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        self.pids.push(child.id() as i32);
        child
    }

    /// The pid logged for `what` (a tool's name, or `bg`), waiting for it.
    fn pid_of(&mut self, what: &str) -> i32 {
        let deadline = Instant::now() + HANG;
        loop {
            let log = std::fs::read_to_string(&self.log).unwrap();
            if let Some(pid) = log
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix(&format!("{what} ")))
            {
                let pid: i32 = pid.trim().parse().unwrap();
                self.pids.push(pid);
                return pid;
            }
            assert!(Instant::now() < deadline, "{what} never started: {log}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// How many times `tool` started.
    fn starts(&self, tool: &str) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with(&format!("{tool} ")))
            .count()
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        for &p in &self.pids {
            if alive(p) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(p),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
        let _ = std::fs::remove_dir_all(self.log.parent().unwrap());
    }
}

/// True while `pid` runs (a zombie has ended).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

/// Waits for a process to end (a bound on a hang, not a time asserted).
fn ends(pid: i32) -> bool {
    let deadline = Instant::now() + HANG;
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

fn wait_bounded(child: Child) -> Output {
    let pid = child.id() as i32;
    assert!(ends(pid), "the suite did not end");
    child.wait_with_output().unwrap()
}

#[test]
fn an_interrupted_entry_is_recorded_and_resume_runs_only_what_is_left() {
    let bin = standins("resume");
    let u = temp_dir("benchmp-suite", "resume");
    let mut bg = Background::new("resume");
    let plan = ["--only", "dhry", "--only", "coremark"];
    let mut args = plan.to_vec();
    args.extend_from_slice(&["--out", s(&u)]);
    let suite_run = bg.start(&bin, &args, &[("STANDIN_coremark", "hang")]);
    let coremark = bg.pid_of("coremark");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(suite_run.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = wait_bounded(suite_run);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(ends(coremark), "the interrupted entry was left running");
    let r = rows(&u);
    assert_eq!(r.len(), 2, "{r:?}");
    assert_eq!((r[0][0].as_str(), r[0][2].as_str()), ("dhry-P1", "0"));
    assert_eq!(
        (r[1][0].as_str(), r[1][2].as_str(), r[1][4].as_str()),
        ("coremark-P1", "130", "interrupted")
    );
    let o = benchmp().run(&["summary", s(&u)]);
    ok(&o);
    let text = stdout(&o);
    assert!(
        text.lines()
            .any(|l| l.starts_with("coremark-P1") && l.contains("INTERRUPTED")),
        "{text}"
    );
    assert!(text.contains("1 interrupted"), "{text}");

    // Another plan, or a folder no suite made, is refused.
    let t = benchmp();
    let mut other = vec![
        "suite",
        "--quick",
        "--quiet-wait",
        "0",
        "--bin-dir",
        s(&bin),
        "--only",
        "dhry",
    ];
    other.extend_from_slice(&["--resume", s(&u)]);
    let line = t.fails(&other, 2);
    assert!(line.contains("another plan"), "{line}");
    let plain = temp_dir("benchmp-suite", "resume-plain");
    std::fs::write(plain.join("status.tsv"), "label\ttool\texit\tseconds\n").unwrap();
    let mut not_suite = vec![
        "suite",
        "--quick",
        "--quiet-wait",
        "0",
        "--bin-dir",
        s(&bin),
    ];
    not_suite.extend_from_slice(&plan);
    not_suite.extend_from_slice(&["--resume", s(&plain)]);
    let line = t.fails(&not_suite, 2);
    assert!(line.contains("no record"), "{line}");

    // Resumed: only the interrupted entry runs again; the finished one and its row stay.
    let mut args = plan.to_vec();
    args.extend_from_slice(&["--resume", s(&u)]);
    let resumed = bg.start(&bin, &args, &[]);
    let o = wait_bounded(resumed);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!((bg.starts("dhry"), bg.starts("coremark")), (1, 2));
    let r = rows(&u);
    let got: Vec<(&str, &str, &str)> = r
        .iter()
        .map(|c| (c[0].as_str(), c[2].as_str(), c[4].as_str()))
        .collect();
    assert_eq!(got, [("dhry-P1", "0", "ok"), ("coremark-P1", "0", "ok")]);
    let _ = std::fs::remove_dir_all(&u);
    let _ = std::fs::remove_dir_all(&plain);
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn a_killed_suite_takes_its_entry_along_and_the_folder_stays_locked_while_any_of_it_runs() {
    let bin = standins("killed");
    let u = temp_dir("benchmp-suite", "killed");
    let mut bg = Background::new("killed");
    let suite_run = bg.start(
        &bin,
        &["--only", "dhry", "--out", s(&u)],
        &[("STANDIN_dhry", "hang-bg")],
    );
    let dhry = bg.pid_of("dhry");
    let straggler = bg.pid_of("bg");
    let pid = suite_run.id() as i32;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = wait_bounded(suite_run);
    assert!(ends(dhry), "the running entry outlived the suite");
    // What the entry started and left behind keeps the folder from a second suite.
    if alive(straggler) {
        let line = benchmp().fails(
            &[
                "suite",
                "--quick",
                "--quiet-wait",
                "0",
                "--only",
                "dhry",
                "--bin-dir",
                s(&bin),
                "--out",
                s(&u),
                "--force",
            ],
            2,
        );
        assert!(line.contains("another suite"), "{line}");
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(straggler),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
        assert!(ends(straggler));
    }
    ok(&suite(
        &benchmp(),
        &bin,
        &["--only", "dhry", "--out", s(&u), "--force"],
    ));
    let _ = std::fs::remove_dir_all(&u);
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn noisy_entries_measured_and_failed_ones_did_not() {
    let bin = standins("noisy");
    let t = benchmp();
    let both = ["--only", "dhry", "--only", "coremark"];
    for (how, code, status) in [
        ("noisy", 0, "noisy"),
        ("noisy-fail", 0, "noisy"),
        ("fail", 1, "failed"),
    ] {
        let u = temp_dir("benchmp-suite", &format!("noisy-{how}"));
        let mut args = vec![
            "suite",
            "--quick",
            "--quiet-wait",
            "0",
            "--bin-dir",
            s(&bin),
        ];
        args.extend_from_slice(&both);
        args.extend_from_slice(&["--out", s(&u)]);
        let o = t
            .clone()
            .with_env("STANDIN_dhry", Some(how))
            .run_bounded(&args, HANG);
        assert_eq!(o.status.code(), Some(code), "{how}: {}", stderr(&o));
        let r = rows(&u);
        assert_eq!(r[0][0], "dhry-P1");
        assert_eq!(r[0][4], status, "{how}: {r:?}");
        assert_eq!(r[1][4], "ok", "{how}: {r:?}");
        let table = stdout(&t.ok(&["summary", s(&u)]));
        let line = table
            .lines()
            .find(|l| l.starts_with("dhry-P1"))
            .unwrap_or_default();
        let mark = if status == "noisy" { "NOISY" } else { "FAILED" };
        assert!(line.contains(mark), "{how}: {table}");
        let summary: serde_json::Value =
            serde_json::from_slice(&t.ok(&["summary", "--json", s(&u)]).stdout).unwrap();
        assert_eq!(summary["entries"][0]["status"], status, "{how}");
        let noisy = usize::from(status == "noisy");
        assert_eq!(summary["noisy"], noisy, "{how}");
        assert_eq!(summary["failed"], 1 - noisy, "{how}");
        // The suite's own summary.json says the same.
        let left: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(u.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(left["entries"][0]["status"], status, "{how}");
        let _ = std::fs::remove_dir_all(&u);
    }
    let _ = std::fs::remove_dir_all(&bin);
}

/// A noisy entry is run once more at the end: one that is clean the second time is ok, one
/// that stays noisy is named with its reason. An entry that exits 0 with no report measured
/// nothing: failed. Before each entry the suite waits, bounded, for a quiet machine, and says
/// so when a CPU it runs on is busy (a busy loop pinned to it here).
#[test]
fn noisy_entries_run_again_and_busy_cpus_are_waited_for() {
    let bin = standins("again");
    let t = benchmp();
    // The quick suite's dhry and coremark entries into `u`, the stand-ins doing `dhry` and
    // `coremark`.
    let suite_with = |u: &Path, dhry: &str, coremark: &str, extra: &[&str]| {
        let mut args = vec![
            "suite",
            "--quick",
            "--quiet-wait",
            "0",
            "--bin-dir",
            s(&bin),
            "--only",
            "dhry",
            "--only",
            "coremark",
            "--out",
            s(u),
        ];
        args.extend_from_slice(extra);
        t.clone()
            .with_env("STANDIN_dhry", Some(dhry))
            .with_env("STANDIN_coremark", Some(coremark))
            .run_bounded(&args, HANG)
    };
    let suite = |u: &Path, dhry: &str, coremark: &str| suite_with(u, dhry, coremark, &[]);
    let u = temp_dir("benchmp-suite", "again");
    let o = suite(&u, "noisy-once", "noisy");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(
        out.contains("== 2 entries run again (noisy, or children that ran apart)"),
        "{out}"
    );
    assert!(out.contains("(again: it was noisy)"), "{out}");
    assert!(
        out.contains(
            "stayed noisy: coremark-P1 (child 0 on CPU 0 lost 9% of its run to other tasks)"
        ),
        "{out}"
    );
    let r = rows(&u);
    let status = |label: &str| r.iter().find(|row| row[0] == label).unwrap()[4].clone();
    assert_eq!(status("dhry-P1"), "ok", "{r:?}");
    assert_eq!(status("coremark-P1"), "noisy", "{r:?}");
    let _ = std::fs::remove_dir_all(&u);

    // Children that ran apart (the tool's refusal, exit 1): run again at the end like a noisy
    // entry; one refused on its second run (here a noisy one) fails the suite, its refusal
    // named.
    let u = temp_dir("benchmp-suite", "again-apart");
    let o = suite(&u, "apart-once", "noisy-then-apart");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(
        out.contains("== 2 entries run again (noisy, or children that ran apart)"),
        "{out}"
    );
    assert!(
        out.contains("FAILED (exit 1, ")
            && out.contains("coremark: score: the children did not run together")
            && !out.contains("before the refusal"),
        "{out}"
    );
    let r = rows(&u);
    let status = |label: &str| r.iter().find(|row| row[0] == label).unwrap()[4].clone();
    assert_eq!(status("dhry-P1"), "ok", "{r:?}");
    // Noisy the first time, refused the second: the second run's outcome, with no report of
    // the first left to stand in for it.
    assert_eq!(status("coremark-P1"), "failed", "{r:?}");
    assert!(!u.join("coremark-P1.json").exists());
    let _ = std::fs::remove_dir_all(&u);

    // --no-rerun: each entry measured once; the noisy one stays noisy (its report kept), the
    // one whose children ran apart stays refused and fails the suite.
    let u = temp_dir("benchmp-suite", "no-rerun");
    let o = suite_with(&u, "noisy-once", "apart-once", &["--no-rerun"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(!out.contains("run again"), "{out}");
    let r = rows(&u);
    let status = |label: &str| r.iter().find(|row| row[0] == label).unwrap()[4].clone();
    assert_eq!(status("dhry-P1"), "noisy", "{r:?}");
    assert!(u.join("dhry-P1.json").exists());
    assert_eq!(status("coremark-P1"), "failed", "{r:?}");
    let _ = std::fs::remove_dir_all(&u);

    // Status 0 and no report: failed (exit 1), and said.
    let u = temp_dir("benchmp-suite", "again-hi");
    let o = t.clone().with_env("STANDIN_dhry", Some("hi")).run_bounded(
        &[
            "suite",
            "--quick",
            "--quiet-wait",
            "0",
            "--bin-dir",
            s(&bin),
            "--only",
            "dhry",
            "--out",
            s(&u),
        ],
        HANG,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("FAILED (exit 0, ") && stdout(&o).contains("it wrote no report"),
        "{}",
        stdout(&o)
    );
    assert_eq!(rows(&u)[0][4], "failed");
    let _ = std::fs::remove_dir_all(&u);

    // A CPU kept busy by a loop pinned to it: the wait is said, bounded, and the suite goes on.
    let cpu = benchmp::sys::affinity::allowed_cpus().unwrap()[0];
    let mut hog = Command::new("taskset")
        .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let u = temp_dir("benchmp-suite", "again-busy");
    let o = t.clone().run_bounded(
        &[
            "suite",
            "--quick",
            "--quiet-wait",
            "1",
            "--cpus",
            &cpu.to_string(),
            "--bin-dir",
            s(&bin),
            "--only",
            "dhry",
            "--out",
            s(&u),
        ],
        HANG,
    );
    let _ = hog.kill();
    let _ = hog.wait();
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(
        out.contains(&format!("waiting for a quiet machine (CPU {cpu} "))
            && out.contains("up to 1 s)"),
        "{out}"
    );
    assert!(
        out.contains(&format!("went on after 1 s: CPU {cpu} ")),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&u);
    let _ = std::fs::remove_dir_all(&bin);
}

/// A small tmpfs mounted for one test, unmounted when dropped.
struct SmallDisk(benchmp::testing::TempDir);

impl SmallDisk {
    fn mount(test: &str) -> Option<SmallDisk> {
        let d = temp_dir("benchmp-suite-disk", test);
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&d)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            Some(SmallDisk(d))
        } else {
            let _ = std::fs::remove_dir(&d);
            None
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_full_disk_is_named_and_leaves_no_partial_file() {
    let test = "a_full_disk_is_named_and_leaves_no_partial_file";
    let Some(disk) = SmallDisk::mount("full") else {
        benchmp::testing::skip(test, "cannot mount a small tmpfs here (not root?)");
        return;
    };
    let bin = standins("full");
    let u = disk.0.join("u");
    let o = benchmp()
        .with_env("STANDIN_dhry", Some("fill"))
        .run_bounded(
            &[
                "suite",
                "--quick",
                "--quiet-wait",
                "0",
                "--only",
                "dhry",
                "--bin-dir",
                s(&bin),
                "--out",
                s(&u),
            ],
            HANG,
        );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("benchmp: ")
            && last.contains("No space left on device")
            && last.contains(&format!("{}/", u.display())),
        "the file is not named: {err}"
    );
    for name in names(&u) {
        assert!(!name.ends_with(".tmp"), "a partial file is left: {name}");
        let p = u.join(&name);
        if ["summary.json", ".socbench-suite.json"].contains(&name.as_str()) {
            let text = std::fs::read_to_string(&p).unwrap();
            serde_json::from_str::<serde_json::Value>(&text)
                .unwrap_or_else(|e| panic!("{name} is not whole ({e}): {text:?}"));
        }
    }
    let _ = std::fs::remove_dir_all(&bin);
}

/// A results folder with `status` as its status.tsv.
fn folder(root: &Path, name: &str, status: &str) -> PathBuf {
    let d = root.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("status.tsv"), status).unwrap();
    d
}

const HEADER: &str = "label\ttool\texit\tseconds\n";

#[test]
fn summary_refuses_what_it_cannot_read_in_one_line() {
    let root = temp_dir("benchmp-summary", "refusals");
    let fifo = |p: &Path| {
        nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    };
    let fifo_status = root.join("fifo-status");
    std::fs::create_dir_all(&fifo_status).unwrap();
    fifo(&fifo_status.join("status.tsv"));
    let ok_row = format!("{HEADER}dhry-P1\tdhry\t0\t1.0\n");
    let fifo_report = folder(&root, "fifo-report", &ok_row);
    fifo(&fifo_report.join("dhry-P1.json"));
    let zero = folder(&root, "zero", &ok_row);
    std::os::unix::fs::symlink("/dev/zero", zero.join("dhry-P1.json")).unwrap();
    let failed = folder(
        &root,
        "fifo-err",
        &format!("{HEADER}dhry-P1\tdhry\t1\t1.0\n"),
    );
    fifo(&failed.join("dhry-P1.err"));
    let folder_status = root.join("folder-status");
    std::fs::create_dir_all(folder_status.join("status.tsv")).unwrap();
    let binary = root.join("binary");
    std::fs::create_dir_all(&binary).unwrap();
    std::fs::write(
        binary.join("status.tsv"),
        b"label\ttool\texit\tseconds\n\xff\xfe\n",
    )
    .unwrap();
    let word = folder(
        &root,
        "word",
        &format!("{HEADER}dhry-P1\tdhry\tzero\t1.0\n"),
    );
    let short = folder(
        &root,
        "short",
        &format!("{HEADER}dhry-P1\tdhry\t0\t1.0\ncoremark-P1\tcoremark\n"),
    );
    let file = root.join("file");
    std::fs::write(&file, "x").unwrap();
    let missing = root.join("missing");
    let summary = |d: &Path| vec!["summary".to_string(), s(d).to_string()];
    let table: Vec<Bad> = [
        (summary(&fifo_status), "status.tsv: is a FIFO"),
        (summary(&fifo_report), "dhry-P1.json: is a FIFO"),
        (summary(&zero), "dhry-P1.json: is a character device"),
        (summary(&failed), "dhry-P1.err: is a FIFO"),
        (summary(&folder_status), "status.tsv: is a folder"),
        (summary(&binary), "status.tsv: is not UTF-8"),
        (summary(&word), "status.tsv row 2"),
        (summary(&short), "status.tsv row 3"),
        (summary(&file), "is not a folder"),
        (summary(&missing), "no such file or folder"),
    ]
    .into_iter()
    .map(|(args, says)| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Bad::args(&args, says)
    })
    .collect();
    check_bad_inputs(&benchmp(), &table);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn summary_says_what_is_wrong_with_a_report() {
    let root = temp_dir("benchmp-summary", "reports");
    let rows = format!("{HEADER}dhry-P1\tdhry\t0\t1.0\ncoremark-P1\tcoremark\t0\t1.0\n");
    let d = folder(&root, "old", &rows);
    // Reports from before `figures` existed: none, or null.
    std::fs::write(d.join("dhry-P1.json"), r#"{"tool":"dhry","figures":null}"#).unwrap();
    std::fs::write(d.join("coremark-P1.json"), r#"{"tool":"coremark"}"#).unwrap();
    let o = benchmp().ok(&["summary", s(&d)]);
    let text = stdout(&o);
    for label in ["dhry-P1", "coremark-P1"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_default();
        assert!(
            line.contains(&format!("{label}.json has no figures"))
                && line.contains("older socbench"),
            "{text}"
        );
    }
    // A report or a folder this user cannot read is named, never "not found".
    let nobody = as_nobody();
    let unreadable = folder(&root, "unreadable", &rows);
    std::fs::write(unreadable.join("dhry-P1.json"), "{}").unwrap();
    std::fs::set_permissions(
        unreadable.join("dhry-P1.json"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let closed = folder(&root, "closed", &rows);
    for d in [&*root, unreadable.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o000)).unwrap();
    match nobody {
        None => {
            benchmp::testing::skip(
                "summary_says_what_is_wrong_with_a_report",
                "root without setpriv: every file is readable",
            );
        }
        Some(prefix) => {
            for (d, says) in [
                (
                    &unreadable,
                    "dhry-P1.json: cannot be read (permission denied)",
                ),
                (&closed, "cannot be read (permission denied)"),
            ] {
                let mut c = Command::new(&prefix[0]);
                c.args(&prefix[1..]).args([BIN, "summary", s(d)]);
                let o = c.stdin(Stdio::null()).output().unwrap();
                let err = stderr(&o);
                assert_eq!(o.status.code(), Some(2), "{err}");
                assert_eq!(err.lines().count(), 1, "{err}");
                assert!(err.contains(says) && !err.contains("not found"), "{err}");
            }
        }
    }
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o755)).unwrap();
    let _ = std::fs::remove_dir_all(&root);
}

/// How to run a command as a user without root's power to read anything: nothing to add
/// when this is not root, `setpriv` to user nobody when it is (`None`: no way here).
fn as_nobody() -> Option<Vec<String>> {
    if !nix::unistd::geteuid().is_root() {
        return Some(vec!["env".into()]);
    }
    let setpriv = which("setpriv")?;
    Some(vec![
        setpriv,
        "--reuid=65534".into(),
        "--regid=65534".into(),
        "--clear-groups".into(),
    ])
}

fn which(program: &str) -> Option<String> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
            .map(|p| p.display().to_string())
    })
}

#[test]
fn the_power_options_reach_every_entry_and_the_summary_gains_energy() {
    let bin = standins("power");
    let work = temp_dir("benchmp-suite", "power");
    let args_log = work.join("args");
    let u = work.join("out");
    let power = [
        "--power",
        "battery:battery",
        "--power-cmd",
        "meter --port 1",
        "--power-hz",
        "50",
        "--power-baseline",
        "2",
    ];
    let mut args = vec!["--only", "dhry", "--only", "dto", "--out", s(&u)];
    args.extend_from_slice(&power);
    let t = benchmp()
        .with_env("STANDIN_ARGS", Some(s(&args_log)))
        .with_env("STANDIN_dhry", Some("power"));
    ok(&suite(&t, &bin, &args));
    let log = std::fs::read_to_string(&args_log).unwrap();
    let passed =
        "--power=battery:battery --power-cmd=meter --port 1 --power-hz=50 --power-baseline=2";
    for tool in ["dhry", "dto"] {
        assert!(
            log.lines()
                .any(|l| l.starts_with(&format!("{tool} ")) && l.ends_with(passed)),
            "{tool}: {log}"
        );
    }
    // The summary: an energy column where the report has a power record.
    let table = stdout(&t.ok(&["summary", s(&u)]));
    assert!(
        table.lines().nth(1).unwrap().contains("  energy"),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("dhry-P1") && l.contains("40.00 DMIPS/W")),
        "{table}"
    );
    let j: serde_json::Value =
        serde_json::from_slice(&t.ok(&["summary", "--json", s(&u)]).stdout).unwrap();
    assert_eq!(j["entries"][0]["energy"]["unit"], "DMIPS/W");
    assert!(j["entries"][1].get("energy").is_none(), "{j}");
    // A resumed folder needs the power options it was made with.
    let mut other = vec![
        "suite",
        "--quick",
        "--quiet-wait",
        "0",
        "--bin-dir",
        s(&bin),
        "--only",
        "dhry",
        "--only",
        "dto",
    ];
    other.extend_from_slice(&["--resume", s(&u), "--power-hz", "10"]);
    let line = t.fails(&other, 2);
    assert!(
        line.contains("another plan") && line.contains("power"),
        "{line}"
    );
    // A value no tool takes is refused before anything runs.
    let line = t.fails(
        &[
            "suite",
            "--quick",
            "--quiet-wait",
            "0",
            "--bin-dir",
            s(&bin),
            "--out",
            s(&work.join("o2")),
            "--power-hz",
            "0",
        ],
        2,
    );
    assert!(line.contains("--power-hz"), "{line}");
    assert!(!work.join("o2").exists());
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn summary_writes_its_json_and_csv_to_files_as_every_command_does() {
    let bin = standins("summary-files");
    let u = temp_dir("benchmp-suite", "summary-files");
    let t = benchmp();
    ok(&suite(&t, &bin, &["--only", "dhry", "--out", s(&u)]));
    let (j, c) = (u.join("mine.json"), u.join("mine.csv"));
    // --json=FILE and --csv=FILE: the files, and the table on stdout.
    let o = t.ok(&[
        "summary",
        &format!("--json={}", s(&j)),
        &format!("--csv={}", s(&c)),
        s(&u),
    ]);
    assert!(
        stdout(&o).lines().any(|l| l.starts_with("dhry-P1 ")),
        "{}",
        stdout(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    assert_eq!(v["entries"][0]["entry"], "dhry-P1", "{v}");
    let csv = std::fs::read_to_string(&c).unwrap();
    assert!(csv.lines().nth(1).unwrap().starts_with("dhry-P1,"), "{csv}");
    // --json=FILE alone: nothing but the table on stdout; --json alone: JSON there, as before.
    std::fs::remove_file(&j).unwrap();
    let o = t.ok(&["summary", &format!("--json={}", s(&j)), s(&u)]);
    assert!(!stdout(&o).contains('{'), "{}", stdout(&o));
    assert!(j.is_file());
    let o = t.ok(&["summary", "--json", s(&u)]);
    let _: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Never onto what it reads, and never both on stdout.
    let status = std::fs::read(u.join("status.tsv")).unwrap();
    let line = t.fails(
        &[
            "summary",
            &format!("--json={}", s(&u.join("status.tsv"))),
            s(&u),
        ],
        2,
    );
    assert!(line.contains("status.tsv"), "{line}");
    assert_eq!(std::fs::read(u.join("status.tsv")).unwrap(), status);
    t.fails(&["summary", "--json", "--csv", s(&u)], 2);
    let _ = std::fs::remove_dir_all(&u);
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn the_ab_comparisons_are_gathered_recorded_and_removed_by_force() {
    // The stand-ins are no workers, so benchmp ab pairs nothing: the gathering still writes
    // the folder's comparison (no row), the summary gains its verdict column, and the files
    // are the suite's own.
    let bin = standins("ab-gathered");
    let u = temp_dir("benchmp-suite", "ab-gathered");
    let t = benchmp();
    let o = suite(
        &t,
        &bin,
        &[
            "--only",
            "dhry",
            "--ab",
            s(&bin),
            "--ab-time",
            "0.5",
            "--out",
            s(&u),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("FAILED (ab, exit 2)"), "{out}");
    assert!(
        out.contains("== paired with the --ab build\n0 figures: 0 PASS, 0 FAIL, 0 IMPROVED, 0 NOISY, 0 MISSING (paired: benchmp ab)"),
        "{out}"
    );
    let c: benchmp_cli::compare::Comparison =
        serde_json::from_slice(&std::fs::read(u.join("compare.json")).unwrap()).unwrap();
    assert!(c.paired && c.rows.is_empty());
    let csv = std::fs::read_to_string(u.join("compare.csv")).unwrap();
    assert!(
        csv.starts_with("entry,tool,figure,unit,better,base,"),
        "{csv}"
    );
    assert!(
        std::fs::read_to_string(u.join("compare.txt"))
            .unwrap()
            .contains("(paired: benchmp ab)")
    );
    // The verdict column: an entry without a paired row was not paired.
    let table = stdout(&t.ok(&["summary", s(&u)]));
    assert!(table.lines().any(|l| l.contains(" verdict ")), "{table}");
    assert!(table.contains("not paired"), "{table}");
    let record = std::fs::read_to_string(u.join(".socbench-suite.json")).unwrap();
    for f in ["compare.json", "compare.csv", "compare.txt", "ab/"] {
        assert!(record.contains(&format!("\"{f}\"")), "{f}: {record}");
    }
    // --force without --ab removes them with the rest of the earlier suite's files.
    ok(&suite(
        &t,
        &bin,
        &["--only", "dhry", "--out", s(&u), "--force"],
    ));
    for f in ["compare.json", "compare.csv", "compare.txt", "ab"] {
        assert!(!u.join(f).exists(), "{f}: {:?}", names(&u));
    }
    let _ = std::fs::remove_dir_all(&u);
    let _ = std::fs::remove_dir_all(&bin);
}
