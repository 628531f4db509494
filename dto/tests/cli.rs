//! The `dto` binary end to end: help, list, functional checks of every implementation
//! (including a broken and a crashing library built here with the C compiler), the error
//! contract over a table of bad inputs, tiny PERF_SHORT A/B runs writing the report, CSV and
//! distributions.csv, on one CPU and on two. Every fork happens inside the binary, never in
//! this multi-threaded test runner. No test asserts a time.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchmp::testing::{Bad, Tool, check_bad_inputs};

/// The PERF_* variables a caller's shell could set.
const PERF_VARS: [&str; 9] = [
    "PERF_CPU",
    "PERF_MIN_EFFECT",
    "PERF_AB_ROUNDS",
    "PERF_ITERS",
    "PERF_SHORT",
    "PERF_COLD_CACHE",
    "PERF_CORE_FREQ_MHZ",
    "PERF_UNCORE_FREQ_MHZ",
    "RESULTS_DIR",
];

/// The binary with benchmp's test environment, no PERF_* variable inherited, and the
/// machine's frequency limits never touched.
fn tool() -> Tool {
    let mut t = Tool::new("dto", env!("CARGO_BIN_EXE_dto"));
    for k in PERF_VARS {
        t = t.with_env(k, None);
    }
    t.with_env("PERF_CORE_FREQ_MHZ", Some("off"))
        .with_env("PERF_UNCORE_FREQ_MHZ", Some("off"))
}

fn dto(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut t = tool();
    for (k, v) in env {
        t = t.with_env(k, Some(v));
    }
    t.run(args)
}

