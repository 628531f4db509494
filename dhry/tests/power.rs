//! Power, energy and temperature beside a real tool's measurement, on captured sysfs trees in
//! the kernel's formats (benchmp's `phone8-power` and `vm2-power` fixtures) whose values
//! follow a profile while the tool runs (`benchmp::testing::LiveFiles`): the power each source
//! serves depends on how many measuring children the tool has, and the energy the report
//! gives over its window must equal the profile's own integral over that window within 1 %.
//! Also: a charging battery and a root-only counter refused in one line (exit 3), an external
//! meter (`--power-cmd`) with a known profile, the idle baseline and DMIPS/W per cluster, and
//! nothing added where there is no source.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use benchmp::testing::{LiveFiles, Moment, Tool, integral, run_watched, stderr};

fn dhry() -> Tool {
    Tool::new("dhry", env!("CARGO_BIN_EXE_dhry"))
}

fn fixture_copy(name: &str, test: &str) -> benchmp::testing::TempDir {
    benchmp::testing::fixture_copy(name, &format!("dhry-power-{test}"))
}

fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("{text}\n")).unwrap();
}

/// How often the fixtures' values are rewritten.
const EVERY: Duration = Duration::from_millis(3);
/// The longest a run may take before it counts as hung (debug build, busy machine).
const LIMIT: Duration = Duration::from_secs(180);

/// One run at a time: each test's tool has this machine's CPUs to itself (a parallel run
/// beside another test's could not keep its children together).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// dhry under the tree `root`, its pid handed to `live` as it starts.
fn run_live(root: &Path, live: &LiveFiles, args: &[&str]) -> Output {
    let cmd: Command = dhry()
        .with_env("BENCHMP_SYSFS_ROOT", Some(root.to_str().unwrap()))
        .command(args);
    run_watched(cmd, live, LIMIT)
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The window of a measurement's power record, ns.
fn window(power: &serde_json::Value) -> (u64, u64) {
    let w = power["window_ns"].as_array().unwrap();
    (w[0].as_u64().unwrap(), w[1].as_u64().unwrap())
}

/// The record of source `name`.
fn source<'a>(power: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    power["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no source {name} in {}", power["sources"]))
}

/// Asserts that `name`'s energy is the profile's integral over the window within 1 %, and
/// within what the fixture's files could tell at the window's ends: a file's value changes
/// only when the feed rewrites it (every 3 ms, or later when its thread waits for a CPU), so a
/// read at an end can be as old as the rewrite before it. On an idle 2-CPU machine a rewrite
/// at the window's start came ~40 ms late once in a dozen runs, and the sources read 1-2 %
/// more than served.
fn assert_energy(
    power: &serde_json::Value,
    name: &str,
    moments: &[Moment],
    profile: impl Fn(&Moment) -> f64,
) {
    let (w0, w1) = window(power);
    let want = integral(moments, w0, w1, &profile);
    // The energy of the rewrite interval around each end: what a read there may miss.
    let at_end = |t: u64| -> f64 {
        moments
            .windows(2)
            .filter(|w| w[0].mono_ns < t && t <= w[1].mono_ns)
            .map(|w| profile(&w[1]) * (w[1].mono_ns - w[0].mono_ns) as f64 / 1e9)
            .sum()
    };
    let slack = at_end(w0) + at_end(w1);
    let s = source(power, name);
    let got = s["energy_j"].as_f64().unwrap();
    assert!(
        want > 0.0 && (got - want).abs() < 0.01 * want + slack,
        "{name}: {got} J over the window, the fixture served {want} J (files rewritten around \
         the window's ends worth {slack} J): {s}"
    );
    let mean = s["mean_w"].as_f64().unwrap();
    assert!(
        (mean * (w1 - w0) as f64 / 1e9 / got - 1.0).abs() < 1e-9,
        "{name}: mean power is energy over the window: {s}"
    );
}

/// The phone's battery: 1.2 W idle, 1.8 W more per measuring child, at 3.95 V.
fn battery_w(m: &Moment) -> f64 {
    1.2 + 1.8 * m.children as f64
}
/// ODPM rails of iio:device0 (CPU clusters 0, 1, 2) and iio:device1 (camera, GPU), W.
fn rail_w(rail: usize, m: &Moment) -> f64 {
    let n = m.children as f64;
    match rail {
        0 => 0.10 + 0.45 * n,
        1 => 0.20 + 0.30 * n,
        2 => 0.05,
        3 => 0.30,
        _ => 0.40,
    }
}
const RAILS: [&str; 5] = [
    "S4M_VDD_CPUCL0",
    "S3M_VDD_CPUCL1",
    "S2M_VDD_CPUCL2",
    "S1S_VDD_CAM",
    "S8S_VDD_G3D",
];

