//! The sweep through benchmp: one measurement per (stride, size), each child building its own
//! chain in its own buffer after it is pinned, and the iteration count of every size predicted
//! from the size before.
//!
//! Time to result. lmbench sizes the count from 1 at every size, and a fresh calibration of the
//! interval and overheads costs seconds on a noisy host. Here the framework calibration is done
//! once (or read from benchmp's cache), and the count for the next size is predicted from the
//! median latency just measured so that one interval of 1.1 × ENOUGH is expected; the first
//! timed interval runs the prediction and, as in lmbench's timing loop, counts as a sample when
//! it is long enough and re-sizes the count when it is not. The acceptance rule of the timed intervals is untouched: every
//! accepted interval is at least 0.95 × ENOUGH, and ENOUGH is at least lmbench's 100 ms.
//! `--recalibrate-each-size` is the slow reference: a new session with a fresh calibration and
//! counts sized from 1 at every size.
//!
//! The benchmark's iteration is one pass of 100 dependent loads. lmbench's iteration is
//! `count = 100 × (range / (stride × 100) + 1)` loads; a pass is the same work in a finer
//! grain, which benchmp needs: its sizing loop cannot shorten a single iteration, and at
//! 256 MiB one lmbench iteration alone lasts longer than 1.2 × ENOUGH. lmbench's count is
//! recorded with every point.

use benchmp::cli::{OutputArgs, PlacementArgs, TimingArgs};
use benchmp::progress::Progress;
use benchmp::run::Iterations;
use benchmp::size::HumanSize;
use benchmp::sys::clock::now_ns;
use benchmp::sys::mem::MemoryNeed;
use benchmp::{AggregateMode, Benchmark, Buffer, ChildInfo, Measurement, Pages, Session, Spec};
use serde::{Deserialize, Serialize};

use crate::chain::{Geometry, Mode, Plan, Rings, lmbench_count, ring_loads};
use crate::config::{Strategy, Sweep};
use crate::kernels::{LOADS_PER_PASS, Ring};
use crate::report::{
    ChildCurve, ChildNote, ChildPoint, ClusterPoint, CurveReport, Extra, LatMemRd, Params, Point,
    Report, Timing,
};
use crate::summary::{CurveSummary, caches_of, summarize};
use crate::sweep::sizes_for_stride;

/// Tool name in reports.
pub const TOOL: &str = "lat_mem_rd";
/// Interval length the prediction aims at, in units of ENOUGH (lmbench's re-sizing target).
pub const TARGET: f64 = 1.1;

/// All sizes of one stride.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// Stride, bytes.
    pub stride_bytes: u64,
    /// Points, in sweep order.
    pub points: Vec<Point>,
}

/// Progress of the sweep, for output as it happens.
#[derive(Debug)]
pub enum Event<'a> {
    /// A stride's block begins.
    StrideStart(u64),
    /// A size was measured.
    Point(&'a Point),
    /// A stride's block ends.
    StrideEnd(u64),
}

/// The finished sweep: the report (with the curves and summaries in `extra`) and both as
/// values for the text output.
#[derive(Debug)]
pub struct Finished {
    /// The report to emit.
    pub report: Report,
    /// Curves per stride.
    pub curves: Vec<Curve>,
    /// Summary per stride and cluster.
    pub summaries: Vec<CurveSummary>,
}

/// Passes per interval expected to last `TARGET` × `enough_ns` at `ns_per_load`.
pub fn predict_passes(ns_per_load: f64, enough_ns: f64) -> Option<u64> {
    if !(ns_per_load.is_finite() && ns_per_load > 0.0 && enough_ns > 0.0) {
        return None;
    }
    let passes = (TARGET * enough_ns / (ns_per_load * LOADS_PER_PASS as f64)).round();
    Some(passes.clamp(1.0, 1e15) as u64)
}

/// Where a new size's prediction comes from: the previous size of this stride, else the
/// previous stride's curve at the nearest size not above it.
pub fn prediction_source(this: &[Point], earlier: &[Curve], size: u64) -> Option<f64> {
    if let Some(p) = this.last() {
        return Some(p.median_ns);
    }
    earlier.last().and_then(|c| {
        c.points
            .iter()
            .rfind(|p| p.size_bytes <= size)
            .or(c.points.first())
            .map(|p| p.median_ns)
    })
}

