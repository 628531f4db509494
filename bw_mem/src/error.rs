//! Why bw_mem's library refused or failed: one type for every public function, each cause
//! kept whole so the exit status its class names survives ([`Error`]'s [`ExitStatus`]).

use benchmp::error::{EXIT_FAILED, EXIT_USAGE, ExitStatus};

/// What a bw_mem library call failed with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad arguments (exit status 2).
    #[error(transparent)]
    Usage(#[from] benchmp::Usage),
    /// A size argument that is not a size (exit status 2).
    #[error(transparent)]
    Size(#[from] benchmp::size::SizeError),
    /// A size this address space cannot map (exit status 1: the machine's limit).
    #[error("size {0} bytes does not fit in this address space")]
    TooLarge(u64),
    /// The measurement failed: its status is the framework's ([`benchmp::cli::exit_code_of`]).
    #[error(transparent)]
    Run(#[from] benchmp::Error),
}

impl ExitStatus for Error {
    fn exit_status(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::Size(_) => EXIT_USAGE,
            Error::TooLarge(_) => EXIT_FAILED,
            Error::Run(e) => benchmp::cli::exit_code_of(e),
        }
    }
}
