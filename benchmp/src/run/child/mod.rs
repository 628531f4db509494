//! A child's life between fork and `_exit`: pin, build the benchmark, size the count, wait for
//! the common start while keeping the CPU busy, run the timed intervals, keep busy until every
//! child is done, report.

use std::fs::File;
use std::hint::black_box;

use super::protocol::{self, GO, LOAD, PAUSE, RESULT, START, Up, WINDOW};
use super::{
    Benchmark, ChildInfo, ChildRun, Data, Iterations, LoadRun, Make, Phase, RunConfig, Sample,
};
use crate::sys::affinity::pin_and_verify;
use crate::sys::clock::now_ns;
use crate::sys::process;
use crate::timing::resize_count;

mod interval;

use interval::{Timed, paced_intervals, timed_intervals};

/// Why a child gave up: the exit status it chose and a one-line reason. It crosses the pipe
/// to the parent as text, so this is where a child's error chain is rendered.
#[derive(Debug)]
struct Failure {
    code: i32,
    message: String,
}

impl Failure {
    fn of(e: &(dyn std::error::Error + 'static)) -> Failure {
        Failure {
            code: crate::error::exit_code_by(e, super::error::PROBES),
            message: crate::error::chain_line(e),
        }
    }

    fn talking(e: std::io::Error) -> Failure {
        Failure {
            code: crate::error::EXIT_FAILED,
            message: format!("cannot talk to the parent: {e}"),
        }
    }
}

/// A measuring child's entry point: runs everything, reports a failure or a panic up the
/// pipe, and `_exit`s with the status it chose (never returns, never runs the parent's
/// destructors).
pub(super) fn main<B: Benchmark>(
    cfg: &RunConfig,
    info: ChildInfo,
    up: File,
    down: File,
    make: &mut impl Make<B>,
) -> ! {
    enter::<B::Sample, B::Child>(up, down, |up, down| life(cfg, info, up, down, make))
}

/// A load child's entry point, as [`main`]; `S` and `C` are the run's measuring types (the
/// pipe's message type), which a load child never sends.
pub(super) fn load_main<L: Benchmark, S: Data, C: Data>(
    info: ChildInfo,
    up: File,
    down: File,
    make: &mut impl Make<L>,
) -> ! {
    enter::<S, C>(up, down, |up, down| {
        load_life::<L, S, C>(info, up, down, make)
    })
}

/// Runs a child's body, sends its failure (or panic) up the pipe, and `_exit`s.
fn enter<S: Data, C: Data>(
    mut up: File,
    mut down: File,
    body: impl FnOnce(&mut File, &mut File) -> Result<(), Failure>,
) -> ! {
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&mut up, &mut down)));
    let failure = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(f)) => Some(f),
        Err(p) => Some(Failure {
            code: crate::error::EXIT_FAILED,
            message: format!(
                "panicked: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            ),
        }),
    };
    let code = match failure {
        None => 0,
        Some(Failure { code, message }) => {
            let _ = protocol::send(&mut up, &Up::<S, C>::Failed { code, message });
            code
        }
    };
    process::exit_now(code)
}

/// Phases of the child's life, recorded as they end (each also a trace slice).
#[derive(Debug, Default)]
struct Phases(Vec<Phase>);

impl Phases {
    fn push(&mut self, name: &str, rep: Option<usize>, start_ns: u64, end_ns: u64) {
        self.0.push(Phase {
            name: name.to_string(),
            rep,
            start_ns,
            end_ns,
        });
    }
}

/// What a measuring child keeps between its phases: the phase log, the checksum sink and the
/// keep-busy batch size.
#[derive(Debug)]
struct Keep {
    phases: Phases,
    sink: u64,
    busy: BusyBatch,
}

impl Keep {
    /// Waits for `wanted` (see [`wait_for`]) keeping the CPU busy with `bench`.
    fn wait<B: Benchmark>(
        &mut self,
        cfg: &RunConfig,
        name: &'static str,
        wanted: u8,
        down: &mut File,
        bench: &mut B,
    ) -> bool {
        wait_for(
            cfg,
            name,
            wanted,
            down,
            bench,
            &mut self.busy,
            &mut self.sink,
            &mut self.phases,
        )
    }
}

/// The child's CPU for its trace span (-1: not pinned).
fn cpu_field(info: &ChildInfo) -> i64 {
    info.cpu.map_or(-1, |c| c as i64)
}

