//! The shape check: an operation that makes k times the accesses of another on the same lines
//! (`fwr` stores every int where `wr` stores one in four) moves the same lines, so beyond the
//! caches it should read about as fast, and inside them, where the accesses can set the pace,
//! at most about k times slower. Far below that, the instructions, not the memory, set its
//! figure (GCC `-O`'s `fwr` on Zen 4 reads 6-15× below `wr`), and a user reading the figure
//! alone would blame the memory: the report says so.

use crate::ops::Op;
use crate::report::{PeerTime, Report};

/// Below this share of its bound a figure is called a shape artifact: half, far beyond this
/// host's run-to-run spread and the subset's short probe (and beyond the single add chain
/// that holds lmbench's `frd` to about a sixth of `rd` in the L1 of a Zen 4).
pub const FLOOR: f64 = 0.5;

/// Buffers of at least this many times the last-level cache come from memory.
pub const BEYOND_CACHES: u64 = 2;

/// The operation whose accesses are a subset of `op`'s on the same lines, and how many times
/// more accesses `op` makes.
pub fn subset_of(op: Op) -> Option<(Op, f64)> {
    match op {
        Op::Fwr => Some((Op::Wr, 4.0)),
        Op::Frd => Some((Op::Rd, 4.0)),
        Op::Fcp => Some((Op::Cp, 4.0)),
        _ => None,
    }
}

/// MB/s (10^6 bytes counted per second) of `passes` passes of `counted` bytes in `ns`.
fn mb_per_s(counted: u64, passes: u64, ns: u64) -> f64 {
    counted as f64 * passes as f64 / ns.max(1) as f64 * 1e3
}

/// One child's figure against its subset operation's on the same buffers.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeCheck {
    /// The size argument, bytes.
    pub size_bytes: u64,
    /// The child's CPU.
    pub cpu: Option<usize>,
    /// The measured (superset) operation.
    pub op: Op,
    /// Its figure, MB/s.
    pub figure: f64,
    /// The subset operation.
    pub peer: Op,
    /// The subset's figure on the same buffers, MB/s.
    pub peer_figure: f64,
    /// Accesses of `op` per access of the subset.
    pub ratio: f64,
    /// True when the buffers are [`BEYOND_CACHES`] times the last-level cache or more.
    pub from_memory: bool,
}

impl ShapeCheck {
    /// The lowest the figure should be: the subset's figure from memory (the same lines
    /// move), a k-th of it in the caches (k times the accesses, each at the subset's rate).
    pub fn bound(&self) -> f64 {
        if self.from_memory {
            self.peer_figure
        } else {
            self.peer_figure / self.ratio
        }
    }

    /// True when the figure lies below [`FLOOR`] of its bound.
    pub fn is_artifact(&self) -> bool {
        self.figure < FLOOR * self.bound()
    }

    /// The note for the report and the note stream.
    pub fn note(&self) -> String {
        let cpu = self
            .cpu
            .map_or("unpinned".to_string(), |c| format!("CPU {c}"));
        let size = benchmp::size::HumanSize(self.size_bytes);
        let expected = if self.from_memory {
            "from memory the same lines move, so the two should read alike".to_string()
        } else {
            format!(
                "with {}x its accesses it should read at least 1/{} of it",
                self.ratio, self.ratio
            )
        };
        format!(
            "{} {size} on {cpu}: {:.0} MB/s is {:.2}x {}'s {:.0} MB/s on the same lines; {expected}: the instruction shape limits {}, not the memory ({}bw_mem/README.md)",
            self.op,
            self.figure,
            self.figure / self.peer_figure,
            self.peer,
            self.peer_figure,
            self.op,
            if self.op == Op::Fwr {
                "--lmbench-build, "
            } else {
                ""
            },
        )
    }
}

/// The report's notes: one for every child whose figure is a shape artifact.
pub fn notes(report: &Report, op: Op) -> Vec<String> {
    checks(report, op)
        .iter()
        .filter(|c| c.is_artifact())
        .map(ShapeCheck::note)
        .collect()
}

