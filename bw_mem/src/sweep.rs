//! `--sweep FROM..TO`: the sizes one operation is measured at, from L1 to DRAM.

use benchmp::{Usage, parse_size};

use crate::Error;

/// Most sizes one sweep may have (a factor close to 1 over a wide range would run for days).
pub const MAX_SIZES: usize = 1000;

/// Smallest size lmbench accepts (one unrolled chunk).
pub const MIN_SIZE: u64 = 512;

/// Parses `FROM..TO` (each with lmbench's size suffixes), both at least 512 and FROM ≤ TO.
pub fn parse_range(text: &str) -> Result<(u64, u64), Error> {
    let (a, b) = text.split_once("..").ok_or_else(|| {
        Usage(format!(
            "--sweep '{text}' is not FROM..TO (e.g. --sweep 4k..512m)"
        ))
    })?;
    let from = parse_size(a)?;
    let to = parse_size(b)?;
    if from < MIN_SIZE {
        return Err(Usage(format!(
            "--sweep starts at {from} bytes; sizes must be at least {MIN_SIZE}"
        ))
        .into());
    }
    if from > to {
        return Err(Usage(format!("--sweep '{text}' ends before it starts")).into());
    }
    Ok((from, to))
}

/// Parses a `--step` factor: a number above 1 (2 gives powers of two from a power of two).
pub fn parse_step(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if f.is_finite() && f > 1.0 && f <= 1024.0 => Ok(f),
        _ => Err(format!("'{text}' is not a factor above 1 and at most 1024")),
    }
}

/// FROM, FROM×step, FROM×step², … while at most TO (each rounded down to whole bytes and kept
/// strictly increasing).
pub fn sizes(from: u64, to: u64, step: f64) -> Result<Vec<u64>, Usage> {
    let mut out = vec![from];
    let mut x = from as f64;
    loop {
        x *= step;
        if x > to as f64 {
            break;
        }
        let s = x as u64;
        if s > *out.last().unwrap_or(&0) {
            out.push(s);
        }
        if out.len() > MAX_SIZES {
            return Err(Usage(format!(
                "--sweep with --step {step} gives more than {MAX_SIZES} sizes; use a larger step"
            )));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two() {
        let (a, b) = parse_range("4k..512m").unwrap();
        let s = sizes(a, b, 2.0).unwrap();
        assert_eq!(s.first(), Some(&4096));
        assert_eq!(s.last(), Some(&(512 << 20)));
        assert_eq!(s.len(), 18);
        assert!(s.windows(2).all(|w| w[1] == 2 * w[0]));
    }

    #[test]
    fn other_factors_and_bounds() {
        assert_eq!(sizes(512, 2000, 1.5).unwrap(), vec![512, 768, 1152, 1728]);
        assert_eq!(sizes(4096, 4096, 2.0).unwrap(), vec![4096]);
        assert!(sizes(512, 1 << 40, 1.0001).is_err());
    }

    #[test]
    fn bad_ranges() {
        for bad in [
            "4k", "4k..", "..4k", "100..4k", "8k..4k", "4q..8k", "4k...8k",
        ] {
            assert!(parse_range(bad).is_err(), "{bad}");
        }
        for bad in ["1", "0.5", "x", "nan", "inf", "-2"] {
            assert!(parse_step(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_step("1.5"), Ok(1.5));
    }
}
