//! Calibration: the interval length (lmbench's ENOUGH), the timing overhead and the loop
//! overhead, measured as lmbench does, overridable by its environment variables, and cached.
//!
//! lmbench spends most of a short run here (seconds to half a minute on a noisy VM, spec
//! benchmp.md §4.5), every time a tool starts. socbench measures the same three numbers with a
//! nanosecond clock, stores them in a per-machine cache file, and reuses them on the next run;
//! `ENOUGH`, `TIMING_O` and `LOOP_O` still take precedence as in lmbench.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sys::clock::{now_ns, resolution_ns};

/// lmbench's candidate intervals in µs, tried shortest first.
pub const CANDIDATES_US: [u64; 4] = [5_000, 10_000, 50_000, 100_000];
/// Interval used when no candidate passes the linearity test (lmbench's SHORT), µs.
pub const FALLBACK_US: u64 = 1_000_000;
/// How long a cached calibration stays valid, seconds.
pub const CACHE_MAX_AGE_S: u64 = 7 * 24 * 3600;

/// Where a calibration value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueSource {
    /// Measured in this process.
    Measured,
    /// Read from the cache file.
    Cache,
    /// Set by an environment variable (ENOUGH, TIMING_O, LOOP_O).
    Env,
    /// Set by a command-line option.
    Option,
    /// Not needed: the run only had fixed-count measurements, which use no interval.
    NotNeeded,
}

/// The calibration every timed interval depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Minimum length of a timed interval, µs (lmbench's ENOUGH).
    pub enough_us: u64,
    /// Cost of reading the clock once, ns; subtracted from every interval.
    pub timing_overhead_ns: f64,
    /// Per-iteration cost of an empty harness loop, ns; subtracted n times per interval.
    pub loop_overhead_ns: f64,
    /// CLOCK_MONOTONIC resolution, ns.
    pub clock_resolution_ns: u64,
    /// Origin of `enough_us`.
    pub enough_source: ValueSource,
    /// How `enough_us` was chosen.
    pub enough_method: EnoughMethod,
    /// Origin of `timing_overhead_ns`.
    pub timing_overhead_source: ValueSource,
    /// Origin of `loop_overhead_ns`.
    pub loop_overhead_source: ValueSource,
    /// Wall time spent measuring in this process, ns (0 when nothing was measured).
    pub measured_ns: u64,
    /// Cache file read or written, if any.
    pub cache_file: Option<PathBuf>,
    /// Why the cache file was not read or not written (a FIFO or a link in its place, a full
    /// disk); `None` when it was used as asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_problem: Option<String>,
    /// True when this process wrote the cache (a measured interval, stored whole).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache_written: bool,
}

/// A calibration value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalibrationError {
    /// The cache file given cannot serve as one.
    #[error("{from} {}: {reason}", .path.display())]
    BadCache {
        /// Where the path came from (`--calibration`, `BENCHMP_CALIBRATION`).
        from: &'static str,
        /// The path.
        path: PathBuf,
        /// Why it cannot be the cache.
        reason: String,
    },
    /// An environment variable does not hold a number.
    #[error("{name}='{value}' is not {what}")]
    BadEnv {
        /// Variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it should be.
        what: &'static str,
    },
}

impl crate::error::ExitStatus for CalibrationError {
    fn exit_status(&self) -> i32 {
        crate::error::EXIT_USAGE
    }
}

/// Overrides and cache settings, from options and the environment.
#[derive(Debug, Clone, Default)]
pub struct CalibrationRequest {
    /// `--enough` in µs.
    pub enough_us: Option<u64>,
    /// Cache file; `None` disables the cache.
    pub cache: Option<PathBuf>,
    /// Ignore what the cache holds (but refresh it).
    pub recalibrate: bool,
}

/// What is stored in the cache file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct CacheEntry {
    machine: String,
    created_unix: u64,
    enough_us: u64,
    enough_method: EnoughMethod,
    timing_overhead_ns: f64,
    loop_overhead_ns: f64,
}