/// Makes the phone tree at `root` live: the battery's current and the ODPM counters follow
/// [`battery_w`] and [`rail_w`], and the CPU zones warm by 6 C per second while the tool
/// measures and cool by 1.5 C per second otherwise.
fn live_phone(root: &Path) -> LiveFiles {
    let bat = root.join("class/power_supply/battery/current_now");
    let dev0 = root.join("bus/iio/devices/iio:device0/energy_value");
    let dev1 = root.join("bus/iio/devices/iio:device1/energy_value");
    let zones: Vec<PathBuf> = (0..3)
        .map(|z| root.join(format!("class/thermal/thermal_zone{z}/temp")))
        .collect();
    let mut uws = [0.0f64; 5];
    let mut temp = [38.0f64, 39.0, 40.0];
    LiveFiles::start(EVERY, move |m| {
        for (r, e) in uws.iter_mut().enumerate() {
            *e += rail_w(r, m) * m.dt_s * 1e6;
        }
        let t = m.mono_ns / 1_000_000;
        let lines = |rails: std::ops::Range<usize>| -> String {
            let mut s = format!("t={t}\n");
            for (ch, r) in rails.enumerate() {
                s += &format!("CH{ch}(T={t})[{}], {}\n", RAILS[r], uws[r] as u64);
            }
            s
        };
        let warming = if m.children > 0 { 6.0 } else { -1.5 };
        for c in &mut temp {
            *c = (*c + warming * m.dt_s).clamp(38.0, 85.0);
        }
        let amps = battery_w(m) / 3.95;
        let mut files = vec![
            (bat.clone(), format!("{}\n", -(amps * 1e6).round() as i64)),
            (dev0.clone(), lines(0..3)),
            (dev1.clone(), lines(3..5)),
        ];
        files.extend(
            zones
                .iter()
                .zip(temp)
                .map(|(z, c)| (z.clone(), format!("{}\n", (c * 1000.0) as i64))),
        );
        files
    })
}

#[test]
fn a_discharging_phone_and_its_odpm_rails_give_each_measurements_energy() {
    let _one = one_at_a_time();
    let root = fixture_copy("phone8-power", "phone");
    let json = root.join("../report.json");
    let csv = root.join("../report.csv");
    let live = live_phone(&root);
    let o = run_live(
        &root,
        &live,
        &[
            "--time",
            "2",
            "--cpus",
            "0",
            // The battery is sampled: its step at the window's start is smeared over one
            // sampling period, 1.8 W x 5 ms at 100 Hz (0.1 % of the energy).
            "--power-hz",
            "100",
            &format!("--json={}", json.display()),
            &format!("--csv={}", csv.display()),
        ],
    );
    let moments = live.finish();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let j = report(&json);
    let p = &j["measurements"][0]["power"];
    let names: Vec<&str> = p["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "battery:battery",
            "odpm:S4M_VDD_CPUCL0",
            "odpm:S3M_VDD_CPUCL1",
            "odpm:S2M_VDD_CPUCL2",
            "odpm:S1S_VDD_CAM",
            "odpm:S8S_VDD_G3D"
        ]
    );
    assert_energy(p, "battery:battery", &moments, battery_w);
    for (r, rail) in RAILS.iter().enumerate() {
        assert_energy(p, &format!("odpm:{rail}"), &moments, |m| rail_w(r, m));
    }
    let battery = source(p, "battery:battery");
    assert_eq!(
        (&battery["kind"], &battery["from"], &battery["unit"]),
        (
            &serde_json::json!("power_supply"),
            &serde_json::json!("samples"),
            &serde_json::json!("uA*uV")
        )
    );
    let cl0 = source(p, "odpm:S4M_VDD_CPUCL0");
    assert_eq!(
        (&cl0["from"], &cl0["cluster"]),
        (&"counter".into(), &0.into())
    );
    assert!(cl0["period_ms"].as_f64().unwrap() > 0.0, "{cl0}");
    // DMIPS per watt of the battery, and cluster 0's per watt of its own rail.
    let dmips = j["extra"]["total_dmips"].as_f64().unwrap();
    let per = &p["per_energy"];
    assert_eq!(per["unit"], "DMIPS/W");
    let want = dmips / battery["net_mean_w"].as_f64().unwrap();
    assert!(
        (per["value"].as_f64().unwrap() / want - 1.0).abs() < 1e-9,
        "{per}"
    );
    let c0 = &p["per_cluster"][0];
    assert_eq!(
        (&c0["cluster"], &c0["source"]),
        (&0.into(), &"odpm:S4M_VDD_CPUCL0".into())
    );
    // The zones warmed while the child ran.
    let little = &p["temps"][0];
    assert_eq!(little["zone"], "cpu-little");
    let (start, end, max) = (
        little["start_c"].as_f64().unwrap(),
        little["end_c"].as_f64().unwrap(),
        little["max_c"].as_f64().unwrap(),
    );
    assert!(end > start && max >= end, "{little}");
    let n = p["series"]["t_ns"].as_array().unwrap().len();
    assert!(n >= 2);
    for (_, v) in p["series"]["power_w"].as_object().unwrap() {
        assert_eq!(v.as_array().unwrap().len(), n);
    }
    assert_eq!(p["series"]["freq_khz"]["policy0"][0], 2265600);
    assert_eq!(
        p["series"]["temp_c"]["cpu-little"]
            .as_array()
            .unwrap()
            .len(),
        n
    );
    assert!(
        err.contains("dhry: power: dhrystone: battery:battery ")
            && err.contains(" DMIPS/W; odpm:S4M_VDD_CPUCL0 ")
            && err.contains(&format!(
                "cpu-little {start:.1} -> {end:.1} C (max {max:.1})"
            )),
        "{err}"
    );
    let mut rows = csv::Reader::from_path(&csv).unwrap();
    let header: Vec<String> = rows.headers().unwrap().iter().map(String::from).collect();
    assert!(header.ends_with(&[
        "energy_j".into(),
        "mean_w".into(),
        "per_energy".into(),
        "power_missing".into()
    ]));
    let row = rows.records().next().unwrap().unwrap();
    let energy: f64 = row[header.len() - 4].parse().unwrap();
    assert!((energy - battery["energy_j"].as_f64().unwrap()).abs() < 1e-5);
    assert!(row[header.len() - 2].ends_with(" DMIPS/W"));
    assert_eq!(&row[header.len() - 1], "");
}