/// Pins a placed child to its CPU and checks it runs there; an unplaced one stays as it is.
fn pin_if_placed(info: &ChildInfo) -> Result<(), Failure> {
    match info.cpu {
        Some(cpu) => pin_and_verify(cpu).map_err(|e| Failure::of(&e)),
        None => Ok(()),
    }
}

fn life<B: Benchmark>(
    cfg: &RunConfig,
    info: ChildInfo,
    up: &mut File,
    down: &mut File,
    make: &mut impl Make<B>,
) -> Result<(), Failure> {
    let _child = tracing::info_span!("child", child = info.index, cpu = cpu_field(&info)).entered();
    pin_if_placed(&info)?;
    let mut phases = Phases::default();
    // perf_event_open can take milliseconds (it waits for RCU): open before the common start.
    let mut observers =
        super::observe::Observers::open(cfg, info.cpu).map_err(|e| Failure::of(&e))?;
    // Each phase's timestamps are taken inside its span, so the trace slice encloses the
    // phase with only the marker writes between their edges.
    let mut bench = {
        let _s = tracing::info_span!("init").entered();
        let t = now_ns();
        let b = make(&info).map_err(|e| Failure::of(&*e))?;
        phases.push("init", None, t, now_ns());
        b
    };
    let mut sink = 0u64;
    // A worker sizes its count only when the driver asks (SIZE), alone on its CPUs.
    let mut sized = if cfg.paced.is_some() {
        Sized {
            count: 1,
            intervals: 0,
            ns: 0,
        }
    } else {
        size(cfg, &mut bench, &mut sink, &mut phases)
    };
    // Keep-busy work between control-pipe checks: batches of about a millisecond, so the CPU
    // stays loaded (lmbench runs the benchmark meanwhile) without a system call every few ns.
    let busy = BusyBatch::new(match cfg.iterations {
        Iterations::Fixed(_) => 1,
        Iterations::Calibrate { .. } => {
            (sized.count as f64 * 1e6 / (cfg.enough_ns as f64).max(1.0)).max(1.0) as u64
        }
    });
    let mut keep = Keep { phases, sink, busy };

    protocol::send(up, &Up::<B::Sample, B::Child>::Ready).map_err(Failure::talking)?;
    if !keep.wait(cfg, "warmup", GO, down, &mut bench) {
        return Ok(());
    }
    let before = observers.before();
    if cfg.starts_together() {
        // GO reaches the children up to a keep-busy batch apart, and their readings take
        // different times: each says it is armed, and all start on one START.
        protocol::send(up, &Up::<B::Sample, B::Child>::Armed).map_err(Failure::talking)?;
        if protocol::spin_byte(down) != START {
            return Ok(());
        }
    }
    let timed = if cfg.paced.is_some() {
        paced_intervals(
            cfg,
            &mut bench,
            &mut sized,
            up,
            down,
            &mut keep.phases,
            &mut keep.sink,
        )?
    } else {
        timed_intervals(
            cfg,
            &mut bench,
            sized.count,
            up,
            &mut keep.phases,
            &mut keep.sink,
        )?
    };
    let observed = observers.after(before);
    protocol::send(up, &Up::<B::Sample, B::Child>::Done).map_err(Failure::talking)?;
    if !keep.wait(cfg, "cooldown", RESULT, down, &mut bench) {
        return Ok(());
    }
    let result = child_run(&info, timed, &sized, observed, keep, bench.child_detail());
    protocol::send(up, &Up::Result(Box::new(result))).map_err(Failure::talking)?;
    let _ = protocol::wait_byte(down);
    drop(bench);
    Ok(())
}

/// A measuring child's result from what it timed and observed.
fn child_run<S, C>(
    info: &ChildInfo,
    timed: Timed<S>,
    sized: &Sized,
    observed: super::observe::Observed,
    keep: Keep,
    detail: Option<C>,
) -> ChildRun<S, C> {
    let cpus_seen = cpus_seen(&timed.samples);
    ChildRun {
        index: info.index,
        pid: std::process::id() as i32,
        cpu: info.cpu,
        migrated: cpus_seen.len() > 1,
        cpus_seen,
        migrations: observed.migrations,
        usage: timed.usage,
        cpu_share: timed.cpu_share,
        iterations: timed.count,
        calibration_intervals: sized.intervals,
        calibration_ns: sized.ns,
        gave_up: timed.gave_up,
        timed_ns: timed.samples.iter().map(|s| s.elapsed_ns).sum(),
        samples: timed.samples,
        phases: keep.phases.0,
        checksum: black_box(keep.sink),
        detail,
        clock: observed.clock,
        run_clock: observed.run_clock,
        counters: observed.counters,
    }
}

