//! Command-line behaviour of the `coremark` binary: help, bad input (exit 2 with one line),
//! short runs (exit 1 with the reference's error line) and the CRCs in each output format.

use std::process::Output;

use benchmp::testing::{Bad, Tool, check_bad_inputs, parse_json, stderr, stdout, temp_dir};

/// The binary with the calibration fixed and no placement inherited from the shell.
fn coremark() -> Tool {
    Tool::new("coremark", env!("CARGO_BIN_EXE_coremark"))
}

/// Runs a measurement too short to be a valid result: the report is complete but the exit
/// status is 1, with the reason on stderr.
fn short_run(args: &[&str]) -> Output {
    short_run_together(args).expect("one child never runs apart")
}

/// [`short_run`] of several contexts, tried again while they ran apart (a busy machine);
/// `None` when every try was refused that way (the documented outcome, checked instead).
fn short_run_together(args: &[&str]) -> Option<Output> {
    let mut o = coremark().run(args);
    for _ in 1..benchmp::testing::TOGETHER_TRIES {
        if !benchmp::testing::ran_apart(&o) {
            break;
        }
        o = coremark().run(args);
    }
    if benchmp::testing::ran_apart(&o) {
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        return None;
    }
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(
        err.contains("coremark: result not valid: "),
        "{args:?}: {err}"
    );
    Some(o)
}

/// [`short_run_together`] with `--json` first, and the report it printed.
fn short_json(args: &[&str]) -> Option<(serde_json::Value, String)> {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let o = short_run_together(&all)?;
    Some((parse_json(&o), stderr(&o)))
}

#[test]
fn help_exits_zero_and_documents_the_options() {
    let text = stdout(&coremark().ok(&["--help"]));
    for option in ["--seeds", "--size", "--iterations", "--json", "--csv"] {
        assert!(text.contains(option), "help lacks {option}");
    }
    assert!(text.contains("not CoreMark scores"));
}

// Environment and placement rows end in `--iterations 4000000000`, a run of days: an error
// that only comes once children run then shows as a hang ([`Tool::fails`] gives up after
// 30 s) instead of passing after the fact.

/// The reliability contract: every bad argument or environment value coremark reads is one
/// line `coremark: ...` on stderr, exit status 2, nothing on stdout, before anything is
/// measured. coremark times a fixed iteration count, so it reads neither ENOUGH, LOOP_O nor
/// the calibration cache (BENCHMP_CALIBRATION): those are not bad input here.
#[test]
fn bad_input_exits_two_with_one_line() {
    let offline = benchmp::topology::Topology::detect()
        .expect("the machine's topology")
        .online()
        .last()
        .map_or(4095, |c| c + 1)
        .to_string();
    let on_offline = ["--cpus", offline.as_str(), "--iterations", "4000000000"];
    let long: &[&str] = &["--iterations", "4000000000"];
    check_bad_inputs(
        &coremark(),
        &[
            // Seeds, size and iterations.
            Bad::args(&["--seeds", "1,2,x"], "invalid number \"x\""),
            Bad::args(&["--seeds", "1,2"], "three numbers"),
            Bad::args(&["--seeds", "1,2,3,4"], "three numbers"),
            Bad::args(&["--seeds", ""], "three numbers"),
            Bad::args(&["--seeds", "0x,0,0"], "invalid number \"0x\""),
            Bad::args(&["--seeds", "70000,0,0"], "16 bits"),
            Bad::args(&["--seeds", "-32769,0,0"], "16 bits"),
            Bad::args(&["--size", "0"], "too small"),
            Bad::args(&["--size", "359"], "too small"),
            Bad::args(&["--size", "12q"], "invalid number"),
            Bad::args(&["--size", "1G"], "invalid number"),
            Bad::args(&["--size", ""], "invalid number"),
            Bad::args(&["--size", "64M"], "too large"),
            Bad::args(&["--size", "-1"], "invalid data size \"-1\""),
            Bad::args(&["--iterations", "-3"], "invalid iteration count \"-3\""),
            Bad::args(&["--iterations", "ten"], "invalid number \"ten\""),
            Bad::args(&["--iterations", "4294967296"], "invalid iteration count"),
            Bad::args(&["--iterations", "5000M"], "invalid iteration count"),
            // Outputs and stray words.
            Bad::args(&["--json", "--csv"], "cannot both write to stdout"),
            Bad::args(&["--json", "r.json"], "'r.json'"),
            Bad::args(&["--aggregate", "mean"], "--aggregate"),
            Bad::args(&["--no-such-option"], "--no-such-option"),
            Bad::args(&["extra"], "'extra'"),
            // Placement.
            Bad::args(&["-P", "0"], "--parallel"),
            Bad::args(&["--cpus", "3-1"], "runs backwards"),
            Bad::args(&["--timeout", "-1"], "'-1'"),
            Bad::args(&on_offline, "not online"),
            Bad::args(
                &["--sched", "FASTEST_FIRST", "--iterations", "4000000000"],
                "FASTEST_FIRST",
            ),
            Bad::args(
                &["--sched", "CUSTOM", "--iterations", "4000000000"],
                "empty CPU list",
            ),
            // Environment.
            Bad::env(long, &[("LMBENCH_SCHED", "FASTEST_FIRST")], "FASTEST_FIRST"),
            Bad::env(long, &[("LMBENCH_SCHED", "CUSTOM")], "LMBENCH_SCHED"),
            Bad::env(long, &[("TIMING_O", "-1")], "TIMING_O"),
            Bad::env(long, &[("TIMING_O", "abc")], "TIMING_O"),
        ],
    );
}

