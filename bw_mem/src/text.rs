//! Text output: lmbench's result line, `--list-ops`, and the notes `--verbose` adds.
//!
//! lmbench prints `<size in MB> <MB/s>` with MB = 10^6 in both columns (while the size
//! argument's `m` is 2^20), each number `%.6f` below 1 and `%.2f` otherwise (spec §3).

use benchmp::report::lmbench_number;

use crate::kernels::{Isa, Kernel, arch_isas};
use crate::ops::Op;

/// lmbench's result line for a size argument of `nbytes` and a figure in MB/s (with newline).
pub fn lmbench_line(nbytes: u64, mb_per_s: f64) -> String {
    format!(
        "{} {}\n",
        lmbench_number(nbytes as f64 / 1e6),
        lmbench_number(mb_per_s)
    )
}

/// True when `line` has the shape of lmbench's result line (two numbers, each `%.6f` below 1
/// and `%.2f` otherwise, one space apart, a newline at the end).
pub fn is_lmbench_line(line: &str) -> bool {
    let Some(body) = line.strip_suffix('\n') else {
        return false;
    };
    let parts: Vec<&str> = body.split(' ').collect();
    parts.len() == 2 && parts.iter().all(|p| is_lmbench_number(p))
}

fn is_lmbench_number(s: &str) -> bool {
    let Some((int, frac)) = s.split_once('.') else {
        return false;
    };
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    if int == "0" {
        frac.len() == 6
    } else {
        frac.len() == 2 && !int.starts_with('0')
    }
}

/// The `--list-ops` table: every operation, whether this CPU runs it and with what, and what
/// it does.
pub fn list_ops() -> String {
    let mut out = format!(
        "{:<8} {:<10} {:<36} {}\n",
        "op", "runs here", "implementation (others here)", "what it does"
    );
    for op in Op::ALL {
        let (runs, what) = match Kernel::select(op, None) {
            Ok(k) => {
                let others: Vec<&str> = Kernel::all_available(op)
                    .iter()
                    .map(|k| k.isa())
                    .filter(|&i| i != k.isa())
                    .map(Isa::name)
                    .collect();
                let mut what = k.label();
                if op.has_variants() {
                    what = format!("{what}, {} B", k.isa().vector_bytes());
                    if !others.is_empty() {
                        what = format!("{what} ({})", others.join(" "));
                    }
                }
                ("yes", what)
            }
            Err(_) => ("no", "--isa portable: ordinary stores".to_string()),
        };
        out.push_str(&format!(
            "{:<8} {:<10} {:<36} {}\n",
            op.name(),
            runs,
            what,
            op.description()
        ));
    }
    let missing: Vec<&str> = arch_isas()
        .iter()
        .filter(|i| !i.available())
        .map(|i| i.name())
        .collect();
    if !missing.is_empty() {
        out.push_str(&format!(
            "not on this CPU: {} (--isa cannot select them)\n",
            missing.join(" ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lmbench_lines_match_the_reference_examples() {
        // The measured lmbench outputs of spec §3 (size column exactly, figure format).
        assert_eq!(lmbench_line(1 << 20, 95888.031), "1.05 95888.03\n");
        assert_eq!(lmbench_line(1000, 298387.67), "0.001000 298387.67\n");
        assert_eq!(lmbench_line(8 << 20, 28818.26), "8.39 28818.26\n");
        assert_eq!(lmbench_line(128 << 20, 14500.62), "134.22 14500.62\n");
        assert_eq!(lmbench_line(512, 0.5), "0.000512 0.500000\n");
    }

    #[test]
    fn line_shape() {
        assert!(is_lmbench_line("1.05 95888.03\n"));
        assert!(is_lmbench_line("0.001000 298387.67\n"));
        assert!(!is_lmbench_line("1.05 95888.03"));
        assert!(!is_lmbench_line("1.05  95888.03\n"));
        assert!(!is_lmbench_line("1.050 95888.03\n"));
        assert!(!is_lmbench_line("0.10 95888.03\n"));
        assert!(!is_lmbench_line("1.05 MB/s\n"));
    }

    #[test]
    fn every_op_is_listed() {
        let t = list_ops();
        for op in Op::ALL {
            assert!(
                t.lines()
                    .any(|l| l.split_whitespace().next() == Some(op.name())),
                "{op} missing from\n{t}"
            );
        }
    }
}
