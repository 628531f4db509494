//! Hardware monitor channels: energy counters (`energyN_input`, µJ), powers
//! (`powerN_input` or `powerN_average`, µW) and a current with the voltage of the same label or
//! number (`currN_input` mA × `inN_input` mV, as ina3221 rails are), named by chip and label.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::meter::{CurrentVoltage, EnergyCounter, Family, Meter, PowerFile};
use super::sources::{Found, Source, Unusable, read};
use crate::sysfs::{entries, read_attr};
use crate::topology::Topology;

/// The hwmon family (JSON `kind`: `hwmon`).
#[derive(Debug, Clone, Copy)]
pub struct Hwmon;

impl Family for Hwmon {
    fn discover(&self, root: &Path, _topology: Option<&Topology>, found: &mut Found) {
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
            let label =
                |prefix: &str, n: &str| read_attr(&attrs.join(format!("{prefix}{n}_label")));
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
            let mut add = |channel: String,
                           label: Option<String>,
                           unit,
                           paths: Vec<PathBuf>,
                           meter: Arc<dyn Meter>| {
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
                let source = Source {
                    name: name.clone(),
                    kind: "hwmon",
                    unit,
                    covers: match label {
                        Some(l) => format!("hwmon {chip} channel {l}"),
                        None => format!("hwmon {chip} {channel}"),
                    },
                    paths,
                    cluster: None,
                    meter,
                };
                match read(&source) {
                    Ok(_) => found.usable.push(source),
                    Err(why) => found.unusable.push(Unusable { name, why }),
                }
            };
            for n in channels("energy", "_input") {
                let path = attrs.join(format!("energy{n}_input"));
                add(
                    format!("energy{n}"),
                    label("energy", &n).ok(),
                    "uJ",
                    vec![path.clone()],
                    Arc::new(EnergyCounter {
                        path,
                        wrap_uj: None,
                    }),
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
                let path = attrs.join(file);
                add(
                    format!("power{n}"),
                    label("power", &n).ok(),
                    "uW",
                    vec![path.clone()],
                    Arc::new(PowerFile { path }),
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
                let (curr, volt) = (
                    attrs.join(format!("curr{n}_input")),
                    attrs.join(format!("in{v}_input")),
                );
                add(
                    format!("curr{n}"),
                    l.or_else(|| label("in", v).ok()),
                    "mA*mV",
                    vec![curr.clone(), volt.clone()],
                    Arc::new(CurrentVoltage {
                        curr,
                        volt,
                        scale: 1e-6,
                    }),
                );
            }
        }
    }
}