/// How long a load child's batches last, ns: short enough to cut the window finely and to
/// answer the parent at once, long enough that the pipe check costs nothing.
const LOAD_BATCH_NS: u64 = 200_000;
/// A load child says it is alive this often, ns, so a long measurement never looks hung.
const HEARTBEAT_NS: u64 = 1_000_000_000;

/// A load child's life: pin, build, wait (asleep) for LOAD, then run its benchmark in batches
/// of about [`LOAD_BATCH_NS`], logging when each ended, until WINDOW arrives with the
/// measuring children's window; report what it did over exactly that window. In worker mode
/// PAUSE puts it to sleep between its side's repetitions, LOAD wakes it.
fn load_life<B: Benchmark, S: Data, C: Data>(
    info: ChildInfo,
    up: &mut File,
    down: &mut File,
    make: &mut impl Make<B>,
) -> Result<(), Failure> {
    let _child = tracing::info_span!("load", child = info.index, cpu = cpu_field(&info)).entered();
    pin_if_placed(&info)?;
    let mut bench = make(&info).map_err(|e| Failure::of(&*e))?;
    protocol::send(up, &Up::<S, C>::Ready).map_err(Failure::talking)?;
    if protocol::wait_byte(down) != LOAD {
        return Ok(());
    }
    let _s = tracing::info_span!("loading").entered();
    let mut sink = 0u64;
    let mut batch = BusyBatch::sized_to(1, LOAD_BATCH_NS);
    // Taken before the parent hears of it, so the log starts before any timed interval can.
    let start = now_ns();
    protocol::send(up, &Up::<S, C>::Loading).map_err(Failure::talking)?;
    // (end of batch, iterations done so far)
    let mut log: Vec<(u64, u64)> = vec![(start, 0)];
    let mut done = 0u64;
    let mut heard = start;
    let window = loop {
        match protocol::poll_byte(down) {
            Some(WINDOW) => break protocol::read_window(down),
            Some(PAUSE) => {
                // Worker mode: asleep until this side's next repetition.
                protocol::send(up, &Up::<S, C>::Paused).map_err(Failure::talking)?;
                match protocol::wait_byte(down) {
                    LOAD => {
                        protocol::send(up, &Up::<S, C>::Loading).map_err(Failure::talking)?;
                        heard = now_ns();
                        log.push((heard, done));
                        continue;
                    }
                    WINDOW => break protocol::read_window(down),
                    _ => return Ok(()),
                }
            }
            Some(_) => return Ok(()),
            None => {}
        }
        let n = batch.n;
        sink ^= batch.run_loaded(&mut bench);
        done += n;
        let t = now_ns();
        log.push((t, done));
        if t - heard > HEARTBEAT_NS {
            heard = t;
            protocol::send(up, &Up::<S, C>::Alive).map_err(Failure::talking)?;
        }
    };
    drop(_s);
    let Some((ws, we)) = window else {
        return Ok(());
    };
    let result = load_result(&info, &log, (ws, we), black_box(sink));
    protocol::send(up, &Up::<S, C>::Load(Box::new(result))).map_err(Failure::talking)?;
    let _ = protocol::wait_byte(down);
    drop(bench);
    Ok(())
}

