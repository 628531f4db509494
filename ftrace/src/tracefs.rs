//! Finding tracefs and reading or changing its settings.
//!
//! tracefs lives at `/sys/kernel/tracing` on current kernels and at `/sys/kernel/debug/tracing`
//! (debugfs's `tracing` folder) on older ones and many Android builds; `/proc/mounts` says
//! where it really is.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where tracefs usually is, tried after `/proc/mounts`.
pub const FALLBACKS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Candidate tracefs folders named by a `/proc/mounts` text, best first: tracefs mounts, then
/// the `tracing` folder of debugfs mounts.
pub fn candidates_from_mounts(mounts: &str) -> Vec<PathBuf> {
    let mut tracefs = Vec::new();
    let mut debugfs = Vec::new();
    for line in mounts.lines() {
        let mut fields = line.split_ascii_whitespace();
        let (Some(_source), Some(point), Some(fstype)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let point = PathBuf::from(unescape_mount_field(point));
        match fstype {
            "tracefs" => tracefs.push(point),
            "debugfs" => debugfs.push(point.join("tracing")),
            _ => {}
        }
    }
    tracefs.extend(debugfs);
    tracefs
}

/// Undoes the octal escapes (`\040` for a space) the kernel uses in `/proc/mounts`.
fn unescape_mount_field(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let value = bytes[i + 1..i + 4]
                .iter()
                .fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
            if let Ok(byte) = u8::try_from(value) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first folder holding a `trace_marker`, from `mounts` then [`FALLBACKS`]; `has_marker`
/// says whether a folder holds one (a parameter so tests need no real tracefs).
pub fn find_with(mounts: &str, has_marker: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    let mut tried: Vec<PathBuf> = candidates_from_mounts(mounts);
    tried.extend(FALLBACKS.iter().map(PathBuf::from));
    tried.into_iter().find(|dir| has_marker(dir))
}

/// This machine's tracefs folder, if one is mounted.
///
/// A folder we may not look into (tracefs is root-only on most systems) counts as found, so
/// that the caller reports a permission problem rather than a missing tracefs.
pub fn find() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    find_with(&mounts, |dir| {
        match std::fs::metadata(dir.join("trace_marker")) {
            Ok(_) => true,
            Err(err) => err.kind() == io::ErrorKind::PermissionDenied,
        }
    })
}

/// Whether the running kernel can mount tracefs (or at least debugfs).
pub fn kernel_supports_tracing() -> bool {
    match std::fs::read_to_string("/proc/filesystems") {
        Ok(list) => list
            .lines()
            .filter_map(|line| line.split_ascii_whitespace().last())
            .any(|fs| fs == "tracefs" || fs == "debugfs"),
        // Without /proc we cannot tell; assume it can.
        Err(_) => true,
    }
}

/// Mounts tracefs on `/sys/kernel/tracing` (root only) and returns that folder.
pub fn mount_default() -> Result<PathBuf> {
    let dir = PathBuf::from(FALLBACKS[0]);
    nix::mount::mount(
        Some("nodev"),
        &dir,
        Some("tracefs"),
        nix::mount::MsFlags::empty(),
        None::<&str>,
    )
    .map_err(|errno| match errno {
        nix::errno::Errno::EPERM | nix::errno::Errno::EACCES => {
            Error::NotRoot { path: dir.clone() }
        }
        nix::errno::Errno::ENODEV => Error::Unsupported,
        other => Error::Io {
            path: dir.clone(),
            action: "mount tracefs".into(),
            source: other.into(),
        },
    })?;
    Ok(dir)
}

/// A tracefs setting that `ftrace record` may change and must restore.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Setting {
    /// `tracing_on`: 0 or 1.
    TracingOn,
    /// `buffer_size_kb`: ring buffer KiB per CPU.
    BufferSizeKb,
    /// `per_cpu/cpuN/buffer_size_kb`: one CPU's ring buffer KiB (`buffer_size_kb` reads `X`
    /// when they differ).
    CpuBufferSizeKb(usize),
    /// `current_tracer`, e.g. `nop`.
    CurrentTracer,
    /// `trace_clock`: the selected clock.
    TraceClock,
    /// `options/NAME`: 0 or 1.
    Option(String),
    /// `events/GROUP/NAME/enable`: 0 or 1.
    Event(String),
}

