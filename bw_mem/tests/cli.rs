//! Drives the `bw_mem` binary (every fork happens in that fresh process, never inside the
//! multi-threaded test runner): help, tiny measurements with -N 1, the exact lmbench line, JSON
//! and CSV, and one-line errors with the documented exit codes.

use std::path::PathBuf;
use std::process::Output;

use benchmp::testing::{Bad, Tool, check_bad_inputs, stderr, stdout};
use bw_mem::ops::Op;
use bw_mem::text::is_lmbench_line;

/// The binary with lmbench's calibration variables fixed (no calibration, no cache).
fn bw_mem() -> Tool {
    Tool::new("bw_mem", env!("CARGO_BIN_EXE_bw_mem"))
}

fn ok(args: &[&str]) -> Output {
    bw_mem().ok(args)
}

fn json(args: &[&str]) -> serde_json::Value {
    bw_mem().json(args)
}

/// Asserts the error contract: the given status, one line on stderr naming the tool, nothing
/// on stdout, no measurement started.
fn fails(args: &[&str], code: i32) -> String {
    bw_mem().fails(args, code)
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("bw_mem-test-{}-{name}", std::process::id()))
}

#[test]
fn help_describes_the_interface() {
    let o = ok(&["--help"]);
    let h = stdout(&o);
    for needle in [
        "<size> <what> [conflict]",
        "--sweep",
        "--list-ops",
        "--pages",
        "-P",
    ] {
        assert!(h.contains(needle), "--help lacks {needle}");
    }
}

#[test]
fn list_ops_names_every_operation_and_its_support() {
    let t = stdout(&ok(&["--list-ops"]));
    for op in Op::ALL {
        let line = t
            .lines()
            .find(|l| l.split_whitespace().next() == Some(op.name()))
            .unwrap_or_else(|| panic!("{op} missing"));
        let support = line.split_whitespace().nth(1).unwrap();
        assert!(support == "yes" || support == "no", "{line}");
    }
}

#[test]
fn every_op_prints_one_lmbench_line() {
    for op in Op::ALL {
        let o = ok(&["-N", "1", "4k", op.name()]);
        let out = stderr(&o);
        assert!(is_lmbench_line(&out), "{op}: {out:?}");
        assert!(
            out.starts_with("0.004096 "),
            "{op}: 4k is 0.004096 MB: {out:?}"
        );
    }
}

#[test]
fn size_column_is_decimal_megabytes_of_binary_suffixes() {
    let out = stderr(&ok(&["-N", "1", "1m", "rd"]));
    assert!(out.starts_with("1.05 "), "{out}");
    let out = stderr(&ok(&["-N", "1", "1000", "frd"]));
    assert!(out.starts_with("0.001000 "), "{out}");
}

#[test]
fn the_line_goes_to_lmbench_stream_unless_stdout_is_asked() {
    for args in [
        &["-N", "1", "8k", "rd"][..],
        &["--stderr", "-N", "1", "8k", "rd"],
    ] {
        let o = ok(args);
        assert!(is_lmbench_line(&stderr(&o)), "{args:?}: {:?}", stderr(&o));
        assert!(!stdout(&o).contains("8.19 "), "{args:?}");
    }
    let o = ok(&["--stdout", "-N", "1", "8k", "rd"]);
    assert!(is_lmbench_line(&stdout(&o)), "{:?}", stdout(&o));
    assert!(
        stderr(&o).lines().all(|l| l.starts_with("bw_mem: ")),
        "only notes on the other stream: {:?}",
        stderr(&o)
    );
    bw_mem().fails(&["--stdout", "--stderr", "8k", "rd"], 2);
}

#[test]
fn json_has_per_child_samples_and_times() {
    let Some(v) = bw_mem().json_together(&["-P", "2", "-N", "2", "8k", "rd"]) else {
        return;
    };
    assert_eq!(v["tool"], "bw_mem");
    let m = &v["measurements"][0];
    assert_eq!(m["name"], "rd");
    assert_eq!(m["params"]["size_bytes"], 8192);
    assert_eq!(m["params"]["bytes_counted_per_iteration"], 8192);
    let children = m["children"].as_array().unwrap();
    assert_eq!(children.len(), 2);
    for c in children {
        let accepted = c["samples"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["accepted"] == true)
            .count();
        assert_eq!(accepted, 2, "-N 2 gives two samples per child");
    }
    assert!(v["wall_ns"].as_u64().unwrap() > 0);
    assert!(v["calibration_ns"].is_u64());
    assert_eq!(v["extra"]["pages_obtained"].as_array().unwrap().len(), 2);
    let loops = if cfg!(target_arch = "x86_64") {
        "x86_64 asm, gcc -O shape (4-byte)"
    } else {
        "portable (4-byte volatile)"
    };
    assert_eq!(v["extra"]["implementation"], loops);
    let bus = &v["extra"]["bus"][0];
    assert_eq!(bus["bus_bytes_per_iteration"], 8192);
}

