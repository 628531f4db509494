//! `ftrace record` on the real tracefs: markers from a process and its forked children appear,
//! nest and carry the right pids, and every setting is back afterwards, also when the command
//! fails, the event is unknown, or the capture is interrupted.
//!
//! tracefs is global: each test holds an exclusive lock on /tmp/socbench-tracefs.lock. Without
//! root or tracefs the tests print why they skipped and pass.

use std::fs::File;
use std::io::Write;
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

/// Says why a test skipped, on the real stderr (libtest captures only the print macros).
fn skip(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// Takes the tracefs lock and returns tracefs, or prints why the test skips.
fn tracefs_or_skip(test: &str) -> Option<(Flock<File>, Tracefs)> {
    // flock works on a read-only descriptor too, for a lock file another user created.
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(LOCK)
        .or_else(|_| File::open(LOCK));
    let file = match file {
        Ok(file) => file,
        Err(err) => {
            skip(test, &format!("cannot open the tracefs lock {LOCK}: {err}"));
            return None;
        }
    };
    let lock = Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, e)| e)
        .expect("flock");
    if !nix::unistd::geteuid().is_root() {
        skip(test, "not root, so tracefs settings cannot be changed");
        return None;
    }
    let fs = match Tracefs::locate() {
        Ok(fs) => fs,
        Err(ftrace::Error::NotMounted { .. }) => {
            // Exercise --mount: it mounts tracefs when the kernel has it.
            let out = Command::new(bin())
                .args(["record", "--mount", "-o", "/dev/null", "--", "true"])
                .output()
                .unwrap();
            match Tracefs::locate() {
                Ok(fs) => fs,
                Err(err) => {
                    println!(
                        "SKIPPED {test}: no tracefs ({err}); `ftrace record --mount` said: {}",
                        stderr(&out).trim()
                    );
                    return None;
                }
            }
        }
        Err(err) => {
            skip(test, &err.to_string());
            return None;
        }
    };
    Some((lock, fs))
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
fn markers_from_forked_children_nest_with_their_pids_and_settings_come_back() {
    let Some((_lock, fs)) = tracefs_or_skip("markers_from_forked_children") else {
        return;
    };
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
fn failing_command_status_is_passed_on_and_settings_come_back() {
    let Some((_lock, fs)) = tracefs_or_skip("failing_command") else {
        return;
    };
    let before = settings(&fs);
    let trace_path = temp("fail.txt");
    let out = Command::new(bin())
        .args([
            "record",
            "-o",
            trace_path.to_str().unwrap(),
            "--event",
            EVENT,
            "--",
            "sh",
            "-c",
            "exit 7",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&trace_path);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert_restored(&fs, &before);

    let out = Command::new(bin())
        .args([
            "record",
            "-o",
            trace_path.to_str().unwrap(),
            "--",
            "/nonexistent/program",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&trace_path);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot run /nonexistent/program"),
        "{}",
        stderr(&out)
    );
    assert_restored(&fs, &before);
}

#[test]
fn unknown_event_and_refused_buffer_are_status_2_and_change_nothing() {
    let Some((_lock, fs)) = tracefs_or_skip("unknown_event") else {
        return;
    };
    let before = settings(&fs);
    let out = Command::new(bin())
        .args([
            "record",
            "-o",
            "/dev/null",
            "--event",
            "sched/no_such_event",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("events/sched/no_such_event/enable: no event sched/no_such_event"),
        "{err}"
    );
    assert!(err.contains("available_events"), "{err}");
    assert_restored(&fs, &before);

    let out = Command::new(bin())
        .args([
            "record",
            "-o",
            "/dev/null",
            "--buffer-kb",
            "999999999999",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("buffer_size_kb: the kernel refused"),
        "{}",
        stderr(&out)
    );
    assert_restored(&fs, &before);
}

#[test]
fn sigterm_is_passed_to_the_command_and_settings_come_back() {
    let Some((_lock, fs)) = tracefs_or_skip("sigterm") else {
        return;
    };
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
fn not_root_is_status_2() {
    let Some((_lock, fs)) = tracefs_or_skip("not_root") else {
        return;
    };
    let before = settings(&fs);
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin()])
        .args(["record", "-o", "/dev/null", "--", "true"])
        .output();
    let out = match out {
        Ok(out) if !stderr(&out).starts_with("setpriv") => out,
        Ok(out) => {
            skip(
                "not_root",
                &format!("setpriv failed: {}", stderr(&out).trim()),
            );
            return;
        }
        Err(err) => {
            skip("not_root", &format!("cannot run setpriv ({err})"));
            return;
        }
    };
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("permission denied: run as root"),
        "{}",
        stderr(&out)
    );
    assert_restored(&fs, &before);
}
