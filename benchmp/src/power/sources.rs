//! The power and energy sources under a sysfs root, in the kernel's own formats
//! (Documentation/ABI): powercap zones (`energy_uj`, wrapping at `max_energy_range_uj`),
//! hwmon channels (`energyN_input` µJ, `powerN_input`/`powerN_average` µW, `currN_input` mA ×
//! `inN_input` mV), power_supply batteries (`power_now` µW, or `current_now` µA ×
//! `voltage_now` µV, signed by `status`) and IIO energy meters of the ODPM kind
//! (`energy_value`: cumulative µWs per rail). Each source says what it covers and how one
//! reading is taken; one that this process cannot use here says why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sysfs::entries;
pub use crate::sysfs::{MAX_ATTR_BYTES, read_attr};

/// The family a source belongs to (JSON: `powercap`, `hwmon`, `power_supply`, `odpm`, `cmd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A powercap zone's energy counter (RAPL on Intel and AMD).
    Powercap,
    /// A hardware monitor channel.
    Hwmon,
    /// A battery of the power_supply class.
    PowerSupply,
    /// A rail of an IIO energy meter of the ODPM kind (Pixel phones).
    Odpm,
    /// An external meter (`--power-cmd`).
    Cmd,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Kind::Powercap => "powercap",
            Kind::Hwmon => "hwmon",
            Kind::PowerSupply => "power_supply",
            Kind::Odpm => "odpm",
            Kind::Cmd => "cmd",
        })
    }
}

/// How one reading of a source is taken.
#[derive(Debug, Clone, PartialEq)]
pub enum Reader {
    /// A cumulative energy counter in µJ; powercap's wraps to 0 past `wrap_uj`.
    Counter {
        /// The counter file.
        path: PathBuf,
        /// `max_energy_range_uj`, where the counter wraps (powercap).
        wrap_uj: Option<u64>,
    },
    /// An instantaneous power in µW (`powerN_input`, `powerN_average`).
    Power {
        /// The file.
        path: PathBuf,
    },
    /// A current times a voltage: hwmon's mA × mV (`scale` 1e-6 to W).
    CurrVolt {
        /// Current file.
        curr: PathBuf,
        /// Voltage file.
        volt: PathBuf,
        /// Product to watts.
        scale: f64,
    },
    /// A battery: `power_now` µW or `current_now` µA × `voltage_now` µV, magnitude only
    /// (its `status`, Discharging, gives the sign); read only while it discharges.
    Battery {
        /// The supply's folder.
        dir: PathBuf,
        /// Whether it has `power_now`.
        power_now: bool,
    },
    /// One rail of an ODPM `energy_value` file: cumulative µWs with the meter's own
    /// timestamp (ms).
    Odpm {
        /// The device's `energy_value`.
        path: PathBuf,
        /// The rail's name in it.
        rail: String,
    },
    /// The readings of `--power-cmd`.
    Cmd,
}

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
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// Its stable name (`powercap:package-0`, `hwmon:ina3221:VDD_CPU`, `battery:battery`,
    /// `odpm:S4M_VDD_CPUCL0`, `cmd`).
    pub name: String,
    /// Its family.
    pub kind: Kind,
    /// The unit it reads in (`uJ`, `uW`, `mA*mV`, `uA*uV`, `uWs`, `W`).
    pub unit: &'static str,
    /// What it covers (a package, the cores, DRAM, a rail, the whole battery).
    pub covers: String,
    /// The files it reads.
    pub paths: Vec<PathBuf>,
    /// The CPU cluster (topology index) its rail feeds, when its name says (`CPUCL<n>`).
    pub cluster: Option<usize>,
    /// How a reading is taken.
    pub reader: Reader,
}

