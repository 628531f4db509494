//! The harness: one forked, pinned process per parallel copy, lmbench's ready/go/done/result/exit
//! protocol over pipes, and lmbench's interval loop (calibrated count, acceptance, re-sizing).
//!
//! Differences from lmbench's benchmp, on purpose:
//! - Each child sizes its own iteration count on its own CPU (under the same load as the run),
//!   instead of one baseline run whose count makes every child's interval last a second. On a
//!   phone the little cores would otherwise run far longer intervals than the big ones, and the
//!   baseline run doubles the cost of every parallel measurement.
//! - Every sample keeps its child's identity (pid, CPU), so per-core and per-cluster figures can
//!   be computed; lmbench merges the arrays and loses it.
//! - Failures are named: a child that crashes, exits early, hangs, or cannot be pinned makes the
//!   run fail with its index and CPU, and every other child is killed and reaped.
//!
//! `protocol` holds the pipes' messages, `parent` forks and drives the children, `child` is a
//! child's life from pin to report.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::sys::usage::ResourceUsage;

mod child;
pub mod error;
mod observe;
pub mod overlap;
mod parent;
mod protocol;
pub mod worker;

pub use error::{Error, Stage};
pub use parent::{Idle, run, run_beside};

/// Any error a tool's benchmark can fail to build with: the child reports it with its causes
/// and the exit status the framework's types in it decide ([`error::PROBES`]).
pub type BuildError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What builds a child's benchmark, in the child once it is pinned: any
/// `FnMut(&ChildInfo) -> Result<B, BuildError>` (`?` turns any error into one), named once for
/// every function that takes one.
pub trait Make<B>: FnMut(&ChildInfo) -> Result<B, BuildError> {}

impl<B, F: FnMut(&ChildInfo) -> Result<B, BuildError>> Make<B> for F {}

/// The load benchmark of a run without load children (never built).
pub(crate) fn parent_idle() -> Idle {
    Idle
}

/// Data a tool keeps in its report: serialisable, comparable, cloneable. Blanket-implemented;
/// `()` is the type of "nothing recorded".
pub trait Data:
    Serialize + DeserializeOwned + Clone + std::fmt::Debug + PartialEq + 'static
{
}

impl<T: Serialize + DeserializeOwned + Clone + std::fmt::Debug + PartialEq + 'static> Data for T {}

/// A benchmark body. lmbench's `benchmark(iterations, cookie)`, with the per-child state in
/// `self` (built after pinning) and a checksum returned so the optimiser must do the work.
/// What it records about its intervals and itself is typed, so a tool reads its own report
/// back as the types it wrote.
pub trait Benchmark {
    /// What it records about one timed interval (`()`: nothing).
    type Sample: Data;
    /// What it records about the child once it is done (`()`: nothing).
    type Child: Data;

    /// Performs the operation `iterations` times. Must be callable any number of times.
    fn run(&mut self, iterations: u64) -> u64;

    /// Called right after each timed interval (outside the timing): a tool-specific record of
    /// that interval kept with its sample, e.g. the CRCs or checked values to validate.
    /// The default records nothing.
    fn sample_detail(&mut self) -> Option<Self::Sample> {
        None
    }

    /// Called once when the child is done: tool-specific facts about the child (e.g. the
    /// pages its buffers obtained), kept in its result. The default records nothing.
    fn child_detail(&mut self) -> Option<Self::Child> {
        None
    }

    /// The time the last [`Benchmark::run`] spent in the operation itself, ns, for a benchmark
    /// that times each operation with untimed preparation between them (dto's cache flushes
    /// and injected page faults). A `benchmp ab` repetition reports it as its net time, so
    /// the figure is the operation's. The default: none, the whole call is the operation.
    fn timed_ns(&mut self) -> Option<u64> {
        None
    }

    /// Untimed work that keeps the CPU loaded while the child waits for the common start and
    /// after its own timed intervals, until every child is done (lmbench runs the benchmark
    /// meanwhile). Defaults to `run`; a benchmark whose state must not change between timed
    /// intervals can do the work on a spare copy instead.
    fn keep_busy(&mut self, iterations: u64) -> u64 {
        self.run(iterations)
    }

    /// True when [`Benchmark::renew`] gives fresh buffers (a `benchmp ab` worker says so, and
    /// the driver asks for them between blocks of repetitions).
    const RENEWS: bool = false;

