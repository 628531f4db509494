//! The core clock for DMIPS/MHz.
//!
//! DMIPS/MHz divides by the clock the core ran at. The best figure available without
//! counters is cpufreq's `cpuinfo_max_freq` of the CPU the loop ran on (what vendors quote);
//! the user can give one instead. Without cpufreq (many VMs), x86 `/proc/cpuinfo` still shows
//! a "cpu MHz" line, often the TSC rate or a momentary sample, so it is only an estimate and
//! is labelled as one.

use std::fs;
use std::path::Path;

use serde::Serialize;

/// Where cpufreq lives.
pub const SYSFS_CPU: &str = "/sys/devices/system/cpu";
/// Where the x86 "cpu MHz" estimate comes from.
pub const PROC_CPUINFO: &str = "/proc/cpuinfo";

/// Where a clock figure came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// Given on the command line (`--mhz`).
    Option,
    /// cpufreq's `cpuinfo_max_freq`.
    CpufreqMax,
    /// `/proc/cpuinfo` "cpu MHz": an estimate.
    CpuinfoEstimate,
}

/// A core clock and its provenance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoreClock {
    /// Clock in MHz.
    pub mhz: f64,
    /// Where it came from.
    pub source: ClockSource,
    /// The CPU it describes, when it came from the system.
    pub cpu: Option<usize>,
}

impl CoreClock {
    /// True when the figure is only an estimate of the clock.
    pub fn is_estimate(&self) -> bool {
        self.source == ClockSource::CpuinfoEstimate
    }

    /// A short description of the source, e.g. "cpufreq cpuinfo_max_freq of cpu 3".
    pub fn describe(&self) -> String {
        let of_cpu = self.cpu.map(|c| format!(" of cpu {c}")).unwrap_or_default();
        match self.source {
            ClockSource::Option => "given with --mhz".to_string(),
            ClockSource::CpufreqMax => format!("cpufreq cpuinfo_max_freq{of_cpu}"),
            ClockSource::CpuinfoEstimate => {
                format!("/proc/cpuinfo \"cpu MHz\"{of_cpu}, no cpufreq here")
            }
        }
    }
}

/// cpufreq's maximum clock of `cpu` in MHz, read below `sysfs_cpu`.
pub fn cpufreq_max_mhz(sysfs_cpu: &Path, cpu: usize) -> Option<f64> {
    let path = sysfs_cpu
        .join(format!("cpu{cpu}"))
        .join("cpufreq")
        .join("cpuinfo_max_freq");
    let khz: u64 = fs::read_to_string(path).ok()?.trim().parse().ok()?;
    (khz > 0).then(|| khz as f64 / 1000.0)
}

/// The "cpu MHz" of `processor : cpu` in the text of `/proc/cpuinfo`.
pub fn cpuinfo_mhz(cpuinfo: &str, cpu: usize) -> Option<f64> {
    let mut current: Option<usize> = None;
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "processor" => current = value.trim().parse().ok(),
            "cpu MHz" if current == Some(cpu) => {
                let mhz: f64 = value.trim().parse().ok()?;
                return (mhz.is_finite() && mhz > 0.0).then_some(mhz);
            }
            _ => {}
        }
    }
    None
}

/// The best known clock of `cpu`: cpufreq's maximum, else the `/proc/cpuinfo` estimate.
pub fn detect(cpu: usize) -> Option<CoreClock> {
    if let Some(mhz) = cpufreq_max_mhz(Path::new(SYSFS_CPU), cpu) {
        return Some(CoreClock {
            mhz,
            source: ClockSource::CpufreqMax,
            cpu: Some(cpu),
        });
    }
    let text = fs::read_to_string(PROC_CPUINFO).ok()?;
    cpuinfo_mhz(&text, cpu).map(|mhz| CoreClock {
        mhz,
        source: ClockSource::CpuinfoEstimate,
        cpu: Some(cpu),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu MHz\t\t: 2199.998\n\n\
                           processor\t: 1\nvendor_id\t: GenuineIntel\ncpu MHz\t\t: 3400.000\n\n";

    #[test]
    fn cpuinfo_mhz_reads_the_right_processor() {
        assert_eq!(cpuinfo_mhz(CPUINFO, 0), Some(2199.998));
        assert_eq!(cpuinfo_mhz(CPUINFO, 1), Some(3400.0));
        assert_eq!(cpuinfo_mhz(CPUINFO, 2), None);
        // arm64 /proc/cpuinfo has no clock.
        assert_eq!(
            cpuinfo_mhz("processor\t: 0\nBogoMIPS\t: 48.00\nCPU part\t: 0xd44\n", 0),
            None
        );
    }

    #[test]
    fn cpufreq_max_is_read_in_khz() {
        let root = std::env::temp_dir().join(format!("dhry-freq-test-{}", std::process::id()));
        let dir = root.join("cpu3").join("cpufreq");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("cpuinfo_max_freq"), "3187200\n").unwrap();
        assert_eq!(cpufreq_max_mhz(&root, 3), Some(3187.2));
        assert_eq!(cpufreq_max_mhz(&root, 4), None);
        fs::write(dir.join("cpuinfo_max_freq"), "fast\n").unwrap();
        assert_eq!(cpufreq_max_mhz(&root, 3), None);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn sources_are_labelled() {
        let c = CoreClock {
            mhz: 2200.0,
            source: ClockSource::CpuinfoEstimate,
            cpu: Some(1),
        };
        assert!(c.is_estimate());
        assert_eq!(
            c.describe(),
            "/proc/cpuinfo \"cpu MHz\" of cpu 1, no cpufreq here"
        );
        let c = CoreClock {
            source: ClockSource::CpufreqMax,
            ..c
        };
        assert!(!c.is_estimate());
        assert_eq!(c.describe(), "cpufreq cpuinfo_max_freq of cpu 1");
    }
}
