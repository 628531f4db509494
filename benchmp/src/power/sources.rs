//! The power and energy sources under a sysfs root, in the kernel's own formats
//! (Documentation/ABI): powercap zones (`energy_uj`, wrapping at `max_energy_range_uj`),
//! hwmon channels (`energyN_input` µJ, `powerN_input`/`powerN_average` µW, `currN_input` mA ×
//! `inN_input` mV), power_supply batteries (`power_now` µW, or `current_now` µA ×
//! `voltage_now` µV, signed by `status`) and IIO energy meters of the ODPM kind
//! (`energy_value`: cumulative µWs per rail). Each source says what it covers and how one
//! reading is taken (its family's [`Meter`], one file per family: `battery.rs`,
//! `powercap.rs`, `hwmon.rs`, `odpm.rs`); one that this process cannot use here says why.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use super::meter::{Files, Meter, Reading};
use crate::sysfs::entries;
pub use crate::sysfs::{MAX_ATTR_BYTES, read_attr};

/// One reading of a source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A cumulative counter, µJ, with the meter's own timestamp (ms) when it has one.
    Energy {
        /// The counter.
        uj: u64,
        /// The meter's time of it (ODPM's `T=`), ms.
        at_ms: Option<u64>,
    },
    /// A power, W.
    Power(f64),
}

/// A power or energy source found here.
#[derive(Debug, Clone)]
pub struct Source {
    /// Its stable name (`powercap:package-0`, `hwmon:ina3221:VDD_CPU`, `battery:battery`,
    /// `odpm:S4M_VDD_CPUCL0`, `cmd`).
    pub name: String,
    /// Its family (`powercap`, `hwmon`, `power_supply`, `odpm`, `cmd`: JSON `kind`).
    pub kind: &'static str,
    /// The unit it reads in (`uJ`, `uW`, `mA*mV`, `uA*uV`, `uWs`, `W`).
    pub unit: &'static str,
    /// What it covers (a package, the cores, DRAM, a rail, the whole battery).
    pub covers: String,
    /// The files it reads.
    pub paths: Vec<PathBuf>,
    /// The CPU cluster (topology index) its rail feeds, when its name says (`CPUCL<n>`).
    pub cluster: Option<usize>,
    /// How a reading is taken ([`Meter`]: its family's).
    pub meter: Arc<dyn Meter>,
}

impl PartialEq for Source {
    /// The same source: every field, the meter by what it reads.
    fn eq(&self, other: &Source) -> bool {
        self.name == other.name
            && self.kind == other.kind
            && self.unit == other.unit
            && self.covers == other.covers
            && self.paths == other.paths
            && self.cluster == other.cluster
            && format!("{:?}", self.meter) == format!("{:?}", other.meter)
    }
}

impl Source {
    /// Whether its energy comes from a counter read at the window's edges (else from the
    /// integral of its power samples).
    pub fn is_counter(&self) -> bool {
        matches!(self.meter.reading(), Reading::Counter { .. })
    }
}

/// A source that is there but that this process cannot use, and why (root-only, charging).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unusable {
    /// Its name, as it would be used.
    pub name: String,
    /// Why it cannot be used, in words.
    pub why: String,
}

/// Everything found under a root: the usable sources and the others with their reason.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// Sources that gave a reading, in order: batteries, powercap, hwmon, ODPM rails.
    pub usable: Vec<Source>,
    /// Sources that are there but cannot be used.
    pub unusable: Vec<Unusable>,
}

/// Why a file cannot be read, as a reason: root-only files said so.
pub(super) fn unreadable(path: &Path, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        format!(
            "{} can be read by root only; run as root or choose another source",
            foundation::error::shown(path)
        )
    } else {
        format!("{} cannot be read: {e}", foundation::error::shown(path))
    }
}

/// A number from a file, or why not (a round of readings of that one file, [`Files::number`]).
pub(super) fn number<T: std::str::FromStr>(path: &Path) -> Result<T, String> {
    Files::default().number(path)
}

/// Takes one reading of `source`, or says why it cannot.
pub fn read(source: &Source) -> Result<Value, String> {
    source.meter.read(&mut Files::default())
}

/// One reading of each source, every file read once however many sources share it (an ODPM
/// device's rails).
pub fn read_all(sources: &[Source]) -> Vec<Result<Value, String>> {
    let mut files = Files::default();
    sources.iter().map(|s| s.meter.read(&mut files)).collect()
}

/// A thermal zone to sample: its type (with the zone's folder when two share one) and its
/// `temp` file (m°C).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    /// The zone's type (`cpu-thermal`, `x86_pkg_temp`).
    pub name: String,
    /// Its `temp` file.
    pub path: PathBuf,
}

/// Every thermal zone under `root` that reads.
pub fn zones(root: &Path) -> Vec<Zone> {
    let mut out: Vec<Zone> = Vec::new();
    for d in entries(&root.join("class/thermal"), "thermal_zone") {
        let Ok(kind) = read_attr(&d.join("type")) else {
            continue;
        };
        if number::<f64>(&d.join("temp")).is_err() {
            continue;
        }
        let mut name = kind;
        if out.iter().any(|z| z.name == name) {
            let at = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            name = format!("{name} ({at})");
        }
        out.push(Zone {
            name,
            path: d.join("temp"),
        });
    }
    out
}

/// A cpufreq policy to sample: its name (`policy0`, or `cpu3` where there are no policy
/// folders) and its `scaling_cur_freq` (kHz).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreqPolicy {
    /// `policy0`.
    pub name: String,
    /// Its `scaling_cur_freq`.
    pub path: PathBuf,
}

/// Every cpufreq policy under `root` whose `scaling_cur_freq` reads.
pub fn policies(root: &Path, online: &[usize]) -> Vec<FreqPolicy> {
    let cpu = root.join("devices/system/cpu");
    let mut out: Vec<FreqPolicy> = entries(&cpu.join("cpufreq"), "policy")
        .into_iter()
        .filter_map(|d| {
            let path = d.join("scaling_cur_freq");
            number::<u64>(&path).ok()?;
            Some(FreqPolicy {
                name: d.file_name()?.to_string_lossy().into_owned(),
                path,
            })
        })
        .collect();
    if out.is_empty() {
        // Per-CPU folders (no policy links): one per distinct folder.
        let mut seen: Vec<PathBuf> = Vec::new();
        for &c in online {
            let d = cpu.join(format!("cpu{c}/cpufreq"));
            let real = std::fs::canonicalize(&d).unwrap_or(d.clone());
            if seen.contains(&real) || number::<u64>(&d.join("scaling_cur_freq")).is_err() {
                continue;
            }
            seen.push(real);
            out.push(FreqPolicy {
                name: format!("cpu{c}"),
                path: d.join("scaling_cur_freq"),
            });
        }
    }
    out
}