/// The vm2 tree as an AMD server shows power: a RAPL package counter that wraps every 20 J,
/// its core subzone, and hwmon's energy1_input.
#[test]
fn a_wrapping_powercap_counter_and_hwmon_energy_give_each_measurements_energy() {
    let _one = one_at_a_time();
    const RANGE_UJ: f64 = 20e6;
    let root = fixture_copy("vm2-power", "rapl");
    put(
        &root.join("class/powercap/intel-rapl:0/max_energy_range_uj"),
        &format!("{}", RANGE_UJ as u64),
    );
    let package = |m: &Moment| 6.0 + 10.0 * m.children as f64;
    let core = |m: &Moment| 2.0 + 8.0 * m.children as f64;
    let socket = |m: &Moment| 8.0 + 12.0 * m.children as f64;
    let files = [
        root.join("class/powercap/intel-rapl:0/energy_uj"),
        root.join("class/powercap/intel-rapl:0:0/energy_uj"),
        root.join("class/hwmon/hwmon0/energy1_input"),
    ];
    // The package counter starts 5 J short of its wrap.
    let mut uj = [RANGE_UJ - 5e6, 0.0, 0.0];
    let live = LiveFiles::start(EVERY, move |m| {
        uj[0] = (uj[0] + package(m) * m.dt_s * 1e6) % RANGE_UJ;
        uj[1] += core(m) * m.dt_s * 1e6;
        uj[2] += socket(m) * m.dt_s * 1e6;
        files
            .iter()
            .zip(uj)
            .map(|(f, v)| (f.clone(), format!("{}\n", v as u64)))
            .collect()
    });
    let json = root.join("../report.json");
    let o = run_live(
        &root,
        &live,
        &[
            "--time",
            "2",
            "--cpus",
            "0",
            "--power-hz",
            "20",
            &format!("--json={}", json.display()),
        ],
    );
    let moments = live.finish();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = report(&json);
    let p = &j["measurements"][0]["power"];
    // At least 16 W for 2 s: the 20 J counter wrapped in the window.
    assert!(integral(&moments, window(p).0, window(p).1, package) > RANGE_UJ / 1e6);
    assert_energy(p, "powercap:package-0", &moments, package);
    assert_energy(p, "powercap:package-0/core", &moments, core);
    assert_energy(p, "hwmon:amd_energy:Esocket0", &moments, socket);
    assert_eq!(source(p, "powercap:package-0")["from"], "counter");
    assert_eq!(p["temps"][0]["zone"], "x86_pkg_temp");
    assert!(p["series"]["freq_khz"].as_object().unwrap().is_empty());
}

#[test]
fn a_charging_battery_is_refused_when_named_and_left_out_when_found() {
    let _one = one_at_a_time();
    let root = fixture_copy("phone8-power", "charging");
    put(&root.join("class/power_supply/battery/status"), "Charging");
    let tool = dhry().with_env("BENCHMP_SYSFS_ROOT", Some(root.to_str().unwrap()));
    let line = tool.fails(&["--runs", "1000", "--power", "battery:battery"], 3);
    assert!(
        line.starts_with("dhry: --power battery:battery: the battery's status is \"Charging\""),
        "{line}"
    );
    let j = tool.json(&["--runs", "1000", "--cpus", "0"]);
    let names: Vec<&str> = j["measurements"][0]["power"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 5, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("odpm:")), "{names:?}");
    // Put on its charger while the copy runs: the measurement stands, the battery's power
    // in it is missing with the reason, the rails' is there.
    put(
        &root.join("class/power_supply/battery/status"),
        "Discharging",
    );
    let status = root.join("class/power_supply/battery/status");
    let live = LiveFiles::start(EVERY, move |m| {
        let now = if m.children > 0 {
            "Charging"
        } else {
            "Discharging"
        };
        vec![(status.clone(), format!("{now}\n"))]
    });
    let json = root.join("../charging.json");
    let csv = root.join("../charging.csv");
    let o = run_live(
        &root,
        &live,
        // A fixed count (one session): --time sizes its count in a session of its own
        // first, whose child would make the battery charge before the second one starts.
        &[
            "--runs",
            "1000000",
            "--cpus",
            "0",
            &format!("--json={}", json.display()),
            &format!("--csv={}", csv.display()),
        ],
    );
    let _ = live.finish();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let j = report(&json);
    let m = &j["measurements"][0];
    assert!(m["figures"].is_array() || m["children"].is_array(), "{m}");
    let battery = source(&m["power"], "battery:battery");
    assert!(
        battery["energy_j"].is_null() && battery["net_mean_w"].is_null(),
        "{battery}"
    );
    assert!(
        battery["missing"]
            .as_str()
            .unwrap()
            .contains("the battery's status is \"Charging\""),
        "{battery}"
    );
    assert!(m["power"]["per_energy"].is_null(), "{}", m["power"]);
    // The rails (static files here: their counters never move, and say so) are judged on
    // their own, whatever the battery does.
    let rail = source(&m["power"], "odpm:S4M_VDD_CPUCL0");
    assert!(
        !rail["missing"]
            .as_str()
            .unwrap_or_default()
            .contains("battery"),
        "{rail}"
    );
    assert!(
        err.contains("dhry: power: dhrystone: battery:battery missing, because the battery's status is \"Charging\""),
        "{err}"
    );
    let mut rows = csv::Reader::from_path(&csv).unwrap();
    let row = rows.records().next().unwrap().unwrap();
    assert!(
        row[row.len() - 1].starts_with("missing, because the battery's status"),
        "{row:?}"
    );
    let line = tool.fails(&["--runs", "1000", "--power", "battery:nope"], 3);
    assert!(
        line.contains("--power battery:nope: no such power source here (found: ")
            && line.contains("odpm:S4M_VDD_CPUCL0"),
        "{line}"
    );
}

