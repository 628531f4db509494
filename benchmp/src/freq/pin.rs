//! Frequency pinning: `--pin-freq MHZ` sets the run's CPUs' cpufreq `scaling_min_freq` and
//! `scaling_max_freq` to one clock and `--governor NAME` their `scaling_governor`, for the
//! run, and every value is written back after it: when the session finishes, when the tool
//! exits with an error (a child that crashed), and on SIGINT, SIGTERM or SIGHUP, which only
//! set a flag while a pin is in force so the run ends through its error path.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::error::{Refused, Unsupported, Usage};
use crate::sys::process::InterruptGuard;

/// One file a pin wrote (JSON: `path`, `was`, `set`, `restored`, `left_to`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedFile {
    /// The sysfs file.
    pub path: String,
    /// Its value before the run (before the first socbench process that pinned it).
    pub was: String,
    /// The value written for the run.
    pub set: String,
    /// Whether `was` was written back (`None` while the pin is still in force, or when it was
    /// left to another process).
    pub restored: Option<bool>,
    /// Another live socbench process that held this file at the same value (the other side
    /// of `benchmp ab`): this process shared its pin, and whichever ends last writes it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_with: Option<u32>,
    /// The process left to write `was` back, when this one ended first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_to: Option<u32>,
}

/// What a pin asked for and did (JSON: `mhz`, `governor`, `cpus`, `files`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PinRecord {
    /// `--pin-freq`, MHz.
    pub mhz: Option<f64>,
    /// `--governor`.
    pub governor: Option<String>,
    /// The run's CPUs.
    pub cpus: Vec<usize>,
    /// Every file written, in the order written.
    pub files: Vec<PinnedFile>,
}

/// A write that failed, or a file another socbench process holds at another value.
#[derive(Debug, thiserror::Error)]
#[error("{source}")]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: foundation::claim::ClaimError,
}

/// Values written to sysfs with what they replaced, each held through a cross-process claim
/// ([`foundation::claim::Claim`]); [`Writes::restore`] lets them go newest first, so a min ≤ max
/// pair stays ordered at every step, and the last process holding a file writes it back.
#[derive(Debug, Default)]
pub struct Writes {
    done: Vec<(PinnedFile, foundation::claim::Claim)>,
    restored: bool,
}

fn read(p: &Path) -> Option<String> {
    crate::sysfs::read_attr(p).ok()
}

impl Writes {
    /// Holds `path` at `value`, remembering what it held.
    pub fn write(&mut self, path: &Path, value: &str) -> Result<(), WriteError> {
        let claim = foundation::claim::Claim::take(path, value).map_err(|source| WriteError {
            path: path.to_path_buf(),
            source,
        })?;
        let shared_with = match claim.taken {
            foundation::claim::Taken::Shared { with, .. } => Some(with),
            foundation::claim::Taken::Wrote { .. } => None,
        };
        self.done.push((
            PinnedFile {
                path: path.display().to_string(),
                was: claim.was().to_string(),
                set: value.to_string(),
                restored: None,
                shared_with,
                left_to: None,
            },
            claim,
        ));
        Ok(())
    }

