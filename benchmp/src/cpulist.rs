//! CPU lists in the kernel's notation (`0-3,7`), as sysfs prints them and `--cpus` takes them.

use std::fmt;

/// Largest CPU number accepted; the kernel's own limit (NR_CPUS) is at most 8192.
pub const MAX_CPU: usize = 8191;

/// Why a CPU list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CPU list '{text}': {reason}")]
pub struct CpuListError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl crate::error::ExitStatus for CpuListError {
    fn exit_status(&self) -> i32 {
        crate::error::EXIT_USAGE
    }
}

/// Parses `0-3,7` into ascending, de-duplicated CPU numbers. Empty lists are refused.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, CpuListError> {
    let err = |reason: String| CpuListError {
        text: text.to_string(),
        reason,
    };
    let mut cpus = Vec::new();
    let t = text.trim();
    if t.is_empty() {
        return Err(err("empty list".into()));
    }
    for part in t.split(',') {
        let part = part.trim();
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (parse_cpu(a), parse_cpu(b)),
            None => (parse_cpu(part), parse_cpu(part)),
        };
        let (lo, hi) = match (lo, hi) {
            (Some(lo), Some(hi)) => (lo, hi),
            _ => {
                return Err(err(format!(
                    "'{part}' is not a CPU number or range like 0-3"
                )));
            }
        };
        if lo > hi {
            return Err(err(format!("range '{part}' runs backwards")));
        }
        if hi > MAX_CPU {
            return Err(err(format!(
                "CPU {hi} is beyond the kernel limit {MAX_CPU}"
            )));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// As [`parse_cpu_list`] for a list a user gave, where a CPU named twice is a mistake
/// (`--cpus 0,0` would otherwise be one child, not two).
pub fn parse_cpu_list_once(text: &str) -> Result<Vec<usize>, CpuListError> {
    let mut seen = Vec::new();
    for part in text.split(',') {
        let cpus = parse_cpu_list(part).map_err(|e| CpuListError {
            text: text.to_string(),
            reason: e.reason,
        })?;
        for cpu in cpus {
            if seen.contains(&cpu) {
                return Err(CpuListError {
                    text: text.to_string(),
                    reason: format!(
                        "CPU {cpu} is named twice (for several children on one CPU give -P N with --cpus)"
                    ),
                });
            }
            seen.push(cpu);
        }
    }
    seen.sort_unstable();
    Ok(seen)
}

fn parse_cpu(s: &str) -> Option<usize> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 5 {
        return None;
    }
    s.parse().ok()
}

/// Formats CPU numbers back into the compact kernel notation.
#[derive(Debug, Clone, Copy)]
pub struct CpuListDisplay<'a>(pub &'a [usize]);

impl fmt::Display for CpuListDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sorted: Vec<usize> = self.0.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut first = true;
        let mut i = 0;
        while i < sorted.len() {
            let start = sorted[i];
            let mut end = start;
            while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
                i += 1;
                end = sorted[i];
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

/// The compact notation of a CPU set, for messages and reports.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    CpuListDisplay(cpus).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_and_singles() {
        assert_eq!(parse_cpu_list("0-3,7"), Ok(vec![0, 1, 2, 3, 7]));
        assert_eq!(parse_cpu_list("5"), Ok(vec![5]));
        assert_eq!(parse_cpu_list("3,1,2,1"), Ok(vec![1, 2, 3]));
        assert_eq!(parse_cpu_list("0-1\n"), Ok(vec![0, 1]));
        assert_eq!(parse_cpu_list("4-4"), Ok(vec![4]));
    }

    #[test]
    fn rejects_bad_lists() {
        for bad in [
            "", ",", "a", "1-", "-1", "3-1", "1,,2", "0x1", "1 2", "99999",
        ] {
            assert!(parse_cpu_list(bad).is_err(), "{bad:?} should be rejected");
        }
        let e = parse_cpu_list("3-1").unwrap_err();
        assert!(e.to_string().contains("backwards"), "{e}");
    }

    #[test]
    fn formats_compactly() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 7]), "0-3,7");
        assert_eq!(format_cpu_list(&[5]), "5");
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(format_cpu_list(&[2, 0, 1, 5, 6, 9]), "0-2,5-6,9");
    }

    #[test]
    fn round_trips() {
        for s in ["0-3,7", "0", "1,3,5-8"] {
            assert_eq!(format_cpu_list(&parse_cpu_list(s).unwrap()), s);
        }
    }
}
