//! Reading a sysfs tree (the machine's, or a captured copy under `BENCHMP_SYSFS_ROOT`): one
//! attribute bounded in size, and a folder's entries in natural order (`hwmon10` after
//! `hwmon9`), the two things every reader of power, thermal and frequency state needs.

use std::path::{Path, PathBuf};

/// The most a sysfs attribute read here may hold: an ODPM `energy_value` of a few dozen rails
/// is well under a kilobyte.
pub const MAX_ATTR_BYTES: u64 = 64 << 10;

/// Reads one sysfs (or procfs) attribute, whole, up to [`MAX_ATTR_BYTES`], trimmed. It goes
/// through [`foundation::input`]: opened without blocking and read only when it is a regular file,
/// so a FIFO or a device planted in a captured tree (`BENCHMP_SYSFS_ROOT`) is an error naming
/// what it is, never a hang or a memory hog.
pub fn read_attr(path: &Path) -> std::io::Result<String> {
    foundation::input::read_small(path, MAX_ATTR_BYTES).map(|s| s.trim().to_string())
}

/// The most a procfs table read here may hold (`/proc/cpuinfo` of a large server,
/// `/proc/self/smaps` of a process with many mappings).
pub const MAX_PROC_BYTES: u64 = 64 << 20;

/// Reads one procfs table (`/proc/cpuinfo`, `/proc/meminfo`, `/proc/self/smaps`) whole, up
/// to [`MAX_PROC_BYTES`], as [`read_attr`] reads an attribute (untrimmed).
pub fn read_proc(path: &Path) -> std::io::Result<String> {
    foundation::input::read_small(path, MAX_PROC_BYTES)
}

/// The entries of `dir` whose names start with `prefix`, by name (none when it cannot be read).
pub fn entries(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .collect();
    v.sort_by_key(|a| natural(a));
    v
}

/// A sort key that orders `hwmon10` after `hwmon9`.
fn natural(p: &Path) -> (String, u64, String) {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let digits: String = name
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let stem = name[..name.len() - digits.len()].to_string();
    (stem, digits.parse().unwrap_or(0), name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_in_natural_order_and_by_prefix() {
        let dir = std::env::temp_dir().join(format!("benchmp-sysfs-{}", std::process::id()));
        for n in ["zone10", "zone9", "zone1", "other"] {
            std::fs::create_dir_all(dir.join(n)).unwrap();
        }
        let names: Vec<String> = entries(&dir, "zone")
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(names, ["zone1", "zone9", "zone10"]);
        assert!(entries(Path::new("/nonexistent/x"), "").is_empty());
    }
}
