//! `benchmp calibrate`: measures the interval and overheads once, stores them in the cache
//! every tool reads, and prints them as lmbench's `ENOUGH`, `TIMING_O` and `LOOP_O` exports.

use anyhow::Result;
use benchmp::cli::TimingArgs;

/// Runs `benchmp calibrate`: measures (never reads the cache), caches, prints exports or JSON;
/// a cache that cannot be written is exit status 1.
pub fn run(enough: Option<u64>, calibration: Option<String>, json: bool) -> Result<i32> {
    let timing = TimingArgs {
        enough,
        calibration,
        recalibrate: true,
        ..TimingArgs::default()
    };
    let req = benchmp::timing::CalibrationRequest {
        enough_us: timing.enough,
        cache: timing.cache_file()?,
        recalibrate: true,
    };
    let c = benchmp::timing::calibrate(&req)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        outln!("ENOUGH={}", c.enough_us);
        outln!("TIMING_O={}", c.timing_overhead_ns / 1000.0);
        outln!("LOOP_O={}", c.loop_overhead_ns / 1000.0);
    }
    // "cached" only when it was: a cache that could not be written (a full disk, a link or a
    // FIFO in its place) fails the command, whose purpose it was, after the values are out.
    let secs = c.measured_ns as f64 / 1e9;
    match (&c.cache_file, &c.cache_problem) {
        (Some(p), Some(why)) => anyhow::bail!(
            "calibrated in {secs:.2} s, but not cached: {}: {why}",
            foundation::error::shown(p)
        ),
        (Some(p), None) if c.cache_written => {
            benchmp::errln!(
                "benchmp: calibrated in {secs:.2} s; cached in {}",
                foundation::error::shown(p)
            )
        }
        // Only a measured interval is cached: with --enough (or ENOUGH) nothing was stored.
        (Some(p), None) => benchmp::errln!(
            "benchmp: calibrated in {secs:.2} s; {} left as it was (only a measured interval is cached, and this one was given)",
            foundation::error::shown(p)
        ),
        (None, _) => {}
    }
    Ok(0)
}
