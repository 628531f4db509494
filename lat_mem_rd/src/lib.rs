//! socbench `lat_mem_rd`: memory load latency as a function of array size, lmbench-compatible.
//!
//! A pointer chase (`p = *p`, 100 dependent loads per pass) walks a ring laid out over an
//! array of each size of lmbench's grid (512 bytes up to `len`), sequentially or in lmbench's
//! random "thrash" order, and reports nanoseconds per load: the load-to-use latency of the
//! level of the memory hierarchy that holds the array. It reproduces lmbench's `lat_mem_rd`
//! (sweep, chains, interval floor, minimum rule, output) and adds what a SoC engineer needs:
//! a choice of page size, per-core curves through benchmp's pinned children, a summary that
//! reads the plateaus off the curve, and counts predicted from one size to the next so a sweep
//! costs a fraction of its recalibrated time. See README.md.
#![deny(unsafe_code)]

pub mod c2c;
pub mod chain;
pub mod cli;
pub mod config;
pub mod curve;
pub mod error;
pub mod kernels;
pub mod loaded;
pub mod measure;
pub mod report;
pub mod suite;
pub mod summary;
pub mod sweep;
pub mod text;

pub use error::Error;