/// The benchmark each child runs: its own ring, and what it reports about it.
#[derive(Debug)]
pub(crate) struct Chase {
    ring: Ring,
    note: ChildNote,
    /// What the ring was built from, to renew it alike, and the children of the run (which
    /// renew at the same time: a renewal makes room for all of theirs).
    made: (Geometry, Pages, usize),
}

impl Benchmark for Chase {
    type Sample = ();
    type Child = ChildNote;

    fn run(&mut self, iterations: u64) -> u64 {
        self.ring.run(iterations)
    }

    fn child_detail(&mut self) -> Option<ChildNote> {
        Some(self.note.clone())
    }

    const RENEWS: bool = true;

    /// The same chain (same seed, same order of lines) written into a new buffer, mapped and
    /// built before the old one is let go so it takes other physical pages.
    fn renew(&mut self) -> bool {
        let (g, pages, children) = self.made;
        let bytes = g.alloc_bytes() as u64 * children.max(1) as u64;
        if !benchmp::sys::mem::room_beside(bytes, pages) {
            return false;
        }
        let Ok(buf) = Buffer::new(g.alloc_bytes(), pages) else {
            return false;
        };
        match Ring::build(buf, &Plan::new(&g, Some(self.note.seed))) {
            Ok(ring) => {
                self.ring = ring;
                self.note.pages = self.ring.pages_obtained();
                true
            }
            Err(_) => false,
        }
    }
}

fn seed_for(fixed: Option<u64>, size: u64, index: usize) -> u64 {
    let base = fixed.unwrap_or_else(|| (u64::from(std::process::id()) << 32) ^ now_ns());
    base.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ size.rotate_left(17) ^ index as u64
}

/// Per child, after pinning: map the buffer, write the chain, report what the kernel gave.
pub(crate) fn build_child(
    g: &Geometry,
    pages: Pages,
    fixed_seed: Option<u64>,
    child: &ChildInfo,
) -> Result<Chase, crate::Error> {
    let t = now_ns();
    let buf = Buffer::new(g.alloc_bytes(), pages).map_err(|source| crate::Error::Alloc {
        size: HumanSize(g.alloc_bytes() as u64).to_string(),
        source,
    })?;
    let seed = seed_for(fixed_seed, g.range as u64, child.index);
    let plan = Plan::new(g, Some(seed));
    let ring = Ring::build(buf, &plan)?;
    let note = ChildNote {
        index: child.index,
        cpu: child.cpu,
        seed,
        setup_ns: now_ns() - t,
        pages: ring.pages_obtained(),
    };
    Ok(Chase {
        ring,
        note,
        made: (*g, pages, child.parallel),
    })
}

fn layout_name(mode: Mode, rings: Rings) -> &'static str {
    match (mode, rings) {
        (Mode::Sequential, _) => "sequential",
        (Mode::Random, Rings::Lmbench) => "random",
        (Mode::Random, Rings::Exact) => "random, exact rings",
    }
}

fn point_from(
    m: &Measurement<LatMemRd>,
    g: &Geometry,
    predicted: Option<u64>,
    framework_ns: u64,
    mode: AggregateMode,
) -> Point {
    let children: Vec<ChildNote> = m.children.iter().filter_map(|c| c.detail.clone()).collect();
    let prediction_confirmed = predicted.is_some()
        && m.children
            .iter()
            .all(|c| c.samples.first().is_some_and(|s| s.accepted));
    let per_load = |n: u64, u: u64| u as f64 / (n as f64 * LOADS_PER_PASS as f64);
    let all: Vec<f64> = m
        .children
        .iter()
        .flat_map(|c| c.samples.iter().filter(|s| s.accepted))
        .filter(|s| s.iterations > 0 && s.net_ns > 0)
        .map(|s| per_load(s.iterations, s.net_ns))
        .collect();
    let median_ns = if all.is_empty() {
        0.0
    } else {
        benchmp::stats::median_of(&all)
    };
    let (ring, intended) = ring_loads(g);
    Point {
        size_bytes: g.range as u64,
        size_mib: g.range as f64 / 1_048_576.0,
        ns: m.figure(mode),
        lmbench_ns: m.aggregate.median,
        median_ns,
        per_child: m
            .figures
            .iter()
            .map(|f| ChildPoint {
                index: f.index,
                cpu: f.cpu,
                cluster: f.cluster,
                ns: f.value,
                samples: f.samples,
            })
            .collect(),
        per_cluster: m
            .aggregate
            .per_cluster
            .iter()
            .map(|c| ClusterPoint {
                cluster: c.cluster,
                ns: c.mean,
            })
            .collect(),
        ring_loads: ring,
        intended_loads: intended,
        lmbench_count_loads: lmbench_count(g.range, g.stride),
        predicted_passes: predicted,
        passes: m.children.iter().map(|c| c.iterations).collect(),
        calibration_intervals: m
            .children
            .iter()
            .map(|c| c.calibration_intervals)
            .max()
            .unwrap_or(0),
        prediction_confirmed,
        calibration_ns: m.calibration_ns,
        framework_calibration_ns: framework_ns,
        accepted_intervals: all.len(),
        shortest_accepted_ns: m
            .children
            .iter()
            .flat_map(|c| c.samples.iter().filter(|s| s.accepted))
            .map(|s| s.net_ns)
            .min(),
        enough_us: m.enough_us,
        wall_ns: m.wall_ns,
        children,
    }
}

