//! `benchmp efficiency` end to end on a copy of the phone8 fixture, two of its clusters (CPUs
//! 0-1 with `scaling_available_frequencies`, CPU 7 with only `stats/time_in_state`), with
//! stand-in tools: shell scripts that pin the policy of their first CPU as a tool does
//! (written back on exit and on SIGINT or SIGTERM), then write a report whose figure and power
//! record are known functions of the clock and the CPU count, so every figure, energy and
//! Energy-Model cost of the sweep is checked exactly. Every pinned file is checked back after
//! the sweep, after SIGINT, and after a stand-in that dies with its pin in force.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use benchmp::testing::{Bad, Tool, check_bad_inputs, stderr, stdout, temp_dir};

const BIN: &str = env!("CARGO_BIN_EXE_benchmp");
/// A bound on anything a stand-in sweep does: only a hang reaches it.
const HANG: Duration = Duration::from_secs(120);

/// The stand-in of dhry and coremark. It logs `TOOL MHZ CPUS PID` to `$EFF_LOG`, pins its
/// first CPU's policy (both limits to the clock) and writes them back on exit, SIGINT and
/// SIGTERM; `EFF_HANG=TOOL:MHZ` makes that run wait for a signal, `EFF_CRASH=TOOL:MHZ:CPUS`
/// makes it die of SIGKILL with its pin in force. Its report: dhry 3 DMIPS per MHz per CPU at
/// CPUs × MHz² / 4e6 W above an idle baseline of 0.1 W; coremark 5 iterations/s per MHz per
/// CPU at CPUs × MHz² / 2e6 W; the hottest zone at 30 + MHz / 100 C.
const STANDIN: &str = include_str!("fixtures/efficiency/standin.sh");

