//! Batteries of the power_supply class: `power_now` µW, or `current_now` µA × `voltage_now`
//! µV, read only while the battery discharges (`status`): a charging battery's current is
//! the charger's, not the load's.

use std::path::{Path, PathBuf};

use super::meter::{Family, Files, Meter};
use super::sources::{Found, Source, Unusable, Value, read};
use crate::sysfs::{entries, read_attr};
use crate::topology::Topology;

/// The power_supply family (JSON `kind`: `power_supply`).
#[derive(Debug, Clone, Copy)]
pub struct Batteries;

/// A battery's reading: magnitude only, signed by its `status` (Discharging).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Battery {
    /// The supply's folder.
    pub dir: PathBuf,
    /// Whether it has `power_now`.
    pub power_now: bool,
}

impl Meter for Battery {
    fn read(&self, files: &mut Files) -> Result<Value, String> {
        let status = files.text(&self.dir.join("status"))?;
        if status != "Discharging" {
            return Err(format!(
                "the battery's status is {}: only a discharging battery's current is the load's (the charger's otherwise); unplug it or choose another source",
                foundation::error::excerpt(status.as_bytes(), 40)
            ));
        }
        let w = if self.power_now {
            files.number::<f64>(&self.dir.join("power_now"))?.abs() * 1e-6
        } else {
            (files.number::<f64>(&self.dir.join("current_now"))?
                * files.number::<f64>(&self.dir.join("voltage_now"))?)
            .abs()
                * 1e-12
        };
        Ok(Value::Power(w))
    }
}

impl Family for Batteries {
    fn discover(&self, root: &Path, _topology: Option<&Topology>, found: &mut Found) {
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
                kind: "power_supply",
                unit: if power_now { "uW" } else { "uA*uV" },
                covers: "whole device (battery)".into(),
                paths,
                cluster: None,
                meter: std::sync::Arc::new(Battery {
                    dir: dir.clone(),
                    power_now,
                }),
            };
            match read(&source) {
                Ok(_) => found.usable.push(source),
                Err(why) => found.unusable.push(Unusable { name, why }),
            }
        }
    }
}
