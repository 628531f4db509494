//! Reading ftrace text traces and turning them into Chrome trace-event JSON.
//!
//! The input is what tracefs `trace` prints (and what `ftrace record` saves): a `#` header,
//! then one event per line,
//!
//! ```text
//!           bw_mem-1234    (   1234) [001] ...1.   208.091172: tracing_mark_write: B|1234|rep cpu=1
//!           bw_mem-1234    [001] ....   208.091172: tracing_mark_write: E|1234
//! ```
//!
//! with or without the `(tgid)` column and the flags column. Marker lines (`tracing_mark_write`,
//! or `print` on other kernels) are read as atrace records; `sched_switch` and `cpu_frequency`
//! lines become per-CPU tracks; other lines are skipped.
//!
//! The output opens in ui.perfetto.dev and chrome://tracing: `B`/`E` slices on the track of
//! the writing thread (pid from the marker, tid from the line), `C` counters, `i` instants,
//! and on a pseudo-process "CPUs" one track per CPU with the running task as `X` slices and the
//! CPU frequency as a counter. Timestamps are microseconds from the trace clock. The conversion
//! is faithful: an unmatched `E` stays unmatched so that [`validate`] can report it.

mod chrome;
mod parse;
mod validate;

pub use chrome::{CPU_TRACKS_PID, ChromeEvent, ChromeTrace, Conversion, convert, cpu_track_tid};
pub use parse::{Atrace, Line, marker_text, parse_atrace, parse_line};
pub use validate::{Slice, Validation, validate, validate_json};
