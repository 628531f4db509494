//! Why dto's library refused or failed: one type for every public function, each cause kept
//! whole so the exit status its class names survives ([`Error`]'s [`ExitStatus`]). What a
//! child builds (a round, a check) fails with the framework's own errors instead
//! ([`benchmp::BuildError`]), which the child reports with their status.

use std::path::PathBuf;

use benchmp::error::{EXIT_FAILED, EXIT_UNSUPPORTED, EXIT_USAGE, ExitStatus};

/// What a dto library call failed with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad arguments or settings (exit status 2).
    #[error(transparent)]
    Usage(#[from] benchmp::Usage),
    /// Not possible on this machine (exit status 3).
    #[error(transparent)]
    Unsupported(#[from] benchmp::Unsupported),
    /// An implementation refused before anything ran: a library that is not a file (2), a
    /// kernel this CPU lacks (3).
    #[error(transparent)]
    Refused(#[from] benchmp::error::Refused),
    /// A malformed LMBENCH_SCHED (exit status 2).
    #[error(transparent)]
    Placement(#[from] benchmp::sched::PlacementError),
    /// The measurement failed: its status is the framework's.
    #[error(transparent)]
    Run(#[from] benchmp::Error),
    /// A child's result holds no timed interval.
    #[error(transparent)]
    Untimed(#[from] benchmp::run::Untimed),
    /// The report or the check's result could not be rendered or written.
    #[error(transparent)]
    Output(#[from] benchmp::output::OutputError),
    /// The check's result could not be rendered as JSON.
    #[error("cannot render the JSON")]
    Json(#[from] serde_json::Error),
    /// Variables set for the children while this process runs threads.
    #[error("environment variables can only be set while single-threaded")]
    Threaded,
    /// What failed, and where: a round, a cell, a function's check.
    #[error("{what}")]
    At {
        /// The step, for people.
        what: String,
        /// Why it failed.
        #[source]
        source: Box<Error>,
    },
    /// A child measured but its round or calls failed inside (a page fault that could not be
    /// injected), or it brought back no samples.
    #[error("{what}: {child}: {why}")]
    Child {
        /// The measurement.
        what: String,
        /// Which child.
        child: String,
        /// What went wrong.
        why: String,
    },
    /// An implementation gave wrong results or died while checked.
    #[error("check failed: {0}")]
    CheckFailed(String),
    /// A measurement that gave no samples to analyse.
    #[error("{0}: no samples")]
    NoSamples(String),
    /// The report was made without dto's section (a bug).
    #[error("the report lacks dto's results")]
    NoResults,
    /// A measurement that reported no child (a bug).
    #[error("no child reported")]
    NoChild,
    /// A round's buffer could not be mapped (in the child, whose status its cause decides).
    #[error("{what} buffer")]
    Buffer {
        /// Which buffer.
        what: &'static str,
        /// Why.
        #[source]
        source: benchmp::sys::mem::MemError,
    },
    /// A thread of the check could not have its buffers (the process's memory limit).
    #[error(
        "the check's buffers for thread {thread} of {threads} ({bytes} bytes) cannot be allocated"
    )]
    CheckBuffers {
        /// The thread.
        thread: usize,
        /// Threads asked for.
        threads: usize,
        /// Bytes it needed.
        bytes: usize,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A thread of the check could not start (the process's thread limit).
    #[error("thread {thread} of {threads} of the check cannot start")]
    CheckThread {
        /// The thread.
        thread: usize,
        /// Threads asked for.
        threads: usize,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// distributions.csv could not be written.
    #[error("writing {}", path.display())]
    Distributions {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// `source` with the step it failed at.
    pub fn at(what: impl Into<String>, source: impl Into<Error>) -> Error {
        Error::At {
            what: what.into(),
            source: Box::new(source.into()),
        }
    }
}

impl ExitStatus for Error {
    fn exit_status(&self) -> i32 {
        use benchmp::cli::exit_code_of;
        match self {
            Error::Usage(_) => EXIT_USAGE,
            Error::Unsupported(_) => EXIT_UNSUPPORTED,
            Error::Refused(e) => e.exit_status(),
            Error::Placement(e) => exit_code_of(e),
            Error::Run(e) => exit_code_of(e),
            Error::Output(e) => exit_code_of(e),
            Error::At { source, .. } => source.exit_status(),
            Error::Buffer { source, .. } => exit_code_of(source),
            Error::Untimed(_)
            | Error::Json(_)
            | Error::Threaded
            | Error::Child { .. }
            | Error::CheckFailed(_)
            | Error::NoSamples(_)
            | Error::NoResults
            | Error::NoChild
            | Error::CheckBuffers { .. }
            | Error::CheckThread { .. }
            | Error::Distributions { .. } => EXIT_FAILED,
        }
    }
}
