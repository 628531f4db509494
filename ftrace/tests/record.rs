//! `ftrace record` on the real tracefs: markers from a process and its forked children appear,
//! nest and carry the right pids, and every setting is back afterwards, also when the command
//! fails, the event is unknown, or the capture is interrupted.
//!
//! tracefs is global: each test holds an exclusive lock on /tmp/socbench-tracefs.lock. They
//! need root and tracefs, so they are ignored by default and run with `--ignored`
//! (scripts/test.sh does); run so on a machine without either, they fail and say why.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ftrace::convert::{Atrace, convert, marker_text, parse_atrace, parse_line, validate};
use ftrace::tracefs::{Setting, Tracefs};
use nix::fcntl::{Flock, FlockArg};

const LOCK: &str = "/tmp/socbench-tracefs.lock";

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ftrace")
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ftrace-record-{}-{name}", std::process::id()))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `ftrace record ARGS` to its end.
fn record(args: &[&str]) -> Output {
    Command::new(bin())
        .arg("record")
        .args(args)
        .output()
        .unwrap()
}

/// Asserts that `out` ended with exit status `code` and said `needle` on stderr.
fn assert_exit(out: &Output, code: i32, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(err.contains(needle), "{err}");
}

/// Takes the tracefs lock and returns tracefs, mounting it with `ftrace record --mount` when
/// needed; panics with the reason when this machine cannot run the test.
fn tracefs() -> (Flock<File>, Tracefs) {
    // flock works on a read-only descriptor too, for a lock file another user created.
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(LOCK)
        .or_else(|_| File::open(LOCK))
        .unwrap_or_else(|err| panic!("cannot open the tracefs lock {LOCK}: {err}"));
    let lock = Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, e)| e)
        .expect("flock");
    assert!(
        nix::unistd::geteuid().is_root(),
        "not root, so tracefs settings cannot be changed"
    );
    let fs = match Tracefs::locate() {
        Ok(fs) => fs,
        Err(ftrace::Error::NotMounted { .. }) => {
            // Exercise --mount: it mounts tracefs when the kernel has it.
            let out = Command::new(bin())
                .args(["record", "--mount", "-o", "/dev/null", "--", "true"])
                .output()
                .unwrap();
            Tracefs::locate().unwrap_or_else(|err| {
                panic!(
                    "no tracefs ({err}); `ftrace record --mount` said: {}",
                    stderr(&out).trim()
                )
            })
        }
        Err(err) => panic!("no tracefs: {err}"),
    };
    (lock, fs)
}

const EVENT: &str = "sched/sched_switch";

fn watched() -> Vec<Setting> {
    vec![
        Setting::TracingOn,
        Setting::BufferSizeKb,
        Setting::CurrentTracer,
        Setting::TraceClock,
        Setting::Option("markers".into()),
        Setting::Option("record-tgid".into()),
        Setting::Event(EVENT.into()),
    ]
}

/// Settings, with the raw buffer size: an unexpanded buffer ("7 (expanded: 1408)") comes back
/// expanded, rounded to whole pages.
fn settings(fs: &Tracefs) -> (Vec<(Setting, String)>, String) {
    (
        fs.snapshot(&watched()).unwrap(),
        fs.read("buffer_size_kb").unwrap(),
    )
}

fn assert_restored(fs: &Tracefs, before: &(Vec<(Setting, String)>, String)) {
    let after = settings(fs);
    for ((setting, old), (_, new)) in before.0.iter().zip(&after.0) {
        if *setting == Setting::BufferSizeKb && before.1.contains("expanded") {
            let (old, new): (f64, f64) = (old.parse().unwrap(), new.parse().unwrap());
            assert!(
                (old - new).abs() <= old * 0.01 + 8.0,
                "buffer_size_kb {old} became {new}"
            );
        } else {
            assert_eq!(old, new, "{} not restored", setting.file());
        }
    }
}

