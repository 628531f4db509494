//! How the children of one measurement timed their intervals relative to each other: a
//! parallel figure (a sum of the children's) is only a figure of the machine under that load
//! when the children ran at the same time.
//!
//! The measure is each child's work (iterations) timed while all children were timing, the
//! window from the latest start to the earliest end (an interval that meets it counts whole),
//! as a share of all it timed; the run is together when every child's share is at least
//! [`MIN_OVERLAP`]. Work, not the windows' lengths: a child stopped for most of another's run and then timing alone after it still
//! has a window that overlaps the other's nearly whole, when a busy machine stretches both.
//! The rule has no exemption by size or time: a short run whose children shared too little is
//! as much apart as a long one (a machine fast enough makes every run short). A session
//! measures such a run again ([`ATTEMPTS`]), and refuses the figure when its children still
//! ran apart.

use serde::{Deserialize, Serialize};

/// The words of the refusal of a parallel run whose children ran apart in every attempt
/// (exit 1), which the suite and the tests look for.
pub const RAN_APART: &str = "the children did not run together";

/// Share of each child's timed work below which a parallel run's children count as not having
/// run together.
pub const MIN_OVERLAP: f64 = 0.75;
/// Times a session runs a parallel measurement whose children ran apart before it refuses it.
pub const ATTEMPTS: u32 = 3;

/// One child's timed window: the start of its first timed interval to the end of its last.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Child number.
    pub index: usize,
    /// CPU it was pinned to.
    pub cpu: Option<usize>,
    /// Start, CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    /// End, CLOCK_MONOTONIC ns.
    pub end_ns: u64,
    /// Share of the child's timed iterations that ran in the common window (an interval
    /// partly inside counts whole); 1 in reports from before it was recorded.
    #[serde(default = "whole")]
    pub shared: f64,
}

fn whole() -> f64 {
    1.0
}

impl Window {
    /// Length, ns.
    pub fn len_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// One timed interval of a child: when, and how much work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Start, CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    /// End, CLOCK_MONOTONIC ns.
    pub end_ns: u64,
    /// Iterations timed.
    pub iterations: u64,
}

/// A child's timed intervals, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    /// Child number.
    pub index: usize,
    /// CPU it was pinned to.
    pub cpu: Option<usize>,
    /// Its intervals.
    pub spans: Vec<Span>,
}

impl Timeline {
    /// Share of the iterations timed in intervals that meet `[start, end]` (a zero-length
    /// interval by where it starts); 1 when the child timed nothing. An interval partly inside
    /// counts whole: the children's first and last intervals straddle each other's edges, and
    /// when a run has few of them (children sharing one CPU) counting them by their time inside
    /// would part children that ran together; a child stopped in one interval and timing alone
    /// after it still has every later interval outside.
    fn share_within(&self, start: u64, end: u64) -> f64 {
        let total: f64 = self.spans.iter().map(|s| s.iterations as f64).sum();
        if total <= 0.0 {
            return 1.0;
        }
        let inside: f64 = self
            .spans
            .iter()
            .map(|s| {
                let meets = if s.end_ns == s.start_ns {
                    s.start_ns >= start && s.start_ns <= end
                } else {
                    s.start_ns < end && s.end_ns > start
                };
                if meets { s.iterations as f64 } else { 0.0 }
            })
            .sum();
        inside / total
    }
}

/// How the children of one measurement timed their intervals relative to each other: a
/// parallel figure (a sum of the children's) is only a figure of the machine under that load
/// when the children ran at the same time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overlap {
    /// Each child's timed window, with the share of its work timed in the common window.
    pub windows: Vec<Window>,
    /// Length of the window all children shared (latest start to earliest end), ns; 0 when
    /// some pair did not overlap at all.
    pub common_ns: u64,
    /// Length of the longest child's window, ns.
    pub longest_ns: u64,
    /// The smallest child's share of its timed work done in the common window (1 for a single
    /// child).
    pub fraction: f64,
    /// The children were timed one after another on purpose (`--sequential`).
    pub sequential: bool,
    /// A `benchmp ab` driver stepped the children: every step started them all and waited for
    /// all, so none timed alone for more than one step. Few steps per process, each child's
    /// first and last at the others' edges (and on one CPU the children's steps run in turn):
    /// their share of the common window says nothing more.
    #[serde(default)]
    pub stepped: bool,
    /// Whether the children ran together: one child, sequential by request, stepped by a
    /// driver, or every child doing at least [`MIN_OVERLAP`] of its timed work in the common
    /// window.
    pub together: bool,
    /// Runs it took (up to [`ATTEMPTS`]): those before the last ran apart.
    #[serde(default = "one")]
    pub attempts: u32,
}

fn one() -> u32 {
    1
}

