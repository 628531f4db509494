//! Finding each kind of source under a sysfs root: batteries, powercap zones, hwmon channels
//! and ODPM rails, each tried once so an unusable one is listed with its reason.

use std::path::{Path, PathBuf};

use super::sources::{Found, Kind, Reader, Source, Unusable, number, read, unreadable};
use crate::sysfs::{entries, read_attr};
use crate::topology::Topology;

pub(super) fn batteries(root: &Path, found: &mut Found) {
    for dir in entries(&root.join("class/power_supply"), "") {
        let kind = read_attr(&dir.join("type")).unwrap_or_default();
        if kind != "Battery" {
            continue;
        }
        let supply = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = format!("battery:{supply}");
        let power_now = dir.join("power_now").exists();
        let paths = if power_now {
            vec![dir.join("power_now"), dir.join("status")]
        } else {
            vec![
                dir.join("current_now"),
                dir.join("voltage_now"),
                dir.join("status"),
            ]
        };
        let source = Source {
            name: name.clone(),
            kind: Kind::PowerSupply,
            unit: if power_now { "uW" } else { "uA*uV" },
            covers: "whole device (battery)".into(),
            paths,
            cluster: None,
            reader: Reader::Battery {
                dir: dir.clone(),
                power_now,
            },
        };
        match read(&source) {
            Ok(_) => found.usable.push(source),
            Err(why) => found.unusable.push(Unusable { name, why }),
        }
    }
}

/// What a powercap zone covers, from its name.
fn zone_covers(name: &str, parent: Option<&str>) -> String {
    let of = parent.map(|p| format!(" of {p}")).unwrap_or_default();
    if let Some(n) = name.strip_prefix("package-") {
        format!("package {n}: cores, caches and uncore")
    } else {
        match name {
            "core" => format!("cores{of}"),
            "uncore" => format!("uncore (integrated GPU){of}"),
            "dram" => format!("DRAM{of}"),
            "psys" => "platform (the whole SoC and more)".into(),
            other => format!("powercap zone {other}{of}"),
        }
    }
}

pub(super) fn powercap(root: &Path, found: &mut Found) {
    let mut zones: Vec<(String, PathBuf, String)> = entries(&root.join("class/powercap"), "")
        .into_iter()
        .filter(|d| d.join("energy_uj").exists())
        .filter_map(|d| {
            let id = d.file_name()?.to_string_lossy().into_owned();
            let name = read_attr(&d.join("name")).unwrap_or_else(|_| id.clone());
            Some((id, d, name))
        })
        .collect();
    // The MSR zones (intel-rapl:N) keep the plain names; the MMIO copy of a package comes after.
    zones.sort_by_key(|(id, _, _)| id.starts_with("intel-rapl-mmio"));
    for (id, dir, zone) in &zones {
        // intel-rapl:0:1 is a subzone of intel-rapl:0.
        let parent = id
            .rsplit_once(':')
            .and_then(|(p, _)| zones.iter().find(|(pid, _, _)| pid == p))
            .map(|(_, _, n)| n.as_str());
        let mut name = match parent {
            Some(p) => format!("powercap:{p}/{zone}"),
            None => format!("powercap:{zone}"),
        };
        // intel-rapl-mmio:0 names its zone package-0 too: the second is told by its folder.
        if found
            .usable
            .iter()
            .map(|s| &s.name)
            .chain(found.unusable.iter().map(|u| &u.name))
            .any(|n| *n == name)
        {
            name = format!("{name}@{id}");
        }
        let counter = dir.join("energy_uj");
        let wrap_uj = number::<u64>(&dir.join("max_energy_range_uj")).ok();
        let source = Source {
            name: name.clone(),
            kind: Kind::Powercap,
            unit: "uJ",
            covers: zone_covers(zone, parent),
            paths: vec![counter.clone()],
            cluster: None,
            reader: Reader::Counter {
                path: counter,
                wrap_uj,
            },
        };
        match read(&source) {
            Ok(_) => found.usable.push(source),
            Err(why) if why.contains("root only") => found.unusable.push(Unusable {
                name,
                why: format!("{why} (powercap's energy_uj is root-only since Linux 5.10)"),
            }),
            Err(why) => found.unusable.push(Unusable { name, why }),
        }
    }
}

