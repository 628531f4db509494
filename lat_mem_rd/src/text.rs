//! lmbench's text output and the curve summary, as pure functions, and the [`Printer`] that
//! writes the lines as the sweep measures them.
//!
//! lmbench writes, per stride, a header `"stride=N` (an xgraph data-set title), one
//! `%.5f %.3f` line per size (size in MiB = 2^20 bytes, nanoseconds per load), and an empty
//! line after the block only when strides were given on the command line.

use std::fmt::Write;

use benchmp::cli::Stream;
use benchmp::size::HumanSize;

use crate::Error;
use crate::measure::Event;
use crate::summary::CurveSummary;

/// Writes the lmbench text as the sweep goes, clearing the progress line first. A write that
/// fails (a full disk, a closed pipe) ends the sweep: the result can no longer be delivered.
#[derive(Debug)]
pub struct Printer {
    /// False when the text is not wanted (JSON or CSV on the terminal stream).
    pub on: bool,
    /// The stream the results go to.
    pub to: Stream,
    /// Strides were given on the command line (an empty line ends each block).
    pub explicit: bool,
}

impl Printer {
    fn write(&self, s: &str) -> Result<(), Error> {
        if !self.on {
            return Ok(());
        }
        benchmp::progress::clear_line();
        self.to.write(s).map_err(|source| Error::Write {
            stream: self.to.name().to_string(),
            source,
        })
    }

    /// Writes what `e` adds to the text: a block's header, a line, or a block's end.
    pub fn event(&self, e: Event) -> Result<(), Error> {
        match e {
            Event::StrideStart(stride) => self.write(&header(stride)),
            Event::Point(p) => self.write(&line(p.size_bytes, p.ns)),
            Event::StrideEnd(_) => self.write(block_end(self.explicit)),
        }
    }
}

/// `"stride=64` and a newline.
pub fn header(stride: u64) -> String {
    format!("\"stride={stride}\n")
}

/// One data line: size in MiB with five decimals, ns per load with three.
pub fn line(size_bytes: u64, ns: f64) -> String {
    format!("{:.5} {:.3}\n", size_bytes as f64 / 1_048_576.0, ns)
}

/// What follows a stride's block: an empty line when strides were explicit.
pub fn block_end(explicit_strides: bool) -> &'static str {
    if explicit_strides { "\n" } else { "" }
}

/// The whole lmbench text for curves of (size, ns) per stride.
pub fn lmbench_text(curves: &[(u64, Vec<(u64, f64)>)], explicit_strides: bool) -> String {
    let mut out = String::new();
    for (stride, points) in curves {
        out.push_str(&header(*stride));
        for &(size, ns) in points {
            out.push_str(&line(size, ns));
        }
        out.push_str(block_end(explicit_strides));
    }
    out
}

/// The summary of every curve: plateaus with ns and cycles beside the sysfs caches, then the
/// steps.
pub fn summary_text(summaries: &[CurveSummary]) -> String {
    let mut out = String::new();
    let h = |b: u64| HumanSize(b).to_string();
    for s in summaries {
        let cpus = benchmp::cpulist::format_cpu_list(&s.cpus);
        let clock = match &s.clock {
            Some(c) => format!("clock {}", c.describe()),
            None => "cycles unavailable (no --mhz, no cycles counter or cpufreq, and the clock probe gave no clock it could trust: see the children's clock in --json)"
                .to_string(),
        };
        let _ = writeln!(
            out,
            "summary: stride {}, {}, cluster {} (CPU{} {cpus}); {clock}",
            s.stride_bytes,
            s.layout,
            s.cluster,
            if s.cpus.len() == 1 { "" } else { "s" },
        );
        if s.shape.plateaus.is_empty() {
            let _ = writeln!(out, "  no plateau found (too few sizes, or too noisy)");
        }
        for p in &s.shape.plateaus {
            let cycles = s
                .clock
                .map(|c| format!("{:7.1} cycles", c.cycles(p.ns)))
                .unwrap_or_default();
            let sysfs = crate::curve::cache_for(&p.label, &s.caches)
                .map(|c| format!("   sysfs {}", c.name))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:<9} {:>6} .. {:<6} {:9.3} ns {cycles}{sysfs}",
                p.label,
                h(p.first_bytes),
                h(p.last_bytes),
                p.ns
            );
        }
        for st in &s.shape.steps {
            let cache = crate::curve::cache_for(&st.from_label, &s.caches)
                .map(|c| format!("; sysfs {}", c.name))
                .unwrap_or_default();
            let _ = match &st.to_label {
                Some(to) => writeln!(
                    out,
                    "  step: {} {:.3} ns up to {}, {} {:.3} ns from {} (x{:.2}){cache}",
                    st.from_label,
                    st.from_ns,
                    h(st.last_low_bytes),
                    to,
                    st.to_ns,
                    h(st.first_high_bytes),
                    st.to_ns / st.from_ns
                ),
                None => writeln!(
                    out,
                    "  step: {} {:.3} ns up to {}, still rising: {:.3} ns at {} (x{:.2}){cache}",
                    st.from_label,
                    st.from_ns,
                    h(st.last_low_bytes),
                    st.to_ns,
                    h(st.first_high_bytes),
                    st.to_ns / st.from_ns
                ),
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_lmbench_format() {
        assert_eq!(header(64), "\"stride=64\n");
        assert_eq!(line(512, 2.419), "0.00049 2.419\n");
        assert_eq!(line(1 << 20, 1.23456), "1.00000 1.235\n");
        assert_eq!(line(256 << 10, 100.0), "0.25000 100.000\n");
        assert_eq!(line(3072, 0.0), "0.00293 0.000\n");
    }

    #[test]
    fn blocks_and_blank_lines() {
        let curves = vec![
            (64, vec![(512, 1.5), (1024, 1.5)]),
            (128, vec![(1024, 1.6)]),
        ];
        assert_eq!(
            lmbench_text(&curves, true),
            "\"stride=64\n0.00049 1.500\n0.00098 1.500\n\n\"stride=128\n0.00098 1.600\n\n"
        );
        assert_eq!(
            lmbench_text(&curves[..1], false),
            "\"stride=64\n0.00049 1.500\n0.00098 1.500\n"
        );
        // A stride block with no sizes still has its header (lmbench prints it first).
        assert_eq!(lmbench_text(&[(64, vec![])], true), "\"stride=64\n\n");
    }
}
