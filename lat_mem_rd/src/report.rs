//! What lat_mem_rd keeps in its report, as types: each measurement's parameters (size,
//! stride, layout), each child's note about its buffer, and the tool section (the sweep, its
//! timing, the curves and their summaries). The report is `benchmp::Report<LatMemRd>`.

use benchmp::ToolData;
use benchmp::schema::Better;
use benchmp::schema::{Figure, Sizing};
use benchmp::sys::mem::Pages;
use serde::{Deserialize, Serialize};

use crate::config::{Strategy, Sweep};
use crate::summary::CurveSummary;

/// lat_mem_rd's report data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatMemRd;

impl ToolData for LatMemRd {
    type Params = Params;
    type Sample = ();
    type Child = ChildNote;
    type Extra = Extra;

    /// Array size, stride and chain layout: a measurement is `loads 256M stride 64 random`.
    fn sizing(p: &Params) -> Sizing {
        Sizing {
            size_bytes: Some(p.size_bytes),
            stride_bytes: Some(p.stride_bytes),
            layout: Some(p.layout.clone()),
            level: None,
        }
    }

    /// The plateaus of the summarised curves ([`figures`]).
    fn figures(report: &Report) -> Vec<Figure> {
        figures(report)
    }
}

/// lat_mem_rd's report.
pub type Report = benchmp::Report<LatMemRd>;

/// Parameters of one measurement (one size of one stride).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Array size, bytes.
    pub size_bytes: u64,
    /// Stride, bytes.
    pub stride_bytes: u64,
    /// Chain layout (`sequential`, `random`, `random, exact rings`).
    pub layout: String,
    /// Page size asked for.
    pub pages: Pages,
    /// Bytes each child maps (lmbench's `len`).
    pub maxlen_bytes: u64,
}

/// How long the sweep took and where the time went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// How counts were chosen.
    pub strategy: Strategy,
    /// Wall time of the whole sweep, ns.
    pub sweep_wall_ns: u64,
    /// Framework calibration (interval, overheads), ns.
    pub framework_calibration_ns: u64,
    /// Time children spent sizing their counts, over all sizes, ns.
    pub count_sizing_ns: u64,
    /// Sizes measured.
    pub sizes: usize,
    /// Sizes whose predicted count was confirmed by its first interval.
    pub sizes_whose_prediction_was_confirmed: usize,
    /// Shortest accepted interval of the sweep, ns.
    pub shortest_accepted_interval_ns: Option<u64>,
}

/// One child's curve: its figure at each size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildCurve {
    /// Child number.
    pub child: usize,
    /// Its CPU.
    pub cpu: Option<usize>,
    /// Its cluster.
    pub cluster: usize,
    /// (size in bytes, ns per load).
    pub points: Vec<(u64, f64)>,
}

/// All sizes of one stride, with each child's curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveReport {
    /// Stride, bytes.
    pub stride_bytes: u64,
    /// Points, in sweep order.
    pub points: Vec<Point>,
    /// Each child's curve.
    pub per_child: Vec<ChildCurve>,
}

/// lat_mem_rd's section of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extra {
    /// The sweep as checked.
    pub sweep: Sweep,
    /// Dependent loads in one benchmark iteration.
    pub loads_per_iteration: u64,
    /// The interval floor, µs (also in `sweep`; kept for readers of the earlier field).
    pub enough_floor_us: u64,
    /// Where the time went.
    pub timing: Timing,
    /// Curves per stride.
    pub curves: Vec<CurveReport>,
    /// Summary per stride and cluster.
    pub summary: Vec<CurveSummary>,
}

