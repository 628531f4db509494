//! The `dhry` binary: help, bad input, the three output formats on short runs, all-core runs,
//! both build variants, and placement errors.

use std::process::{Command, Output};

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dhry"));
    // Keep the tests independent of (and from writing to) the user's calibration cache.
    c.args(args)
        .env("BENCHMP_CALIBRATION", "off")
        .env_remove("LMBENCH_SCHED");
    c
}

fn dhry(args: &[&str]) -> Output {
    command(args).output().expect("dhry runs")
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

/// Online CPUs, from sysfs (`0-1` → [0, 1]).
fn online_cpus() -> Vec<usize> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(lo.parse::<usize>().unwrap()..=hi.parse::<usize>().unwrap());
    }
    cpus
}

/// The timed-loop record of every child: (child's JSON, its sample's detail).
fn loops(j: &serde_json::Value) -> Vec<(serde_json::Value, serde_json::Value)> {
    let m = &j["measurements"].as_array().expect("measurements")[0];
    m["children"]
        .as_array()
        .expect("children")
        .iter()
        .map(|c| {
            let samples = c["samples"].as_array().expect("samples");
            assert_eq!(samples.len(), 1, "one timed loop per child");
            (c.clone(), samples[0]["detail"].clone())
        })
        .collect()
}

/// Every child verified its `runs`-run loop, in its sample detail and in the summary.
fn assert_verified(j: &serde_json::Value, children: usize, runs: u64, variant: &str) {
    let loops = loops(j);
    assert_eq!(loops.len(), children);
    for (i, (child, detail)) in loops.iter().enumerate() {
        assert_eq!(child["index"], i);
        assert_eq!(child["samples"][0]["iterations"], runs);
        assert_eq!(detail["passed"], true, "child {i}: {detail}");
        assert_eq!(detail["mismatches"].as_array().unwrap().len(), 0);
        assert_eq!(detail["variant"], variant);
        assert_eq!(detail["runs"], runs);
        assert_eq!(detail["runs_done"], runs);
        let v = &detail["final_values"];
        assert_eq!(v["int_glob"], 5);
        assert_eq!(v["arr_2_glob_8_7"], runs + 10);
        assert_eq!(v["ptr_glob"]["int_comp"], 17);
        assert_eq!(v["next_ptr_glob"]["int_comp"], 18);
        assert_eq!(v["ptr_glob"]["ptr_comp"], v["next_ptr_glob"]["ptr_comp"]);
        assert_eq!(v["str_2_loc"], "DHRYSTONE PROGRAM, 2'ND STRING");
    }
    let e = &j["extra"];
    assert_eq!(e["benchmark"], "dhrystone");
    assert_eq!(e["version"], "2.1");
    assert_eq!(e["variant"], variant);
    assert_eq!(e["runs"], runs);
    assert_eq!(e["verification_passed"], true);
    assert_eq!(e["children"].as_array().unwrap().len(), children);
    for c in e["children"].as_array().unwrap() {
        assert_eq!(c["verification"]["passed"], true);
        assert_eq!(c["runs"], runs);
    }
}

