//! What a measurement records about power (JSON `power`, absent without a source): each
//! source's energy, mean and peak power over the timed window, net of the idle baseline; the
//! figure per watt or per joule; every thermal zone's start, end and highest; and the time
//! series. Pure data and arithmetic, written out by [`crate::export`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::topology::Topology;

/// Where a source's energy comes from (JSON `counter` or `samples`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum From {
    /// An energy counter read at the window's start and end (and in between, to follow its
    /// wraps).
    Counter,
    /// The integral of its power samples.
    Samples,
}

/// One source over one measurement's window. A source that failed in the window, or whose
/// readings cannot be believed (a counter that went back or never moved, a power below zero
/// or beyond any machine's, a meter whose readings do not cover the window) has its figures
/// `null` and says why in `missing`: the measurement itself stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceRecord {
    /// Its name (`battery:battery`).
    pub name: String,
    /// Its family (`powercap`, `hwmon`, `power_supply`, `odpm`, `cmd`).
    pub kind: String,
    /// The unit it reads in (`uJ`, `uW`, `uA*uV`, ...).
    pub unit: String,
    /// What it covers.
    pub covers: String,
    /// The CPU cluster its rail feeds, when its name says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<usize>,
    /// Counter or samples.
    pub from: From,
    /// Readings taken (or received) in the window.
    pub samples: usize,
    /// The interval between the changes of its value seen in the window, ms: its update
    /// period as measured, never finer than the sampling (`null` with fewer than two changes).
    pub period_ms: Option<f64>,
    /// Energy over the window, J (`null` when missing).
    pub energy_j: Option<f64>,
    /// Mean power over the window, W.
    pub mean_w: Option<f64>,
    /// Highest power between two readings, W.
    pub peak_w: Option<f64>,
    /// Its idle power (`--power-baseline`), W; `null` without one.
    pub baseline_w: Option<f64>,
    /// Energy less the baseline's over the window, J (= `energy_j` without one).
    pub net_energy_j: Option<f64>,
    /// Mean power less the baseline, W (= `mean_w` without one).
    pub net_mean_w: Option<f64>,
    /// Why this source's figures are missing in this window (`null`: they are there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// The measurement's figure per watt or per joule (`DMIPS/W`, `MB/J`, `iterations/J`,
/// `nJ/load`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerEnergy {
    /// The value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
}

/// One cluster's figure per watt of the rail that feeds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterEnergy {
    /// Cluster index in the topology.
    pub cluster: usize,
    /// Its CPUs.
    pub cpus: Vec<usize>,
    /// The source of its rail.
    pub source: String,
    /// The rail's mean power less its baseline, W.
    pub net_mean_w: f64,
    /// The cluster's figure per watt or per joule of it.
    pub value: f64,
    /// Its unit.
    pub unit: String,
}

/// One thermal zone over the window, °C.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TempRecord {
    /// The zone's type.
    pub zone: String,
    /// At the window's start.
    pub start_c: f64,
    /// At its end.
    pub end_c: f64,
    /// The highest reading in it.
    pub max_c: f64,
}

/// Every sample of the window: its time, and each source's power, zone's temperature and
/// policy's clock then (`null` where a reading failed or had no value yet).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// CLOCK_MONOTONIC ns of each sample.
    pub t_ns: Vec<u64>,
    /// Power by source, W.
    pub power_w: BTreeMap<String, Vec<Option<f64>>>,
    /// Temperature by zone, °C.
    pub temp_c: BTreeMap<String, Vec<Option<f64>>>,
    /// `scaling_cur_freq` by policy, kHz.
    pub freq_khz: BTreeMap<String, Vec<Option<u64>>>,
}

/// A measurement's power record (JSON `power`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerRecord {
    /// The timed window as the parent saw it, CLOCK_MONOTONIC ns: from right before it told
    /// the children to start to right after the last said it was done.
    pub window_ns: [u64; 2],
    /// CPU time the parent spent taking the window's samples, ns: the sampler's cost, taken
    /// from a measured CPU only when every allowed CPU is measured.
    pub sampler_cpu_ns: u64,
    /// Each source, the first being the one the figure is per.
    pub sources: Vec<SourceRecord>,
    /// The figure per net watt (or joule) of the first source; `null` when its net power is
    /// not above zero or is missing.
    pub per_energy: Option<PerEnergy>,
    /// Each cluster's figure per net watt of its own rail, where a source is one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_cluster: Vec<ClusterEnergy>,
    /// Every thermal zone.
    pub temps: Vec<TempRecord>,
    /// The time series.
    pub series: Series,
}

/// The idle power measured before the run (JSON `power_baseline`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// Seconds of idle measured.
    pub seconds: f64,
    /// Each source's mean power then, W.
    pub sources: BTreeMap<String, f64>,
    /// The sources that gave no idle power, and why (their figures are missing in every
    /// measurement: a net power without its baseline would be another quantity).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub missing: BTreeMap<String, String>,
}

