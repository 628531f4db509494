//! The performance test's environment variables (the DTO guide's PERF_* set and RESULTS_DIR),
//! validated up front: a bad value is a one-line error and exit status 2.

use std::path::PathBuf;

use serde::Serialize;

/// Largest PERF_ITERS honoured; larger values are capped, as in the guide.
pub const MAX_ITERS: u32 = 10_000;
/// Iterations per round without PERF_ITERS.
pub const DEFAULT_ITERS: u32 = 10_000;
/// Iterations per round in the PERF_SHORT sanity run (without PERF_ITERS).
pub const SHORT_ITERS: u32 = 100;
/// Largest PERF_AB_ROUNDS accepted.
pub const MAX_ROUNDS: u32 = 1000;

/// The CPU the guide pins to when PERF_CPU is not set.
pub const DEFAULT_CPU: usize = 1;

/// Settings of an A/B run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    /// PERF_CPU: the CPU asked for (`None`: not set; placement then defaults to CPU 1,
    /// wrapped into the allowed set, as the guide's default).
    pub cpu: Option<usize>,
    /// PERF_CORE_FREQ_MHZ (None: 0 or "off", do not pin).
    pub core_freq_mhz: Option<u32>,
    /// PERF_UNCORE_FREQ_MHZ (None: 0 or "off", do not pin).
    pub uncore_freq_mhz: Option<u32>,
    /// PERF_MIN_EFFECT, percent.
    pub min_effect_pct: f64,
    /// PERF_AB_ROUNDS.
    pub rounds: u32,
    /// PERF_ITERS after the cap.
    pub iters: u32,
    /// True when PERF_ITERS asked for more than the cap.
    pub iters_capped: bool,
    /// PERF_SHORT.
    pub short: bool,
    /// PERF_COLD_CACHE.
    pub cold_cache: bool,
    /// RESULTS_DIR.
    pub results_dir: PathBuf,
}

fn bad(name: &str, what: &str, v: &str) -> String {
    format!("{name} must be {what}, not '{v}'")
}

fn whole(name: &str, v: &str, min: u64, max: u64) -> Result<u64, String> {
    let what = format!("a whole number from {min} to {max}");
    match v.trim().parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(bad(name, &what, v)),
    }
}

fn flag(name: &str, v: &str) -> Result<bool, String> {
    match v.trim() {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(bad(name, "0 or 1", v)),
    }
}

fn freq(name: &str, v: Option<&str>) -> Result<Option<u32>, String> {
    match v.map(str::trim) {
        None => Ok(Some(2000)),
        Some("0") | Some("off") => Ok(None),
        Some(s) => whole(name, s, 1, 100_000)
            .map(|n| Some(n as u32))
            .map_err(|_| bad(name, "a frequency in MHz (1 to 100000), 0 or off", s)),
    }
}

