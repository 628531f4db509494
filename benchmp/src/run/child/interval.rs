//! The timed intervals of a measuring child: lmbench's loop ([`timed_intervals`]) and a
//! `benchmp ab` worker's paced repetitions ([`paced_intervals`]). Both time an interval and
//! subtract the overheads through one function ([`time_interval`], [`net_time`]): the
//! framework's most sensitive arithmetic is written once.

use std::fs::File;
use std::hint::black_box;

use super::super::protocol::{self, RENEW, SIZE, STEP, Up};
use super::super::{Benchmark, Iterations, RunConfig, Sample};
use super::{Failure, Phases, Sized, size};
use crate::sys::affinity::current_cpu;
use crate::sys::clock::now_ns;
use crate::sys::usage::ResourceUsage;
use crate::timing::resize_count;

/// What the timed intervals gave.
#[derive(Debug)]
pub(super) struct Timed<S> {
    pub(super) samples: Vec<Sample<S>>,
    pub(super) count: u64,
    pub(super) gave_up: bool,
    pub(super) usage: ResourceUsage,
    pub(super) cpu_share: f64,
}

/// The net time of an interval as lmbench subtracts it: the elapsed time less one clock-read
/// cost and `n` loop overheads, as computed (negative when the overheads swallow the
/// interval) and as kept (0 then).
pub(super) fn net_time(elapsed_ns: u64, n: u64, cfg: &RunConfig) -> (f64, u64) {
    let net = elapsed_ns as f64 - cfg.timing_overhead_ns - n as f64 * cfg.loop_overhead_ns;
    (net, if net > 0.0 { net as u64 } else { 0 })
}

/// One interval's clock and CPU readings, and its checksum.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reading {
    cpu_start: Option<usize>,
    start: u64,
    end: u64,
    cpu_end: Option<usize>,
    checksum: u64,
}

/// Runs `n` iterations of `bench` between two reads of `now` (the CPU read outside them),
/// inside the trace span of repetition `rep`. Inlined, so the timed region is the one each
/// loop always had.
#[inline(always)]
pub(super) fn read_interval<B: Benchmark>(
    bench: &mut B,
    n: u64,
    rep: usize,
    now: &mut impl FnMut() -> u64,
) -> Reading {
    let _s = tracing::info_span!("rep", n = rep).entered();
    let cpu_start = current_cpu();
    let start = now();
    let checksum = bench.run(n);
    let end = now();
    let cpu_end = current_cpu();
    Reading {
        cpu_start,
        start,
        end,
        cpu_end,
        checksum,
    }
}

/// The sample of an interval read by [`read_interval`]: its checksum kept alive in `sink`, the
/// benchmark's record of it, and its net time ([`net_time`]; with `own_time`, the time the
/// benchmark says its operation took, when it says one). Accepted unless the caller says
/// otherwise; also returns the net time as computed.
pub(super) fn time_interval<B: Benchmark>(
    cfg: &RunConfig,
    bench: &mut B,
    n: u64,
    r: Reading,
    sink: &mut u64,
    own_time: bool,
) -> (Sample<B::Sample>, f64) {
    *sink ^= black_box(r.checksum);
    let detail = bench.sample_detail();
    let elapsed = r.end - r.start;
    let (net, kept) = net_time(elapsed, n, cfg);
    let net_ns = if own_time {
        bench.timed_ns().unwrap_or(kept)
    } else {
        kept
    };
    let sample = Sample {
        iterations: n,
        elapsed_ns: elapsed,
        net_ns,
        start_ns: r.start,
        accepted: true,
        cpu_start: r.cpu_start,
        cpu_end: r.cpu_end,
        detail,
    };
    (sample, net)
}

/// lmbench's timing loop: run `count` iterations per interval until `repetitions` intervals
/// are accepted (at least 0.95 × enough, or any fixed-count interval), re-sizing the count
/// when an interval falls outside 0.99–1.2 × enough; gives up after 4 × N + 20 attempts.
pub(super) fn timed_intervals<B: Benchmark>(
    cfg: &RunConfig,
    bench: &mut B,
    mut count: u64,
    up: &mut File,
    phases: &mut Phases,
    sink: &mut u64,
) -> Result<Timed<B::Sample>, Failure> {
    let enough = cfg.enough_ns as f64;
    let u0 = ResourceUsage::now();
    let (wall0, cpu0) = (now_ns(), crate::sys::clock::thread_cpu_ns());
    let mut samples: Vec<Sample<B::Sample>> = Vec::new();
    let mut accepted = 0usize;
    let wanted = cfg.repetitions.max(1);
    let max_attempts = wanted * 4 + 20;
    let fixed = matches!(cfg.iterations, Iterations::Fixed(_));
    while accepted < wanted && samples.len() < max_attempts {
        let rep = samples.len();
        let r = read_interval(bench, count, rep, &mut now_ns);
        let (mut sample, net) = time_interval(cfg, bench, count, r, sink, false);
        let elapsed = sample.elapsed_ns;
        let ok = fixed || sample.net_ns as f64 > 0.95 * enough;
        accepted += usize::from(ok);
        sample.accepted = ok;
        samples.push(sample);
        phases.push("rep", Some(rep), r.start, r.end);
        protocol::send(
            up,
            &Up::<B::Sample, B::Child>::Progress {
                elapsed_ns: elapsed,
            },
        )
        .map_err(Failure::talking)?;
        // Sized on the net time, unless the subtracted overheads swallow most of the interval
        // (a loop overhead estimate above the work's own cost per iteration): a net near zero
        // would grow the count eightfold at every attempt, without bound. On the elapsed time
        // the count stays near ENOUGH and the run gives up after its attempts instead.
        let basis = if net < 0.5 * elapsed as f64 {
            elapsed as f64
        } else {
            net
        };
        if !fixed && (basis < 0.99 * enough || basis > 1.2 * enough) {
            count = resize_count(count, basis, enough);
        }
    }
    let usage = ResourceUsage::now().since(&u0);
    let (wall1, cpu1) = (now_ns(), crate::sys::clock::thread_cpu_ns());
    Ok(Timed {
        samples,
        count,
        gave_up: accepted < wanted,
        usage,
        cpu_share: (cpu1 - cpu0) as f64 / (wall1 - wall0).max(1) as f64,
    })
}

