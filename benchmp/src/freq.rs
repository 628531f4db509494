//! The core clock that per-MHz and per-cycle figures divide by (dhry's DMIPS/MHz,
//! lat_mem_rd's cycles), with where it came from.
//!
//! Only a clock that can be trusted is used: one given (`--mhz`), one counted over the timed
//! intervals (the cycles counter, cpufreq's time_in_state), the clock probe's when its chains
//! agree and it is plausible ([`probe`]), or cpufreq's `cpuinfo_max_freq` (what vendors quote).
//! x86's `/proc/cpuinfo` "cpu MHz" is no such clock: in a VM it is the host's nominal clock or
//! the TSC's rate (seen 40 % below what the core ran at), so it only serves as the reference a
//! probe is held against. Without any, the clock is unknown and says why.

use serde::{Deserialize, Serialize};

use crate::topology::Topology;

pub mod pin;
pub mod probe;
pub mod residency;

/// Where the x86 "cpu MHz" estimate comes from.
pub const PROC_CPUINFO: &str = "/proc/cpuinfo";

/// Largest clock `--mhz` accepts (a terahertz: anything above is a typo).
pub const MAX_MHZ: f64 = 1_000_000.0;

/// Where a clock figure came from (JSON: `option`, `cpufreq_max`, `cpuinfo_estimate`, `probe`,
/// `cycles`, `time_in_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// Given on the command line (`--mhz`).
    Option,
    /// cpufreq's `cpuinfo_max_freq`.
    CpufreqMax,
    /// `/proc/cpuinfo` "cpu MHz": an estimate that older reports divided by; no longer used
    /// for a figure (see the module's documentation).
    CpuinfoEstimate,
    /// Measured by the child itself before and after its timed intervals ([`probe`]: three
    /// instruction chains that agree): an estimate of the clock it ran at.
    Probe,
    /// The child's hardware cycles counter over its timed intervals, divided by the time it
    /// ran (perf_event_open): the clock it ran at.
    Cycles,
    /// cpufreq's `stats/time_in_state` of the child's CPU over its timed intervals: the
    /// time-weighted mean of the states the kernel set.
    TimeInState,
}

/// The clock a child ran at over its timed intervals, from a counter or the kernel's record
/// (JSON: `mhz`, `source`, `low_mhz`, `high_mhz`, `states`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunClock {
    /// Mean clock over the intervals, MHz.
    pub mhz: f64,
    /// [`ClockSource::Cycles`] or [`ClockSource::TimeInState`].
    pub source: ClockSource,
    /// Lowest state used (time_in_state; the mean for cycles), MHz.
    pub low_mhz: f64,
    /// Highest state used, MHz.
    pub high_mhz: f64,
    /// Time spent in each state used, highest clock first (time_in_state only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<residency::StateTime>,
}

/// A core clock and its provenance (JSON: `mhz`, `source`, `cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CoreClock {
    /// Clock in MHz.
    pub mhz: f64,
    /// Where it came from.
    pub source: ClockSource,
    /// The CPU it describes (`None` for `--mhz`, which holds for every CPU).
    pub cpu: Option<usize>,
}

impl CoreClock {
    /// A clock given with `--mhz`.
    pub fn given(mhz: f64) -> CoreClock {
        CoreClock {
            mhz,
            source: ClockSource::Option,
            cpu: None,
        }
    }

    /// True when the figure is only an estimate of the clock.
    pub fn is_estimate(&self) -> bool {
        matches!(
            self.source,
            ClockSource::CpuinfoEstimate | ClockSource::Probe
        )
    }

    /// Cycles for a latency in ns.
    pub fn cycles(&self, ns: f64) -> f64 {
        ns * self.mhz / 1000.0
    }

