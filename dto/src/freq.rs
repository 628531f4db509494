//! Core and uncore frequency pinning as the DTO guide sets it up (PERF_CORE_FREQ_MHZ,
//! PERF_UNCORE_FREQ_MHZ), written with benchmp's pinning ([`benchmp::freq::pin::Writes`]):
//! cpufreq scaling_min/max_freq and intel_uncore_frequency min/max_freq_khz, with the
//! previous values written back when the pin is dropped. Unlike benchmp's `--pin-freq`, a
//! pin that cannot be made is reported as "not available" or "not pinned" and the run goes
//! on, as the guide's scripts do.

use std::path::{Path, PathBuf};

use benchmp::freq::pin::{Writes, cpufreq_dir};

/// A pin in force; restores the previous limits on drop.
#[derive(Debug, Default)]
pub struct FreqPin {
    writes: Writes,
    /// One line for the core frequency in the report header.
    pub core: String,
    /// One line for the uncore frequency in the report header.
    pub uncore: String,
}

fn read(p: &Path) -> Option<String> {
    benchmp::sysfs::read_attr(p).ok()
}

fn mhz(khz: &str) -> String {
    khz.parse::<u64>()
        .map(|k| (k / 1000).to_string())
        .unwrap_or_else(|_| khz.to_string())
}

impl FreqPin {
    /// Pins the core frequency of each of `cpus` and every uncore domain to the given MHz
    /// (None: leave as is) under the sysfs root (normally `/sys`).
    pub fn apply(
        root: &Path,
        cpus: &[usize],
        core_mhz: Option<u32>,
        uncore_mhz: Option<u32>,
    ) -> FreqPin {
        let mut pin = FreqPin::default();
        let mut core = Vec::new();
        for &cpu in cpus {
            let dir = cpufreq_dir(root, cpu);
            let state = if !dir.join("scaling_max_freq").exists() {
                format!("not available (no cpufreq for CPU {cpu})")
            } else {
                let names = ("scaling_min_freq", "scaling_max_freq");
                let state = pin.pin_pair(&dir, names, core_mhz);
                let cur = read(&dir.join("scaling_cur_freq")).map(|c| mhz(&c));
                format!("{} MHz {state}", cur.unwrap_or_else(|| "?".into()))
            };
            core.push(if cpus.len() > 1 {
                format!("CPU {cpu}: {state}")
            } else {
                state
            });
        }
        pin.core = core.join("; ");
        let ucore = root.join("devices/system/cpu/intel_uncore_frequency");
        let mut domains: Vec<PathBuf> = std::fs::read_dir(&ucore)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        domains.retain(|d| d.join("max_freq_khz").exists());
        domains.sort();
        pin.uncore = if domains.is_empty() {
            "not available (no intel_uncore_frequency)".into()
        } else {
            let names = ("min_freq_khz", "max_freq_khz");
            let mut states: Vec<String> = domains
                .iter()
                .map(|d| pin.pin_pair(d, names, uncore_mhz))
                .collect();
            states.dedup();
            states.join("; ")
        };
        pin
    }

    /// Writes min and max (in the order that keeps min ≤ max) and reports the result.
    fn pin_pair(&mut self, dir: &Path, names: (&str, &str), want: Option<u32>) -> String {
        let (Some(old_min), Some(old_max)) = (read(&dir.join(names.0)), read(&dir.join(names.1)))
        else {
            return "(limits unreadable)".into();
        };
        let now = format!("(min={} max={})", mhz(&old_min), mhz(&old_max));
        let Some(want) = want else {
            return format!("{now} [not pinned: disabled]");
        };
        match self.writes.pin_pair(dir, names, u64::from(want) * 1000) {
            Ok(()) => format!("(min={want} max={want}) [pinned]"),
            // Only this pair is undone: the pins made before it stay (and say so).
            Err(e) => format!("{now} [not pinned: {e}]"),
        }
    }
}

impl Drop for FreqPin {
    fn drop(&mut self) {
        self.writes.restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> PathBuf {
        let root = std::env::temp_dir().join(format!(
            "dto-freq-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        let cf = root.join("devices/system/cpu/cpu1/cpufreq");
        std::fs::create_dir_all(&cf).unwrap();
        std::fs::write(cf.join("scaling_min_freq"), "800000\n").unwrap();
        std::fs::write(cf.join("scaling_max_freq"), "3000000\n").unwrap();
        std::fs::write(cf.join("scaling_cur_freq"), "2000000\n").unwrap();
        let un = root.join("devices/system/cpu/intel_uncore_frequency/package_00_die_00");
        std::fs::create_dir_all(&un).unwrap();
        std::fs::write(un.join("min_freq_khz"), "1200000\n").unwrap();
        std::fs::write(un.join("max_freq_khz"), "2400000\n").unwrap();
        root
    }

    #[test]
    fn pins_and_restores() {
        let root = tree();
        let cf = root.join("devices/system/cpu/cpu1/cpufreq");
        {
            let pin = FreqPin::apply(&root, &[1], Some(2000), Some(2000));
            assert!(pin.core.contains("[pinned]"), "{}", pin.core);
            assert!(pin.uncore.contains("[pinned]"), "{}", pin.uncore);
            assert_eq!(read(&cf.join("scaling_min_freq")).unwrap(), "2000000");
            assert_eq!(read(&cf.join("scaling_max_freq")).unwrap(), "2000000");
        }
        assert_eq!(read(&cf.join("scaling_min_freq")).unwrap(), "800000");
        assert_eq!(read(&cf.join("scaling_max_freq")).unwrap(), "3000000");
        let un = root.join("devices/system/cpu/intel_uncore_frequency/package_00_die_00");
        assert_eq!(read(&un.join("max_freq_khz")).unwrap(), "2400000");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_failed_pin_leaves_the_earlier_ones_in_force() {
        let root = tree();
        let cf = root.join("devices/system/cpu/cpu1/cpufreq");
        let un = root.join("devices/system/cpu/intel_uncore_frequency/package_00_die_00");
        // A limit file that reads but cannot be written, even by root.
        std::fs::remove_file(un.join("min_freq_khz")).unwrap();
        std::os::unix::fs::symlink("/proc/version", un.join("min_freq_khz")).unwrap();
        {
            let pin = FreqPin::apply(&root, &[1], Some(2000), Some(2000));
            assert!(pin.core.contains("[pinned]"), "{}", pin.core);
            assert!(pin.uncore.contains("[not pinned: "), "{}", pin.uncore);
            assert_eq!(read(&cf.join("scaling_max_freq")).unwrap(), "2000000");
            assert_eq!(read(&un.join("max_freq_khz")).unwrap(), "2400000");
        }
        assert_eq!(read(&cf.join("scaling_max_freq")).unwrap(), "3000000");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn absent_files_are_reported_not_fatal() {
        let root = std::env::temp_dir().join("dto-freq-empty-does-not-exist");
        let pin = FreqPin::apply(&root, &[3], Some(2000), Some(2000));
        assert!(pin.core.starts_with("not available"), "{}", pin.core);
        let two = FreqPin::apply(&root, &[0, 3], None, None);
        assert!(
            two.core.starts_with("CPU 0: not available") && two.core.contains("; CPU 3: "),
            "{}",
            two.core
        );
        assert!(pin.uncore.starts_with("not available"), "{}", pin.uncore);
    }
}