impl Overlap {
    /// The children's windows and shares from their samples (all timed intervals, accepted
    /// or not); `stepped` when a driver stepped them ([`Overlap::stepped`]).
    pub fn of<S, C>(
        children: &[super::ChildRun<S, C>],
        sequential: bool,
        stepped: bool,
    ) -> Overlap {
        let timelines = children
            .iter()
            .map(|c| Timeline {
                index: c.index,
                cpu: c.cpu,
                spans: c
                    .samples
                    .iter()
                    .map(|s| Span {
                        start_ns: s.start_ns,
                        end_ns: s.start_ns + s.elapsed_ns,
                        iterations: s.iterations,
                    })
                    .collect(),
            })
            .collect();
        let o = Overlap::from_timelines(timelines, sequential);
        Overlap {
            stepped,
            together: o.together || stepped,
            ..o
        }
    }

    /// Judges given timelines (see [`Overlap::together`]); a child that timed nothing has no
    /// window.
    pub fn from_timelines(timelines: Vec<Timeline>, sequential: bool) -> Overlap {
        let timed: Vec<&Timeline> = timelines.iter().filter(|t| !t.spans.is_empty()).collect();
        let mut windows: Vec<Window> = timed
            .iter()
            .map(|t| Window {
                index: t.index,
                cpu: t.cpu,
                start_ns: t.spans[0].start_ns,
                end_ns: t.spans.iter().map(|s| s.end_ns).max().unwrap_or(0),
                shared: 0.0,
            })
            .collect();
        let start = windows.iter().map(|w| w.start_ns).max().unwrap_or(0);
        let end = windows.iter().map(|w| w.end_ns).min().unwrap_or(0);
        if end > start {
            for (w, t) in windows.iter_mut().zip(&timed) {
                w.shared = t.share_within(start, end);
            }
        }
        let longest_ns = windows.iter().map(Window::len_ns).max().unwrap_or(0);
        let common_ns = end.saturating_sub(start);
        let fraction = if windows.len() <= 1 {
            1.0
        } else {
            windows.iter().map(|w| w.shared).fold(1.0, f64::min)
        };
        let together = windows.len() <= 1 || sequential || fraction >= MIN_OVERLAP;
        Overlap {
            windows,
            common_ns,
            longest_ns,
            fraction,
            sequential,
            stepped: false,
            together,
            attempts: 1,
        }
    }

    /// What an older report without overlap data reads as: one window, together.
    pub fn unknown() -> Overlap {
        Overlap::from_timelines(Vec::new(), false)
    }

