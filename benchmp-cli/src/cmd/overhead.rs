//! `benchmp overhead`: the framework's own costs on this machine (calibration, fork and
//! handshake per child, the error of known-duration spins), a benchmark rather than a test.

use std::hint::black_box;

use anyhow::{Context, Result};
use benchmp::cli::{PlacementArgs, TimingArgs};
use benchmp::run::Iterations;
use benchmp::sys::clock::now_ns;
use benchmp::{ChildInfo, NoData, Session, Spec};

use super::probe::{Spin, spin};

/// Runs `benchmp overhead`: prints the framework's own costs.
pub fn run(enough: Option<u64>) -> Result<i32> {
    let req = benchmp::timing::CalibrationRequest {
        enough_us: enough,
        cache: None,
        recalibrate: true,
    };
    let t = now_ns();
    let cal = benchmp::timing::calibrate(&req)?;
    outln!(
        "calibration (measured, no cache): {:.3} s",
        (now_ns() - t) as f64 / 1e9
    );
    outln!("  interval (ENOUGH):  {} us", cal.enough_us);
    outln!(
        "  timing overhead:    {:.1} ns per clock read",
        cal.timing_overhead_ns
    );
    outln!(
        "  loop overhead:      {:.4} ns per iteration",
        cal.loop_overhead_ns
    );
    outln!("  clock resolution:   {} ns", cal.clock_resolution_ns);

    // Reference cost of one spin iteration, measured directly, best of 5 passes of about
    // 50 ms each: the count is sized from a first short pass, so an unoptimised build (ten
    // times slower per iteration) takes as long as a release one.
    let mut per_iter = f64::INFINITY;
    let n = spin_count_for(50_000_000);
    for _ in 0..5 {
        let t0 = now_ns();
        black_box(spin(1, black_box(n)));
        per_iter = per_iter.min((now_ns() - t0) as f64 / n as f64);
    }
    outln!("spin reference:       {per_iter:.4} ns per iteration (direct, best of 5 x {n})");
    fork_costs()?;
    spin_errors(per_iter)?;
    Ok(0)
}

/// How many spin iterations take about `target_ns`, from a pass of a million (at least a
/// million, at most 2^32).
fn spin_count_for(target_ns: u64) -> u64 {
    let probe = 1_000_000u64;
    let t0 = now_ns();
    black_box(spin(1, black_box(probe)));
    let spent = (now_ns() - t0).max(1);
    (probe as u128 * target_ns as u128 / spent as u128).clamp(probe as u128, 1 << 32) as u64
}

/// What forking, the handshake and reaping cost for one and two children (two only where this
/// process may use two CPUs: the user asked for no -P, so none is refused).
fn fork_costs() -> Result<()> {
    let placement = PlacementArgs {
        timeout: 60,
        ..Default::default()
    };
    let allowed = benchmp::sys::affinity::allowed_cpus()
        .map(|c| c.len())
        .context("sched_getaffinity")?;
    for p in [1usize, 2] {
        if p > allowed {
            outln!(
                "fork + handshake + reap: not measured for {p} children (this process may use {allowed} CPU{})",
                if allowed == 1 { "" } else { "s" }
            );
            continue;
        }
        // The children are forked and shake hands together either way; their null bodies
        // (a few microseconds each) go one after another, as --sequential's do: windows that
        // short cannot overlap by the share a parallel figure needs, and no figure is added
        // here, only the run's wall time is.
        let pl = PlacementArgs {
            parallel: Some(p),
            sequential: true,
            ..placement.clone()
        };
        let tm = TimingArgs {
            repetitions: 1,
            calibration: Some("off".into()),
            enough: Some(1),
            ..Default::default()
        };
        let mut s =
            Session::<NoData>::start("benchmp-overhead", &pl, &tm, None).context("session")?;
        let mut spec = Spec::rate("null", 1.0, "it/s", ());
        spec.iterations = Iterations::Fixed(1);
        let wall = s
            .measure(spec, |_: &ChildInfo| {
                Ok(Spin {
                    acc: 0,
                    fail: None,
                    runs: 0,
                    work: 1,
                })
            })?
            .wall_ns;
        outln!(
            "fork + handshake + reap: {:.3} ms for {p} child{} ({:.3} ms per child)",
            wall as f64 / 1e6,
            if p == 1 { "" } else { "ren" },
            wall as f64 / 1e6 / p as f64
        );
    }
    Ok(())
}

/// Known-duration spins measured through the framework against the direct reference.
fn spin_errors(per_iter: f64) -> Result<()> {
    outln!("known-duration spins measured through benchmp (fixed count, 21 samples, median):");
    outln!(
        "  {:>8}  {:>12}  {:>12}  {:>9}",
        "target",
        "measured ns",
        "expected ns",
        "error"
    );
    for target_ns in [1_000u64, 10_000, 100_000] {
        let iters = ((target_ns as f64) / per_iter).round().max(1.0) as u64;
        let tm = TimingArgs {
            repetitions: 21,
            calibration: Some("off".into()),
            enough: Some(1),
            ..Default::default()
        };
        let pl = PlacementArgs {
            parallel: Some(1),
            timeout: 60,
            ..Default::default()
        };
        let mut s = Session::<NoData>::start("benchmp-overhead", &pl, &tm, None)?;
        let _ = s.calibration()?;
        let mut spec = Spec::rate("spin", 1.0, "it/s", ());
        spec.iterations = Iterations::Fixed(iters);
        spec.subtract_loop_overhead = false;
        let m = s.measure(spec, |_: &ChildInfo| {
            Ok(Spin {
                acc: 0,
                fail: None,
                runs: 0,
                work: 1,
            })
        })?;
        let measured = m.figures[0].pair.u as f64 / m.figures[0].pair.n as f64 * iters as f64;
        let expected = iters as f64 * per_iter;
        outln!(
            "  {:>6}us  {:>12.1}  {:>12.1}  {:>+8.2}%",
            target_ns / 1000,
            measured,
            expected,
            (measured - expected) / expected * 100.0
        );
    }
    Ok(())
}
