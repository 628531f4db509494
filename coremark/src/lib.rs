//! socbench `coremark`: a CoreMark-compatible workload in Rust.
//!
//! It reproduces CoreMark 1.0's four workloads (linked list with find and merge sort,
//! matrix operations, a state machine over generated text, CRC-16) with the reference's
//! data derivation, integer widths and order of side effects, so its CRCs match the
//! reference's known-good values for every standard seed set. Figures it produces are
//! CoreMark-compatible figures, not CoreMark scores (CoreMark is an EEMBC trademark).
//!
//! Measurement ([`Context`], [`timing`], [`validate()`]) is kept apart from output
//! ([`report`]); [`parallel`] runs one context per forked, pinned process through benchmp.
//!
//! ```
//! use coremark::{Context, Seeds, validate};
//! let mut ctx = Context::new(Seeds::VALIDATION, 2000)?;
//! let result = ctx.iterate(1);
//! assert!(validate(ctx.seedcrc(), &result).passed());
//! # Ok::<(), coremark::Error>(())
//! ```

#![deny(unsafe_code)]

mod calc;
pub mod crc;
pub mod error;
mod hex;
mod iterate;
mod list;
mod matrix;
pub mod parallel;
pub mod parse;
pub mod report;
pub mod run;
mod state;
pub mod suite;
pub mod text;
pub mod timing;
pub mod validate;

pub use error::Error;
pub use iterate::{
    Context, DEFAULT_TOTAL_SIZE, IterResult, MAX_TOTAL_SIZE, MIN_SIZE_PER_ALGORITHM, NUM_ALGORITHMS,
};
pub use validate::{KnownRun, Validation, seedcrc, validate};

/// The three seeds of a run. Seeds drive all generated data; use values only known at run
/// time so the compiler cannot precompute the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Seeds {
    /// Drives the list data, matrix and state input, and the state corruption.
    pub seed1: i16,
    /// Drives the matrix data and undoes the state corruption (equal to seed1 for
    /// repeatable iterations).
    pub seed2: i16,
    /// Number of list finds per list workload call.
    pub seed3: i16,
}

impl Seeds {
    /// The performance run: 0, 0, 0x66.
    pub const PERFORMANCE: Seeds = Seeds::new(0, 0, 0x66);
    /// The validation run: 0x3415, 0x3415, 0x66.
    pub const VALIDATION: Seeds = Seeds::new(0x3415, 0x3415, 0x66);
    /// The profile-generation run: 8, 8, 8 (with a 1200-byte total).
    pub const PROFILE: Seeds = Seeds::new(8, 8, 8);

    /// Seeds used exactly as given.
    pub const fn new(seed1: i16, seed2: i16, seed3: i16) -> Seeds {
        Seeds {
            seed1,
            seed2,
            seed3,
        }
    }

    /// Seeds as the reference reads them from its command line: 0,0,0 selects the
    /// performance run and 1,0,0 the validation run; anything else is used as given.
    pub fn from_args(seed1: i16, seed2: i16, seed3: i16) -> Seeds {
        match (seed1, seed2, seed3) {
            (0, 0, 0) => Seeds::PERFORMANCE,
            (1, 0, 0) => Seeds::VALIDATION,
            _ => Seeds::new(seed1, seed2, seed3),
        }
    }
}

#[cfg(test)]
mod known_values;
