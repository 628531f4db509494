//! How the children of one measurement timed their intervals relative to each other: a
//! parallel figure (a sum of the children's) is only a figure of the machine under that load
//! when the children ran at the same time.
//!
//! The rule has no exemption by size or time: a short run whose windows overlapped too little
//! is as much apart as a long one (a machine fast enough makes every run short). A session
//! measures such a run again ([`ATTEMPTS`]), and refuses the figure when its children still
//! ran apart.

use serde::{Deserialize, Serialize};

/// The words of the refusal of a parallel run whose children ran apart in every attempt
/// (exit 1), which the suite and the tests look for.
pub const RAN_APART: &str = "the children did not run together";

/// Overlap below which a parallel run's children count as not having run together.
pub const MIN_OVERLAP: f64 = 0.75;
/// Times a session runs a parallel measurement whose children ran apart before it refuses it.
pub const ATTEMPTS: u32 = 3;

/// One child's timed window: the start of its first timed interval to the end of its last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Child number.
    pub index: usize,
    /// CPU it was pinned to.
    pub cpu: Option<usize>,
    /// Start, CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    /// End, CLOCK_MONOTONIC ns.
    pub end_ns: u64,
}

impl Window {
    /// Length, ns.
    pub fn len_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// How the children of one measurement timed their intervals relative to each other: a
/// parallel figure (a sum of the children's) is only a figure of the machine under that load
/// when the children ran at the same time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overlap {
    /// Each child's timed window.
    pub windows: Vec<Window>,
    /// Length of the window all children shared (latest start to earliest end), ns; 0 when
    /// some pair did not overlap at all.
    pub common_ns: u64,
    /// Length of the longest child's window, ns.
    pub longest_ns: u64,
    /// `common_ns / longest_ns` (1 for a single child).
    pub fraction: f64,
    /// The children were timed one after another on purpose (`--sequential`).
    pub sequential: bool,
    /// Whether the children ran together: one child, sequential by request, or an overlap of
    /// at least [`MIN_OVERLAP`] of the longest window.
    pub together: bool,
    /// Runs it took (up to [`ATTEMPTS`]): those before the last ran apart.
    #[serde(default = "one")]
    pub attempts: u32,
}

fn one() -> u32 {
    1
}

impl Overlap {
    /// The children's windows from their samples (all timed intervals, accepted or not).
    pub fn of<S, C>(children: &[super::ChildRun<S, C>], sequential: bool) -> Overlap {
        let windows: Vec<Window> = children
            .iter()
            .filter_map(|c| {
                let first = c.samples.first()?;
                let last = c.samples.last()?;
                Some(Window {
                    index: c.index,
                    cpu: c.cpu,
                    start_ns: first.start_ns,
                    end_ns: last.start_ns + last.elapsed_ns,
                })
            })
            .collect();
        Overlap::from_windows(windows, sequential)
    }

    /// Judges given windows (see [`Overlap::together`]).
    pub fn from_windows(windows: Vec<Window>, sequential: bool) -> Overlap {
        let longest_ns = windows.iter().map(Window::len_ns).max().unwrap_or(0);
        let start = windows.iter().map(|w| w.start_ns).max().unwrap_or(0);
        let end = windows.iter().map(|w| w.end_ns).min().unwrap_or(0);
        let common_ns = end.saturating_sub(start);
        let fraction = if windows.len() <= 1 || longest_ns == 0 {
            1.0
        } else {
            common_ns as f64 / longest_ns as f64
        };
        let together = windows.len() <= 1 || sequential || fraction >= MIN_OVERLAP;
        Overlap {
            windows,
            common_ns,
            longest_ns,
            fraction,
            sequential,
            together,
            attempts: 1,
        }
    }

    /// What an older report without overlap data reads as: one window, together.
    pub fn unknown() -> Overlap {
        Overlap::from_windows(Vec::new(), false)
    }

    /// `child 1 (CPU 1) timed for 3.02 s, the common window was 0.11 s`.
    pub fn apart(&self) -> String {
        match self.windows.iter().max_by_key(|w| w.len_ns()) {
            Some(w) => format!(
                "{} timed for {:.3} s, the common window was {:.3} s",
                super::who(w.index, w.cpu),
                w.len_ns() as f64 / 1e9,
                self.common_ns as f64 / 1e9
            ),
            None => "no timed intervals".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(index: usize, start_ns: u64, end_ns: u64) -> Window {
        Window {
            index,
            cpu: Some(index),
            start_ns,
            end_ns,
        }
    }

    #[test]
    fn overlap_of_windows() {
        const MS: u64 = 1_000_000;
        // Two children timed together, one a few intervals longer: together.
        let o = Overlap::from_windows(vec![w(0, 0, 1100 * MS), w(1, 2 * MS, 1400 * MS)], false);
        assert_eq!(o.common_ns, 1098 * MS);
        assert!(o.together && o.fraction > 0.78, "{o:?}");
        // One child stopped for three seconds in the middle of its run: apart.
        let o = Overlap::from_windows(vec![w(0, 0, 110 * MS), w(1, 0, 3110 * MS)], false);
        assert!(!o.together, "{o:?}");
        assert!(
            o.apart().contains("child 1 (CPU 1) timed for 3.110 s"),
            "{}",
            o.apart()
        );
        // ...unless the children were meant to run one by one.
        assert!(Overlap::from_windows(o.windows.clone(), true).together);
        // Disjoint windows share nothing.
        let o = Overlap::from_windows(vec![w(0, 0, 5000 * MS), w(1, 6000 * MS, 11000 * MS)], false);
        assert_eq!(o.common_ns, 0);
        assert!(!o.together);
        // A short run is held to the same rule: no exemption by time (the suite's bw_mem -P 2
        // once summed 2.7 and 26.2 GB/s of children whose windows shared 16 %).
        let o = Overlap::from_windows(vec![w(0, 0, 60 * MS), w(1, 0, 800 * MS)], false);
        assert!(!o.together && o.fraction < MIN_OVERLAP, "{o:?}");
        let o = Overlap::from_windows(vec![w(0, 0, 16 * MS), w(1, 0, 100 * MS)], false);
        assert!(!o.together, "{o:?}");
        let o = Overlap::from_windows(vec![w(0, MS, 9 * MS), w(1, 0, 10 * MS)], false);
        assert!(o.together, "{o:?}");
        // One child is always together with itself.
        assert_eq!(Overlap::from_windows(vec![w(0, 5, 9)], false).fraction, 1.0);
    }
}
