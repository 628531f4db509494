//! Run quality: the machine's state before and after a run, and the noise verdict.
//!
//! A bandwidth figure means little if the governor dropped the clock halfway or the child was
//! preempted fifty times, so every report carries the evidence and flags a noisy run.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::sysfs::entries;

pub use crate::run::overlap::{ATTEMPTS, MIN_OVERLAP, Overlap, Window};

/// Frequency state of one CPU (cpufreq), kHz.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuFreq {
    /// CPU number.
    pub cpu: usize,
    /// scaling_governor.
    pub governor: Option<String>,
    /// scaling_cur_freq.
    pub cur_khz: Option<u64>,
    /// scaling_min_freq.
    pub min_khz: Option<u64>,
    /// scaling_max_freq.
    pub max_khz: Option<u64>,
    /// cpuinfo_max_freq: the hardware's top clock, which a thermal or power cap lowers
    /// scaling_max_freq below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_max_khz: Option<u64>,
}

/// One thermal zone reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thermal {
    /// Zone type (e.g. `cpu-1-0-0`, `x86_pkg_temp`).
    pub zone: String,
    /// Temperature in °C.
    pub celsius: f64,
}

/// One thermal cooling device (a fan, a CPU frequency cap): its state rises as it cools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cooling {
    /// Device name in sysfs (`cooling_device3`).
    pub device: String,
    /// Its type (`thermal-cpufreq-7`, `Processor`).
    pub kind: String,
    /// cur_state.
    pub state: u64,
    /// max_state.
    pub max_state: Option<u64>,
}

/// The x86 thermal throttle counts of one CPU (`thermal_throttle/*_throttle_count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Throttle {
    /// CPU number.
    pub cpu: usize,
    /// core_throttle_count.
    pub core: Option<u64>,
    /// package_throttle_count.
    pub package: Option<u64>,
}

/// A snapshot of what can disturb a measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineState {
    /// When it was taken, CLOCK_MONOTONIC ns.
    pub at_ns: u64,
    /// Per-CPU frequency state (empty without cpufreq).
    pub cpufreq: Vec<CpuFreq>,
    /// Thermal zones (empty when none are exposed).
    pub thermal: Vec<Thermal>,
    /// Transparent huge page mode (`always`, `madvise`, `never`).
    pub thp: Option<String>,
    /// 1-minute load average.
    pub loadavg_1m: Option<f64>,
    /// CPUs this process may use.
    pub allowed_cpus: String,
    /// Thermal cooling devices (absent in reports before they were kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cooling: Vec<Cooling>,
    /// x86 thermal throttle counts of the run's CPUs (absent where there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttle: Vec<Throttle>,
}

fn read(path: &Path) -> Option<String> {
    crate::sysfs::read_attr(path).ok()
}

impl MachineState {
    /// Reads the state now; `sysfs` is the sysfs root (normally `/sys`).
    pub fn capture(sysfs: &Path, online: &[usize]) -> MachineState {
        let cpufreq = online
            .iter()
            .filter_map(|&cpu| {
                let d = sysfs.join(format!("devices/system/cpu/cpu{cpu}/cpufreq"));
                let num = |f: &str| read(&d.join(f)).and_then(|s| s.parse().ok());
                let f = CpuFreq {
                    cpu,
                    governor: read(&d.join("scaling_governor")),
                    cur_khz: num("scaling_cur_freq"),
                    min_khz: num("scaling_min_freq"),
                    max_khz: num("scaling_max_freq"),
                    hw_max_khz: num("cpuinfo_max_freq"),
                };
                (f.governor.is_some() || f.cur_khz.is_some()).then_some(f)
            })
            .collect();
        let thermal = thermal_zones(sysfs);
        let cooling = entries(&sysfs.join("class/thermal"), "cooling_device")
            .into_iter()
            .filter_map(|d| {
                let num = |f: &str| read(&d.join(f)).and_then(|s| s.parse::<u64>().ok());
                Some(Cooling {
                    device: d.file_name()?.to_string_lossy().into_owned(),
                    kind: read(&d.join("type"))?,
                    state: num("cur_state")?,
                    max_state: num("max_state"),
                })
            })
            .collect();
        let throttle = online
            .iter()
            .filter_map(|&cpu| {
                let d = sysfs.join(format!("devices/system/cpu/cpu{cpu}/thermal_throttle"));
                let num = |f: &str| read(&d.join(f)).and_then(|s| s.parse::<u64>().ok());
                let t = Throttle {
                    cpu,
                    core: num("core_throttle_count"),
                    package: num("package_throttle_count"),
                };
                (t.core.is_some() || t.package.is_some()).then_some(t)
            })
            .collect();
        let thp = read(&sysfs.join("kernel/mm/transparent_hugepage/enabled")).and_then(|s| {
            let a = s.find('[')?;
            let b = s[a..].find(']')?;
            Some(s[a + 1..a + b].to_string())
        });
        let loadavg_1m = read(Path::new("/proc/loadavg"))
            .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()));
        MachineState {
            at_ns: crate::sys::clock::now_ns(),
            cpufreq,
            thermal,
            thp,
            loadavg_1m,
            allowed_cpus: crate::sys::affinity::allowed_cpus()
                .map(|c| crate::cpulist::format_cpu_list(&c))
                .unwrap_or_default(),
            cooling,
            throttle,
        }
    }
}

