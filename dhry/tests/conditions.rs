//! Run conditions through a real tool on captured sysfs trees: a throttle between the run's
//! reads (cooling device, scaling_max_freq, time_in_state), frequency pinning written back
//! after a run and after SIGINT, cool-down, and counters.

use std::path::Path;
use std::time::{Duration, Instant};

use benchmp::testing::{ReadFeed, Tool, stderr};

fn dhry() -> Tool {
    Tool::new("dhry", env!("CARGO_BIN_EXE_dhry"))
}

fn fixture_copy(name: &str, test: &str) -> benchmp::testing::TempDir {
    benchmp::testing::fixture_copy(name, &format!("dhry-{test}"))
}

fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("{text}\n")).unwrap();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap().trim().to_string()
}

/// Runs `args` under the tree `root` to the end (at most two minutes).
fn run_on(root: &Path, args: &[&str]) -> std::process::Output {
    dhry()
        .with_env("BENCHMP_SYSFS_ROOT", Some(root.to_str().unwrap()))
        .run_bounded(args, Duration::from_secs(120))
}

/// The vm2 fixture (this kind of machine) whose one cooling device's `cur_state` reads 0
/// before the run and 3 after it, as a throttle in the middle of a run would make it.
#[test]
fn a_cooling_device_engaged_mid_run_makes_it_noisy_and_fail_on_noise_exits_1() {
    let root = fixture_copy("vm2", "cooling");
    let device = root.join("class/thermal/cooling_device0");
    put(&device.join("type"), "Processor");
    put(&device.join("max_state"), "10");
    let feed = ReadFeed::start(&device.join("cur_state"), &["0", "3"]);
    // Long enough that the feed has its second value in place when the run ends.
    let o = run_on(
        &root,
        &["--runs", "300000", "--cpus", "0", "--fail-on-noise"],
    );
    assert_eq!(
        feed.finish(),
        2,
        "the state is read before and after the run"
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("dhry: noisy: cooling device cooling_device0 (Processor): state 0 -> 3 of 10 during the run"),
        "{err}"
    );
}

/// The phone8 fixture with CPU 0 alone in its cpufreq policy, whose `scaling_max_freq` falls
/// from 2266 to 1190 MHz between the run's reads and whose `time_in_state` says the child
/// spent 70 % of its loop at 1190 MHz: noisy, naming the CPU and both clocks; the clock
/// behind DMIPS/MHz is time_in_state's mean.
#[test]
fn a_throttle_on_the_phone_fixture_names_the_cpu_and_both_clocks() {
    let root = fixture_copy("phone8", "throttle");
    let cpus = root.join("devices/system/cpu");
    // CPU 1 shared CPU 0's policy: give it a plain copy, so only CPU 0 reads the feeds.
    let cp = std::process::Command::new("cp")
        .arg("-a")
        .arg(cpus.join("cpufreq/policy0"))
        .arg(cpus.join("cpufreq/policy1"))
        .status()
        .unwrap();
    assert!(cp.success());
    std::fs::remove_file(cpus.join("cpu1/cpufreq")).unwrap();
    std::os::unix::fs::symlink("../cpufreq/policy1", cpus.join("cpu1/cpufreq")).unwrap();
    let policy = cpus.join("cpufreq/policy0");
    std::fs::remove_file(policy.join("scaling_max_freq")).unwrap();
    let cap = ReadFeed::start(&policy.join("scaling_max_freq"), &["2265600", "1190400"]);
    std::fs::create_dir_all(policy.join("stats")).unwrap();
    let states = ReadFeed::start(
        &policy.join("stats/time_in_state"),
        &[
            "2265600 1000\n1785600 50\n1190400 7",
            "2265600 1003\n1785600 50\n1190400 14",
        ],
    );
    let report = root.join("../report.json");
    let json_arg = format!("--json={}", report.display());
    // Long enough that each feed has its second value in place for the read after the loop.
    let o = run_on(
        &root,
        &[
            "--runs",
            "300000",
            "--cpus",
            "0",
            "--fail-on-noise",
            &json_arg,
        ],
    );
    assert_eq!(
        cap.finish(),
        2,
        "scaling_max_freq read before and after the run"
    );
    assert_eq!(
        states.finish(),
        2,
        "time_in_state read around the timed loop"
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("dhry: noisy: CPU 0: scaling_max_freq fell from 2266 to 1190 MHz during the run, below cpuinfo_max_freq 2266 MHz"),
        "{err}"
    );
    assert!(
        err.contains("dhry: noisy: child 0 (CPU 0): clock between 1190 and 2266 MHz over its timed intervals (cpufreq time_in_state: 70 % at 1190, 30 % at 2266 MHz; mean 1513 MHz)"),
        "{err}"
    );
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let child = &j["measurements"][0]["children"][0];
    assert_eq!(child["run_clock"]["source"], "time_in_state", "{child}");
    let clock = &j["extra"]["children"][0]["clock"];
    assert_eq!(clock["source"], "time_in_state");
    let mhz = clock["mhz"].as_f64().unwrap();
    assert!((mhz - 1512.96).abs() < 1e-6, "{clock}");
    let c = &j["extra"]["children"][0];
    let per_mhz = c["dmips"].as_f64().unwrap() / mhz;
    assert!(
        (c["dmips_per_mhz"].as_f64().unwrap() / per_mhz - 1.0).abs() < 1e-9,
        "{c}"
    );
}