/// TIMING_O if set, else a fresh measurement of one clock read (for fixed-count runs, which
/// need no interval): (ns, source).
pub fn timing_overhead_only() -> Result<(f64, ValueSource), CalibrationError> {
    Ok(match env_micros("TIMING_O")? {
        Some(t) => (t * 1000.0, ValueSource::Env),
        None => (timing_overhead(), ValueSource::Measured),
    })
}

/// Longest interval, warmup or timed, in µs (an hour).
pub const MAX_MICROS: u64 = 3_600_000_000;

/// Reads ENOUGH (a whole number of µs from 1 to an hour).
pub fn env_enough() -> Result<Option<u64>, CalibrationError> {
    match std::env::var("ENOUGH") {
        Err(_) => Ok(None),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(n) if n > 0 && n <= MAX_MICROS => Ok(Some(n)),
            _ => Err(CalibrationError::BadEnv {
                name: "ENOUGH",
                value: v,
                what: "a whole number of microseconds from 1 to 3600000000",
            }),
        },
    }
}

/// Checks ENOUGH, TIMING_O and LOOP_O without using them.
pub fn check_env() -> Result<(), CalibrationError> {
    env_enough()?;
    env_micros("TIMING_O")?;
    env_micros("LOOP_O")?;
    Ok(())
}

/// Reads TIMING_O or LOOP_O (µs, from 0 to a second).
fn env_micros(name: &'static str) -> Result<Option<f64>, CalibrationError> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && (0.0..=1e6).contains(&x) => Ok(Some(x)),
            _ => Err(CalibrationError::BadEnv {
                name,
                value: v,
                what: "a number of microseconds from 0 to 1000000",
            }),
        },
    }
}

/// Checks that `path` can be the calibration cache: not a folder, not a file holding anything
/// but a cache (it would be overwritten), in a folder that exists or can be made.
pub fn check_cache_file(path: &Path, from: &'static str) -> Result<PathBuf, CalibrationError> {
    let bad = |reason: String| CalibrationError::BadCache {
        from,
        path: path.to_path_buf(),
        reason,
    };
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(bad(
                "is a folder; give a file path for the calibration cache, or off".into(),
            ));
        }
        Ok(m) if !m.is_file() => {
            return Err(bad(
                "is not a regular file; give a file path for the calibration cache, or off".into(),
            ));
        }
        Ok(m) => {
            let text = crate::input::read_bytes(path, MAX_CACHE_BYTES)
                .map_err(|e| bad(format!("cannot be read: {e}")))?;
            if m.len() > 0 && serde_json::from_slice::<CacheEntry>(&text).is_err() {
                return Err(bad(
                    "holds something other than a socbench calibration cache; refusing to overwrite it (remove it, or give another path, or off)".into(),
                ));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
            if let Some(dir) = dir {
                std::fs::create_dir_all(dir)
                    .map_err(|e| bad(format!("its folder cannot be made: {e}")))?;
            }
        }
        Err(e) => return Err(bad(format!("cannot be checked: {e}"))),
    }
    Ok(path.to_path_buf())
}