    /// `child 1 (CPU 1) timed 6 % of its work in the 0.110 s all children were timing (its
    /// window 3.020 s)`: the child that shared least.
    pub fn apart(&self) -> String {
        match self
            .windows
            .iter()
            .min_by(|a, b| a.shared.total_cmp(&b.shared))
        {
            Some(w) => format!(
                "{} timed {:.0} % of its work in the {:.3} s all children were timing (its window {:.3} s)",
                super::who(w.index, w.cpu),
                w.shared * 100.0,
                self.common_ns as f64 / 1e9,
                w.len_ns() as f64 / 1e9
            ),
            None => "no timed intervals".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A child timing 100 even intervals from `start_ns` to `end_ns`.
    fn w(index: usize, start_ns: u64, end_ns: u64) -> Timeline {
        let step = (end_ns - start_ns) / 100;
        Timeline {
            index,
            cpu: Some(index),
            spans: (0..100)
                .map(|i| Span {
                    start_ns: start_ns + i * step,
                    end_ns: start_ns + (i + 1) * step,
                    iterations: 1000,
                })
                .collect(),
        }
    }

    /// A child timing `n` intervals of `ms` each, back to back from `start_ms`.
    fn steps(start_ms: u64, n: u64, ms: u64) -> Vec<Span> {
        (0..n)
            .map(|i| Span {
                start_ns: (start_ms + i * ms) * MS,
                end_ns: (start_ms + (i + 1) * ms) * MS,
                iterations: 100,
            })
            .collect()
    }

    #[test]
    fn overlap_of_windows() {
        let judge = |t: Vec<Timeline>| Overlap::from_timelines(t, false);
        // Two children timed together, one a few intervals longer: together.
        let o = judge(vec![w(0, 0, 1100 * MS), w(1, 2 * MS, 1400 * MS)]);
        assert_eq!(o.common_ns, 1098 * MS);
        assert!(o.together && o.fraction > 0.78, "{o:?}");
        // One child stopped for three seconds in the middle of its run: apart.
        let o = judge(vec![w(0, 0, 110 * MS), w(1, 0, 3110 * MS)]);
        assert!(!o.together, "{o:?}");
        assert!(
            o.apart().contains(
                "child 1 (CPU 1) timed 4 % of its work in the 0.110 s all children were timing (its window 3.110 s)"
            ),
            "{}",
            o.apart()
        );
        // ...unless the children were meant to run one by one.
        let t = vec![w(0, 0, 110 * MS), w(1, 0, 3110 * MS)];
        assert!(Overlap::from_timelines(t, true).together);
        // Disjoint windows share nothing.
        let o = judge(vec![w(0, 0, 5000 * MS), w(1, 6000 * MS, 11000 * MS)]);
        assert_eq!(o.common_ns, 0);
        assert!(!o.together && o.fraction == 0.0, "{o:?}");
        // A short run is held to the same rule: no exemption by time (the suite's bw_mem -P 2
        // once summed 2.7 and 26.2 GB/s of children whose windows shared 16 %).
        let o = judge(vec![w(0, 0, 60 * MS), w(1, 0, 800 * MS)]);
        assert!(!o.together && o.fraction < MIN_OVERLAP, "{o:?}");
        let o = judge(vec![w(0, 0, 16 * MS), w(1, 0, 100 * MS)]);
        assert!(!o.together, "{o:?}");
        let o = judge(vec![w(0, MS, 9 * MS), w(1, 0, 10 * MS)]);
        assert!(o.together, "{o:?}");
        // One child is always together with itself.
        assert_eq!(judge(vec![w(0, 5, 9)]).fraction, 1.0);
        // A child that timed nothing has no window.
        let none = Timeline {
            index: 1,
            cpu: None,
            spans: Vec::new(),
        };
        assert_eq!(judge(vec![w(0, 5, 9), none]).windows.len(), 1);
    }

    #[test]
    fn a_child_stopped_then_timing_alone_is_apart_though_the_windows_overlap() {
        // A busy machine stretched child 0's 250 intervals over 15 s; child 1 timed 16, was
        // stopped until child 0 was done, then timed its other 234 in 4 s alone. The windows
        // share 15 of 19 s (79 %, together by their lengths), but child 1 did little of its work
        // beside child 0 (7 %): its figure is a machine with one child running, not two.
        let zero = Timeline {
            index: 0,
            cpu: Some(0),
            spans: steps(0, 250, 60),
        };
        let mut spans = steps(0, 16, 60);
        // The interval the stop fell in, and the rest after child 0 ended.
        spans.push(Span {
            start_ns: 960 * MS,
            end_ns: 15_010 * MS,
            iterations: 100,
        });
        spans.extend(steps(15_010, 233, 17));
        let one = Timeline {
            index: 1,
            cpu: Some(1),
            spans,
        };
        let o = Overlap::from_timelines(vec![zero, one], false);
        let by_length = o.common_ns as f64 / o.longest_ns as f64;
        assert!(by_length > MIN_OVERLAP, "{by_length}");
        assert!(!o.together, "{o:?}");
        assert!(o.fraction < 0.08, "{o:?}");
        assert_eq!(o.windows[0].shared, 1.0);
        assert!(
            o.apart().starts_with("child 1 (CPU 1) timed 7 %"),
            "{}",
            o.apart()
        );
        // Timed side by side at different paces, each interval inside the other's window:
        // together, whatever the pace.
        let o = Overlap::from_timelines(
            vec![
                Timeline {
                    index: 0,
                    cpu: Some(0),
                    spans: steps(0, 250, 4),
                },
                Timeline {
                    index: 1,
                    cpu: Some(1),
                    spans: steps(1, 100, 10),
                },
            ],
            false,
        );
        assert!(o.together && o.fraction > 0.99, "{o:?}");
    }

    #[test]
    fn a_workers_few_steps_on_one_cpu_are_together() {
        // Four paced steps 20 ms apart (the other build's steps between them), two children on
        // one CPU: in each step child 0 runs its 2 ms first and child 1's interval, started
        // with it, ends 2 ms later. Counted by their time inside the common window, the first
        // and last steps would leave child 1 at 0.5-0.75; they meet it, so they count.
        let step = |i: u64, late: u64| Span {
            start_ns: (i * 20 + late) * MS / 10,
            end_ns: (i * 20 + late + 20 + late * 19) * MS / 10,
            iterations: 245_354,
        };
        let zero = Timeline {
            index: 0,
            cpu: Some(0),
            spans: (0..4).map(|i| step(i * 10, 0)).collect(),
        };
        let one = Timeline {
            index: 1,
            cpu: Some(0),
            spans: (0..4).map(|i| step(i * 10, 1)).collect(),
        };
        let o = Overlap::from_timelines(vec![zero, one], false);
        assert!(o.together && o.fraction == 1.0, "{o:?}");
    }
}