impl Setting {
    /// The file, relative to the tracefs folder.
    pub fn file(&self) -> String {
        match self {
            Setting::TracingOn => "tracing_on".into(),
            Setting::BufferSizeKb => "buffer_size_kb".into(),
            Setting::CpuBufferSizeKb(cpu) => format!("per_cpu/cpu{cpu}/buffer_size_kb"),
            Setting::CurrentTracer => "current_tracer".into(),
            Setting::TraceClock => "trace_clock".into(),
            Setting::Option(name) => format!("options/{name}"),
            Setting::Event(event) => format!("events/{event}/enable"),
        }
    }

    /// The value a read of the file means, in the form a write accepts.
    ///
    /// `trace_clock` lists every clock with the selected one in brackets; `buffer_size_kb`
    /// reads `7 (expanded: 1408)` until the buffer is first used, and 1408 is what it becomes;
    /// an event's `enable` may carry a `*` (soft-disabled) that a write does not accept.
    pub fn normalise(&self, raw: &str) -> String {
        let raw = raw.trim();
        match self {
            Setting::TraceClock => raw
                .split_ascii_whitespace()
                .find_map(|c| c.strip_prefix('[').and_then(|c| c.strip_suffix(']')))
                .unwrap_or(raw)
                .to_string(),
            Setting::BufferSizeKb | Setting::CpuBufferSizeKb(_) => {
                match raw.split_once("(expanded:") {
                    Some((_, expanded)) => expanded.trim_end_matches(')').trim().to_string(),
                    None => raw.to_string(),
                }
            }
            Setting::Event(_) => raw.trim_end_matches('*').to_string(),
            _ => raw.to_string(),
        }
    }
}

/// A tracefs folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracefs {
    root: PathBuf,
}

impl Tracefs {
    /// tracefs at `root`, not checked.
    pub fn at(root: impl Into<PathBuf>) -> Tracefs {
        Tracefs { root: root.into() }
    }

    /// This machine's tracefs, or why there is none.
    pub fn locate() -> Result<Tracefs> {
        match find() {
            Some(root) => Ok(Tracefs { root }),
            None if !kernel_supports_tracing() => Err(Error::Unsupported),
            None => Err(Error::NotMounted {
                tried: FALLBACKS.join(", "),
            }),
        }
    }

    /// The tracefs folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A file inside tracefs.
    pub fn path(&self, file: &str) -> PathBuf {
        self.root.join(file)
    }

    /// Reads a file inside tracefs.
    pub fn read(&self, file: &str) -> Result<String> {
        let path = self.path(file);
        std::fs::read_to_string(&path).map_err(|source| Error::Io {
            path,
            action: "read".into(),
            source,
        })
    }

    /// Writes `value` to a file inside tracefs in one write (never creating it).
    pub fn write(&self, file: &str, value: &str) -> Result<()> {
        let path = self.path(file);
        let result = OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .and_then(|mut f| f.write_all(value.as_bytes()));
        result.map_err(|source| match source.kind() {
            io::ErrorKind::PermissionDenied => Error::NotRoot { path },
            _ => Error::Io {
                path,
                action: format!("write {value:?}"),
                source,
            },
        })
    }

    /// Whether the setting exists on this kernel.
    pub fn has(&self, setting: &Setting) -> bool {
        self.path(&setting.file()).exists()
    }

    /// The setting's current value, normalised (see [`Setting::normalise`]).
    pub fn get(&self, setting: &Setting) -> Result<String> {
        Ok(setting.normalise(&self.read(&setting.file())?))
    }

    /// Changes a setting.
    pub fn set(&self, setting: &Setting, value: &str) -> Result<()> {
        self.write(&setting.file(), value)
    }

    /// The values of `settings` that exist here, in order.
    pub fn snapshot(&self, settings: &[Setting]) -> Result<Vec<(Setting, String)>> {
        settings
            .iter()
            .filter(|s| self.has(s))
            .map(|s| Ok((s.clone(), self.get(s)?)))
            .collect()
    }

    /// Each CPU's ring buffer size, by CPU number: what `buffer_size_kb` cannot say (it reads
    /// `X`) when they differ.
    pub fn cpu_buffer_sizes(&self) -> Result<Vec<(Setting, String)>> {
        let dir = self.path("per_cpu");
        if let Err(source) = std::fs::read_dir(&dir) {
            return Err(Error::Io {
                path: dir,
                action: "list".into(),
                source,
            });
        }
        self.cpus()
            .into_iter()
            .map(Setting::CpuBufferSizeKb)
            .filter(|s| self.has(s))
            .map(|s| Ok((s.clone(), self.get(&s)?)))
            .collect()
    }