/// Runs the sweep, calling `on_event` as strides start and sizes finish; an error from it (the
/// text output failed) ends the sweep with that error.
pub fn run(
    sweep: &Sweep,
    placement: &PlacementArgs,
    timing: &TimingArgs,
    output: &OutputArgs,
    mhz: Option<f64>,
    mut on_event: impl FnMut(Event) -> Result<(), crate::Error>,
) -> Result<Finished, crate::Error> {
    let t0 = now_ns();
    let mut session = Session::start(TOOL, placement, timing, Some(output))?;
    // Every child maps LEN plus two pages at every size: refuse what cannot fit, now.
    MemoryNeed {
        size_bytes: sweep.len_bytes,
        buffers: vec![sweep.len_bytes.saturating_add(2 * sweep.page_size)],
        children: session.parallel(),
        pages: sweep.pages,
    }
    .check()?;
    let total: usize = sweep
        .strides
        .iter()
        .map(|&s| sizes_for_stride(sweep.min_bytes, sweep.max_bytes, s).len())
        .sum();
    let layout = layout_name(sweep.mode, sweep.rings);
    // Under benchmp ab, the whole sweep is announced first, so two sweeps that differ are
    // refused before any pair is timed.
    session.plan(sweep.strides.iter().flat_map(|&stride| {
        sizes_for_stride(sweep.min_bytes, sweep.max_bytes, stride)
            .into_iter()
            .map(move |size| ("loads".to_string(), params(sweep, layout, stride, size)))
    }))?;
    let mut progress = Progress::new(TOOL, total);
    let mut curves: Vec<Curve> = Vec::new();
    let mut per_size: Vec<Report> = Vec::new();
    let ctx = SizeRun {
        sweep,
        placement,
        timing,
        output,
        layout,
    };
    for &stride in &sweep.strides {
        on_event(Event::StrideStart(stride))?;
        let mut points: Vec<Point> = Vec::new();
        for size in sizes_for_stride(sweep.min_bytes, sweep.max_bytes, stride) {
            progress.step(&format!("stride {stride}: {}", HumanSize(size)));
            let point = ctx.measure(
                &mut session,
                &mut per_size,
                (stride, size),
                &points,
                &curves,
            )?;
            on_event(Event::Point(&point))?;
            points.push(point);
        }
        on_event(Event::StrideEnd(stride))?;
        curves.push(Curve {
            stride_bytes: stride,
            points,
        });
    }
    progress.finish();
    let sweep_wall_ns = now_ns() - t0;

    let probed = |cpu| benchmp::report::measured_clock(session.measurements(), cpu);
    let summaries = summarize_all(&curves, &session.topology, ctx.layout, mhz, probed);
    let framework_ns = match sweep.strategy {
        Strategy::Predicted => session.calibration()?.measured_ns,
        Strategy::RecalibrateEachSize => curves
            .iter()
            .flat_map(|c| &c.points)
            .map(|p| p.framework_calibration_ns)
            .sum(),
    };
    let extra = extra(sweep, &curves, &summaries, sweep_wall_ns, framework_ns);
    let report = session.finish_joined(output, Some(extra), per_size);
    Ok(Finished {
        report,
        curves,
        summaries,
    })
}

/// The parameters of the measurement of one (stride, size) of a sweep.
fn params(sweep: &Sweep, layout: &str, stride: u64, size: u64) -> Params {
    Params {
        size_bytes: size,
        stride_bytes: stride,
        layout: layout.to_string(),
        pages: sweep.pages,
        maxlen_bytes: sweep.len_bytes,
    }
}

