//! A cpufreq policy checked after each step: what its files held before, which of them hold
//! something else now, and the write-back of a pin a killed tool left.

use std::path::{Path, PathBuf};

use super::result::NotBack;

/// The files of a policy the sweep checks after each step.
const POLICY_FILES: [&str; 3] = ["scaling_min_freq", "scaling_max_freq", "scaling_governor"];

/// What a policy's files hold (`None`: cannot be read).
pub(super) fn snapshot(dir: &Path) -> Vec<(PathBuf, Option<String>)> {
    POLICY_FILES
        .iter()
        .map(|f| {
            let p = dir.join(f);
            let v = benchmp::sysfs::read_attr(&p).ok();
            (p, v)
        })
        .collect()
}

/// The files of a snapshot that hold something else now.
pub(super) fn not_back(before: &[(PathBuf, Option<String>)]) -> Vec<NotBack> {
    before
        .iter()
        .filter_map(|(p, was)| {
            let was = was.as_ref()?;
            let now = benchmp::sysfs::read_attr(p).ok();
            (now.as_ref() != Some(was)).then(|| NotBack {
                file: p.display().to_string(),
                was: was.clone(),
                now,
                written_back: None,
                held_by: None,
            })
        })
        .collect()
}

/// Writes back the files a step left changed that no live socbench process holds (a tool
/// that died outright without a claim, a `--cmd` that pins by itself): `scaling_max_freq`
/// first when it rises, so min ≤ max at every write. Marks each file written back or not.
pub(super) fn write_back(files: &mut [NotBack]) {
    let was = |name: &str| {
        files.iter().find(|f| f.file.ends_with(name)).and_then(|f| {
            Some((
                f.was.parse::<u64>().ok()?,
                f.now.as_deref()?.parse::<u64>().ok()?,
            ))
        })
    };
    let raising = was("/scaling_max_freq").is_some_and(|(was, now)| was > now);
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| {
        let max = files[i].file.ends_with("/scaling_max_freq");
        if raising { !max } else { max }
    });
    for i in order {
        let f = &mut files[i];
        let path = Path::new(&f.file);
        if let Some(pid) = foundation::claim::held_by(path) {
            f.held_by = Some(pid);
            continue;
        }
        f.written_back =
            Some(foundation::output::write_attribute(path, &format!("{}\n", f.was)).is_ok());
    }
}

/// `policy0: scaling_max_freq 307200 (was 2265600)`, for a line.
pub(super) fn say_not_back(policy: &str, files: &[NotBack]) -> String {
    let parts: Vec<String> = files
        .iter()
        .map(|f| {
            let name = Path::new(&f.file)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let done = match (f.written_back, f.held_by) {
                (Some(true), _) => ", written back",
                (Some(false), _) => ", which could not be written back",
                (None, Some(_)) => ", held by another socbench process",
                (None, None) => "",
            };
            format!(
                "{name} {} (was {}{done})",
                f.now.as_deref().unwrap_or("unreadable"),
                f.was
            )
        })
        .collect();
    foundation::error::printable(&format!("{policy}: {}", parts.join(", "))).into_owned()
}
