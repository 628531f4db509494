//! Every libc/nix call the framework makes, behind small safe functions.
//!
//! Keeping system calls here keeps the measurement and statistics code pure and testable, and
//! keeps `unsafe` in one audited place (each block carries a `// SAFETY:` note).

pub mod affinity;
pub mod clock;
pub mod mem;
pub mod perf;
pub mod process;
pub mod unnamed;
pub mod usage;
