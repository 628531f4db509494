//! What every socbench binary says about an error: the exit statuses, the resource limit an
//! error ran into (exit 1, named with its value so it can be raised), and the text of paths,
//! names and bytes quoted in a message (control characters escaped, long inputs cut).

use std::borrow::Cow;
use std::io;
use std::path::Path;

/// Process exit statuses shared by every socbench binary.
pub mod exit_code {
    /// Success.
    pub const OK: i32 = 0;
    /// The run or a validation failed.
    pub const FAILED: i32 = 1;
    /// Usage error or bad input (including fixable setup problems such as not being root).
    pub const USAGE: i32 = 2;
    /// Unsupported here (a kernel without tracefs, a CPU without the kernel asked for).
    pub const UNSUPPORTED: i32 = 3;
}

/// A resource limit an error ran into: exit status 1 (the measurement could not be made
/// here and now, the input was fine), said with the limit's name and value so it can be
/// raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// EMFILE: this process's open files (`ulimit -n`).
    OpenFiles,
    /// ENFILE: the system's open files.
    SystemFiles,
    /// EAGAIN from fork or a thread's start: processes and threads (`ulimit -u`).
    Processes,
    /// ENOMEM, or an allocation refused: memory (`ulimit -v`).
    Memory,
    /// EFBIG: the largest file this process may write (`ulimit -f`).
    FileSize,
    /// ENOSPC: a full file system.
    DiskFull,
    /// EDQUOT: a disk quota.
    Quota,
}

impl Limit {
    /// The limit an OS error number stands for, if it is one.
    pub fn of_errno(errno: i32) -> Option<Limit> {
        match errno {
            libc::EMFILE => Some(Limit::OpenFiles),
            libc::ENFILE => Some(Limit::SystemFiles),
            libc::EAGAIN => Some(Limit::Processes),
            libc::ENOMEM => Some(Limit::Memory),
            libc::EFBIG => Some(Limit::FileSize),
            libc::ENOSPC => Some(Limit::DiskFull),
            libc::EDQUOT => Some(Limit::Quota),
            _ => None,
        }
    }

    /// The first limit a chain of errors ran into: an [`io::Error`] or a `nix` errno among
    /// `e` and its sources.
    pub fn in_chain(e: &(dyn std::error::Error + 'static)) -> Option<Limit> {
        let mut cause = Some(e);
        while let Some(c) = cause {
            let found = if let Some(io) = c.downcast_ref::<io::Error>() {
                match io.raw_os_error() {
                    Some(n) => Limit::of_errno(n),
                    None if io.kind() == io::ErrorKind::OutOfMemory => Some(Limit::Memory),
                    None => None,
                }
            } else if let Some(n) = c.downcast_ref::<nix::errno::Errno>() {
                Limit::of_errno(*n as i32)
            } else {
                None
            };
            if found.is_some() {
                return found;
            }
            cause = c.source();
        }
        None
    }
}

/// A soft resource limit in words: `unlimited` or its value divided by `unit`.
fn soft(resource: nix::sys::resource::Resource, unit: u64) -> Option<u64> {
    let (soft, _) = nix::sys::resource::getrlimit(resource).ok()?;
    (soft != nix::sys::resource::RLIM_INFINITY).then_some(soft / unit)
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use nix::sys::resource::Resource;
        match self {
            Limit::OpenFiles => match soft(Resource::RLIMIT_NOFILE, 1) {
                Some(n) => write!(f, "the limit of open files (ulimit -n) is {n}"),
                None => f.write_str("the limit of open files (ulimit -n) is reached"),
            },
            Limit::SystemFiles => f.write_str("the system's limit of open files is reached"),
            // A thread's stack that does not fit the address space is refused as EAGAIN too.
            Limit::Processes => match (
                soft(Resource::RLIMIT_NPROC, 1),
                soft(Resource::RLIMIT_AS, 1024),
            ) {
                (Some(n), Some(k)) => write!(
                    f,
                    "the limit of processes and threads (ulimit -u) is {n}, the address-space limit (ulimit -v) {k} KiB"
                ),
                (Some(n), None) => write!(f, "the limit of processes and threads (ulimit -u) is {n}"),
                (None, Some(k)) => write!(
                    f,
                    "no process or thread could start; the address-space limit (ulimit -v) is {k} KiB"
                ),
                (None, None) => f.write_str(
                    "no process or thread could start (the system's limit of processes and threads)",
                ),
            },
            Limit::Memory => match soft(Resource::RLIMIT_AS, 1024) {
                Some(k) => write!(f, "the address-space limit (ulimit -v) is {k} KiB"),
                None => f.write_str("out of memory"),
            },
            Limit::FileSize => match soft(Resource::RLIMIT_FSIZE, 1) {
                Some(b) => write!(f, "the file-size limit (ulimit -f) is {b} bytes"),
                None => f.write_str("the file-size limit (ulimit -f) is reached"),
            },
            Limit::DiskFull => f.write_str("the file system is full"),
            Limit::Quota => f.write_str("the disk quota is exceeded"),
        }
    }
}

/// `text` with its control characters escaped as Rust's `{:?}` does (`\n`, `\u{1b}`), so a
/// message holding it stays on one line and cannot drive the terminal.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A path as a message shows it: lossy UTF-8 with control characters escaped.
pub fn shown(path: &Path) -> String {
    printable(&path.to_string_lossy()).into_owned()
}

/// Untrusted input for a message: its first `max` characters in quotes, escaped as `{:?}`
/// escapes a string and invalid UTF-8 as `\xNN`, then `...` when there was more.
pub fn excerpt(bytes: &[u8], max: usize) -> String {
    let mut out = String::from("\"");
    let mut left = max;
    let mut cut = false;
    'chunks: for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if left == 0 {
                cut = true;
                break 'chunks;
            }
            out.extend(c.escape_debug());
            left -= 1;
        }
        for b in chunk.invalid() {
            if left == 0 {
                cut = true;
                break 'chunks;
            }
            out.push_str(&format!("\\x{b:02x}"));
            left -= 1;
        }
    }
    out.push('"');
    if cut {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("plain é"), "plain é");
        assert_eq!(printable("a\nb\x1b[2J\t"), "a\\nb\\u{1b}[2J\\t");
        assert_eq!(shown(Path::new("/tmp/a\rb")), "/tmp/a\\rb");
    }

    #[test]
    fn resource_limits_are_found_in_a_chain() {
        let full = io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(Limit::in_chain(&full), Some(Limit::DiskFull));
        let other = io::Error::from_raw_os_error(libc::EISDIR);
        assert_eq!(Limit::in_chain(&other), None);
        let e = anyhow::Error::new(nix::errno::Errno::EMFILE).context("cannot open x");
        assert_eq!(Limit::in_chain(e.as_ref()), Some(Limit::OpenFiles));
        assert!(Limit::OpenFiles.to_string().contains("ulimit -n"));
        let oom = io::Error::from(io::ErrorKind::OutOfMemory);
        assert_eq!(Limit::in_chain(&oom), Some(Limit::Memory));
    }

    #[test]
    fn excerpts_are_quoted_escaped_and_cut() {
        assert_eq!(excerpt(b"abc", 10), "\"abc\"");
        assert_eq!(excerpt(b"a\"b\n", 10), "\"a\\\"b\\n\"");
        assert_eq!(excerpt(b"\xff\xfeok\x07", 10), "\"\\xff\\xfeok\\u{7}\"");
        assert_eq!(excerpt("héllo world".as_bytes(), 5), "\"héllo\"...");
        assert_eq!(excerpt(b"", 5), "\"\"");
    }
}