    /// Where the figure came from, e.g. `cpufreq cpuinfo_max_freq of CPU 3` or
    /// `/proc/cpuinfo "cpu MHz" of CPU 0; no cpufreq`.
    pub fn source_text(&self) -> String {
        let of = self.cpu.map(|c| format!(" of CPU {c}")).unwrap_or_default();
        match self.source {
            ClockSource::Option => "given with --mhz".to_string(),
            ClockSource::CpufreqMax => format!("cpufreq cpuinfo_max_freq{of}"),
            ClockSource::CpuinfoEstimate => format!("/proc/cpuinfo \"cpu MHz\"{of}; no cpufreq"),
            ClockSource::Probe => format!(
                "three instruction chains that agree, timed before and after the timed intervals{of}"
            ),
            ClockSource::Cycles => format!("the cycles counter over the timed intervals{of}"),
            ClockSource::TimeInState => {
                format!("cpufreq time_in_state over the timed intervals{of}")
            }
        }
    }

    /// The clock and its source, e.g. `2596 MHz (estimate from /proc/cpuinfo "cpu MHz" of
    /// CPU 0; no cpufreq)`.
    pub fn describe(&self) -> String {
        let estimate = if self.is_estimate() {
            "estimate from "
        } else {
            ""
        };
        format!("{:.0} MHz ({estimate}{})", self.mhz, self.source_text())
    }
}

/// The "cpu MHz" of processor `cpu` in the text of `/proc/cpuinfo`, when it is a positive
/// number.
pub fn cpuinfo_mhz(cpuinfo: &str, cpu: usize) -> Option<f64> {
    let mut current = None;
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "processor" => current = value.trim().parse::<usize>().ok(),
            "cpu MHz" if current == Some(cpu) => {
                return value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|m| m.is_finite() && *m > 0.0);
            }
            _ => {}
        }
    }
    None
}

/// The clock for `cpu`: `given_mhz` (`--mhz`), else cpufreq's maximum in kHz, else none.
pub fn clock_for(
    cpu: usize,
    given_mhz: Option<f64>,
    cpufreq_max_khz: Option<u64>,
) -> Option<CoreClock> {
    if let Some(mhz) = given_mhz {
        return Some(CoreClock::given(mhz));
    }
    cpufreq_max_khz.filter(|k| *k > 0).map(|khz| CoreClock {
        mhz: khz as f64 / 1000.0,
        source: ClockSource::CpufreqMax,
        cpu: Some(cpu),
    })
}

/// [`clock_for`] on this machine, cpufreq from the topology. `None` for an unknown CPU
/// without `given_mhz`.
pub fn detect(
    topology: &Topology,
    cpu: Option<usize>,
    given_mhz: Option<f64>,
) -> Option<CoreClock> {
    if let Some(mhz) = given_mhz {
        return Some(CoreClock::given(mhz));
    }
    let cpu = cpu?;
    clock_for(cpu, None, topology.cpu(cpu).and_then(|c| c.max_freq_khz))
}

/// The clock a per-MHz or per-cycle figure divides by: `given_mhz` (`--mhz`), else the clock
/// the children measured over their timed intervals (`measured`: cycles counter,
/// time_in_state or [`probe`], see [`crate::report::measured_clock`]), else
/// what [`detect`] finds.
pub fn clock_of_child(
    topology: &Topology,
    cpu: Option<usize>,
    given_mhz: Option<f64>,
    measured: Option<(f64, ClockSource)>,
) -> Option<CoreClock> {
    match (
        given_mhz,
        measured.filter(|(m, _)| m.is_finite() && *m > 0.0),
    ) {
        (Some(mhz), _) => Some(CoreClock::given(mhz)),
        (None, Some((mhz, source))) => Some(CoreClock { mhz, source, cpu }),
        (None, None) => detect(topology, cpu, None),
    }
}

