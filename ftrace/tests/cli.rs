//! The `ftrace` binary without tracefs: help, bad input, convert, and mark into a file.

use std::path::PathBuf;
use std::process::{Command, Output};

fn ftrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ftrace"))
        .args(args)
        .output()
        .expect("run ftrace")
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ftrace-cli-{}-{name}", std::process::id()))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_lists_the_subcommands() {
    let out = ftrace(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for cmd in ["record", "convert", "mark", "bench-marker"] {
        assert!(text.contains(cmd), "{cmd} missing from help: {text}");
    }
}

#[test]
fn convert_writes_valid_json() {
    let out_path = temp("tgid.json");
    let out = ftrace(&[
        "convert",
        "--json",
        &fixture("tgid.txt"),
        out_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("8 slices"), "{}", stderr(&out));
    let text = std::fs::read_to_string(&out_path).unwrap();
    std::fs::remove_file(&out_path).unwrap();
    let check = ftrace::convert::validate_json(&text).unwrap();
    assert!(check.is_ok());
    assert_eq!(check.slices.len(), 8);
}

#[test]
fn convert_reports_a_broken_trace_with_status_1() {
    let out_path = temp("broken.json");
    let out = ftrace(&[
        "convert",
        "--json",
        &fixture("broken.txt"),
        out_path.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&out_path);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("has no E"), "{}", stderr(&out));
}

#[test]
fn bad_input_is_status_2_with_one_line() {
    let out_path = temp("bad.json");
    let out_path = out_path.to_str().unwrap();
    let cases: [&[&str]; 7] = [
        &["convert", &fixture("tgid.txt"), out_path],
        &["convert", "--json", "/nonexistent/trace.txt", out_path],
        &[
            "convert",
            "--json",
            concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
            out_path,
        ],
        &["record"],
        &["mark", "jump"],
        &["mark", "--marker", "/nonexistent/dir/marker", "begin", "x"],
        &["bench-marker", "--calls", "lots"],
    ];
    for args in cases {
        let out = ftrace(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        if args[0] != "record" && args[0] != "bench-marker" {
            assert_eq!(
                stderr(&out).lines().count(),
                1,
                "{args:?}: {}",
                stderr(&out)
            );
            assert!(
                stderr(&out).starts_with("ftrace: "),
                "{args:?}: {}",
                stderr(&out)
            );
        }
    }
    let _ = std::fs::remove_file(out_path);
}

#[test]
fn mark_writes_a_sequence_into_a_file() {
    let path = temp("marker.txt");
    std::fs::write(&path, "").unwrap();
    let out = ftrace(&[
        "mark",
        "--json",
        "--marker",
        path.to_str().unwrap(),
        "begin",
        "phase one",
        "counter",
        "n",
        "-3",
        "instant",
        "tick",
        "end",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ids: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pid = ids["pid"].as_u64().unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        written,
        format!("B|{pid}|phase oneC|{pid}|n|-3I|{pid}|tickE|{pid}")
    );
}