    /// The CPUs with a ring buffer (`per_cpu/cpuN`), in order; none when it cannot be listed.
    pub fn cpus(&self) -> Vec<usize> {
        let mut cpus: Vec<usize> = std::fs::read_dir(self.path("per_cpu"))
            .into_iter()
            .flatten()
            .filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_prefix("cpu")?
                    .parse()
                    .ok()
            })
            .collect();
        cpus.sort_unstable();
        cpus
    }

    /// The smallest CPU's ring buffer size in effect, KiB.
    pub fn smallest_cpu_buffer_kb(&self) -> Option<u64> {
        match self.get(&Setting::BufferSizeKb).ok()?.parse::<u64>() {
            Ok(kb) => Some(kb),
            Err(_) => self
                .cpu_buffer_sizes()
                .ok()?
                .iter()
                .filter_map(|(_, v)| v.parse::<u64>().ok())
                .min(),
        }
    }

    /// Empties the ring buffer.
    pub fn clear(&self) -> Result<()> {
        self.write("trace", "")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
proc /proc proc rw,relatime 0 0
sysfs /sys sysfs rw,relatime 0 0
debugfs /sys/kernel/debug debugfs rw,relatime 0 0
tracefs /sys/kernel/debug/tracing tracefs rw,relatime 0 0
nodev /mnt/my\\040trace tracefs rw,relatime 0 0
";

    #[test]
    fn tracefs_mounts_come_before_debugfs() {
        assert_eq!(
            candidates_from_mounts(MOUNTS),
            vec![
                PathBuf::from("/sys/kernel/debug/tracing"),
                PathBuf::from("/mnt/my trace"),
                PathBuf::from("/sys/kernel/debug/tracing"),
            ]
        );
    }

    #[test]
    fn debugfs_only_android_style() {
        let mounts = "debugfs /sys/kernel/debug debugfs rw,relatime 0 0\n";
        assert_eq!(
            candidates_from_mounts(mounts),
            vec![PathBuf::from("/sys/kernel/debug/tracing")]
        );
    }

    #[test]
    fn first_folder_with_a_marker_wins() {
        let found = find_with(MOUNTS, |p| p == Path::new("/mnt/my trace"));
        assert_eq!(found, Some(PathBuf::from("/mnt/my trace")));
        // Nothing mounted: the fallbacks are tried in order.
        let found = find_with("", |p| p == Path::new("/sys/kernel/debug/tracing"));
        assert_eq!(found, Some(PathBuf::from("/sys/kernel/debug/tracing")));
        assert_eq!(find_with(MOUNTS, |_| false), None);
        // Garbage lines are skipped.
        assert_eq!(find_with("garbage\n\n x", |_| false), None);
    }

    #[test]
    fn mount_escapes() {
        assert_eq!(unescape_mount_field("/a\\040b\\011c"), "/a b\tc");
        assert_eq!(unescape_mount_field("/a\\04"), "/a\\04");
        assert_eq!(unescape_mount_field("\\\\"), "\\\\");
    }

    #[test]
    fn normalised_values() {
        assert_eq!(
            Setting::TraceClock.normalise("local [global] counter\n"),
            "global"
        );
        assert_eq!(
            Setting::BufferSizeKb.normalise("7 (expanded: 1408)\n"),
            "1408"
        );
        assert_eq!(Setting::BufferSizeKb.normalise("1410\n"), "1410");
        assert_eq!(
            Setting::Event("sched/sched_switch".into()).normalise("0*\n"),
            "0"
        );
        assert_eq!(Setting::TracingOn.normalise("1\n"), "1");
        assert_eq!(
            Setting::Event("power/cpu_frequency".into()).file(),
            "events/power/cpu_frequency/enable"
        );
        assert_eq!(Setting::Option("markers".into()).file(), "options/markers");
    }

    #[test]
    fn missing_tracefs_reads_are_errors_naming_the_file() {
        let fs = Tracefs::at("/nonexistent/tracing");
        let err = fs.get(&Setting::TracingOn).unwrap_err().to_string();
        assert!(
            err.starts_with("/nonexistent/tracing/tracing_on: cannot read"),
            "{err}"
        );
        assert!(fs.set(&Setting::TracingOn, "1").is_err());
        assert!(!fs.has(&Setting::TracingOn));
        assert!(fs.snapshot(&[Setting::TracingOn]).unwrap().is_empty());
    }
}
