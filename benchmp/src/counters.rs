//! `--counters`: perf events counted per child over exactly its timed intervals, with the
//! figures derived from them (IPC, misses per kilo-instruction, the clock).

use serde::{Deserialize, Serialize};

use crate::error::Unsupported;
use crate::sys::perf::{Event, Group, GroupReading};

/// What `--counters` without a list counts: perf stat's core set.
pub const DEFAULT_LIST: &str = "cycles,instructions,cache-references,cache-misses,branch-misses";

/// Value parser for `--counters`: `default` (the option alone) or a list of events.
pub fn parse_list(s: &str) -> Result<CounterList, String> {
    let list = if s == "default" { DEFAULT_LIST } else { s };
    crate::sys::perf::parse_events(list)
        .map(CounterList)
        .map_err(|e| format!("{e} (--counters takes the next word as its list: write --counters=LIST, or put a bare --counters last)"))
}

/// The events `--counters` asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterList(pub Vec<Event>);

/// One event's count over the timed intervals (JSON: `event`, `value`, `raw`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Count {
    /// The event as named on the command line.
    pub event: String,
    /// The count, scaled by enabled / running time when the group was multiplexed.
    pub value: f64,
    /// The count the kernel returned.
    pub raw: u64,
}

/// A child's counts over its timed intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counted {
    /// One count per event, in the order asked.
    pub counts: Vec<Count>,
    /// ns the group was enabled while the child ran.
    pub enabled_ns: u64,
    /// ns it was on the PMU (less than `enabled_ns` when multiplexed).
    pub running_ns: u64,
    /// True when the kernel shared the PMU with other groups, so the values are scaled.
    pub multiplexed: bool,
    /// Instructions per cycle, when both were counted.
    pub ipc: Option<f64>,
    /// Cache misses per 1000 instructions, when both were counted.
    pub cache_mpki: Option<f64>,
    /// Branch misses per 1000 instructions, when both were counted.
    pub branch_mpki: Option<f64>,
    /// Cycles per µs the child ran (MHz), when cycles were counted.
    pub clock_mhz: Option<f64>,
}

impl Counted {
    /// The counts of `d` (the difference of two reads of a group of `events`).
    pub fn of(events: &[Event], d: &GroupReading) -> Counted {
        let multiplexed = d.running_ns > 0 && d.running_ns < d.enabled_ns;
        let scale = if multiplexed {
            d.enabled_ns as f64 / d.running_ns as f64
        } else {
            1.0
        };
        let counts: Vec<Count> = events
            .iter()
            .zip(&d.values)
            .map(|(e, &raw)| Count {
                event: e.name.clone(),
                value: raw as f64 * scale,
                raw,
            })
            .collect();
        let find = |want: &str| {
            let want = Event::parse(want).expect("a known name");
            events
                .iter()
                .zip(&counts)
                .find(|(e, _)| e.same(&want))
                .map(|(_, c)| c.value)
        };
        let per = |a: Option<f64>, b: Option<f64>, k: f64| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a * k / b),
            _ => None,
        };
        let (cycles, instructions) = (find("cycles"), find("instructions"));
        let running = (d.running_ns > 0).then_some(d.running_ns as f64);
        Counted {
            ipc: per(instructions, cycles, 1.0),
            cache_mpki: per(find("cache-misses"), instructions, 1000.0),
            branch_mpki: per(find("branch-misses"), instructions, 1000.0),
            // Cycles are counted only while on the PMU: divide by that time.
            clock_mhz: per(cycles.map(|c| c / scale), running, 1000.0),
            counts,
            enabled_ns: d.enabled_ns,
            running_ns: d.running_ns,
            multiplexed,
        }
    }

    /// `cycles 1.23e9, instructions 2.46e9 (IPC 2.00, 3012 MHz)`: the child's text line.
    pub fn describe(&self) -> String {
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|c| format!("{} {}", c.event, number(c.value)))
            .collect();
        let mut derived = Vec::new();
        if let Some(x) = self.ipc {
            derived.push(format!("IPC {x:.2}"));
        }
        if let Some(x) = self.cache_mpki {
            derived.push(format!("cache MPKI {x:.2}"));
        }
        if let Some(x) = self.branch_mpki {
            derived.push(format!("branch MPKI {x:.2}"));
        }
        if let Some(x) = self.clock_mhz {
            derived.push(format!("{x:.0} MHz"));
        }
        if self.multiplexed {
            derived.push(format!(
                "multiplexed: counted {:.0} % of the time, scaled",
                self.running_ns as f64 * 100.0 / self.enabled_ns.max(1) as f64
            ));
        }
        let tail = if derived.is_empty() {
            String::new()
        } else {
            format!(" ({})", derived.join(", "))
        };
        format!("{}{tail}", counts.join(", "))
    }

    /// `cycles=123;instructions=456`: the CSV column.
    pub fn csv_text(&self) -> String {
        self.counts
            .iter()
            .map(|c| format!("{}={:.0}", c.event, c.value))
            .collect::<Vec<_>>()
            .join(";")
    }
}

