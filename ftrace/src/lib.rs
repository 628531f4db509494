//! Trace markers for socbench: Android atrace-format events written to tracefs
//! `trace_marker`, a `tracing` layer that turns spans into them, and the capture and
//! conversion behind the `ftrace` binary.
//!
//! Markers let a systrace or Perfetto capture show what a benchmark was doing (calibration,
//! warmup, each repetition of each pinned child) next to what the scheduler and the frequency
//! governor did meanwhile. A marker costs one write(2), about a microsecond when tracing and a
//! failed syscall when not, so markers go at phase boundaries, never inside a timed interval.
//!
//! ```no_run
//! ftrace::init(); // open trace_marker before forking children
//! {
//!     let _rep = ftrace::scope("rep child=0 cpu=2");
//!     ftrace::counter("mb_per_s", 11_500);
//! }
//! ```
//!
//! Without tracefs (or without permission to write `trace_marker`) the first use prints one
//! warning and every call does nothing, so benchmarks run unchanged.
#![deny(unsafe_code)]

pub mod bench;
pub mod convert;
pub mod error;
pub mod layer;
pub mod marker;
pub mod record;
pub mod script;
mod sys;
pub mod tracefs;

pub use error::{Error, Result, exit_code};
pub use layer::MarkerLayer;
pub use marker::{Kind, MAX_RECORD, Marker, Scope};
pub use sys::die_with_parent;

/// Opens the process-wide marker writer now; returns whether markers will be written.
pub fn init() -> bool {
    Marker::global().is_enabled()
}

/// `B|pid|name` on the process-wide writer.
pub fn begin(name: &str) {
    Marker::global().begin(name);
}

/// `E|pid` on the process-wide writer.
pub fn end() {
    Marker::global().end();
}

/// `C|pid|name|value` on the process-wide writer.
pub fn counter(name: &str, value: i64) {
    Marker::global().counter(name, value);
}

/// `I|pid|name` on the process-wide writer.
pub fn instant(name: &str) {
    Marker::global().instant(name);
}

/// Begins slice `name` on the process-wide writer; it ends when the guard drops.
pub fn scope(name: &str) -> Scope<'static> {
    Marker::global().scope(name)
}

/// The layer on the process-wide writer; see [`mod@layer`] for its conventions.
pub fn layer() -> MarkerLayer {
    MarkerLayer::new()
}