/// Worker mode's timing loop: sizes the count on SIZE, times one repetition per STEP of the
/// count it names (every one accepted, none re-sized), until STOP or a closed pipe; the
/// child sleeps between commands.
#[allow(clippy::too_many_arguments)]
pub(super) fn paced_intervals<B: Benchmark>(
    cfg: &RunConfig,
    bench: &mut B,
    sized: &mut Sized,
    up: &mut File,
    down: &mut File,
    phases: &mut Phases,
    sink: &mut u64,
) -> Result<Timed<B::Sample>, Failure> {
    let u0 = ResourceUsage::now();
    let (mut wall, mut cpu) = (0u64, 0u64);
    let mut samples: Vec<Sample<B::Sample>> = Vec::new();
    // The count of the last step, which a renewal's untimed repetition runs too.
    let mut last = sized.count;
    loop {
        match protocol::wait_byte(down) {
            STEP => {}
            SIZE => {
                *sized = size(cfg, bench, sink, phases);
                let msg = Up::<B::Sample, B::Child>::Sized { count: sized.count };
                protocol::send(up, &msg).map_err(Failure::talking)?;
                continue;
            }
            RENEW => {
                let renewed = bench.renew();
                if renewed {
                    // Untimed, as a process's first repetition: the new lines and TLB
                    // entries come warm to the next timed one.
                    *sink = sink.wrapping_add(bench.run(last.max(1)));
                }
                let msg = Up::<B::Sample, B::Child>::Renewed { renewed };
                protocol::send(up, &msg).map_err(Failure::talking)?;
                continue;
            }
            _ => break,
        }
        let n = protocol::read_count(down)
            .filter(|&n| n > 0)
            .unwrap_or(sized.count);
        last = n;
        let rep = samples.len();
        let before = ResourceUsage::now();
        let cpu0 = crate::sys::clock::thread_cpu_ns();
        let r = read_interval(bench, n, rep, &mut now_ns);
        let step_cpu = crate::sys::clock::thread_cpu_ns().saturating_sub(cpu0);
        cpu += step_cpu;
        let preempted = ResourceUsage::now().since(&before).involuntary_switches;
        let (sample, _) = time_interval(cfg, bench, n, r, sink, true);
        wall += sample.elapsed_ns;
        let step = super::super::worker::StepSample {
            iterations: n,
            elapsed_ns: sample.elapsed_ns,
            net_ns: sample.net_ns,
            start_ns: r.start,
            cpus: (r.cpu_start, r.cpu_end),
            preempted,
            cpu_ns: step_cpu,
        };
        samples.push(sample);
        phases.push("rep", Some(rep), r.start, r.end);
        protocol::send(up, &Up::<B::Sample, B::Child>::Stepped(step)).map_err(Failure::talking)?;
    }
    Ok(Timed {
        gave_up: samples.is_empty(),
        samples,
        count: sized.count,
        usage: ResourceUsage::now().since(&u0),
        // The share of the timed repetitions' wall time the child had the CPU for.
        cpu_share: cpu as f64 / wall.max(1) as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(timing_overhead_ns: f64, loop_overhead_ns: f64) -> RunConfig {
        RunConfig {
            label: "micro".into(),
            placement: vec![None],
            warmup_us: 0,
            repetitions: 2,
            enough_ns: 1_000_000,
            timing_overhead_ns,
            loop_overhead_ns,
            iterations: Iterations::Calibrate { hint: None },
            child_timeout: std::time::Duration::from_secs(10),
            sequential: false,
            loads: Vec::new(),
            paced: None,
            counters: Vec::new(),
            sysfs: "/sys".into(),
        }
    }

    /// Spins about 1 µs per iteration, up to 100 000; a larger count returns at once (so a
    /// run whose count grew without bound ends instead of hanging) and is remembered.
    struct Micro {
        largest: u64,
    }

    impl Benchmark for Micro {
        type Sample = ();
        type Child = ();

        fn run(&mut self, iterations: u64) -> u64 {
            self.largest = self.largest.max(iterations);
            if iterations > 100_000 {
                return 0;
            }
            let end = now_ns() + 1_000 * iterations;
            let mut n = 0u64;
            while now_ns() < end {
                n = black_box(n + 1);
            }
            n
        }
    }

    #[test]
    fn a_loop_overhead_above_the_work_gives_up_instead_of_growing_the_count() {
        // 1 s of loop overhead per iteration: every interval's net time is 0.
        let cfg = RunConfig {
            iterations: Iterations::Calibrate { hint: Some(1) },
            ..config(0.0, 1e9)
        };
        let mut bench = Micro { largest: 0 };
        let mut up = File::create("/dev/null").unwrap();
        let (mut phases, mut sink) = (Phases(Vec::new()), 0);
        let t = timed_intervals(&cfg, &mut bench, 1, &mut up, &mut phases, &mut sink).unwrap();
        assert!(t.gave_up);
        assert_eq!(t.samples.len(), 4 * 2 + 20);
        assert!(t.samples.iter().all(|s| !s.accepted));
        // Sized on the elapsed time: about 1.1 ms of 1 µs iterations, never millions.
        assert!(bench.largest <= 20_000, "count grew to {}", bench.largest);
    }

    /// Returns `iterations` as its checksum, says its operation took `own` ns when it has an
    /// own time, and counts its calls.
    struct Fake {
        own: Option<u64>,
        details: u64,
    }

    impl Benchmark for Fake {
        type Sample = u64;
        type Child = ();

        fn run(&mut self, iterations: u64) -> u64 {
            iterations
        }

        fn sample_detail(&mut self) -> Option<u64> {
            self.details += 1;
            Some(self.details)
        }

        fn timed_ns(&mut self) -> Option<u64> {
            self.own
        }
    }

    /// The net time as the timed and the paced loops each computed it before they shared
    /// [`time_interval`].
    fn before(elapsed: u64, n: u64, cfg: &RunConfig) -> (f64, u64) {
        let net = elapsed as f64 - cfg.timing_overhead_ns - n as f64 * cfg.loop_overhead_ns;
        (net, if net > 0.0 { net as u64 } else { 0 })
    }

    #[test]
    fn the_shared_interval_gives_the_numbers_each_loop_gave() {
        // Clock readings in pairs (start, end): ordinary, swallowed by the overheads, a
        // fraction of a ns apart from an integer, and large.
        let clock = [
            1_000,
            1_001_000,
            5_000,
            5_040,
            7_777,
            1_007_778,
            u64::MAX / 4,
            u64::MAX / 4 + 123_456_789_013,
        ];
        let costs = [(0.0, 0.0), (37.5, 0.25), (41.3, 1.0 / 3.0), (1e3, 7.9)];
        for (t, l) in costs {
            let cfg = config(t, l);
            for own_time in [false, true] {
                let mut readings = clock.iter().copied();
                let mut now = || readings.next().expect("a reading");
                let mut bench = Fake {
                    own: None,
                    details: 0,
                };
                let mut sink = 0;
                for (i, n) in [1_000u64, 100, 3, 1 << 20].into_iter().enumerate() {
                    let r = read_interval(&mut bench, n, i, &mut now);
                    let (s, net) = time_interval(&cfg, &mut bench, n, r, &mut sink, own_time);
                    let elapsed = clock[2 * i + 1] - clock[2 * i];
                    let (want_net, want_ns) = before(elapsed, n, &cfg);
                    assert_eq!(net.to_bits(), want_net.to_bits(), "{t} {l} {n}");
                    assert_eq!((s.elapsed_ns, s.net_ns), (elapsed, want_ns), "{t} {l} {n}");
                    assert_eq!(net_time(elapsed, n, &cfg), (want_net, want_ns));
                    assert_eq!((s.iterations, s.start_ns), (n, clock[2 * i]));
                    assert_eq!(s.detail, Some(i as u64 + 1));
                    assert!(s.accepted);
                }
                assert_eq!(sink, 1_000 ^ 100 ^ 3 ^ (1 << 20));
            }
        }
    }

    #[test]
    fn a_paced_interval_keeps_the_benchmarks_own_time() {
        let cfg = config(10.0, 1.0);
        let clock = [0u64, 1_000];
        let mut bench = Fake {
            own: Some(321),
            details: 0,
        };
        for (own_time, want) in [(true, 321), (false, 1_000 - 10 - 100)] {
            let mut readings = clock.iter().copied();
            let mut now = || readings.next().expect("a reading");
            let r = read_interval(&mut bench, 100, 0, &mut now);
            let (s, net) = time_interval(&cfg, &mut bench, 100, r, &mut 0, own_time);
            assert_eq!(s.net_ns, want);
            assert_eq!(net, 890.0);
        }
    }
}
