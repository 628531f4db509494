//! Why coremark's library refused or failed: a context's parameters (bad input) and the runs
//! it starts; one type for every public function, each cause kept whole so the exit status
//! its class names survives ([`Error`]'s [`benchmp::error::ExitStatus`]).

/// Errors of the library: building a context or parsing its parameters (bad input), and the
/// runs it starts.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The measurement failed: its status is the framework's.
    #[error(transparent)]
    Run(#[from] benchmp::Error),
    /// A child's result holds no timed run.
    #[error(transparent)]
    Untimed(#[from] benchmp::run::Untimed),
    /// The total data size leaves less than the minimum per workload.
    #[error("data size {total} bytes is too small: at least {min} bytes are needed")]
    SizeTooSmall {
        /// Requested total size in bytes.
        total: u64,
        /// Smallest accepted total size in bytes.
        min: u32,
    },
    /// The total data size is above the supported maximum.
    #[error("data size {total} bytes is too large: at most {max} bytes are supported")]
    SizeTooLarge {
        /// Requested total size in bytes.
        total: u64,
        /// Largest accepted total size in bytes.
        max: u32,
    },
    /// Text that is not a number in the reference's syntax.
    #[error(
        "invalid number {text:?}: expected decimal or 0x-hexadecimal digits, optionally followed by K or M"
    )]
    InvalidNumber {
        /// The text given.
        text: String,
    },
    /// A seed that does not fit in 16 bits.
    #[error("seed {text:?} does not fit in 16 bits (-32768 to 65535)")]
    SeedOutOfRange {
        /// The text given.
        text: String,
    },
    /// Seeds not given as three comma-separated numbers.
    #[error("seeds {text:?} must be three numbers separated by commas, e.g. 0,0,0x66")]
    SeedCount {
        /// The text given.
        text: String,
    },
    /// An iteration count that is negative or does not fit in 32 bits.
    #[error("invalid iteration count {text:?}: expected a whole number from 0 to 4294967295")]
    InvalidIterations {
        /// The text given.
        text: String,
    },
    /// A size that is negative or does not fit in 32 bits.
    #[error("invalid data size {text:?}: expected a byte count from 0 to 4294967295")]
    InvalidSize {
        /// The text given.
        text: String,
    },
    /// The parent could not be pinned to a CPU to size the iteration count there.
    #[error("sizing the iteration count")]
    Sizing {
        /// Why the pin failed.
        #[source]
        source: benchmp::sys::affinity::AffinityError,
    },
    /// A child ran more iterations than a context counts (32 bits).
    #[error("{child}: {iterations} iterations do not fit")]
    TooManyIterations {
        /// Which child.
        child: String,
        /// Its count.
        iterations: u64,
    },
}

impl benchmp::error::ExitStatus for Error {
    fn exit_status(&self) -> i32 {
        match self {
            Error::Run(e) => benchmp::cli::exit_code_of(e),
            Error::Sizing { .. } | Error::TooManyIterations { .. } | Error::Untimed(_) => {
                benchmp::EXIT_FAILED
            }
            _ => benchmp::EXIT_USAGE,
        }
    }
}
