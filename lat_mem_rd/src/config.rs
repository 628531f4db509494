//! From command-line values to a checked sweep: lmbench's `len` and stride arguments, the
//! `--min`/`--max` bounds, and every combination that would measure nothing or build a broken
//! chain refused with one line (exit status 2).
//!
//! `len` is in MiB as lmbench's (a whole number: `64` is 64 MiB). lmbench reads it with
//! `atoi`, so `0.5` silently becomes 0 (no sizes at all) and `512k` becomes 512 MiB; socbench
//! refuses fractions and accepts an explicit k, m or g suffix with its usual meaning (`512k` is
//! 512 KiB, `8m` is 8 MiB, as lmbench's `8m` also is).

use benchmp::{Pages, Usage};
use serde::{Deserialize, Serialize};

use crate::chain::{DEFAULT_STRIDE, Mode, POINTER, Rings};
use crate::sweep::LOWER;

/// How iteration counts are found at each size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Predicted from the previous size's latency; one interval confirms it.
    Predicted,
    /// A new framework calibration and counts sized from 1 at every size.
    RecalibrateEachSize,
}

/// lmbench's interval floor for lat_mem_rd, µs (the default of `--enough-floor`).
pub const ENOUGH_FLOOR_US: u64 = 100_000;

/// A checked sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sweep {
    /// Largest size and allocation per child, bytes (lmbench's `len`).
    pub len_bytes: u64,
    /// First size, bytes.
    pub min_bytes: u64,
    /// Last size at most, bytes.
    pub max_bytes: u64,
    /// Strides, bytes, in argument order.
    pub strides: Vec<u64>,
    /// True when strides were given (lmbench then ends each block with an empty line).
    pub explicit_strides: bool,
    /// Chain layout.
    pub mode: Mode,
    /// Ring construction in random mode.
    pub rings: Rings,
    /// Page policy of the buffers.
    pub pages: Pages,
    /// Page size used by the layout, bytes.
    pub page_size: u64,
    /// Count strategy.
    pub strategy: Strategy,
    /// Fixed shuffle seed (default: from the process id and the clock, as lmbench's pid).
    pub seed: Option<u64>,
    /// Shortest interval allowed whatever the calibration says, µs (lmbench: 100 ms).
    pub enough_floor_us: u64,
}

/// Parses `len`: a whole number of MiB, or a size with a k, m or g suffix.
pub fn parse_len(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let bytes = if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        t.parse::<u64>()
            .ok()
            .and_then(|mib| mib.checked_mul(1 << 20))
            .ok_or_else(|| format!("'{s}' MiB is too large"))?
    } else if t.ends_with(['k', 'K', 'm', 'M', 'g', 'G']) {
        benchmp::parse_size(t).map_err(|e| e.to_string())?
    } else {
        return Err(format!(
            "'{s}' is not a whole number of MiB or a size with a k, m or g suffix (e.g. 64, 512k, 8m, 1g)"
        ));
    };
    if bytes == 0 {
        return Err(
            "the largest size must be at least 1 byte (lmbench would measure nothing)".into(),
        );
    }
    Ok(bytes)
}

