//! The `dhry` binary: help, bad input, and the three output formats on short runs.

use std::process::{Command, Output};

fn dhry(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dhry"))
        .args(args)
        .output()
        .expect("dhry runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("UTF-8 stderr")
}

#[test]
fn help_describes_every_option() {
    let o = dhry(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    for flag in ["--time", "--runs", "--mhz", "--json", "--csv"] {
        assert!(text.contains(flag), "{flag} missing from:\n{text}");
    }
    assert!(text.contains("[default: 2]"));
}

#[test]
fn bad_input_is_one_line_and_exit_status_2() {
    for args in [
        &["--runs", "0"][..],
        &["--runs", "-3"],
        &["--runs", "many"],
        &["--time", "-1"],
        &["--time", "0"],
        &["--time", "inf"],
        &["--mhz", "abc"],
        &["--mhz", "0"],
        &["--json", "--csv"],
        &["--json", "r.json"],
        &["--bogus"],
        &["extra"],
    ] {
        let o = dhry(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("dhry: "), "{args:?}: {err}");
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
}

#[test]
fn json_run_parses_and_passes_verification() {
    let o = dhry(&["--runs", "1000", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    assert_eq!(j["benchmark"], "dhrystone");
    assert_eq!(j["version"], "2.1");
    assert_eq!(j["runs"], 1000);
    assert_eq!(j["verification"]["passed"], true);
    assert_eq!(j["verification"]["mismatches"].as_array().unwrap().len(), 0);
    let v = &j["final_values"];
    assert_eq!(v["int_glob"], 5);
    assert_eq!(v["arr_2_glob_8_7"], 1010);
    assert_eq!(v["ptr_glob"]["int_comp"], 17);
    assert_eq!(v["next_ptr_glob"]["int_comp"], 18);
    assert_eq!(v["ptr_glob"]["ptr_comp"], v["next_ptr_glob"]["ptr_comp"]);
    assert_eq!(v["str_2_loc"], "DHRYSTONE PROGRAM, 2'ND STRING");
    let dps = j["dhrystones_per_s"].as_f64().unwrap();
    let dmips = j["dmips"].as_f64().unwrap();
    assert!(dps > 0.0);
    assert!((dmips * 1757.0 - dps).abs() <= dps * 1e-12);
    assert_eq!(j["reference_min_time_met"], false);
    // A short run says so on stderr.
    assert!(stderr(&o).contains("less than the 2 s"));
}

#[test]
fn given_mhz_gives_dmips_per_mhz() {
    let o = dhry(&["--runs", "1000", "--json", "--mhz", "1000"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["clock"]["mhz"], 1000.0);
    assert_eq!(j["clock"]["source"], "option");
    assert_eq!(j["dmips_per_mhz_is_estimate"], false);
    let per_mhz = j["dmips_per_mhz"].as_f64().unwrap();
    assert!((per_mhz * 1000.0 - j["dmips"].as_f64().unwrap()).abs() < 1e-6);
}

#[test]
fn text_run_prints_the_reference_block() {
    let o = dhry(&["--runs", "1000"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("Dhrystone Benchmark, Version 2.1 (Language: Rust)\n"));
    assert!(text.contains("Execution starts, 1000 runs through Dhrystone\n"));
    assert!(text.contains("Int_Glob:            5\n        should be:   5\n"));
    assert!(text.contains("Arr_2_Glob[8][7]:    1010\n"));
    assert_eq!(text.matches("        should be:   ").count(), 22);
    assert!(text.contains("Measured time too small to obtain meaningful results\n"));
    assert!(text.contains("DMIPS (Dhrystones per Second / 1757):"));
    assert!(text.contains("DMIPS/MHz:"));
    assert!(text.contains("Verification:                               passed"));
}

#[test]
fn csv_run_is_a_header_and_one_record() {
    let o = dhry(&["--runs", "1000", "--csv"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let records: Vec<_> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 1);
    let field = |name: &str| {
        let i = headers.iter().position(|h| h == name).unwrap();
        records[0][i].to_string()
    };
    assert_eq!(field("runs"), "1000");
    assert_eq!(field("verification_passed"), "true");
    assert!(field("dhrystones_per_s").parse::<f64>().unwrap() > 0.0);
}

#[test]
fn json_and_csv_go_to_files_with_the_text_on_stdout() {
    let dir = std::env::temp_dir().join(format!("dhry-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, csv) = (dir.join("r.json"), dir.join("r.csv"));
    let o = dhry(&[
        "--runs",
        "1000",
        &format!("--json={}", json.display()),
        &format!("--csv={}", csv.display()),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("Execution starts, 1000 runs through Dhrystone"));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["verification"]["passed"], true);
    let c = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(c.lines().count(), 2);
    // JSON to a file, CSV to stdout: no text.
    let o = dhry(&[
        "--runs",
        "1000",
        &format!("--json={}", json.display()),
        "--csv",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("benchmark,version,runs,"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_report_file_is_a_failure() {
    let o = dhry(&["--runs", "10", "--json=/nonexistent-dir/r.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("writing /nonexistent-dir/r.json"));
}

#[test]
fn a_short_target_time_is_reached() {
    let o = dhry(&["--time", "0.05", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["verification"]["passed"], true);
    let attempts = j["attempts"].as_u64().unwrap();
    assert!(j["elapsed_ns"].as_u64().unwrap() >= 50_000_000 || attempts == 4);
}
