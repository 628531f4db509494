//! Refusing sizes the machine cannot hold, before any child is forked.
//!
//! Every child maps its own buffers: `nbytes`, plus `nbytes + 2048` for the copies. A size
//! beyond what the machine has would otherwise end in the OOM killer or a swap storm halfway
//! through a run; it is a usage error (exit 2) instead, and missing huge pages are reported
//! by benchmp (exit 3) before forking.

use benchmp::Usage;
use benchmp::sys::mem::HUGE_PAGE;

use crate::ops::{Op, SECOND_BUFFER_SLACK};

/// Bytes one child maps for `op` at `nbytes`.
pub fn child_bytes(op: Op, nbytes: u64) -> u128 {
    let second = if op.uses_second_buffer() {
        u128::from(nbytes) + SECOND_BUFFER_SLACK as u128
    } else {
        0
    };
    u128::from(nbytes) + second
}

/// Bytes of 2 MiB hugetlb pages all children need (each buffer rounded up to whole pages).
pub fn hugetlb_bytes(op: Op, nbytes: u64, parallel: usize) -> u64 {
    let round = |b: u64| {
        b.div_ceil(HUGE_PAGE as u64)
            .saturating_mul(HUGE_PAGE as u64)
    };
    let mut per_child = round(nbytes);
    if op.uses_second_buffer() {
        per_child = per_child.saturating_add(round(nbytes.saturating_add(2048)));
    }
    per_child.saturating_mul(parallel as u64)
}

/// Memory the system can give without swapping: `MemAvailable` (else `MemTotal`) of a
/// /proc/meminfo text, in bytes.
pub fn available_from(meminfo: &str) -> Option<u64> {
    let field = |name: &str| {
        meminfo.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?;
            let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
            Some(kb * 1024)
        })
    };
    field("MemAvailable").or_else(|| field("MemTotal"))
}

/// Available memory of this machine, if /proc/meminfo can be read.
pub fn available() -> Option<u64> {
    available_from(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// Fails with a usage error when `parallel` children of `op` at `nbytes` cannot fit in
/// `available` bytes.
pub fn check(op: Op, nbytes: u64, parallel: usize, available: Option<u64>) -> Result<(), Usage> {
    let need = child_bytes(op, nbytes) * parallel as u128;
    match available {
        Some(have) if need > u128::from(have) => Err(Usage(format!(
            "size {nbytes} bytes needs {need} bytes of memory for {parallel} {}{} but only {have} bytes are available (MemAvailable in /proc/meminfo)",
            if parallel == 1 { "child" } else { "children" },
            if op.uses_second_buffer() {
                " (source and destination buffers)"
            } else {
                ""
            },
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields() {
        let t = "MemTotal:       24683604 kB\nMemFree:        21553044 kB\nMemAvailable:   24105000 kB\n";
        assert_eq!(available_from(t), Some(24_105_000 * 1024));
        assert_eq!(
            available_from("MemTotal: 1000 kB\n"),
            Some(1_024_000),
            "old kernels have no MemAvailable"
        );
        assert_eq!(available_from("nothing"), None);
    }

    #[test]
    fn copies_and_children_are_counted() {
        let gib = 1u64 << 30;
        assert!(check(Op::Rd, 6 * gib, 1, Some(8 * gib)).is_ok());
        assert!(check(Op::Rd, 6 * gib, 2, Some(8 * gib)).is_err());
        assert!(check(Op::Cp, 6 * gib, 1, Some(8 * gib)).is_err());
        assert!(check(Op::Rd, u64::MAX, 1, Some(8 * gib)).is_err());
        assert!(check(Op::Rd, u64::MAX, 1, None).is_ok());
    }

    #[test]
    fn huge_pages_round_each_buffer() {
        let mib = 1u64 << 20;
        assert_eq!(hugetlb_bytes(Op::Rd, 3 * mib, 1), 4 * mib);
        // 2 MiB source + (2 MiB + 2 KiB) destination → 2 + 4 MiB, times two children.
        assert_eq!(hugetlb_bytes(Op::Bcopy, 2 * mib, 2), 12 * mib);
    }
}