/// What a load child's batch log says about the window `(start, end)`: iterations inside it
/// (a batch the window cuts counted pro rata), and whether it ran through it without a stall.
fn load_result(info: &ChildInfo, log: &[(u64, u64)], window: (u64, u64), checksum: u64) -> LoadRun {
    let (ws, we) = window;
    // Iterations done by time t, interpolated within the batch that holds t.
    let done_at = |t: u64| -> f64 {
        match log.windows(2).find(|w| w[0].0 <= t && t <= w[1].0) {
            Some(w) => {
                let (t0, c0) = w[0];
                let (t1, c1) = w[1];
                let f = if t1 > t0 {
                    (t - t0) as f64 / (t1 - t0) as f64
                } else {
                    1.0
                };
                c0 as f64 + f * (c1 - c0) as f64
            }
            None if t < log[0].0 => 0.0,
            None => log.last().map_or(0.0, |l| l.1 as f64),
        }
    };
    let mut lengths: Vec<u64> = log.windows(2).map(|w| w[1].0 - w[0].0).collect();
    let longest_batch_ns = log
        .windows(2)
        .filter(|w| w[1].0 >= ws && w[0].0 <= we)
        .map(|w| w[1].0 - w[0].0)
        .max()
        .unwrap_or(0);
    lengths.sort_unstable();
    let median_batch_ns = crate::stats::middle(&lengths).copied().unwrap_or(0);
    let started_ns = log[0].0;
    let stopped_ns = log.last().map_or(started_ns, |l| l.0);
    // Time inside the window spent in batches beyond STALL_FACTOR × the median: the load
    // was not running then (stopped, or starved of its CPU).
    let normal = median_batch_ns * LoadRun::STALL_FACTOR;
    let stalled_ns: u64 = log
        .windows(2)
        .map(|w| {
            let (a, b) = (w[0].0.max(ws), w[1].0.min(we));
            let inside = b.saturating_sub(a);
            let excess = (w[1].0 - w[0].0).saturating_sub(normal);
            inside.min(excess)
        })
        .sum();
    let window_ns = we.saturating_sub(ws);
    LoadRun {
        index: info.index,
        pid: std::process::id() as i32,
        cpu: info.cpu,
        started_ns,
        stopped_ns,
        window_start_ns: ws,
        window_end_ns: we,
        iterations: (done_at(we) - done_at(ws)).max(0.0),
        batches: lengths.len() as u64,
        median_batch_ns,
        longest_batch_ns,
        stalled_ns,
        ran_through: started_ns <= ws
            && stopped_ns >= we
            && stalled_ns.saturating_mul(LoadRun::MAX_STALLED_PARTS) <= window_ns,
        checksum,
    }
}

/// The count each timed interval starts with, and what sizing it cost.
#[derive(Debug)]
struct Sized {
    count: u64,
    intervals: u32,
    ns: u64,
}

/// Chooses the first count: fixed, the hint, or grown from 1 until an interval lasts about
/// `enough` (lmbench's rule, before the common start).
fn size<B: Benchmark>(
    cfg: &RunConfig,
    bench: &mut B,
    sink: &mut u64,
    phases: &mut Phases,
) -> Sized {
    let enough = cfg.enough_ns as f64;
    match cfg.iterations {
        Iterations::Fixed(n) => Sized {
            count: n.max(1),
            intervals: 0,
            ns: 0,
        },
        Iterations::Calibrate { hint: Some(h) } => Sized {
            count: h.max(1),
            intervals: 0,
            ns: 0,
        },
        Iterations::Calibrate { hint: None } => {
            let _s = tracing::info_span!("calibrate").entered();
            let t = now_ns();
            let mut count = 1u64;
            let mut intervals = 64;
            for round in 1..=64u32 {
                let t0 = now_ns();
                *sink ^= bench.run(count);
                let r = (now_ns() - t0) as f64;
                // A single iteration longer than the interval cannot be shortened: take it.
                if r >= 0.99 * enough && (r <= 1.2 * enough || count == 1) {
                    intervals = round;
                    break;
                }
                count = resize_count(count, r, enough);
            }
            let end = now_ns();
            phases.push("calibrate", None, t, end);
            Sized {
                count,
                intervals,
                ns: end - t,
            }
        }
    }
}

/// Waits inside a `name` span for the parent's `wanted` byte (true) or anything else such as
/// EXIT or a closed pipe (false). Parallel children keep the CPU busy meanwhile, as lmbench
/// runs the benchmark while it waits; sequential children sleep, so the child being timed
/// runs alone.
#[allow(clippy::too_many_arguments)]
fn wait_for<B: Benchmark>(
    cfg: &RunConfig,
    name: &'static str,
    wanted: u8,
    down: &mut File,
    bench: &mut B,
    busy: &mut BusyBatch,
    sink: &mut u64,
    phases: &mut Phases,
) -> bool {
    // Span names are static: one per phase, so the trace slices carry the phase's name.
    let _s = match name {
        "warmup" => tracing::info_span!("warmup"),
        _ => tracing::info_span!("cooldown"),
    }
    .entered();
    let t = now_ns();
    // A worker's children wait without running: the other build's steps run meanwhile.
    let got = if cfg.sequential || cfg.paced.is_some() {
        protocol::wait_byte(down)
    } else {
        loop {
            match protocol::poll_byte(down) {
                Some(b) => break b,
                None => *sink ^= busy.run(bench),
            }
        }
    };
    phases.push(name, None, t, now_ns());
    got == wanted
}

