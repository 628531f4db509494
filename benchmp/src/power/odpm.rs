//! IIO energy meters of the ODPM kind (Pixel phones): one `energy_value` file per device
//! holding every rail's cumulative energy (µWs) with the meter's own timestamp (ms); a source
//! per rail, the file read once per sample for all of them, and a CPU rail's cluster from its
//! name (`...CPUCL<n>...`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::meter::{Family, Files, Meter, Reading};
use super::sources::{Found, Source, Unusable, Value, read_attr, unreadable};
use crate::sysfs::entries;
use crate::topology::Topology;

/// The ODPM family (JSON `kind`: `odpm`).
#[derive(Debug, Clone, Copy)]
pub struct Odpm;

/// One rail of an ODPM `energy_value` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rail {
    /// The device's `energy_value`.
    pub path: PathBuf,
    /// The rail's name in it.
    pub rail: String,
}

impl Meter for Rail {
    fn read(&self, files: &mut Files) -> Result<Value, String> {
        let text = files.text(&self.path)?;
        parse_odpm(text)
            .into_iter()
            .find(|(name, _, _)| *name == self.rail)
            .map(|(_, t, uws)| Value::Energy {
                uj: uws,
                at_ms: Some(t),
            })
            .ok_or_else(|| {
                format!(
                    "{} no longer lists the rail {}",
                    foundation::error::shown(&self.path),
                    self.rail
                )
            })
    }

    fn reading(&self) -> Reading {
        Reading::Counter { wrap_uj: None }
    }
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

/// The cluster a rail named `...CPUCL<n>...` feeds, when the topology has that cluster.
pub fn rail_cluster(rail: &str, topology: Option<&Topology>) -> Option<usize> {
    let upper = rail.to_ascii_uppercase();
    let at = upper.find("CPUCL")? + "CPUCL".len();
    let digits: String = upper[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let n: usize = digits.parse().ok()?;
    topology?.clusters.get(n).map(|c| c.index)
}

impl Family for Odpm {
    fn discover(&self, root: &Path, topology: Option<&Topology>, found: &mut Found) {
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
                    kind: "odpm",
                    unit: "uWs",
                    covers: format!("rail {rail} of {device}{of}"),
                    paths: vec![file.clone()],
                    cluster,
                    meter: Arc::new(Rail {
                        path: file.clone(),
                        rail: rail.clone(),
                    }),
                });
            }
        }
    }
}
