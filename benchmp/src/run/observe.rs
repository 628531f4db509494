//! What a measuring child reads right around its timed intervals besides the time: its clock
//! (probe, cycles counter, cpufreq's time_in_state), the kernel's CPU-migration count and
//! the events `--counters` asked for. Counters are opened before the common start (opening
//! can take milliseconds) and read as close to the intervals as possible: the probes lie
//! outside the counted span, the counters' reads inside the probes'.

use std::path::PathBuf;

use crate::counters::Counted;
use crate::error::Unsupported;
use crate::freq::probe::{Probe, ProbedClock, Reference};
use crate::freq::residency::{self, Table};
use crate::freq::{ClockSource, RunClock};
use crate::sys::perf::{Counter, Event, Group, GroupReading, SoftwareEvent};

/// The open counters of a child and where its cpufreq record is.
#[derive(Debug)]
pub(super) struct Observers {
    migrations: Option<Counter>,
    counters: Option<Group>,
    cycles: Option<Group>,
    sysfs: PathBuf,
    cpu: Option<usize>,
    /// What the machine says the CPU's clock is, for the probes to be held against.
    reference: Option<Reference>,
    /// False under benchmp ab, whose driver sizes and spaces the repetitions.
    own_intervals: bool,
}

/// The readings taken before the first timed interval.
#[derive(Debug)]
pub(super) struct Before {
    probe: Option<Probe>,
    residency: Option<Table>,
    migrations: Option<u64>,
    counters: Option<GroupReading>,
    cycles: Option<GroupReading>,
}

/// What the child observed over its timed intervals.
#[derive(Debug, Default)]
pub(super) struct Observed {
    pub migrations: Option<u64>,
    pub clock: Option<ProbedClock>,
    pub run_clock: Option<RunClock>,
    pub counters: Option<Counted>,
}

impl Observers {
    /// Opens the counters: `--counters`' group (refused: the child fails with exit status 3)
    /// and, unless that group counts cycles, a cycles counter of its own that is simply absent
    /// where the kernel refuses it.
    pub(super) fn open(
        cfg: &super::RunConfig,
        cpu: Option<usize>,
    ) -> Result<Observers, Unsupported> {
        let own_intervals = cfg.paced.is_none();
        let counters = if own_intervals && !cfg.counters.is_empty() {
            Some(Group::open(&cfg.counters).map_err(|e| Unsupported(format!("--counters: {e}")))?)
        } else {
            None
        };
        let counts_cycles = cfg.counters.iter().any(Event::is_cycles);
        let cycles = (own_intervals && !counts_cycles)
            .then(|| Event::parse("cycles").ok())
            .flatten()
            .and_then(|e| Group::open(&[e]).ok());
        let reference = cpu
            .filter(|_| own_intervals)
            .and_then(|c| Reference::read(&cfg.sysfs, c));
        Ok(Observers {
            migrations: Counter::open(SoftwareEvent::CpuMigrations),
            counters,
            cycles,
            sysfs: cfg.sysfs.clone(),
            cpu,
            reference,
            own_intervals,
        })
    }

    /// Right before the first timed interval.
    pub(super) fn before(&mut self) -> Before {
        let probe = self.probe();
        let residency = self.residency();
        Before {
            probe,
            residency,
            migrations: self.migrations.as_mut().and_then(Counter::read),
            counters: self.counters.as_mut().and_then(|g| g.read().ok()),
            cycles: self.cycles.as_mut().and_then(|g| g.read().ok()),
        }
    }

    /// Right after the last timed interval.
    pub(super) fn after(&mut self, before: Before) -> Observed {
        let counters = self.counters.as_mut().and_then(|g| g.read().ok());
        let cycles = self.cycles.as_mut().and_then(|g| g.read().ok());
        let migrations = self.migrations.as_mut().and_then(Counter::read);
        let residency = self.residency();
        let probe = self.probe();
        let counted = match (&self.counters, before.counters, counters) {
            (Some(g), Some(a), Some(b)) => Some(Counted::of(g.events(), &b.since(&a))),
            _ => None,
        };
        let cycles_clock = counted
            .as_ref()
            .and_then(|c| c.clock_mhz)
            .or_else(|| match (before.cycles, cycles) {
                (Some(a), Some(b)) => {
                    let d = b.since(&a);
                    (d.running_ns > 0 && d.values[0] > 0)
                        .then(|| d.values[0] as f64 * 1000.0 / d.running_ns as f64)
                }
                _ => None,
            })
            .map(|mhz| RunClock {
                mhz,
                source: ClockSource::Cycles,
                low_mhz: mhz,
                high_mhz: mhz,
                states: Vec::new(),
            });
        let residency_clock = match (before.residency, residency) {
            (Some(a), Some(b)) => residency::clock_between(&a, &b),
            _ => None,
        };
        Observed {
            migrations: match (before.migrations, migrations) {
                (Some(a), Some(b)) => Some(b.saturating_sub(a)),
                _ => None,
            },
            clock: before
                .probe
                .zip(probe)
                .map(|(before, after)| ProbedClock { before, after }),
            run_clock: cycles_clock.or(residency_clock),
            counters: counted,
        }
    }

    /// A clock probe, unless the driver of benchmp ab paces the intervals.
    fn probe(&self) -> Option<Probe> {
        self.own_intervals
            .then(|| crate::freq::probe::probe(self.reference.as_ref()))
            .flatten()
    }

    fn residency(&self) -> Option<Table> {
        let cpu = self.cpu.filter(|_| self.own_intervals)?;
        residency::read(&self.sysfs, cpu)
    }
}
