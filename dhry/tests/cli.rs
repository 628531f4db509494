//! The `dhry` binary: help, bad input, the three output formats on short runs, all-core runs,
//! both build variants, and placement errors.

use std::process::Output;

use benchmp::testing::{Bad, Tool, check_bad_inputs, parse_json, stderr, stdout, temp_dir};

/// The binary with the calibration fixed and no placement inherited from the shell.
fn dhry() -> Tool {
    Tool::new("dhry", env!("CARGO_BIN_EXE_dhry"))
}

/// Runs to completion, asserting success.
fn ok(args: &[&str]) -> Output {
    dhry().ok(args)
}

/// Runs with `--json` first, asserting success, and parses the report.
fn json(args: &[&str]) -> serde_json::Value {
    dhry().json(args)
}

/// Online CPUs, as benchmp's topology reads them.
fn online_cpus() -> Vec<usize> {
    benchmp::topology::Topology::detect()
        .expect("the machine's topology")
        .online()
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
    let text = stdout(&ok(&["--help"]));
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

// Environment and placement rows end in `--time 86400`, a run that would last a day: an
// error that only comes once children run then shows as a hang ([`Tool::fails`] gives up
// after 30 s) instead of passing after the fact.

/// The reliability contract: every bad argument or environment value dhry reads is one
/// line `dhry: ...` on stderr, exit status 2, nothing on stdout, before anything is
/// measured. dhry times a fixed run count, so it reads neither ENOUGH, LOOP_O nor the
/// calibration cache (BENCHMP_CALIBRATION): those are not bad input here.
#[test]
fn bad_input_is_one_line_and_exit_status_2() {
    let offline = online_cpus().last().map_or(4095, |c| c + 1).to_string();
    let not_online = format!("CPU {offline} is not online");
    let on_offline = ["--cpus", offline.as_str(), "--time", "86400"];
    let long: &[&str] = &["--time", "86400"];
    check_bad_inputs(
        &dhry(),
        &[
            // Run length.
            Bad::args(&["--runs", "0"], "at least 1"),
            Bad::args(&["--runs", "-3"], "not a whole number of runs"),
            Bad::args(&["--runs", "many"], "not a whole number of runs"),
            Bad::args(&["--runs", "1000000000000000001"], "at most"),
            Bad::args(&["--runs", "18446744073709551616"], "not a whole number"),
            Bad::args(&["--time", "-1"], "at least 0.001"),
            Bad::args(&["--time", "0"], "at least 0.001"),
            Bad::args(&["--time", "0.0009"], "at least 0.001"),
            Bad::args(&["--time", "inf"], "at most 86400"),
            Bad::args(&["--time", "nan"], "--time"),
            Bad::args(&["--time", "86401"], "at most 86400"),
            Bad::args(&["--time", ""], "not a number of seconds"),
            Bad::args(&["--duration", "0"], "at least 0.001"),
            Bad::args(&["--duration", "nan"], "--duration"),
            Bad::args(&["--duration", "1e-12"], "at least 0.001"),
            Bad::args(&["--duration", "1", "--runs", "10"], "cannot be used with"),
            Bad::args(&["--duration", "1", "--time", "3"], "cannot be used with"),
            // Clock and variant.
            Bad::args(&["--mhz", "abc"], "not a clock in MHz"),
            Bad::args(&["--mhz", "0"], "not a clock in MHz"),
            Bad::args(&["--mhz", "-1"], "not a clock in MHz"),
            Bad::args(&["--mhz", "nan"], "not a clock in MHz"),
            Bad::args(&["--mhz", "inf"], "not a clock in MHz"),
            Bad::args(&["--mhz", "1000001"], "not a clock in MHz"),
            Bad::args(&["--variant", "fast"], "--variant"),
            // Outputs and stray words.
            Bad::args(&["--json", "--csv"], "cannot both write to stdout"),
            Bad::args(&["--json", "r.json"], "'r.json'"),
            Bad::args(&["--aggregate", "mean"], "--aggregate"),
            Bad::args(&["--bogus"], "--bogus"),
            Bad::args(&["extra"], "'extra'"),
            // Placement.
            Bad::args(&["-P", "0"], "--parallel"),
            Bad::args(&["--cpus", "3-1"], "runs backwards"),
            Bad::args(&["--cpus", ""], "--cpus"),
            Bad::args(&["--timeout", "-1"], "'-1'"),
            Bad::args(&on_offline, &not_online),
            Bad::args(&["--sched", "FASTEST", "--time", "86400"], "FASTEST"),
            Bad::args(&["--sched", "CUSTOM", "--time", "86400"], "empty CPU list"),
            // Environment.
            Bad::env(long, &[("LMBENCH_SCHED", "FASTEST")], "LMBENCH_SCHED"),
            Bad::env(long, &[("LMBENCH_SCHED", "CUSTOM")], "LMBENCH_SCHED"),
            Bad::env(long, &[("TIMING_O", "-1")], "TIMING_O"),
            Bad::env(long, &[("TIMING_O", "abc")], "TIMING_O"),
            Bad::env(long, &[("TIMING_O", "nan")], "TIMING_O"),
        ],
    );
}

/// Report paths, placement, the sysfs root and the noise threshold: refused before the
/// run (each row asks for a run of a day, so a check made only after measuring would show
/// as the 30 s hang guard).
#[test]
fn outputs_placement_and_environment_are_refused_before_the_run() {
    let dir = temp_dir("dhry-cli", "out-dir");
    let dir_name = dir.display().to_string();
    let into_dir = format!("--json={dir_name}");
    let allowed = benchmp::sys::affinity::allowed_cpus().expect("allowed CPUs");
    let too_many = (allowed.len() + 1).to_string();
    let long: &[&str] = &["--time", "86400"];
    check_bad_inputs(
        &dhry(),
        &[
            Bad::args(
                &["--json=/nonexistent/dir/x.json", "--time", "86400"],
                "/nonexistent/dir/x.json",
            ),
            Bad::args(&["--csv=/proc/x", "--time", "86400"], "/proc/x"),
            Bad::args(&["--json=", "--time", "86400"], "--json"),
            Bad::args(&[&into_dir, "--time", "86400"], &dir_name),
            Bad::args(&["-P", &too_many, "--time", "86400"], "CPU"),
            Bad::args(&["--cpus", "0,0", "--time", "86400"], "0,0"),
            Bad::env(
                long,
                &[("BENCHMP_SYSFS_ROOT", "/nonexistent")],
                "/nonexistent",
            ),
            Bad::args(&["--noise-lost=-5", "--time", "86400"], "--noise-lost"),
            Bad::args(&["--noise-lost", "nan", "--time", "86400"], "--noise-lost"),
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn json_run_parses_and_passes_verification() {
    let o = ok(&["--runs", "1000", "--json"]);
    let j = parse_json(&o);
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
    let Some(j) = dhry().json_together(&["-P", "2", "--runs", "100000"]) else {
        return;
    };
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
    let j = json(&["--variant", "pack-inline", "--runs", "100000"]);
    assert_verified(&j, 1, 100_000, "pack-inline");
    assert_eq!(j["extra"]["calls_per_run"], 9);
    assert!(
        j["extra"]["compilation_model"]
            .as_str()
            .unwrap()
            .contains("pack-inline")
    );
    assert_eq!(j["measurements"][0]["params"]["variant"], "pack-inline");
    let Some(j) =
        dhry().json_together(&["-P", "2", "--variant", "pack-inline", "--runs", "100000"])
    else {
        return;
    };
    assert_verified(&j, 2, 100_000, "pack-inline");
}

#[test]
fn a_duration_run_loads_every_child() {
    let Some(j) = dhry().json_together(&["-P", "2", "--duration", "0.2"]) else {
        return;
    };
    let e = &j["extra"];
    assert_eq!(e["plan"]["about_seconds"], 0.2);
    let runs = e["runs"].as_u64().unwrap();
    assert!(runs > 0);
    assert_verified(&j, 2, runs, "strict");
    assert_eq!(e["attempts"], 1);
}

#[test]
fn given_mhz_gives_dmips_per_mhz() {
    let j = json(&["--runs", "1000", "--mhz", "1000"]);
    let c = &j["extra"]["children"][0];
    assert_eq!(c["clock"]["mhz"], 1000.0);
    assert_eq!(c["clock"]["source"], "option");
    assert_eq!(c["dmips_per_mhz_is_estimate"], false);
    let per_mhz = c["dmips_per_mhz"].as_f64().unwrap();
    assert!((per_mhz * 1000.0 - c["dmips"].as_f64().unwrap()).abs() < 1e-6);
}

/// Without --mhz each child's DMIPS/MHz divides by the clock it probed around its loop (on
/// the architectures with a probe), labelled an estimate, and the run keeps both probes. A
/// probe may say the clock is unknown on some machine (its chains disagreed: a busy sibling
/// thread, a core that shortcuts one): then there is no DMIPS/MHz and the reason is kept.
#[test]
fn by_default_dmips_per_mhz_divides_by_the_probed_clock() {
    let j = json(&["--runs", "1000"]);
    let c = &j["extra"]["children"][0];
    let probed = &j["measurements"][0]["children"][0]["clock"];
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        assert!(probed.is_null());
        return;
    }
    let known = |p: &serde_json::Value| p["mhz"].as_f64();
    let (Some(before), Some(after)) = (known(&probed["before"]), known(&probed["after"])) else {
        let why = [&probed["before"], &probed["after"]]
            .iter()
            .find_map(|p| p["unknown"].as_str())
            .unwrap_or_else(|| panic!("a probe without a clock says why: {probed}"));
        assert!(!why.is_empty(), "{probed}");
        assert!(c["dmips_per_mhz"].is_null(), "{c}");
        assert_ne!(c["clock"]["source"], "probe", "{c}");
        return;
    };
    assert!(before > 0.0 && after > 0.0, "{probed}");
    assert_eq!(c["clock"]["source"], "probe");
    let mhz = c["clock"]["mhz"].as_f64().unwrap();
    assert!(
        (mhz - (before + after) / 2.0).abs() < 1e-9 * mhz,
        "{mhz} {probed}"
    );
    assert_eq!(c["dmips_per_mhz_is_estimate"], true);
    let per_mhz = c["dmips_per_mhz"].as_f64().unwrap();
    let dmips = c["dmips"].as_f64().unwrap();
    assert!((per_mhz * (before + after) / 2.0 - dmips).abs() < 1e-6 * dmips);
}

#[test]
fn text_run_prints_the_reference_block() {
    let text = stdout(&ok(&["--runs", "1000"]));
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
    let Some(o) = dhry().ok_together(&["-P", "2", "--runs", "20000"]) else {
        return;
    };
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
    let Some(o) = dhry().ok_together(&[
        "-P",
        "2",
        "--runs",
        "20000",
        "--stderr",
        "--aggregate",
        "sum",
    ]) else {
        return;
    };
    // Only notes (noise warnings) may go to the other stream.
    assert!(
        stdout(&o).lines().all(|l| l.starts_with("dhry: ")),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("Total (--aggregate cluster):"),
        "sum is a second name of cluster"
    );
}

#[test]
fn csv_run_is_a_header_and_one_row_per_child() {
    for (p, rows) in [("1", 1), ("2", 2)] {
        let Some(o) = dhry().ok_together(&["-P", p, "--runs", "1000", "--csv"]) else {
            continue;
        };
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
    let dir = temp_dir("dhry-cli", "files");
    let (json, csv) = (dir.join("r.json"), dir.join("r.csv"));
    let o = ok(&[
        "--runs",
        "1000",
        &format!("--json={}", json.display()),
        &format!("--csv={}", csv.display()),
    ]);
    assert!(stdout(&o).contains("Execution starts, 1000 runs through Dhrystone"));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["extra"]["verification_passed"], true);
    let c = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(c.lines().count(), 2);
    // JSON to a file, CSV to stdout: no text.
    let o = ok(&[
        "--runs",
        "1000",
        &format!("--json={}", json.display()),
        "--csv",
    ]);
    assert!(stdout(&o).starts_with("tool,measurement,"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Holds before and after benchmp checks output paths up front (exit status 1 after the
/// run today, 2 before it then; the ignored contract test wants the latter).
#[test]
fn an_unwritable_report_file_is_an_error_naming_it() {
    let o = dhry().run(&["--runs", "10", "--json=/nonexistent-dir/r.json"]);
    assert!(matches!(o.status.code(), Some(1 | 2)), "{o:?}");
    let err = stderr(&o);
    assert!(
        err.starts_with("dhry: ") && err.contains("/nonexistent-dir/r.json"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_short_target_time_is_reached() {
    let j = json(&["--time", "0.05"]);
    let e = &j["extra"];
    assert_eq!(e["verification_passed"], true);
    assert_eq!(e["plan"]["at_least_seconds"], 0.05);
    let attempts = e["attempts"].as_u64().unwrap();
    assert!((1..=4).contains(&attempts));
    assert!(e["children"][0]["elapsed_ns"].as_u64().unwrap() >= 50_000_000 || attempts == 4);
    assert_eq!(e["probes"].as_array().unwrap().len(), 1);
}

/// A `benchmp ab` worker asked by its driver for 2^64 - 1 iterations (a driver's mistake, or
/// another build's): refused in one line, exit 1, never a panic in the measuring child.
#[test]
fn a_worker_asked_for_more_iterations_than_a_repetition_can_run_refuses() {
    use std::io::{BufRead, BufReader, Write};
    use std::os::fd::AsRawFd;
    let (to_r, to_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
    let (from_r, from_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
    let mut cmd = dhry().command(&["--runs", "1000", "--cpus", "0"]);
    cmd.env("BENCHMP_AB_FDS", "3,4")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    benchmp::sys::process::pass_fds(&mut cmd, to_r.as_raw_fd(), from_w.as_raw_fd(), false);
    let child = cmd.spawn().unwrap();
    drop((to_r, from_w));
    let mut to = std::fs::File::from(to_w);
    let mut from = BufReader::new(std::fs::File::from(from_r));
    let mut said = Vec::new();
    // Hello, then the measurement's Ready.
    while said.len() < 2 {
        let mut line = String::new();
        if from.read_line(&mut line).unwrap() == 0 {
            break;
        }
        said.push(line);
    }
    assert!(said.len() == 2 && said[1].contains("ready"), "{said:?}");
    writeln!(to, "{{\"step\":{{\"iterations\":{}}}}}", u64::MAX).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("iterations per child"), "{err}");
}