/// The work a figure counts, to put per watt or per joule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Work<'a> {
    /// A throughput: `value` in `unit` (`MB/s`, `DMIPS`, `iterations/s`).
    Rate {
        /// The figure.
        value: f64,
        /// Its unit.
        unit: &'a str,
    },
    /// A latency: `ns` per operation in each of `concurrent` children running together.
    Latency {
        /// ns per operation.
        ns: f64,
        /// Children timing operations at once (1 when sequential).
        concurrent: f64,
        /// What one operation is (`load`, `op`).
        op: &'a str,
    },
}

impl Work<'_> {
    /// The figure per `watts`: a rate per watt (`X/s` per W is `X/J`, `DMIPS` per W is
    /// `DMIPS/W`), a latency as the energy of one operation (W × ns = nJ, shared by the
    /// operations in flight together). `None` without power above zero.
    pub fn per(&self, watts: f64) -> Option<PerEnergy> {
        if !(watts > 0.0 && watts.is_finite()) {
            return None;
        }
        let (value, unit) = match *self {
            Work::Rate { value, unit } => (
                value / watts,
                match unit.strip_suffix("/s") {
                    Some(u) => format!("{u}/J"),
                    None => format!("{unit}/W"),
                },
            ),
            Work::Latency { ns, concurrent, op } => {
                (watts * ns / concurrent.max(1.0), format!("nJ/{op}"))
            }
        };
        value.is_finite().then_some(PerEnergy { value, unit })
    }
}