/// What every size of a sweep is measured with.
struct SizeRun<'a> {
    sweep: &'a Sweep,
    placement: &'a PlacementArgs,
    timing: &'a TimingArgs,
    output: &'a OutputArgs,
    layout: &'static str,
}

impl SizeRun<'_> {
    /// Measures one (stride, size): predicts its count from the sizes before (or, with
    /// --recalibrate-each-size, runs it in a fresh session kept in `per_size`).
    fn measure(
        &self,
        session: &mut Session<LatMemRd>,
        per_size: &mut Vec<Report>,
        (stride, size): (u64, u64),
        points: &[Point],
        curves: &[Curve],
    ) -> Result<Point, crate::Error> {
        let sweep = self.sweep;
        let g = Geometry {
            range: size as usize,
            stride: stride as usize,
            maxlen: sweep.len_bytes as usize,
            pagesize: sweep.page_size as usize,
            mode: sweep.mode,
            rings: sweep.rings,
        };
        let predicted = match sweep.strategy {
            Strategy::Predicted => {
                let enough_us = session.calibration()?.enough_us.max(sweep.enough_floor_us);
                prediction_source(points, curves, size)
                    .and_then(|ns| predict_passes(ns, enough_us as f64 * 1000.0))
            }
            Strategy::RecalibrateEachSize => None,
        };
        let mut spec = Spec::latency(
            "loads",
            LOADS_PER_PASS as f64,
            params(sweep, self.layout, stride, size),
        );
        spec.enough_floor_us = sweep.enough_floor_us;
        // Its energy per operation is per load (nJ/load).
        spec.operation = "load";
        // lmbench subtracts its loop overhead once per call of count loads; a pass is 100.
        spec.loop_overhead_share = LOADS_PER_PASS as f64 / lmbench_count(g.range, g.stride) as f64;
        spec.iterations = Iterations::Calibrate { hint: predicted };
        let make = |child: &ChildInfo| Ok(build_child(&g, sweep.pages, sweep.seed, child)?);
        let (m, framework_ns) = match sweep.strategy {
            Strategy::Predicted => (session.measure(spec, make)?.clone(), 0),
            Strategy::RecalibrateEachSize => {
                let fresh = TimingArgs {
                    recalibrate: true,
                    ..self.timing.clone()
                };
                let mut s = Session::start(TOOL, self.placement, &fresh, Some(self.output))?;
                let framework_ns = s.calibration()?.measured_ns;
                let m = s.measure(spec, make)?.clone();
                per_size.push(s.finish(self.output, None));
                (m, framework_ns)
            }
        };
        Ok(point_from(
            &m,
            &g,
            predicted,
            framework_ns,
            self.output.aggregate,
        ))
    }
}

/// The report's tool section: the sweep, where its time went, the curves and summaries.
fn extra(
    sweep: &Sweep,
    curves: &[Curve],
    summaries: &[CurveSummary],
    sweep_wall_ns: u64,
    framework_ns: u64,
) -> Extra {
    let all_points = || curves.iter().flat_map(|c| &c.points);
    Extra {
        sweep: sweep.clone(),
        loads_per_iteration: LOADS_PER_PASS,
        enough_floor_us: sweep.enough_floor_us,
        timing: Timing {
            strategy: sweep.strategy,
            sweep_wall_ns,
            framework_calibration_ns: framework_ns,
            count_sizing_ns: all_points().map(|p| p.calibration_ns).sum::<u64>(),
            sizes: all_points().count(),
            sizes_whose_prediction_was_confirmed: all_points()
                .filter(|p| p.prediction_confirmed)
                .count(),
            shortest_accepted_interval_ns: all_points()
                .filter_map(|p| p.shortest_accepted_ns)
                .min(),
        },
        curves: curves
            .iter()
            .map(|c| CurveReport {
                stride_bytes: c.stride_bytes,
                points: c.points.clone(),
                per_child: per_child_curves(c),
            })
            .collect(),
        summary: summaries.to_vec(),
    }
}