/// Every child's check in `report` (only superset operations have them).
pub fn checks(report: &Report, op: Op) -> Vec<ShapeCheck> {
    let Some((_, ratio)) = subset_of(op) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in &report.measurements {
        for c in &m.children {
            let Some(PeerTime {
                op: peer,
                passes,
                ns,
            }) = c.detail.as_ref().and_then(|d| d.peer.clone())
            else {
                continue;
            };
            let Some(f) = m.figures.iter().find(|f| f.index == c.index) else {
                continue;
            };
            let llc = report.topology.last_level_cache_bytes(c.cpu);
            let buffers = if op.uses_second_buffer() { 2 } else { 1 };
            let touched = m.params.bytes_touched_per_iteration * buffers;
            out.push(ShapeCheck {
                from_memory: llc.is_some_and(|l| touched >= BEYOND_CACHES * l),
                size_bytes: m.params.size_bytes,
                cpu: c.cpu,
                op,
                figure: f.value,
                peer,
                peer_figure: mb_per_s(m.params.bytes_counted_per_iteration, passes, ns),
                ratio,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(figure: f64, peer_figure: f64) -> ShapeCheck {
        ShapeCheck {
            from_memory: false,
            size_bytes: 16 << 20,
            cpu: Some(1),
            op: Op::Fwr,
            figure,
            peer: Op::Wr,
            peer_figure,
            ratio: 4.0,
        }
    }

    #[test]
    fn only_the_superset_operations_have_a_subset() {
        for op in Op::ALL {
            let want = matches!(op, Op::Fwr | Op::Frd | Op::Fcp);
            assert_eq!(subset_of(op).is_some(), want, "{op}");
        }
        assert_eq!(subset_of(Op::Fwr).unwrap().0, Op::Wr);
    }

    #[test]
    fn a_figure_far_below_a_quarter_of_its_subset_is_an_artifact() {
        // The Zen 4 figures at 16 MiB: fwr 2.9k against wr 52.4k.
        let c = check(2_900.0, 52_400.0);
        assert!(c.is_artifact());
        let n = c.note();
        assert!(
            n.starts_with("fwr 16M on CPU 1: 2900 MB/s is 0.06x wr's 52400"),
            "{n}"
        );
        assert!(n.contains("at least 1/4 of it"), "{n}");
        // -O2's fwr at 16 MiB (52.4k), an L1 frd at a quarter of rd, or at a fifth, are not.
        assert!(!check(52_400.0, 52_400.0).is_artifact());
        assert!(!check(13_100.0, 52_400.0).is_artifact());
        assert!(!check(10_000.0, 52_400.0).is_artifact());
        assert!(check(6_000.0, 52_400.0).is_artifact());
    }

    #[test]
    fn from_memory_the_bound_is_the_subsets_own_figure() {
        // The 64 MiB figures: -O's fwr 3.7k against wr 24.7k, -O2's 23.3k.
        let memory = |figure| ShapeCheck {
            from_memory: true,
            ..check(figure, 24_700.0)
        };
        assert!(
            !check(6_200.0, 24_700.0).is_artifact(),
            "in the caches a 4th is fine"
        );
        assert!(!memory(24_700.0 / 1.9).is_artifact(), "from memory half is");
        assert!(memory(3_700.0).is_artifact());
        assert!(memory(3_700.0).note().contains("should read alike"));
        assert!(!memory(23_300.0).is_artifact());
        // frd against rd from memory here: 32.5k against 40.5k.
        assert!(!memory(32_500.0 * 24_700.0 / 40_500.0).is_artifact());
    }

    #[test]
    fn mb_per_s_counts_bytes_per_microsecond() {
        assert_eq!(mb_per_s(1_000_000, 10, 1_000_000), 10_000.0);
        assert!(mb_per_s(1, 1, 0).is_finite());
    }
}
