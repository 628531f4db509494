//! The core clock used to turn nanoseconds into cycles in the summary.
//!
//! Cycles are only as good as the clock they assume. The order of evidence: `--mhz` given by
//! the user, cpufreq's `cpuinfo_max_freq` of the CPU (what vendors quote), else the "cpu MHz"
//! line of x86 `/proc/cpuinfo`, which on a VM without cpufreq is the host's nominal or a
//! momentary clock and is therefore labelled an estimate. Without any, cycles are not shown.

use serde::{Deserialize, Serialize};

/// Where a clock figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// `--mhz`.
    Option,
    /// cpufreq `cpuinfo_max_freq`.
    CpufreqMax,
    /// `/proc/cpuinfo` "cpu MHz": an estimate.
    CpuinfoEstimate,
}

/// A core clock and its provenance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Clock {
    /// MHz.
    pub mhz: f64,
    /// Source.
    pub source: ClockSource,
    /// CPU it describes (`None` for `--mhz`).
    pub cpu: Option<usize>,
}

impl Clock {
    /// Cycles for a latency in ns.
    pub fn cycles(&self, ns: f64) -> f64 {
        ns * self.mhz / 1000.0
    }

    /// `2596 MHz (estimate from /proc/cpuinfo "cpu MHz" of CPU 0; no cpufreq)`.
    pub fn describe(&self) -> String {
        let of = self.cpu.map(|c| format!(" of CPU {c}")).unwrap_or_default();
        let src = match self.source {
            ClockSource::Option => "given with --mhz".to_string(),
            ClockSource::CpufreqMax => format!("cpufreq cpuinfo_max_freq{of}"),
            ClockSource::CpuinfoEstimate => {
                format!("estimate from /proc/cpuinfo \"cpu MHz\"{of}; no cpufreq")
            }
        };
        format!("{:.0} MHz ({src})", self.mhz)
    }
}

/// The "cpu MHz" of processor `cpu` in the text of /proc/cpuinfo.
pub fn cpuinfo_mhz(cpuinfo: &str, cpu: usize) -> Option<f64> {
    let mut current = None;
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "processor" => current = value.trim().parse::<usize>().ok(),
            "cpu MHz" if current == Some(cpu) => {
                return value.trim().parse::<f64>().ok().filter(|m| *m > 0.0);
            }
            _ => {}
        }
    }
    None
}

/// The clock for `cpu`: `--mhz`, else cpufreq's maximum (kHz, from the topology), else the
/// /proc/cpuinfo estimate (its text given), else none.
pub fn clock_for(
    cpu: usize,
    mhz_option: Option<f64>,
    cpufreq_max_khz: Option<u64>,
    cpuinfo: Option<&str>,
) -> Option<Clock> {
    if let Some(mhz) = mhz_option {
        return Some(Clock {
            mhz,
            source: ClockSource::Option,
            cpu: None,
        });
    }
    if let Some(khz) = cpufreq_max_khz.filter(|k| *k > 0) {
        return Some(Clock {
            mhz: khz as f64 / 1000.0,
            source: ClockSource::CpufreqMax,
            cpu: Some(cpu),
        });
    }
    cpuinfo
        .and_then(|text| cpuinfo_mhz(text, cpu))
        .map(|mhz| Clock {
            mhz,
            source: ClockSource::CpuinfoEstimate,
            cpu: Some(cpu),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO: &str = "processor\t: 0\nmodel name\t: X\ncpu MHz\t\t: 2596.122\n\n\
                           processor\t: 1\ncpu MHz\t\t: 2400.000\n";

    #[test]
    fn order_of_evidence() {
        let c = clock_for(1, Some(3000.0), Some(2_000_000), Some(CPUINFO)).unwrap();
        assert_eq!((c.mhz, c.source), (3000.0, ClockSource::Option));
        let c = clock_for(1, None, Some(3_302_400), Some(CPUINFO)).unwrap();
        assert_eq!((c.mhz, c.source), (3302.4, ClockSource::CpufreqMax));
        assert!(c.describe().contains("cpuinfo_max_freq of CPU 1"));
        let c = clock_for(1, None, None, Some(CPUINFO)).unwrap();
        assert_eq!((c.mhz, c.source), (2400.0, ClockSource::CpuinfoEstimate));
        assert!(c.describe().contains("estimate"));
        assert_eq!(clock_for(5, None, None, Some(CPUINFO)), None);
        assert_eq!(clock_for(0, None, None, None), None);
        // aarch64 /proc/cpuinfo has no MHz line.
        assert_eq!(cpuinfo_mhz("processor\t: 0\nBogoMIPS\t: 38.40\n", 0), None);
    }

    #[test]
    fn cycles() {
        let c = clock_for(0, Some(2000.0), None, None).unwrap();
        assert!((c.cycles(1.5) - 3.0).abs() < 1e-12);
    }
}