/// The figures a comparison judges: each plateau of each summarised curve (the latency of a
/// cache level or of memory, per stride and cluster), with the per-load latency of every
/// accepted interval of that cluster's children at the sizes on the plateau as samples.
/// The sizes between plateaus are left out: a transition moves from run to run by design.
pub fn figures(report: &Report) -> Vec<Figure> {
    let Some(extra) = &report.extra else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in &extra.summary {
        for p in &s.shape.plateaus {
            let samples: Vec<f64> = report
                .measurements
                .iter()
                .filter(|m| {
                    m.params.stride_bytes == s.stride_bytes
                        && (p.first_bytes..=p.last_bytes).contains(&m.params.size_bytes)
                })
                .flat_map(|m| {
                    m.figures
                        .iter()
                        .zip(&m.children)
                        .filter(|(f, _)| f.cluster == s.cluster)
                        .flat_map(|(_, c)| c.pairs().map(|pair| m.metric.value(pair)))
                        .collect::<Vec<_>>()
                })
                .collect();
            out.push(Figure {
                name: format!("{} stride {} {}", s.layout, s.stride_bytes, p.label),
                cpu: match s.cpus.as_slice() {
                    [one] => Some(*one),
                    _ => None,
                },
                cluster: Some(s.cluster),
                unit: "ns".into(),
                better: Better::Lower,
                value: p.ns,
                samples,
                sizing: Sizing {
                    size_bytes: None,
                    stride_bytes: Some(s.stride_bytes),
                    layout: Some(s.layout.clone()),
                    level: Some(p.label.clone()),
                },
            });
        }
    }
    out
}

/// What one child reports about its buffer and chain (its benchmp child detail).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildNote {
    /// Child number.
    pub index: usize,
    /// CPU it was pinned to.
    pub cpu: Option<usize>,
    /// Seed of its page shuffle.
    pub seed: u64,
    /// Time to map the buffer and write the chain, ns.
    pub setup_ns: u64,
    /// What backs the buffer after the chain was written.
    pub pages: benchmp::sys::mem::PagesObtained,
}

/// One child's figure at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildPoint {
    /// Child number.
    pub index: usize,
    /// CPU it ran on.
    pub cpu: Option<usize>,
    /// Its cluster.
    pub cluster: usize,
    /// Its fastest interval, ns per load.
    pub ns: f64,
    /// Accepted intervals.
    pub samples: usize,
}

/// One cluster's figure at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterPoint {
    /// Cluster index.
    pub cluster: usize,
    /// Mean of its children's figures, ns per load.
    pub ns: f64,
}

/// Everything measured at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Array size, bytes.
    pub size_bytes: u64,
    /// Array size, MiB (2^20 bytes, lmbench's first column).
    pub size_mib: f64,
    /// The figure on the text line (per `--aggregate`), ns per load.
    pub ns: f64,
    /// lmbench's figure: the fastest interval over all children, ns per load.
    pub lmbench_ns: f64,
    /// Median over every accepted interval, ns per load (it predicts the next size).
    pub median_ns: f64,
    /// Per child.
    pub per_child: Vec<ChildPoint>,
    /// Per cluster.
    pub per_cluster: Vec<ClusterPoint>,
    /// Loads in one lap of the ring actually walked (`None`: not computed, too large).
    pub ring_loads: Option<usize>,
    /// Elements the layout meant to visit; larger than `ring_loads` when lmbench's random
    /// layout shortened the ring.
    pub intended_loads: usize,
    /// lmbench's loads per benchmark call at this size.
    pub lmbench_count_loads: usize,
    /// Passes per interval predicted from the previous size (`None`: sized from 1).
    pub predicted_passes: Option<u64>,
    /// Passes per interval each child settled on.
    pub passes: Vec<u64>,
    /// Most intervals a child spent sizing its count before the start (0 when predicted).
    pub calibration_intervals: u32,
    /// True when a prediction was made and every child's first timed interval, running it,
    /// was long enough to count as a sample.
    pub prediction_confirmed: bool,
    /// Longest time a child spent sizing its count, ns.
    pub calibration_ns: u64,
    /// Framework calibration done for this size (only with --recalibrate-each-size), ns.
    pub framework_calibration_ns: u64,
    /// Accepted timed intervals over all children.
    pub accepted_intervals: usize,
    /// Shortest accepted interval after overhead subtraction, ns.
    pub shortest_accepted_ns: Option<u64>,
    /// Interval floor used, µs.
    pub enough_us: u64,
    /// Wall time of the measurement (fork to reap), ns.
    pub wall_ns: u64,
    /// What each child reported about its buffer.
    pub children: Vec<ChildNote>,
}