/// How to run a command as a user without root's power to read anything: nothing to add
/// when this is not root, `setpriv` to user nobody when it is (`None`: no way here).
fn as_nobody() -> Option<Vec<String>> {
    if !nix::unistd::geteuid().is_root() {
        return Some(vec!["env".into()]);
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).is_file())?;
    Some(vec![
        setpriv.into(),
        "--reuid=65534".into(),
        "--regid=65534".into(),
        "--clear-groups".into(),
    ])
}

/// powercap's energy_uj as Linux 5.10 and later leave it: mode 0400, root's.
#[test]
fn a_root_only_counter_is_refused_in_one_line_when_named_and_left_out_when_found() {
    let _one = one_at_a_time();
    let Some(prefix) = as_nobody() else {
        benchmp::testing::skip(
            "a_root_only_counter_is_refused_in_one_line_when_named_and_left_out_when_found",
            "root without setpriv: every file is readable",
        );
        return;
    };
    let root = fixture_copy("vm2-power", "root-only");
    let counter = root.join("class/powercap/intel-rapl:0/energy_uj");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&counter, std::fs::Permissions::from_mode(0o400)).unwrap();
    let run = |args: &[&str]| {
        let mut c = Command::new(&prefix[0]);
        c.args(&prefix[1..])
            .arg(env!("CARGO_BIN_EXE_dhry"))
            .args(args);
        for k in benchmp::testing::CLEARED {
            c.env_remove(k);
        }
        c.envs(benchmp::testing::FIXED_CALIBRATION)
            .env("BENCHMP_SYSFS_ROOT", &root)
            .current_dir("/")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let o = run(&[
        "--runs",
        "1000",
        "--cpus",
        "0",
        "--power",
        "powercap:package-0",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("dhry: --power powercap:package-0: ")
            && err.contains("energy_uj can be read by root only")
            && err.contains("since Linux 5.10"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    let o = run(&["--runs", "1000", "--cpus", "0", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = j["measurements"][0]["power"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["powercap:package-0/core", "hwmon:amd_energy:Esocket0"]
    );
}

/// The external meter's profile: a triangle between 2 and 6 W with a period of 2 s of wall
/// time.
fn meter_w(unix_s: f64) -> f64 {
    let phase = unix_s.rem_euclid(2.0);
    2.0 + 4.0 * if phase < 1.0 { phase } else { 2.0 - phase }
}

#[test]
fn an_external_meter_gives_the_energy_of_its_profile() {
    let _one = one_at_a_time();
    let root = fixture_copy("vm2", "meter");
    let meter = root.join("../meter.pl");
    // Prints `<unix seconds> <watts>` of meter_w every 10 ms.
    std::fs::write(
        &meter,
        "#!/usr/bin/perl\nuse Time::HiRes qw(time sleep);\n$| = 1;\nwhile (1) {\n  my $t = time;\n  my $p = $t - 2 * int($t / 2);\n  my $w = 2 + 4 * ($p < 1 ? $p : 2 - $p);\n  printf \"%.6f %.6f\\n\", $t, $w;\n  sleep 0.01;\n}\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&meter, std::fs::Permissions::from_mode(0o755)).unwrap();
    let json = root.join("../report.json");
    let o = dhry()
        .with_env("BENCHMP_SYSFS_ROOT", Some(root.to_str().unwrap()))
        .run_bounded(
            &[
                "--time",
                "2",
                "--cpus",
                "0",
                "--power-cmd",
                meter.to_str().unwrap(),
                &format!("--json={}", json.display()),
            ],
            LIMIT,
        );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = report(&json);
    let p = &j["measurements"][0]["power"];
    let s = source(p, "cmd");
    assert_eq!((&s["kind"], &s["from"]), (&"cmd".into(), &"samples".into()));
    assert!(s["samples"].as_u64().unwrap() >= 2, "{s}");
    // The window on the wall clock: this process's offset between the two clocks.
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let mono = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).unwrap();
    let offset = wall - (mono.tv_sec() as f64 + mono.tv_nsec() as f64 / 1e9);
    let (w0, w1) = window(p);
    let (a, b) = (w0 as f64 / 1e9 + offset, w1 as f64 / 1e9 + offset);
    let steps = 100_000;
    let want: f64 = (0..steps)
        .map(|i| meter_w(a + (b - a) * (i as f64 + 0.5) / steps as f64))
        .sum::<f64>()
        * (b - a)
        / steps as f64;
    let got = s["energy_j"].as_f64().unwrap();
    assert!(
        (got / want - 1.0).abs() < 0.01,
        "{got} J, the meter's profile {want} J: {s}"
    );
}

/// The vm2 tree's three counters each broken while the tool measures, as a driver or a
/// captured tree can break them: the package counter holds text, the core counter steps back
/// far from its range (no wrap: 119 kW if it were taken as one), hwmon's file disappears.
/// Each source's power is missing with its reason; the measurement stands (exit 0).
#[test]
fn counters_that_break_mid_run_leave_their_power_missing_and_the_figure_standing() {
    let _one = one_at_a_time();
    let root = fixture_copy("vm2-power", "broken");
    let range = root.join("class/powercap/intel-rapl:0:0/max_energy_range_uj");
    put(&range, "262143328850");
    let package = root.join("class/powercap/intel-rapl:0/energy_uj");
    let core = root.join("class/powercap/intel-rapl:0:0/energy_uj");
    let hwmon = root.join("class/hwmon/hwmon0/energy1_input");
    // Counting at 10 W until the run has its measuring child (after the sources were found
    // at its start); from then on the package counter holds text, the core counter runs
    // backwards and hwmon's file is gone, so every reading in the window sees it.
    let mut uj = 5_000_000_000.0f64;
    let live = LiveFiles::start(EVERY, move |m| {
        if m.children == 0 {
            uj += 10.0 * m.dt_s * 1e6;
            return vec![
                (package.clone(), format!("{}\n", uj as u64)),
                (core.clone(), format!("{}\n", uj as u64)),
                (hwmon.clone(), format!("{}\n", uj as u64)),
            ];
        }
        uj -= 10.0 * m.dt_s * 1e6;
        let _ = std::fs::remove_file(&hwmon);
        vec![
            (package.clone(), "garbage\n".into()),
            (core.clone(), format!("{}\n", uj as u64)),
        ]
    });
    let json = root.join("../report.json");
    let o = run_live(
        &root,
        &live,
        // A fixed count (one session): --time sizes its count in a session of its own
        // first, which would find the sources broken at its start.
        &[
            "--runs",
            "1000000",
            "--cpus",
            "0",
            &format!("--json={}", json.display()),
        ],
    );
    let _ = live.finish();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let j = report(&json);
    let m = &j["measurements"][0];
    let why = |name: &str| {
        let s = source(&m["power"], name);
        assert!(s["energy_j"].is_null(), "{s}");
        s["missing"].as_str().unwrap_or_default().to_string()
    };
    assert!(
        why("powercap:package-0").contains("not a number"),
        "{}",
        m["power"]
    );
    assert!(
        why("powercap:package-0/core").contains("which is no wrap"),
        "{}",
        m["power"]
    );
    assert!(
        why("hwmon:amd_energy:Esocket0").contains("cannot be read"),
        "{}",
        m["power"]
    );
    assert!(j["extra"]["children"][0]["dmips"].as_f64().unwrap() > 0.0);
    assert!(
        err.contains("powercap:package-0 missing, because "),
        "{err}"
    );
}

/// The phone's ODPM meter renames a rail while the tool measures: that rail's power is
/// missing, the others' stands.
#[test]
fn a_renamed_rail_is_missing_and_the_other_rails_stand() {
    let _one = one_at_a_time();
    let root = fixture_copy("phone8-power", "renamed");
    let dev0 = root.join("bus/iio/devices/iio:device0/energy_value");
    let mut uws = [0.0f64; 3];
    let live = LiveFiles::start(EVERY, move |m| {
        for (r, e) in uws.iter_mut().enumerate() {
            *e += rail_w(r, m) * m.dt_s * 1e6;
        }
        let t = m.mono_ns / 1_000_000;
        let first = if m.children > 0 {
            "S4M_VDD_CPUCL0_NEW"
        } else {
            RAILS[0]
        };
        let names = [first, RAILS[1], RAILS[2]];
        let text: String = std::iter::once(format!("t={t}\n"))
            .chain((0..3).map(|r| format!("CH{r}(T={t})[{}], {}\n", names[r], uws[r] as u64)))
            .collect();
        vec![(dev0.clone(), text)]
    });
    let json = root.join("../report.json");
    let o = run_live(
        &root,
        &live,
        &[
            "--runs",
            "1000000",
            "--cpus",
            "0",
            "--power",
            "odpm:S4M_VDD_CPUCL0,odpm:S3M_VDD_CPUCL1",
            &format!("--json={}", json.display()),
        ],
    );
    let _ = live.finish();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let p = &report(&json)["measurements"][0]["power"];
    let gone = source(p, "odpm:S4M_VDD_CPUCL0");
    assert!(
        gone["missing"]
            .as_str()
            .unwrap()
            .contains("no longer lists the rail"),
        "{gone}"
    );
    assert!(
        source(p, "odpm:S3M_VDD_CPUCL1")["energy_j"]
            .as_f64()
            .unwrap()
            > 0.0,
        "{p}"
    );
}

/// External meters that break or lie after their first good lines: each measurement stands
/// (exit 0) and the meter's power in it is missing, saying why; a meter whose first line
/// already lies is refused before anything runs (exit 2).
#[test]
fn a_meter_that_breaks_or_lies_leaves_the_power_missing_and_the_figure_standing() {
    let _one = one_at_a_time();
    let root = fixture_copy("vm2", "bad-meters");
    let good =
        "i=0; while [ $i -lt 3 ]; do echo \"$(date +%s.%N) 2.5\"; sleep 0.005; i=$((i+1)); done";
    let cases: [(&str, String, &str); 8] = [
        ("ends", format!("{good}; exit 0"), "the meter failed"),
        (
            "garbage",
            format!("{good}; echo garbage; sleep 100"),
            "the meter failed",
        ),
        (
            "future",
            format!("{good}; while :; do echo \"$(( $(date +%s) + 3600 )) 2.5\"; sleep 0.01; done"),
            "after the line arrived",
        ),
        (
            "back",
            format!(
                "{good}; t=$(date +%s); while :; do t=$((t-1)); echo \"$t 2.5\"; sleep 0.01; done"
            ),
            "not after the reading before it",
        ),
        (
            "silent",
            "echo \"$(date +%s.%N) 2.5\"; sleep 100".to_string(),
            "no reading at or after the window's end",
        ),
        (
            "flood",
            "t=$(date +%s.%N); echo \"$t 2.5\"; while :; do echo \"$t 2.5\"; done".to_string(),
            "not after the reading before it",
        ),
        (
            "negative",
            format!("{good}; while :; do echo \"$(date +%s.%N) -2.5\"; sleep 0.01; done"),
            "not a power from 0",
        ),
        (
            "absurd",
            format!("{good}; while :; do echo \"$(date +%s.%N) 1e300\"; sleep 0.01; done"),
            "not a power from 0",
        ),
    ];
    let tool = dhry().with_env("BENCHMP_SYSFS_ROOT", Some(root.to_str().unwrap()));
    // The runs have one child each and need not keep children together: they run side by
    // side (a meter waited on at a window's end costs no CPU).
    std::thread::scope(|scope| {
        for (name, script, why) in &cases {
            let (tool, root) = (&tool, &root);
            scope.spawn(move || {
                let meter = format!("sh -c '{script}'");
                let json = root.join(format!("../{name}.json"));
                let o = tool.run_bounded(
                    &[
                        "--runs",
                        "1000000",
                        "--cpus",
                        "0",
                        "--power-cmd",
                        &meter,
                        &format!("--json={}", json.display()),
                    ],
                    LIMIT,
                );
                let err = stderr(&o);
                assert_eq!(o.status.code(), Some(0), "{name}: {err}");
                let j = report(&json);
                let s = source(&j["measurements"][0]["power"], "cmd");
                assert!(s["energy_j"].is_null(), "{name}: {s}");
                let missing = s["missing"].as_str().unwrap_or_default();
                assert!(missing.contains(why), "{name}: {missing}");
                assert!(err.contains("cmd missing, because"), "{name}: {err}");
                assert!(err.lines().all(|l| l.len() < 1000), "{name}: {err}");
            });
        }
    });
    // Lying from its first line: refused before anything runs.
    for first in ["-2.5", "1e300"] {
        let meter = format!("sh -c 'while :; do echo \"$(date +%s) {first}\"; sleep 0.01; done'");
        let line = tool.fails(&["--runs", "1000", "--power-cmd", &meter], 2);
        assert!(line.contains("not a power from 0"), "{line}");
    }
}

#[test]
fn without_a_source_nothing_is_added_and_a_baseline_is_refused() {
    let _one = one_at_a_time();
    let root = fixture_copy("vm2", "none");
    let tool = dhry().with_env("BENCHMP_SYSFS_ROOT", Some(root.to_str().unwrap()));
    let j = tool.json(&["--runs", "1000", "--cpus", "0"]);
    assert!(j["measurements"][0].get("power").is_none());
    assert!(j.get("power_baseline").is_none());
    let o = tool.ok(&["--runs", "1000", "--cpus", "0", "--csv"]);
    let header = String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(header.ends_with(",unit,counters"), "{header}");
    let line = tool.fails(&["--runs", "1000", "--power-baseline", "1"], 3);
    assert!(
        line.contains("--power-baseline: there is no power source to measure (none under"),
        "{line}"
    );
    let line = tool.fails(&["--runs", "1000", "--power", "battery:battery"], 3);
    assert!(line.contains("no such power source here"), "{line}");
    tool.fails(&["--runs", "1000", "--power-hz", "0"], 2);
    tool.fails(&["--runs", "1000", "--power-cmd", ""], 2);
    let line = tool.fails(&["--runs", "1000", "--power-cmd", "/nonexistent/meter"], 2);
    assert!(
        line.contains("--power-cmd /nonexistent/meter: cannot start it"),
        "{line}"
    );
}

/// The phone tree with CPU 1 in a cpufreq policy of its own, so that CPUs 0 and 1, the two
/// this machine has, are two clusters, fed by the rails CPUCL0 and CPUCL1.
fn split_phone(test: &str) -> benchmp::testing::TempDir {
    let root = fixture_copy("phone8-power", test);
    let cpus = root.join("devices/system/cpu");
    let cp = Command::new("cp")
        .arg("-a")
        .arg(cpus.join("cpufreq/policy0"))
        .arg(cpus.join("cpufreq/policy1"))
        .status()
        .unwrap();
    assert!(cp.success());
    put(&cpus.join("cpufreq/policy1/related_cpus"), "1");
    put(&cpus.join("cpufreq/policy0/related_cpus"), "0");
    std::fs::remove_file(cpus.join("cpu1/cpufreq")).unwrap();
    std::os::unix::fs::symlink("../cpufreq/policy1", cpus.join("cpu1/cpufreq")).unwrap();
    root
}

/// The done-when, at this machine's size (2 CPUs for the phone's 8, seconds for a
/// minute): every cluster's DMIPS per watt of its rail, net of the idle baseline, and the
/// temperature ramp.
/// False when the children did not run together (a busy machine's documented refusal).
fn dmips_per_watt_per_cluster(root: &Path) -> bool {
    let json = root.join("../report.json");
    let live = live_phone(root);
    // --duration: both copies load their cores together to the end, and no second attempt
    // (as --time may make on a busy machine) starts its baseline while the fixture still
    // shows the first attempt's load.
    let mut args = vec![
        "-P",
        "2",
        "--cpus",
        "0,1",
        "--duration",
        "2",
        "--power-baseline",
        "1",
        "--power-hz",
        "100",
    ];
    let json_arg = format!("--json={}", json.display());
    args.push(&json_arg);
    let o = run_live(root, &live, &args);
    let moments = live.finish();
    let err = stderr(&o);
    if o.status.code() == Some(1) && err.contains("the children did not run together") {
        // A documented outcome on a machine busy beside the test: one child was starved.
        return false;
    }
    assert_eq!(o.status.code(), Some(0), "{err}");
    let j = report(&json);
    let p = &j["measurements"][0]["power"];
    // The baseline: idle power, no child then.
    let base = &j["power_baseline"];
    assert_eq!(base["seconds"], 1.0);
    let idle = base["sources"]["battery:battery"].as_f64().unwrap();
    assert!((idle / 1.2 - 1.0).abs() < 0.01, "{base}");
    assert_energy(p, "battery:battery", &moments, battery_w);
    assert_energy(p, "odpm:S4M_VDD_CPUCL0", &moments, |m| rail_w(0, m));
    let clusters = j["extra"]["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 2, "{clusters:?}");
    let per = p["per_cluster"].as_array().unwrap();
    assert_eq!(per.len(), 2, "{per:?}");
    for (c, rail) in per
        .iter()
        .zip(["odpm:S4M_VDD_CPUCL0", "odpm:S3M_VDD_CPUCL1"])
    {
        let cluster = c["cluster"].as_u64().unwrap();
        let dmips = clusters.iter().find(|k| k["cluster"] == cluster).unwrap()["dmips_total"]
            .as_f64()
            .unwrap();
        let s = source(p, rail);
        let net = s["net_mean_w"].as_f64().unwrap();
        assert!(
            (net - (s["mean_w"].as_f64().unwrap() - s["baseline_w"].as_f64().unwrap())).abs()
                < 1e-12
        );
        assert_eq!(
            (&c["source"], &c["unit"]),
            (&rail.into(), &"DMIPS/W".into())
        );
        assert!(
            (c["value"].as_f64().unwrap() / (dmips / net) - 1.0).abs() < 1e-9,
            "{c}"
        );
    }
    let little = &p["temps"][0];
    assert!(
        little["end_c"].as_f64() > little["start_c"].as_f64(),
        "{little}"
    );
    assert!(
        err.contains("; cluster 0 ") && err.contains(" DMIPS/W; cluster 1 "),
        "{err}"
    );
    true
}

#[test]
fn dmips_per_watt_per_cluster_net_of_the_baseline_and_the_temperature_ramp() {
    let _one = one_at_a_time();
    let root = split_phone("clusters");
    // Three tries for the children to run together on a busy machine; the refusal that says
    // they did not is the documented outcome when none succeeds.
    for _ in 0..3 {
        if dmips_per_watt_per_cluster(&root) {
            return;
        }
    }
    benchmp::errln!("the children never ran together here: the run's refusal was checked instead");
}

/// The same run traced: `ftrace record` takes dhry's slices and the sampler's counters on one
/// clock, and `ftrace convert` makes counter tracks of power per source, temperature per zone
/// and clock per policy. Needs root and tracefs, as ftrace's record tests.
#[test]
#[ignore = "needs tracefs mounted and root; scripts/test.sh runs them with --ignored"]
fn the_traced_run_has_counter_tracks_of_power_temperature_and_clock() {
    let _one = one_at_a_time();
    let ftrace = Path::new(env!("CARGO_BIN_EXE_dhry")).with_file_name("ftrace");
    assert!(
        ftrace.is_file(),
        "{} is not built: cargo build -p ftrace",
        ftrace.display()
    );
    let _lock = benchmp::testing::tracefs_lock();
    let root = split_phone("traced");
    for _ in 0..3 {
        if traced_run(&ftrace, &root) {
            return;
        }
    }
    benchmp::errln!("the children never ran together here: the run's refusal was checked instead");
}

/// One traced run and its checks; false when the children did not run together (a busy
/// machine's documented refusal).
fn traced_run(ftrace: &Path, root: &Path) -> bool {
    let trace = root.join("../trace.txt");
    let json = root.join("../report.json");
    let live = live_phone(root);
    let cmd = {
        let mut c = Command::new(ftrace);
        c.args(["record", "--clock", "mono", "-o"])
            .arg(&trace)
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_dhry"))
            .args([
                "-P",
                "2",
                "--cpus",
                "0,1",
                "--duration",
                "2",
                "--power-baseline",
                "1",
            ])
            .arg("--trace")
            .arg(format!("--json={}", json.display()));
        for k in benchmp::testing::CLEARED {
            c.env_remove(k);
        }
        c.envs(benchmp::testing::FIXED_CALIBRATION)
            .env("BENCHMP_SYSFS_ROOT", root);
        c
    };
    // The tool is the capture's child: follow its children through the capture's.
    let o = run_watched_grandchild(cmd, &live);
    let _ = live.finish();
    let err = stderr(&o);
    if o.status.code() == Some(1) && err.contains("the children did not run together") {
        return false;
    }
    assert_eq!(o.status.code(), Some(0), "{err}");
    let text = std::fs::read_to_string(&trace).unwrap();
    // The capture sized its ring buffer for itself, whatever this machine's default is, and
    // says so: nothing lost.
    assert!(
        text.contains("\n# lost events: 0 ("),
        "{}",
        &text[..text.len().min(400)]
    );
    let j = report(&json);
    let pid = j["pid"].as_u64().unwrap() as u32;
    let chrome = ftrace::convert::convert(&text).trace;
    let counters: std::collections::BTreeSet<String> = chrome
        .trace_events
        .iter()
        .filter(|e| e.ph == "C" && e.pid == pid)
        .map(|e| e.name.clone())
        .collect();
    for want in [
        "power battery:battery [mW]",
        "power odpm:S4M_VDD_CPUCL0 [mW]",
        "temp cpu-little [mC]",
        "freq policy0 [kHz]",
        "freq policy1 [kHz]",
    ] {
        assert!(
            counters.contains(want),
            "no counter track {want}: {counters:?}"
        );
    }
    // The parent's run slice encloses the measurement's samples: power under the phase.
    let p = &j["measurements"][0]["power"];
    let (w0, w1) = window(p);
    let run = chrome
        .trace_events
        .iter()
        .find(|e| e.pid == pid && e.ph == "B" && e.name.starts_with("run"))
        .expect("the parent's run slice");
    assert!(
        run.ts * 1e3 <= w0 as f64 + 1e3,
        "{run:?} starts after the window {w0}"
    );
    // Each sample's counters are written right after its reads: from the window's start on
    // (nothing is sampled after its end), one event per sample.
    let from_start: Vec<f64> = chrome
        .trace_events
        .iter()
        .filter(|e| e.ph == "C" && e.pid == pid && e.name == "temp cpu-little [mC]")
        .map(|e| e.ts * 1e3)
        .filter(|&ts| ts >= w0 as f64 - 1e3)
        .collect();
    let samples = p["series"]["t_ns"].as_array().unwrap().len();
    assert_eq!(
        from_start.len(),
        samples,
        "one counter event per sample of the window"
    );
    assert!(from_start[samples - 2] <= w1 as f64, "{from_start:?} {w1}");
    true
}

/// [`run_watched`] for a tool started by another program (a capture): its profile follows
/// the children of that program's one child.
fn run_watched_grandchild(mut cmd: Command, live: &LiveFiles) -> Output {
    let child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let capture = child.id();
    let start = std::time::Instant::now();
    loop {
        if let Some(&tool) = benchmp::testing::children_of(capture).first() {
            live.watch(tool as u32);
            break;
        }
        assert!(start.elapsed() < LIMIT, "the capture started no tool");
        std::thread::sleep(Duration::from_millis(1));
    }
    child.wait_with_output().unwrap()
}

/// A `--power-cmd` that cannot start for a resource limit (too many open files, no process
/// left) is a failure to measure here, exit 1 naming the limit, not bad input.
#[test]
fn a_meter_that_cannot_start_for_a_limit_names_it() {
    use benchmp::sys::process::{Confinement, confine_command};
    use nix::sys::resource::Resource;
    let _one = one_at_a_time();
    let root = fixture_copy("vm2", "meter-limits");
    let meter = "sh -c 'while :; do echo \"$(date +%s.%N) 2.5\"; sleep 0.01; done'";
    let root_user = nix::unistd::geteuid().is_root();
    for (limit, value, named) in [
        (Resource::RLIMIT_NOFILE, 6, "ulimit -n"),
        (Resource::RLIMIT_NPROC, 1, "ulimit -u"),
    ] {
        let mut cmd = dhry()
            .with_env("BENCHMP_SYSFS_ROOT", Some(root.to_str().unwrap()))
            .command(&["--runs", "1000", "--cpus", "0", "--power-cmd", meter]);
        confine_command(
            &mut cmd,
            Confinement {
                limits: vec![(limit, value)],
                // Root is exempt from the process limit: a user of its own.
                user: (root_user && limit == Resource::RLIMIT_NPROC).then_some(61_235),
                ..Confinement::default()
            },
        );
        let o = cmd.output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{named}: {err}");
        assert!(err.contains(named), "{named}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
