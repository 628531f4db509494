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

use std::fs::File;
use std::hint::black_box;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use crate::error::{Error, exit_code_of};
use crate::sys::affinity::{current_cpu, pin_and_verify};
use crate::sys::clock::now_ns;
use crate::sys::perf::{Counter, SoftwareEvent};
use crate::sys::process::{self, Exit, Forked, InterruptGuard};
use crate::sys::usage::Usage;

/// A benchmark body. lmbench's `benchmark(iterations, cookie)`, with the per-child state in
/// `self` (built after pinning) and a checksum returned so the optimiser must do the work.
pub trait Benchmark {
    /// Performs the operation `iterations` times. Must be callable any number of times.
    fn run(&mut self, iterations: u64) -> u64;

    /// Called right after each timed interval (outside the timing): a tool-specific record of
    /// that interval kept with its sample, e.g. the CRCs or checked values to validate.
    /// The default records nothing.
    fn sample_detail(&mut self) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// Called once when the child is done: tool-specific facts about the child (e.g. the
    /// pages its buffers obtained), kept in its result. The default records nothing.
    fn child_detail(&mut self) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// Untimed work that keeps the CPU loaded while the child waits for the common start and
    /// after its own timed intervals, until every child is done (lmbench runs the benchmark
    /// meanwhile). Defaults to `run`; a benchmark whose state must not change between timed
    /// intervals can do the work on a spare copy instead.
    fn keep_busy(&mut self, iterations: u64) -> u64 {
        self.run(iterations)
    }
}

/// What a child knows about itself when it builds its benchmark state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildInfo {
    /// Child number, 0-based.
    pub index: usize,
    /// CPU it is pinned to (`None`: not pinned).
    pub cpu: Option<usize>,
    /// Number of children in the run.
    pub parallel: usize,
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
}

/// One timed interval of one child.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
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
    #[serde(skip_serializing_if = "serde_json::Value::is_null", default)]
    pub detail: serde_json::Value,
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

/// Everything one child measured and observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildRun {
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
    pub usage: Usage,
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
    pub samples: Vec<Sample>,
    /// Phases, in order (the child's trace slices).
    pub phases: Vec<Phase>,
    /// XOR of all benchmark return values (keeps the work observable).
    pub checksum: u64,
    /// True when the child stopped before collecting `repetitions` accepted samples.
    pub gave_up: bool,
    /// Sum of elapsed time of the timed intervals, ns.
    pub timed_ns: u64,
    /// What the benchmark recorded about this child ([`Benchmark::child_detail`]).
    #[serde(skip_serializing_if = "serde_json::Value::is_null", default)]
    pub detail: serde_json::Value,
}

impl ChildRun {
    /// `child 1 (CPU 3)` or `child 0 (unpinned)`.
    pub fn who(&self) -> String {
        who(self.index, self.cpu)
    }

    /// Accepted samples as lmbench pairs (n, net ns).
    pub fn pairs(&self) -> impl Iterator<Item = crate::stats::Pair> + '_ {
        self.samples
            .iter()
            .filter(|s| s.accepted)
            .map(|s| crate::stats::Pair {
                n: s.iterations,
                u: s.net_ns,
            })
    }

    /// The first accepted sample and its detail ([`Benchmark::sample_detail`]) decoded as `T`:
    /// the timed interval of a fixed-count run. The error says what is missing.
    pub fn timed_detail<T: serde::de::DeserializeOwned>(&self) -> Result<(&Sample, T), String> {
        let s = self
            .samples
            .iter()
            .find(|s| s.accepted)
            .ok_or_else(|| format!("{}: no timed interval", self.who()))?;
        let detail = serde_json::from_value(s.detail.clone())
            .map_err(|e| format!("{}: no record of its timed interval ({e})", self.who()))?;
        Ok((s, detail))
    }

    /// The CPU the child ran on most recently (its pin, else the last one seen).
    pub fn cpu_for_topology(&self) -> Option<usize> {
        self.cpu
            .or_else(|| self.samples.last().and_then(|s| s.cpu_end))
    }
}

/// `child 1 (CPU 3)` / `child 0 (unpinned)`.
pub fn who(index: usize, cpu: Option<usize>) -> String {
    match cpu {
        Some(c) => format!("child {index} (CPU {c})"),
        None => format!("child {index} (unpinned)"),
    }
}

