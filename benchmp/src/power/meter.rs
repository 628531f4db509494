//! What a power or energy source is to the rest of socbench: a [`Meter`] that takes one
//! reading, and a [`Family`] that finds its sources under a sysfs root. Each family is a file
//! of its own (`battery.rs`, `powercap.rs`, `hwmon.rs`, `odpm.rs`) and one entry of
//! [`FAMILIES`]; a new kind of meter is one more such file with its test. The external meter
//! (`--power-cmd`, [`External`]) is a meter whose readings come from its own process.
//!
//! The meters a family is made of are here too, for any family to use: an energy counter
//! file ([`EnergyCounter`]), a power file ([`PowerFile`]) and a current times a voltage
//! ([`CurrentVoltage`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::sources::{Found, Value, read_attr, unreadable};
use crate::topology::Topology;

/// How one reading of a source is taken.
pub trait Meter: Send + Sync + std::fmt::Debug {
    /// One reading, the files it needs read through `files` (each file once per sample,
    /// however many sources read it), or why there is none.
    fn read(&self, files: &mut Files) -> Result<Value, String>;

    /// How its readings become energy over a window: by default a power, integrated over its
    /// samples.
    fn reading(&self) -> Reading {
        Reading::Power
    }
}

/// How a meter's readings become energy over a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Powers, integrated over the samples.
    Power,
    /// A cumulative energy counter read at the window's edges, wrapping to 0 past `wrap_uj`
    /// (powercap's `max_energy_range_uj`) when it says where.
    Counter {
        /// Where it wraps, µJ.
        wrap_uj: Option<u64>,
    },
    /// Readings an external meter's process writes ([`super::cmd`]), not taken by `read`.
    External,
}

/// A family of sources: how its sources are found under a sysfs root.
pub trait Family: Sync {
    /// Every source of the family under `root`, tried once each: the usable ones in
    /// `found.usable`, the others with why in `found.unusable`.
    fn discover(&self, root: &Path, topology: Option<&Topology>, found: &mut Found);
}

/// Every family, in the order their sources are listed: batteries, powercap, hwmon, ODPM.
pub const FAMILIES: [&dyn Family; 4] = [
    &super::battery::Batteries,
    &super::powercap::Powercap,
    &super::hwmon::Hwmon,
    &super::odpm::Odpm,
];

/// The files one round of readings reads, each read once: a file several sources share (an
/// ODPM device's rails) is read once for all of them, at one time.
#[derive(Debug, Default)]
pub struct Files(BTreeMap<PathBuf, Result<String, String>>);

impl Files {
    /// The text of `path` (trimmed, as sysfs attributes are read), or why it cannot be read.
    pub fn text(&mut self, path: &Path) -> Result<&str, String> {
        self.0
            .entry(path.to_path_buf())
            .or_insert_with(|| read_attr(path).map_err(|e| unreadable(path, &e)))
            .as_deref()
            .map_err(Clone::clone)
    }

    /// The number `path` holds, or why not.
    pub fn number<T: std::str::FromStr>(&mut self, path: &Path) -> Result<T, String> {
        let text = self.text(path)?;
        text.parse::<T>().map_err(|_| {
            format!(
                "{} holds {}, not a number",
                foundation::error::shown(path),
                foundation::error::excerpt(text.as_bytes(), 40)
            )
        })
    }
}

/// A cumulative energy counter in µJ (powercap's `energy_uj`, hwmon's `energyN_input`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnergyCounter {
    /// The counter file.
    pub path: PathBuf,
    /// Where it wraps to 0, µJ (powercap's `max_energy_range_uj`).
    pub wrap_uj: Option<u64>,
}

impl Meter for EnergyCounter {
    fn read(&self, files: &mut Files) -> Result<Value, String> {
        Ok(Value::Energy {
            uj: files.number(&self.path)?,
            at_ms: None,
        })
    }

    fn reading(&self) -> Reading {
        Reading::Counter {
            wrap_uj: self.wrap_uj,
        }
    }
}

/// An instantaneous power in µW (`powerN_input`, `powerN_average`), magnitude only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PowerFile {
    /// The file.
    pub path: PathBuf,
}

impl Meter for PowerFile {
    fn read(&self, files: &mut Files) -> Result<Value, String> {
        Ok(Value::Power(files.number::<f64>(&self.path)?.abs() * 1e-6))
    }
}

/// A current times a voltage (hwmon's mA × mV), magnitude only, `scale` to watts.
#[derive(Debug, Clone, PartialEq)]
pub struct CurrentVoltage {
    /// Current file.
    pub curr: PathBuf,
    /// Voltage file.
    pub volt: PathBuf,
    /// Product to watts.
    pub scale: f64,
}

impl Meter for CurrentVoltage {
    fn read(&self, files: &mut Files) -> Result<Value, String> {
        let i = files.number::<f64>(&self.curr)?;
        let v = files.number::<f64>(&self.volt)?;
        Ok(Value::Power((i * v).abs() * self.scale))
    }
}

/// The external meter of `--power-cmd`: its readings come from its process's output
/// ([`super::cmd`]), which the sampler reads, so a reading of it here is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct External;

impl Meter for External {
    fn read(&self, _files: &mut Files) -> Result<Value, String> {
        Err("the external meter is read from its output".into())
    }

    fn reading(&self) -> Reading {
        Reading::External
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_once_per_round_and_its_number_checked() {
        let dir = std::env::temp_dir().join(format!("benchmp-meter-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("energy_uj");
        std::fs::write(&f, "1000\n").unwrap();
        let mut files = Files::default();
        assert_eq!(files.number::<u64>(&f), Ok(1000));
        // The round keeps what it read: a later change is the next round's.
        std::fs::write(&f, "2000\n").unwrap();
        assert_eq!(files.number::<u64>(&f), Ok(1000));
        assert_eq!(Files::default().number::<u64>(&f), Ok(2000));
        std::fs::write(&f, "lots\n").unwrap();
        let why = Files::default().number::<u64>(&f).unwrap_err();
        assert!(why.contains("holds \"lots\", not a number"), "{why}");
        let gone = Files::default()
            .number::<u64>(&dir.join("nothing"))
            .unwrap_err();
        assert!(gone.contains("cannot be read"), "{gone}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
