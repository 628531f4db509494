//! A quiet machine before each entry, as sbc-bench waits for one: the suite samples how busy
//! the CPUs an entry will run on are (`/proc/stat`, over half a second: every task's time and
//! the hypervisor's steal, since the suite itself sleeps meanwhile) and waits, bounded, until
//! none is busier than [`BUSY_PCT`]; it says so in one line when it waits, and in another when
//! it went on while they were still busy. A noisy entry is run once more at the end.
//!
//! The wait is bounded per entry (`--quiet-wait`), and after a wait that ran out the next
//! ones are short ([`AFTER_TIMEOUT`]): on a machine with a steady hog the suite still finishes,
//! in about the time it takes without one.

use std::time::{Duration, Instant};

/// A CPU busier than this (percent of a sampling window) is not quiet.
pub const BUSY_PCT: f64 = 10.0;
/// One sampling window.
pub const WINDOW: Duration = Duration::from_millis(500);
/// The wait after one that ran out: the machine is busy for longer than an entry waits.
pub const AFTER_TIMEOUT: Duration = Duration::from_secs(2);

/// One CPU's time counters from `/proc/stat`, in ticks: busy (user, nice, system, irq,
/// softirq, steal) and all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticks {
    /// CPU number.
    pub cpu: usize,
    /// Ticks not idle nor waiting for I/O.
    pub busy: u64,
    /// All ticks.
    pub total: u64,
}

/// The per-CPU lines (`cpu0 …`) of a `/proc/stat` text.
pub fn parse(stat: &str) -> Vec<Ticks> {
    stat.lines()
        .filter_map(|l| {
            let mut words = l.split_ascii_whitespace();
            let cpu = words.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = words.filter_map(|w| w.parse().ok()).collect();
            // user nice system idle iowait irq softirq steal (guest time is in user already).
            if v.len() < 8 {
                return None;
            }
            let idle = v[3] + v[4];
            let total: u64 = v[..8].iter().sum();
            Some(Ticks {
                cpu,
                busy: total - idle,
                total,
            })
        })
        .collect()
}

/// How busy each of `cpus` was between two readings, percent (CPUs missing from either are
/// left out).
pub fn busy(before: &[Ticks], after: &[Ticks], cpus: &[usize]) -> Vec<(usize, f64)> {
    cpus.iter()
        .filter_map(|&c| {
            let a = before.iter().find(|t| t.cpu == c)?;
            let b = after.iter().find(|t| t.cpu == c)?;
            let total = b.total.checked_sub(a.total)?;
            let used = b.busy.checked_sub(a.busy)?;
            (total > 0).then(|| (c, 100.0 * used as f64 / total as f64))
        })
        .collect()
}

/// `CPU 1 48 % busy, CPU 3 12 % busy`: the busy ones of `busy`.
pub fn describe(busy: &[(usize, f64)]) -> String {
    busy.iter()
        .filter(|(_, p)| *p > BUSY_PCT)
        .map(|(c, p)| format!("CPU {c} {p:.0} % busy"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How one wait went.
#[derive(Debug, Clone, PartialEq)]
pub struct Waited {
    /// Time spent waiting.
    pub waited: Duration,
    /// The last window's busy CPUs (empty when it went on quiet).
    pub busy: Vec<(usize, f64)>,
}

impl Waited {
    /// Whether the machine was quiet when the entry started.
    pub fn quiet(&self) -> bool {
        self.busy.iter().all(|(_, p)| *p <= BUSY_PCT)
    }
}

/// Samples `cpus` window by window until none is busier than [`BUSY_PCT`] or `limit` has
/// passed (or a stop signal came); `say` gets the line to print when it starts waiting.
/// `None` where `/proc/stat` cannot be read (nothing is waited for).
pub fn wait(cpus: &[usize], limit: Duration, say: &mut dyn FnMut(String)) -> Option<Waited> {
    let start = Instant::now();
    let mut said = false;
    loop {
        let before = parse(&std::fs::read_to_string("/proc/stat").ok()?);
        std::thread::sleep(WINDOW);
        let after = parse(&std::fs::read_to_string("/proc/stat").ok()?);
        let now = busy(&before, &after, cpus);
        let quiet = now.iter().all(|(_, p)| *p <= BUSY_PCT);
        let out =
            quiet || start.elapsed() >= limit || benchmp::sys::process::interrupted().is_some();
        if out {
            return Some(Waited {
                waited: start.elapsed(),
                busy: if quiet { Vec::new() } else { now },
            });
        }
        if !said {
            say(format!(
                "   waiting for a quiet machine ({}; up to {:.0} s)",
                describe(&now),
                limit.as_secs_f64()
            ));
            said = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "cpu  100 0 100 1000 0 0 0 0 0 0\n\
        cpu0 50 0 50 500 0 0 0 0 0 0\n\
        cpu1 50 0 50 500 0 0 0 0 0 0\n\
        intr 1 2 3\n";
    // Over the window: CPU 0 idle but for 2 of 100 ticks, CPU 1 busy 60 of 100 (40 of them
    // stolen by the hypervisor).
    const AFTER: &str = "cpu  200 0 200 1100 0 0 0 0 0 0\n\
        cpu0 51 0 51 598 0 0 0 0 0 0\n\
        cpu1 60 0 60 540 0 0 0 40 0 0\n";

    #[test]
    fn busy_shares_per_cpu_count_steal_and_leave_out_the_total_line() {
        let (b, a) = (parse(BEFORE), parse(AFTER));
        assert_eq!(b.len(), 2, "{b:?}");
        let shares = busy(&b, &a, &[0, 1, 7]);
        assert_eq!(shares.len(), 2, "no CPU 7");
        assert!((shares[0].1 - 2.0).abs() < 1e-9, "{shares:?}");
        assert!((shares[1].1 - 60.0).abs() < 1e-9, "{shares:?}");
        assert_eq!(describe(&shares), "CPU 1 60 % busy");
        assert!(parse("cpu0 1 2 3\n").is_empty(), "too few fields");
        let w = Waited {
            waited: Duration::ZERO,
            busy: shares,
        };
        assert!(!w.quiet());
    }

    #[test]
    fn a_machine_busy_throughout_is_waited_for_no_longer_than_the_limit() {
        // A busy loop on this process's CPU keeps it busy; whatever the machine does besides,
        // the wait ends by the limit (and a window).
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let hog = std::thread::spawn(move || {
            while !s.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        let cpus: Vec<usize> =
            (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
        let mut lines = Vec::new();
        let w = wait(&cpus, Duration::from_millis(600), &mut |l| lines.push(l)).unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        hog.join().unwrap();
        assert!(w.waited < Duration::from_millis(600) + 3 * WINDOW, "{w:?}");
        // Quiet at once (the hog between two windows on another CPU), or waited and said so.
        if !w.quiet() || w.waited >= 2 * WINDOW {
            assert_eq!(lines.len(), 1, "{lines:?}");
            assert!(
                lines[0].contains("waiting for a quiet machine"),
                "{lines:?}"
            );
        }
    }
}
