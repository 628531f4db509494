//! Finding each kind of source under a sysfs root: batteries, powercap zones, hwmon channels
//! and ODPM rails, each tried once so an unusable one is listed with its reason.

use std::path::{Path, PathBuf};

use super::sources::{Found, Kind, Reader, Source, Unusable, number, parse_odpm, read, unreadable};
use crate::sysfs::{entries, read_attr};
use crate::topology::Topology;

/// Finds every source under `root` (a sysfs tree), trying one reading of each.
pub fn discover(root: &Path, topology: Option<&Topology>) -> Found {
    let mut found = Found::default();
    batteries(root, &mut found);
    powercap(root, &mut found);
    hwmon(root, &mut found);
    odpm(root, topology, &mut found);
    found
}

fn batteries(root: &Path, found: &mut Found) {
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

fn powercap(root: &Path, found: &mut Found) {
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

fn hwmon(root: &Path, found: &mut Found) {
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

fn odpm(root: &Path, topology: Option<&Topology>, found: &mut Found) {
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

#[cfg(test)]
mod tests {
    use super::super::sources::*;
    use super::*;

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{text}\n")).unwrap();
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("benchmp-sources-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn odpm_lines_in_the_kernels_format() {
        let text = "t=473848\nCH0(T=473848)[S10M_VDD_TPU], 3161249\nCH1(T=473840)[VSYS_PWR_MODEM], 48480316\nnonsense\n";
        assert_eq!(
            parse_odpm(text),
            [
                ("S10M_VDD_TPU".to_string(), 473848, 3161249),
                ("VSYS_PWR_MODEM".to_string(), 473840, 48480316)
            ]
        );
    }

    #[test]
    fn a_cpu_rail_names_its_cluster() {
        let t = Topology::from_root(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/phone8/sys"),
        )
        .unwrap();
        assert_eq!(rail_cluster("S4M_VDD_CPUCL0", Some(&t)), Some(0));
        assert_eq!(rail_cluster("S2M_VDD_CPUCL2", Some(&t)), Some(2));
        assert_eq!(rail_cluster("S2M_VDD_CPUCL9", Some(&t)), None);
        assert_eq!(rail_cluster("S1M_VDD_MIF", Some(&t)), None);
        assert_eq!(rail_cluster("S4M_VDD_CPUCL0", None), None);
    }

    #[test]
    fn every_kind_is_found_with_its_name_unit_and_cover() {
        let root = scratch("kinds");
        put(&root, "class/power_supply/battery/type", "Battery");
        put(&root, "class/power_supply/battery/status", "Discharging");
        put(&root, "class/power_supply/battery/current_now", "-500000");
        put(&root, "class/power_supply/battery/voltage_now", "4000000");
        put(&root, "class/power_supply/usb/type", "USB");
        put(&root, "class/powercap/intel-rapl:0/name", "package-0");
        put(&root, "class/powercap/intel-rapl:0/energy_uj", "1000");
        put(
            &root,
            "class/powercap/intel-rapl:0/max_energy_range_uj",
            "262143328850",
        );
        put(&root, "class/powercap/intel-rapl:0:0/name", "core");
        put(&root, "class/powercap/intel-rapl:0:0/energy_uj", "10");
        put(&root, "class/powercap/intel-rapl/enabled", "1");
        put(&root, "class/powercap/intel-rapl-mmio:0/name", "package-0");
        put(&root, "class/powercap/intel-rapl-mmio:0/energy_uj", "20");
        put(&root, "class/hwmon/hwmon0/name", "ina3221");
        put(&root, "class/hwmon/hwmon0/curr1_input", "1500");
        put(&root, "class/hwmon/hwmon0/curr1_label", "VDD_CPU");
        put(&root, "class/hwmon/hwmon0/in1_input", "5000");
        put(&root, "class/hwmon/hwmon0/in1_label", "VDD_CPU");
        put(&root, "class/hwmon/hwmon1/name", "amdgpu");
        put(&root, "class/hwmon/hwmon1/power1_average", "15000000");
        put(&root, "class/hwmon/hwmon2/name", "amd_energy");
        put(&root, "class/hwmon/hwmon2/energy1_input", "123456");
        put(&root, "class/hwmon/hwmon2/energy1_label", "Esocket0");
        put(&root, "bus/iio/devices/iio:device0/name", "s2mpg10-odpm");
        put(
            &root,
            "bus/iio/devices/iio:device0/energy_value",
            "t=10\nCH0(T=10)[S4M_VDD_CPUCL0], 5\nCH1(T=10)[S1M_VDD_MIF], 7",
        );
        let f = discover(&root, None);
        let names: Vec<(&str, Kind, &str)> = f
            .usable
            .iter()
            .map(|s| (s.name.as_str(), s.kind, s.unit))
            .collect();
        assert_eq!(
            names,
            [
                ("battery:battery", Kind::PowerSupply, "uA*uV"),
                ("powercap:package-0", Kind::Powercap, "uJ"),
                ("powercap:package-0/core", Kind::Powercap, "uJ"),
                ("powercap:package-0@intel-rapl-mmio:0", Kind::Powercap, "uJ"),
                ("hwmon:ina3221:VDD_CPU", Kind::Hwmon, "mA*mV"),
                ("hwmon:amdgpu:power1", Kind::Hwmon, "uW"),
                ("hwmon:amd_energy:Esocket0", Kind::Hwmon, "uJ"),
                ("odpm:S4M_VDD_CPUCL0", Kind::Odpm, "uWs"),
                ("odpm:S1M_VDD_MIF", Kind::Odpm, "uWs"),
            ]
        );
        assert!(f.unusable.is_empty(), "{:?}", f.unusable);
        let by = |n: &str| f.usable.iter().find(|s| s.name == n).unwrap();
        assert_eq!(by("powercap:package-0/core").covers, "cores of package-0");
        assert_eq!(by("battery:battery").covers, "whole device (battery)");
        // A discharging battery's negative current is a positive load: 0.5 A × 4 V.
        assert_eq!(read(by("battery:battery")), Ok(Value::Power(2.0)));
        assert_eq!(read(by("hwmon:ina3221:VDD_CPU")), Ok(Value::Power(7.5)));
        assert_eq!(read(by("hwmon:amdgpu:power1")), Ok(Value::Power(15.0)));
        assert!(matches!(
            by("powercap:package-0").reader,
            Reader::Counter {
                wrap_uj: Some(262143328850),
                ..
            }
        ));
        let all = read_all(&f.usable);
        assert_eq!(
            all[7],
            Ok(Value::Energy {
                uj: 5,
                at_ms: Some(10)
            })
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_charging_battery_and_a_bad_file_are_unusable_with_their_reason() {
        let root = scratch("unusable");
        put(&root, "class/power_supply/BAT0/type", "Battery");
        put(&root, "class/power_supply/BAT0/status", "Charging");
        put(&root, "class/power_supply/BAT0/power_now", "9000000");
        put(&root, "class/powercap/intel-rapl:0/name", "package-0");
        put(&root, "class/powercap/intel-rapl:0/energy_uj", "lots");
        let f = discover(&root, None);
        assert!(f.usable.is_empty());
        assert_eq!(f.unusable.len(), 2);
        assert_eq!(f.unusable[0].name, "battery:BAT0");
        assert!(
            f.unusable[0].why.contains("status is \"Charging\""),
            "{}",
            f.unusable[0].why
        );
        assert!(f.unusable[1].why.contains("not a number"));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_denied_file_is_called_root_only() {
        let e = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let why = unreadable(Path::new("/sys/class/powercap/intel-rapl:0/energy_uj"), &e);
        assert!(why.contains("can be read by root only"), "{why}");
    }

    #[test]
    fn zones_and_policies_of_a_phone() {
        let root = scratch("zones");
        put(&root, "class/thermal/thermal_zone0/type", "cpu-thermal");
        put(&root, "class/thermal/thermal_zone0/temp", "40000");
        put(&root, "class/thermal/thermal_zone1/type", "cpu-thermal");
        put(&root, "class/thermal/thermal_zone1/temp", "41000");
        put(&root, "class/thermal/thermal_zone2/type", "broken");
        let z = zones(&root);
        assert_eq!(
            z.iter().map(|z| z.name.as_str()).collect::<Vec<_>>(),
            ["cpu-thermal", "cpu-thermal (thermal_zone1)"]
        );
        let phone = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/phone8/sys");
        let p = policies(&phone, &[0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(
            p.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["policy0", "policy2", "policy5", "policy7"]
        );
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/server2s/sys");
        assert_eq!(policies(&server, &[0, 1]).len(), 2);
        let _ = std::fs::remove_dir_all(&root);
    }
}
