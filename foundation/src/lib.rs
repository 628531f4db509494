//! What every socbench binary stands on, whatever it measures or traces: the console
//! (`outln!`, `errln!`), errors and exit statuses, bounded reads of files that may be FIFOs or
//! devices (`input`), staged writes that never replace a complete file with a partial one
//! (`output`), the claim registry through which a setting a run changes is written back after
//! its owner dies (`claim`, `restore`), the start-up checks (`startup`: SIGXFSZ ignored, closed
//! standard streams found) and the command-line contract's spec (`contract`).
#![deny(unsafe_code)]

pub mod claim;
pub mod console;
pub mod contract;
pub mod error;
pub mod input;
pub mod output;
pub mod restore;
pub mod startup;
mod sys;

pub use error::exit_code;