/// A count in text: whole below a million, else three significant digits.
fn number(x: f64) -> String {
    if x < 1e6 {
        format!("{x:.0}")
    } else {
        format!("{x:.3e}")
    }
}

/// Opens the group once in the calling process, before any child is forked, so a kernel that
/// refuses is one line and exit status 3 instead of a failed child.
pub fn preflight(list: &CounterList) -> Result<(), Unsupported> {
    Group::open(&list.0)
        .map(drop)
        .map_err(|e| Unsupported(format!("--counters: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::perf::parse_events;

    #[test]
    fn derived_figures_and_scaling() {
        let events = parse_events("cycles,instructions,cache-misses,branch-misses").unwrap();
        let d = GroupReading {
            enabled_ns: 2_000_000,
            running_ns: 1_000_000,
            values: vec![3_000_000, 6_000_000, 6_000, 600],
        };
        let c = Counted::of(&events, &d);
        assert!(c.multiplexed);
        assert_eq!(c.counts[0].raw, 3_000_000);
        assert_eq!(c.counts[0].value, 6_000_000.0);
        assert_eq!(c.ipc, Some(2.0));
        assert_eq!(c.cache_mpki, Some(1.0));
        assert_eq!(c.branch_mpki, Some(0.1));
        // 3e6 cycles in the 1 ms the group was on the PMU: 3 GHz.
        assert_eq!(c.clock_mhz, Some(3000.0));
        assert_eq!(
            c.describe(),
            "cycles 6.000e6, instructions 1.200e7, cache-misses 12000, branch-misses 1200 (IPC 2.00, cache MPKI 1.00, branch MPKI 0.10, 3000 MHz, multiplexed: counted 50 % of the time, scaled)"
        );
        assert_eq!(
            c.csv_text(),
            "cycles=6000000;instructions=12000000;cache-misses=12000;branch-misses=1200"
        );
    }

    #[test]
    fn software_counts_have_no_derived_figures() {
        let events = parse_events("task-clock,page-faults").unwrap();
        let d = GroupReading {
            enabled_ns: 5,
            running_ns: 5,
            values: vec![5, 16384],
        };
        let c = Counted::of(&events, &d);
        assert!(!c.multiplexed);
        assert_eq!((c.ipc, c.clock_mhz, c.cache_mpki), (None, None, None));
        assert_eq!(c.describe(), "task-clock 5, page-faults 16384");
    }

    #[test]
    fn lists() {
        assert_eq!(parse_list("default").unwrap().0.len(), 5);
        let e = parse_list("64m").unwrap_err();
        assert!(
            e.contains("not a counter") && e.contains("--counters=LIST"),
            "{e}"
        );
    }
}