/// Parses a stride or a `--min`/`--max` size with lmbench's suffixes; zero is refused.
pub fn parse_nonzero_size(s: &str) -> Result<u64, String> {
    match benchmp::parse_size(s) {
        Ok(0) => Err("must be at least 1 byte".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Values of the command line that decide the sweep.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `len` in bytes.
    pub len_bytes: u64,
    /// Strides given (empty: the default).
    pub strides: Vec<u64>,
    /// `--min`.
    pub min: Option<u64>,
    /// `--max`.
    pub max: Option<u64>,
    /// `-t`.
    pub random: bool,
    /// `--exact-rings`.
    pub exact_rings: bool,
    /// `--pages` (`None`: system, as lmbench's malloc).
    pub pages: Option<Pages>,
    /// `--recalibrate-each-size`.
    pub recalibrate_each_size: bool,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--enough-floor` (`None`: lmbench's 100 ms).
    pub enough_floor_us: Option<u64>,
}

/// Refuses strides no chain can be laid out with: 0, below a pointer, above the largest size,
/// or (random chains) above a page.
fn check_strides(strides: &[u64], max: u64, random: bool, page_size: u64) -> Result<(), Usage> {
    let human = |b: u64| benchmp::size::HumanSize(b).to_string();
    for &s in strides {
        if s == 0 {
            return Err(Usage("a stride of 0 bytes is meaningless".into()));
        }
        if s < POINTER as u64 {
            return Err(Usage(format!(
                "stride {s} is smaller than a pointer ({POINTER} bytes): the chain's pointers would overlap"
            )));
        }
        if s > max {
            return Err(Usage(format!(
                "stride {} is larger than the largest size {}: no size would be measured",
                human(s),
                human(max)
            )));
        }
        if random && s > page_size {
            return Err(Usage(format!(
                "with -t the stride ({}) must not exceed the page size ({}): the random layout puts several elements in each page",
                human(s),
                human(page_size)
            )));
        }
    }
    Ok(())
}

/// Checks a request against the page size; every refusal is one line for exit status 2.
pub fn check(req: &Request, page_size: u64) -> Result<Sweep, Usage> {
    let human = |b: u64| benchmp::size::HumanSize(b).to_string();
    let len = req.len_bytes;
    if len == 0 {
        return Err(Usage(
            "the largest size (len) must be at least 1 byte".into(),
        ));
    }
    let max = req.max.unwrap_or(len);
    if max > len {
        return Err(Usage(format!(
            "--max {} is larger than len {}: the buffer is len bytes",
            human(max),
            human(len)
        )));
    }
    let min = req.min.unwrap_or(LOWER);
    if min > max {
        return Err(Usage(format!(
            "--min {} is larger than the largest size {}: nothing to measure",
            human(min),
            human(max)
        )));
    }
    let explicit = !req.strides.is_empty();
    let strides = if explicit {
        req.strides.clone()
    } else {
        vec![DEFAULT_STRIDE as u64]
    };
    check_strides(&strides, max, req.random, page_size)?;
    if req.exact_rings && !req.random {
        return Err(Usage(
            "--exact-rings applies to random chains (-t); sequential rings are always exact".into(),
        ));
    }
    Ok(Sweep {
        len_bytes: len,
        min_bytes: min,
        max_bytes: max,
        strides,
        explicit_strides: explicit,
        mode: if req.random {
            Mode::Random
        } else {
            Mode::Sequential
        },
        rings: if req.exact_rings {
            Rings::Exact
        } else {
            Rings::Lmbench
        },
        pages: req.pages.unwrap_or(Pages::System),
        page_size,
        strategy: if req.recalibrate_each_size {
            Strategy::RecalibrateEachSize
        } else {
            Strategy::Predicted
        },
        seed: req.seed,
        enough_floor_us: req.enough_floor_us.unwrap_or(ENOUGH_FLOOR_US),
    })
}

/// The system page size (lmbench's `getpagesize()`), 4096 when unknown.
pub fn system_page_size() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|v| u64::try_from(v).ok())
        .filter(|&v| v > 0)
        .unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1 << 20;

    fn req(len: u64, strides: &[u64]) -> Request {
        Request {
            len_bytes: len,
            strides: strides.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn len_is_mib_or_an_explicit_size() {
        assert_eq!(parse_len("8"), Ok(8 * M));
        assert_eq!(parse_len("8m"), Ok(8 * M));
        assert_eq!(parse_len("8M"), Ok(8 * M));
        assert_eq!(parse_len("512k"), Ok(512 << 10));
        assert_eq!(parse_len("1g"), Ok(1 << 30));
        for bad in ["0.5", "0", "0k", "", "abc", "8MB", "-1", "1.5m"] {
            assert!(parse_len(bad).is_err(), "{bad:?}");
        }
        assert!(parse_len("99999999999999999").is_err());
    }

    #[test]
    fn defaults_follow_lmbench() {
        let s = check(&req(M, &[]), 4096).unwrap();
        assert_eq!(s.strides, vec![64]);
        assert!(!s.explicit_strides);
        assert_eq!((s.min_bytes, s.max_bytes), (512, M));
        assert_eq!(s.mode, Mode::Sequential);
        assert_eq!(s.rings, Rings::Lmbench);
        assert_eq!(s.pages, Pages::System);
        assert_eq!(s.strategy, Strategy::Predicted);
        let s = check(&req(M, &[16, 128]), 4096).unwrap();
        assert!(s.explicit_strides);
    }

    #[test]
    fn bad_combinations_are_refused() {
        let cases: Vec<(Request, &str)> = vec![
            (req(M, &[0]), "stride of 0"),
            (req(M, &[4]), "smaller than a pointer"),
            (req(M, &[2 * M]), "larger than the largest size"),
            (req(0, &[]), "at least 1 byte"),
            (
                Request {
                    random: true,
                    ..req(M, &[4])
                },
                "smaller than a pointer",
            ),
            (
                Request {
                    random: true,
                    ..req(M, &[8192])
                },
                "page size",
            ),
            (
                Request {
                    max: Some(2 * M),
                    ..req(M, &[])
                },
                "--max",
            ),
            (
                Request {
                    min: Some(2 * M),
                    ..req(M, &[])
                },
                "--min",
            ),
            (
                Request {
                    max: Some(32 << 10),
                    ..req(M, &[64 << 10])
                },
                "larger than the largest size",
            ),
            (
                Request {
                    exact_rings: true,
                    ..req(M, &[])
                },
                "--exact-rings",
            ),
        ];
        for (r, want) in cases {
            let e = check(&r, 4096).unwrap_err();
            assert!(e.0.contains(want), "{r:?}: {e}");
            assert!(!e.0.contains('\n'));
        }
        // A large stride is fine in sequential mode.
        assert!(check(&req(M, &[8192]), 4096).is_ok());
    }

    #[test]
    fn page_size_is_known() {
        let p = system_page_size();
        assert!(p.is_power_of_two() && p >= 4096);
    }
}