    /// Replaces the benchmark's buffers with fresh ones of the same size and pages, first
    /// touched on this CPU, so that where their pages landed varies between blocks of a
    /// process's repetitions instead of holding for its life. False: nothing was renewed
    /// (none to renew, or no memory for the new ones beside the old).
    fn renew(&mut self) -> bool {
        false
    }
}

/// What a child knows about itself when it builds its benchmark state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildInfo {
    /// Child number, 0-based.
    pub index: usize,
    /// CPU it is pinned to (`None`: not pinned).
    pub cpu: Option<usize>,
    /// Number of measuring children in the run.
    pub parallel: usize,
    /// What the child does in the run.
    pub role: Role,
}

/// A child's part in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Times its benchmark in intervals (every child of an ordinary run).
    Measure,
    /// Runs its benchmark without pause from before the measuring children's first interval
    /// until after their last, and reports the rate it achieved over exactly their window.
    Load,
}

/// How many iterations each timed interval runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Iterations {
    /// Size the count so an interval lasts about `enough` (lmbench). Without a hint the count
    /// grows from 1 before the common start; with one (e.g. predicted from the previous size of
    /// a sweep) the first timed interval runs the hint and, as in lmbench's timing loop, counts
    /// as a sample when it is long enough and re-sizes the count when it is not.
    Calibrate {
        /// First count to time.
        hint: Option<u64>,
    },
    /// Run exactly this count per interval and accept every interval (fixed-work benchmarks).
    Fixed(u64),
}

/// Settings of one measurement.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Name of the measurement (for markers and messages).
    pub label: String,
    /// CPU of each child (`None`: unpinned); its length is the parallelism.
    pub placement: Vec<Option<usize>>,
    /// Time the parent waits after all children are ready before starting, µs (lmbench -W).
    pub warmup_us: u64,
    /// Accepted samples wanted per child (lmbench -N).
    pub repetitions: usize,
    /// Minimum interval, ns; samples shorter than 0.95 of it are not accepted.
    pub enough_ns: u64,
    /// Clock-read cost subtracted from each interval, ns.
    pub timing_overhead_ns: f64,
    /// Per-iteration loop cost subtracted from each interval, ns (0 to not subtract).
    pub loop_overhead_ns: f64,
    /// How the count is chosen.
    pub iterations: Iterations,
    /// A child silent for this long (plus four times its longest interval) is called hung.
    pub child_timeout: Duration,
    /// Give each child its start only after the one before it is done, instead of all at
    /// once; waiting children sleep instead of keeping their CPUs busy.
    pub sequential: bool,
    /// CPU of each load child (`None`: unpinned); empty for an ordinary run.
    pub loads: Vec<Option<usize>>,
    /// Worker mode ([`worker`]): the children time one repetition per step of the driver,
    /// each accepted, with the count the step names; `None` for an ordinary run.
    pub paced: Option<Paced>,
    /// Events each measuring child counts over its timed intervals (`--counters`; empty:
    /// none).
    pub counters: Vec<crate::sys::perf::Event>,
    /// The sysfs root the children read cpufreq's time_in_state under.
    pub sysfs: std::path::PathBuf,
}

impl RunConfig {
    /// Whether the measuring children start their timed intervals on one signal after all
    /// took their readings (several children timed at once, pacing their own intervals): a
    /// parallel figure needs their windows to overlap.
    pub fn starts_together(&self) -> bool {
        self.placement.len() > 1 && !self.sequential && self.paced.is_none()
    }
}

/// What a worker tells the driver about a measurement besides its name.
#[derive(Debug, Clone)]
pub struct Paced {
    /// How a sample becomes the figure.
    pub metric: crate::schema::Metric,
    /// The tool's parameters of the measurement, as in its report.
    pub params: serde_json::Value,
    /// What sizes it besides its name ([`crate::ToolData::sizing`]).
    pub sizing: crate::schema::Sizing,
}

