//! The core clock that turns nanoseconds into cycles in the summary: `--mhz`, else cpufreq's
//! `cpuinfo_max_freq`, else the `/proc/cpuinfo` estimate. It lives in [`benchmp::freq`],
//! shared with dhry; these names keep the crate's own paths working.

pub use benchmp::freq::{ClockSource, CoreClock as Clock, clock_for, cpuinfo_mhz};