#[test]
fn copies_report_bus_bytes_and_the_conflict_layout() {
    let v = json(&["-N", "1", "8k", "fcp", "conflict"]);
    let p = &v["measurements"][0]["params"];
    assert_eq!(p["conflict"], true);
    assert_eq!(p["bytes_counted_per_iteration"], 8192);
    assert_eq!(p["bus_bytes_per_iteration"], 3 * 8192);
    let pages = &v["extra"]["pages_obtained"][0];
    let resident = pages["buf"]["rss_bytes"].as_u64().unwrap()
        + pages["buf2"]["rss_bytes"].as_u64().unwrap_or(0);
    assert_eq!(resident, 8192 + 12288, "both buffers, each once: {pages}");
    let figure = v["measurements"][0]["aggregate"]["cluster"]
        .as_f64()
        .unwrap();
    let bus = v["extra"]["bus"][0]["bus_mb_per_s"]["cluster"]
        .as_f64()
        .unwrap();
    assert!(
        (bus - 3.0 * figure).abs() <= 1e-6 * bus,
        "{bus} vs {figure}"
    );
}

#[test]
fn vector_ops_record_the_variant() {
    let v = json(&["-N", "1", "8k", "rdvec"]);
    let isa = v["extra"]["isa"].as_str().unwrap().to_string();
    assert_eq!(v["measurements"][0]["params"]["isa"], isa.as_str());
    if cfg!(target_arch = "x86_64") {
        assert!(["avx512", "avx2", "sse2"].contains(&isa.as_str()), "{isa}");
    }
    let v = json(&["-N", "1", "--isa", "portable", "8k", "rdvec"]);
    assert_eq!(v["extra"]["isa"], "portable");
}

/// fwr follows GCC -O2's shape unless --lmbench-build O asks for -O's, and the report names
/// the build of every unrolled operation (libc's bzero and bcopy have none).
#[test]
fn the_lmbench_build_is_chosen_and_named() {
    let wide = if cfg!(target_arch = "x86_64") {
        "x86_64 asm, gcc -O2 shape (16-byte SSE2 stores)"
    } else {
        "portable (16-byte volatile stores, gcc -O2 shape)"
    };
    for (args, build, implementation, access) in [
        (&["8k", "fwr"][..], "O2", wide, "16-byte stores, every int"),
        (
            &["--lmbench-build", "O2", "8k", "fwr"],
            "O2",
            wide,
            "16-byte stores, every int",
        ),
        (
            &["--lmbench-build", "O", "8k", "fwr"],
            "O",
            "",
            "4-byte scalar, every int",
        ),
        (
            &["--lmbench-build", "O", "8k", "wr"],
            "O",
            "",
            "4-byte scalar, one int in four (16-byte stride)",
        ),
        (
            &["8k", "rd"],
            "O2",
            "",
            "4-byte scalar, one int in four (16-byte stride)",
        ),
    ] {
        let v = json(&[&["-N", "1"][..], args].concat());
        let p = &v["measurements"][0]["params"];
        assert_eq!(p["lmbench_build"], build, "{args:?}");
        assert_eq!(p["access"], access, "{args:?}");
        if !implementation.is_empty() {
            assert_eq!(p["implementation"], implementation, "{args:?}");
        } else {
            assert_ne!(p["implementation"], wide, "{args:?}");
        }
        // The subset's time on the same buffers is kept for fwr alone of these.
        let peer = &v["measurements"][0]["children"][0]["detail"]["peer"];
        assert_eq!(peer.is_object(), args.contains(&"fwr"), "{args:?}: {peer}");
    }
    let v = json(&["-N", "1", "8k", "bzero"]);
    assert!(v["measurements"][0]["params"]["lmbench_build"].is_null());
}