/// What one load child achieved over the measuring children's window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadRun {
    /// Child number (after the measuring children's).
    pub index: usize,
    /// Process id.
    pub pid: i32,
    /// CPU it was pinned to.
    pub cpu: Option<usize>,
    /// Start of its first batch, CLOCK_MONOTONIC ns.
    pub started_ns: u64,
    /// End of its last batch, ns.
    pub stopped_ns: u64,
    /// The measuring window it was judged over: first timed interval's start to the last
    /// one's end over every measuring child, ns.
    pub window_start_ns: u64,
    /// End of that window, ns.
    pub window_end_ns: u64,
    /// Iterations completed within the window (batches cut by the window counted pro rata).
    pub iterations: f64,
    /// Batches it ran in all.
    pub batches: u64,
    /// Median batch length, ns.
    pub median_batch_ns: u64,
    /// Longest batch overlapping the window, ns: a stop (a debugger, a freezer) shows here.
    pub longest_batch_ns: u64,
    /// Time inside the window spent beyond [`LoadRun::STALL_FACTOR`] × the median batch, ns:
    /// the load was not running then.
    pub stalled_ns: u64,
    /// Ran from before the window to after it and stalled for at most a
    /// [`LoadRun::MAX_STALLED_PARTS`]th of it: it loaded the whole window.
    pub ran_through: bool,
    /// XOR of its benchmark's checksums.
    pub checksum: u64,
}

impl LoadRun {
    /// A batch this many times the median is a stall.
    pub const STALL_FACTOR: u64 = 10;
    /// A load may stall for at most this fraction (1/n) of the window.
    pub const MAX_STALLED_PARTS: u64 = 10;

    /// `load child 2 (CPU 1)`.
    pub fn who(&self) -> String {
        format!("load {}", who(self.index, self.cpu))
    }

    /// The window's length, ns.
    pub fn window_ns(&self) -> u64 {
        self.window_end_ns.saturating_sub(self.window_start_ns)
    }

    /// Units per second over the window, for `per_iteration` units per iteration.
    pub fn rate(&self, per_iteration: f64) -> f64 {
        match self.window_ns() {
            0 => 0.0,
            ns => self.iterations * per_iteration * 1e9 / ns as f64,
        }
    }
}

/// One timed interval of one child, with what the benchmark recorded about it (`S`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "S: Data")]
pub struct Sample<S = ()> {
    /// Iterations run.
    pub iterations: u64,
    /// Clock difference, ns.
    pub elapsed_ns: u64,
    /// After subtracting timing and loop overheads (lmbench's u), ns.
    pub net_ns: u64,
    /// Start of the interval, CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    /// Whether it counts (at least 0.95 × enough, or a fixed-count run).
    pub accepted: bool,
    /// CPU at the start of the interval.
    pub cpu_start: Option<usize>,
    /// CPU at the end of the interval.
    pub cpu_end: Option<usize>,
    /// What the benchmark recorded about this interval ([`Benchmark::sample_detail`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<S>,
}

/// A phase of a child's life, mirrored by a trace_marker slice of the same name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phase {
    /// `init`, `calibrate`, `warmup`, `rep` or `cooldown`.
    pub name: String,
    /// Repetition number for `rep` phases.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rep: Option<usize>,
    /// Start, CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    /// End, CLOCK_MONOTONIC ns.
    pub end_ns: u64,
}

/// Everything one child measured and observed, with what the benchmark recorded about each
/// interval (`S`) and about the child (`C`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "S: Data, C: Data")]
pub struct ChildRun<S = (), C = ()> {
    /// Child number.
    pub index: usize,
    /// Process id.
    pub pid: i32,
    /// CPU it was pinned to (`None`: not pinned).
    pub cpu: Option<usize>,
    /// Distinct CPUs seen at interval boundaries, in order of first sight.
    pub cpus_seen: Vec<usize>,
    /// True when it was seen on more than one CPU during timing.
    pub migrated: bool,
    /// CPU migrations counted by the kernel during timing (software perf counter), if available.
    pub migrations: Option<u64>,
    /// Context switches and faults during timing.
    pub usage: ResourceUsage,
    /// CPU time the child got divided by wall time, over the timed phase (1.0 = never
    /// displaced; lower means other tasks or the hypervisor took its CPU).
    pub cpu_share: f64,
    /// Iterations per interval after calibration.
    pub iterations: u64,
    /// Intervals spent sizing the count.
    pub calibration_intervals: u32,
    /// Time spent sizing the count, ns.
    pub calibration_ns: u64,
    /// Every timed interval, accepted or not, in order.
    pub samples: Vec<Sample<S>>,
    /// Phases, in order (the child's trace slices).
    pub phases: Vec<Phase>,
    /// XOR of all benchmark return values (keeps the work observable).
    pub checksum: u64,
    /// True when the child stopped before collecting `repetitions` accepted samples.
    pub gave_up: bool,
    /// Sum of elapsed time of the timed intervals, ns.
    pub timed_ns: u64,
    /// What the benchmark recorded about this child ([`Benchmark::child_detail`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<C>,
    /// The clock it ran at, probed right before its first timed interval and right after its
    /// last (absent under benchmp ab, and where there is no probe for the architecture).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clock: Option<crate::freq::probe::ProbedClock>,
    /// The clock over its timed intervals from its cycles counter or cpufreq's
    /// time_in_state, where the machine has either.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub run_clock: Option<crate::freq::RunClock>,
    /// What `--counters` counted over its timed intervals.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub counters: Option<crate::counters::Counted>,
}

