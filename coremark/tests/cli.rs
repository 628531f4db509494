//! Command-line behaviour of the `coremark` binary: help, bad input (exit 2 with one line),
//! short runs (exit 1 with the reference's error line) and the CRCs in each output format.

use std::process::{Command, Output};

fn coremark(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coremark"))
        .args(args)
        .output()
        .expect("run the coremark binary")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("utf-8 stderr")
}

/// Bad input: exit status 2, nothing on stdout, exactly one line on stderr.
fn assert_usage_error(args: &[&str], needle: &str) {
    let out = coremark(args);
    assert_eq!(
        out.status.code(),
        Some(2),
        "args {args:?}: {}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty(), "args {args:?}");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "args {args:?}: {err:?}");
    assert!(err.starts_with("coremark: "), "{err:?}");
    assert!(
        err.contains(needle),
        "args {args:?}: {err:?} lacks {needle:?}"
    );
}

#[test]
fn help_exits_zero_and_documents_the_options() {
    let out = coremark(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for option in ["--seeds", "--size", "--iterations", "--json", "--csv"] {
        assert!(text.contains(option), "help lacks {option}");
    }
    assert!(text.contains("not CoreMark scores"));
}

#[test]
fn bad_input_exits_two_with_one_line() {
    assert_usage_error(&["--seeds", "1,2,x"], "invalid number \"x\"");
    assert_usage_error(&["--seeds", "1,2"], "three numbers");
    assert_usage_error(&["--seeds", "70000,0,0"], "16 bits");
    assert_usage_error(&["--size", "0"], "too small");
    assert_usage_error(&["--size", "12q"], "invalid number");
    assert_usage_error(&["--size", "1G"], "invalid number");
    assert_usage_error(&["--size", "64M"], "too large");
    assert_usage_error(&["--iterations", "-3"], "-3");
    assert_usage_error(&["--iterations", "ten"], "--iterations");
    assert_usage_error(&["--no-such-option"], "--no-such-option");
    assert_usage_error(&["--json", "--csv"], "--csv");
    assert_usage_error(&["-P", "0"], "--parallel");
}

#[test]
fn short_json_run_shows_correct_crcs_and_fails() {
    let out = coremark(&["--iterations", "10", "--json"]);
    // A 10-iteration run cannot last 10 s: the result is reported but not valid.
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("at least 10 s"), "{err:?}");
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON report");
    assert_eq!(doc["tool"], "coremark");
    let v = &doc["extra"];
    assert_eq!(v["run_type"], "performance_2k");
    assert_eq!(v["seedcrc"], "0xe9f5");
    assert_eq!(v["size_per_algorithm_bytes"], 666);
    assert_eq!(v["contexts"], 1);
    assert!(v["parallel_method"].is_null());
    assert_eq!(v["iterations"], 10);
    let r = &v["results"][0];
    assert_eq!(r["crclist"], "0xe714");
    assert_eq!(r["crcmatrix"], "0x1fd7");
    assert_eq!(r["crcstate"], "0x8e3a");
    assert_eq!(r["crcfinal"], "0xfcaf");
    assert_eq!(r["validation"], "passed");
    assert_eq!(v["mismatches"].as_array().map(Vec::len), Some(0));
    assert_eq!(v["short_run"], true);
    assert_eq!(v["verdict"], "errors_detected");
    assert!(v["score"].is_null());
    assert!(v["elapsed_ns"].as_u64().is_some());
    assert!(
        v["compiler_version"]
            .as_str()
            .unwrap()
            .starts_with("rustc ")
    );
    // One child, pinned by benchmp's default placement to the first allowed CPU.
    let children = doc["measurements"][0]["children"].as_array().unwrap();
    assert_eq!(children.len(), 1);
    assert_eq!(children[0]["cpu"], doc["placement"]["allowed"][0]);
    assert_eq!(r["cpu"], children[0]["cpu"]);
}

#[test]
fn two_contexts_each_validated_from_their_own_child() {
    let out = coremark(&["-P", "2", "--iterations", "100", "--json"]);
    // 100 iterations take milliseconds: valid CRCs, but too short, so exit status 1.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("timed runs under 10 s"),
        "{}",
        stderr(&out)
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON report");
    let m = &doc["measurements"][0];
    assert_eq!(m["name"], "coremark");
    assert_eq!(m["params"]["iterations_per_context"], 100);
    let children = m["children"].as_array().unwrap();
    assert_eq!(children.len(), 2);
    for (i, child) in children.iter().enumerate() {
        assert_eq!(child["index"], i);
        let samples = child["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 1, "one timed interval per child");
        let s = &samples[0];
        assert_eq!(s["iterations"], 100);
        assert_eq!(s["accepted"], true);
        // The timed interval's CRCs: the known values, and crcfinal of a 100-iteration
        // run from fresh data, whatever the keep-busy calls around it did.
        assert_eq!(s["detail"]["crclist"], "0xe714");
        assert_eq!(s["detail"]["crcmatrix"], "0x1fd7");
        assert_eq!(s["detail"]["crcstate"], "0x8e3a");
        assert_eq!(s["detail"]["crcfinal"], "0x988c");
    }
    let v = &doc["extra"];
    assert_eq!(v["contexts"], 2);
    assert_eq!(v["parallel_method"], "Fork");
    assert_eq!(v["iterations"], 200);
    for (i, r) in v["results"].as_array().unwrap().iter().enumerate() {
        assert_eq!(r["context"], i);
        assert_eq!(r["cpu"], children[i]["cpu"]);
        assert_eq!(r["validation"], "passed");
        assert_eq!(r["crcfinal"], "0x988c");
        assert_eq!(r["short_run"], true);
        assert_eq!(r["elapsed_ns"], children[i]["samples"][0]["elapsed_ns"]);
    }
    assert_eq!(v["verdict"], "errors_detected");
    assert!(v["score"].is_null());
}

#[test]
fn two_contexts_text_keeps_the_reference_lines() {
    let out = coremark(&["-P", "2", "--seeds", "1,0,0", "--iterations", "3"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "2K validation run parameters for coremark.");
    assert!(lines.contains(&"Iterations       : 6"));
    let flags = lines
        .iter()
        .position(|l| l.starts_with("Compiler flags   : "))
        .unwrap();
    assert_eq!(lines[flags + 1], "Parallel Fork : 2");
    assert_eq!(lines[flags + 2], "Memory location  : Heap");
    for i in 0..2 {
        for (name, crc) in [
            ("crclist  ", "0xe3c1"),
            ("crcmatrix", "0x0747"),
            ("crcstate ", "0x8d84"),
            ("crcfinal ", "0xbf76"),
        ] {
            let line = format!("[{i}]{name}     : {crc}");
            assert!(lines.contains(&line.as_str()), "no {line:?} in {text}");
        }
    }
    // socbench's figures come after the reference's block, without its separator.
    let end = lines.iter().position(|l| *l == "Errors detected").unwrap();
    assert!(lines[end + 1].starts_with("socbench figures"), "{text}");
    assert!(lines[end + 2..].iter().all(|l| l.starts_with("  ")));
    assert!(lines[end + 2..].iter().all(|l| !l.contains(" : ")));
    assert_eq!(
        lines[end + 2..]
            .iter()
            .filter(|l| l.starts_with("  child "))
            .count(),
        2
    );
    assert!(lines.last().unwrap().starts_with("  system: "));
}

#[test]
fn offline_cpu_is_bad_input() {
    assert_usage_error(&["--cpus", "8000", "--iterations", "1"], "not online");
}

#[test]
fn unknown_lmbench_sched_is_bad_input() {
    let out = Command::new(env!("CARGO_BIN_EXE_coremark"))
        .args(["--iterations", "1"])
        .env("LMBENCH_SCHED", "FASTEST_FIRST")
        .output()
        .expect("run the coremark binary");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(err.starts_with("coremark: "), "{err:?}");
    assert!(err.contains("FASTEST_FIRST"), "{err:?}");
    assert_usage_error(
        &["--sched", "CUSTOM", "--iterations", "1"],
        "empty CPU list",
    );
}

#[test]
fn json_to_a_file_keeps_the_text() {
    let path = std::env::temp_dir().join(format!("coremark-cli-{}.json", std::process::id()));
    let arg = format!("--json={}", path.display());
    let out = coremark(&["--iterations", "2", &arg]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("[0]crcfinal      : 0x72be"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(doc["extra"]["results"][0]["crcfinal"], "0x72be");
}

#[test]
fn short_text_run_prints_the_reference_error_lines() {
    let out = coremark(&["--seeds", "1,0,0", "--iterations", "3"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "2K validation run parameters for coremark.");
    assert_eq!(lines[1], "CoreMark Size    : 666");
    assert!(lines.contains(&"ERROR! Must execute for at least 10 secs for a valid result!"));
    assert!(lines.contains(&"Iterations       : 3"));
    assert!(lines.contains(&"Memory location  : Heap"));
    assert!(lines.contains(&"seedcrc          : 0x18f2"));
    assert!(lines.contains(&"[0]crclist       : 0xe3c1"));
    assert!(lines.contains(&"[0]crcmatrix     : 0x0747"));
    assert!(lines.contains(&"[0]crcstate      : 0x8d84"));
    assert!(lines.contains(&"[0]crcfinal      : 0xbf76"));
    assert_eq!(lines.last(), Some(&"Errors detected"));
    assert!(!text.contains("Correct operation validated"));
    assert!(!text.contains(" 1.0 : "));
}

#[test]
fn unknown_seeds_cannot_be_validated() {
    let out = coremark(&["--seeds", "1,1,1", "--iterations", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(!text.contains("run parameters for coremark"));
    assert!(text.contains("seedcrc          : 0x802a"));
    assert!(text.contains("[0]crclist       : 0x48be"));
    assert!(text.contains("Cannot validate operation for these seed values"));
    assert!(!text.contains("Correct operation validated"));
}

#[test]
fn csv_profile_run_is_one_row_per_child() {
    let out = coremark(&[
        "--seeds",
        "8,8,8",
        "--size",
        "1200",
        "--iterations",
        "3",
        "--csv",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let header: Vec<&str> = lines[0].split(',').collect();
    let row: Vec<&str> = lines[1].split(',').collect();
    let field = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(field("tool"), "coremark");
    assert_eq!(field("measurement"), "coremark");
    assert_eq!(field("child"), "0");
    assert_eq!(field("iterations"), "3");
    assert_eq!(field("accepted"), "true");
    assert_eq!(field("unit"), "iterations/s");
}

#[test]
fn six_k_validation_run_matches_known_crcs() {
    // A 6k validation run of one iteration: the CRCs must match the known values.
    let out = coremark(&[
        "--seeds",
        "0x3415,0x3415,0x66",
        "--size",
        "6000",
        "--iterations",
        "1",
    ]);
    let text = stdout(&out);
    assert!(text.starts_with("6k validation run parameters for coremark.\n"));
    assert!(!text.contains("ERROR! list crc"), "{text}");
    assert!(text.contains("[0]crclist       : 0x3340"));
    assert!(text.contains("[0]crcmatrix     : 0x1199"));
    assert!(text.contains("[0]crcstate      : 0x39bf"));
}
