//! Why lat_mem_rd's library refused or failed: one type for every public function, each
//! cause kept whole so the exit status its class names survives ([`Error`]'s [`ExitStatus`]).

use benchmp::error::{EXIT_FAILED, EXIT_USAGE, ExitStatus};
use benchmp::sys::mem::MemError;

use crate::kernels::OutOfBounds;

/// What a lat_mem_rd library call failed with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad arguments (exit status 2).
    #[error(transparent)]
    Usage(#[from] benchmp::Usage),
    /// A kernel this machine cannot run, or a request refused before anything ran.
    #[error(transparent)]
    Refused(#[from] benchmp::error::Refused),
    /// Memory the machine does not have, or cannot map as asked.
    #[error(transparent)]
    Memory(#[from] MemError),
    /// A child could not map its chain's buffer.
    #[error("cannot allocate {size} for the chain")]
    Alloc {
        /// The buffer's size, for people.
        size: String,
        /// Why.
        #[source]
        source: MemError,
    },
    /// A chain that leaves its buffer (a bug, caught before it is chased).
    #[error(transparent)]
    Chain(#[from] OutOfBounds),
    /// The text result could not be written: it can no longer be delivered.
    #[error("cannot write the result to {stream}")]
    Write {
        /// The stream's name.
        stream: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The report could not be rendered or written.
    #[error(transparent)]
    Output(#[from] benchmp::output::OutputError),
    /// The measurement failed: its status is the framework's.
    #[error(transparent)]
    Run(#[from] benchmp::Error),
}

impl ExitStatus for Error {
    fn exit_status(&self) -> i32 {
        use benchmp::cli::exit_code_of;
        match self {
            Error::Usage(_) => EXIT_USAGE,
            Error::Refused(e) => e.exit_status(),
            Error::Memory(e) | Error::Alloc { source: e, .. } => exit_code_of(e),
            Error::Output(e) => exit_code_of(e),
            Error::Run(e) => exit_code_of(e),
            Error::Chain(_) | Error::Write { .. } => EXIT_FAILED,
        }
    }
}