/// Value parser for `--mhz`: a clock above 0 and at most [`MAX_MHZ`].
pub fn parse_mhz(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(m) if m.is_finite() && m > 0.0 && m <= MAX_MHZ => Ok(m),
        _ => Err(format!(
            "'{s}' is not a clock in MHz (a number above 0 and at most {MAX_MHZ})"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO: &str = "processor\t: 0\nmodel name\t: X\ncpu MHz\t\t: 2596.122\n\n\
                           processor\t: 1\ncpu MHz\t\t: 2400.000\n\n\
                           processor\t: 2\ncpu MHz\t\t: nan\n\n\
                           processor\t: 3\ncpu MHz\t\t: 0.000\n";

    #[test]
    fn cpuinfo_mhz_reads_the_right_processor() {
        assert_eq!(cpuinfo_mhz(CPUINFO, 0), Some(2596.122));
        assert_eq!(cpuinfo_mhz(CPUINFO, 1), Some(2400.0));
        assert_eq!(cpuinfo_mhz(CPUINFO, 2), None, "not a number");
        assert_eq!(cpuinfo_mhz(CPUINFO, 3), None, "not a clock");
        assert_eq!(cpuinfo_mhz(CPUINFO, 4), None, "no such processor");
        // arm64 /proc/cpuinfo has no clock.
        assert_eq!(cpuinfo_mhz("processor\t: 0\nBogoMIPS\t: 38.40\n", 0), None);
    }

    #[test]
    fn order_of_evidence() {
        let c = clock_for(1, Some(3000.0), Some(2_000_000)).unwrap();
        assert_eq!(c, CoreClock::given(3000.0));
        let c = clock_for(1, None, Some(3_302_400)).unwrap();
        assert_eq!(
            (c.mhz, c.source, c.cpu),
            (3302.4, ClockSource::CpufreqMax, Some(1))
        );
        assert!(!c.is_estimate());
        // No cpufreq: no clock ("cpu MHz" is only a probe's reference).
        assert_eq!(clock_for(1, None, Some(0)), None);
        assert_eq!(clock_for(0, None, None), None);
    }

    #[test]
    fn cpufreq_comes_from_the_topology() {
        // benchmp's captured tree of an 8-core phone: CPU 7 tops out at 3.3 GHz.
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/phone8/sys");
        let t = Topology::from_root(&root).unwrap();
        let c = detect(&t, Some(7), None).unwrap();
        assert_eq!(c.source, ClockSource::CpufreqMax);
        assert_eq!(c.mhz, 3302.4);
        assert_eq!(c.cpu, Some(7));
        assert_eq!(detect(&t, None, None), None);
        assert_eq!(
            detect(&t, None, Some(1000.0)),
            Some(CoreClock::given(1000.0))
        );
    }

    #[test]
    fn sources_are_described() {
        let c = CoreClock {
            mhz: 2596.1,
            source: ClockSource::CpuinfoEstimate,
            cpu: Some(0),
        };
        assert_eq!(
            c.describe(),
            "2596 MHz (estimate from /proc/cpuinfo \"cpu MHz\" of CPU 0; no cpufreq)"
        );
        let c = CoreClock {
            source: ClockSource::CpufreqMax,
            cpu: Some(3),
            ..c
        };
        assert_eq!(c.source_text(), "cpufreq cpuinfo_max_freq of CPU 3");
        assert_eq!(
            CoreClock::given(2000.0).describe(),
            "2000 MHz (given with --mhz)"
        );
    }

    #[test]
    fn json_field_names_are_kept() {
        let c = CoreClock {
            mhz: 2200.0,
            source: ClockSource::CpuinfoEstimate,
            cpu: Some(1),
        };
        let j = serde_json::to_value(c).unwrap();
        assert_eq!(
            j,
            serde_json::json!({"mhz": 2200.0, "source": "cpuinfo_estimate", "cpu": 1})
        );
        assert_eq!(serde_json::from_value::<CoreClock>(j).unwrap(), c);
        let j = serde_json::to_value(CoreClock::given(1.5)).unwrap();
        assert_eq!(j["source"], "option");
        assert!(j["cpu"].is_null());
        let j = serde_json::to_value(ClockSource::CpufreqMax).unwrap();
        assert_eq!(j, "cpufreq_max");
    }

    #[test]
    fn cycles() {
        assert!((CoreClock::given(2000.0).cycles(1.5) - 3.0).abs() < 1e-12);
    }

    #[test]
    fn mhz_values() {
        assert_eq!(parse_mhz("2400"), Ok(2400.0));
        assert_eq!(parse_mhz(" 1.5 "), Ok(1.5));
        assert_eq!(parse_mhz("1000000"), Ok(MAX_MHZ));
        for bad in ["", "abc", "0", "-1", "nan", "inf", "1000001", "2GHz"] {
            let e = parse_mhz(bad).unwrap_err();
            assert!(e.contains("not a clock in MHz"), "{bad:?}: {e}");
        }
    }
}
