//! The `lat_mem_rd` binary: help, bad input, output formats and JSON structure on tiny sweeps.
//!
//! Calibration is fixed through the environment (ENOUGH, TIMING_O, LOOP_O, no cache) so no
//! run measures it; lmbench's 100 ms floor still makes every size last at least two intervals
//! (one confirming the count, one timed with -N 1), so sweeps are kept to a few sizes.
#![allow(clippy::disallowed_macros)] // a build script, test or bench prints to its runner

use std::process::Output;

use benchmp::testing::{Bad, Tool, check_bad_inputs};

fn tool() -> Tool {
    Tool::new("lat_mem_rd", env!("CARGO_BIN_EXE_lat_mem_rd")).with_env("ENOUGH", Some("1000"))
}

fn lat_mem_rd(args: &[&str]) -> Output {
    tool().run(args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("UTF-8 stderr")
}

fn json(o: &Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).expect("valid JSON")
}

/// Checks one `%.5f %.3f` line and returns (MiB, ns).
fn data_line(l: &str) -> (f64, f64) {
    let (a, b) = l
        .split_once(' ')
        .unwrap_or_else(|| panic!("not a data line: {l:?}"));
    assert_eq!(a.split_once('.').map(|(_, d)| d.len()), Some(5), "{l:?}");
    assert_eq!(b.split_once('.').map(|(_, d)| d.len()), Some(3), "{l:?}");
    (a.parse().unwrap(), b.parse().unwrap())
}