fn benchmp() -> Tool {
    Tool::new("benchmp", BIN)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A folder with the stand-in as dhry and coremark.
fn standins(test: &str) -> benchmp::testing::TempDir {
    let d = temp_dir("benchmp-eff-bin", test);
    for t in ["dhry", "coremark"] {
        let p = d.join(t);
        std::fs::write(&p, STANDIN).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    d
}

/// policy0's frequencies (CPUs 0-1, its list) and policy7's (CPU 7, its time_in_state).
const POLICY0: [u64; 4] = [307_200, 1_017_600, 1_804_800, 2_265_600];
const POLICY7: [u64; 4] = [480_000, 1_171_200, 2_054_400, 3_302_400];

/// A copy of phone8 whose policy0 lists its frequencies and policy7 keeps time_in_state.
fn phone(test: &str) -> benchmp::testing::TempDir {
    let root = benchmp::testing::fixture_copy("phone8", &format!("eff-{test}"));
    let policies = root.join("devices/system/cpu/cpufreq");
    let list: Vec<String> = POLICY0.iter().map(u64::to_string).collect();
    std::fs::write(
        policies.join("policy0/scaling_available_frequencies"),
        list.join(" ") + " \n",
    )
    .unwrap();
    std::fs::create_dir_all(policies.join("policy7/stats")).unwrap();
    let tis: String = POLICY7
        .iter()
        .enumerate()
        .map(|(i, k)| format!("{k} {}\n", i * 10))
        .collect();
    std::fs::write(policies.join("policy7/stats/time_in_state"), tis).unwrap();
    root
}

/// Every file of the tree's cpufreq policies with what it holds.
fn policy_files(root: &Path) -> Vec<(PathBuf, String)> {
    let mut v = Vec::new();
    let dir = root.join("devices/system/cpu/cpufreq");
    for p in std::fs::read_dir(&dir).unwrap() {
        let p = p.unwrap().path();
        for f in std::fs::read_dir(&p).unwrap() {
            let f = f.unwrap().path();
            if f.is_file() {
                v.push((f.clone(), std::fs::read_to_string(&f).unwrap()));
            }
        }
    }
    v.sort();
    v
}

/// The tool, under the tree, with the stand-ins' log and a registry of its own.
fn sweep(root: &Path, log: &Path) -> Tool {
    benchmp()
        .with_env("BENCHMP_SYSFS_ROOT", Some(s(root)))
        .with_env("EFF_LOG", Some(s(log)))
        .with_env(
            "SOCBENCH_STATE_DIR",
            Some(s(&log.parent().unwrap().join("state"))),
        )
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

/// What the stand-in reports for `tool` at `khz` on `n` CPUs: (figure, net W).
fn standin_figures(tool: &str, khz: u64, n: usize) -> (f64, f64) {
    let m = khz as f64 / 1000.0;
    let n = n as f64;
    match tool {
        "dhry" => (m * 3.0 * n, n * m * m / 4e6),
        _ => (m * 5.0 * n, n * m * m / 2e6),
    }
}

#[test]
fn a_sweep_of_two_clusters_gives_each_step_its_figure_power_and_cost() {
    let root = phone("whole");
    let bin = standins("whole");
    let work = temp_dir("benchmp-eff", "whole");
    let log = work.join("log");
    let out = work.join("out");
    let before = policy_files(&root);
    let t = sweep(&root, &log);
    let args = [
        "efficiency",
        "--cpus",
        "0-1,7",
        "--bin-dir",
        s(&bin),
        "--out",
        s(&out),
    ];
    let listed = stdout(&t.ok(&[&args[..], &["--list"]].concat()));
    assert_eq!(listed.lines().count(), 24, "{listed}");
    assert!(
        listed.lines().any(|l| l
            == format!(
                "c0-dhry-all-1804800|{}|--cpus 0-1 --pin-freq 1804.8 --json={{json}}",
                bin.join("dhry").display()
            )),
        "{listed}"
    );
    assert!(!out.exists(), "--list made the folder");
    let o = t.run_bounded(&args, HANG);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    assert_eq!(
        policy_files(&root),
        before,
        "a pinned file was not written back"
    );

    // Every step ran with its clock and CPUs.
    let ran: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
        .collect();
    assert_eq!(ran.len(), 24, "{ran:?}");
    assert_eq!(ran[0], "dhry 307.2 0");
    assert_eq!(ran[1], "dhry 307.2 0-1");
    assert_eq!(ran[3], "coremark 307.2 0-1");
    assert_eq!(ran[16], "dhry 480 7");
    assert_eq!(ran[23], "coremark 3302.4 7");

    let doc = json(&out.join("efficiency.json"));
    assert!(doc["incomplete"].is_null(), "{}", doc["incomplete"]);
    let clusters = doc["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 2);
    assert_eq!(clusters[0]["from"], "scaling_available_frequencies");
    assert_eq!(clusters[1]["from"], "time_in_state");
    assert_eq!(clusters[1]["policy"], "policy7");
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 24);
    for st in steps {
        let label = st["label"].as_str().unwrap();
        let tool = label.split('-').nth(1).unwrap();
        let khz = st["khz"].as_u64().unwrap();
        let n = st["cpus"].as_array().unwrap().len();
        let (fig, w) = standin_figures(tool, khz, n);
        let mhz = khz as f64 / 1000.0;
        assert_eq!(st["status"], "ok", "{st}");
        assert!(st["not_back"].as_array().unwrap().is_empty(), "{st}");
        let perf = st["performance"]["value"].as_f64().unwrap();
        assert!(close(perf, fig), "{label}: {perf} != {fig}");
        assert!(
            close(st["per_mhz"]["value"].as_f64().unwrap(), fig / mhz),
            "{st}"
        );
        assert!(
            close(st["power"]["net_mean_w"].as_f64().unwrap(), w),
            "{st}"
        );
        assert_eq!(st["power"]["source"], "odpm:S4M_VDD_CPUCL0");
        assert!(close(
            st["power"]["max_temp_c"].as_f64().unwrap(),
            30.0 + mhz / 100.0
        ));
        let epw = &st["energy_per_work"];
        assert!(close(epw["value"].as_f64().unwrap(), w / fig * 1e6), "{st}");
        let unit = if tool == "dhry" {
            "µJ/(DMIPS·s)"
        } else {
            "µJ/iterations"
        };
        assert_eq!(epw["unit"], unit, "{st}");
    }

    // The Energy-Model tables: one CPU's net power in µW, cost = power × fmax / freq.
    let models = doc["energy_model"].as_array().unwrap();
    assert_eq!(models.len(), 4, "{models:?}");
    let em_text = std::fs::read_to_string(out.join("energy_model.txt")).unwrap();
    for m in models {
        let (fmax, freqs) = if m["cluster"] == 0 {
            (2_265_600u64, POLICY0)
        } else {
            (3_302_400, POLICY7)
        };
        assert_eq!(m["max_freq_khz"], fmax);
        let tool = m["command"].as_str().unwrap();
        let states = m["states"].as_array().unwrap();
        assert_eq!(states.len(), 4);
        for (st, khz) in states.iter().zip(freqs) {
            let (_, w) = standin_figures(tool, khz, 1);
            let power = (w * 1e6).round() as u64;
            let cost = power * fmax / khz;
            assert_eq!(st["frequency_khz"], khz);
            assert_eq!(st["power_uw"], power, "{m}");
            assert_eq!(st["cost"], cost, "{m}");
            let row = format!("ps:{khz} {khz} {power} {cost}");
            assert!(
                em_text
                    .lines()
                    .any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == row),
                "no row {row} in:\n{em_text}"
            );
        }
    }
    // At fmax the cost is the power itself.
    assert_eq!(
        models[0]["states"][3]["cost"],
        models[0]["states"][3]["power_uw"]
    );

    // The curves the plot draws: per cluster, command and placement, frequency ascending.
    let curves = doc["curves"].as_array().unwrap();
    let keys: Vec<String> = curves
        .iter()
        .map(|c| format!("{} {} {}", c["cluster"], c["command"], c["placement"]))
        .collect();
    assert_eq!(
        keys,
        [
            "0 \"dhry\" \"one\"",
            "0 \"dhry\" \"all\"",
            "0 \"coremark\" \"one\"",
            "0 \"coremark\" \"all\"",
            "3 \"dhry\" \"one\"",
            "3 \"dhry\" \"all\"",
            "3 \"coremark\" \"one\"",
            "3 \"coremark\" \"all\"",
        ]
    );
    // CPU 7 alone: its one run is both of its curves.
    assert_eq!(curves[4]["points"], curves[5]["points"]);
    let all = &curves[1];
    for (p, khz) in all["points"].as_array().unwrap().iter().zip(POLICY0) {
        let (fig, w) = standin_figures("dhry", khz, 2);
        assert!(close(p["mhz"].as_f64().unwrap(), khz as f64 / 1000.0));
        assert!(close(p["power_w"].as_f64().unwrap(), w));
        assert!(close(p["performance"].as_f64().unwrap(), fig));
    }

    // The table, the CSV and the folder's record.
    let table = std::fs::read_to_string(out.join("efficiency.txt")).unwrap();
    assert!(table.contains("cluster 0: CPUs 0-1 (policy0), 307.2-2265.6 MHz (4 steps); power: odpm:S4M_VDD_CPUCL0, net of the idle baseline"), "{table}");
    assert!(
        table.lines().any(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() > 6 && w[..6] == ["1804.8", "dhry", "0-1", "10,829", "DMIPS", "6.00"]
        }),
        "{table}"
    );
    assert!(stdout(&o).contains(&table), "the table is not printed");
    let csv = std::fs::read_to_string(out.join("efficiency.csv")).unwrap();
    assert_eq!(csv.lines().count(), 25, "{csv}");
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .starts_with("label,cluster,policy,command,placement,cpus,freq_khz,mhz")
    );
    let record = json(&out.join(".socbench-efficiency.json"));
    for f in [
        "efficiency.json",
        "efficiency.csv",
        "efficiency.txt",
        "energy_model.txt",
        "steps/",
    ] {
        assert!(
            record["made"].as_array().unwrap().iter().any(|m| m == f),
            "{f}: {record}"
        );
    }
    assert!(out.join("steps/c3-coremark-one-3302400.json").is_file());

    // The plot: a picture of the curves, a file the sweep recorded as its own.
    let plot = std::process::Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/plot_efficiency.py"))
        .arg(&out)
        .output();
    match plot {
        Ok(p) if p.status.success() => {
            assert!(out.join("efficiency.png").is_file());
            let record = json(&out.join(".socbench-efficiency.json"));
            assert!(
                record["made"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|m| m == "efficiency.png"),
                "{record}"
            );
        }
        Ok(p) if String::from_utf8_lossy(&p.stderr).contains("No module named") => {
            benchmp::testing::skip(
                "a_sweep_of_two_clusters_gives_each_step_its_figure_power_and_cost",
                "no matplotlib for the plot (scripts/requirements.txt)",
            );
        }
        Ok(p) => panic!(
            "plot_efficiency.py failed: {}",
            String::from_utf8_lossy(&p.stderr)
        ),
        Err(e) => {
            benchmp::testing::skip(
                "a_sweep_of_two_clusters_gives_each_step_its_figure_power_and_cost",
                &format!("no python3 here ({e})"),
            );
        }
    }

    // --force takes the sweep's own folder again; a folder of anything else is refused.
    let o = t.run_bounded(
        &[&args[..], &["--force", "--freqs", "2265.6,3302.4"]].concat(),
        HANG,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!out.join("steps/c3-coremark-one-480000.json").exists());
    assert_eq!(
        json(&out.join("efficiency.json"))["steps"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir_all(&bin);
    let _ = std::fs::remove_dir_all(root.parent().unwrap());
}

/// True while `pid` runs (a zombie has ended).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

/// Waits (bounded) until the log has a line starting with `prefix`; its pid.
fn logged(log: &Path, prefix: &str) -> i32 {
    let deadline = Instant::now() + HANG;
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(l) = text.lines().find(|l| l.starts_with(prefix)) {
            return l.rsplit_once(' ').unwrap().1.parse().unwrap();
        }
        assert!(Instant::now() < deadline, "{prefix} never ran: {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigint_stops_the_running_tool_keeps_what_was_measured_and_the_pin_is_back() {
    let root = phone("sigint");
    let bin = standins("sigint");
    let work = temp_dir("benchmp-eff", "sigint");
    let log = work.join("log");
    let out = work.join("out");
    let before = policy_files(&root);
    let mut child = sweep(&root, &log)
        .with_env("EFF_HANG", Some("dhry:1017.6"))
        .command(&[
            "efficiency",
            "--cpus",
            "0-1",
            "--freqs",
            "307.2,1017.6",
            "--bin-dir",
            s(&bin),
            "--out",
            s(&out),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tool = logged(&log, "dhry 1017.6 0 ");
    // Pinned, then waiting: the policy holds the step's clock.
    let max = root.join("devices/system/cpu/cpufreq/policy0/scaling_max_freq");
    let deadline = Instant::now() + HANG;
    while std::fs::read_to_string(&max).unwrap().trim() != "1017600" {
        assert!(Instant::now() < deadline, "the stand-in never pinned");
        std::thread::sleep(Duration::from_millis(10));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let deadline = Instant::now() + HANG;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the sweep did not end after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(!alive(tool), "the running tool was left running");
    assert_eq!(
        policy_files(&root),
        before,
        "a pinned file was not written back"
    );
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("benchmp: efficiency sweep interrupted by SIGINT; the running step c0-dhry-one-1017600 was stopped")
            && last.contains("4 of 8 steps measured"),
        "{err}"
    );
    let doc = json(&out.join("efficiency.json"));
    assert_eq!(doc["incomplete"]["signal"], "SIGINT");
    assert_eq!(doc["incomplete"]["running"], "c0-dhry-one-1017600");
    assert_eq!(doc["incomplete"]["measured"], 4);
    assert_eq!(doc["incomplete"]["of"], 8);
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 5);
    assert!(steps[..4].iter().all(|s| s["status"] == "ok"));
    assert_eq!(steps[4]["status"], "interrupted");
    assert_eq!(steps[4]["exit"], 130);
    // What was measured is all there: the 307.2 MHz curve points and EM states.
    assert_eq!(
        doc["energy_model"][0]["states"].as_array().unwrap().len(),
        1
    );
    let table = std::fs::read_to_string(out.join("efficiency.txt")).unwrap();
    assert!(
        table.contains("incomplete: 4 of 8 steps measured (stopped by SIGINT)"),
        "{table}"
    );
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir_all(&bin);
    let _ = std::fs::remove_dir_all(root.parent().unwrap());
}

#[test]
fn a_tool_that_dies_with_its_pin_in_force_is_named_and_the_pin_written_back() {
    let root = phone("crash");
    let bin = standins("crash");
    let work = temp_dir("benchmp-eff", "crash");
    let log = work.join("log");
    let out = work.join("out");
    let before = policy_files(&root);
    let o = sweep(&root, &log)
        .with_env("EFF_CRASH", Some("coremark:1017.6:0"))
        .run_bounded(
            &[
                "efficiency",
                "--cpus",
                "0-1",
                "--freqs",
                "307.2,1017.6",
                "--bin-dir",
                s(&bin),
                "--out",
                s(&out),
            ],
            HANG,
        );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(
        policy_files(&root),
        before,
        "a pinned file was not written back"
    );
    assert!(
        err.contains("benchmp: efficiency: after c0-coremark-one-1017600, the policy was not back: policy0: scaling_min_freq 1017600 (was 307200, written back), scaling_max_freq 1017600 (was 2265600, written back)"),
        "{err}"
    );
    assert!(
        stdout(&o).contains("   FAILED (exit 137")
            && stdout(&o).contains("child 0 (CPU 0) was killed by SIGKILL"),
        "{}",
        stdout(&o)
    );
    let doc = json(&out.join("efficiency.json"));
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 8, "the sweep went on after the crash");
    let crashed = &steps[6];
    assert_eq!(crashed["label"], "c0-coremark-one-1017600");
    assert_eq!(
        (crashed["status"].as_str(), crashed["exit"].as_i64()),
        (Some("failed"), Some(137))
    );
    let nb = crashed["not_back"].as_array().unwrap();
    assert_eq!(nb.len(), 2, "{crashed}");
    assert!(nb.iter().all(|f| f["written_back"] == true), "{crashed}");
    assert_eq!(steps[7]["status"], "ok", "the next step ran at its own pin");
    assert!(doc["not_back"].as_array().unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir_all(&bin);
    let _ = std::fs::remove_dir_all(root.parent().unwrap());
}

#[test]
fn what_cannot_be_swept_is_refused_in_one_line() {
    let root = phone("refusals");
    let bin = standins("refusals");
    let work = temp_dir("benchmp-eff", "refusals");
    let out = work.join("out");
    let plain = benchmp::testing::fixture_copy("phone8", "eff-refusals-plain");
    let vm = benchmp::testing::fixture_copy("vm2", "eff-refusals-vm");
    let args = |extra: &[&str]| -> Vec<String> {
        ["efficiency", "--bin-dir", s(&bin), "--out", s(&out)]
            .iter()
            .chain(extra)
            .map(|a| a.to_string())
            .collect()
    };
    let strs = |v: &[String]| -> Vec<String> { v.to_vec() };
    let case = |extra: &[&str], env: &str, says: &str| {
        let a = strs(&args(extra));
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        Bad::env(&a, &[("BENCHMP_SYSFS_ROOT", env)], says)
    };
    std::fs::create_dir_all(work.join("full")).unwrap();
    std::fs::write(work.join("full/x"), "mine").unwrap();
    let full = work.join("full");
    let full_args = [
        "efficiency",
        "--cpus",
        "0-1",
        "--bin-dir",
        s(&bin),
        "--out",
        s(&full),
    ];
    check_bad_inputs(
        &benchmp(),
        &[
            case(&[], s(&vm), "CPU 0 has no cpufreq").exits(3),
            case(&["--cpus", "0"], s(&plain), "lists no frequencies").exits(3),
            case(
                &["--cpus", "0", "--freqs", "5000"],
                s(&plain),
                "--freqs 5000: policy0 runs from 307.2 to 2265.6 MHz",
            ),
            case(
                &["--freqs", "1234"],
                s(&root),
                "--freqs: cluster 0 (CPUs 0-1, policy0) offers none of them",
            ),
            case(
                &["--cpus", "0-1", "--freqs", "307.2,480"],
                s(&root),
                "--freqs 480: no cluster swept offers it",
            ),
            case(&["--cpus", "9"], s(&root), "--cpus 9"),
            case(
                &["--cmd", "dhry --cpus 3"],
                s(&root),
                "--cpus is the sweep's to give",
            ),
            case(&["--cmd", "nosuch"], s(&root), "is not an executable file"),
            case(&["--power-hz", "0"], s(&root), "--power-hz"),
            Bad::env(
                &full_args,
                &[("BENCHMP_SYSFS_ROOT", s(&root))],
                "is not empty",
            ),
        ],
    );
    assert!(!out.exists(), "a refused sweep made its folder");
    assert_eq!(std::fs::read_to_string(full.join("x")).unwrap(), "mine");
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir_all(&bin);
}

/// Steps that cannot even start (the open-file limit, `ulimit -n 8`): the sweep ends with
/// exit 1 and its line on stderr gives the first step's own reason, naming the limit, rather
/// than only that no report had a power record.
#[test]
fn steps_that_cannot_start_are_said_with_their_reason() {
    use benchmp::sys::process::{Confinement, confine_command};
    let root = phone("nofile");
    let bin = standins("nofile");
    let work = temp_dir("benchmp-eff", "nofile");
    let out = work.join("out");
    let mut cmd = benchmp()
        .with_env("BENCHMP_SYSFS_ROOT", Some(s(&root)))
        .command(&[
            "efficiency",
            "--cpus",
            "7",
            "--freqs",
            "480",
            "--bin-dir",
            s(&bin),
            "--out",
            s(&out),
        ]);
    confine_command(
        &mut cmd,
        Confinement {
            limits: vec![(nix::sys::resource::Resource::RLIMIT_NOFILE, 8)],
            ..Confinement::default()
        },
    );
    let o = cmd.output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        !err.contains("no step's report has a power record"),
        "{err}"
    );
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.contains("steps failed; the first, c3-dhry-one-480000") && last.contains("ulimit -n"),
        "{err}"
    );
}
