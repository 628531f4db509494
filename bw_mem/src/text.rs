//! Text output: lmbench's result line, `--list-ops`, and the notes `--verbose` adds.
//!
//! lmbench prints `<size in MB> <MB/s>` with MB = 10^6 in both columns (while the size
//! argument's `m` is 2^20), each number `%.6f` below 1 and `%.2f` otherwise (spec §3).

use std::fmt::Write as _;

use benchmp::AggregateMode;
use benchmp::export::lmbench_number;
use benchmp::size::HumanSize;
use benchmp::topology::Topology;

use crate::kernels::{Isa, Kernel, arch_isas};
use crate::ops::{Op, Stores};
use crate::report::{PagesRow, Report};

/// lmbench's result line for a size argument of `nbytes` and a figure in MB/s (with newline).
pub fn lmbench_line(nbytes: u64, mb_per_s: f64) -> String {
    format!(
        "{} {}\n",
        lmbench_number(nbytes as f64 / 1e6),
        lmbench_number(mb_per_s)
    )
}

/// lmbench's lines of every measurement of `r` with a figure (`mode`'s) above 0.
pub fn lmbench_lines(r: &Report, mode: AggregateMode) -> String {
    r.measurements
        .iter()
        .filter(|m| m.figure(mode) > 0.0)
        .map(|m| lmbench_line(m.params.size_bytes, m.figure(mode)))
        .collect()
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

/// `# caches seen by CPU 0: L1 Data 48K, L2 Unified 1M, L3 Unified 32M` and a newline, for
/// `cpu`, the first child's.
pub fn cache_header(topology: &Topology, cpu: Option<usize>) -> String {
    let caches: Vec<String> = topology
        .data_caches(cpu)
        .iter()
        .map(|c| format!("L{} {} {}", c.level, c.kind, HumanSize(c.size_bytes)))
        .collect();
    format!(
        "# caches seen by CPU {}: {}\n",
        cpu.map_or("-".to_string(), |c| c.to_string()),
        if caches.is_empty() {
            "unknown".to_string()
        } else {
            caches.join(", ")
        }
    )
}

/// What the stores of an operation do to the bus model, in words.
fn stores_text(s: Stores) -> &'static str {
    match s {
        Stores::None => "reads only",
        Stores::Normal => "ordinary stores: write-allocate read and write-back per line written",
        Stores::NonTemporal => "non-temporal stores: no write-allocate read",
        Stores::Libc => "libc's stores, modelled as ordinary (an upper bound: glibc may stream)",
    }
}

/// Per-child and per-cluster figures (with more than one child, or `verbose`) and, with
/// `verbose`, the implementation, bytes moved, bus figure and pages of every measurement, for
/// the note stream after the lmbench lines. Every number is the one the report records.
pub fn breakdown(r: &Report, verbose: bool, mode: AggregateMode) -> String {
    let pages: &[PagesRow] = r.extra.as_ref().map_or(&[], |e| &e.pages_obtained);
    let mut out = String::new();
    if verbose && let Some(p) = r.measurements.first().map(|m| &m.params) {
        let _ = writeln!(
            out,
            "# {}: {}; implementation {}; access {}; {}",
            p.op,
            p.op.description(),
            p.implementation,
            p.access,
            stores_text(p.stores)
        );
    }
    for m in &r.measurements {
        let params = &m.params;
        let size = params.size_bytes;
        if r.placement.cpus.len() > 1 || verbose {
            let _ = writeln!(out, "# {} {size} bytes:", params.op);
            for l in benchmp::export::cluster_lines(r, m, mode) {
                let _ = writeln!(out, "#{l}");
            }
        }
        if verbose {
            let f = params.bus_bytes_per_iteration as f64
                / params.bytes_counted_per_iteration.max(1) as f64;
            let mine: Vec<&PagesRow> = pages.iter().filter(|p| p.size_bytes == size).collect();
            let sum = |f: fn(&PagesRow) -> u64| mine.iter().map(|p| f(p)).sum::<u64>();
            let resident = sum(|p| p.pages.buf.rss_bytes + p.pages.buf2.map_or(0, |b| b.rss_bytes));
            let thp = sum(|p| {
                p.pages.buf.anon_huge_bytes + p.pages.buf2.map_or(0, |b| b.anon_huge_bytes)
            });
            let hugetlb =
                sum(|p| p.pages.buf.hugetlb_bytes + p.pages.buf2.map_or(0, |b| b.hugetlb_bytes));
            let _ = writeln!(
                out,
                "# {size} bytes: per pass {} touched, {} loaded, {} stored; bus (model, buffers beyond the caches) {:.2} MB/s = {f:.2} x the figure; pages: {resident} B resident, {thp} B THP, {hugetlb} B hugetlb",
                params.bytes_touched_per_iteration,
                params.load_bytes_per_iteration,
                params.store_bytes_per_iteration,
                m.figure(mode) * f,
            );
        }
    }
    if verbose {
        let _ = writeln!(
            out,
            "# wall {:.3} s, calibration {:.3} s ({:?} interval {} us)",
            r.wall_ns as f64 / 1e9,
            r.calibration_ns as f64 / 1e9,
            r.calibration.enough_source,
            r.calibration.enough_us
        );
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