    /// Sets the `min` and `max` files of `dir` both to `khz`, in the order that keeps
    /// min ≤ max; a failure undoes this pair's first write and leaves earlier pairs in force.
    pub fn pin_pair(
        &mut self,
        dir: &Path,
        (min, max): (&str, &str),
        khz: u64,
    ) -> Result<(), WriteError> {
        let (pmin, pmax) = (dir.join(min), dir.join(max));
        let raising = read(&pmax)
            .and_then(|m| m.parse::<u64>().ok())
            .is_some_and(|m| khz > m);
        let order = if raising {
            [&pmax, &pmin]
        } else {
            [&pmin, &pmax]
        };
        let mark = self.done.len();
        for p in order {
            if let Err(e) = self.write(p, &khz.to_string()) {
                self.restore_past(mark);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Lets go of everything after the first `keep` writes, newest first, and forgets it.
    fn restore_past(&mut self, keep: usize) {
        while self.done.len() > keep {
            if let Some((_, mut claim)) = self.done.pop() {
                claim.release();
            }
        }
    }

    /// Lets go of every file, newest first (once): each is written back unless another
    /// process still holds it; marks each written back or left.
    pub fn restore(&mut self) {
        if self.restored {
            return;
        }
        self.restored = true;
        for (f, claim) in self.done.iter_mut().rev() {
            match claim.release() {
                Some(foundation::claim::Released::Restored(ok)) => f.restored = Some(ok),
                Some(foundation::claim::Released::LeftTo(pid)) => f.left_to = Some(pid),
                None => {}
            }
        }
    }

    /// The files written so far.
    pub fn files(&self) -> Vec<PinnedFile> {
        self.done.iter().map(|(f, _)| f.clone()).collect()
    }
}

/// A pin in force for the run's CPUs; written back on [`FreqPin::restore`] or drop (by the
/// process that made it only: a forked child never undoes its parent's pin).
#[derive(Debug)]
pub struct FreqPin {
    writes: Writes,
    mhz: Option<f64>,
    governor: Option<String>,
    cpus: Vec<usize>,
    owner: u32,
    _signals: InterruptGuard,
}

/// The cpufreq directory of `cpu` under the sysfs root.
pub fn cpufreq_dir(sysfs: &Path, cpu: usize) -> PathBuf {
    sysfs.join(format!("devices/system/cpu/cpu{cpu}/cpufreq"))
}

impl FreqPin {
    /// Pins `cpus` (their cpufreq policies, each once) to `mhz` and/or `governor`.
    /// A CPU without cpufreq or a file that cannot be written is [`Unsupported`] (exit 3,
    /// naming the file; what was written is restored first); a clock outside a CPU's range or
    /// a governor it does not offer is a [`Usage`] error.
    pub fn apply(
        sysfs: &Path,
        cpus: &[usize],
        mhz: Option<f64>,
        governor: Option<&str>,
    ) -> Result<FreqPin, Refused> {
        let option = if mhz.is_some() {
            "--pin-freq"
        } else {
            "--governor"
        };
        // A pin a killed run left behind is written back before anything is read.
        foundation::claim::recover_stale();
        let mut dirs: Vec<(usize, PathBuf)> = Vec::new();
        for &cpu in cpus {
            let dir = cpufreq_dir(sysfs, cpu);
            let max = dir.join("scaling_max_freq");
            if read(&max).is_none() {
                return Err(Unsupported(format!(
                    "{option}: CPU {cpu} has no cpufreq ({} cannot be read)",
                    max.display()
                ))
                .into());
            }
            let key = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
            if !dirs.iter().any(|(_, d)| *d == key) {
                dirs.push((cpu, key));
            }
        }
        for (cpu, dir) in &dirs {
            if let Some(m) = mhz {
                let num = |f: &str| read(&dir.join(f)).and_then(|s| s.parse::<u64>().ok());
                let khz = (m * 1000.0).round() as u64;
                if let (Some(lo), Some(hi)) = (num("cpuinfo_min_freq"), num("cpuinfo_max_freq"))
                    && !(lo..=hi).contains(&khz)
                {
                    return Err(Usage(format!(
                        "--pin-freq {m}: CPU {cpu} runs from {} to {} MHz",
                        lo as f64 / 1000.0,
                        hi as f64 / 1000.0
                    ))
                    .into());
                }
            }
            if let Some(g) = governor
                && let Some(offered) = read(&dir.join("scaling_available_governors"))
                && !offered.split_whitespace().any(|o| o == g)
            {
                return Err(Usage(format!("--governor {g}: CPU {cpu} offers {offered}")).into());
            }
        }
        let mut writes = Writes::default();
        let done = dirs.iter().try_for_each(|(_, dir)| {
            if let Some(g) = governor {
                writes.write(&dir.join("scaling_governor"), g)?;
            }
            if let Some(m) = mhz {
                let khz = (m * 1000.0).round() as u64;
                writes.pin_pair(dir, ("scaling_min_freq", "scaling_max_freq"), khz)?;
            }
            Ok::<(), WriteError>(())
        });
        if let Err(e) = done {
            writes.restore();
            return Err(Unsupported(format!("{option}: {e}")).into());
        }
        Ok(FreqPin {
            writes,
            mhz,
            governor: governor.map(str::to_string),
            cpus: cpus.to_vec(),
            owner: std::process::id(),
            _signals: InterruptGuard::install(),
        })
    }

    /// Writes every value back (once) and says what was done.
    pub fn restore(&mut self) -> PinRecord {
        if std::process::id() == self.owner {
            self.writes.restore();
        }
        self.record()
    }

    /// What was asked and written so far.
    pub fn record(&self) -> PinRecord {
        PinRecord {
            mhz: self.mhz,
            governor: self.governor.clone(),
            cpus: self.cpus.clone(),
            files: self.writes.files(),
        }
    }
}

impl Drop for FreqPin {
    fn drop(&mut self) {
        if std::process::id() == self.owner {
            self.writes.restore();
        }
    }
}

/// The pin of this tool run: one per process, whichever sessions it starts.
static ACTIVE: Mutex<Option<FreqPin>> = Mutex::new(None);

/// Makes `pin` the process's pin (restored by [`release`]).
pub fn activate(pin: FreqPin) {
    let mut a = ACTIVE.lock().unwrap_or_else(|p| p.into_inner());
    *a = Some(pin);
}

/// True when a pin is in force.
pub fn active() -> bool {
    ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).is_some()
}

/// What the process's pin in force (if any) has written so far.
pub fn record() -> Option<PinRecord> {
    ACTIVE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(FreqPin::record)
}

/// Writes back the process's pin, if any, and says what was done; the stop signals end the
/// process again from here on.
pub fn release() -> Option<PinRecord> {
    let pin = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).take();
    pin.map(|mut p| p.restore())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("benchmp-pin-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for cpu in [0, 1] {
            let d = cpufreq_dir(&root, cpu);
            std::fs::create_dir_all(&d).unwrap();
            for (f, v) in [
                ("cpuinfo_min_freq", "400000"),
                ("cpuinfo_max_freq", "3000000"),
                ("scaling_min_freq", "400000"),
                ("scaling_max_freq", "3000000"),
                ("scaling_governor", "schedutil"),
                (
                    "scaling_available_governors",
                    "performance schedutil powersave",
                ),
            ] {
                std::fs::write(d.join(f), format!("{v}\n")).unwrap();
            }
        }
        root
    }

