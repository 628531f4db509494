//! `benchmp power` on captured trees (`phone8-power`, `vm2-power`, `vm2`): every source with
//! its kind, unit, cover, files and update period as measured, the unusable ones with their
//! reason, nothing found said in one line; and the sampler beside the framework's own probe
//! when its children run one after another.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use benchmp::testing::{LiveFiles, Moment, fixture_copy, integral, run_watched};

fn power(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchmp"))
        .arg("power")
        .args(args)
        .env("BENCHMP_SYSFS_ROOT", root)
        .output()
        .unwrap()
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

#[test]
fn a_phones_sources_are_listed_with_kind_unit_cover_and_update_period() {
    let root = fixture_copy("phone8-power", "power-list");
    // The first ODPM meter updates as a meter does (its own timestamps move); the battery
    // and the second meter keep their one reading.
    let file = root.join("bus/iio/devices/iio:device0/energy_value");
    let live = LiveFiles::start(Duration::from_millis(5), move |m: &Moment| {
        let t = m.mono_ns / 1_000_000;
        let e = t * 100;
        vec![(
            file.clone(),
            format!(
                "t={t}\nCH0(T={t})[S4M_VDD_CPUCL0], {e}\nCH1(T={t})[S3M_VDD_CPUCL1], {e}\nCH2(T={t})[S2M_VDD_CPUCL2], {e}\n"
            ),
        )]
    });
    let o = power(&root, &["--json"]);
    let _ = live.finish();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let got: Vec<(&str, &str, &str)> = j["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["kind"].as_str().unwrap(),
                s["unit"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("battery:battery", "power_supply", "uA*uV"),
            ("odpm:S4M_VDD_CPUCL0", "odpm", "uWs"),
            ("odpm:S3M_VDD_CPUCL1", "odpm", "uWs"),
            ("odpm:S2M_VDD_CPUCL2", "odpm", "uWs"),
            ("odpm:S1S_VDD_CAM", "odpm", "uWs"),
            ("odpm:S8S_VDD_G3D", "odpm", "uWs"),
        ]
    );
    let s = &j["sources"];
    assert_eq!(s[0]["covers"], "whole device (battery)");
    assert_eq!(
        s[1]["covers"],
        "rail S4M_VDD_CPUCL0 of s2mpg10-odpm, CPU cluster 0 (CPUs 0-1)"
    );
    assert_eq!(s[3]["cluster"], 2);
    assert!(s[4].get("cluster").is_none());
    assert!(
        s[0]["paths"][0]
            .as_str()
            .unwrap()
            .ends_with("class/power_supply/battery/current_now")
    );
    // The moving meter's period is measured; an unchanging source has none.
    assert!(s[1]["period_ms"].as_f64().unwrap() > 0.0, "{}", s[1]);
    assert!(s[0]["period_ms"].is_null(), "{}", s[0]);
    assert_eq!(
        j["thermal_zones"],
        serde_json::json!(["cpu-little", "cpu-mid", "cpu-big", "battery"])
    );
    assert_eq!(
        j["cpufreq_policies"],
        serde_json::json!(["policy0", "policy2", "policy5", "policy7"])
    );
    assert_eq!(j["unusable"], serde_json::json!([]));

    let o = power(&root, &[]);
    let out = text(&o.stdout);
    assert!(o.status.success());
    assert!(out.starts_with("power sources under "), "{out}");
    assert!(
        out.contains("odpm:S4M_VDD_CPUCL0          odpm         uWs    period "),
        "{out}"
    );
    assert!(
        out.contains("sampled beside them: thermal zones cpu-little, cpu-mid, cpu-big, battery; cpufreq policies policy0, policy2, policy5, policy7"),
        "{out}"
    );
}

#[test]
fn unusable_sources_say_why_and_nothing_found_is_one_line() {
    let root = fixture_copy("phone8-power", "power-charging");
    std::fs::write(root.join("class/power_supply/battery/status"), "Full\n").unwrap();
    let o = power(&root, &[]);
    let out = text(&o.stdout);
    assert!(o.status.success());
    assert!(
        out.contains("not usable: battery:battery: the battery's status is \"Full\": only a discharging battery's current is the load's"),
        "{out}"
    );
    let vm = fixture_copy("vm2", "power-none");
    let o = power(&vm, &[]);
    let out = text(&o.stdout);
    assert!(o.status.success());
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("no power source under "), "{out}");
    let o = power(&vm, &["--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["sources"], serde_json::json!([]));
}

/// The sampler beside the framework's own probe with its children timed one after another:
/// one window over both, the hwmon counter's energy the profile's, iterations per joule.
#[test]
fn the_probes_sequential_children_get_one_window_and_their_iterations_per_joule() {
    let root = fixture_copy("vm2-power", "power-probe");
    let counter = root.join("class/hwmon/hwmon0/energy1_input");
    let socket = |m: &Moment| 5.0 + 7.0 * m.children.min(1) as f64;
    let mut uj = 0.0;
    let live = LiveFiles::start(Duration::from_millis(3), move |m| {
        uj += socket(m) * m.dt_s * 1e6;
        vec![(counter.clone(), format!("{}\n", uj as u64))]
    });
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_benchmp"));
    cmd.args([
        "probe",
        "-P",
        "2",
        "--cpus",
        "0,1",
        "--sequential",
        "-N",
        "20",
        "--power",
        "hwmon:amd_energy:Esocket0",
        "--json",
    ])
    .env("BENCHMP_SYSFS_ROOT", &root)
    .env("ENOUGH", "50000")
    .env("TIMING_O", "0")
    .env("LOOP_O", "0")
    .env("BENCHMP_CALIBRATION", "off")
    .env_remove("LMBENCH_SCHED");
    let o = run_watched(cmd, &live, Duration::from_secs(120));
    let moments = live.finish();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = &j["measurements"][0]["power"];
    let sources = p["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 1, "only the source named");
    let w = p["window_ns"].as_array().unwrap();
    let (w0, w1) = (w[0].as_u64().unwrap(), w[1].as_u64().unwrap());
    // Both children's timed intervals lie in the one window.
    for c in j["measurements"][0]["children"].as_array().unwrap() {
        for s in c["samples"].as_array().unwrap() {
            let start = s["start_ns"].as_u64().unwrap();
            assert!(start >= w0 && start + s["elapsed_ns"].as_u64().unwrap() <= w1);
        }
    }
    let want = integral(&moments, w0, w1, socket);
    let got = sources[0]["energy_j"].as_f64().unwrap();
    assert!((got / want - 1.0).abs() < 0.01, "{got} J against {want} J");
    let per = &p["per_energy"];
    assert_eq!(per["unit"], "iterations/J");
    let figure = j["measurements"][0]["aggregate"]["cluster"]
        .as_f64()
        .unwrap();
    let net = sources[0]["net_mean_w"].as_f64().unwrap();
    assert!((per["value"].as_f64().unwrap() / (figure / net) - 1.0).abs() < 1e-9);
}
