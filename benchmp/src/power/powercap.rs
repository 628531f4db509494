//! Powercap zones (RAPL on Intel and AMD): a cumulative `energy_uj` counter per zone,
//! wrapping to 0 past `max_energy_range_uj`; subzones (cores, uncore, DRAM) named under their
//! package, and the MMIO copy of a package told apart by its folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::meter::{EnergyCounter, Family};
use super::sources::{Found, Source, Unusable, number, read};
use crate::sysfs::{entries, read_attr};
use crate::topology::Topology;

/// The powercap family (JSON `kind`: `powercap`).
#[derive(Debug, Clone, Copy)]
pub struct Powercap;

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

impl Family for Powercap {
    fn discover(&self, root: &Path, _topology: Option<&Topology>, found: &mut Found) {
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
                kind: "powercap",
                unit: "uJ",
                covers: zone_covers(zone, parent),
                paths: vec![counter.clone()],
                cluster: None,
                meter: Arc::new(EnergyCounter {
                    path: counter,
                    wrap_uj,
                }),
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
}