#[test]
fn help_describes_every_option() {
    let o = dhry(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    for flag in [
        "--time",
        "--runs",
        "--duration",
        "--mhz",
        "--variant",
        "pack-inline",
        "--parallel",
        "--cpus",
        "--sched",
        "LMBENCH_SCHED",
        "--json",
        "--csv",
        "--stderr",
        "--aggregate",
        "--fail-on-noise",
        "--trace",
    ] {
        assert!(text.contains(flag), "{flag} missing from:\n{text}");
    }
    assert!(text.contains("[default: 2]"));
    assert!(text.contains("[default: strict]"));
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
        &["--duration", "0"],
        &["--duration", "1", "--runs", "10"],
        &["--duration", "1", "--time", "3"],
        &["--mhz", "abc"],
        &["--mhz", "0"],
        &["--variant", "fast"],
        &["-P", "0"],
        &["--cpus", "3-1"],
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
fn an_offline_cpu_is_one_line_and_exit_status_2() {
    let beyond = online_cpus().last().map_or(4095, |c| c + 1);
    let o = dhry(&["--cpus", &beyond.to_string(), "--runs", "1000"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("dhry: "), "{err}");
    assert!(
        err.contains(&format!("CPU {beyond} is not online")),
        "{err}"
    );
    assert!(stdout(&o).is_empty());
}

#[test]
fn a_bad_lmbench_sched_is_one_line_and_exit_status_2() {
    for policy in ["FASTEST", "CUSTOM"] {
        let o = command(&["-P", "2", "--runs", "1000"])
            .env("LMBENCH_SCHED", policy)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{policy}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("dhry: ") && err.contains("LMBENCH_SCHED"),
            "{err}"
        );
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn json_run_parses_and_passes_verification() {
    let o = dhry(&["--runs", "1000", "--json"]);
    let j = json(&o);
    assert_eq!(j["tool"], "dhry");
    assert_verified(&j, 1, 1000, "strict");
    let e = &j["extra"];
    assert_eq!(e["calls_per_run"], 15);
    assert_eq!(e["plan"]["runs"], 1000);
    assert_eq!(e["attempts"], 1);
    let c = &e["children"][0];
    let dps = c["dhrystones_per_s"].as_f64().unwrap();
    let dmips = c["dmips"].as_f64().unwrap();
    assert!(dps > 0.0);
    assert!((dmips * 1757.0 - dps).abs() <= dps * 1e-12);
    assert_eq!(c["reference_min_time_met"], false);
    assert_eq!(e["reference_min_time_met"], false);
    // benchmp's figure is the same DMIPS, and one child's total is its own figure.
    let m = &j["measurements"][0];
    assert_eq!(m["metric"]["unit"], "DMIPS");
    assert_eq!(m["figures"][0]["value"].as_f64().unwrap(), dmips);
    assert_eq!(e["total_dmips"].as_f64().unwrap(), dmips);
    assert_eq!(
        j["build"]["opt_level"].as_str().map(str::is_empty),
        Some(false)
    );
    // A short run says so on stderr.
    assert!(stderr(&o).contains("less than the 2 s"));
}

#[test]
fn two_children_each_verify_their_loop() {
    let o = dhry(&["-P", "2", "--runs", "100000", "--json"]);
    let j = json(&o);
    assert_verified(&j, 2, 100_000, "strict");
    let placed = j["placement"]["cpus"].as_array().unwrap();
    assert_eq!(placed.len(), 2);
    for (i, (child, _)) in loops(&j).iter().enumerate() {
        assert_eq!(
            child["cpu"], placed[i],
            "child {i} runs where it was placed"
        );
    }
    let e = &j["extra"];
    let sum: f64 = e["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["dmips"].as_f64().unwrap())
        .sum();
    assert!((e["sum_dmips"].as_f64().unwrap() - sum).abs() <= sum * 1e-9);
    let clusters: u64 = e["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["children"].as_u64().unwrap())
        .sum();
    assert_eq!(clusters, 2);
    let total = e["total_dmips"].as_f64().unwrap();
    assert!((e["total_dhrystones_per_s"].as_f64().unwrap() - total * 1757.0).abs() < 1e-3);
}

#[test]
fn the_pack_inline_variant_verifies_too() {
    let o = dhry(&["--variant", "pack-inline", "--runs", "100000", "--json"]);
    let j = json(&o);
    assert_verified(&j, 1, 100_000, "pack-inline");
    assert_eq!(j["extra"]["calls_per_run"], 9);
    assert!(
        j["extra"]["compilation_model"]
            .as_str()
            .unwrap()
            .contains("pack-inline")
    );
    assert_eq!(j["measurements"][0]["params"]["variant"], "pack-inline");
    let o = dhry(&[
        "-P",
        "2",
        "--variant",
        "pack-inline",
        "--runs",
        "100000",
        "--json",
    ]);
    assert_verified(&json(&o), 2, 100_000, "pack-inline");
}

#[test]
fn a_duration_run_loads_every_child() {
    let o = dhry(&["-P", "2", "--duration", "0.2", "--json"]);
    let j = json(&o);
    let e = &j["extra"];
    assert_eq!(e["plan"]["about_seconds"], 0.2);
    let runs = e["runs"].as_u64().unwrap();
    assert!(runs > 0);
    assert_verified(&j, 2, runs, "strict");
    assert_eq!(e["attempts"], 1);
}

#[test]
fn given_mhz_gives_dmips_per_mhz() {
    let o = dhry(&["--runs", "1000", "--json", "--mhz", "1000"]);
    let j = json(&o);
    let c = &j["extra"]["children"][0];
    assert_eq!(c["clock"]["mhz"], 1000.0);
    assert_eq!(c["clock"]["source"], "option");
    assert_eq!(c["dmips_per_mhz_is_estimate"], false);
    let per_mhz = c["dmips_per_mhz"].as_f64().unwrap();
    assert!((per_mhz * 1000.0 - c["dmips"].as_f64().unwrap()).abs() < 1e-6);
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
fn text_of_two_children_prints_the_block_once_and_a_table() {
    let o = dhry(&["-P", "2", "--runs", "20000"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("Execution starts, 20000 runs through Dhrystone in each of 2 children\n")
    );
    assert!(text.contains("Arr_2_Glob[8][7]:    20010\n"));
    assert_eq!(text.matches("        should be:   ").count(), 22);
    assert!(text.contains("child   cpu  cluster    Dhrystones/s"));
    assert!(text.contains("Total (--aggregate cluster):"));
    assert!(text.contains("Verification:                               passed (2 children;"));
    // --stderr moves the text to stderr.
    let o = dhry(&[
        "-P",
        "2",
        "--runs",
        "20000",
        "--stderr",
        "--aggregate",
        "sum",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    assert!(stderr(&o).contains("Total (--aggregate sum):"));
}

#[test]
fn csv_run_is_a_header_and_one_row_per_child() {
    for (p, rows) in [("1", 1), ("2", 2)] {
        let o = dhry(&["-P", p, "--runs", "1000", "--csv"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let text = stdout(&o);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let headers = reader.headers().unwrap().clone();
        let records: Vec<_> = reader.records().map(Result::unwrap).collect();
        assert_eq!(records.len(), rows);
        for (i, r) in records.iter().enumerate() {
            let field = |name: &str| r[headers.iter().position(|h| h == name).unwrap()].to_string();
            assert_eq!(field("tool"), "dhry");
            assert_eq!(field("child"), i.to_string());
            assert_eq!(field("iterations"), "1000");
            assert_eq!(field("accepted"), "true");
            assert_eq!(field("unit"), "DMIPS");
            assert!(field("value").parse::<f64>().unwrap() > 0.0);
        }
    }
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
    assert_eq!(j["extra"]["verification_passed"], true);
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
    assert!(stdout(&o).starts_with("tool,measurement,"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_report_file_is_a_failure() {
    let o = dhry(&["--runs", "10", "--json=/nonexistent-dir/r.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("/nonexistent-dir/r.json"));
}

#[test]
fn a_short_target_time_is_reached() {
    let o = dhry(&["--time", "0.05", "--json"]);
    let j = json(&o);
    let e = &j["extra"];
    assert_eq!(e["verification_passed"], true);
    assert_eq!(e["plan"]["at_least_seconds"], 0.05);
    let attempts = e["attempts"].as_u64().unwrap();
    assert!((1..=4).contains(&attempts));
    assert!(e["children"][0]["elapsed_ns"].as_u64().unwrap() >= 50_000_000 || attempts == 4);
    assert_eq!(e["probes"].as_array().unwrap().len(), 1);
}