/// A string that changes when the machine does: host, kernel, CPU model and online CPUs.
pub fn machine_key() -> String {
    let uts = nix::sys::utsname::uname().ok();
    let part = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
        uts.as_ref()
            .map(|u| f(u).to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let online =
        crate::sysfs::read_attr(Path::new("/sys/devices/system/cpu/online")).unwrap_or_default();
    format!(
        "{}|{}|{}|{}|{}",
        part(|u| u.nodename()),
        part(|u| u.release()),
        part(|u| u.machine()),
        crate::host::cpu_model(),
        online.trim()
    )
}

/// The most a calibration cache file may hold (it holds a few hundred bytes).
pub const MAX_CACHE_BYTES: u64 = 64 << 10;

/// Default cache file: `$BENCHMP_CACHE_DIR`, `$XDG_CACHE_HOME/socbench`, `$HOME/.cache/socbench`,
/// else a folder of this user's in the temp folder (`socbench-UID`, or `/data/local/tmp` on
/// Android), which no other user can plant anything in.
pub fn default_cache_file() -> PathBuf {
    let dir = if let Some(d) = std::env::var_os("BENCHMP_CACHE_DIR") {
        PathBuf::from(d)
    } else if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        PathBuf::from(d).join("socbench")
    } else if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty() && h != "/") {
        PathBuf::from(h).join(".cache/socbench")
    } else if Path::new("/data/local/tmp").is_dir() {
        PathBuf::from("/data/local/tmp/socbench")
    } else {
        std::env::temp_dir().join(format!("socbench-{}", nix::unistd::geteuid()))
    };
    dir.join("calibration.json")
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The cache's fresh entry for this machine, if any; `Err` says why the file cannot be the
/// cache (a FIFO, a device, over [`MAX_CACHE_BYTES`]): read as a regular file, not blocking.
fn load_cache(path: &Path) -> Result<Option<CacheEntry>, String> {
    let text = match crate::input::read_text_if_there(path, MAX_CACHE_BYTES) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(e) => {
            // The note names the file already.
            let text = e.to_string();
            let prefix = format!("{}: ", foundation::error::shown(path));
            return Err(format!(
                "not read: {}",
                text.strip_prefix(&prefix).unwrap_or(&text)
            ));
        }
    };
    let Ok(e) = serde_json::from_str::<CacheEntry>(&text) else {
        return Ok(None);
    };
    let fresh = unix_now().saturating_sub(e.created_unix) < CACHE_MAX_AGE_S;
    Ok((e.machine == machine_key() && fresh && e.enough_us > 0).then_some(e))
}

/// Makes the cache's folder when it is missing: private (0700) when made here. A folder in
/// the temp folder must be this user's own and closed to others, or nothing is cached there
/// (another user could have made it to plant links or rewrite the calibration).
fn cache_folder(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let shared = dir.starts_with(std::env::temp_dir()) && dir != std::env::temp_dir();
    if shared {
        let m = std::fs::symlink_metadata(dir)?;
        let uid = nix::unistd::geteuid().as_raw();
        if !m.is_dir() || m.uid() != uid || m.permissions().mode() & 0o022 != 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not a folder of this user's closed to others",
                    dir.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Writes the cache whole or not at all ([`foundation::output::OutputFile::create_regular`]): an
/// unnamed file in its folder renamed over it once complete, so there is no temporary name to
/// plant a link at, nothing is written through a link or into a FIFO at the cache's own path,
/// and a full disk leaves the earlier cache and no partial file.
fn store_cache(path: &Path, e: &CacheEntry) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        cache_folder(dir)?;
    }
    let text = serde_json::to_string_pretty(e).map_err(std::io::Error::other)?;
    let mut f = foundation::output::OutputFile::create_regular(path)?;
    f.write_all(text.as_bytes())?;
    f.commit()
}

/// Produces the calibration: options and environment first, then the cache, then measurement
/// of whatever is still missing (and the cache is refreshed with what was measured).
pub fn calibrate(req: &CalibrationRequest) -> Result<Calibration, CalibrationError> {
    calibrate_traced(req).map(|(c, _, _)| c)
}

/// [`calibrate`] inside a `calibrate` trace span, with the CLOCK_MONOTONIC start and end taken
/// inside the span (the parent's `calibrate` phase).
pub fn calibrate_traced(
    req: &CalibrationRequest,
) -> Result<(Calibration, u64, u64), CalibrationError> {
    let _g = tracing::info_span!("calibrate").entered();
    let t0 = now_ns();
    let c = calibrate_inner(req, t0)?;
    Ok((c, t0, now_ns()))
}