/// Messages from a child to the parent (length-prefixed JSON frames on the child's pipe).
#[derive(Debug, Serialize, Deserialize)]
enum Up {
    Ready,
    Progress { elapsed_ns: u64 },
    Done,
    Result(Box<ChildRun>),
    Failed { code: i32, message: String },
}

const GO: u8 = b'G';
const RESULT: u8 = b'R';
const EXIT: u8 = b'X';

fn send(up: &mut File, msg: &Up) -> std::io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    let mut frame = Vec::with_capacity(body.len() + 4);
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(&body);
    up.write_all(&frame)
}

fn set_nonblocking(fd: &OwnedFd) {
    if let Ok(flags) = fcntl(fd.as_fd(), FcntlArg::F_GETFL) {
        let _ = fcntl(
            fd.as_fd(),
            FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK),
        );
    }
}

/// A byte waiting on the (non-blocking) control pipe, if any.
fn poll_byte(down: &mut File) -> Option<u8> {
    let mut b = [0u8; 1];
    match down.read(&mut b) {
        Ok(1) => Some(b[0]),
        Ok(_) => Some(EXIT), // parent closed the pipe: leave
        Err(_) => None,
    }
}

/// Blocks until a byte arrives on the control pipe (EOF counts as EXIT).
fn wait_byte(down: &mut File) -> u8 {
    loop {
        if let Some(b) = poll_byte(down) {
            return b;
        }
        let mut fds = [PollFd::new(down.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::from(1000u16));
    }
}

/// What [`run`] returns: the children's results in index order, and when the parent's `run`
/// phase began and ended (CLOCK_MONOTONIC ns, inside its trace span).
#[derive(Debug)]
pub struct Ran {
    /// Results by child index.
    pub children: Vec<ChildRun>,
    /// Start of the run phase.
    pub start_ns: u64,
    /// End of the run phase.
    pub end_ns: u64,
}

/// Runs the measurement: forks one child per placement entry, each pins itself, builds its
/// benchmark with `make`, sizes its count, waits for the common start, runs `repetitions`
/// accepted intervals, and reports. Returns the children's results in index order and the
/// run's start and end.
pub fn run<B, F>(cfg: &RunConfig, mut make: F) -> Result<Ran, Error>
where
    B: Benchmark,
    F: FnMut(&ChildInfo) -> anyhow::Result<B>,
{
    let span = tracing::info_span!("run", label = %cfg.label, parallel = cfg.placement.len());
    let _g = span.enter();
    let start_ns = now_ns();
    let parent = nix::unistd::getpid();
    let guard = InterruptGuard::install();
    let mut kids: Vec<Kid> = Vec::new();
    for (index, &cpu) in cfg.placement.iter().enumerate() {
        let (up_r, up_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(Error::Pipe)?;
        let (down_r, down_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(Error::Pipe)?;
        let forked = match process::fork_process() {
            Ok(f) => f,
            Err(msg) => {
                abort_all(&mut kids);
                return Err(Error::Fork(msg));
            }
        };
        match forked {
            Forked::Child => {
                drop(up_r);
                drop(down_w);
                // Other children's parent-side ends are not ours to hold.
                kids.clear();
                process::child_setup(parent);
                set_nonblocking(&down_r);
                let mut up = File::from(up_w);
                let mut down = File::from(down_r);
                let info = ChildInfo {
                    index,
                    cpu,
                    parallel: cfg.placement.len(),
                };
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    child_main(cfg, info, &mut up, &mut down, &mut make)
                }));
                let code = match outcome {
                    Ok(Ok(())) => 0,
                    Ok(Err((code, message))) => {
                        let _ = send(&mut up, &Up::Failed { code, message });
                        code
                    }
                    Err(p) => {
                        let message = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "panicked".into());
                        let _ = send(
                            &mut up,
                            &Up::Failed {
                                code: 1,
                                message: format!("panicked: {message}"),
                            },
                        );
                        1
                    }
                };
                process::exit_now(code);
            }
            Forked::Parent(pid) => {
                drop(up_w);
                drop(down_r);
                set_nonblocking(&up_r);
                kids.push(Kid {
                    index,
                    cpu,
                    pid,
                    up: File::from(up_r),
                    down: File::from(down_w),
                    buf: Vec::new(),
                    state: State::Starting,
                    last_heard: Instant::now(),
                    longest_ns: 0,
                    result: None,
                    eof: false,
                    reaped: None,
                });
            }
        }
    }

    let outcome = drive(cfg, &mut kids);
    drop(guard);
    match outcome {
        Ok(()) => Ok(Ran {
            children: kids.into_iter().filter_map(|k| k.result).collect(),
            start_ns,
            end_ns: now_ns(),
        }),
        Err(e) => {
            abort_all(&mut kids);
            Err(e)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum State {
    Starting,
    Ready,
    Done,
    Reported,
}

#[derive(Debug)]
struct Kid {
    index: usize,
    cpu: Option<usize>,
    pid: Pid,
    up: File,
    down: File,
    buf: Vec<u8>,
    state: State,
    last_heard: Instant,
    longest_ns: u64,
    result: Option<ChildRun>,
    eof: bool,
    reaped: Option<Exit>,
}

impl Kid {
    fn who(&self) -> String {
        who(self.index, self.cpu)
    }

    /// Decodes complete frames in the buffer.
    fn take_messages(&mut self) -> Result<Vec<Up>, Error> {
        let mut out = Vec::new();
        loop {
            if self.buf.len() < 4 {
                break;
            }
            let len =
                u32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
            if self.buf.len() < 4 + len {
                break;
            }
            let msg: Up =
                serde_json::from_slice(&self.buf[4..4 + len]).map_err(|e| Error::Protocol {
                    child: self.who(),
                    what: e.to_string(),
                })?;
            self.buf.drain(..4 + len);
            out.push(msg);
        }
        Ok(out)
    }
}

/// Kills and reaps every child still around; nothing is left behind, not even a zombie.
fn abort_all(kids: &mut [Kid]) {
    for k in kids.iter() {
        if k.reaped.is_none() {
            process::kill(k.pid, Signal::SIGKILL);
        }
    }
    for k in kids.iter_mut() {
        if k.reaped.is_none() {
            k.reaped = Some(process::reap(k.pid, Duration::from_secs(5)));
        }
    }
}

fn send_byte(k: &mut Kid, b: u8) -> Result<(), Error> {
    k.down.write_all(&[b]).map_err(|_| Error::ChildFailed {
        child: k.who(),
        how: "closed its control pipe".into(),
    })
}

/// The parent's side of the protocol.
fn drive(cfg: &RunConfig, kids: &mut [Kid]) -> Result<(), Error> {
    pump(cfg, kids, |k| k.state >= State::Ready, None)?;
    if cfg.warmup_us > 0 {
        let until = Instant::now() + Duration::from_micros(cfg.warmup_us);
        pump(cfg, kids, |_| false, Some(until))?;
    }
    for k in kids.iter_mut() {
        send_byte(k, GO)?;
    }
    pump(cfg, kids, |k| k.state >= State::Done, None)?;
    for k in kids.iter_mut() {
        send_byte(k, RESULT)?;
    }
    pump(cfg, kids, |k| k.state >= State::Reported, None)?;
    for k in kids.iter_mut() {
        let _ = k.down.write_all(&[EXIT]);
    }
    for k in kids.iter_mut() {
        let exit = process::reap(k.pid, Duration::from_secs(10));
        k.reaped = Some(exit);
        if exit != Exit::Code(0) {
            return Err(Error::ChildFailed {
                child: k.who(),
                how: format!("{exit} after reporting"),
            });
        }
    }
    Ok(())
}

/// Reads children's messages until every child satisfies `done` (or `until` passes), failing
/// on an interrupt, a child's error, a child's death or a child that stays silent too long.
fn pump(
    cfg: &RunConfig,
    kids: &mut [Kid],
    done: impl Fn(&Kid) -> bool,
    until: Option<Instant>,
) -> Result<(), Error> {
    loop {
        if let Some(sig) = process::interrupted() {
            return Err(Error::Interrupted(sig));
        }
        if until.is_none() && kids.iter().all(&done) {
            return Ok(());
        }
        if let Some(t) = until
            && Instant::now() >= t
        {
            return Ok(());
        }
        let mut readable = vec![false; kids.len()];
        {
            let mut fds: Vec<PollFd> = Vec::new();
            let mut map = Vec::new();
            for (i, k) in kids.iter().enumerate() {
                if !k.eof {
                    fds.push(PollFd::new(k.up.as_fd(), PollFlags::POLLIN));
                    map.push(i);
                }
            }
            let wait = until
                .map(|t| {
                    t.saturating_duration_since(Instant::now())
                        .as_millis()
                        .min(100) as u16
                })
                .unwrap_or(100);
            match poll(&mut fds, PollTimeout::from(wait)) {
                Ok(_) => {
                    for (j, fd) in fds.iter().enumerate() {
                        if fd.revents().is_some_and(|r| !r.is_empty()) {
                            readable[map[j]] = true;
                        }
                    }
                }
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(Error::Pipe(e)),
            }
        }
        for (i, k) in kids.iter_mut().enumerate() {
            if !readable[i] {
                continue;
            }
            let mut chunk = [0u8; 65536];
            loop {
                match k.up.read(&mut chunk) {
                    Ok(0) => {
                        k.eof = true;
                        break;
                    }
                    Ok(n) => {
                        k.buf.extend_from_slice(&chunk[..n]);
                        k.last_heard = Instant::now();
                    }
                    Err(_) => break,
                }
            }
            for msg in k.take_messages()? {
                match msg {
                    Up::Ready => k.state = k.state.max(State::Ready),
                    Up::Progress { elapsed_ns } => k.longest_ns = k.longest_ns.max(elapsed_ns),
                    Up::Done => k.state = k.state.max(State::Done),
                    Up::Result(r) => {
                        k.state = State::Reported;
                        k.result = Some(*r);
                    }
                    Up::Failed { code, message } => {
                        let exit = process::reap(k.pid, Duration::from_secs(5));
                        k.reaped = Some(exit);
                        return Err(Error::ChildError {
                            child: k.who(),
                            code,
                            message,
                        });
                    }
                }
            }
            if k.eof && k.state < State::Reported {
                if let Some(sig) = process::interrupted() {
                    return Err(Error::Interrupted(sig));
                }
                let exit = process::reap(k.pid, Duration::from_secs(5));
                k.reaped = Some(exit);
                if let Exit::Signal(s @ (Signal::SIGINT | Signal::SIGTERM)) = exit {
                    return Err(Error::Interrupted(s));
                }
                return Err(Error::ChildFailed {
                    child: k.who(),
                    how: exit.to_string(),
                });
            }
        }
        for k in kids.iter() {
            if done(k) || k.state == State::Reported {
                continue;
            }
            let limit = cfg.child_timeout + Duration::from_nanos(k.longest_ns.saturating_mul(4));
            if k.last_heard.elapsed() > limit {
                return Err(Error::ChildHung {
                    child: k.who(),
                    secs: k.last_heard.elapsed().as_secs(),
                });
            }
        }
    }
}

/// Sizes the count so one interval lasts 0.99–1.2 × enough (lmbench's rule), from `start`.
/// Returns (count, intervals used).
fn size_count<B: Benchmark>(bench: &mut B, start: u64, enough: f64, sink: &mut u64) -> (u64, u32) {
    let mut count = start.max(1);
    for round in 1..=64u32 {
        let t0 = now_ns();
        *sink ^= bench.run(count);
        let r = (now_ns() - t0) as f64;
        // A single iteration longer than the interval cannot be shortened: take it.
        if r >= 0.99 * enough && (r <= 1.2 * enough || count == 1) {
            return (count, round);
        }
        count = resize(count, r, enough);
    }
    (count, 64)
}

/// Keeps the CPU busy inside `span` until the parent sends `wanted` (true) or anything else,
/// such as EXIT or a closed pipe (false). Returns the phase's start and end, taken inside the
/// span, and whether `wanted` came.
fn busy_until<B: Benchmark>(
    span: tracing::Span,
    wanted: u8,
    down: &mut File,
    bench: &mut B,
    busy: &mut BusyBatch,
    sink: &mut u64,
) -> (u64, u64, bool) {
    let _s = span.entered();
    let t = now_ns();
    loop {
        match poll_byte(down) {
            Some(b) => return (t, now_ns(), b == wanted),
            None => *sink ^= busy.run(bench),
        }
    }
}

/// Sizes keep-busy batches to about a millisecond as they run: a batch shorter than half of it
/// doubles, one longer than twice of it halves.
#[derive(Debug)]
struct BusyBatch {
    n: u64,
}

impl BusyBatch {
    fn new(n: u64) -> BusyBatch {
        BusyBatch { n: n.max(1) }
    }

    fn run<B: Benchmark>(&mut self, bench: &mut B) -> u64 {
        let t0 = now_ns();
        let ck = bench.keep_busy(self.n);
        let took = now_ns() - t0;
        if took < 500_000 {
            self.n = self.n.saturating_mul(2).min(1 << 40);
        } else if took > 2_000_000 {
            self.n = (self.n / 2).max(1);
        }
        ck
    }
}

/// lmbench's re-sizing step: proportional once an interval is over 150 µs, else ×8.
fn resize(count: u64, r_ns: f64, enough: f64) -> u64 {
    if r_ns > 150_000.0 {
        ((count as f64 / r_ns * 1.1 * enough) as u64)
            .saturating_add(1)
            .max(1)
    } else {
        count.saturating_mul(8).min(1 << 48)
    }
}

/// Everything a child does between fork and exit. Errors carry an exit code and a message.
fn child_main<B, F>(
    cfg: &RunConfig,
    info: ChildInfo,
    up: &mut File,
    down: &mut File,
    make: &mut F,
) -> Result<(), (i32, String)>
where
    B: Benchmark,
    F: FnMut(&ChildInfo) -> anyhow::Result<B>,
{
    let io = |e: std::io::Error| (1, format!("cannot talk to the parent: {e}"));
    let cpu_field = info.cpu.map_or(-1, |c| c as i64);
    let span = tracing::info_span!("child", child = info.index, cpu = cpu_field);
    let _child = span.enter();
    if let Some(cpu) = info.cpu {
        pin_and_verify(cpu).map_err(|m| (1, m))?;
    }
    let mut phases = Vec::new();
    let mut phase = |name: &str, rep: Option<usize>, start_ns: u64, end_ns: u64| {
        phases.push(Phase {
            name: name.to_string(),
            rep,
            start_ns,
            end_ns,
        })
    };

    // perf_event_open can take milliseconds (it waits for RCU): open before the common start.
    let mut migrations = Counter::open(SoftwareEvent::CpuMigrations);
    // Each phase's timestamps are taken inside its span, so the trace slice encloses the
    // phase with only the marker writes between their edges.
    let mut bench = {
        let _s = tracing::info_span!("init").entered();
        let t = now_ns();
        let b = make(&info).map_err(|e| (exit_code_of(&e), format!("{e:#}")))?;
        phase("init", None, t, now_ns());
        b
    };

    let enough = cfg.enough_ns as f64;
    let mut sink = 0u64;
    let (mut count, calibration_intervals, calibration_ns) = match cfg.iterations {
        Iterations::Fixed(n) => (n.max(1), 0, 0),
        Iterations::Calibrate { hint: Some(h) } => (h.max(1), 0, 0),
        Iterations::Calibrate { hint: None } => {
            let _s = tracing::info_span!("calibrate").entered();
            let t = now_ns();
            let (count, intervals) = size_count(&mut bench, 1, enough, &mut sink);
            let end = now_ns();
            phase("calibrate", None, t, end);
            (count, intervals, end - t)
        }
    };
    // Keep-busy work between control-pipe checks: batches of about a millisecond, so the CPU
    // stays loaded (lmbench runs the benchmark meanwhile) without a system call every few ns.
    let mut busy = BusyBatch::new(match cfg.iterations {
        Iterations::Fixed(_) => 1,
        Iterations::Calibrate { .. } => (count as f64 * 1e6 / enough.max(1.0)).max(1.0) as u64,
    });

    send(up, &Up::Ready).map_err(io)?;
    let (t, end, go) = busy_until(
        tracing::info_span!("warmup"),
        GO,
        down,
        &mut bench,
        &mut busy,
        &mut sink,
    );
    phase("warmup", None, t, end);
    if !go {
        return Ok(());
    }

    let m0 = migrations.as_mut().and_then(Counter::read);
    let u0 = Usage::now();
    let (wall0, cpu0) = (now_ns(), crate::sys::clock::thread_cpu_ns());
    let mut samples: Vec<Sample> = Vec::new();
    let mut accepted = 0usize;
    let wanted = cfg.repetitions.max(1);
    let max_attempts = wanted * 4 + 20;
    let fixed = matches!(cfg.iterations, Iterations::Fixed(_));
    let mut timed_ns = 0u64;
    while accepted < wanted && samples.len() < max_attempts {
        let rep = samples.len();
        let (cpu_start, start, end, cpu_end, ck);
        {
            let _s = tracing::info_span!("rep", n = rep).entered();
            cpu_start = current_cpu();
            start = now_ns();
            ck = bench.run(count);
            end = now_ns();
            cpu_end = current_cpu();
        }
        sink ^= black_box(ck);
        let detail = bench.sample_detail();
        let elapsed = end - start;
        timed_ns += elapsed;
        let net = elapsed as f64 - cfg.timing_overhead_ns - count as f64 * cfg.loop_overhead_ns;
        let net_ns = if net > 0.0 { net as u64 } else { 0 };
        let ok = fixed || net_ns as f64 > 0.95 * enough;
        if ok {
            accepted += 1;
        }
        samples.push(Sample {
            iterations: count,
            elapsed_ns: elapsed,
            net_ns,
            start_ns: start,
            accepted: ok,
            cpu_start,
            cpu_end,
            detail,
        });
        phase("rep", Some(rep), start, end);
        send(
            up,
            &Up::Progress {
                elapsed_ns: elapsed,
            },
        )
        .map_err(io)?;
        if !fixed && (net < 0.99 * enough || net > 1.2 * enough) {
            count = resize(count, net.max(0.0), enough);
        }
    }
    let usage = Usage::now().since(&u0);
    let (wall1, cpu1) = (now_ns(), crate::sys::clock::thread_cpu_ns());
    let cpu_share = (cpu1 - cpu0) as f64 / (wall1 - wall0).max(1) as f64;
    let migrations_counted = match (m0, migrations.as_mut().and_then(Counter::read)) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    let mut cpus_seen: Vec<usize> = Vec::new();
    for c in samples
        .iter()
        .flat_map(|s| [s.cpu_start, s.cpu_end])
        .flatten()
    {
        if !cpus_seen.contains(&c) {
            cpus_seen.push(c);
        }
    }
    send(up, &Up::Done).map_err(io)?;

    let (t, end, asked) = busy_until(
        tracing::info_span!("cooldown"),
        RESULT,
        down,
        &mut bench,
        &mut busy,
        &mut sink,
    );
    phase("cooldown", None, t, end);
    if !asked {
        return Ok(());
    }
    let result = ChildRun {
        index: info.index,
        pid: std::process::id() as i32,
        cpu: info.cpu,
        migrated: cpus_seen.len() > 1,
        cpus_seen,
        migrations: migrations_counted,
        usage,
        cpu_share,
        iterations: count,
        calibration_intervals,
        calibration_ns,
        gave_up: accepted < wanted,
        samples,
        phases,
        checksum: black_box(sink),
        timed_ns,
        detail: bench.child_detail(),
    };
    send(up, &Up::Result(Box::new(result))).map_err(io)?;
    let _ = wait_byte(down);
    drop(bench);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resize_follows_lmbench() {
        // Short intervals grow ×8; long ones scale to 1.1 × enough.
        assert_eq!(resize(10, 100_000.0, 5e6), 80);
        assert_eq!(resize(1000, 1e6, 5e6), 5501);
        assert_eq!(resize(1000, 1e7, 5e6), 551);
        assert!(resize(u64::MAX / 2, 1.0, 5e6) <= 1 << 48);
    }

    #[test]
    fn frames_round_trip() {
        let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        let mut wf = File::from(w);
        send(&mut wf, &Up::Ready).unwrap();
        send(&mut wf, &Up::Progress { elapsed_ns: 42 }).unwrap();
        drop(wf);
        let mut rf = File::from(r);
        let mut k = Kid {
            index: 0,
            cpu: Some(1),
            pid: Pid::from_raw(1),
            up: File::open("/dev/null").unwrap(),
            down: File::create("/dev/null").unwrap(),
            buf: Vec::new(),
            state: State::Starting,
            last_heard: Instant::now(),
            longest_ns: 0,
            result: None,
            eof: false,
            reaped: None,
        };
        rf.read_to_end(&mut k.buf).unwrap();
        // Feed the frames in two pieces to check partial reads are kept.
        let tail = k.buf.split_off(5);
        assert!(k.take_messages().unwrap().is_empty());
        k.buf.extend_from_slice(&tail);
        let msgs = k.take_messages().unwrap();
        assert_eq!(msgs.len(), 2);
        assert!(matches!(msgs[1], Up::Progress { elapsed_ns: 42 }));
        assert!(k.buf.is_empty());
    }
}
