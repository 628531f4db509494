//! Drives the `benchmp` binary, so every fork happens in a fresh single-threaded process and
//! never inside the multi-threaded test runner.

use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Tests run one at a time: leftover detection looks at every process this test binary owns.
static SERIAL: Mutex<()> = Mutex::new(());

/// Takes the serial lock and makes this process the reaper of orphaned grandchildren, so a
/// child that benchmp failed to reap would show up here (alive or as a zombie).
fn serial() -> MutexGuard<'static, ()> {
    let g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _ = nix::sys::prctl::set_child_subreaper(true);
    g
}

fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A probe command with calibration fixed by lmbench's variables (no measuring, no cache).
fn probe(tag: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_benchmp"));
    c.arg("probe")
        .env("ENOUGH", "2000")
        .env("TIMING_O", "0.02")
        .env("LOOP_O", "0")
        .env("BENCHMP_CALIBRATION", "off")
        .env("BENCHMP_TEST_TAG", tag)
        .env_remove("LMBENCH_SCHED")
        .env_remove("BENCHMP_SYSFS_ROOT");
    c
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "status {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

fn children(v: &serde_json::Value) -> Vec<serde_json::Value> {
    v["measurements"][0]["children"].as_array().unwrap().clone()
}

fn leftovers(tag: &str) -> Vec<String> {
    benchmp::testing::tagged_processes(tag)
}

fn assert_no_leftovers(tag: &str) {
    benchmp::testing::assert_no_tagged_processes(tag, Duration::from_secs(5));
}

#[test]
fn sample_counts_match_repetitions_and_children_are_pinned() {
    let _serial = serial();
    let p = online_cpus().min(4);
    let run = |extra: &[&str]| {
        probe("counts")
            .args(["-P", &p.to_string(), "-N", "4", "--json"])
            .args(extra)
            .output()
            .unwrap()
    };
    // Children that ran apart on a busy machine are refused (checked by output_together);
    // then where they ran and what they counted is checked on children timed one by one.
    let together = benchmp::testing::output_together("benchmp", || run(&[]));
    let out = together.clone().unwrap_or_else(|| run(&["--sequential"]));
    let v = json(&out);
    let kids = children(&v);
    assert_eq!(kids.len(), p);
    for (i, k) in kids.iter().enumerate() {
        let accepted = k["samples"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["accepted"] == true)
            .count();
        assert_eq!(accepted, 4, "child {i} accepted samples");
        // UNIQUE (the default) puts child i on the i-th allowed CPU; the child saw only it.
        assert_eq!(k["cpu"], i);
        assert_eq!(k["cpus_seen"], serde_json::json!([i]), "child {i} migrated");
        let reps = k["phases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|ph| ph["name"] == "rep")
            .count();
        assert_eq!(reps, k["samples"].as_array().unwrap().len());
    }
    assert_eq!(v["measurements"][0]["figures"].as_array().unwrap().len(), p);
    assert!(
        together.is_none()
            || v["measurements"][0]["aggregate"]["cluster"]
                .as_f64()
                .unwrap()
                > 0.0
    );
}

#[test]
fn lmbench_sched_policies_choose_the_cpus() {
    let _serial = serial();
    let last = online_cpus() - 1;
    let cases: Vec<(&str, Vec<usize>)> = vec![
        ("SINGLE", vec![0, 0]),
        ("BALANCED", vec![0, 1 % online_cpus()]),
        (
            &*Box::leak(format!("CUSTOM {last}").into_boxed_str()),
            vec![last, last],
        ),
    ];
    // Sequential: where the children ran does not need them to run together (two children
    // on one CPU never do within one interval).
    for (policy, want) in cases {
        let out = probe("sched")
            .args(["-P", "2", "-N", "1", "--sequential", "--json"])
            .env("LMBENCH_SCHED", policy)
            .output()
            .unwrap();
        let got: Vec<usize> = children(&json(&out))
            .iter()
            .map(|k| k["cpu"].as_u64().unwrap() as usize)
            .collect();
        assert_eq!(got, want, "LMBENCH_SCHED={policy}");
    }
    let out = probe("sched")
        .args([
            "--cpus",
            &last.to_string(),
            "-P",
            "2",
            "-N",
            "1",
            "--sequential",
            "--json",
        ])
        .output()
        .unwrap();
    let v = json(&out);
    let kids = children(&v);
    assert_eq!(kids.len(), 2, "-P 2 on one CPU: two children");
    for k in kids {
        assert_eq!(k["cpu"], last);
        assert_eq!(k["cpus_seen"], serde_json::json!([last]));
    }
    assert_eq!(v["placement"]["source"], "--cpus");
}

#[test]
fn default_policy_leaves_children_unpinned() {
    let _serial = serial();
    let out = probe("default")
        .args(["-P", "2", "-N", "1", "--sequential", "--json"])
        .env("LMBENCH_SCHED", "DEFAULT")
        .output()
        .unwrap();
    let kids = children(&json(&out));
    assert_eq!(kids.len(), 2, "-P 2: two children");
    for k in kids {
        assert!(k["cpu"].is_null());
    }
}

fn usage_error(cmd: &mut Command, expect: &str) {
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line expected: {err}");
    assert!(err.contains(expect), "{err:?} should mention {expect:?}");
}

#[test]
fn bad_placement_and_environment_are_usage_errors() {
    let _serial = serial();
    usage_error(
        probe("bad").env("LMBENCH_SCHED", "FASTEST"),
        "is not a policy",
    );
    usage_error(probe("bad").args(["--cpus", "4095"]), "not online");
    usage_error(probe("bad").args(["--cpus", "x"]), "--cpus");
    usage_error(probe("bad").args(["-P", "0"]), "--parallel");
    usage_error(probe("bad").env("ENOUGH", "lots"), "ENOUGH='lots'");
    usage_error(probe("bad").env("LOOP_O", "-1"), "LOOP_O");
    // A child the run does not have cannot be made to fail: refused, not ignored.
    usage_error(
        probe("bad").args(["-P", "1", "--fail-child", "5"]),
        "--fail-child 5: the run has 1 child(ren)",
    );
}

#[test]
fn cpu_outside_the_allowed_set_is_refused() {
    let _serial = serial();
    if online_cpus() < 2 || Command::new("taskset").arg("-V").output().is_err() {
        benchmp::testing::skip(
            "cpu_outside_the_allowed_set_is_refused",
            "needs 2 CPUs and taskset",
        );
        return;
    }
    let mut c = Command::new("taskset");
    c.args([
        "-c",
        "0",
        env!("CARGO_BIN_EXE_benchmp"),
        "probe",
        "--cpus",
        "1",
    ])
    .env("ENOUGH", "2000")
    .env("BENCHMP_CALIBRATION", "off");
    usage_error(&mut c, "not in this process's allowed CPU set 0");
}

fn failing(how: &str, tag: &str, extra: &[&str]) -> Output {
    let child = if online_cpus() > 1 { "1" } else { "0" };
    let out = probe(tag)
        .args([
            "-P",
            "2",
            "-N",
            "50",
            "--fail-child",
            child,
            "--fail-how",
            how,
        ])
        .args(extra)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_no_leftovers(tag);
    out
}

#[test]
fn a_crashing_child_is_named_and_everything_is_reaped() {
    let _serial = serial();
    let out = failing("abort", "abort", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let cpu = if online_cpus() > 1 { 1 } else { 0 };
    assert!(err.contains(&format!("child 1 (CPU {cpu})")), "{err}");
    assert!(err.contains("SIGABRT"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_child_exiting_early_is_named() {
    let _serial = serial();
    let out = failing("exit", "exit", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("child 1") && err.contains("status 5"), "{err}");
}

#[test]
fn a_hung_child_is_killed_after_the_deadline() {
    let _serial = serial();
    let t = Instant::now();
    let out = failing("hang", "hang", &["--timeout", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("child 1") && err.contains("hung"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(60));
}

#[test]
fn a_setup_error_is_reported_with_its_child() {
    let _serial = serial();
    let out = failing("error", "error", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("child 1") && err.contains("setup failed on purpose"),
        "{err}"
    );
}

#[test]
fn stop_signals_to_the_parent_kill_and_reap_every_child() {
    use nix::sys::signal::Signal;
    let _serial = serial();
    for (sig, code) in [
        (Signal::SIGINT, 130),
        (Signal::SIGHUP, 129),
        (Signal::SIGTERM, 143),
    ] {
        let tag = format!("signal-{}", sig.as_str());
        let child = probe(&tag)
            .args(["-P", "2", "-N", "100000"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the children exist and are timing.
        let deadline = Instant::now() + Duration::from_secs(20);
        while leftovers(&tag).len() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(200));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{sig}: {err}");
        assert!(
            err.contains(&format!("interrupted by {}", sig.as_str())),
            "{sig}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{sig}: {err}");
        assert_no_leftovers(&tag);
    }
}

#[test]
fn a_child_stopped_while_the_others_ran_is_not_a_parallel_figure() {
    let _serial = serial();
    if online_cpus() < 2 {
        benchmp::testing::skip(
            "a_child_stopped_while_the_others_ran_is_not_a_parallel_figure",
            "needs 2 CPUs",
        );
        return;
    }
    let tag = "sigstop";
    // 1000 intervals per child of a fixed count (about 2 ms each in a debug build here), all
    // accepted, so each child sends its parent 1000 frames; once both children are timing,
    // one is frozen in every attempt, as a debugger or a phone's freezer would, until the
    // other has sent its 1000: the measurement is repeated, then refused. Not a fixed freeze:
    // a busy machine stretches the other child's run past any length chosen (in a CI run 0.5 s
    // of intervals took 1.9 s around a 2 s freeze, and the figure stood). Two seconds of work,
    // not half of one: on a busy machine the freeze came late in a 0.5 s run (a fresh clone's
    // test run, children losing 70 % of it), and the frozen child had done most of its work.
    let freeze = benchmp::testing::Freeze {
        after: Duration::from_millis(150),
        first_frames: 1000,
        otherwise: Duration::from_secs(2),
    };
    let out = benchmp::testing::output_with_each_second_child_frozen(
        probe(tag).args(["-P", "2", "-N", "1000", "--iterations", "200000", "--json"]),
        freeze,
        benchmp::quality::ATTEMPTS as usize,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let overlap = serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .map(|v| v["measurements"][0]["overlap"].to_string())
        .unwrap_or_default();
    assert_eq!(out.status.code(), Some(1), "{err}{overlap}");
    assert!(
        err.contains(&format!(
            "did not run together in {} attempts",
            benchmp::quality::ATTEMPTS
        )),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty(), "no figure is printed");
    assert_no_leftovers(tag);
    // Frozen in the first attempt only: the figure comes from a repeat whose children ran
    // together (or, on a machine busy enough to part them again, the same refusal).
    let out = benchmp::testing::output_with_each_second_child_frozen(
        probe(tag).args(["-P", "2", "-N", "1000", "--iterations", "200000", "--json"]),
        freeze,
        1,
    );
    if !benchmp::testing::ran_apart(&out) {
        let v = json(&out);
        let o = &v["measurements"][0]["overlap"];
        assert!(o["attempts"].as_u64().unwrap() >= 2, "{o}");
        assert_eq!(o["together"], true, "{o}");
        assert!(o["fraction"].as_f64().unwrap() >= benchmp::quality::MIN_OVERLAP);
    }
    assert_no_leftovers(tag);
}

#[test]
fn sequential_children_are_timed_one_by_one_and_not_added() {
    let _serial = serial();
    let out = probe("sequential")
        .args([
            "-P",
            "2",
            "--cpus",
            "0",
            "-N",
            "3",
            "--sequential",
            "--json",
        ])
        .output()
        .unwrap();
    let v = json(&out);
    let m = &v["measurements"][0];
    let w = m["overlap"]["windows"].as_array().unwrap();
    assert_eq!(w.len(), 2);
    assert!(
        w[0]["end_ns"].as_u64() <= w[1]["start_ns"].as_u64(),
        "child 1 starts after child 0 ends: {w:?}"
    );
    assert_eq!(m["overlap"]["sequential"], true);
    assert_eq!(m["overlap"]["together"], true);
    // Nothing ran together, so nothing is added: the figure is the children's mean.
    let kids: Vec<f64> = m["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["value"].as_f64().unwrap())
        .collect();
    let mean = kids.iter().sum::<f64>() / 2.0;
    let shown = m["aggregate"]["cluster"].as_f64().unwrap();
    assert!((shown - mean).abs() <= 1e-6 * mean, "{shown} vs {mean}");
}

#[test]
fn parallel_runs_record_their_overlap() {
    let _serial = serial();
    // A busy machine can leave even a parallel run's windows apart in every attempt: then
    // the refusal is what is checked.
    let Some(out) = benchmp::testing::output_together("benchmp", || {
        probe("overlap")
            .args(["-P", "2", "-N", "5", "--json"])
            .output()
            .unwrap()
    }) else {
        return;
    };
    let v = json(&out);
    let o = &v["measurements"][0]["overlap"];
    assert_eq!(o["windows"].as_array().unwrap().len(), 2);
    assert_eq!(o["sequential"], false);
    assert_eq!(o["together"], true);
    let f = o["fraction"].as_f64().unwrap();
    assert!((benchmp::quality::MIN_OVERLAP..=1.0).contains(&f), "{o}");
    let attempts = o["attempts"].as_u64().unwrap();
    assert!((1..=u64::from(benchmp::quality::ATTEMPTS)).contains(&attempts));
    assert!(o["common_ns"].as_u64().unwrap() <= o["longest_ns"].as_u64().unwrap());
}

#[test]
fn fixed_iterations_accept_every_interval() {
    let _serial = serial();
    let out = probe("fixed")
        .args(["-P", "1", "-N", "3", "--iterations", "1000", "--json"])
        .output()
        .unwrap();
    let k = &children(&json(&out))[0];
    let samples = k["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3);
    assert!(
        samples
            .iter()
            .all(|s| s["iterations"] == 1000 && s["accepted"] == true)
    );
    assert_eq!(k["calibration_intervals"], 0);
}

#[test]
fn csv_has_one_row_per_child_per_interval() {
    let _serial = serial();
    let out = probe("csv")
        .args([
            "-P",
            "2",
            "-N",
            "2",
            "--iterations",
            "100",
            "--sequential",
            "--csv",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("tool,measurement,params,child,pid,cpu")
    );
    assert_eq!(lines.count(), 4);
}

/// `--md` (one declaration of the result files, one renderer): a tool's report gives its
/// figures as a Markdown table on stdout alone, or in a file beside the text; a comparison
/// its rows; an interrupted run's Markdown says it was.
#[test]
fn markdown_gives_the_figures_of_a_report_and_the_rows_of_a_comparison() {
    let _serial = serial();
    let dir = benchmp::testing::temp_dir("benchmp-cli", "markdown");
    let out = probe("md")
        .args(["-N", "3", "--iterations", "1000", "--md"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let md = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = md.lines().collect();
    assert!(lines[0].starts_with("**benchmp-probe** `"), "{md}");
    assert_eq!(
        lines[2],
        "| figure | cpu | cluster | value | unit | better | samples |"
    );
    assert_eq!(lines[3], "| --- | --- | --- | --- | --- | --- | --- |");
    assert!(
        lines[4..]
            .iter()
            .any(|l| l.starts_with("| spin ") && l.ends_with(" | 3 |")),
        "{md}"
    );
    // Beside the text, in a file; two formats on stdout are refused before measuring.
    let file = dir.join("r.md");
    let out = probe("md")
        .args(["-N", "3", "--iterations", "1000"])
        .arg(format!("--md={}", file.display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("iterations/s"));
    assert!(std::fs::read_to_string(&file).unwrap().contains("| spin "));
    let out = probe("md").args(["--md", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--json and --md cannot both write to stdout"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A comparison: its CSV's rows as a table, a row per figure.
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    probe_report(&a, "spin", &["-N", "3", "--iterations", "1000"]);
    std::fs::copy(a.join("spin.json"), b.join("spin.json")).unwrap();
    let o = compare(&a, &b, &["--md"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let md = String::from_utf8(o.stdout).unwrap();
    let csv = String::from_utf8(compare(&a, &b, &["--csv"]).stdout).unwrap();
    let header = csv.lines().next().unwrap();
    assert_eq!(
        md.lines().next().unwrap(),
        format!("| {} |", header.split(',').collect::<Vec<_>>().join(" | "))
    );
    assert_eq!(md.lines().count(), csv.lines().count() + 1, "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn topology_prints_from_a_fixture_root() {
    let _serial = serial();
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../benchmp/tests/fixtures/phone8/sys"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_benchmp"))
        .arg("topology")
        .env("BENCHMP_SYSFS_ROOT", root)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("8 CPUs, 4 clusters (cpufreq_policy): 0-1 | 2-4 | 5-6 | 7"),
        "{text}"
    );
}

#[test]
fn a_sysfs_root_that_is_no_sysfs_tree_is_bad_input() {
    let _serial = serial();
    let out = Command::new(env!("CARGO_BIN_EXE_benchmp"))
        .arg("topology")
        .env("BENCHMP_SYSFS_ROOT", "/nonexist")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("benchmp: BENCHMP_SYSFS_ROOT=/nonexist"),
        "{err}"
    );
}

#[test]
fn help_works() {
    let _serial = serial();
    let out = Command::new(env!("CARGO_BIN_EXE_benchmp"))
        .args(["probe", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--parallel"));
}

/// A probe run's report, written to `dir/name.json`.
fn probe_report(dir: &std::path::Path, name: &str, args: &[&str]) -> serde_json::Value {
    let path = dir.join(format!("{name}.json"));
    let out = probe(name)
        .args(args)
        .arg(format!("--json={}", path.display()))
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn compare(base: &std::path::Path, cur: &std::path::Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchmp"))
        .arg("compare")
        .arg(base)
        .arg(cur)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn compare_judges_every_shared_figure() {
    let _serial = serial();
    let dir = benchmp::testing::temp_dir("benchmp-cli", "compare");
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let mut base = probe_report(&a, "spin", &["-N", "11"]);
    // Tight samples, so the verdicts below depend on the effect, not on this machine's noise.
    for f in base["figures"].as_array_mut().unwrap() {
        let v = f["value"].as_f64().unwrap();
        f["samples"] = (0..11).map(|i| v * (1.0 + 0.001 * i as f64)).collect();
    }
    // A quiet run, whatever this machine's was.
    base["quality"]["verdict"] = serde_json::json!({"noisy": false, "reasons": []});
    std::fs::write(a.join("spin.json"), serde_json::to_vec(&base).unwrap()).unwrap();
    // The same run on both sides: every figure passes, exit 0.
    std::fs::write(b.join("spin.json"), serde_json::to_vec(&base).unwrap()).unwrap();
    let o = compare(&a, &b, &["--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["verdict"] == "PASS"), "{rows:?}");
    // The same samples 30 % slower (a throughput), one run per side: without the spread
    // between runs on this machine the change cannot be told from drift, so every figure is
    // NOISY with its reason (exit 0); with --run-spread 10 it is a regression (exit 1). Both
    // are shown with the slower run's own noise verdict.
    let mut slow = base.clone();
    slow["quality"]["verdict"] =
        serde_json::json!({"noisy": true, "reasons": ["child 0 (CPU 0): lost 9 %"]});
    for f in slow["figures"].as_array_mut().unwrap() {
        f["value"] = (f["value"].as_f64().unwrap() * 0.7).into();
        for s in f["samples"].as_array_mut().unwrap() {
            *s = (s.as_f64().unwrap() * 0.7).into();
        }
    }
    std::fs::write(b.join("spin.json"), serde_json::to_vec(&slow).unwrap()).unwrap();
    let o = compare(&a, &b, &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let why = "one run per side: a change of -30.0 % cannot be told from the drift between runs; \
               give --run-spread PCT, several runs per side, or pair the builds with benchmp ab";
    assert!(
        text.contains("run spread unknown")
            && text.lines().skip(2).filter(|l| l.contains('%')).all(|l| {
                l.contains("-30.0%") && l.ends_with(&format!("NOISY (current run noisy) — {why}"))
            }),
        "{text}"
    );
    assert!(
        text.contains(" 0 FAIL") && !text.contains(" 0 NOISY"),
        "{text}"
    );
    let o = compare(&a, &b, &["--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["run_spread_pct"].is_null(), "{v}");
    for r in v["rows"].as_array().unwrap() {
        assert_eq!(
            (&r["verdict"], r["why"].as_str()),
            (&"NOISY".into(), Some(why)),
            "{r}"
        );
        assert!(
            r["ks_p"].as_f64().unwrap() < 0.05 && r["mann_whitney"].is_null(),
            "{r}"
        );
    }
    let o = compare(&a, &b, &["--run-spread", "10"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("run spread 10.0 %")
            && text.contains("-30.0%")
            && text.contains("FAIL (current run noisy)\n")
            && !text.contains("NOISY ("),
        "{text}"
    );
    // Within the spread given it stays NOISY, saying so.
    let o = compare(&a, &b, &["--run-spread", "35", "--csv"]);
    assert_eq!(o.status.code(), Some(0));
    let csv = String::from_utf8_lossy(&o.stdout);
    assert!(
        csv.lines()
            .skip(1)
            .all(|l| l.contains(",NOISY,one run per side: a change of -30.0 % is within the drift between runs (--run-spread 35 %),1,1,,")),
        "{csv}"
    );
    // ...and the other way round an improvement, exit 0.
    let o = compare(&b, &a, &["--csv", "--run-spread", "10"]);
    assert_eq!(o.status.code(), Some(0));
    let csv = String::from_utf8_lossy(&o.stdout);
    assert!(csv.starts_with("entry,tool,figure"), "{csv}");
    assert!(
        csv.lines()
            .skip(1)
            .all(|l| l.contains(",true,false,IMPROVED,,1,1,,")),
        "{csv}"
    );
    // A figure only one side has is MISSING, not a failure.
    std::fs::write(b.join("extra.json"), serde_json::to_vec(&base).unwrap()).unwrap();
    std::fs::write(b.join("spin.json"), serde_json::to_vec(&base).unwrap()).unwrap();
    let o = compare(&a, &b, &["--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["counts"]["missing"].as_u64().unwrap() >= 1, "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_takes_several_runs_a_side_as_the_units() {
    let _serial = serial();
    let dir = benchmp::testing::temp_dir("benchmp-cli", "compare-runs");
    let template = tight_report(&dir);
    // A report whose every figure is 11 tight samples around `value`, from a quiet run.
    let report_at = |value: f64| {
        let mut r = template.clone();
        r["quality"]["verdict"] = serde_json::json!({"noisy": false, "reasons": []});
        for f in r["figures"].as_array_mut().unwrap() {
            f["value"] = value.into();
            f["samples"] = (0..11)
                .map(|i| value * (1.0 + 0.001 * (i as f64 - 5.0)))
                .collect();
        }
        serde_json::to_vec(&r).unwrap()
    };
    // Result folders base1..4, slow1..4 and same1..4, each run's figures at the value given.
    let side = |name: &str, values: &[f64]| -> Vec<String> {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let d = dir.join(format!("{name}{}", i + 1));
                std::fs::create_dir_all(&d).unwrap();
                std::fs::write(d.join("spin.json"), report_at(v)).unwrap();
                d.display().to_string()
            })
            .collect()
    };
    let base = side("base", &[1000.0, 1040.0, 980.0, 1010.0]);
    let slow = side("slow", &[900.0, 880.0, 920.0, 905.0]);
    let same = side("same", &[1005.0, 995.0, 1030.0, 990.0]);
    let overlap = side("overlap", &[1100.0, 990.0, 1120.0, 1060.0]);
    let run = |cur: &[String], extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_benchmp"));
        c.arg("compare").args(extra).args(&base).arg("--").args(cur);
        c.output().unwrap()
    };
    // Every slowed run below every base run: p = 2/70 over 4 runs a side, a FAIL (exit 1) on
    // the change of the medians (902.5 against 1005), whatever --run-spread says.
    let o = run(&slow, &["--json", "--run-spread", "50"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["base_runs"].as_array().unwrap().len(), 4, "{v}");
    assert_eq!(v["current_runs"].as_array().unwrap().len(), 4, "{v}");
    let rows = v["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        assert_eq!(r["verdict"], "FAIL", "{r}");
        assert!(r["why"].is_null() && r["ks_p"].is_null(), "{r}");
        assert!(
            (r["mann_whitney"]["p"].as_f64().unwrap() - 2.0 / 70.0).abs() < 1e-12,
            "{r}"
        );
        assert_eq!(r["mann_whitney"]["method"], "exact", "{r}");
        assert_eq!(r["base"]["runs"].as_array().unwrap().len(), 4, "{r}");
        let change = r["change_pct"].as_f64().unwrap();
        assert!(
            (change - (902.5 / 1005.0 - 1.0) * 100.0).abs() < 1e-6,
            "{r}"
        );
    }
    // Runs of the same build: the medians within the minimum effect, PASS, exit 0.
    let o = run(&same, &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.starts_with("benchmp compare: BASE 4 runs (")
            && text.contains("Mann-Whitney over the runs, alpha 0.05")
            && text.contains(" 0 FAIL, 0 IMPROVED, 0 NOISY"),
        "{text}"
    );
    // A median 7.5 % higher whose runs overlap the base's: NOISY with the reason, exit 0.
    let o = run(&overlap, &["--csv"]);
    let csv = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{csv}");
    assert!(
        csv.lines().skip(1).all(|l| l.contains(
            ",NOISY,4 runs against 4: a change of +7.5 % with Mann-Whitney p 0.200 (not below alpha 0.05): the runs of the two sides overlap,4,4,"
        )),
        "{csv}"
    );
    // A run without the entry gives it no value: 3 base runs left, which cannot reach p < 0.05.
    std::fs::rename(dir.join("base4/spin.json"), dir.join("base4/other.json")).unwrap();
    let o = run(&slow, &["--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for r in v["rows"].as_array().unwrap() {
        if r["entry"] == "spin" {
            assert_eq!(r["base"]["runs"].as_array().unwrap().len(), 3, "{r}");
            assert_eq!(r["verdict"], "NOISY", "{r}");
            assert!(
                r["why"].as_str().unwrap().contains("cannot reach p < 0.05"),
                "{r}"
            );
        } else {
            assert_eq!(r["verdict"], "MISSING", "{r}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_refuses_what_is_not_a_run() {
    let dir = benchmp::testing::temp_dir("benchmp-cli", "compare-bad");
    let not_report = dir.join("x.json");
    std::fs::write(&not_report, "{\"x\": 1}").unwrap();
    let text = dir.join("notes.txt");
    std::fs::write(&text, "hello").unwrap();
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    for (base, cur, says) in [
        (&not_report, &not_report, "is not a socbench report"),
        (&text, &text, "is not a socbench report"),
        (&empty, &empty, "holds no socbench report"),
        (&dir.join("missing"), &empty, "cannot read"),
    ] {
        let o = compare(base, cur, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.starts_with("benchmp: ") && err.contains(says), "{err}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_benchmp"))
        .args(["compare", "a", "b", "--min-effect", "-1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    // Sides that are not two: three paths without `--`, one, an option after `--`, and a run
    // given twice on one side (it would count as two units).
    let e = empty.display().to_string();
    for (args, says) in [
        (
            vec![e.as_str(), e.as_str(), e.as_str()],
            "3 run path(s) without `--`",
        ),
        (vec![e.as_str()], "1 run path(s) without `--`"),
        (
            vec![e.as_str(), "--", e.as_str(), "--json"],
            "put options before `--`",
        ),
        (vec![e.as_str(), e.as_str(), "--", e.as_str()], "BASE has"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_benchmp"))
            .arg("compare")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.starts_with("benchmp: ") && err.contains(says), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn load_children_report_what_they_did_over_the_measuring_window() {
    let _serial = serial();
    let cpus = online_cpus();
    let (measure, load) = if cpus > 1 { ("0", "1") } else { ("0", "0") };
    let out = probe("loaded")
        .args(["-N", "20", "--cpus", measure, "--load-cpus", load, "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // A starved load (a busy machine) is refused, never counted: either way the report says so.
    if out.status.code() == Some(1) {
        assert!(
            err.contains("did not load the whole measuring window"),
            "{err}"
        );
        return;
    }
    let v = json(&out);
    let m = &v["measurements"][0];
    assert_eq!(
        m["children"].as_array().unwrap().len(),
        1,
        "one measuring child"
    );
    let loads = m["loads"].as_array().unwrap();
    assert_eq!(loads.len(), 1);
    let l = &loads[0];
    assert_eq!(l["index"], 1);
    assert_eq!(l["cpu"].as_u64().unwrap().to_string(), load);
    assert_eq!(l["ran_through"], true);
    assert!(l["iterations"].as_f64().unwrap() > 0.0, "{l}");
    // The window is the measuring child's, and the load ran around it.
    let samples = m["children"][0]["samples"].as_array().unwrap();
    let first = samples[0]["start_ns"].as_u64().unwrap();
    assert_eq!(l["window_start_ns"].as_u64().unwrap(), first);
    assert!(l["started_ns"].as_u64().unwrap() <= first);
    assert!(l["stopped_ns"].as_u64().unwrap() >= l["window_end_ns"].as_u64().unwrap());
    assert_no_leftovers("loaded");
}

#[test]
fn a_load_stopped_while_latency_is_measured_fails_the_run() {
    let _serial = serial();
    if online_cpus() < 2
        && benchmp::testing::skip(
            "a_load_stopped_while_latency_is_measured_fails_the_run",
            "needs 2 CPUs",
        )
    {
        return;
    }
    let tag = "loadstop";
    // About two seconds of timed intervals (1000 of a fixed count, about 2 ms each in a debug
    // build here, each a frame to the parent) on CPU 0, a load on CPU 1; the load child
    // (forked second) is frozen until the measuring child has sent its 1000.
    let out = benchmp::testing::output_with_second_child_frozen(
        probe(tag).args([
            "-N",
            "1000",
            "--iterations",
            "200000",
            "--cpus",
            "0",
            "--load-cpus",
            "1",
            "--json",
        ]),
        benchmp::testing::Freeze {
            after: Duration::from_millis(400),
            first_frames: 1000,
            otherwise: Duration::from_secs(3),
        },
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("load child 1 (CPU 1) did not load the whole measuring window"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert_no_leftovers(tag);
}

/// A probe report with tight samples (11 per figure), as JSON.
fn tight_report(dir: &std::path::Path) -> serde_json::Value {
    let mut r = probe_report(dir, "tight", &["-N", "11"]);
    for f in r["figures"].as_array_mut().unwrap() {
        let v = f["value"].as_f64().unwrap();
        f["samples"] = (0..11).map(|i| v * (1.0 + 0.001 * i as f64)).collect();
    }
    let _ = std::fs::remove_file(dir.join("tight.json"));
    r
}

#[test]
fn compare_never_writes_over_an_input_and_refuses_what_is_not_a_report() {
    use benchmp::testing::{Bad, Tool, check_bad_inputs};
    let _serial = serial();
    let dir = benchmp::testing::temp_dir("benchmp-cli", "compare-inputs");
    let report = tight_report(&dir);
    let bytes = serde_json::to_vec(&report).unwrap();
    let p = |name: &str| dir.join(name).display().to_string();
    for name in ["a.json", "c.json", "d1/spin.json", "d2/spin.json"] {
        std::fs::create_dir_all(dir.join(name).parent().unwrap()).unwrap();
        std::fs::write(dir.join(name), &bytes).unwrap();
    }
    std::os::unix::fs::symlink(dir.join("a.json"), dir.join("soft.json")).unwrap();
    std::fs::hard_link(dir.join("a.json"), dir.join("hard.json")).unwrap();
    // Reports that cannot be compared, each in a folder with a good report beside it.
    let folder = |name: &str, file: &str, text: &[u8]| {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(dir.join(name).join("spin.json"), &bytes).unwrap();
        std::fs::write(dir.join(name).join(file), text).unwrap();
        p(name)
    };
    let truncated = folder("truncated", "dhry.json", &bytes[..bytes.len() / 2]);
    let empty = folder("empty", "dhry.json", b"");
    let fifo = folder("fifo", "keep.txt", b"");
    nix::unistd::mkfifo(
        &dir.join("fifo").join("dhry.json"),
        nix::sys::stat::Mode::S_IRWXU,
    )
    .unwrap();
    let big = dir.join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(600 << 20)
        .unwrap();
    let mut zero = report.clone();
    for f in zero["figures"].as_array_mut().unwrap() {
        f["value"] = 0.0.into();
        f["samples"] = vec![0.0; 11].into();
    }
    std::fs::write(dir.join("zero.json"), serde_json::to_vec(&zero).unwrap()).unwrap();
    let mut ns = report.clone();
    for f in ns["figures"].as_array_mut().unwrap() {
        f["unit"] = "ns".into();
        f["better"] = "lower".into();
    }
    std::fs::write(dir.join("ns.json"), serde_json::to_vec(&ns).unwrap()).unwrap();

    let (a, c) = (p("a.json"), p("c.json"));
    let dot = format!("{}/./a.json", dir.display());
    let json_to = |f: &str| format!("--json={f}");
    let csv_to = |f: &str| format!("--csv={f}");
    let cases = [
        (vec![a.clone(), c.clone(), json_to(&a)], "is the input"),
        (vec![a.clone(), c.clone(), json_to(&dot)], "is the input"),
        (
            vec![a.clone(), c.clone(), json_to(&p("soft.json"))],
            "is the input",
        ),
        (
            vec![a.clone(), c.clone(), json_to(&p("hard.json"))],
            "is the input",
        ),
        (vec![a.clone(), c.clone(), csv_to(&c)], "is the input"),
        (
            vec![p("d1"), p("d2"), json_to(&p("d2/spin.json"))],
            "is the input",
        ),
        (vec!["/dev/zero".into(), a.clone()], "is a device"),
        (vec![p("fifo/dhry.json"), a.clone()], "is a FIFO"),
        (
            vec![big.display().to_string(), a.clone()],
            "more than a report can",
        ),
        (vec![p("d1"), truncated], "is not a socbench report"),
        (vec![p("d1"), empty], "is not a socbench report"),
        (vec![p("d1"), fifo], "is a FIFO"),
        (
            vec![
                a.clone(),
                c.clone(),
                json_to(&p("same.out")),
                csv_to(&p("same.out")),
            ],
            "are one file",
        ),
        (vec![p("zero.json"), a.clone()], "no change can be computed"),
        (
            vec![a.clone(), p("ns.json")],
            "can only be compared with the same figure",
        ),
    ];
    let table: Vec<Bad> = cases
        .iter()
        .map(|(args, says)| {
            let mut all = vec!["compare"];
            all.extend(args.iter().map(String::as_str));
            Bad::args(&all, says)
        })
        .collect();
    check_bad_inputs(&Tool::new("benchmp", env!("CARGO_BIN_EXE_benchmp")), &table);
    for name in ["a.json", "c.json", "d2/spin.json"] {
        assert_eq!(
            std::fs::read(dir.join(name)).unwrap(),
            bytes,
            "{name} was changed"
        );
    }
    assert!(!dir.join("same.out").exists());

    // A comparison written into a results folder is passed over when the folder is read again.
    let o = compare(
        &dir.join("d1"),
        &dir.join("d2"),
        &[&json_to(&p("d2/compare.json"))],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = compare(&dir.join("d1"), &dir.join("d2"), &["--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["counts"]["missing"], 0, "{v}");

    // A result that cannot be written is one line and exit 1, not a panic.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    for extra in [&[][..], &["--json"][..], &["--csv"][..]] {
        let o = Command::new(env!("CARGO_BIN_EXE_benchmp"))
            .args(["compare", &a, &c])
            .args(extra)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(err.starts_with("benchmp: cannot write"), "{err}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_benchmp"))
        .arg("topology")
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_custom_cpu_lmbench_would_wrap_is_named_in_a_warning() {
    let _serial = serial();
    let n = online_cpus();
    let sched = format!("CUSTOM 0 {}", n + 1);
    let out = probe("wrap")
        .args(["-P", "2", "--iterations", "1000", "--sequential", "--json"])
        .env("LMBENCH_SCHED", &sched)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = json(&out);
    let warnings = v["placement"]["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{v}");
    let said = format!("not CPU {}", n + 1);
    assert!(
        warnings[0].as_str().unwrap().contains(&said),
        "{warnings:?}"
    );
    assert!(
        err.contains("benchmp-probe: warning: ") && err.contains(&said),
        "{err}"
    );
}

/// `benchmp overhead` measures the framework's own costs on any machine, busy or not: the
/// fork cost of two children is never refused for children that "ran apart" (their null
/// bodies go one after another), and is measured wherever two CPUs are allowed.
#[test]
fn overhead_reports_the_fork_cost_of_one_and_two_children() {
    let _serial = serial();
    let out = Command::new(env!("CARGO_BIN_EXE_benchmp"))
        .arg("overhead")
        .env_remove("LMBENCH_SCHED")
        .env_remove("BENCHMP_SYSFS_ROOT")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}: {text}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("fork + handshake + reap: ") && text.contains(" for 1 child "),
        "{text}"
    );
    let two = if online_cpus() >= 2 {
        " for 2 children "
    } else {
        "not measured for 2 children"
    };
    assert!(text.contains(two), "{text}");
    assert!(
        text.contains("known-duration spins measured through benchmp"),
        "{text}"
    );
}
