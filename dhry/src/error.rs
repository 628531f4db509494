//! Why dhry's library refused or failed: clock reads, invalid plans, and the runs it starts;
//! one type for every public function, each cause kept whole so the exit status its class
//! names survives ([`Error`]'s [`benchmp::error::ExitStatus`]).

/// Errors of the library: clock reads, invalid plans, and the runs it starts.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` failed.
    #[error("cannot read the thread CPU clock")]
    ThreadCpuClock {
        /// The system error.
        #[source]
        source: nix::Error,
    },
    /// A plan asked for zero runs.
    #[error("the number of runs must be at least 1")]
    ZeroRuns,
    /// A plan asked for a target time that is zero or too long.
    #[error("invalid target time {seconds} s")]
    InvalidTarget {
        /// The target asked for.
        seconds: f64,
    },
    /// The parent could not be pinned to a CPU to size the run count there.
    #[error("sizing the run count")]
    Sizing {
        /// Why the pin failed.
        #[source]
        source: benchmp::sys::affinity::AffinityError,
    },
    /// The probe that sizes the run count failed.
    #[error("sizing the run count")]
    Probe {
        /// Why.
        #[source]
        source: Box<Error>,
    },
    /// A child's result holds no timed loop.
    #[error(transparent)]
    Untimed(#[from] benchmp::run::Untimed),
    /// The measurement failed: its status is the framework's.
    #[error(transparent)]
    Run(#[from] benchmp::Error),
}

impl benchmp::error::ExitStatus for Error {
    fn exit_status(&self) -> i32 {
        match self {
            Error::ZeroRuns | Error::InvalidTarget { .. } => benchmp::EXIT_USAGE,
            Error::Run(e) => benchmp::cli::exit_code_of(e),
            Error::Probe { source } => source.exit_status(),
            Error::ThreadCpuClock { .. } | Error::Sizing { .. } | Error::Untimed(_) => {
                benchmp::EXIT_FAILED
            }
        }
    }
}