/// Report paths, placement, the sysfs root and the noise threshold: refused before the
/// run (each row asks for a run of a day, so a check made only after measuring would show
/// as the 30 s hang guard).
#[test]
fn outputs_placement_and_environment_are_refused_before_the_run() {
    let dir = temp_dir("coremark-cli", "out-dir");
    let dir_name = dir.display().to_string();
    let into_dir = format!("--json={dir_name}");
    let allowed = benchmp::sys::affinity::allowed_cpus().expect("allowed CPUs");
    let too_many = (allowed.len() + 1).to_string();
    let long: &[&str] = &["--iterations", "4000000000"];
    check_bad_inputs(
        &coremark(),
        &[
            Bad::args(
                &[
                    "--json=/nonexistent/dir/x.json",
                    "--iterations",
                    "4000000000",
                ],
                "/nonexistent/dir/x.json",
            ),
            Bad::args(&["--csv=/proc/x", "--iterations", "4000000000"], "/proc/x"),
            Bad::args(&["--json=", "--iterations", "4000000000"], "--json"),
            Bad::args(&[&into_dir, "--iterations", "4000000000"], &dir_name),
            Bad::args(&["-P", &too_many, "--iterations", "4000000000"], "CPU"),
            Bad::args(&["--cpus", "0,0", "--iterations", "4000000000"], "0,0"),
            Bad::env(
                long,
                &[("BENCHMP_SYSFS_ROOT", "/nonexistent")],
                "/nonexistent",
            ),
            Bad::args(
                &["--noise-lost=-5", "--iterations", "4000000000"],
                "--noise-lost",
            ),
            Bad::args(
                &["--noise-lost", "nan", "--iterations", "4000000000"],
                "--noise-lost",
            ),
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn short_json_run_shows_correct_crcs_and_fails() {
    // A 10-iteration run cannot last 10 s: the result is reported but not valid.
    let (doc, err) = short_json(&["--iterations", "10"]).expect("one child");
    assert!(err.contains("at least 10 s"), "{err:?}");
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
    // 100 iterations take milliseconds: valid CRCs, but too short, so exit status 1.
    let Some((doc, err)) = short_json(&["-P", "2", "--iterations", "100"]) else {
        return;
    };
    assert!(err.contains("timed runs under 10 s"), "{err}");
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
    let Some(o) = short_run_together(&["-P", "2", "--seeds", "1,0,0", "--iterations", "3"]) else {
        return;
    };
    let text = stdout(&o);
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
    assert!(lines[end + 2..].iter().any(|l| l.starts_with("  system: ")));
    assert!(lines.last().unwrap().starts_with("  timed together: "));
}

#[test]
fn json_to_a_file_keeps_the_text() {
    let dir = temp_dir("coremark-cli", "json-file");
    let path = dir.join("r.json");
    let arg = format!("--json={}", path.display());
    let out = short_run(&["--iterations", "2", &arg]);
    assert!(stdout(&out).contains("[0]crcfinal      : 0x72be"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(doc["extra"]["results"][0]["crcfinal"], "0x72be");
}

#[test]
fn short_text_run_prints_the_reference_error_lines() {
    let text = stdout(&short_run(&["--seeds", "1,0,0", "--iterations", "3"]));
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
    let text = stdout(&short_run(&["--seeds", "1,1,1", "--iterations", "1"]));
    assert!(!text.contains("run parameters for coremark"));
    assert!(text.contains("seedcrc          : 0x802a"));
    assert!(text.contains("[0]crclist       : 0x48be"));
    assert!(text.contains("Cannot validate operation for these seed values"));
    assert!(!text.contains("Correct operation validated"));
}

#[test]
fn csv_profile_run_is_one_row_per_child() {
    let text = stdout(&short_run(&[
        "--seeds",
        "8,8,8",
        "--size",
        "1200",
        "--iterations",
        "3",
        "--csv",
    ]));
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
    let text = stdout(&short_run(&[
        "--seeds",
        "0x3415,0x3415,0x66",
        "--size",
        "6000",
        "--iterations",
        "1",
    ]));
    assert!(text.starts_with("6k validation run parameters for coremark.\n"));
    assert!(!text.contains("ERROR! list crc"), "{text}");
    assert!(text.contains("[0]crclist       : 0x3340"));
    assert!(text.contains("[0]crcmatrix     : 0x1199"));
    assert!(text.contains("[0]crcstate      : 0x39bf"));
}

#[test]
fn negative_seeds_and_reference_numbers_are_read() {
    // Seeds as the reference takes them, negative and hexadecimal; an iteration count in
    // its number syntax.
    let (doc, _) = short_json(&["--seeds", "-1,-1,-1", "--iterations", "0x3"]).expect("one child");
    let v = &doc["extra"];
    assert_eq!(v["seeds"]["seed1"], -1);
    assert_eq!(v["seeds"]["seed3"], -1);
    assert_eq!(v["iterations_per_context"], 3);
    assert!(v["run_type"].is_null());
    let (doc, _) =
        short_json(&["--seeds", "65535,0xffff,102", "--iterations", "1"]).expect("one child");
    assert_eq!(doc["extra"]["seeds"]["seed2"], -1, "65535 is the 16-bit -1");
}
