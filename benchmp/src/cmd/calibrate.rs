//! `benchmp calibrate`: measures the interval and overheads once, stores them in the cache
//! every tool reads, and prints them as lmbench's `ENOUGH`, `TIMING_O` and `LOOP_O` exports.

use anyhow::Result;
use benchmp::cli::TimingArgs;

/// Runs `benchmp calibrate`: measures (never reads the cache), caches, prints exports or JSON.
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
        if let Some(p) = &c.cache_file {
            benchmp::errln!(
                "benchmp: calibrated in {:.2} s; cached in {}",
                c.measured_ns as f64 / 1e9,
                p.display()
            );
        }
    }
    Ok(0)
}