/// What `--cool-down` waited for before a measurement (JSON: `limit_c`, `waited_ms`, `zones`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoolDown {
    /// The limit, °C.
    pub limit_c: f64,
    /// How long it waited, ms.
    pub waited_ms: u64,
    /// The zones it watched, as they read when the measurement started.
    pub zones: Vec<Thermal>,
}

/// Thermal zones under the sysfs root, read now.
pub fn thermal_zones(sysfs: &Path) -> Vec<Thermal> {
    entries(&sysfs.join("class/thermal"), "thermal_zone")
        .into_iter()
        .filter_map(|z| {
            let celsius = read(&z.join("temp")).and_then(|s| s.parse::<f64>().ok())? / 1000.0;
            Some(Thermal {
                zone: read(&z.join("type"))?,
                celsius,
            })
        })
        .collect()
}

/// The zones that say something about the CPUs: those whose type names a CPU, a package or
/// the SoC (`cpu-1-7`, `x86_pkg_temp`, `soc_thermal`); all zones when none does.
pub fn cpu_zones(zones: Vec<Thermal>) -> Vec<Thermal> {
    let of_cpus = |z: &Thermal| {
        let t = z.zone.to_ascii_lowercase();
        ["cpu", "pkg", "soc"].iter().any(|k| t.contains(k))
    };
    if zones.iter().any(of_cpus) {
        zones.into_iter().filter(of_cpus).collect()
    } else {
        zones
    }
}

/// `--cool-down`'s refusal on a machine without thermal zones (exit status 3).
pub fn no_thermal_zones(sysfs: &Path) -> crate::error::Unsupported {
    crate::error::Unsupported(format!(
        "--cool-down: this machine has no thermal zones ({} lists none)",
        sysfs.join("class/thermal").display()
    ))
}

/// How often `--cool-down` reads the zones while it waits.
const COOL_DOWN_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Waits until every CPU zone ([`cpu_zones`]) reads at most `limit_c`, for at most
/// `timeout`. No zones at all is [`Unsupported`](crate::error::Unsupported) (exit 3); still
/// too hot at the deadline fails the run naming the hottest zone.
pub fn cool_down(
    sysfs: &Path,
    limit_c: f64,
    timeout: std::time::Duration,
) -> Result<CoolDown, crate::run::Error> {
    let start = std::time::Instant::now();
    loop {
        let zones = cpu_zones(thermal_zones(sysfs));
        let Some(hottest) = zones.iter().max_by(|a, b| a.celsius.total_cmp(&b.celsius)) else {
            return Err(no_thermal_zones(sysfs).into());
        };
        if hottest.celsius <= limit_c {
            return Ok(CoolDown {
                limit_c,
                waited_ms: start.elapsed().as_millis() as u64,
                zones,
            });
        }
        if start.elapsed() >= timeout {
            return Err(crate::run::Error::CoolDown(format!(
                "--cool-down {limit_c}: thermal zone {} still reads {:.1} C after {} s (--cool-down-timeout)",
                hottest.zone,
                hottest.celsius,
                timeout.as_secs()
            )));
        }
        if let Some(sig) = crate::sys::process::interrupted() {
            return Err(crate::run::Error::Interrupted(sig));
        }
        std::thread::sleep(COOL_DOWN_POLL);
    }
}

/// Thresholds for calling a run noisy.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NoisePolicy {
    /// Percentage of its timed wall time a child may lose to other tasks (or the hypervisor)
    /// before it is noisy.
    pub max_lost_pct: f64,
    /// Percentage by which a child's probed clock may move across its timed intervals.
    pub max_clock_change_pct: f64,
}

