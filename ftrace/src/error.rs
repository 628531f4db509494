//! The crate's error type; each variant names the file involved and says what to do.

use std::borrow::Cow;
use std::io;
use std::path::{Path, PathBuf};

/// Process exit statuses shared by the `ftrace` binary and socbench's tools.
pub mod exit_code {
    /// Success.
    pub const OK: i32 = 0;
    /// The run or a validation failed.
    pub const FAILED: i32 = 1;
    /// Usage error or bad input (including fixable setup problems such as not being root).
    pub const USAGE: i32 = 2;
    /// Unsupported here: this kernel has no tracefs at all.
    pub const UNSUPPORTED: i32 = 3;
}

/// Everything the library reports; the messages escape the paths and names they quote.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// tracefs is supported but not mounted anywhere we looked.
    #[error(
        "no tracefs with trace_marker in /proc/mounts, {tried}: mount it with `mount -t tracefs nodev /sys/kernel/tracing` (`ftrace record --mount` does)"
    )]
    NotMounted {
        /// The fallback folders tried.
        tried: String,
    },
    /// The kernel supports neither tracefs nor debugfs.
    #[error("/proc/filesystems lists neither tracefs nor debugfs: this kernel cannot trace")]
    Unsupported,
    /// A tracefs setting needs root.
    #[error(
        "{}: permission denied: run as root (on Android, capture with perfetto or atrace, which need no root)",
        shown(path)
    )]
    NotRoot {
        /// The file that could not be changed.
        path: PathBuf,
    },
    /// An `--event GROUP/NAME` that this kernel does not have.
    #[error(
        "{}: no event {} on this kernel; list them with `cat {}`",
        shown(path),
        printable(event),
        shown(available)
    )]
    NoSuchEvent {
        /// The event as asked, GROUP/NAME.
        event: String,
        /// Its missing enable file.
        path: PathBuf,
        /// tracefs `available_events`.
        available: PathBuf,
    },
    /// The kernel would not allocate the asked ring buffer.
    #[error(
        "{}: the kernel refused {kb} KiB per CPU ({source}): ask for a smaller --buffer-kb",
        shown(path)
    )]
    BufferRefused {
        /// tracefs `buffer_size_kb`.
        path: PathBuf,
        /// The size asked, KiB per CPU.
        kb: u64,
        /// What the write returned.
        source: io::Error,
    },
    /// A `--clock` that this kernel does not offer.
    #[error(
        "{}: no trace clock {clock:?} here; pick one listed in that file",
        shown(path)
    )]
    NoSuchClock {
        /// The clock asked.
        clock: String,
        /// tracefs `trace_clock`.
        path: PathBuf,
    },
    /// An output file that cannot be written.
    #[error("{}: cannot write: {source}", shown(path))]
    Output {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// Another capture holds tracefs (its settings and its one ring buffer).
    #[error(
        "{}: another ftrace record is capturing; one capture at a time",
        shown(path)
    )]
    Busy {
        /// tracefs.
        path: PathBuf,
    },
    /// The recorded command could not be started.
    #[error("cannot run {}: {source}", printable(command))]
    Spawn {
        /// Program name.
        command: String,
        /// What exec returned.
        source: io::Error,
    },
    /// Any other failed file operation.
    #[error("{}: cannot {action}: {source}", shown(path))]
    Io {
        /// The file.
        path: PathBuf,
        /// What was attempted, e.g. "read" or "write 1".
        action: String,
        /// The OS error.
        source: io::Error,
    },
}

impl Error {
    /// The exit status a binary should end with for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Unsupported => exit_code::UNSUPPORTED,
            Error::Io { .. } => exit_code::FAILED,
            Error::NotMounted { .. }
            | Error::NotRoot { .. }
            | Error::NoSuchEvent { .. }
            | Error::BufferRefused { .. }
            | Error::NoSuchClock { .. }
            | Error::Output { .. }
            | Error::Busy { .. }
            | Error::Spawn { .. } => exit_code::USAGE,
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

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

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
    fn excerpts_are_quoted_escaped_and_cut() {
        assert_eq!(excerpt(b"abc", 10), "\"abc\"");
        assert_eq!(excerpt(b"a\"b\n", 10), "\"a\\\"b\\n\"");
        assert_eq!(excerpt(b"\xff\xfeok\x07", 10), "\"\\xff\\xfeok\\u{7}\"");
        assert_eq!(excerpt("héllo world".as_bytes(), 5), "\"héllo\"...");
        assert_eq!(excerpt(b"", 5), "\"\"");
    }
}