#[test]
fn help_describes_every_option() {
    let o = lat_mem_rd(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    for flag in [
        "--random",
        "-t",
        "--exact-rings",
        "--min",
        "--max",
        "--pages",
        "--summary",
        "--mhz",
        "--recalibrate-each-size",
        "--enough-floor",
        "--seed",
        "--json",
        "--stderr",
        "-P",
        "-N",
        "-W",
        "<LEN>",
        "[STRIDE]",
    ] {
        assert!(text.contains(flag), "{flag} missing from:\n{text}");
    }
    assert!(text.contains("Default: system"), "{text}");
}

#[test]
fn bad_input_is_one_line_and_exit_status_2() {
    let mut table: Vec<Bad> = [
        &["1", "0"][..],
        &["1", "2m"],
        &["0"],
        &["0.5"],
        &["-t", "1", "4"],
        &["1", "4"],
        &["-t", "1", "8k"],
        &["--max", "2m", "1"],
        &["--min", "2m", "1"],
        &["--min", "0", "1"],
        &["--exact-rings", "1"],
        &["1", "64KB"],
        &["--mhz", "abc", "1"],
        &["--pages", "gigantic", "1"],
        &["-P", "0", "1"],
        &["--bogus", "1"],
        &["--enough-floor", "-1", "1"],
        &["--enough-floor", "1ms", "1"],
        &["--enough-floor", "60000001", "1"],
        &[],
    ]
    .iter()
    .map(|a| Bad::args(a, ""))
    .collect();
    // The memory check and the options shared with every benchmp tool.
    table.extend([
        Bad::args(&["-N", "1", "100g"], "MemAvailable"),
        Bad::args(&["-P", "2", "--cpus", "0", "-N", "1", "100g"], "2 children"),
        Bad::args(&["--enough", "0", "1"], "0 µs"),
        Bad::args(&["-P", "1000", "1"], "more children than"),
        Bad::args(&["--cpus", "0,0", "1"], "named twice"),
        Bad::args(
            &["--json=/nonexistent/dir/x.json", "1"],
            "folder does not exist",
        ),
        Bad::args(&["--json=", "1"], "needs a file name"),
        Bad::args(&["--csv=/tmp", "1"], "is a folder"),
        Bad::env(&["1"], &[("ENOUGH", "0")], "ENOUGH"),
        Bad::env(&["1"], &[("LMBENCH_SCHED", "bogus")], "not a policy"),
        Bad::env(&["1"], &[("BENCHMP_CALIBRATION", "/tmp")], "is a folder"),
    ]);
    check_bad_inputs(&tool(), &table);
}

#[test]
fn huge_pages_missing_is_exit_status_3() {
    let free = benchmp::sys::mem::huge_pages_free();
    if free > 0
        && benchmp::testing::skip(
            "huge_pages_missing_is_exit_status_3",
            &format!("{free} huge pages are reserved on this machine"),
        )
    {
        return;
    }
    let e = tool().fails(&["--pages", "huge", "-N", "1", "1"], 3);
    assert!(e.contains("/proc/sys/vm/nr_hugepages"), "{e}");
}

#[test]
fn text_output_is_lmbench_format() {
    // Explicit strides: a header per stride, one line per size not below the stride, and an
    // empty line after each block.
    let o = lat_mem_rd(&["-N", "1", "--max", "1k", "1", "64", "1k"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stderr(&o);
    let lines: Vec<&str> = out.split('\n').collect();
    assert_eq!(lines.len(), 8, "{out:?}");
    assert_eq!(lines[0], "\"stride=64");
    assert_eq!(data_line(lines[1]).0, 0.00049);
    assert_eq!(data_line(lines[2]).0, 0.00098);
    assert_eq!(lines[3], "");
    assert_eq!(lines[4], "\"stride=1024");
    assert_eq!(data_line(lines[5]).0, 0.00098);
    assert_eq!(lines[6], "");
    assert_eq!(lines[7], "", "output ends with the block's empty line");
    for l in [lines[1], lines[2], lines[5]] {
        assert!(data_line(l).1 > 0.0, "{l}");
    }
}

#[test]
fn data_goes_to_lmbench_stream_and_notes_to_the_other() {
    for (args, data, notes) in [
        (&["-N", "1", "--max", "512", "1"][..], "stderr", "stdout"),
        (
            &["-N", "1", "--max", "512", "--stderr", "1"],
            "stderr",
            "stdout",
        ),
        (
            &["-N", "1", "--max", "512", "--stdout", "1"],
            "stdout",
            "stderr",
        ),
    ] {
        let o = lat_mem_rd(args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let (d, n) = match data {
            "stderr" => (stderr(&o), stdout(&o)),
            _ => (stdout(&o), stderr(&o)),
        };
        // The default stride: a header and the lines, no trailing blank line, nothing else.
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: only data on {data}: {d:?}");
        assert_eq!(lines[0], "\"stride=64");
        assert_eq!(data_line(lines[1]).0, 0.00049);
        assert!(
            n.lines().all(|l| l.starts_with("lat_mem_rd: ")),
            "{args:?}: only notes on {notes}: {n:?}"
        );
    }
}

#[test]
fn summary_goes_to_the_other_stream() {
    let o = lat_mem_rd(&[
        "-N",
        "1",
        "--min",
        "16k",
        "--max",
        "24k",
        "--summary",
        "--mhz",
        "2000",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let data = stderr(&o);
    let lines: Vec<&str> = data.lines().collect();
    assert_eq!(lines.len(), 6, "header and five sizes only: {data}");
    assert_eq!(lines[0], "\"stride=64");
    for l in &lines[1..6] {
        data_line(l);
    }
    let out = stdout(&o);
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("lat_mem_rd: noisy") && !l.starts_with("lat_mem_rd: note"))
        .collect();
    assert!(
        lines[0].starts_with("summary: stride 64, sequential, cluster 0"),
        "{out}"
    );
    assert!(lines[0].contains("2000 MHz (given with --mhz)"), "{out}");
    // Five sizes inside any L1 normally make one plateau, shown in ns and cycles; a machine
    // busy enough to scatter them gets the summary's note instead (the curve is data, not a
    // test's choice).
    assert!(
        (lines[1].contains(" ns ") && lines[1].contains("cycles"))
            || lines[1].contains("no plateau found"),
        "{out}"
    );
}

#[test]
fn json_has_curves_rings_and_timing() {
    let o = lat_mem_rd(&[
        "-N", "1", "-t", "--min", "2k", "--max", "4k", "--json", "--seed", "5", "1", "64",
    ]);
    let j = json(&o);
    assert_eq!(j["tool"], "lat_mem_rd");
    // 2K, 3K, 4K: one measurement each.
    let ms = j["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 3);
    assert_eq!(ms[1]["params"]["size_bytes"], 3072);
    assert_eq!(ms[1]["rule"], "minimum");
    assert_eq!(ms[1]["enough_us"], 100_000);
    let e = &j["extra"];
    assert_eq!(e["loads_per_iteration"], 100);
    assert_eq!(e["sweep"]["mode"], "random");
    assert_eq!(e["sweep"]["rings"], "lmbench");
    let pts = e["curves"][0]["points"].as_array().unwrap();
    let sizes: Vec<u64> = pts
        .iter()
        .map(|p| p["size_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [2048, 3072, 4096]);
    // lmbench's shortened ring at 3K, stride 64: 16 of 48 elements.
    assert_eq!(pts[1]["ring_loads"], 16);
    assert_eq!(pts[1]["intended_loads"], 48);
    assert_eq!(pts[2]["ring_loads"], 64);
    for p in pts {
        assert!(p["ns"].as_f64().unwrap() > 0.0);
        assert!(p["shortest_accepted_ns"].as_u64().unwrap() >= 95_000_000);
        let child = &p["children"][0];
        assert_eq!(child["pages"]["page_size_bytes"], 4096);
        assert_eq!(child["pages"]["anon_huge_bytes"], 0);
    }
    // The second and third sizes start from a predicted count.
    assert!(pts[0]["predicted_passes"].is_null());
    assert!(pts[1]["predicted_passes"].as_u64().unwrap() > 0);
    let t = &e["timing"];
    assert_eq!(t["strategy"], "predicted");
    assert_eq!(t["sizes"], 3);
    assert!(t["sweep_wall_ns"].as_u64().unwrap() > 0);
    assert!(j["wall_ns"].as_u64().unwrap() >= t["sweep_wall_ns"].as_u64().unwrap());
    assert!(j["calibration_ns"].as_u64().is_some());
    let curve = &e["curves"][0]["per_child"][0];
    assert_eq!(curve["child"], 0);
    assert_eq!(curve["points"].as_array().unwrap().len(), 3);
    assert_eq!(e["summary"][0]["stride_bytes"], 64);
    assert!(e["summary"][0]["shape"]["plateaus"].is_array());
}

#[test]
fn enough_floor_zero_keeps_the_calibrated_interval() {
    // ENOUGH is 1 ms here: with the floor removed the intervals target 1.1 ms, far below
    // lmbench's 100 ms, and each accepted one is still above 0.95 × ENOUGH.
    let o = lat_mem_rd(&[
        "-N",
        "3",
        "--enough-floor",
        "0",
        "--min",
        "4k",
        "--max",
        "8k",
        "--json",
        "1",
        "64",
    ]);
    let j = json(&o);
    assert_eq!(j["extra"]["enough_floor_us"], 0);
    for m in j["measurements"].as_array().unwrap() {
        assert_eq!(m["enough_us"], 1000);
    }
    for p in j["extra"]["curves"][0]["points"].as_array().unwrap() {
        let shortest = p["shortest_accepted_ns"].as_u64().unwrap();
        assert!((950_000..50_000_000).contains(&shortest), "{shortest}");
        assert_eq!(p["enough_us"], 1000);
    }
    // A floor above ENOUGH wins over it.
    let o = lat_mem_rd(&[
        "-N",
        "1",
        "--enough-floor",
        "20000",
        "--min",
        "4k",
        "--max",
        "4k",
        "--json",
        "1",
        "64",
    ]);
    let j = json(&o);
    assert_eq!(j["measurements"][0]["enough_us"], 20_000);
    let p = &j["extra"]["curves"][0]["points"][0];
    assert!(p["shortest_accepted_ns"].as_u64().unwrap() >= 19_000_000);
}

#[test]
fn exact_rings_walk_every_element() {
    let o = lat_mem_rd(&[
        "-N",
        "1",
        "-t",
        "--exact-rings",
        "--min",
        "3k",
        "--max",
        "3k",
        "--json",
        "1",
    ]);
    let j = json(&o);
    let p = &j["extra"]["curves"][0]["points"][0];
    assert_eq!(p["size_bytes"], 3072);
    assert_eq!(p["ring_loads"], 48);
    assert_eq!(p["intended_loads"], 48);
    assert_eq!(j["extra"]["sweep"]["rings"], "exact");
}

#[test]
fn recalibrating_each_size_is_recorded() {
    let o = lat_mem_rd(&[
        "-N",
        "1",
        "--min",
        "1k",
        "--max",
        "2k",
        "--recalibrate-each-size",
        "--json",
        "1",
    ]);
    let j = json(&o);
    assert_eq!(j["extra"]["timing"]["strategy"], "recalibrate_each_size");
    assert_eq!(j["measurements"].as_array().unwrap().len(), 2);
    for p in j["extra"]["curves"][0]["points"].as_array().unwrap() {
        assert!(p["predicted_passes"].is_null(), "counts are sized from 1");
    }
}

#[test]
fn two_children_give_two_curves() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        eprintln!("skipped: one CPU");
        return;
    }
    let Some(o) = tool().ok_together(&[
        "-P", "2", "-N", "1", "--min", "1k", "--max", "2k", "--json", "1",
    ]) else {
        return;
    };
    let j = json(&o);
    let curves = j["extra"]["curves"][0]["per_child"].as_array().unwrap();
    assert_eq!(curves.len(), 2);
    assert_ne!(curves[0]["cpu"], curves[1]["cpu"]);
    for c in curves {
        assert_eq!(c["points"].as_array().unwrap().len(), 2);
    }
    let p = &j["extra"]["curves"][0]["points"][0];
    assert_eq!(p["per_child"].as_array().unwrap().len(), 2);
    assert_eq!(p["children"].as_array().unwrap().len(), 2);
    assert!(!j["extra"]["summary"].as_array().unwrap().is_empty());
}

#[test]
fn c2c_measures_every_ordered_pair() {
    let cpus = benchmp::sys::affinity::allowed_cpus().unwrap();
    if cpus.len() < 2 && benchmp::testing::skip("c2c_measures_every_ordered_pair", "needs two CPUs")
    {
        return;
    }
    let list = format!("{},{}", cpus[0], cpus[1]);
    let v = tool().json(&["--c2c", "-N", "3", "--cpus", &list]);
    let m = &v["extra"];
    assert_eq!(m["cpus"], serde_json::json!([cpus[0], cpus[1]]));
    assert!(m["ns"][0][0].is_null() && m["ns"][1][1].is_null(), "{m}");
    for (r, c) in [(0, 1), (1, 0)] {
        assert!(m["ns"][r][c].as_f64().unwrap() > 0.0, "{m}");
    }
    let pairs = m["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 2);
    assert!(
        pairs
            .iter()
            .all(|p| p["samples"].as_array().unwrap().len() == 3)
    );
    // Each pair is one measurement: the pinger measures, the ponger is its load child,
    // started before the pinger's window and stopped after it.
    let ms = v["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 2);
    for (meas, pair) in ms.iter().zip(pairs) {
        assert_eq!(meas["children"][0]["cpu"], pair["from_cpu"]);
        let pong = &meas["loads"][0];
        assert_eq!(pong["cpu"], pair["to_cpu"]);
        assert!(pong["started_ns"].as_u64() <= pong["window_start_ns"].as_u64());
        assert!(pong["stopped_ns"].as_u64() >= pong["window_end_ns"].as_u64());
    }
    assert_eq!(v["figures"].as_array().unwrap().len(), 2);
    let text = benchmp::testing::stdout(&tool().ok(&["--c2c", "-N", "3", "--cpus", &list]));
    assert!(
        text.contains("from\\to") && text.contains("within cluster"),
        "{text}"
    );
}

#[test]
fn c2c_mistakes_are_one_line() {
    check_bad_inputs(
        &tool(),
        &[
            Bad::args(
                &["--c2c", "--cpus", "0"],
                "at least two CPUs; --cpus 0 names one",
            ),
            Bad::args(&["--loaded", "-P", "2", "1m"], "-P 2 does not apply"),
            Bad::args(&["--c2c", "64"], "--c2c"),
            Bad::args(&["--c2c", "-t"], "--c2c"),
        ],
    );
}

/// Runs `lat_mem_rd ARGS` (a `--loaded` run) and returns its output once it succeeds. A
/// host that stalls the load for more than a tenth of the chaser's short window makes the run
/// refuse its row, which is right but not what this test checks: up to three tries, then
/// `None` once the refusal is checked (exit 1, one line naming the load), as a busy host
/// can starve every try.
fn loaded_run(args: &[&str]) -> Option<Output> {
    for _ in 0..3 {
        let o = lat_mem_rd(args);
        let err = stderr(&o);
        if o.status.code() == Some(1) && err.contains("did not load the whole measuring window") {
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.starts_with("lat_mem_rd: ") && err.contains("load"),
                "{err}"
            );
            eprintln!("the load was starved: {}", err.trim());
            continue;
        }
        assert_eq!(o.status.code(), Some(0), "{err}");
        return Some(o);
    }
    eprintln!("the load was starved in three runs in a row: the refusal was checked instead");
    None
}

#[test]
fn loaded_gives_a_row_per_delay_with_its_load() {
    let cpus = benchmp::sys::affinity::allowed_cpus().unwrap();
    if cpus.len() < 2
        && benchmp::testing::skip(
            "loaded_gives_a_row_per_delay_with_its_load",
            "needs two CPUs",
        )
    {
        return;
    }
    let (chaser, load) = (cpus[0].to_string(), cpus[1].to_string());
    let args = [
        "--loaded",
        "4m",
        "-N",
        "2",
        "--enough-floor",
        "30000",
        "--cpus",
        &chaser,
        "--load-cpus",
        &load,
        "--load",
        "cp",
        "--delays",
        "0,20000",
    ];
    let with_json: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
    let Some(o) = loaded_run(&with_json) else {
        return;
    };
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let t = &v["extra"];
    assert_eq!(t["load"], "cp");
    assert_eq!(t["chase_cpu"].as_u64(), Some(cpus[0] as u64));
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "unloaded + 2 delays: {t}");
    assert!(rows[0]["delay"].is_null() && rows[0]["load_mb_s"].as_f64() == Some(0.0));
    for (row, delay) in rows[1..].iter().zip([0, 20000]) {
        assert_eq!(row["delay"].as_u64(), Some(delay));
        assert!(row["latency_ns"].as_f64().unwrap() > 0.0);
        assert_eq!(row["samples"].as_array().unwrap().len(), 2);
        let l = &row["loads"][0];
        assert_eq!(l["cpu"].as_u64(), Some(cpus[1] as u64));
        assert!(l["mb_s"].as_f64().unwrap() > 0.0, "{row}");
        // A load starved by other tasks in every attempt (a busy machine) is kept as a noisy
        // row; otherwise it loaded its whole window.
        if row["noise"].is_null() {
            assert!(l["ran_through"] == true, "{row}");
            let overlap = row["overlap"].as_f64().unwrap();
            assert!(overlap > 0.9 && overlap <= 1.0, "{row}");
        }
    }
    // The throttled load moves less than the unthrottled one (when both loaded their window).
    if rows[1]["noise"].is_null() && rows[2]["noise"].is_null() {
        assert!(
            rows[2]["load_mb_s"].as_f64() < rows[1]["load_mb_s"].as_f64(),
            "{t}"
        );
    }
    // Each loaded row is a measurement with its load child judged over its window, measured
    // again while its load was starved.
    let ms = v["measurements"].as_array().unwrap();
    let attempts: u64 = rows[1..]
        .iter()
        .map(|r| r["attempts"].as_u64().unwrap())
        .sum();
    assert_eq!(ms.len() as u64, 1 + attempts);
    assert!(ms[0].get("loads").is_none());
    for m in &ms[1..] {
        let l = &m["loads"][0];
        assert!(l["started_ns"].as_u64() <= l["window_start_ns"].as_u64());
        assert!(l["stopped_ns"].as_u64() >= l["window_end_ns"].as_u64());
    }
    assert_eq!(v["figures"].as_array().unwrap().len(), 3);
    let Some(o) = loaded_run(&args) else {
        return;
    };
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].contains("Inject") && lines[2].contains("MB/sec"),
        "{text}"
    );
    assert_eq!(lines.len(), 7, "{text}");
    assert!(lines[4].trim_start().starts_with("unloaded"), "{text}");
}

#[test]
fn loaded_mistakes_are_one_line() {
    check_bad_inputs(
        &tool(),
        &[
            Bad::args(&["--loaded", "8m", "--delays", "1,x"], "not a delay"),
            Bad::args(&["--loaded", "8m", "--delays", ""], "not a delay"),
            Bad::args(&["--loaded", "8m", "--delays", "5,5"], "twice"),
            Bad::args(
                &["--loaded", "8m", "--load", "read"],
                "not a bw_mem operation",
            ),
            Bad::args(&["--loaded", "8m", "--load-cpus", "9999"], "--load-cpus"),
            Bad::args(&["--loaded", "8m", "--load-cpus", "x"], "--load-cpus"),
            Bad::args(
                &["--loaded", "8m", "--cpus", "0", "--load-cpus", "0"],
                "chaser",
            ),
            Bad::args(&["--loaded", "8m", "--load-size", "1k"], "--load-size"),
            Bad::args(&["--loaded", "8m", "64", "128"], "one stride"),
            Bad::args(&["--delays", "0", "8m"], "--loaded"),
            Bad::args(&["--loaded", "--c2c"], "--c2c"),
            Bad::args(&["--loaded", "100g"], "memory"),
            // Worded by the load's buffers: rd reads one, cp copies from one into another.
            Bad::args(
                &["--loaded", "8m", "--load", "rd", "--load-size", "4096g"],
                "of rd with one buffer of 4096G",
            ),
            Bad::args(
                &["--loaded", "8m", "--load", "cp", "--load-size", "4096g"],
                "of cp with a source and a destination buffer of 4096G",
            ),
        ],
    );
}

/// A result that cannot be written (stdout on /dev/full) is one line and exit 1, never a panic
/// or a silent success: the streamed lmbench text, and the JSON and CSV at the end.
#[test]
fn a_full_stdout_is_one_line_and_exit_1() {
    for args in [
        &["--stdout", "--min", "512", "--max", "1k", "-N", "1", "1k"][..],
        &["--json", "--min", "512", "--max", "1k", "-N", "1", "1k"],
        &["--csv", "--min", "512", "--max", "1k", "-N", "1", "1k"],
    ] {
        let line = tool().fails_on_full_stdout(args);
        assert!(
            line.starts_with("lat_mem_rd: cannot write"),
            "{args:?}: {line}"
        );
    }
}

/// Freezes the load child (the tool's second child) of each loaded measurement for a while
/// after it starts, as another task taking its CPU would; the first `measurements` of them,
/// or every one when `None`. Runs until the tool ends.
fn starve_loads(parent: u32, measurements: Option<usize>) -> std::thread::JoinHandle<usize> {
    use std::time::{Duration, Instant};
    std::thread::spawn(move || {
        let mut frozen: Vec<i32> = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline
            && std::path::Path::new(&format!("/proc/{parent}")).exists()
            && measurements.is_none_or(|n| frozen.len() < n)
        {
            let kids = benchmp::testing::children_of(parent);
            if kids.len() >= 2 && !frozen.contains(&kids[1]) {
                let pid = nix::unistd::Pid::from_raw(kids[1]);
                std::thread::sleep(Duration::from_millis(50));
                if nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).is_ok() {
                    std::thread::sleep(Duration::from_millis(600));
                    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT);
                }
                frozen.push(kids[1]);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        frozen.len()
    })
}

/// The loaded table on two CPUs, about a second of 2 ms intervals per row, JSON on stdout.
fn starved_run(extra: &[&str], starved: Option<usize>) -> Option<(std::process::Output, usize)> {
    let cpus = benchmp::sys::affinity::allowed_cpus().unwrap();
    if cpus.len() < 2 && benchmp::testing::skip("loaded", "needs two CPUs") {
        return None;
    }
    let (chaser, load) = (cpus[0].to_string(), cpus[1].to_string());
    let mut args = vec![
        "--loaded",
        "2m",
        "-N",
        "500",
        "--enough-floor",
        "2000",
        "--cpus",
        &chaser,
        "--load-cpus",
        &load,
        "--delays",
        "0",
        "--json",
    ];
    args.extend_from_slice(extra);
    let child = tool()
        .command(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let freezer = starve_loads(child.id(), starved);
    let out = child.wait_with_output().unwrap();
    Some((out, freezer.join().unwrap()))
}

/// A load starved once (its CPU taken by another task for part of the window) makes its row
/// measured again, not the run fail (before, the whole table failed: exit 1).
#[test]
fn a_load_starved_once_is_measured_again() {
    let Some((out, frozen)) = starved_run(&[], Some(1)) else {
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(frozen, 1);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &v["extra"]["rows"][1];
    assert_eq!(row["delay"], 0, "{row}");
    assert!(row["attempts"].as_u64().unwrap() >= 2, "{row}");
    // On a busy machine the later attempts may be starved by other tasks too: then the row is
    // kept as noisy, which is also a run that measured.
    if let Some(noise) = row["noise"].as_str() {
        assert!(noise.contains("starved in all 3 attempts"), "{noise}");
        assert_eq!(row["attempts"], 3, "{row}");
    }
}

/// A load starved in every attempt: the row is kept with its load share and a noise reason,
/// the run is noisy (exit 0, or 1 with --fail-on-noise), and the table is there.
#[test]
fn a_load_starved_in_every_attempt_is_a_noisy_row() {
    let Some((out, frozen)) = starved_run(&["--fail-on-noise"], None) else {
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(frozen >= 3, "{frozen} loads frozen");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &v["extra"]["rows"][1];
    assert_eq!(row["attempts"], 3, "{row}");
    let noise = row["noise"].as_str().unwrap();
    assert!(noise.contains("starved in all 3 attempts"), "{noise}");
    assert!(row["overlap"].as_f64().unwrap() < 1.0, "{row}");
    assert_eq!(v["quality"]["verdict"]["noisy"], true);
    let reasons = v["quality"]["verdict"]["reasons"].to_string();
    assert!(reasons.contains("starved in all 3 attempts"), "{reasons}");
}

/// Starts a long random sweep writing `--json=json`, waits until `points` sizes are on its
/// text stream, stops it with SIGINT and returns how it ended and what it printed.
fn interrupted_sweep(json: &std::path::Path, points: usize) -> (Option<i32>, String) {
    use std::io::{BufRead, BufReader};
    let mut child = tool()
        .command(&[
            "-t",
            "-N",
            "1",
            "--stdout",
            &format!("--json={}", json.display()),
            &format!("--md={}", json.with_extension("md").display()),
            "256m",
            "64",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = 0;
    while seen < points {
        match lines.next() {
            Some(Ok(l)) if l.starts_with("0.") || l.starts_with(|c: char| c.is_ascii_digit()) => {
                seen += 1
            }
            Some(Ok(_)) => {}
            _ => break,
        }
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Nothing measured is lost: an interrupted sweep leaves its report file holding the sizes
/// that finished, marked incomplete; an earlier complete report of another command is kept and
/// the partial one goes beside it, while one of the same command is replaced.
#[test]
fn an_interrupted_sweep_keeps_the_sizes_it_measured() {
    let dir = benchmp::testing::temp_dir("lat_mem_rd-cli", "interrupted");
    let json = dir.join("sweep.json");
    let (code, err) = interrupted_sweep(&json, 3);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("marked incomplete"), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["incomplete"]["signal"], "SIGINT", "{}", v["incomplete"]);
    let measured = v["measurements"].as_array().unwrap();
    assert!(measured.len() >= 3, "{} sizes kept", measured.len());
    assert_eq!(v["incomplete"]["measured"], measured.len());
    let sizes: Vec<u64> = measured
        .iter()
        .map(|m| m["params"]["size_bytes"].as_u64().unwrap())
        .collect();
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
    // Each measurement and each of its figures carries the sizing lat_mem_rd declares, and
    // the figures are named by it: one name per size, not `loads` for every one.
    for (m, size) in measured.iter().zip(&sizes) {
        assert_eq!(
            m["sizing"]["size_bytes"].as_u64(),
            Some(*size),
            "{}",
            m["sizing"]
        );
        assert_eq!(m["sizing"]["stride_bytes"], m["params"]["stride_bytes"]);
    }
    let names: Vec<&str> = v["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), measured.len(), "{names:?}");
    for (name, size) in names.iter().zip(&sizes) {
        let shown = benchmp::size::HumanSize(*size).to_string();
        assert!(
            name.starts_with(&format!("loads {shown} stride ")),
            "{names:?}"
        );
    }
    // The Markdown file says it too, with a figure per size that finished.
    let md = std::fs::read_to_string(dir.join("sweep.md")).unwrap();
    assert!(
        md.contains("(incomplete: interrupted by SIGINT after"),
        "{md}"
    );
    let rows = md.lines().skip_while(|l| !l.starts_with("| ---")).skip(1);
    assert!(
        rows.filter(|l| l.ends_with(" | ns | lower | 1 |")).count() >= 3,
        "{md}"
    );

    // A complete report of the same command is superseded by the newer run's measurements.
    let same = serde_json::json!({"tool": "lat_mem_rd", "args": v["args"], "measurements": []});
    std::fs::write(&json, same.to_string()).unwrap();
    let (code, err) = interrupted_sweep(&json, 1);
    assert_eq!(code, Some(130), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["incomplete"]["signal"], "SIGINT", "{err}");
    assert!(!dir.join("sweep.json.partial").exists());

    // Another command's complete report stays; the partial one goes beside it.
    let other = r#"{"tool":"lat_mem_rd","args":["lat_mem_rd","8m"],"measurements":[]}"#;
    std::fs::write(&json, other).unwrap();
    let (code, err) = interrupted_sweep(&json, 1);
    assert_eq!(code, Some(130), "{err}");
    assert_eq!(std::fs::read_to_string(&json).unwrap(), other);
    let beside = dir.join("sweep.json.partial");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&beside).unwrap()).unwrap();
    assert_eq!(v["incomplete"]["signal"], "SIGINT");
    assert!(err.contains("sweep.json.partial"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
