//! Size arguments with lmbench's suffixes: `k`/`K` = 1024, `m`/`M` = 2^20 (and `g`/`G` = 2^30).
//!
//! lmbench reads a leading number and looks only at the last character, so `64KB` silently
//! means 64 bytes and `12q` means 12. socbench accepts the same spellings lmbench documents and
//! rejects everything else with a message, so a typo never measures the wrong size.

use std::fmt;

/// Why a size argument was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Nothing was given.
    #[error("empty size")]
    Empty,
    /// The text is not digits followed by at most one of k, m, g.
    #[error("size '{0}' is not a number with an optional k, m or g suffix (e.g. 512, 64k, 8m, 1g)")]
    Malformed(String),
    /// The value does not fit in 64 bits.
    #[error("size '{0}' is too large")]
    Overflow(String),
}

impl crate::error::ExitStatus for SizeError {
    fn exit_status(&self) -> i32 {
        crate::error::EXIT_USAGE
    }
}

/// Parses a byte count such as `512`, `64k`, `8M` or `1g` (binary multiples, as lmbench).
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(SizeError::Empty);
    }
    let (digits, shift) = match t.as_bytes()[t.len() - 1] {
        b'k' | b'K' => (&t[..t.len() - 1], 10),
        b'm' | b'M' => (&t[..t.len() - 1], 20),
        b'g' | b'G' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SizeError::Malformed(text.to_string()));
    }
    let value: u64 = digits
        .parse()
        .map_err(|_| SizeError::Overflow(text.to_string()))?;
    value
        .checked_mul(1u64 << shift)
        .ok_or_else(|| SizeError::Overflow(text.to_string()))
}

/// A byte count shown with the largest binary suffix that divides it exactly (`64K`, `8M`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanSize(pub u64);

impl fmt::Display for HumanSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        for (shift, suffix) in [(30, "G"), (20, "M"), (10, "K")] {
            if v >= 1 << shift && v.is_multiple_of(1 << shift) {
                return write!(f, "{}{}", v >> shift, suffix);
            }
        }
        write!(f, "{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_lmbench_spellings() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("64k"), Ok(64 * 1024));
        assert_eq!(parse_size("64K"), Ok(64 * 1024));
        assert_eq!(parse_size("8m"), Ok(8 << 20));
        assert_eq!(parse_size("8M"), Ok(8 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size(" 4k "), Ok(4096));
    }

    #[test]
    fn rejects_what_lmbench_would_misread() {
        for bad in ["", "k", "12q", "64KB", "1.5m", "-1", "0x10", "m8", "8 m"] {
            assert!(parse_size(bad).is_err(), "{bad:?} should be rejected");
        }
        assert_eq!(parse_size(""), Err(SizeError::Empty));
        assert!(matches!(parse_size("12q"), Err(SizeError::Malformed(_))));
    }

    #[test]
    fn rejects_overflow() {
        assert!(matches!(
            parse_size("99999999999999999999"),
            Err(SizeError::Overflow(_))
        ));
        assert!(matches!(
            parse_size("17179869184g"),
            Err(SizeError::Overflow(_))
        ));
    }

    #[test]
    fn human_size() {
        assert_eq!(HumanSize(512).to_string(), "512");
        assert_eq!(HumanSize(65536).to_string(), "64K");
        assert_eq!(HumanSize(3 << 20).to_string(), "3M");
        assert_eq!(HumanSize(1 << 30).to_string(), "1G");
        assert_eq!(HumanSize(1536).to_string(), "1536");
    }
}