/// Distinct CPUs seen at interval boundaries, in order of first sight.
fn cpus_seen<S>(samples: &[Sample<S>]) -> Vec<usize> {
    let mut seen: Vec<usize> = Vec::new();
    for c in samples
        .iter()
        .flat_map(|s| [s.cpu_start, s.cpu_end])
        .flatten()
    {
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    seen
}

/// Sizes keep-busy batches to about a millisecond as they run: a batch shorter than half of it
/// doubles, one longer than twice of it halves.
#[derive(Debug)]
struct BusyBatch {
    n: u64,
    target_ns: u64,
}

impl BusyBatch {
    fn new(n: u64) -> BusyBatch {
        BusyBatch::sized_to(n, 1_000_000)
    }

    /// Batches of about `target_ns`, starting from `n` iterations.
    fn sized_to(n: u64, target_ns: u64) -> BusyBatch {
        BusyBatch {
            n: n.max(1),
            target_ns,
        }
    }

    /// One batch of keep-busy work.
    fn run<B: Benchmark>(&mut self, bench: &mut B) -> u64 {
        let t0 = now_ns();
        let ck = bench.keep_busy(self.n);
        self.adapt(now_ns() - t0);
        ck
    }

    /// One batch of the benchmark itself (a load child's work).
    fn run_loaded<B: Benchmark>(&mut self, bench: &mut B) -> u64 {
        let t0 = now_ns();
        let ck = bench.run(self.n);
        self.adapt(now_ns() - t0);
        ck
    }

    /// Doubles a batch shorter than half the target, halves one longer than twice it.
    fn adapt(&mut self, took: u64) {
        if took < self.target_ns / 2 {
            self.n = self.n.saturating_mul(2).min(1 << 40);
        } else if took > self.target_ns * 2 {
            self.n = (self.n / 2).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(cpu_start: Option<usize>, cpu_end: Option<usize>) -> Sample {
        Sample {
            iterations: 1,
            elapsed_ns: 1,
            net_ns: 1,
            start_ns: 0,
            accepted: true,
            cpu_start,
            cpu_end,
            detail: None,
        }
    }

    fn info() -> ChildInfo {
        ChildInfo {
            index: 1,
            cpu: Some(1),
            parallel: 1,
            role: super::super::Role::Load,
        }
    }

    #[test]
    fn a_load_counts_what_it_did_inside_the_window() {
        // Batches of 100 ns doing 10 iterations each, from 1000 to 2000 ns.
        let log: Vec<(u64, u64)> = (0..=10).map(|i| (1000 + 100 * i, 10 * i)).collect();
        let r = load_result(&info(), &log, (1250, 1750), 7);
        assert!((r.iterations - 50.0).abs() < 1e-9, "{r:?}");
        assert_eq!((r.median_batch_ns, r.longest_batch_ns), (100, 100));
        assert!(r.ran_through);
        // A window reaching past the load's end is not run through.
        assert!(!load_result(&info(), &log, (1500, 2500), 7).ran_through);
    }

    #[test]
    fn a_stopped_load_is_not_counted_as_running() {
        // The fifth batch took 3 s: the child was stopped while the window was open.
        let mut log: Vec<(u64, u64)> = (0..5).map(|i| (1_000_000 * i, 10 * i)).collect();
        let t = log.last().unwrap().0 + 3_000_000_000;
        log.extend((0..5).map(|i| (t + 1_000_000 * i, 50 + 10 * i)));
        let r = load_result(&info(), &log, (2_000_000, t + 2_000_000), 0);
        assert!(!r.ran_through, "{r:?}");
        assert_eq!(r.longest_batch_ns, 3_000_000_000);
        assert!(r.stalled_ns > 2_900_000_000, "{r:?}");
        // A hiccup of a few batches in a long window is still a load that ran.
        let log: Vec<(u64, u64)> = (0..1000)
            .map(|i| (1_000_000 * i + if i > 500 { 15_000_000 } else { 0 }, i))
            .collect();
        let r = load_result(&info(), &log, (10_000_000, 900_000_000), 0);
        assert!(r.ran_through, "{r:?}");
    }

    #[test]
    fn cpus_are_listed_once_in_order_of_first_sight() {
        let s = [
            sample(Some(3), Some(3)),
            sample(Some(3), Some(1)),
            sample(None, Some(3)),
        ];
        assert_eq!(cpus_seen(&s), vec![3, 1]);
    }
}