#[test]
#[ignore = "needs tracefs mounted and root; scripts/test.sh runs them with --ignored"]
fn markers_from_forked_children_nest_with_their_pids_and_settings_come_back() {
    let (_lock, fs) = tracefs();
    let before = settings(&fs);
    let buffer = if before
        .0
        .iter()
        .any(|(s, v)| *s == Setting::BufferSizeKb && v == "2048")
    {
        "3072"
    } else {
        "2048"
    };
    let trace_path = temp("children.txt");
    let out = Command::new(bin())
        .args([
            "record",
            "-o",
            trace_path.to_str().unwrap(),
            "--buffer-kb",
            buffer,
            "--event",
            EVENT,
            "--",
        ])
        .args([bin(), "mark", "--json", "--children", "2"])
        .args([
            "begin",
            "outer",
            "begin",
            "inner x=1",
            "counter",
            "n",
            "4",
            "instant",
            "tick",
            "end",
            "end",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_restored(&fs, &before);

    let ids: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut pids = vec![ids["pid"].as_u64().unwrap() as u32];
    pids.extend(
        ids["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_u64().unwrap() as u32),
    );
    assert_eq!(pids.len(), 3);

    let text = std::fs::read_to_string(&trace_path).unwrap();
    std::fs::remove_file(&trace_path).unwrap();
    assert!(
        text.starts_with("# tracer: "),
        "not a text trace: {:.200}",
        text
    );

    // Each marker of ours was written by the process it names.
    let mut ours = 0;
    for line in text.lines().filter_map(parse_line) {
        let Some(marker) = marker_text(&line) else {
            continue;
        };
        let pid = match parse_atrace(marker) {
            Atrace::Begin { pid, .. }
            | Atrace::Counter { pid, .. }
            | Atrace::Instant { pid, .. } => pid,
            Atrace::End { pid: Some(pid) } => pid,
            _ => continue,
        };
        if pids.contains(&pid) {
            ours += 1;
            assert_eq!(line.tid, pid, "{marker} written by task {}", line.tid);
            if let Some(tgid) = line.tgid {
                assert_eq!(tgid, pid);
            }
        }
    }
    assert_eq!(ours, 3 * 6, "markers of ours in the trace");
    assert!(
        text.contains("sched_switch:"),
        "the asked event was not recorded"
    );

    // Other processes may write markers meanwhile: check our tracks only.
    let mut trace = convert(&text).trace;
    trace.trace_events.retain(|e| pids.contains(&e.pid));
    let check = validate(&trace);
    assert!(check.is_ok(), "{:?}", check.problems);
    for pid in &pids {
        let slices: Vec<_> = check.slices.iter().filter(|s| s.pid == *pid).collect();
        let shape: Vec<_> = slices
            .iter()
            .map(|s| (s.name.as_str(), s.depth, s.tid))
            .collect();
        assert_eq!(shape, [("outer", 0, *pid), ("inner x=1", 1, *pid)]);
        assert!(slices[1].begin_us >= slices[0].begin_us && slices[1].end_us <= slices[0].end_us);
    }
    assert_eq!(check.counters, 3);
}

#[test]
#[ignore = "needs tracefs mounted and root; scripts/test.sh runs them with --ignored"]
fn failing_command_status_is_passed_on_and_settings_come_back() {
    let (_lock, fs) = tracefs();
    let before = settings(&fs);
    let trace_path = temp("fail.txt");
    let path = trace_path.to_str().unwrap();
    let out = record(&["-o", path, "--event", EVENT, "--", "sh", "-c", "exit 7"]);
    let _ = std::fs::remove_file(&trace_path);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert_restored(&fs, &before);

    let out = record(&["-o", path, "--", "/nonexistent/program"]);
    let _ = std::fs::remove_file(&trace_path);
    assert_exit(&out, 2, "cannot run /nonexistent/program");
    assert_restored(&fs, &before);
}

#[test]
#[ignore = "needs tracefs mounted and root; scripts/test.sh runs them with --ignored"]
fn a_second_capture_is_refused_while_one_runs_and_settings_come_back() {
    let (_lock, fs) = tracefs();
    let before = settings(&fs);
    let (first_path, second_path) = (temp("first.txt"), temp("second.txt"));
    let started = temp("first-started");
    let _ = std::fs::remove_file(&started);
    let mut first = Command::new(bin())
        .args([
            "record",
            "-o",
            first_path.to_str().unwrap(),
            "--buffer-kb",
            "2048",
        ])
        .args([
            "--",
            "sh",
            "-c",
            &format!("touch '{}'; sleep 3", started.display()),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first capture's command starts once the capture holds tracefs and has set it up.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !started.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let during = fs.get(&Setting::BufferSizeKb).unwrap();
    let second = record(&[
        "-o",
        second_path.to_str().unwrap(),
        "--buffer-kb",
        "1024",
        "--",
        "true",
    ]);
    assert_exit(&second, 2, "another ftrace record is capturing");
    assert!(!second_path.exists());
    assert_eq!(fs.get(&Setting::BufferSizeKb).unwrap(), during);
    let status = first.wait().unwrap();
    let _ = std::fs::remove_file(&first_path);
    let _ = std::fs::remove_file(&started);
    assert!(status.success(), "{status:?}");
    assert_restored(&fs, &before);
}

#[test]
#[ignore = "needs tracefs mounted and root; scripts/test.sh runs them with --ignored"]
fn unknown_event_and_refused_buffer_are_status_2_and_change_nothing() {
    let (_lock, fs) = tracefs();
    let before = settings(&fs);
    let out = record(&[
        "-o",
        "/dev/null",
        "--event",
        "sched/no_such_event",
        "--",
        "true",
    ]);
    assert_exit(
        &out,
        2,
        "events/sched/no_such_event/enable: no event sched/no_such_event",
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("available_events"), "{err}");
    assert_restored(&fs, &before);

    let out = record(&[
        "-o",
        "/dev/null",
        "--buffer-kb",
        "999999999999",
        "--",
        "true",
    ]);
    assert_exit(&out, 2, "buffer_size_kb: the kernel refused");
    assert_restored(&fs, &before);
}

#[test]
#[ignore = "needs tracefs mounted and root; scripts/test.sh runs them with --ignored"]
fn sigterm_is_passed_to_the_command_and_settings_come_back() {
    let (_lock, fs) = tracefs();
    let before = settings(&fs);
    let trace_path = temp("signal.txt");
    let started = Instant::now();
    let mut child = Command::new(bin())
        .args([
            "record",
            "-o",
            trace_path.to_str().unwrap(),
            "--event",
            EVENT,
            "--",
            "sleep",
            "30",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the capture is running (tracing on, command started).
    let deadline = Instant::now() + Duration::from_secs(10);
    while fs.get(&Setting::Event(EVENT.into())).unwrap() != "1" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "ftrace record did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(128 + 15), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(
        stderr(&out).contains("stopped by signal 15"),
        "{}",
        stderr(&out)
    );
    assert!(
        std::fs::read_to_string(&trace_path)
            .unwrap()
            .starts_with("# tracer: ")
    );
    std::fs::remove_file(&trace_path).unwrap();
    assert_restored(&fs, &before);
}

#[test]
#[ignore = "needs tracefs mounted and root; scripts/test.sh runs them with --ignored"]
fn not_root_is_status_2() {
    let (_lock, fs) = tracefs();
    let before = settings(&fs);
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin()])
        .args(["record", "-o", "/dev/null", "--", "true"])
        .output();
    let out = out.unwrap_or_else(|err| panic!("cannot run setpriv (util-linux): {err}"));
    assert!(
        !stderr(&out).starts_with("setpriv"),
        "setpriv failed: {}",
        stderr(&out)
    );
    assert_exit(&out, 2, "permission denied: run as root");
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert_restored(&fs, &before);
}

/// In a mount namespace without tracefs: `record` and `mark` say how to mount it (status 2),
/// and `record --mount` mounts it there and records.
#[test]
#[ignore = "needs tracefs mounted and root; scripts/test.sh runs them with --ignored"]
fn without_tracefs_mounted_record_says_so_and_mount_mounts_it() {
    let (_lock, fs) = tracefs();
    let before = settings(&fs);
    let script = r#"
        for dir in /sys/kernel/tracing /sys/kernel/debug/tracing /sys/kernel/debug; do
            while umount "$dir" 2>/dev/null; do :; done
        done
        "$0" record -o /dev/null -- true; echo "record $?" >&2
        "$0" mark begin x; echo "mark $?" >&2
        "$0" record --mount -o /dev/null -- true 2>/dev/null; echo "mount $?" >&2
    "#;
    let out = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            bin(),
        ])
        .output()
        .unwrap_or_else(|err| panic!("cannot run unshare (util-linux): {err}"));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 5, "{err}");
    for (line, status) in [(&lines[0..2], "record 2"), (&lines[2..4], "mark 2")] {
        assert!(
            line[0].starts_with("ftrace: no tracefs with trace_marker"),
            "{err}"
        );
        assert!(line[0].contains("mount -t tracefs"), "{err}");
        assert_eq!(line[1], status, "{err}");
    }
    assert_eq!(lines[4], "mount 0", "{err}");
    assert_restored(&fs, &before);
}

/// The `bw_mem` binary of this workspace build (`cargo build -p bw_mem`), if present.
fn workspace_bin(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/record-<hash> -> target/<profile>/<name>
    let path = exe.parent()?.parent()?.join(name);
    path.is_file().then_some(path)
}

/// Phases one process reported in its JSON: (name, rep, start ns, end ns).
fn phases(list: &serde_json::Value) -> Vec<(String, Option<u64>, u64, u64)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["rep"].as_u64(),
                p["start_ns"].as_u64().unwrap(),
                p["end_ns"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Cross-check, as a profiler validation compares samples with an independent counter: the
/// slices `bw_mem --trace` leaves in a capture are exactly the phases its own --json lists
/// (names, order, pids, CPUs), and each slice encloses its phase's CLOCK_MONOTONIC interval with
/// no other marker between their edges.
#[test]
#[ignore = "needs tracefs mounted, root and a built bw_mem; scripts/test.sh runs them with --ignored"]
fn bw_mem_trace_matches_its_own_json() {
    let (_lock, fs) = tracefs();
    let bw_mem = workspace_bin("bw_mem").expect(
        "the bw_mem binary is not built next to this test: run `cargo build -p bw_mem` first",
    );
    let before = settings(&fs);
    let trace_path = temp("bw_mem.txt");
    let json_path = temp("bw_mem.json");
    // The children of -P 2 may run apart on a busy machine (a documented refusal, exit 1):
    // the capture is tried again, and a refusal every time is what gets checked.
    let record = || {
        Command::new(bin())
            .args([
                "record",
                "-o",
                trace_path.to_str().unwrap(),
                "--event",
                EVENT,
                "--clock",
                "mono",
                "--",
            ])
            .arg(&bw_mem)
            .args(["--trace", "-P", "2", "-N", "5", "8m", "rd"])
            .arg(format!("--json={}", json_path.display()))
            .env("ENOUGH", "5000")
            .env("TIMING_O", "0.02")
            .env("LOOP_O", "0")
            .env("BENCHMP_CALIBRATION", "off")
            .env_remove("LMBENCH_SCHED")
            .stdout(Stdio::null())
            .output()
            .unwrap()
    };
    // (benchmp::testing's ran_apart, which this crate below benchmp cannot use.)
    let ran_apart = |o: &std::process::Output| {
        o.status.code() == Some(1) && stderr(o).contains("the children did not run together")
    };
    let mut out = record();
    for _ in 1..3 {
        if !ran_apart(&out) {
            break;
        }
        out = record();
    }
    if ran_apart(&out) {
        assert_restored(&fs, &before);
        return;
    }
    assert!(out.status.success(), "{}", stderr(&out));
    assert_restored(&fs, &before);

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let text = std::fs::read_to_string(&trace_path).unwrap();
    let _ = std::fs::remove_file(&trace_path);
    let _ = std::fs::remove_file(&json_path);

    let parent = report["pid"].as_u64().unwrap() as u32;
    let children = report["measurements"][0]["children"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(children.len(), 2);
    let mut pids = vec![parent];
    pids.extend(children.iter().map(|c| c["pid"].as_u64().unwrap() as u32));

    let mut trace = convert(&text).trace;
    trace.trace_events.retain(|e| pids.contains(&e.pid));
    let check = validate(&trace);
    assert!(check.is_ok(), "{:?}", check.problems);

    // Every marker line, by the thread that wrote it. The capture ran on the mono trace clock,
    // which is the CLOCK_MONOTONIC the JSON's phase times come from, printed to the microsecond.
    let markers: Vec<(u32, u64)> = text
        .lines()
        .filter_map(parse_line)
        .filter(|l| l.function == "tracing_mark_write")
        .map(|l| (l.tid, l.ts_ns))
        .collect();
    // A slice encloses its phase (each clock read comes after its begin marker and before its
    // end marker), and its edges are the markers next to the clock reads: no other marker of
    // that process lies between an edge and the phase. Only order is asserted, never a
    // duration, so a busy host (steal time is invisible to sched_switch) cannot fail it.
    let agree = |s: &ftrace::convert::Slice, start_ns: u64, end_ns: u64, what: &str| {
        // The trace prints microseconds, and the kernel's mono trace clock (the NMI-safe fast
        // accessor) can stand a little apart from CLOCK_MONOTONIC: one microsecond either way.
        const RES_NS: u64 = 1_000;
        let begin_ns = (s.begin_us * 1000.0).round() as u64;
        let finish_ns = (s.end_us * 1000.0).round() as u64;
        assert!(
            begin_ns <= start_ns + RES_NS && end_ns <= finish_ns + RES_NS,
            "{what}: slice {begin_ns}..{finish_ns} ns does not enclose the JSON's \
             {start_ns}..{end_ns} ns"
        );
        let (first, last) = (start_ns / RES_NS * RES_NS, end_ns.div_ceil(RES_NS) * RES_NS);
        let between: Vec<u64> = markers
            .iter()
            .filter(|(tid, ts)| {
                *tid == s.pid
                    && ((*ts > begin_ns && *ts < first) || (*ts > last && *ts < finish_ns))
            })
            .map(|(_, ts)| *ts)
            .collect();
        assert!(
            between.is_empty(),
            "{what}: markers at {between:?} ns lie between the slice's edges \
             ({begin_ns}, {finish_ns}) and the phase's ({start_ns}, {end_ns})"
        );
    };

    // Parent: calibrate, then the measurement's run.
    let want = phases(&report["phases"]);
    let got: Vec<_> = check.slices.iter().filter(|s| s.pid == parent).collect();
    assert_eq!(
        got.iter()
            .map(|s| s.name.split(' ').next().unwrap())
            .collect::<Vec<_>>(),
        want.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
        "parent slices"
    );
    for (s, p) in got.iter().zip(&want) {
        agree(s, p.2, p.3, &format!("parent {}", s.name));
    }

    // Children: one enclosing `child` slice, then exactly the phases of the JSON, in order,
    // written by the child's pid on the CPU it was pinned to.
    for c in &children {
        let pid = c["pid"].as_u64().unwrap() as u32;
        let cpu = c["cpu"].as_i64().unwrap();
        let index = c["index"].as_i64().unwrap();
        let slices: Vec<_> = check.slices.iter().filter(|s| s.pid == pid).collect();
        let outer = slices[0];
        assert_eq!(outer.depth, 0);
        assert!(outer.name.starts_with("child "), "{}", outer.name);
        assert_eq!(outer.arg_i64("child"), Some(index));
        assert_eq!(outer.arg_i64("cpu"), Some(cpu));
        let want = phases(&c["phases"]);
        let inner: Vec<_> = slices[1..].iter().collect();
        assert_eq!(
            inner
                .iter()
                .map(|s| s.name.split(' ').next().unwrap())
                .collect::<Vec<_>>(),
            want.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
            "child {index} slices"
        );
        let reps = c["samples"].as_array().unwrap().len();
        assert_eq!(
            inner.iter().filter(|s| s.name.starts_with("rep ")).count(),
            reps
        );
        for (s, p) in inner.iter().zip(&want) {
            assert_eq!(s.depth, 1, "{} nests in the child slice", s.name);
            assert!(s.begin_us >= outer.begin_us && s.end_us <= outer.end_us);
            if let Some(rep) = p.1 {
                assert_eq!(s.arg_i64("n"), Some(rep as i64), "repetition number");
            }
            assert_eq!(
                s.arg_i64("on_cpu"),
                Some(cpu),
                "{} written on its CPU",
                s.name
            );
            agree(s, p.2, p.3, &format!("child {index} {}", s.name));
        }
    }
}

/// The buffer a capture needs does not depend on this machine's default: without
/// `--buffer-kb` the capture sizes it and keeps every event of a marker-heavy command (41,000
/// events overran the default 1408 KiB); given one far too small, it loses events and says how
/// many, on stderr, in the trace's header and, converted, in the JSON's metadata. Both times
/// the size is put back.
#[test]
#[ignore = "needs tracefs mounted and root; scripts/test.sh runs them with --ignored"]
fn a_capture_keeps_every_event_or_says_how_many_it_lost() {
    let (_lock, fs) = tracefs();
    let before = settings(&fs);
    let trace_path = temp("lost.txt");
    let json_path = temp("lost.json");
    let trace = trace_path.to_str().unwrap();
    let json = json_path.to_str().unwrap();
    let lost_in = |text: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.starts_with("# lost events: "))
            .unwrap_or_else(|| panic!("no lost-events line: {}", &text[..text.len().min(300)]));
        line["# lost events: ".len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // A capture that lost events may hold ends whose begins were overwritten: the JSON is
    // written, and the check after it fails (exit 1) naming them.
    let convert_lost = |whole: bool| -> Option<u64> {
        let out = Command::new(bin())
            .args(["convert", "--json", trace, json])
            .output()
            .unwrap();
        let code = if whole { 0 } else { 1 };
        assert!(
            out.status.code() == Some(0) || out.status.code() == Some(code),
            "{}",
            stderr(&out)
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
        v["metadata"]["lost_events"].as_u64()
    };
    for (args, keeps) in [(vec![], true), (vec!["--buffer-kb", "4"], false)] {
        let mut all = args.clone();
        all.extend(["-o", trace, "--", bin(), "bench-marker", "--rounds", "5"]);
        let out = record(&all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert_restored(&fs, &before);
        let text = std::fs::read_to_string(&trace_path).unwrap();
        let lost = lost_in(&text);
        assert_eq!(
            convert_lost(keeps),
            Some(lost),
            "the JSON carries the header's count"
        );
        if keeps {
            assert_eq!(lost, 0, "{err}");
            assert!(err.contains(", 0 events lost, ring buffer "), "{err}");
            // Every begin has its end: nothing was cut.
            let begins = text.matches("B|").count();
            assert!(begins >= 5 * 2000 / 2, "{begins} begins");
            assert_eq!(begins, text.matches("E|").count());
        } else {
            assert!(lost > 0, "a 4 KiB buffer kept everything? {err}");
            assert!(
                err.contains(&format!("the ring buffer lost {lost} events")),
                "{err}"
            );
        }
    }
    let _ = std::fs::remove_file(&trace_path);
    let _ = std::fs::remove_file(&json_path);
}

/// What the traced command leaves running (a background process) ends with the capture.
#[test]
#[ignore = "needs tracefs mounted and root; scripts/test.sh runs them with --ignored"]
fn a_commands_background_processes_end_with_the_capture() {
    let (_lock, fs) = tracefs();
    let before = settings(&fs);
    let trace_path = temp("background.txt");
    let pid_path = temp("background.pid");
    let script = format!("sleep 30 & echo $! > {}", pid_path.display());
    let out = record(&[
        "-o",
        trace_path.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_restored(&fs, &before);
    let pid = std::fs::read_to_string(&pid_path).unwrap();
    let pid = pid.trim();
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the background sleep {pid} outlived the capture"
    );
    let _ = std::fs::remove_file(&trace_path);
    let _ = std::fs::remove_file(&pid_path);
}

/// A capture killed outright (SIGKILL: nothing of it runs again) leaves tracefs as it set it;
/// the next socbench command finds the registry's record of each setting, writes the old
/// value back and says so, and tracefs is as it was before the capture.
#[test]
#[ignore = "needs tracefs mounted and root; scripts/test.sh runs them with --ignored"]
fn a_capture_killed_outright_has_its_settings_written_back_by_the_next_command() {
    let (_lock, fs) = tracefs();
    let before = settings(&fs);
    let asked = if fs.get(&Setting::BufferSizeKb).unwrap() == "64" {
        "128"
    } else {
        "64"
    };
    let mut child = Command::new(bin())
        .args([
            "record",
            "-o",
            temp("killed.txt").to_str().unwrap(),
            "--buffer-kb",
            asked,
            "--event",
            EVENT,
            "--",
            "sleep",
            "30",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the capture runs: its event on, as it is last of the settings.
    let deadline = Instant::now() + Duration::from_secs(10);
    while fs.get(&Setting::Event(EVENT.into())).unwrap() != "1" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(fs.get(&Setting::Event(EVENT.into())).unwrap(), "1");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();
    // (The kernel rounds a size up to whole pages: 64 reads 67.)
    let left: u64 = fs.get(&Setting::BufferSizeKb).unwrap().parse().unwrap();
    let asked_kb: u64 = asked.parse().unwrap();
    assert!(
        (asked_kb..asked_kb + 8).contains(&left),
        "the killed capture's buffer is {left} KiB, not about {asked}"
    );
    // The next capture (any socbench command would do) writes them back as it starts.
    let out = record(&["-o", temp("next.txt").to_str().unwrap(), "--", "true"]);
    let _ = std::fs::remove_file(temp("next.txt"));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.lines().any(|l| l.starts_with("ftrace: restored ")
            && l.contains("buffer_size_kb to ")
            && l.contains(&format!("(left at {asked} by pid {}", child.id()))),
        "{err}"
    );
    assert_restored(&fs, &before);
    let _ = std::fs::remove_file(temp("killed.txt"));
}