/// The vm2 fixture with cpufreq for both CPUs, as a phone's policy would read.
fn cpufreq_tree(test: &str) -> benchmp::testing::TempDir {
    let root = fixture_copy("vm2", test);
    for cpu in [0, 1] {
        let d = root.join(format!("devices/system/cpu/cpu{cpu}/cpufreq"));
        for (f, v) in [
            ("cpuinfo_min_freq", "400000"),
            ("cpuinfo_max_freq", "3000000"),
            ("scaling_min_freq", "400000"),
            ("scaling_max_freq", "3000000"),
            ("scaling_cur_freq", "2000000"),
            ("scaling_governor", "schedutil"),
            ("scaling_available_governors", "performance schedutil"),
            ("related_cpus", &cpu.to_string()),
        ] {
            put(&d.join(f), v);
        }
    }
    root
}

/// (min, max, governor) of CPU `cpu` in the tree.
fn limits(root: &Path, cpu: usize) -> (String, String, String) {
    let d = root.join(format!("devices/system/cpu/cpu{cpu}/cpufreq"));
    (
        read(&d.join("scaling_min_freq")),
        read(&d.join("scaling_max_freq")),
        read(&d.join("scaling_governor")),
    )
}

fn original() -> (String, String, String) {
    ("400000".into(), "3000000".into(), "schedutil".into())
}

