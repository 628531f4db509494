//! cpufreq's record of the time each CPU spent at each clock (`stats/time_in_state`): read
//! by a child before its first timed interval and after its last, the difference says at
//! which clocks the kernel ran it, and for how long. Android kernels keep it; many x86
//! distributions build it too.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{ClockSource, RunClock};

/// Share of the timed intervals a state must hold to count as "used" when judging whether
/// the clock moved: a single 10 ms tick at a ramp-up state is not a throttle.
pub const MIN_SHARE: f64 = 0.05;

/// Time at one clock over the timed intervals (JSON: `mhz`, `ms`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StateTime {
    /// The state's clock, MHz.
    pub mhz: f64,
    /// Time spent in it, ms.
    pub ms: u64,
}

/// One read of `time_in_state`: (kHz, time in 10 ms units) per state, as the kernel lists them.
pub type Table = Vec<(u64, u64)>;

/// The table of `cpu` under the sysfs root, if cpufreq keeps one for it.
pub fn read(sysfs: &Path, cpu: usize) -> Option<Table> {
    let path = sysfs.join(format!(
        "devices/system/cpu/cpu{cpu}/cpufreq/stats/time_in_state"
    ));
    parse(&crate::sysfs::read_attr(&path).ok()?)
}

/// Parses `time_in_state` text: one `kHz ticks` pair per line; `None` if a line is not one.
pub fn parse(text: &str) -> Option<Table> {
    let table: Option<Table> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut w = l.split_whitespace();
            let khz = w.next()?.parse().ok()?;
            let ticks = w.next()?.parse().ok()?;
            w.next().is_none().then_some((khz, ticks))
        })
        .collect();
    table.filter(|t| !t.is_empty())
}

/// The clock over the time between two reads: the time-weighted mean of the states the
/// kernel used, with the lowest and highest; `None` when no time passed in any state (a run
/// shorter than one 10 ms tick) or the tables do not match.
pub fn clock_between(before: &Table, after: &Table) -> Option<RunClock> {
    if before.len() != after.len() {
        return None;
    }
    let mut states: Vec<StateTime> = Vec::new();
    for (&(f0, t0), &(f1, t1)) in before.iter().zip(after) {
        if f0 != f1 {
            return None;
        }
        let ticks = t1.saturating_sub(t0);
        if ticks > 0 && f1 > 0 {
            states.push(StateTime {
                mhz: f1 as f64 / 1000.0,
                ms: ticks * 10,
            });
        }
    }
    let total: u64 = states.iter().map(|s| s.ms).sum();
    if total == 0 {
        return None;
    }
    states.sort_by(|a, b| b.mhz.total_cmp(&a.mhz));
    let mean = states.iter().map(|s| s.mhz * s.ms as f64).sum::<f64>() / total as f64;
    Some(RunClock {
        mhz: mean,
        source: ClockSource::TimeInState,
        low_mhz: states.last().map_or(mean, |s| s.mhz),
        high_mhz: states.first().map_or(mean, |s| s.mhz),
        states,
    })
}

/// The lowest and highest clocks that held at least [`MIN_SHARE`] of the time.
pub fn used_range(clock: &RunClock) -> (f64, f64) {
    let total: u64 = clock.states.iter().map(|s| s.ms).sum();
    let used: Vec<f64> = clock
        .states
        .iter()
        .filter(|s| total > 0 && s.ms as f64 >= MIN_SHARE * total as f64)
        .map(|s| s.mhz)
        .collect();
    match (
        used.iter().copied().reduce(f64::min),
        used.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) => (lo, hi),
        _ => (clock.low_mhz, clock.high_mhz),
    }
}

/// `70 % at 1190, 30 % at 2266 MHz`: where the time went, most first.
pub fn describe_states(clock: &RunClock) -> String {
    let total: u64 = clock.states.iter().map(|s| s.ms).sum::<u64>().max(1);
    let mut v = clock.states.clone();
    v.sort_by_key(|s| std::cmp::Reverse(s.ms));
    let parts: Vec<String> = v
        .iter()
        .map(|s| {
            format!(
                "{:.0} % at {:.0}",
                s.ms as f64 * 100.0 / total as f64,
                s.mhz
            )
        })
        .collect();
    format!("{} MHz", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_weights_each_state_by_its_time() {
        let before = parse("2265600 1000\n1785600 50\n1190400 7\n").unwrap();
        let after = parse("2265600 1003\n1785600 50\n1190400 14\n").unwrap();
        let c = clock_between(&before, &after).unwrap();
        assert_eq!(c.source, ClockSource::TimeInState);
        assert_eq!(c.states.len(), 2, "the unused state is left out: {c:?}");
        assert_eq!((c.high_mhz, c.low_mhz), (2265.6, 1190.4));
        assert!(
            (c.mhz - (2265.6 * 3.0 + 1190.4 * 7.0) / 10.0).abs() < 1e-9,
            "{c:?}"
        );
        assert_eq!(
            c.states[0],
            StateTime {
                mhz: 2265.6,
                ms: 30
            }
        );
        assert_eq!(describe_states(&c), "70 % at 1190, 30 % at 2266 MHz");
        assert_eq!(used_range(&c), (1190.4, 2265.6));
    }

    #[test]
    fn nothing_is_made_of_too_little_or_mismatched_data() {
        let t = parse("2265600 1000\n1190400 7\n").unwrap();
        assert_eq!(clock_between(&t, &t), None, "no tick passed");
        let other = parse("2265600 1000\n").unwrap();
        assert_eq!(clock_between(&t, &other), None);
        let moved = parse("2265600 1000\n1190401 9\n").unwrap();
        assert_eq!(clock_between(&t, &moved), None);
        for bad in ["", "2265600\n", "a b\n", "1 2 3\n"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_brief_state_is_not_a_used_one() {
        let before = parse("3000000 0\n1000000 0\n").unwrap();
        let after = parse("3000000 99\n1000000 1\n").unwrap();
        let c = clock_between(&before, &after).unwrap();
        assert_eq!((c.low_mhz, c.high_mhz), (1000.0, 3000.0));
        assert_eq!(used_range(&c), (3000.0, 3000.0));
    }
}
