//! Number syntax of the reference's command line, made strict: an optional `-`, then
//! decimal digits or `0x` and hexadecimal digits, then an optional `K` (×1024) or `M`
//! (×2^20). The reference silently stops at the first unexpected character; here the
//! whole text must match, so a typo is an error instead of a different run.

use crate::{Error, Seeds};

/// Parses one number in the reference's syntax.
pub fn number(text: &str) -> Result<i64, Error> {
    let bad = || Error::InvalidNumber {
        text: text.to_owned(),
    };
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (radix, rest) = match rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
        Some(rest) => (16, rest),
        None => (10, rest),
    };
    let (digits, scale) = if let Some(d) = rest.strip_suffix(['K', 'k']) {
        (d, 1024)
    } else if let Some(d) = rest.strip_suffix(['M', 'm']) {
        (d, 1 << 20)
    } else {
        (rest, 1)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(bad());
    }
    let value = i64::from_str_radix(digits, radix)
        .ok()
        .and_then(|v| v.checked_mul(scale))
        .ok_or_else(bad)?;
    Ok(if negative { -value } else { value })
}

/// Parses a seed: a number from −32768 to 65535 (values above 32767 are the same 16 bits
/// as their negative counterparts, as the reference's cast to a 16-bit seed makes them).
pub fn seed(text: &str) -> Result<i16, Error> {
    let value = number(text)?;
    if (-32768..=65535).contains(&value) {
        Ok(value as i16)
    } else {
        Err(Error::SeedOutOfRange {
            text: text.to_owned(),
        })
    }
}

/// Parses "a,b,c" into seeds and applies the reference's shortcuts
/// (see [`Seeds::from_args`]).
pub fn seeds(text: &str) -> Result<Seeds, Error> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let [a, b, c] = parts[..] else {
        return Err(Error::SeedCount {
            text: text.to_owned(),
        });
    };
    Ok(Seeds::from_args(seed(a)?, seed(b)?, seed(c)?))
}

/// Parses a total data size in bytes (K and M suffixes allowed); the range is checked when
/// the context is built.
pub fn size(text: &str) -> Result<u32, Error> {
    let value = number(text)?;
    u32::try_from(value).map_err(|_| Error::InvalidSize {
        text: text.to_owned(),
    })
}

/// Parses an iteration count (K and M suffixes allowed, as the reference reads it).
pub fn iterations(text: &str) -> Result<u32, Error> {
    let value = number(text)?;
    u32::try_from(value).map_err(|_| Error::InvalidIterations {
        text: text.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_number_syntax() {
        assert_eq!(number("0").unwrap(), 0);
        assert_eq!(number("102").unwrap(), 102);
        assert_eq!(number("-7").unwrap(), -7);
        assert_eq!(number("0x66").unwrap(), 0x66);
        assert_eq!(number("0x3415").unwrap(), 0x3415);
        assert_eq!(number("2K").unwrap(), 2048);
        assert_eq!(number("1M").unwrap(), 1 << 20);
        assert_eq!(number("-0x10").unwrap(), -16);
    }

    #[test]
    fn strictness() {
        for bad in [
            "",
            "-",
            "0x",
            "K",
            "12a",
            "1.5",
            "x12",
            "0x1g",
            "1KK",
            " 1",
            "99999999999999999999",
        ] {
            assert!(number(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn seeds_and_shortcuts() {
        assert_eq!(seeds("0,0,0").unwrap(), Seeds::PERFORMANCE);
        assert_eq!(seeds("1,0,0").unwrap(), Seeds::VALIDATION);
        assert_eq!(seeds("8,8,8").unwrap(), Seeds::PROFILE);
        assert_eq!(seeds("0x3415, 0x3415, 0x66").unwrap(), Seeds::VALIDATION);
        assert_eq!(seeds("65535,-1,1").unwrap(), Seeds::new(-1, -1, 1));
        assert!(matches!(seeds("1,2"), Err(Error::SeedCount { .. })));
        assert!(matches!(seeds("1,2,3,4"), Err(Error::SeedCount { .. })));
        assert!(matches!(seeds("1,2,x"), Err(Error::InvalidNumber { .. })));
        assert!(matches!(
            seeds("70000,0,0"),
            Err(Error::SeedOutOfRange { .. })
        ));
    }

    #[test]
    fn iteration_counts() {
        assert_eq!(iterations("0").unwrap(), 0);
        assert_eq!(iterations("10K").unwrap(), 10 * 1024);
        assert_eq!(iterations("0xffffffff").unwrap(), u32::MAX);
        assert!(matches!(
            iterations("4294967296"),
            Err(Error::InvalidIterations { .. })
        ));
        assert!(matches!(
            iterations("-3"),
            Err(Error::InvalidIterations { .. })
        ));
        assert!(matches!(
            iterations("ten"),
            Err(Error::InvalidNumber { .. })
        ));
    }

    #[test]
    fn sizes() {
        assert_eq!(size("2000").unwrap(), 2000);
        assert_eq!(size("6K").unwrap(), 6144);
        assert!(matches!(size("-1"), Err(Error::InvalidSize { .. })));
        assert!(size("abc").is_err());
    }
}