/// Each child's curve: (size, ns) pairs with its CPU and cluster.
fn per_child_curves(c: &Curve) -> Vec<ChildCurve> {
    let mut children: Vec<(usize, Option<usize>, usize)> = c
        .points
        .iter()
        .flat_map(|p| p.per_child.iter().map(|f| (f.index, f.cpu, f.cluster)))
        .collect();
    children.sort_unstable();
    children.dedup_by_key(|k| k.0);
    children
        .into_iter()
        .map(|(index, cpu, cluster)| {
            let pts: Vec<(u64, f64)> = c
                .points
                .iter()
                .filter_map(|p| {
                    p.per_child
                        .iter()
                        .find(|f| f.index == index)
                        .map(|f| (p.size_bytes, f.ns))
                })
                .collect();
            ChildCurve {
                child: index,
                cpu,
                cluster,
                points: pts,
            }
        })
        .collect()
}

/// One summary per stride and cluster, from the cluster means; cycles from `mhz` (`--mhz`),
/// else the median clock the cluster's first CPU measured (`probed`), else cpufreq's maximum.
fn summarize_all(
    curves: &[Curve],
    topo: &benchmp::topology::Topology,
    layout: &str,
    mhz: Option<f64>,
    probed: impl Fn(usize) -> Option<(f64, benchmp::freq::ClockSource)>,
) -> Vec<CurveSummary> {
    let mut out = Vec::new();
    for c in curves {
        let mut clusters: Vec<usize> = c
            .points
            .iter()
            .flat_map(|p| p.per_cluster.iter().map(|k| k.cluster))
            .collect();
        clusters.sort_unstable();
        clusters.dedup();
        for cluster in clusters {
            let mut cpus: Vec<usize> = c
                .points
                .iter()
                .flat_map(|p| p.per_child.iter())
                .filter(|f| f.cluster == cluster)
                .filter_map(|f| f.cpu)
                .collect();
            cpus.sort_unstable();
            cpus.dedup();
            let pts: Vec<(u64, f64)> = c
                .points
                .iter()
                .filter_map(|p| {
                    p.per_cluster
                        .iter()
                        .find(|k| k.cluster == cluster)
                        .map(|k| (p.size_bytes, k.ns))
                })
                .collect();
            let cpu = cpus
                .first()
                .copied()
                .or_else(|| {
                    topo.clusters
                        .get(cluster)
                        .and_then(|k| k.cpus.first().copied())
                })
                .unwrap_or(0);
            let clock = benchmp::freq::clock_of_child(topo, Some(cpu), mhz, probed(cpu));
            out.push(summarize(
                c.stride_bytes,
                layout,
                cluster,
                cpus,
                &pts,
                caches_of(topo, Some(cpu)),
                clock,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prediction_aims_at_1_1_enough() {
        // 1 ns per load, 100 ms: 110 ms / 100 ns per pass = 1.1 million passes.
        assert_eq!(predict_passes(1.0, 1e8), Some(1_100_000));
        assert_eq!(predict_passes(100.0, 1e8), Some(11_000));
        assert_eq!(predict_passes(1e12, 1e8), Some(1));
        assert_eq!(predict_passes(0.0, 1e8), None);
        assert_eq!(predict_passes(f64::NAN, 1e8), None);
    }

    fn pt(size: u64, ns: f64) -> Point {
        Point {
            size_bytes: size,
            size_mib: 0.0,
            ns,
            lmbench_ns: ns,
            median_ns: ns,
            per_child: vec![],
            per_cluster: vec![],
            ring_loads: None,
            intended_loads: 0,
            lmbench_count_loads: 0,
            predicted_passes: None,
            passes: vec![],
            calibration_intervals: 0,
            prediction_confirmed: false,
            calibration_ns: 0,
            framework_calibration_ns: 0,
            accepted_intervals: 1,
            shortest_accepted_ns: None,
            enough_us: 0,
            wall_ns: 0,
            children: vec![],
        }
    }

    #[test]
    fn predictions_come_from_the_nearest_known_size() {
        assert_eq!(prediction_source(&[], &[], 512), None);
        let first = Curve {
            stride_bytes: 16,
            points: vec![pt(512, 1.0), pt(4096, 2.0), pt(1 << 20, 9.0)],
        };
        // Within a stride: the previous size.
        assert_eq!(
            prediction_source(&[pt(512, 3.0)], std::slice::from_ref(&first), 1024),
            Some(3.0)
        );
        // A new stride: the earlier curve at the nearest size not above.
        assert_eq!(
            prediction_source(&[], std::slice::from_ref(&first), 8192),
            Some(2.0)
        );
        assert_eq!(
            prediction_source(&[], std::slice::from_ref(&first), 256),
            Some(1.0)
        );
    }
}
