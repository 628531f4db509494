//! socbench `dto`: functional checks and A/B latency comparison of memory-operation
//! implementations (libc, a shared library such as Intel's libdto, built-in kernels), after the
//! functional and performance tests of Intel's DTO test suite. See README.md.

pub mod bench;
pub mod check;
pub mod checkrun;
pub mod cli;
pub mod env;
pub mod error;
pub mod freq;
pub mod impls;
pub mod kernels;
pub mod measure;
pub mod paired;
pub mod plan;
pub mod report;
pub mod run;
pub mod suite;
pub mod sys;
pub mod text;

pub use error::Error;
