//! benchmp: the timing framework of socbench, lmbench's `benchmp` done for SoC work.
//!
//! It calibrates the interval length as lmbench's get_enough does (and caches it), subtracts
//! timing and loop overheads, forks one pinned child per parallel copy and talks to them over
//! pipes (ready, go, done, result, exit), keeps lmbench's sample acceptance and median rules,
//! reads CPU clusters and caches from sysfs, and aggregates per-core results per cluster
//! instead of lmbench's median. Tools call [`Session`]; exporters turn its [`Report`] into
//! JSON, CSV or the tool's lmbench-compatible text.
//!
//! ```no_run
//! use benchmp::{Benchmark, NoData, Session, Spec};
//! struct Spin;
//! impl Benchmark for Spin {
//!     type Sample = ();
//!     type Child = ();
//!     fn run(&mut self, n: u64) -> u64 {
//!         (0..n).fold(0, |a, i| std::hint::black_box(a ^ i))
//!     }
//! }
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let placement = benchmp::cli::PlacementArgs::default();
//! let timing = benchmp::cli::TimingArgs::default();
//! let mut s = Session::<NoData>::start("spin", &placement, &timing, None)?;
//! s.measure(Spec::rate("spin", 1.0, "it/s", ()), |_child| Ok(Spin))?;
//! # Ok(()) }
//! ```

pub mod aggregate;
pub mod beside;
pub mod cli;
pub mod counters;
pub mod cpulist;
pub mod error;
pub mod export;
pub mod files;
pub mod format;
pub mod freq;
pub mod host;
pub mod input;
pub mod kernels;
pub mod markdown;
pub mod number;
pub mod output;
pub mod power;
pub mod progress;
pub mod quality;
pub mod report;
pub mod run;
pub mod sched;
pub mod schema;
pub mod session;
pub mod size;
pub mod stats;
pub mod suite;
pub mod sys;
pub mod sysfs;
#[cfg(feature = "testing")]
pub mod testing;
pub mod timing;
pub mod tool;
pub mod topology;

pub use aggregate::{AggregateMode, Rule};
pub use error::{EXIT_FAILED, EXIT_OK, EXIT_UNSUPPORTED, EXIT_USAGE, Unsupported, Usage};
pub use export::emit;
pub use foundation::console;
pub use foundation::errln;
pub use report::{AnyTool, Measurement, NoData, Report, ToolData};
pub use run::{Benchmark, BuildError, ChildInfo, Data, Error, Iterations};
pub use schema::Metric;
pub use session::{Loads, Session, Spec};
pub use size::parse_size;
pub use sys::mem::{Buffer, Pages};