fn calibrate_inner(req: &CalibrationRequest, t0: u64) -> Result<Calibration, CalibrationError> {
    let env_enough = env_enough()?;
    let env_t = env_micros("TIMING_O")?;
    let env_l = env_micros("LOOP_O")?;
    let mut cache_problem = None;
    let cached = match (&req.cache, req.recalibrate) {
        (Some(p), false) => load_cache(p).unwrap_or_else(|why| {
            cache_problem = Some(why);
            None
        }),
        _ => None,
    };

    let (timing_overhead_ns, timing_overhead_source) = if let Some(t) = env_t {
        (t * 1000.0, ValueSource::Env)
    } else if let Some(c) = &cached {
        (c.timing_overhead_ns, ValueSource::Cache)
    } else {
        (timing_overhead(), ValueSource::Measured)
    };
    let (enough_us, enough_source, enough_method) = if let Some(e) = req.enough_us {
        (e, ValueSource::Option, EnoughMethod::Given)
    } else if let Some(e) = env_enough {
        (e, ValueSource::Env, EnoughMethod::Given)
    } else if let Some(c) = &cached {
        (c.enough_us, ValueSource::Cache, c.enough_method)
    } else {
        let (e, m) = compute_enough(timing_overhead_ns + resolution_ns() as f64);
        (e, ValueSource::Measured, m)
    };
    let (loop_overhead_ns, loop_overhead_source) = if let Some(l) = env_l {
        (l * 1000.0, ValueSource::Env)
    } else if let Some(c) = &cached {
        (c.loop_overhead_ns, ValueSource::Cache)
    } else {
        (
            loop_overhead(enough_us * 1000, timing_overhead_ns),
            ValueSource::Measured,
        )
    };

    let any_measured = [
        &enough_source,
        &timing_overhead_source,
        &loop_overhead_source,
    ]
    .iter()
    .any(|s| **s == ValueSource::Measured);
    let mut cache_written = false;
    if any_measured && let Some(path) = &req.cache {
        // Only a measured interval is worth caching; an overridden one keeps the old value.
        let cached_enough = cached.as_ref().map(|c| (c.enough_us, c.enough_method));
        let enough_to_store = if enough_source == ValueSource::Measured {
            Some((enough_us, enough_method))
        } else {
            cached_enough
        };
        if let Some((enough_to_store, enough_method)) = enough_to_store {
            let stored = store_cache(
                path,
                &CacheEntry {
                    machine: machine_key(),
                    created_unix: unix_now(),
                    enough_us: enough_to_store,
                    enough_method,
                    timing_overhead_ns,
                    loop_overhead_ns,
                },
            );
            match stored {
                Ok(()) => cache_written = true,
                Err(e) => {
                    let limit = foundation::error::Limit::in_chain(&e)
                        .map(|l| format!(" ({l})"))
                        .unwrap_or_default();
                    cache_problem.get_or_insert_with(|| format!("not written: {e}{limit}"));
                }
            }
        }
    }
    let measured_ns = if any_measured { now_ns() - t0 } else { 0 };
    Ok(Calibration {
        enough_us,
        timing_overhead_ns,
        loop_overhead_ns,
        clock_resolution_ns: resolution_ns(),
        enough_source,
        enough_method,
        timing_overhead_source,
        loop_overhead_source,
        measured_ns,
        cache_file: req.cache.clone(),
        cache_problem,
        cache_written,
    })
}

/// Runs `n` repetitions of ten dependent loads through a self-referencing slot.
#[inline(never)]
fn chase(n: u64) -> usize {
    // A heap slot of unknown length: every load depends on the previous one and none can be
    // folded (a fixed-size array would let the optimiser prove the index is always 0).
    let slots: Vec<usize> = black_box(vec![0usize]);
    let mut i = black_box(0usize);
    for _ in 0..n {
        i = slots[i];
        i = slots[i];
        i = slots[i];
        i = slots[i];
        i = slots[i];
        i = slots[i];
        i = slots[i];
        i = slots[i];
        i = slots[i];
        i = slots[i];
    }
    i
}