impl Settings {
    /// Reads and validates the variables through `get` (the process environment in the
    /// binary, a map in tests).
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Settings, String> {
        let var = |k: &str| get(k).filter(|v| !v.is_empty());
        let short = var("PERF_SHORT")
            .map(|v| flag("PERF_SHORT", &v))
            .transpose()?
            .unwrap_or(false);
        let cpu = var("PERF_CPU")
            .map(|v| whole("PERF_CPU", &v, 0, 65_535))
            .transpose()?
            .map(|n| n as usize);
        let min_effect_pct = match var("PERF_MIN_EFFECT") {
            None => 2.0,
            Some(v) => match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && (0.0..=1000.0).contains(&x) => x,
                _ => return Err(bad("PERF_MIN_EFFECT", "a percentage from 0 to 1000", &v)),
            },
        };
        let rounds = var("PERF_AB_ROUNDS")
            .map(|v| whole("PERF_AB_ROUNDS", &v, 1, u64::from(MAX_ROUNDS)))
            .transpose()?
            .map(|n| n as u32)
            .unwrap_or(if short { 1 } else { 3 });
        let (iters, iters_capped) = match var("PERF_ITERS") {
            None => (if short { SHORT_ITERS } else { DEFAULT_ITERS }, false),
            Some(v) => {
                let n = whole("PERF_ITERS", &v, 1, u64::from(u32::MAX))?;
                (n.min(u64::from(MAX_ITERS)) as u32, n > u64::from(MAX_ITERS))
            }
        };
        let cold_cache = var("PERF_COLD_CACHE")
            .map(|v| flag("PERF_COLD_CACHE", &v))
            .transpose()?
            .unwrap_or(true);
        let core_freq_mhz = freq("PERF_CORE_FREQ_MHZ", var("PERF_CORE_FREQ_MHZ").as_deref())?;
        let uncore_freq_mhz = freq(
            "PERF_UNCORE_FREQ_MHZ",
            var("PERF_UNCORE_FREQ_MHZ").as_deref(),
        )?;
        let results_dir =
            PathBuf::from(var("RESULTS_DIR").unwrap_or_else(|| "perf_results".into()));
        if results_dir.exists() && !results_dir.is_dir() {
            return Err(format!(
                "RESULTS_DIR must be a folder, not the file '{}'",
                results_dir.display()
            ));
        }
        Ok(Settings {
            cpu,
            core_freq_mhz,
            uncore_freq_mhz,
            min_effect_pct,
            rounds,
            iters,
            iters_capped,
            short,
            cold_cache,
            results_dir,
        })
    }

    /// Reads the process environment.
    pub fn from_process() -> Result<Settings, String> {
        Settings::from_env(|k| std::env::var(k).ok())
    }
}

/// Parses a `--env KEY=VALUE` argument.
pub fn parse_key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v))
            if !k.is_empty()
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !k.starts_with(|c: char| c.is_ascii_digit()) =>
        {
            Ok((k.to_string(), v.to_string()))
        }
        _ => Err(format!(
            "'{s}' is not KEY=VALUE with a variable name as KEY"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(pairs: &[(&str, &str)]) -> Result<Settings, String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::from_env(|k| m.get(k).cloned())
    }

    #[test]
    fn defaults_follow_the_guide() {
        let s = with(&[]).unwrap();
        assert_eq!((s.cpu, s.rounds, s.iters), (None, 3, 10_000));
        assert_eq!(with(&[("PERF_CPU", "3")]).unwrap().cpu, Some(3));
        assert_eq!(s.min_effect_pct, 2.0);
        assert!(s.cold_cache && !s.short);
        assert_eq!(s.core_freq_mhz, Some(2000));
        let short = with(&[("PERF_SHORT", "1")]).unwrap();
        assert_eq!((short.rounds, short.iters), (1, 100));
        let tiny = with(&[("PERF_SHORT", "1"), ("PERF_ITERS", "5")]).unwrap();
        assert_eq!(tiny.iters, 5);
    }

    #[test]
    fn iterations_are_capped_not_refused() {
        let s = with(&[("PERF_ITERS", "50000")]).unwrap();
        assert_eq!((s.iters, s.iters_capped), (10_000, true));
    }

    #[test]
    fn bad_values_are_one_line_errors() {
        for (k, v) in [
            ("PERF_ITERS", "0"),
            ("PERF_ITERS", "ten"),
            ("PERF_AB_ROUNDS", "-1"),
            ("PERF_MIN_EFFECT", "x"),
            ("PERF_MIN_EFFECT", "nan"),
            ("PERF_SHORT", "yes"),
            ("PERF_COLD_CACHE", "2"),
            ("PERF_CPU", "1.5"),
            ("PERF_CORE_FREQ_MHZ", "fast"),
            ("RESULTS_DIR", "/proc/self/status"),
        ] {
            let e = with(&[(k, v)]).unwrap_err();
            assert!(e.starts_with(k) && !e.contains('\n'), "{e}");
        }
        assert_eq!(
            with(&[("PERF_CORE_FREQ_MHZ", "off")])
                .unwrap()
                .core_freq_mhz,
            None
        );
    }

    #[test]
    fn key_values() {
        assert_eq!(
            parse_key_value("DTO_MIN_BYTES=4096").unwrap(),
            ("DTO_MIN_BYTES".into(), "4096".into())
        );
        assert!(parse_key_value("novalue").is_err());
        assert!(parse_key_value("=x").is_err());
        assert!(parse_key_value("A B=1").is_err());
    }
}