impl PowerRecord {
    /// Puts the system figure per net watt of the first source, and each cluster's figure
    /// (`clusters`: index and work) per net watt of the rail that feeds it. The session calls
    /// it once, when it makes the report: with the tool's work when it names one (dhry's DMIPS
    /// by `--aggregate`, [`crate::ToolData::work`]), else the measurement's own figures.
    pub fn per_watt(
        &mut self,
        system: Work<'_>,
        clusters: &[(usize, Work<'_>)],
        topology: &Topology,
    ) {
        self.per_energy = self
            .sources
            .first()
            .and_then(|s| s.net_mean_w)
            .and_then(|w| system.per(w));
        self.per_cluster = clusters
            .iter()
            .filter_map(|(cluster, work)| {
                let source = self.sources.iter().find(|s| s.cluster == Some(*cluster))?;
                let net_mean_w = source.net_mean_w?;
                let e = work.per(net_mean_w)?;
                Some(ClusterEnergy {
                    cluster: *cluster,
                    cpus: topology
                        .clusters
                        .get(*cluster)
                        .map(|c| c.cpus.clone())
                        .unwrap_or_default(),
                    source: source.name.clone(),
                    net_mean_w,
                    value: e.value,
                    unit: e.unit,
                })
            })
            .collect();
    }

    /// The note line of a measurement: `NAME: battery:battery 2.61 W (net of 0.50), 10.1 J,
    /// 4520 MB/J; odpm:S4M_VDD_CPUCL0 0.80 W, 1.6 J; cluster 0 1200 DMIPS/W; cpu-thermal 40.0
    /// -> 55.0 C (max 56.0)`; a source without figures `battery:battery missing, because
    /// ...`.
    pub fn line(&self, name: &str) -> String {
        let mut parts: Vec<String> = Vec::new();
        for (i, s) in self.sources.iter().enumerate() {
            let (Some(net_mean_w), Some(net_energy_j), None) =
                (s.net_mean_w, s.net_energy_j, &s.missing)
            else {
                parts.push(format!(
                    "{} missing, because {}",
                    s.name,
                    s.missing.as_deref().unwrap_or("it gave no figure")
                ));
                continue;
            };
            let net = s
                .baseline_w
                .map(|b| format!(" (net of {b:.2})"))
                .unwrap_or_default();
            let mut p = format!(
                "{} {} W{net}, {} J",
                s.name,
                fixed(net_mean_w, 2),
                fixed(net_energy_j, 1)
            );
            if i == 0
                && let Some(e) = &self.per_energy
            {
                p += &format!(", {} {}", significant(e.value), e.unit);
            }
            parts.push(p);
        }
        for c in &self.per_cluster {
            parts.push(format!(
                "cluster {} {} {}",
                c.cluster,
                significant(c.value),
                c.unit
            ));
        }
        for t in &self.temps {
            parts.push(format!(
                "{} {:.1} -> {:.1} C (max {:.1})",
                t.zone, t.start_c, t.end_c, t.max_c
            ));
        }
        format!("{name}: {}", parts.join("; "))
    }
}

/// `x` with `decimals` places, never `-0.00` for a tiny negative (a baseline's rounding), and
/// never hundreds of digits: beyond 1e9 in magnitude it takes an exponent.
fn fixed(x: f64, decimals: usize) -> String {
    if x.abs() >= 1e9 {
        return format!("{x:.3e}");
    }
    let s = format!("{x:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => s,
    }
}

/// A figure with about four significant digits, without an exponent for everyday sizes.
fn significant(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 {
        crate::number::table_number(x, 0)
    } else if a >= 1.0 {
        crate::number::table_number(x, 2)
    } else {
        crate::number::table_number(x, 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(name: &str, net_mean_w: f64, cluster: Option<usize>) -> SourceRecord {
        SourceRecord {
            name: name.into(),
            kind: "odpm".into(),
            unit: "uWs".into(),
            covers: String::new(),
            cluster,
            from: From::Counter,
            samples: 3,
            period_ms: Some(100.0),
            energy_j: Some(net_mean_w * 2.0 + 1.0),
            mean_w: Some(net_mean_w + 0.5),
            peak_w: Some(net_mean_w + 1.0),
            baseline_w: Some(0.5),
            net_energy_j: Some(net_mean_w * 2.0),
            net_mean_w: Some(net_mean_w),
            missing: None,
        }
    }

    #[test]
    fn figures_per_watt_and_per_joule_carry_their_units() {
        let rate = |value, unit| Work::Rate { value, unit }.per(2.0).unwrap();
        assert_eq!(
            rate(9040.0, "MB/s"),
            PerEnergy {
                value: 4520.0,
                unit: "MB/J".into()
            }
        );
        assert_eq!(rate(100.0, "DMIPS").unit, "DMIPS/W");
        assert_eq!(rate(10.0, "iterations/s").unit, "iterations/J");
        // 100 ns per load at 2 W is 200 nJ; with four chasers in flight, 50 nJ each.
        let lat = Work::Latency {
            ns: 100.0,
            concurrent: 4.0,
            op: "load",
        };
        assert_eq!(
            lat.per(2.0),
            Some(PerEnergy {
                value: 50.0,
                unit: "nJ/load".into()
            })
        );
        assert_eq!(lat.per(0.0), None);
        assert_eq!(rate(1.0, "x").value, 0.5);
        assert_eq!(
            Work::Rate {
                value: 1.0,
                unit: "x"
            }
            .per(-1.0),
            None
        );
        assert_eq!(fixed(-0.001, 2), "0.00");
        assert_eq!(fixed(-0.01, 2), "-0.01");
    }

    #[test]
    fn the_first_source_gives_the_figure_and_each_rail_its_cluster() {
        let t = Topology::from_root(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/phone8/sys"),
        )
        .unwrap();
        let mut r = PowerRecord {
            window_ns: [0, 2_000_000_000],
            sampler_cpu_ns: 0,
            sources: vec![
                source("battery:battery", 4.0, None),
                source("odpm:S4M_VDD_CPUCL0", 0.5, Some(0)),
                source("odpm:S3M_VDD_CPUCL1", 1.0, Some(1)),
            ],
            per_energy: None,
            per_cluster: Vec::new(),
            temps: vec![TempRecord {
                zone: "cpu-thermal".into(),
                start_c: 40.0,
                end_c: 55.0,
                max_c: 56.0,
            }],
            series: Series::default(),
        };
        let work = |value| Work::Rate {
            value,
            unit: "DMIPS",
        };
        r.per_watt(
            work(8000.0),
            &[(0, work(1000.0)), (1, work(3000.0)), (3, work(4000.0))],
            &t,
        );
        assert_eq!(r.per_energy.as_ref().unwrap().value, 2000.0);
        let clusters: Vec<(usize, f64, &str)> = r
            .per_cluster
            .iter()
            .map(|c| (c.cluster, c.value, c.source.as_str()))
            .collect();
        assert_eq!(
            clusters,
            [
                (0, 2000.0, "odpm:S4M_VDD_CPUCL0"),
                (1, 3000.0, "odpm:S3M_VDD_CPUCL1")
            ]
        );
        assert_eq!(r.per_cluster[1].cpus, vec![2, 3, 4]);
        assert_eq!(
            r.line("dhrystone"),
            "dhrystone: battery:battery 4.00 W (net of 0.50), 8.0 J, 2000 DMIPS/W; odpm:S4M_VDD_CPUCL0 0.50 W (net of 0.50), 1.0 J; odpm:S3M_VDD_CPUCL1 1.00 W (net of 0.50), 2.0 J; cluster 0 2000 DMIPS/W; cluster 1 3000 DMIPS/W; cpu-thermal 40.0 -> 55.0 C (max 56.0)"
        );
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["sources"][0]["from"], "counter");
        assert_eq!(j["per_energy"]["unit"], "DMIPS/W");
        assert!(j["sources"][0].get("cluster").is_none());
    }
}
