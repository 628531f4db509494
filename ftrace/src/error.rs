//! The crate's error type; each variant names the file involved and says what to do.

use std::io;
use std::path::PathBuf;

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

/// Everything the library reports.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// tracefs is supported but not mounted anywhere we looked.
    #[error(
        "no tracefs with trace_marker in /proc/mounts, {tried}: mount it with `mount -t tracefs nodev /sys/kernel/tracing` or pass --mount"
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
        path.display()
    )]
    NotRoot {
        /// The file that could not be changed.
        path: PathBuf,
    },
    /// An `--event GROUP/NAME` that this kernel does not have.
    #[error(
        "{}: no event {event} on this kernel; list them with `cat {}`",
        path.display(),
        available.display()
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
    #[error("{}: the kernel refused {kb} KiB per CPU ({source}): ask for a smaller --buffer-kb", path.display())]
    BufferRefused {
        /// tracefs `buffer_size_kb`.
        path: PathBuf,
        /// The size asked, KiB per CPU.
        kb: u64,
        /// What the write returned.
        source: io::Error,
    },
    /// A `--clock` that this kernel does not offer.
    #[error("{}: no trace clock {clock:?} here; pick one listed in that file", path.display())]
    NoSuchClock {
        /// The clock asked.
        clock: String,
        /// tracefs `trace_clock`.
        path: PathBuf,
    },
    /// An output file that cannot be written.
    #[error("{}: cannot write: {source}", path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The recorded command could not be started.
    #[error("cannot run {command}: {source}")]
    Spawn {
        /// Program name.
        command: String,
        /// What exec returned.
        source: io::Error,
    },
    /// Any other failed file operation.
    #[error("{}: cannot {action}: {source}", path.display())]
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
            | Error::Spawn { .. } => exit_code::USAGE,
        }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