    #[test]
    fn pins_every_cpu_and_restores_every_value() {
        let root = tree("restore");
        let f = |cpu, name: &str| read(&cpufreq_dir(&root, cpu).join(name)).unwrap();
        let mut pin = FreqPin::apply(&root, &[0, 1], Some(1800.0), Some("performance")).unwrap();
        for cpu in [0, 1] {
            assert_eq!(f(cpu, "scaling_min_freq"), "1800000");
            assert_eq!(f(cpu, "scaling_max_freq"), "1800000");
            assert_eq!(f(cpu, "scaling_governor"), "performance");
        }
        let r = pin.restore();
        assert_eq!(r.files.len(), 6);
        assert!(r.files.iter().all(|f| f.restored == Some(true)), "{r:?}");
        for cpu in [0, 1] {
            assert_eq!(f(cpu, "scaling_min_freq"), "400000");
            assert_eq!(f(cpu, "scaling_max_freq"), "3000000");
            assert_eq!(f(cpu, "scaling_governor"), "schedutil");
        }
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn bad_requests_and_missing_files_are_refused_before_anything_is_written() {
        let root = tree("refuse");
        let e = FreqPin::apply(&root, &[0], Some(5000.0), None).unwrap_err();
        assert_eq!(
            crate::error::ExitStatus::exit_status(&e),
            crate::error::EXIT_USAGE
        );
        assert!(
            e.to_string().contains("CPU 0 runs from 400 to 3000 MHz"),
            "{e}"
        );
        let e = FreqPin::apply(&root, &[0], None, Some("ondemand")).unwrap_err();
        assert!(
            e.to_string()
                .contains("offers performance schedutil powersave"),
            "{e}"
        );
        let e = FreqPin::apply(&root, &[0, 5], Some(1000.0), None).unwrap_err();
        assert_eq!(
            crate::error::ExitStatus::exit_status(&e),
            crate::error::EXIT_UNSUPPORTED
        );
        assert!(e.to_string().contains("CPU 5 has no cpufreq"), "{e}");
        assert_eq!(
            read(&cpufreq_dir(&root, 0).join("scaling_max_freq")).unwrap(),
            "3000000"
        );
        // A file that cannot be written (a directory, even for root): exit 3 naming it, and
        // CPU 0's pin, already written, is undone.
        let bad = cpufreq_dir(&root, 1).join("scaling_min_freq");
        std::fs::remove_file(&bad).unwrap();
        std::fs::create_dir(&bad).unwrap();
        let e = FreqPin::apply(&root, &[0, 1], Some(1000.0), None).unwrap_err();
        assert_eq!(
            crate::error::ExitStatus::exit_status(&e),
            crate::error::EXIT_UNSUPPORTED
        );
        assert!(
            e.to_string().contains("cpu1/cpufreq/scaling_min_freq"),
            "{e}"
        );
        assert_eq!(
            read(&cpufreq_dir(&root, 0).join("scaling_min_freq")).unwrap(),
            "400000"
        );
        assert_eq!(
            read(&cpufreq_dir(&root, 0).join("scaling_max_freq")).unwrap(),
            "3000000"
        );
        std::fs::remove_dir_all(root).unwrap();
    }
}