#[test]
fn csv_has_a_row_per_child_per_interval() {
    let Some(o) = bw_mem().ok_together(&["--csv", "-P", "2", "-N", "3", "4k", "wr"]) else {
        return;
    };
    let text = stdout(&o);
    let mut rows = text.lines();
    assert!(
        rows.next()
            .unwrap()
            .starts_with("tool,measurement,params,child")
    );
    let accepted = rows.filter(|r| r.contains(",true,")).count();
    assert_eq!(accepted, 6);
}

#[test]
fn json_file_and_text_together_agree_on_the_figure() {
    let path = tmp("agg.json");
    let p = path.to_str().unwrap();
    for mode in ["cluster", "median"] {
        let Some(o) = bw_mem().ok_together(&[
            &format!("--json={p}"),
            "--aggregate",
            mode,
            "-P",
            "2",
            "-N",
            "3",
            "16k",
            "frd",
        ]) else {
            continue;
        };
        let out = stderr(&o);
        assert!(is_lmbench_line(&out), "{out:?}");
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let want = v["measurements"][0]["aggregate"][mode].as_f64().unwrap();
        let shown: f64 = out.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(
            (shown - want).abs() <= 0.006,
            "{mode}: printed {shown}, report {want}"
        );
        // The breakdown of -P 2 goes to the other stream, never between the lmbench lines.
        assert!(stdout(&o).contains("child 1"), "{}", stdout(&o));
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn verbose_explains_the_figure_on_the_other_stream() {
    let o = ok(&["-v", "-N", "1", "8k", "cp"]);
    assert!(is_lmbench_line(&stderr(&o)));
    let e = stdout(&o);
    for needle in [
        "implementation",
        "bus (model",
        "write-allocate",
        "pages",
        "wall",
    ] {
        assert!(e.contains(needle), "verbose lacks {needle}: {e}");
    }
}

#[test]
fn sweep_prints_one_line_per_size() {
    let o = ok(&["--sweep", "4k..32k", "-N", "1", "rd"]);
    let out = stderr(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    for (l, size) in lines
        .iter()
        .zip(["0.004096", "0.008192", "0.016384", "0.032768"])
    {
        assert!(is_lmbench_line(&format!("{l}\n")), "{l}");
        assert!(l.starts_with(size), "{l}");
    }
    let v = json(&["--sweep", "4k..16k", "--step", "4", "-N", "1", "frd"]);
    assert_eq!(v["measurements"].as_array().unwrap().len(), 2);
    let o = ok(&["-v", "--sweep", "4k..8k", "-N", "1", "rd"]);
    assert!(
        stdout(&o).contains("# caches seen by CPU"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for args in [
        &["0", "rd"][..],
        &["12q", "rd"],
        &["100000g", "rd"],
        &["511", "rd"],
        &["64k", "read"],
        &["64k", "RD"],
        &["64k"],
        &[],
        &["-P", "0", "64k", "rd"],
        &["--cpus", "4095", "64k", "rd"],
        &["-N", "0", "64k", "rd"],
        &["--isa", "avx2", "64k", "rd"],
        &["--sweep", "8k..4k", "rd"],
        &["--sweep", "4k..8k", "64k", "rd"],
        &["--step", "2", "64k", "rd"],
        &["--pages", "2m", "64k", "rd"],
        &["--json", "--csv", "64k", "rd"],
        &["--lmbench-build", "O3", "64k", "fwr"],
        &["--lmbench-build", "o2", "64k", "fwr"],
    ] {
        fails(args, 2);
    }
    let e = fails(&["64k", "nope"], 2);
    assert!(e.contains("rd wr rdwr cp fwr frd fcp bzero bcopy"), "{e}");
    let e = fails(&["100000g", "rd"], 2);
    assert!(e.contains("MemAvailable"), "{e}");
    let e = fails(&["--cpus", "4095", "64k", "rd"], 2);
    assert!(e.contains("4095"), "{e}");
}

/// The error contract over bad arguments, environment values and output paths shared by every
/// benchmp-based tool: exit 2, one `bw_mem:` line, no panic, nothing measured.
#[test]
fn every_mistake_is_one_line_before_any_measurement() {
    let dir = benchmp::testing::temp_dir("bw_mem", "mistakes");
    let folder = dir.to_str().unwrap().to_string();
    let text_file = dir.join("notes.txt");
    std::fs::write(&text_file, "my notes, not a calibration cache\n").unwrap();
    let notes = text_file.to_str().unwrap().to_string();
    let cal_dir = format!("--calibration={folder}");
    let cal_notes = format!("--calibration={notes}");
    let json_dir = format!("--json={folder}");
    let csv_dir = format!("--csv={folder}");
    let table = [
        Bad::args(&["--enough", "0", "8m", "rd"], "0 µs"),
        Bad::args(&["--enough", "99999999999999", "8m", "rd"], "--enough"),
        Bad::args(&["-W", "99999999999999", "8m", "rd"], "--warmup"),
        Bad::args(&["-N", "99999999999", "8m", "rd"], "--repetitions"),
        Bad::args(&["-P", "1000", "8m", "rd"], "more children than"),
        Bad::args(&["-P", "99999", "8m", "rd"], "--parallel"),
        Bad::args(&["--cpus", "0,0", "8m", "rd"], "named twice"),
        Bad::args(&["--cpus", "", "8m", "rd"], "--cpus"),
        Bad::args(&["--timeout", "0", "8m", "rd"], "--timeout"),
        Bad::args(&[&cal_dir, "8m", "rd"], "is a folder"),
        Bad::args(&[&cal_notes, "8m", "rd"], "refusing to overwrite"),
        Bad::env(
            &["8m", "rd"],
            &[("BENCHMP_CALIBRATION", &folder)],
            "is a folder",
        ),
        Bad::env(&["8m", "rd"], &[("ENOUGH", "0")], "ENOUGH"),
        Bad::env(&["8m", "rd"], &[("ENOUGH", "abc")], "ENOUGH"),
        Bad::env(&["8m", "rd"], &[("TIMING_O", "-1")], "TIMING_O"),
        Bad::env(&["8m", "rd"], &[("LOOP_O", "nan")], "LOOP_O"),
        Bad::env(
            &["8m", "rd"],
            &[("LMBENCH_SCHED", "FASTEST")],
            "not a policy",
        ),
        Bad::env(
            &["8m", "rd"],
            &[("LMBENCH_SCHED", "CUSTOM")],
            "empty CPU list",
        ),
        Bad::args(
            &["--json=/nonexistent/dir/x.json", "8m", "rd"],
            "folder does not exist",
        ),
        Bad::args(&["--csv=/proc/x", "8m", "rd"], "--csv=/proc/x"),
        Bad::args(
            &["--json=/proc/x.json", "8m", "rd"],
            "cannot be created in its folder",
        ),
        Bad::args(
            &[
                "--json=/tmp/bw-same.out",
                "--csv=/tmp/./bw-same.out",
                "8m",
                "rd",
            ],
            "are one file",
        ),
        Bad::args(&["--json=", "8m", "rd"], "needs a file name"),
        Bad::args(&[&json_dir, "8m", "rd"], "is a folder"),
        Bad::args(&[&csv_dir, "8m", "rd"], "is a folder"),
        Bad::args(&["--json", "--csv", "8m", "rd"], "cannot both"),
        Bad::args(&["100g", "rd"], "MemAvailable"),
    ];
    check_bad_inputs(&bw_mem(), &table);
    assert_eq!(
        std::fs::read_to_string(&text_file).unwrap(),
        "my notes, not a calibration cache\n",
        "the file given as a cache is untouched"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_report_file_that_fails_at_the_end_keeps_the_result_on_screen() {
    let o = bw_mem().run(&[
        "--json=/dev/full",
        "--noise-lost",
        "100",
        "-N",
        "1",
        "8k",
        "rd",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let mut lines = err.lines();
    assert!(
        is_lmbench_line(&format!("{}\n", lines.next().unwrap())),
        "{err:?}"
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("bw_mem: cannot write /dev/full"),
        "{err}"
    );
    assert_eq!(lines.next(), None, "{err}");
}

#[test]
fn memory_check_counts_children_and_second_buffers() {
    let avail = benchmp::sys::mem::available().expect("/proc/meminfo");
    // A size that fits once but not with a second buffer, nor twice.
    let size = (avail / 2 + (avail / 8)).to_string();
    fails(&["-P", "2", &size, "rd"], 2);
    fails(&[&size, "bcopy"], 2);
}

#[test]
fn missing_instruction_sets_are_unsupported() {
    let foreign = if cfg!(target_arch = "x86_64") {
        "neon"
    } else {
        "avx512"
    };
    let e = fails(&["--isa", foreign, "8k", "rdvec"], 3);
    assert!(e.contains(foreign), "{e}");
}

#[test]
fn huge_pages_without_a_reservation_fail_early_with_exit_3() {
    if benchmp::sys::mem::huge_pages_free() > 0
        && benchmp::testing::skip(
            "huge_pages_without_a_reservation_fail_early_with_exit_3",
            "huge pages are reserved on this machine",
        )
    {
        return;
    }
    let e = fails(&["--pages", "huge", "-N", "1", "4m", "rd"], 3);
    assert!(e.contains("/proc/sys/vm/nr_hugepages"), "{e}");
}

#[test]
fn thp_and_small_pages_are_reported() {
    let v = json(&["--pages", "4k", "-N", "1", "4m", "rd"]);
    assert_eq!(v["extra"]["pages_requested"], "4k");
    let got = &v["extra"]["pages_obtained"][0]["buf"];
    assert_eq!(
        got["anon_huge_bytes"], 0,
        "4k refuses transparent huge pages"
    );
    assert!(got["rss_bytes"].as_u64().unwrap() >= 4 << 20);
    let v = json(&["--pages", "thp", "-N", "1", "4m", "rd"]);
    assert_eq!(v["extra"]["pages_requested"], "thp");
    assert!(v["extra"]["pages_obtained"][0]["buf"]["anon_huge_bytes"].is_u64());
}

#[test]
fn a_stdout_that_cannot_be_written_is_one_line_and_exit_1() {
    for args in [
        &["--list-ops"][..],
        &["--stdout", "-N", "1", "8k", "rd"][..],
        &["--json", "-N", "1", "8k", "rd"][..],
    ] {
        let line = bw_mem().fails_on_full_stdout(args);
        assert!(line.starts_with("bw_mem: cannot write"), "{args:?}: {line}");
    }
}

#[test]
fn software_counters_are_counted_per_child_over_its_timed_intervals() {
    let Some(j) = bw_mem().json_together(&[
        "--counters",
        "task-clock,page-faults",
        "-P",
        "2",
        "64m",
        "rd",
    ]) else {
        return;
    };
    let children = j["measurements"][0]["children"].as_array().unwrap();
    assert_eq!(children.len(), 2);
    for c in children {
        let counts = c["counters"]["counts"].as_array().expect("counts");
        let names: Vec<&str> = counts
            .iter()
            .map(|k| k["event"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["task-clock", "page-faults"], "{c}");
        // task-clock is the child's CPU time from the read right after its warm-up to the
        // read after its last timed interval: not nothing, and at most the wall time between
        // the warm-up's end and the last interval's end (plus the reads' own cost). The
        // counted span holds more than the intervals: their bookkeeping and progress messages
        // (13 % of the intervals' time in a debug build here) and, with -P 2, the spin while
        // the child waits armed for its sibling (10 % on a busy machine).
        let task_ns = counts[0]["value"].as_f64().unwrap();
        let phases = c["phases"].as_array().expect("phases");
        let end_of = |name: &str| {
            phases
                .iter()
                .filter(|p| p["name"] == name)
                .filter_map(|p| p["end_ns"].as_u64())
                .max()
                .unwrap_or_else(|| panic!("no {name} phase: {c}"))
        };
        let span_ns = (end_of("rep") - end_of("warmup")) as f64;
        assert!(
            task_ns > 0.0 && task_ns <= span_ns * 1.05 + 1e6,
            "task-clock {task_ns} ns vs a span of {span_ns} ns"
        );
        assert!(counts[1]["raw"].is_u64());
        assert_eq!(c["counters"]["multiplexed"], false);
    }
    // The CSV carries them in its last column.
    let o = ok(&["--counters=cs", "--csv", "1m", "rd"]);
    let text = stdout(&o);
    let mut lines = text.lines();
    assert!(lines.next().unwrap().ends_with(",unit,counters"));
    assert!(lines.all(|l| l.contains(",cs=")), "{text}");
}

#[test]
fn hardware_counters_are_counted_or_refused_in_one_line_with_exit_3() {
    let o = bw_mem().run(&["1m", "rd", "--counters"]);
    let err = stderr(&o);
    match o.status.code() {
        Some(3) => {
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.starts_with("bw_mem: --counters: perf_event_open refused '"),
                "{err}"
            );
        }
        Some(0) => {
            assert!(err.contains("bw_mem: counters: rd child 0"), "{err}");
            assert!(err.contains("cycles ") && err.contains("IPC "), "{err}");
        }
        other => panic!("exit {other:?}: {err}"),
    }
    let e = fails(&["--counters", "64m", "rd"], 2);
    assert!(e.contains("'64m' is not a counter"), "{e}");
    let e = fails(&["--counters=cycles,cycles", "1m", "rd"], 2);
    assert!(e.contains("given twice"), "{e}");
}