impl<S, C> ChildRun<S, C> {
    /// The clock it ran at from the best source it had: cycles counter, time_in_state,
    /// then the mean of its two probes.
    pub fn measured_clock(&self) -> Option<(f64, crate::freq::ClockSource)> {
        match (&self.run_clock, self.clock.as_ref().and_then(|p| p.mhz())) {
            (Some(k), _) => Some((k.mhz, k.source)),
            (None, Some(mhz)) => Some((mhz, crate::freq::ClockSource::Probe)),
            (None, None) => None,
        }
    }

    /// Why it has no measured clock: no counter or cpufreq record, and its probes' chains
    /// gave none (their reason). `None` when it has one, or had no probe.
    pub fn clock_unknown(&self) -> Option<&str> {
        match &self.run_clock {
            Some(_) => None,
            None => self.clock.as_ref().and_then(|p| p.unknown()),
        }
    }

    /// `child 1 (CPU 3)` or `child 0 (unpinned)`.
    pub fn who(&self) -> String {
        who(self.index, self.cpu)
    }

    /// Accepted samples as lmbench pairs (n, net ns).
    pub fn pairs(&self) -> impl Iterator<Item = crate::schema::Pair> + '_ {
        self.samples
            .iter()
            .filter(|s| s.accepted)
            .map(|s| crate::schema::Pair {
                n: s.iterations,
                u: s.net_ns,
            })
    }

    /// The first accepted sample and what the benchmark recorded about it: the timed
    /// interval of a fixed-count run. The error says what is missing.
    pub fn timed_detail(&self) -> Result<(&Sample<S>, &S), Untimed> {
        let who = Who {
            index: self.index,
            cpu: self.cpu,
        };
        let s = self
            .samples
            .iter()
            .find(|s| s.accepted)
            .ok_or(Untimed::NoInterval(who))?;
        let detail = s.detail.as_ref().ok_or(Untimed::NoRecord(who))?;
        Ok((s, detail))
    }

    /// The CPU the child ran on most recently (its pin, else the last one seen).
    pub fn cpu_for_topology(&self) -> Option<usize> {
        self.cpu
            .or_else(|| self.samples.last().and_then(|s| s.cpu_end))
    }
}

/// What [`ChildRun::timed_detail`] found missing.
#[derive(Debug, thiserror::Error)]
pub enum Untimed {
    /// The child has no accepted sample.
    #[error("{0}: no timed interval")]
    NoInterval(Who),
    /// Its timed interval carries no record of the benchmark's.
    #[error("{0}: no record of its timed interval")]
    NoRecord(Who),
}

/// `child 1 (CPU 3)` / `child 0 (unpinned)`.
pub fn who(index: usize, cpu: Option<usize>) -> String {
    Who { index, cpu }.to_string()
}

/// A child's identity in messages: its index and the CPU it was pinned to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Who {
    /// Child number, 0-based.
    pub index: usize,
    /// CPU it was pinned to (`None`: not pinned).
    pub cpu: Option<usize>,
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cpu {
            Some(c) => write!(f, "child {} (CPU {c})", self.index),
            None => write!(f, "child {} (unpinned)", self.index),
        }
    }
}

/// What [`run`] returns: the children's results in index order, and when the parent's `run`
/// phase began and ended (CLOCK_MONOTONIC ns, inside its trace span).
#[derive(Debug)]
pub struct Ran<S, C> {
    /// Results by child index.
    pub children: Vec<ChildRun<S, C>>,
    /// Load children's results, by index.
    pub loads: Vec<LoadRun>,
    /// Start of the run phase.
    pub start_ns: u64,
    /// End of the run phase.
    pub end_ns: u64,
}