/// lmbench's time_N: the fastest of ten timings of `chase(n)`, ns.
fn time_n(n: u64) -> u64 {
    (0..10)
        .map(|_| {
            let t0 = now_ns();
            black_box(chase(black_box(n)));
            now_ns() - t0
        })
        .min()
        .unwrap_or(0)
}

/// lmbench's find_N: a work size whose run time is within ±2 % of `target` ns. `n` carries over
/// between candidates, as lmbench's static does.
fn find_n(n: &mut u64, target: u64) -> bool {
    for _ in 0..10 {
        let t = time_n(*n);
        if (t as f64) > 0.98 * target as f64 && (t as f64) < 1.02 * target as f64 {
            return true;
        }
        if t < 1_000_000 {
            *n = n.saturating_mul(10);
        } else {
            *n = (*n as f64 * target as f64 / t as f64) as u64 + 1;
        }
    }
    false
}

/// lmbench's linear_enough, made robust to a drifting host: at this interval, does time grow
/// linearly with work within ±0.25 % at ×1.015, ×1.02 and ×1.035? Each test point is timed
/// right after a base timing in the same round, eleven rounds, and the median ratio is
/// judged, so host-speed drift between two separately taken minima cannot fail the test.
/// Returns the largest deviation seen, in percent, as the error.
fn linear_enough(n: &mut u64, target: u64) -> Result<(), f64> {
    if !find_n(n, target) {
        return Err(f64::INFINITY);
    }
    let mut worst: f64 = 0.0;
    for f in [1.015, 1.02, 1.035] {
        let nf = (*n as f64 * f) as u64;
        let ratios: Vec<f64> = (0..11)
            .map(|_| {
                let t0 = now_ns();
                black_box(chase(black_box(*n)));
                let t1 = now_ns();
                black_box(chase(black_box(nf)));
                let t2 = now_ns();
                (t2 - t1) as f64 / (t1 - t0).max(1) as f64 / f - 1.0
            })
            .collect();
        worst = worst.max(crate::stats::median_of(&ratios).abs() * 100.0);
    }
    if worst <= 0.25 { Ok(()) } else { Err(worst) }
}

/// Longest time spent testing candidate intervals before settling, ns.
pub const ENOUGH_BUDGET_NS: u64 = 3_000_000_000;

/// How the interval was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "method")]
pub enum EnoughMethod {
    /// The shortest candidate that passed the linearity test (lmbench's criterion).
    Linear,
    /// No candidate passed within the time budget because the host's timing noise exceeds the
    /// test's 0.25 % tolerance; the shortest candidate whose fixed timing cost (clock read and
    /// resolution) is below 0.025 % was chosen. lmbench would fall back to 1 s here.
    OverheadBound {
        /// Smallest deviation seen in the linearity test, percent (the host's noise floor);
        /// none when no candidate could be tested (on a host too busy for the count of any
        /// candidate to settle).
        noise_pct: Option<f64>,
    },
    /// Given by ENOUGH or --enough.
    Given,
}

/// lmbench's compute_enough with the robust test above and a time budget: the interval in µs.
/// `fixed_cost_ns` is the per-interval timing cost (clock read plus resolution).
pub fn compute_enough(fixed_cost_ns: f64) -> (u64, EnoughMethod) {
    let start = now_ns();
    let mut n = 10_000;
    let mut noise = f64::INFINITY;
    for c in CANDIDATES_US {
        // A candidate costs about 80 intervals (finding N, then 11 paired rounds of 3 points).
        if now_ns() - start + 80 * c * 1000 > ENOUGH_BUDGET_NS {
            break;
        }
        match linear_enough(&mut n, c * 1000) {
            Ok(()) => return (c, EnoughMethod::Linear),
            Err(dev) => noise = noise.min(dev),
        }
    }
    let c = CANDIDATES_US
        .into_iter()
        .find(|&c| fixed_cost_ns / (c as f64 * 1000.0) < 0.00025)
        .unwrap_or(FALLBACK_US);
    (c, overhead_bound(noise))
}