#[test]
fn pin_freq_writes_the_run_cpus_and_writes_every_value_back() {
    let root = cpufreq_tree("pin");
    let report = root.join("../report.json");
    let json_arg = format!("--json={}", report.display());
    let o = run_on(
        &root,
        &[
            "--runs",
            "1000",
            "--cpus",
            "0",
            "--pin-freq",
            "1800",
            "--governor",
            "performance",
            &json_arg,
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(limits(&root, 0), original());
    assert_eq!(limits(&root, 1), original(), "CPU 1 is not the run's");
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let files = j["pinned"]["files"].as_array().expect("the pin's record");
    assert_eq!(files.len(), 3, "{files:?}");
    let set: Vec<(&str, &str)> = files
        .iter()
        .map(|f| (f["set"].as_str().unwrap(), f["was"].as_str().unwrap()))
        .collect();
    assert_eq!(
        set,
        [
            ("performance", "schedutil"),
            ("1800000", "400000"),
            ("1800000", "3000000")
        ]
    );
    assert!(files.iter().all(|f| f["restored"] == true), "{files:?}");
    assert!(
        err.contains("dhry: note: pinned CPUs 0 to 1800 MHz and governor performance (3 files), 3 of them written back"),
        "{err}"
    );
}

/// Starts a minute-long pinned run, waits until the pin is written, then `stop`s it (given
/// the parent's pid); returns its output and the tree.
fn stopped_pinned_run(
    test: &str,
    stop: impl FnOnce(u32),
) -> (std::process::Output, benchmp::testing::TempDir) {
    let root = cpufreq_tree(test);
    let mut child = dhry()
        .with_env("BENCHMP_SYSFS_ROOT", Some(root.to_str().unwrap()))
        .command(&["--time", "60", "--cpus", "0", "--pin-freq", "1800"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while limits(&root, 0).1 != "1800000" {
        assert!(Instant::now() < deadline, "the pin was never written");
        assert!(
            child.try_wait().unwrap().is_none(),
            "dhry ended before pinning"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Mid-run: the loop lasts a minute.
    std::thread::sleep(Duration::from_millis(300));
    stop(child.id());
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("dhry did not end within 60 s of being stopped");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    (child.wait_with_output().unwrap(), root)
}

#[test]
fn an_interrupted_run_writes_the_pin_back_too() {
    use nix::sys::signal::{Signal, kill};
    let (o, root) = stopped_pinned_run("pin-sigint", |pid| {
        kill(nix::unistd::Pid::from_raw(pid as i32), Signal::SIGINT).unwrap();
    });
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert_eq!(limits(&root, 0), original(), "{err}");
}

#[test]
fn a_crashed_child_does_not_leave_the_pin_behind() {
    use nix::sys::signal::{Signal, kill};
    let (o, root) = stopped_pinned_run("pin-crash", |pid| {
        let deadline = Instant::now() + Duration::from_secs(30);
        let kid = loop {
            if let Some(&k) = benchmp::testing::children_of(pid).first() {
                break k;
            }
            assert!(Instant::now() < deadline, "no measuring child appeared");
            std::thread::sleep(Duration::from_millis(5));
        };
        kill(nix::unistd::Pid::from_raw(kid), Signal::SIGKILL).unwrap();
    });
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("child 0 (CPU 0) was killed by SIGKILL"),
        "{err}"
    );
    assert_eq!(limits(&root, 0), original(), "{err}");
}

#[test]
fn pinning_without_cpufreq_or_out_of_range_is_refused_in_one_line() {
    let root = fixture_copy("vm2", "pin-refused");
    let o = run_on(
        &root,
        &["--runs", "1000", "--cpus", "0", "--pin-freq", "1800"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--pin-freq: CPU 0 has no cpufreq")
            && err.contains("cpu0/cpufreq/scaling_max_freq"),
        "{err}"
    );
    let root = cpufreq_tree("pin-range");
    let o = run_on(
        &root,
        &["--runs", "1000", "--cpus", "0", "--pin-freq", "3500"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("CPU 0 runs from 400 to 3000 MHz"), "{err}");
    assert_eq!(limits(&root, 0), original());
}

#[test]
fn cool_down_waits_for_the_cpu_zones_and_records_where_each_measurement_started() {
    let root = fixture_copy("vm2", "cool");
    let o = run_on(
        &root,
        &["--runs", "1000", "--cpus", "0", "--cool-down", "45"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("--cool-down: this machine has no thermal zones"),
        "{err}"
    );

    put(
        &root.join("class/thermal/thermal_zone0/type"),
        "x86_pkg_temp",
    );
    put(&root.join("class/thermal/thermal_zone0/temp"), "40000");
    put(&root.join("class/thermal/thermal_zone1/type"), "acpitz");
    put(&root.join("class/thermal/thermal_zone1/temp"), "90000");
    let report = root.join("../report.json");
    let json_arg = format!("--json={}", report.display());
    let o = run_on(
        &root,
        &[
            "--runs",
            "1000",
            "--cpus",
            "0",
            "--cool-down",
            "45",
            &json_arg,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let c = &j["measurements"][0]["cool_down"];
    assert_eq!(c["limit_c"], 45.0);
    assert_eq!(
        c["zones"],
        serde_json::json!([{"zone": "x86_pkg_temp", "celsius": 40.0}]),
        "only the CPU zone: {c}"
    );

    put(&root.join("class/thermal/thermal_zone0/temp"), "80000");
    let o = run_on(
        &root,
        &[
            "--runs",
            "1000",
            "--cpus",
            "0",
            "--cool-down",
            "45",
            "--cool-down-timeout",
            "1",
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--cool-down 45: thermal zone x86_pkg_temp still reads 80.0 C after 1 s"),
        "{err}"
    );
}