/// The first `n` CPUs this process may use, or None (the test is skipped) when there are fewer.
fn cpus(test: &str, n: usize) -> Option<Vec<usize>> {
    let allowed = benchmp::sys::affinity::allowed_cpus().expect("affinity");
    if allowed.len() < n {
        benchmp::testing::skip(test, &format!("needs {n} CPUs, {} allowed", allowed.len()));
        return None;
    }
    Some(allowed[..n].to_vec())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dto-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Builds tests/fixtures/memlib.c into a shared library; None (test skipped) without cc.
fn build_memlib(dir: &Path, defines: &[&str]) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/memlib.c");
    let out = dir.join("libmemfixture.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&out)
        .arg(&src)
        .args(defines)
        .arg("-ldl")
        .status();
    match status {
        Ok(s) if s.success() => Some(out),
        other => {
            benchmp::testing::skip(
                "dto fixture library",
                &format!("cannot build the fixture library with {cc}: {other:?}"),
            );
            None
        }
    }
}

#[test]
fn help_lists_the_subcommands() {
    let o = dto(&["--help"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let t = text(&o.stdout);
    for sub in ["list", "check", "ab", "speedup"] {
        assert!(t.contains(sub), "{sub} missing:\n{t}");
    }
    let o = dto(&["ab", "--help"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let t = text(&o.stdout);
    for flag in [
        "--baseline",
        "--current",
        "--only",
        "--pages",
        "--env",
        "--json",
        "--csv",
        "--cpus",
        "--parallel",
        "--sched",
        "--timeout",
        "--trace",
    ] {
        assert!(t.contains(flag), "{flag} missing:\n{t}");
    }
}

#[test]
fn list_shows_every_implementation() {
    let o = dto(&["list"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let t = text(&o.stdout);
    for name in [
        "cpu", "lib:PATH", "portable", "erms", "avx2", "avx512", "nt", "neon",
    ] {
        assert!(t.lines().any(|l| l.starts_with(name)), "{name}:\n{t}");
    }
    let o = dto(&["list", "--json"], &[]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let imps = j["implementations"].as_array().unwrap();
    let portable = imps.iter().find(|i| i["name"] == "portable").unwrap();
    assert_eq!(portable["available"], true);
}

/// Through the binary with two threads: the C library's functions (`cpu`, reached through
/// dlopen), the portable kernel and the widest one this CPU has. Every compiled kernel is
/// checked in-process by the unit test `check::tests::every_available_kernel_passes`; checked
/// here again they only cost time (a debug build's check of one takes seconds).
#[test]
fn a_check_through_the_binary_passes_and_counts_its_cases() {
    // The binary's path (its children, threads, JSON) with the C library; every kernel's
    // results are checked in the library's own test (check::tests::every_available_kernel_passes),
    // and the three checked here too before took a sixth of dto's test time.
    let o = dto(&["list", "--json"], &[]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = j["implementations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["available"] == true)
        .filter_map(|i| i["name"].as_str())
        .collect();
    assert!(names.contains(&"cpu"), "{names:?}");
    assert!(names.contains(&"portable"), "{names:?}");
    let o = dto(&["check", "--impl", "cpu", "--threads", "2", "--json"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["result"], "PASS");
    assert_eq!(r["failures"], 0);
    assert!(r["cases"].as_u64().unwrap() > 100_000);
}

#[test]
fn an_unavailable_kernel_is_exit_3() {
    let missing = if cfg!(target_arch = "x86_64") {
        "neon"
    } else {
        "avx2"
    };
    let o = dto(&["check", "--impl", missing], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr).lines().count(), 1);
}

#[test]
fn a_broken_library_is_caught_with_size_and_offsets() {
    let dir = temp_dir("broken");
    let Some(lib) = build_memlib(&dir, &["-DCORRUPT_SIZE=1000"]) else {
        return;
    };
    let spec = format!("lib:{}", lib.display());
    let o = dto(&["check", "--impl", &spec], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("MISMATCH memcpy: size 1000, src offset 0, dst offset 0"),
        "{out}"
    );
    assert!(out.contains("byte 500 is"), "{out}");
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("size 1000"), "{err}");

    // The same library without the defect passes, so the catch is the defect's doing.
    let good_dir = temp_dir("good");
    let good = build_memlib(&good_dir, &[]).unwrap();
    let spec = format!("lib:{}", good.display());
    let o = dto(&["check", "--impl", &spec, "--threads", "2"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(good_dir);
}

#[test]
fn a_crashing_library_is_named_with_function_and_size() {
    let dir = temp_dir("crash");
    let Some(lib) = build_memlib(&dir, &["-DCRASH_SIZE=1000"]) else {
        return;
    };
    let spec = format!("lib:{}", lib.display());
    // A mark in the environment every child inherits, to look for leftovers afterwards.
    let mark = format!("dto-cli-crash-{}", std::process::id());
    let o = dto(
        &["check", "--impl", &spec, "--threads", "2"],
        &[("DTO_CLI_TEST_MARK", &mark)],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("dto: check failed: memcpy crashed (SIGSEGV) at size 1000 (lib:"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    let left = processes_marked(&mark);
    assert!(left.is_empty(), "processes left behind: {left:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = temp_dir("bad");
    let file = dir.join("a-file");
    std::fs::write(&file, "not a folder\n").unwrap();
    let file = file.to_str().unwrap().to_string();
    let lib = format!("lib:{file}");
    let lib_dir = format!("lib:{}", dir.display());
    let json_on_lib = format!("--json={file}");
    let json_dir = format!("--json={}", dir.display());
    let csv_dir = format!("--csv={}", dir.display());
    let first = benchmp::sys::affinity::allowed_cpus().unwrap()[0].to_string();
    let ab = |extra: &[&str]| {
        let mut v = vec!["ab", "--baseline", "cpu", "--current", "cpu"];
        v.extend_from_slice(extra);
        v.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let ab_env = |k: &str, v: &str, says: &str| Bad {
        args: ab(&[]),
        env: vec![(k.to_string(), v.to_string())],
        code: 2,
        says: says.to_string(),
    };
    let args = |a: Vec<String>, says: &str| Bad {
        args: a,
        env: vec![],
        code: 2,
        says: says.to_string(),
    };
    let missing = if cfg!(target_arch = "x86_64") {
        "neon"
    } else {
        "avx2"
    };
    let mut table = vec![
        Bad::args(
            &["ab", "--baseline", "bogus", "--current", "cpu"],
            "unknown implementation",
        ),
        Bad::args(&["ab", "--baseline", "cpu"], "--current"),
        args(ab(&["--only", "memcpy_3k"]), "unknown benchmark"),
        args(ab(&["--pages", "3m"]), "--pages"),
        args(ab(&["--env", "NOEQUALS"]), "KEY=VALUE"),
        args(ab(&["-P", "0"]), "--parallel"),
        args(ab(&["--cpus", "0,0"]), "named twice"),
        args(ab(&["-P", "4097"]), "--parallel"),
        args(ab(&["-P", "4096"]), "more children than"),
        args(ab(&["--cpus", &first, "-P", "2"]), "each CPU once"),
        args(ab(&["--cpus", "8000"]), "not online"),
        args(ab(&["--timeout", "0"]), "--timeout"),
        args(
            ab(&["--json=/nonexistent/dir/x.json"]),
            "folder does not exist",
        ),
        args(ab(&["--csv=/proc/x"]), "--csv=/proc/x"),
        args(ab(&["--json="]), "needs a file name"),
        args(ab(&[&json_dir]), "is a folder"),
        args(ab(&[&csv_dir]), "is a folder"),
        args(ab(&["--json", "--csv"]), "cannot both"),
        Bad::args(
            &[
                "ab",
                "--baseline",
                "cpu",
                "--current",
                "lib:/nonexistent/libx.so",
            ],
            "does not exist",
        ),
        Bad::env(
            &[
                "ab",
                "--baseline",
                "cpu",
                "--current",
                &lib,
                "--pages",
                "4k",
            ],
            &[("PERF_SHORT", "1"), ("PERF_ITERS", "5")],
            "memcpy_4k (memcpy of 4096 bytes), 4k pages, configuration a-file, round 1 of 1: child 0",
        ),
        ab_env("PERF_AB_ROUNDS", "0", "PERF_AB_ROUNDS"),
        ab_env("PERF_AB_ROUNDS", "abc", "PERF_AB_ROUNDS"),
        ab_env("PERF_ITERS", "-1", "PERF_ITERS"),
        ab_env("PERF_ITERS", "0", "PERF_ITERS"),
        ab_env("PERF_MIN_EFFECT", "nan", "PERF_MIN_EFFECT"),
        ab_env("PERF_CPU", "abc", "PERF_CPU"),
        ab_env("PERF_COLD_CACHE", "maybe", "PERF_COLD_CACHE"),
        ab_env("PERF_SHORT", "yes", "PERF_SHORT"),
        ab_env("PERF_CORE_FREQ_MHZ", "fast", "PERF_CORE_FREQ_MHZ"),
        ab_env("RESULTS_DIR", &file, "RESULTS_DIR"),
        ab_env("RESULTS_DIR", &format!("{file}/sub"), "RESULTS_DIR"),
        // An existing folder that cannot be written (not even by root).
        ab_env(
            "RESULTS_DIR",
            "/proc",
            "RESULTS_DIR /proc: cannot write distributions.csv",
        ),
        ab_env("LMBENCH_SCHED", "bogus", "LMBENCH_SCHED"),
        ab_env("LMBENCH_SCHED", "DEFAULT", "unpinned"),
        ab_env("ENOUGH", "abc", "ENOUGH"),
        Bad::args(&["speedup", "--impl", "fast"], "unknown implementation"),
        Bad::env(&["speedup"], &[("PERF_ITERS", "x")], "PERF_ITERS"),
        Bad::args(&["check", "--impl", "lib:"], "needs a path"),
        Bad::args(&["check", "--impl", "cpu", "--threads", "0"], "--threads"),
        Bad::args(
            &["check", "--impl", "cpu", "--env", "NOEQUALS"],
            "KEY=VALUE",
        ),
        Bad::args(
            &["check", "--impl", "lib:/nonexistent/libx.so"],
            "does not exist",
        ),
        Bad::args(&["check", "--impl", &lib], "memcpy check of lib:"),
        Bad::args(&["check", "--impl", &lib_dir], "is a folder"),
        Bad::args(
            &["ab", "--baseline", "cpu", "--current", &lib_dir],
            "is a folder",
        ),
        Bad::args(
            &["ab", "--baseline", &lib, "--current", "cpu", &json_on_lib],
            "being measured",
        ),
        Bad::env(
            &["check", "--impl", "cpu"],
            &[("LMBENCH_SCHED", "bogus")],
            "LMBENCH_SCHED 'bogus' is not a policy",
        ),
        Bad::args(&["check", "--impl", missing], "not available").exits(3),
        Bad::args(
            &["ab", "--baseline", "cpu", "--current", missing],
            "not available",
        )
        .exits(3),
        Bad::args(&["frobnicate"], "frobnicate"),
    ];
    // Root writes into a folder of mode 555; anyone else must be refused there too.
    let read_only = dir.join("read-only");
    std::fs::create_dir(&read_only).unwrap();
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o555)).unwrap();
    if !nix::unistd::geteuid().is_root() {
        table.push(ab_env(
            "RESULTS_DIR",
            read_only.to_str().unwrap(),
            "cannot write distributions.csv",
        ));
    }
    // A case that gets as far as distributions.csv writes it here, not into the package.
    let results = dir.join("results");
    let t = tool().with_env("RESULTS_DIR", Some(results.to_str().unwrap()));
    check_bad_inputs(&t, &table);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn short_run_writes_json_csv_and_distributions() {
    let dir = temp_dir("short");
    let results = dir.join("results");
    let json_file = dir.join("report.json");
    let json_arg = format!("--json={}", json_file.display());
    let o = dto(
        &[
            "ab",
            "--baseline",
            "cpu",
            "--current",
            "portable",
            "--csv",
            &json_arg,
        ],
        &[
            ("PERF_SHORT", "1"),
            ("PERF_ITERS", "5"),
            ("RESULTS_DIR", results.to_str().unwrap()),
        ],
    );
    // A regression verdict (exit 1) is possible on a noisy machine; the structure is not.
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "{}",
        text(&o.stderr)
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    assert_eq!(j["tool"], "dto");
    // benchmp's common report, with dto's results under `extra`.
    for key in [
        "version",
        "args",
        "host",
        "build",
        "topology",
        "calibration",
        "placement",
        "measurements",
        "quality",
        "figures",
    ] {
        assert!(j.get(key).is_some(), "{key} missing");
    }
    let x = &j["extra"];
    assert_eq!(x["setup"]["iterations"], 5);
    assert_eq!(x["setup"]["rounds"], 1);
    assert_eq!(x["setup"]["cpus"], serde_json::json!([1]));
    assert_eq!(j["placement"]["source"], "default");
    let cells = x["cells"].as_array().unwrap();
    let measured_pages = x["page_sizes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["measured"] == true)
        .count();
    assert!(measured_pages >= 1);
    // 4 sanity benchmarks × 2 configurations (cpu, portable) per measured page size.
    assert_eq!(cells.len(), 8 * measured_pages);
    // One measurement per round (one round each here), each one pinned child.
    let ms = j["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), cells.len());
    assert_eq!(ms[0]["name"], "memcpy_4k 4k cpu round 1");
    assert_eq!(ms[0]["children"].as_array().unwrap().len(), 1);
    assert_eq!(ms[0]["children"][0]["cpu"], 1);
    assert_eq!(ms[1]["name"], "memcpy_4k 4k portable round 1");
    assert!(
        ms[1]["children"][0]["detail"]["current"]
            .as_str()
            .unwrap()
            .contains("portable"),
        "{}",
        ms[1]["children"][0]["detail"]
    );
    // One figure per cell, named after it, with every current sample.
    let figures = j["figures"].as_array().unwrap();
    assert_eq!(figures.len(), cells.len());
    for (f, c) in figures.iter().zip(cells) {
        let name = format!(
            "{} {} {}",
            c["test"].as_str().unwrap(),
            c["pages"].as_str().unwrap(),
            c["config"].as_str().unwrap()
        );
        assert_eq!(f["name"], name.as_str());
        assert_eq!(f["cpu"], c["cpu"]);
        assert_eq!(f["unit"], "ns");
        assert_eq!(f["better"], "lower");
        assert_eq!(f["value"], c["current_trimmed_mean_ns"]);
        assert_eq!(f["samples"].as_array().unwrap().len(), 5);
    }
    for c in cells {
        assert_eq!(c["baseline"]["n"], 5);
        assert_eq!(c["current"]["n"], 5);
        assert_eq!(c["cpu"], 1);
        assert!(c["ks_p"].as_f64().unwrap() <= 1.0);
        // cpu against cpu is A/A: it can be NOISY, never FAIL; portable against cpu is A/B.
        let allowed: &[&str] = if c["config"] == "cpu" {
            &["PASS", "NOISY", "REF"]
        } else {
            &["PASS", "FAIL", "REF"]
        };
        assert!(allowed.contains(&c["verdict"].as_str().unwrap()), "{c}");
    }
    let fails = cells.iter().filter(|c| c["verdict"] == "FAIL").count();
    let noisy = cells.iter().filter(|c| c["verdict"] == "NOISY").count();
    assert_eq!(x["regressions"].as_u64().unwrap() as usize, fails);
    assert_eq!(x["noisy"].as_u64().unwrap() as usize, noisy);
    assert_eq!(o.status.code(), Some(if fails > 0 { 1 } else { 0 }));
    assert_eq!(x["speedup"].as_array().unwrap().len(), 4 * measured_pages);
    // CSV on stdout instead of the text: a header and one row per cell, its CPU last.
    let mut rd = csv::Reader::from_reader(o.stdout.as_slice());
    assert_eq!(rd.headers().unwrap().iter().next_back(), Some("cpu"));
    assert_eq!(rd.records().count(), cells.len());
    // distributions.csv: every sample of both versions, the guide's columns and the CPU.
    let mut rd = csv::Reader::from_path(results.join("distributions.csv")).unwrap();
    let headers = rd.headers().unwrap().clone();
    assert_eq!(
        headers.iter().collect::<Vec<_>>().join(","),
        "pagesize,optype,test,config,version,round,iteration,ns,cpu"
    );
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), cells.len() * 2 * 5);
    assert!(rows.iter().all(|r| &r[8] == "1"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn speedup_rows_are_a_a_and_never_fail_the_run() {
    // With a minimum effect of 0 % roughly half of the A/A cells move "up": they must be
    // NOISY, counted apart from regressions, and the exit status must stay 0.
    let dir = temp_dir("speedup");
    let json_file = dir.join("report.json");
    let json_arg = format!("--json={}", json_file.display());
    let o = dto(
        &["speedup", "--impl", "portable", "--pages", "4k", &json_arg],
        &[
            ("PERF_SHORT", "1"),
            ("PERF_ITERS", "20"),
            ("PERF_MIN_EFFECT", "0"),
            ("RESULTS_DIR", dir.to_str().unwrap()),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    let j = &j["extra"];
    let cells = j["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 8);
    for c in cells {
        assert!(
            ["PASS", "NOISY", "REF"].contains(&c["verdict"].as_str().unwrap()),
            "{c}"
        );
    }
    let noisy = cells.iter().filter(|c| c["verdict"] == "NOISY").count();
    assert_eq!(j["regressions"], 0);
    assert_eq!(j["noisy"].as_u64().unwrap() as usize, noisy);
    assert_eq!(j["result"], "PASS");
    assert!(
        text(&o.stdout).contains("Result: PASS (no A/B cell judged); A/A noise:"),
        "{}",
        text(&o.stdout)
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Processes whose environment holds `mark` (a variable every child of a run inherits).
fn processes_marked(mark: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| {
            std::fs::read(e.path().join("environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v.ends_with(mark.as_bytes())))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn sigint_kills_the_round_exits_130_and_keeps_the_earlier_distributions() {
    use std::time::{Duration, Instant};
    let dir = temp_dir("sigint");
    let earlier = dir.join("distributions.csv");
    let before = b"pagesize,optype,test,config,version,round,iteration,ns,cpu\n\
                   4k,memcpy,memcpy_1m,cpu,baseline,0,0,1234.5,1\n";
    std::fs::write(&earlier, before).unwrap();
    let mark = format!("dto-cli-sigint-{}", std::process::id());
    // Hours of rounds: the run cannot end before the signal, whatever the machine's load.
    let mut c = tool().command(&[
        "ab",
        "--baseline",
        "cpu",
        "--current",
        "cpu",
        "--only",
        "memcpy_1m",
        "--pages",
        "4k",
    ]);
    c.env("PERF_ITERS", "10000")
        .env("PERF_AB_ROUNDS", "1000")
        .env("RESULTS_DIR", &dir)
        .env("DTO_CLI_TEST_MARK", &mark)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    // The first round's child exists: the run is past its set-up and measuring.
    let limit = Instant::now() + Duration::from_secs(300);
    while benchmp::testing::children_of(child.id()).is_empty() {
        if let Some(status) = child.try_wait().unwrap() {
            let o = child.wait_with_output().unwrap();
            panic!(
                "ended before its first round: {status:?}: {}",
                text(&o.stderr)
            );
        }
        if Instant::now() > limit {
            let _ = child.kill();
            panic!("no round started within 300 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert_eq!(
        std::fs::read(&earlier).unwrap(),
        before,
        "the earlier distributions.csv changed"
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["distributions.csv"], "a partial copy was left");
    let left = processes_marked(&mark);
    assert!(left.is_empty(), "processes left behind: {left:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_full_stdout_is_one_line_and_exit_1() {
    for args in [
        &["list"][..],
        &["list", "--json"],
        &["check", "--impl", "portable", "--threads", "1"],
    ] {
        tool().fails_on_full_stdout(args);
    }
}

#[test]
fn each_cpu_gets_its_own_cells_and_figures() {
    let Some(two) = cpus("dto each_cpu_gets_its_own_cells_and_figures", 2) else {
        return;
    };
    let dir = temp_dir("cpus");
    let list = format!("{},{}", two[0], two[1]);
    for placement in [vec!["--cpus", list.as_str()], vec!["-P", "2"]] {
        let mut args = vec![
            "ab",
            "--baseline",
            "cpu",
            "--current",
            "portable",
            "--only",
            "memcpy_4k,memset_64k",
            "--pages",
            "4k",
            "--json",
        ];
        args.extend(placement.iter().copied());
        let o = dto(
            &args,
            &[
                ("PERF_ITERS", "5"),
                ("PERF_AB_ROUNDS", "2"),
                ("RESULTS_DIR", dir.to_str().unwrap()),
            ],
        );
        assert!(
            matches!(o.status.code(), Some(0) | Some(1)),
            "{placement:?}: {}",
            text(&o.stderr)
        );
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let x = &j["extra"];
        assert_eq!(x["setup"]["cpus"], serde_json::json!(two), "{placement:?}");
        // 2 benchmarks × 2 configurations × 2 CPUs.
        let cells = x["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 8);
        for cpu in &two {
            let mine = cells.iter().filter(|c| c["cpu"] == *cpu).count();
            assert_eq!(mine, 4, "{placement:?} CPU {cpu}");
            let sp = x["speedup"].as_array().unwrap();
            assert_eq!(sp.iter().filter(|s| s["cpu"] == *cpu).count(), 2);
        }
        // 2 rounds of 4 cells, each measurement one child per CPU, timed one after another.
        let ms = j["measurements"].as_array().unwrap();
        assert_eq!(ms.len(), 8);
        for m in ms {
            let kids = m["children"].as_array().unwrap();
            let on: Vec<u64> = kids.iter().map(|k| k["cpu"].as_u64().unwrap()).collect();
            assert_eq!(on, two.iter().map(|&c| c as u64).collect::<Vec<_>>());
            assert_eq!(m["overlap"]["sequential"], true);
        }
        let figures = j["figures"].as_array().unwrap();
        assert_eq!(figures.len(), 8);
        assert!(
            figures
                .iter()
                .all(|f| f["samples"].as_array().unwrap().len() == 10)
        );
        let mut rd = csv::Reader::from_path(dir.join("distributions.csv")).unwrap();
        let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), 8 * 2 * 2 * 5);
        for cpu in &two {
            let n = rows.iter().filter(|r| r[8] == cpu.to_string()).count();
            assert_eq!(n, 4 * 2 * 2 * 5);
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// One call's time, ns, as `dto` itself reports it (the current side's trimmed mean of
/// memcpy_64k with the portable kernel, 4k pages, on `cpu`).
fn per_call_ns(cpu: usize, results: &Path) -> f64 {
    let cpu = cpu.to_string();
    let o = dto(
        &[
            "ab",
            "--baseline",
            "portable",
            "--current",
            "portable",
            "--no-cpu",
            "--only",
            "memcpy_64k",
            "--pages",
            "4k",
            "--cpus",
            &cpu,
            "--json",
        ],
        &[
            ("PERF_SHORT", "1"),
            ("RESULTS_DIR", results.to_str().unwrap()),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    j["extra"]["cells"][0]["current_trimmed_mean_ns"]
        .as_f64()
        .unwrap_or_else(|| panic!("{j}"))
}

/// Under `benchmp ab` (its protocol spoken here on two pipes), a repetition of `dto` is calls
/// of the operation it names and its figure the time of one call, as `dto` reports it, not
/// a whole round (a warm-up, both implementations' calls, the flushes: hundreds of calls).
#[test]
fn under_benchmp_ab_a_repetition_is_the_operation_dto_reports() {
    use std::io::{BufRead, BufReader, Write};
    use std::os::fd::AsRawFd;
    let Some(cpus) = cpus(
        "under_benchmp_ab_a_repetition_is_the_operation_dto_reports",
        1,
    ) else {
        return;
    };
    let dir = temp_dir("worker");
    let reference = per_call_ns(cpus[0], &dir.join("results"));
    let (commands_r, mut commands_w) = std::io::pipe().unwrap();
    let (messages_r, messages_w) = std::io::pipe().unwrap();
    let cpu = cpus[0].to_string();
    let mut c = tool()
        .with_env("BENCHMP_AB_FDS", Some("3,4"))
        .with_env("PERF_SHORT", Some("1"))
        .with_env("RESULTS_DIR", dir.join("worker-results").to_str())
        .command(&[
            "ab",
            "--baseline",
            "portable",
            "--current",
            "portable",
            "--no-cpu",
            "--only",
            "memcpy_64k",
            "--pages",
            "4k",
            "--cpus",
            &cpu,
        ]);
    c.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    benchmp::sys::process::pass_fds(
        &mut c,
        commands_r.as_raw_fd(),
        messages_w.as_raw_fd(),
        false,
    );
    let mut child = c.spawn().unwrap();
    drop((commands_r, messages_w));
    let mut lines = BufReader::new(messages_r).lines();
    let mut next = |kind: &str| -> serde_json::Value {
        loop {
            let line = lines.next().expect("a message").unwrap();
            let m: serde_json::Value = serde_json::from_str(&line).unwrap();
            if m.get(kind).is_some() {
                return m[kind].clone();
            }
        }
    };
    let ready = next("ready");
    // Nine repetitions of 64 calls; the fastest call, on the CPU time the worker had (a
    // repetition another task interrupted only takes longer on the clock), so that a busy
    // machine decides nothing: a round per repetition would still be hundreds of calls.
    let per_call = (0..9)
        .map(|_| {
            commands_w
                .write_all(b"{\"step\":{\"iterations\":64}}\n")
                .unwrap();
            let rep = next("rep");
            let s = &rep["samples"][0];
            assert_eq!(s["iterations"], 64, "{rep}");
            let cpu = s["cpu_ns"].as_f64().unwrap_or(0.0);
            let net = s["net_ns"].as_f64().unwrap();
            (if cpu > 0.0 { cpu.min(net) } else { net }) / 64.0
        })
        .fold(f64::INFINITY, f64::min);
    commands_w.write_all(b"\"stop\"\n").unwrap();
    // The same operation: the fastest repetition's call within ten times dto's own figure
    // (which a busy machine can only inflate, hence a hundredth below). A round per
    // repetition would be some four hundred calls per call; a repetition of nothing, none.
    assert!(
        per_call > reference / 100.0 && per_call < reference * 10.0,
        "a repetition's call took {per_call} ns, dto's own calls {reference} ns"
    );
    assert_eq!(ready["measurement"], "memcpy_64k 4k portable", "{ready}");
    assert_eq!(ready["metric"]["unit"], "ns", "{ready}");
    assert_eq!(ready["metric"]["per_iteration"], 1.0, "{ready}");
    drop(commands_w);
    drop(lines);
    assert!(child.wait().unwrap().success());
    assert!(
        !dir.join("worker-results/distributions.csv").exists(),
        "the driver keeps the repetitions"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `dto check` under limits of the harness's own (a small address space, one process and no
/// thread to spare): the check cannot run, and says which limit stopped it (exit 1), never
/// blaming the implementation ("memcpy crashed (SIGABRT)") nor panicking in its child.
#[test]
fn a_check_that_cannot_have_its_buffers_or_threads_names_the_limit() {
    use benchmp::sys::process::{Confinement, confine_command};
    use nix::sys::resource::Resource;
    let bin = env!("CARGO_BIN_EXE_dto");
    // 30 MB of address space: the program starts, four threads' buffers of 8 MB do not fit.
    let mut small = Command::new(bin);
    small.args(["check", "--impl", "cpu"]);
    confine_command(
        &mut small,
        Confinement {
            limits: vec![(Resource::RLIMIT_AS, 30_000 << 10)],
            ..Confinement::default()
        },
    );
    // Two processes of its own: dto and its check's child, and no thread beside them. Root
    // is exempt from the limit, so the run takes a user id of its own (it reads no file
    // beyond the program).
    let mut few = Command::new(bin);
    few.args(["check", "--impl", "cpu", "--threads", "2"]);
    confine_command(
        &mut few,
        Confinement {
            limits: vec![(Resource::RLIMIT_NPROC, 2)],
            user: nix::unistd::geteuid().is_root().then_some(61_234),
            ..Confinement::default()
        },
    );
    for (mut cmd, limit) in [(small, "ulimit -v"), (few, "ulimit -u")] {
        let o = cmd.output().unwrap();
        let err = text(&o.stderr);
        assert!(
            !err.contains("crashed") && !err.contains("panicked"),
            "{err}"
        );
        match o.status.code() {
            // Enough after all on a machine whose program and threads are smaller.
            Some(0) => {}
            Some(1) => assert!(err.contains(limit), "{limit}: {err}"),
            other => panic!("{limit}: exit {other:?}: {err}"),
        }
    }
}
