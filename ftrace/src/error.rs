//! The crate's error type; each variant names the file involved and says what to do.

use std::io;
use std::path::PathBuf;

pub use foundation::error::{Limit, excerpt, exit_code, printable, shown};

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
    /// The exit status a binary should end with for this error: a file that cannot be
    /// written or read for a resource limit (a full disk under an output, too many open
    /// files) is a failure (1); a ring buffer the kernel refuses stays a request to change
    /// (2), whatever errno it came with.
    pub fn exit_code(&self) -> i32 {
        if matches!(
            self,
            Error::Output { .. } | Error::Io { .. } | Error::Spawn { .. }
        ) && Limit::in_chain(self).is_some()
        {
            return exit_code::FAILED;
        }
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

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_limits_fail_and_other_refusals_are_usage() {
        let full = Error::Output {
            path: "/mnt/full/trace.txt".into(),
            source: io::Error::from_raw_os_error(libc::ENOSPC),
        };
        assert_eq!(Limit::in_chain(&full), Some(Limit::DiskFull));
        assert_eq!(full.exit_code(), exit_code::FAILED);
        let other = Error::Output {
            path: "/x".into(),
            source: io::Error::from_raw_os_error(libc::EISDIR),
        };
        assert_eq!(other.exit_code(), exit_code::USAGE);
        let refused = Error::BufferRefused {
            path: "/sys/kernel/tracing/buffer_size_kb".into(),
            kb: 1 << 40,
            source: io::Error::from_raw_os_error(libc::ENOMEM),
        };
        assert_eq!(refused.exit_code(), exit_code::USAGE);
    }
}
