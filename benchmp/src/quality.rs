//! Run quality: the machine's state before and after a run, and the noise verdict.
//!
//! A bandwidth figure means little if the governor dropped the clock halfway or the child was
//! preempted fifty times, so every report carries the evidence and flags a noisy run.

use std::path::Path;

use serde::{Deserialize, Serialize};

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
}

/// One thermal zone reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thermal {
    /// Zone type (e.g. `cpu-1-0-0`, `x86_pkg_temp`).
    pub zone: String,
    /// Temperature in °C.
    pub celsius: f64,
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
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
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
                };
                (f.governor.is_some() || f.cur_khz.is_some()).then_some(f)
            })
            .collect();
        let mut thermal = Vec::new();
        if let Ok(rd) = std::fs::read_dir(sysfs.join("class/thermal")) {
            let mut zones: Vec<_> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("thermal_zone"))
                })
                .collect();
            zones.sort();
            for z in zones {
                if let (Some(kind), Some(t)) = (
                    read(&z.join("type")),
                    read(&z.join("temp")).and_then(|s| s.parse::<f64>().ok()),
                ) {
                    thermal.push(Thermal {
                        zone: kind,
                        celsius: t / 1000.0,
                    });
                }
            }
        }
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
        }
    }
}

/// Thresholds for calling a run noisy.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NoisePolicy {
    /// Percentage of its timed wall time a child may lose to other tasks (or the hypervisor)
    /// before it is noisy.
    pub max_lost_pct: f64,
}

impl Default for NoisePolicy {
    fn default() -> Self {
        NoisePolicy { max_lost_pct: 2.0 }
    }
}

/// The verdict on a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// True when any reason was found.
    pub noisy: bool,
    /// One line per problem, naming the child and CPU.
    pub reasons: Vec<String>,
}

/// Judges children: preempted too often, migrated while pinned, gave up, frequency changed.
pub fn judge(
    children: &[crate::run::ChildRun],
    before: &MachineState,
    after: &MachineState,
    policy: &NoisePolicy,
) -> Verdict {
    let mut reasons = Vec::new();
    for c in children {
        let who = c.who();
        let lost = (1.0 - c.cpu_share) * 100.0;
        if c.timed_ns > 0 && lost > policy.max_lost_pct {
            reasons.push(format!(
                "{who}: lost {lost:.1} % of its timed run to other tasks ({} involuntary context switches in {:.2} s)",
                c.usage.involuntary_switches,
                c.timed_ns as f64 / 1e9
            ));
        }
        if c.cpu.is_some() && c.migrated {
            reasons.push(format!(
                "{who}: ran on CPUs {:?} although pinned",
                c.cpus_seen
            ));
        }
        if c.gave_up {
            reasons.push(format!(
                "{who}: only {} of the wanted samples were long enough",
                c.samples.iter().filter(|s| s.accepted).count()
            ));
        }
    }
    for (b, a) in before.cpufreq.iter().zip(&after.cpufreq) {
        if b.max_khz != a.max_khz || b.governor != a.governor {
            reasons.push(format!(
                "CPU {}: frequency policy changed during the run ({:?} {:?} kHz -> {:?} {:?} kHz)",
                b.cpu, b.governor, b.max_khz, a.governor, a.max_khz
            ));
        }
    }
    Verdict {
        noisy: !reasons.is_empty(),
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