impl Source {
    /// Whether its energy comes from a counter read at the window's edges (else from the
    /// integral of its power samples).
    pub fn is_counter(&self) -> bool {
        matches!(self.reader, Reader::Counter { .. } | Reader::Odpm { .. })
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

/// A number from a file, or why not.
pub(super) fn number<T: std::str::FromStr>(path: &Path) -> Result<T, String> {
    let text = read_attr(path).map_err(|e| unreadable(path, &e))?;
    text.parse::<T>().map_err(|_| {
        format!(
            "{} holds {}, not a number",
            foundation::error::shown(path),
            foundation::error::excerpt(text.as_bytes(), 40)
        )
    })
}

/// One line of an ODPM `energy_value`: `CH3(T=473848)[S4M_VDD_CPUCL0], 3161249`.
fn odpm_line(line: &str) -> Option<(String, u64, u64)> {
    let rest = line.trim().strip_prefix("CH")?;
    let (_, rest) = rest.split_once("(T=")?;
    let (t, rest) = rest.split_once(")[")?;
    let (rail, rest) = rest.split_once(']')?;
    let value = rest.trim().strip_prefix(',')?.trim();
    Some((
        rail.to_string(),
        t.trim().parse().ok()?,
        value.parse().ok()?,
    ))
}

/// An ODPM `energy_value`'s rails in its order: name, timestamp (ms), cumulative energy (µWs).
pub type Rails = Vec<(String, u64, u64)>;

/// Parses an ODPM `energy_value` (lines that are not a rail's, as `t=<ms>`, are skipped).
pub fn parse_odpm(text: &str) -> Rails {
    text.lines().filter_map(odpm_line).collect()
}

/// A battery's status: only a discharging battery's current is the load's.
fn battery_status(dir: &Path) -> Result<(), String> {
    let path = dir.join("status");
    let status = read_attr(&path).map_err(|e| unreadable(&path, &e))?;
    if status == "Discharging" {
        Ok(())
    } else {
        Err(format!(
            "the battery's status is {}: only a discharging battery's current is the load's (the charger's otherwise); unplug it or choose another source",
            foundation::error::excerpt(status.as_bytes(), 40)
        ))
    }
}

/// Takes one reading of `source`, or says why it cannot (the ODPM file is read once per call;
/// [`read_all`] shares one read between a device's rails).
pub fn read(source: &Source) -> Result<Value, String> {
    match &source.reader {
        Reader::Counter { path, .. } => Ok(Value::Energy {
            uj: number(path)?,
            at_ms: None,
        }),
        Reader::Power { path } => Ok(Value::Power(number::<f64>(path)?.abs() * 1e-6)),
        Reader::CurrVolt { curr, volt, scale } => Ok(Value::Power(
            (number::<f64>(curr)? * number::<f64>(volt)?).abs() * scale,
        )),
        Reader::Battery { dir, power_now } => {
            battery_status(dir)?;
            let w = if *power_now {
                number::<f64>(&dir.join("power_now"))?.abs() * 1e-6
            } else {
                (number::<f64>(&dir.join("current_now"))?
                    * number::<f64>(&dir.join("voltage_now"))?)
                .abs()
                    * 1e-12
            };
            Ok(Value::Power(w))
        }
        Reader::Odpm { path, rail } => {
            let text = read_attr(path).map_err(|e| unreadable(path, &e))?;
            odpm_value(&parse_odpm(&text), path, rail)
        }
        Reader::Cmd => Err("the external meter is read from its output".into()),
    }
}

fn odpm_value(rails: &Rails, path: &Path, rail: &str) -> Result<Value, String> {
    rails
        .iter()
        .find(|(name, _, _)| name == rail)
        .map(|&(_, t, uws)| Value::Energy {
            uj: uws,
            at_ms: Some(t),
        })
        .ok_or_else(|| {
            format!(
                "{} no longer lists the rail {rail}",
                foundation::error::shown(path)
            )
        })
}

/// One reading of each source, an ODPM file read once for all its rails.
pub fn read_all(sources: &[Source]) -> Vec<Result<Value, String>> {
    let mut odpm_files: BTreeMap<&Path, Result<Rails, String>> = BTreeMap::new();
    sources
        .iter()
        .map(|s| match &s.reader {
            Reader::Odpm { path, rail } => {
                let rails = odpm_files.entry(path.as_path()).or_insert_with(|| {
                    read_attr(path)
                        .map(|t| parse_odpm(&t))
                        .map_err(|e| unreadable(path, &e))
                });
                match rails {
                    Ok(r) => odpm_value(r, path, rail),
                    Err(e) => Err(e.clone()),
                }
            }
            _ => read(s),
        })
        .collect()
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
