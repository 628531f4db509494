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
}

#[test]
fn short_json_run_shows_correct_crcs_and_fails() {
    let out = coremark(&["--iterations", "10", "--json"]);
    // A 10-iteration run cannot last 10 s: the result is reported but not valid.
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("at least 10 s"), "{err:?}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON report");
    assert_eq!(v["run_type"], "performance_2k");
    assert_eq!(v["seedcrc"], "0xe9f5");
    assert_eq!(v["size_per_algorithm_bytes"], 666);
    assert_eq!(v["iterations"], 10);
    let r = &v["results"][0];
    assert_eq!(r["crclist"], "0xe714");
    assert_eq!(r["crcmatrix"], "0x1fd7");
    assert_eq!(r["crcstate"], "0x8e3a");
    assert_eq!(r["crcfinal"], "0xfcaf");
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
fn csv_profile_run_is_one_row() {
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
    assert_eq!(field("run_type"), "Profile generation");
    assert_eq!(field("seedcrc"), "0x4eaf");
    assert_eq!(field("crclist"), "0x6a79");
    assert_eq!(field("crcfinal"), "0x60bc");
    assert_eq!(field("iterations"), "3");
    assert_eq!(field("verdict"), "errors_detected");
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