pub(super) fn hwmon(root: &Path, found: &mut Found) {
    let mut taken: Vec<String> = Vec::new();
    for dir in entries(&root.join("class/hwmon"), "hwmon") {
        // Old drivers keep their attributes in the device folder.
        let attrs = if dir.join("name").exists() {
            dir.clone()
        } else {
            dir.join("device")
        };
        let chip = read_attr(&attrs.join("name")).unwrap_or_else(|_| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let label = |prefix: &str, n: &str| read_attr(&attrs.join(format!("{prefix}{n}_label")));
        let channels = |prefix: &str, suffix: &str| -> Vec<String> {
            let mut v: Vec<String> = entries(&attrs, prefix)
                .into_iter()
                .filter_map(|p| {
                    let f = p.file_name()?.to_string_lossy().into_owned();
                    let n = f.strip_prefix(prefix)?.strip_suffix(suffix)?.to_string();
                    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(n)
                })
                .collect();
            v.sort_by_key(|n| n.parse::<u64>().unwrap_or(0));
            v.dedup();
            v
        };
        let mut add = |channel: String, label: Option<String>, unit, reader: Reader| {
            let what = label.clone().unwrap_or_else(|| channel.clone());
            let mut name = format!("hwmon:{chip}:{what}");
            if taken.contains(&name) {
                let at = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                name = format!("hwmon:{chip}@{at}:{what}");
            }
            taken.push(name.clone());
            let paths = match &reader {
                Reader::Counter { path, .. } | Reader::Power { path } => vec![path.clone()],
                Reader::CurrVolt { curr, volt, .. } => vec![curr.clone(), volt.clone()],
                _ => Vec::new(),
            };
            let source = Source {
                name: name.clone(),
                kind: Kind::Hwmon,
                unit,
                covers: match label {
                    Some(l) => format!("hwmon {chip} channel {l}"),
                    None => format!("hwmon {chip} {channel}"),
                },
                paths,
                cluster: None,
                reader,
            };
            match read(&source) {
                Ok(_) => found.usable.push(source),
                Err(why) => found.unusable.push(Unusable { name, why }),
            }
        };
        for n in channels("energy", "_input") {
            add(
                format!("energy{n}"),
                label("energy", &n).ok(),
                "uJ",
                Reader::Counter {
                    path: attrs.join(format!("energy{n}_input")),
                    wrap_uj: None,
                },
            );
        }
        let inputs = channels("power", "_input");
        let averages = channels("power", "_average");
        let mut powers: Vec<String> = inputs.iter().chain(&averages).cloned().collect();
        powers.sort_by_key(|n| n.parse::<u64>().unwrap_or(0));
        powers.dedup();
        for n in powers {
            let file = if inputs.contains(&n) {
                format!("power{n}_input")
            } else {
                format!("power{n}_average")
            };
            add(
                format!("power{n}"),
                label("power", &n).ok(),
                "uW",
                Reader::Power {
                    path: attrs.join(file),
                },
            );
        }
        // A current channel with the voltage channel of the same label (ina3221), else of
        // the same number.
        let volts = channels("in", "_input");
        for n in channels("curr", "_input") {
            let l = label("curr", &n).ok();
            let v = volts
                .iter()
                .find(|v| l.is_some() && label("in", v).ok() == l)
                .or_else(|| volts.iter().find(|v| **v == n));
            let Some(v) = v else { continue };
            add(
                format!("curr{n}"),
                l.or_else(|| label("in", v).ok()),
                "mA*mV",
                Reader::CurrVolt {
                    curr: attrs.join(format!("curr{n}_input")),
                    volt: attrs.join(format!("in{v}_input")),
                    scale: 1e-6,
                },
            );
        }
    }
}

/// The cluster a rail named `...CPUCL<n>...` feeds, when the topology has that cluster.
pub(super) fn rail_cluster(rail: &str, topology: Option<&Topology>) -> Option<usize> {
    let upper = rail.to_ascii_uppercase();
    let at = upper.find("CPUCL")? + "CPUCL".len();
    let digits: String = upper[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let n: usize = digits.parse().ok()?;
    topology?.clusters.get(n).map(|c| c.index)
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

pub(super) fn odpm(root: &Path, topology: Option<&Topology>, found: &mut Found) {
    for dir in entries(&root.join("bus/iio/devices"), "iio:device") {
        let file = dir.join("energy_value");
        if !file.exists() {
            continue;
        }
        let device = read_attr(&dir.join("name")).unwrap_or_else(|_| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let rails = match read_attr(&file) {
            Ok(text) => parse_odpm(&text),
            Err(e) => {
                found.unusable.push(Unusable {
                    name: format!("odpm:{device}"),
                    why: unreadable(&file, &e),
                });
                continue;
            }
        };
        for (rail, _, _) in &rails {
            let cluster = rail_cluster(rail, topology);
            let of = match cluster.and_then(|c| topology?.clusters.get(c)) {
                Some(c) => format!(
                    ", CPU cluster {} ({} {})",
                    c.index,
                    if c.cpus.len() == 1 { "CPU" } else { "CPUs" },
                    crate::cpulist::format_cpu_list(&c.cpus)
                ),
                None => String::new(),
            };
            let mut name = format!("odpm:{rail}");
            if found.usable.iter().any(|s| s.name == name) {
                name = format!("{name}@{device}");
            }
            found.usable.push(Source {
                name,
                kind: Kind::Odpm,
                unit: "uWs",
                covers: format!("rail {rail} of {device}{of}"),
                paths: vec![file.clone()],
                cluster,
                reader: Reader::Odpm {
                    path: file.clone(),
                    rail: rail.clone(),
                },
            });
        }
    }
}