/// The method for an interval chosen by its timing cost, given the smallest deviation seen
/// (infinite when no candidate was tested, which a report could not hold: JSON has no
/// infinity, and serde_json writes it as a null no reader of an f64 takes).
fn overhead_bound(noise: f64) -> EnoughMethod {
    EnoughMethod::OverheadBound {
        noise_pct: noise.is_finite().then_some(noise),
    }
}

/// Cost of one clock read, ns: the median gap between back-to-back reads.
pub fn timing_overhead() -> f64 {
    let mut gaps: Vec<u64> = Vec::with_capacity(2001);
    let mut prev = now_ns();
    for _ in 0..2001 {
        let t = now_ns();
        gaps.push(t - prev);
        prev = t;
    }
    gaps.sort_unstable();
    crate::stats::middle(&gaps).copied().unwrap_or(0) as f64
}

#[inline(never)]
fn one_load(n: u64) -> usize {
    let slots: Vec<usize> = black_box(vec![0usize]);
    let mut i = black_box(0usize);
    for _ in 0..n {
        i = slots[i];
    }
    i
}

#[inline(never)]
fn two_loads(n: u64) -> usize {
    let slots: Vec<usize> = black_box(vec![0usize]);
    let mut i = black_box(0usize);
    for _ in 0..n {
        i = slots[i];
        i = slots[i];
    }
    i
}

/// lmbench's BENCH_INNER: grow the count until one timing lasts about `enough` ns; returns the
/// last (iterations, ns). `iters` carries over between rounds.
fn calibrated(iters: &mut u64, enough: u64, body: fn(u64) -> usize) -> (u64, f64) {
    let e = enough as f64;
    let mut result = 0.0;
    let mut rounds = 0;
    while result < 0.95 * e && rounds < 64 {
        rounds += 1;
        let t0 = now_ns();
        black_box(body(black_box(*iters)));
        result = (now_ns() - t0) as f64;
        if result < 0.99 * e || result > 1.2 * e {
            if result <= 150_000.0 && *iters > 1 << 40 {
                return (*iters, 0.0);
            }
            *iters = resize_count(*iters, result, e);
        }
    }
    (*iters, result)
}

/// The most iterations one timed interval or repetition runs (2^48): sizing never grows a
/// count past it, and a `benchmp ab` driver that asks for more is refused, so no tool's
/// running total of iterations can overflow.
pub const MAX_ITERATIONS: u64 = 1 << 48;

/// lmbench's re-sizing step for an interval that took `r_ns` against a target of `enough`
/// ns: proportional to 1.1 × enough once an interval is over 150 µs, else ×8 (capped).
pub(crate) fn resize_count(count: u64, r_ns: f64, enough: f64) -> u64 {
    if r_ns > 150_000.0 {
        ((count as f64 / r_ns * 1.1 * enough) as u64)
            .saturating_add(1)
            .clamp(1, MAX_ITERATIONS)
    } else {
        count.saturating_mul(8).min(MAX_ITERATIONS)
    }
}

/// lmbench's l_overhead: per-iteration cost of the loop machinery, from loops with one and two
/// dependent loads (u1 = n(o + w), u2 = n(o + 2w) ⇒ o = 2·u1/n1 − u2/n2), ns, at least 0.
pub fn loop_overhead(enough_ns: u64, timing_ns: f64) -> f64 {
    let (mut i1, mut i2) = (1u64, 1u64);
    let (mut best1, mut best2) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..11 {
        let (n, u) = calibrated(&mut i1, enough_ns, one_load);
        if u > timing_ns && n > 0 {
            best1 = best1.min((u - timing_ns) / n as f64);
        }
        let (n, u) = calibrated(&mut i2, enough_ns, two_loads);
        if u > timing_ns && n > 0 {
            best2 = best2.min((u - timing_ns) / n as f64);
        }
    }
    if !best1.is_finite() || !best2.is_finite() {
        return 0.0;
    }
    (2.0 * best1 - best2).max(0.0)
}

#[cfg(test)]
mod tests;