impl Default for NoisePolicy {
    fn default() -> Self {
        NoisePolicy {
            max_lost_pct: 2.0,
            max_clock_change_pct: 10.0,
        }
    }
}

/// The verdict on a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunVerdict {
    /// True when any reason was found.
    pub noisy: bool,
    /// One line per problem, naming the child and CPU.
    pub reasons: Vec<String>,
}

/// Where a child's lost time went, as its context switches say: another task took the CPU
/// (involuntary switches), the child waited (voluntary ones), or, switched out never, the CPU
/// was busy with interrupts or taken by the hypervisor (steal).
fn lost_to(u: &crate::sys::usage::ResourceUsage) -> String {
    match (u.involuntary_switches, u.voluntary_switches) {
        (0, 0) => "without being switched out: interrupts or the hypervisor took it".into(),
        (0, v) => format!(
            "waiting ({v} voluntary context switch{}, {} major page faults)",
            if v == 1 { "" } else { "es" },
            u.major_faults
        ),
        (i, _) => format!(
            "to other tasks ({i} involuntary context switch{})",
            if i == 1 { "" } else { "es" }
        ),
    }
}

/// `350 µs`, `12.5 ms`, `3.20 s`.
fn duration(ns: f64) -> String {
    if ns < 1e6 {
        format!("{:.0} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// Judges children (preempted too often, migrated while pinned, gave up, clock moved) and the
/// machine (frequency policy changed, a cooling device engaged, thermal throttling counted).
pub fn judge<S, C>(
    children: &[crate::run::ChildRun<S, C>],
    before: &MachineState,
    after: &MachineState,
    policy: &NoisePolicy,
) -> RunVerdict {
    let mut reasons = Vec::new();
    for c in children {
        let who = c.who();
        let lost = (1.0 - c.cpu_share) * 100.0;
        if c.timed_ns > 0 && lost > policy.max_lost_pct {
            reasons.push(format!(
                "{who}: lost {lost:.1} % of its timed run ({} of {}) {}",
                duration(lost / 100.0 * c.timed_ns as f64),
                duration(c.timed_ns as f64),
                lost_to(&c.usage)
            ));
        }
        if c.cpu.is_some() && c.migrated {
            reasons.push(format!(
                "{who}: ran on CPUs {:?} although pinned",
                c.cpus_seen
            ));
        }
        // Only a clock both probes know: an unknown one (chains that disagree) is no reason.
        if let Some((k, change)) = c
            .clock
            .as_ref()
            .and_then(|k| Some((k, k.change()?)))
            .filter(|(_, change)| change.abs() * 100.0 > policy.max_clock_change_pct)
        {
            reasons.push(format!(
                "{who}: clock {:.0} -> {:.0} MHz over its timed intervals ({:+.0} %, probed before and after)",
                k.before.mhz.unwrap_or(0.0),
                k.after.mhz.unwrap_or(0.0),
                change * 100.0
            ));
        }
        if let Some(k) = c
            .run_clock
            .as_ref()
            .filter(|k| k.source == crate::freq::ClockSource::TimeInState)
        {
            let (lo, hi) = crate::freq::residency::used_range(k);
            if hi > 0.0 && (hi - lo) / hi * 100.0 > policy.max_clock_change_pct {
                reasons.push(format!(
                    "{who}: clock between {lo:.0} and {hi:.0} MHz over its timed intervals (cpufreq time_in_state: {}; mean {:.0} MHz)",
                    crate::freq::residency::describe_states(k),
                    k.mhz
                ));
            }
        }
        if c.gave_up {
            reasons.push(format!(
                "{who}: only {} of the wanted samples were long enough",
                c.samples.iter().filter(|s| s.accepted).count()
            ));
        }
    }
    let mhz = |k: Option<u64>| k.map_or("?".to_string(), |k| format!("{:.0}", k as f64 / 1000.0));
    for (b, a) in before.cpufreq.iter().zip(&after.cpufreq) {
        let fell = matches!((b.max_khz, a.max_khz), (Some(x), Some(y)) if y < x);
        if fell && b.governor == a.governor {
            let hw = a
                .hw_max_khz
                .filter(|&h| a.max_khz.is_some_and(|m| m < h))
                .map(|h| format!(", below cpuinfo_max_freq {} MHz", mhz(Some(h))))
                .unwrap_or_default();
            reasons.push(format!(
                "CPU {}: scaling_max_freq fell from {} to {} MHz during the run{hw} (a thermal or power cap){}",
                b.cpu,
                mhz(b.max_khz),
                mhz(a.max_khz),
                hottest_rise(before, after)
            ));
        } else if b.max_khz != a.max_khz || b.governor != a.governor {
            reasons.push(format!(
                "CPU {}: frequency policy changed during the run ({:?} {:?} kHz -> {:?} {:?} kHz)",
                b.cpu, b.governor, b.max_khz, a.governor, a.max_khz
            ));
        }
    }
    for (b, a) in before.cooling.iter().zip(&after.cooling) {
        if b.device == a.device && a.state > b.state {
            let of = a.max_state.map(|m| format!(" of {m}")).unwrap_or_default();
            reasons.push(format!(
                "cooling device {} ({}): state {} -> {}{of} during the run{}",
                a.device,
                a.kind,
                b.state,
                a.state,
                hottest_rise(before, after)
            ));
        }
    }
    for (b, a) in before.throttle.iter().zip(&after.throttle) {
        let grew = |x: Option<u64>, y: Option<u64>| matches!((x, y), (Some(x), Some(y)) if y > x);
        if b.cpu == a.cpu && (grew(b.core, a.core) || grew(b.package, a.package)) {
            let count = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
            reasons.push(format!(
                "CPU {}: thermal throttling during the run (core count {} -> {}, package {} -> {}){}",
                a.cpu,
                count(b.core),
                count(a.core),
                count(b.package),
                count(a.package),
                hottest_rise(before, after)
            ));
        }
    }
    RunVerdict {
        noisy: !reasons.is_empty(),
        reasons,
    }
}

/// `, thermal zone Z 71 -> 83 C`: the zone whose temperature rose most over the run, if any.
fn hottest_rise(before: &MachineState, after: &MachineState) -> String {
    before
        .thermal
        .iter()
        .zip(&after.thermal)
        .filter(|(b, a)| b.zone == a.zone && a.celsius > b.celsius)
        .max_by(|(b1, a1), (b2, a2)| {
            (a1.celsius - b1.celsius).total_cmp(&(a2.celsius - b2.celsius))
        })
        .map(|(b, a)| {
            format!(
                ", thermal zone {} {:.0} -> {:.0} C",
                a.zone, b.celsius, a.celsius
            )
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_time_is_put_where_the_context_switches_say() {
        use crate::sys::usage::ResourceUsage;
        let u = |involuntary, voluntary| ResourceUsage {
            involuntary_switches: involuntary,
            voluntary_switches: voluntary,
            ..Default::default()
        };
        assert_eq!(
            lost_to(&u(3, 9)),
            "to other tasks (3 involuntary context switches)"
        );
        assert_eq!(
            lost_to(&u(0, 1)),
            "waiting (1 voluntary context switch, 0 major page faults)"
        );
        // dto once said "lost 2.3 % to other tasks (0 involuntary context switches)".
        assert_eq!(
            lost_to(&u(0, 0)),
            "without being switched out: interrupts or the hypervisor took it"
        );
        assert_eq!(duration(92_000.0), "92 µs");
        assert_eq!(duration(4_000_000.0), "4.0 ms");
        assert_eq!(duration(1.1e9), "1.10 s");
    }

    #[test]
    fn a_clock_that_moved_across_the_intervals_is_noise() {
        use crate::freq::probe::{ProbedClock, Timings, judge as probe};
        // A probe whose chains agree on `mhz` (add, add-xor and a 3-cycle multiply), or, at
        // 0, one whose add chain ran five times too fast (unknown).
        let at = |mhz: f64| {
            let ns = 1e3 / mhz;
            let add = if mhz == 0.0 { 0.05 } else { ns };
            let ns = if mhz == 0.0 { 0.25 } else { ns };
            let t = Timings {
                add: (1000, add * 1000.0),
                add_xor: (1000, 2.0 * ns * 1000.0),
                mul: (1000, 3.0 * ns * 1000.0),
            };
            probe(&t, None, 1)
        };
        let run = |before: f64, after: f64| crate::run::ChildRun::<(), ()> {
            index: 0,
            pid: 1,
            cpu: Some(7),
            cpus_seen: vec![7],
            migrated: false,
            migrations: None,
            usage: Default::default(),
            cpu_share: 1.0,
            iterations: 1,
            calibration_intervals: 0,
            calibration_ns: 0,
            samples: Vec::new(),
            phases: Vec::new(),
            checksum: 0,
            gave_up: false,
            timed_ns: 0,
            detail: None,
            clock: Some(ProbedClock {
                before: at(before),
                after: at(after),
            }),
            run_clock: None,
            counters: None,
        };
        let state = MachineState {
            at_ns: 0,
            cpufreq: Vec::new(),
            thermal: Vec::new(),
            thp: None,
            loadavg_1m: None,
            allowed_cpus: String::new(),
            cooling: Vec::new(),
            throttle: Vec::new(),
        };
        let policy = NoisePolicy::default();
        let v = judge(&[run(3100.0, 2400.0)], &state, &state, &policy);
        assert!(v.noisy);
        assert_eq!(v.reasons.len(), 1, "{:?}", v.reasons);
        assert!(v.reasons[0].contains("CPU 7"), "{}", v.reasons[0]);
        assert!(
            v.reasons[0].contains("clock 3100 -> 2400 MHz"),
            "{}",
            v.reasons[0]
        );
        // Within 10 %: not noise.
        assert!(!judge(&[run(3100.0, 2900.0)], &state, &state, &policy).noisy);
        // An unknown clock on either side is no reason, however far its chains read.
        assert!(!judge(&[run(0.0, 2400.0)], &state, &state, &policy).noisy);
        assert!(!judge(&[run(3100.0, 0.0)], &state, &state, &policy).noisy);
    }

    /// A captured tree of one CPU, one thermal zone and one cooling device.
    fn thermal_tree(name: &str, celsius: u64, state: u64, core_count: u64) -> std::path::PathBuf {
        let root =
            std::env::temp_dir().join(format!("benchmp-quality-{}-{name}", std::process::id()));
        let put = |rel: &str, text: String| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text + "\n").unwrap();
        };
        put("class/thermal/thermal_zone0/type", "cpu-1-7".into());
        put(
            "class/thermal/thermal_zone0/temp",
            (celsius * 1000).to_string(),
        );
        put(
            "class/thermal/cooling_device3/type",
            "thermal-cpufreq-7".into(),
        );
        put("class/thermal/cooling_device3/cur_state", state.to_string());
        put("class/thermal/cooling_device3/max_state", "15".into());
        let t = "devices/system/cpu/cpu0/thermal_throttle";
        put(&format!("{t}/core_throttle_count"), core_count.to_string());
        put(&format!("{t}/package_throttle_count"), "5".into());
        root
    }

    #[test]
    fn a_cooling_device_that_engaged_or_throttling_that_grew_is_noise() {
        let before_root = thermal_tree("before", 71, 0, 2);
        let after_root = thermal_tree("after", 83, 4, 9);
        let before = MachineState::capture(&before_root, &[0]);
        let after = MachineState::capture(&after_root, &[0]);
        assert_eq!(before.cooling.len(), 1);
        assert_eq!(before.cooling[0].kind, "thermal-cpufreq-7");
        assert_eq!(before.throttle[0].core, Some(2));
        let v = judge::<(), ()>(&[], &before, &after, &NoisePolicy::default());
        assert_eq!(v.reasons.len(), 2, "{:?}", v.reasons);
        assert_eq!(
            v.reasons[0],
            "cooling device cooling_device3 (thermal-cpufreq-7): state 0 -> 4 of 15 during the run, thermal zone cpu-1-7 71 -> 83 C"
        );
        assert_eq!(
            v.reasons[1],
            "CPU 0: thermal throttling during the run (core count 2 -> 9, package 5 -> 5), thermal zone cpu-1-7 71 -> 83 C"
        );
        // The same tree before and after: nothing moved.
        assert!(!judge::<(), ()>(&[], &before, &before, &NoisePolicy::default()).noisy);
        // A device that relaxed is no reason either.
        assert!(!judge::<(), ()>(&[], &after, &before, &NoisePolicy::default()).noisy);
        for r in [before_root, after_root] {
            std::fs::remove_dir_all(r).unwrap();
        }
    }

    #[test]
    fn reads_fixture_cpufreq() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/phone8/sys");
        let s = MachineState::capture(&root, &[0, 7]);
        assert_eq!(s.cpufreq.len(), 2);
        assert_eq!(s.cpufreq[1].governor.as_deref(), Some("schedutil"));
        assert_eq!(s.cpufreq[1].max_khz, Some(3302400));
        let vm = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vm2/sys");
        assert!(MachineState::capture(&vm, &[0, 1]).cpufreq.is_empty());
    }
}
