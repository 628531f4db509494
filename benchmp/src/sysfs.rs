//! Reading a sysfs tree (the machine's, or a captured copy under `BENCHMP_SYSFS_ROOT`): one
//! attribute bounded in size, and a folder's entries in natural order (`hwmon10` after
//! `hwmon9`), the two things every reader of power, thermal and frequency state needs.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The most a sysfs attribute read here may hold: an ODPM `energy_value` of a few dozen rails
/// is well under a kilobyte.
pub const MAX_ATTR_BYTES: u64 = 64 << 10;

/// Reads one sysfs attribute, whole, up to [`MAX_ATTR_BYTES`] (a larger one is an error, never
/// a memory hog); trimmed.
pub fn read_attr(path: &Path) -> std::io::Result<String> {
    let f = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    f.take(MAX_ATTR_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_ATTR_BYTES {
        return Err(std::io::Error::other(format!(
            "holds more than {} KiB",
            MAX_ATTR_BYTES >> 10
        )));
    }
    Ok(String::from_utf8_lossy(&bytes).trim().to_string())
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
