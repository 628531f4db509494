//! The report every tool produces (one serde document): its schema, measurements, figures
//! and quality. Field names carry their units (`_ns`, `_us`, `_bytes`, `mb_per_s` with MB =
//! 10^6 as lmbench). Its exporters are [`crate::export`]'s.
//! A report also names its figures for comparison ([`default_figures`]: each measurement's
//! per-cluster figures, and the system's with several clusters, unless the tool names its own).

use serde::{Deserialize, Serialize};

use crate::aggregate::{Aggregate, AggregateMode, ChildFigure, Rule};
use crate::host::{Build, Host};
use crate::quality::{MachineState, Overlap, RunVerdict};
use crate::run::{ChildRun, Data, LoadRun};
use crate::sched::Placement;
use crate::schema::{Figure, Metric, Pair, Sizing};
use crate::timing::Calibration;
use crate::topology::Topology;

/// The types a tool keeps in its report: the parameters of a measurement, what its
/// benchmark records per interval and per child, and the report's own tool section. A tool
/// names them once (`impl ToolData for BwMem`) and reads its report back as those types.
///
/// It also names what its report says about its own measurements: the figures a comparison
/// judges, its notes and its own noise. `Session::finish` asks for them, so the
/// report it returns is final before anything is written.
pub trait ToolData: std::fmt::Debug + Sized + 'static {
    /// Parameters of one measurement (size, stride, operation…).
    type Params: Data;
    /// What a child records about one timed interval (`Benchmark::Sample`).
    type Sample: Data;
    /// What a child records about itself (`Benchmark::Child`).
    type Child: Data;
    /// The report's tool section (`extra`).
    type Extra: Data;

    /// What sizes a measurement of these parameters besides its name ([`Sizing`]: its array
    /// size, stride, order): the one place a tool says which of its parameters make a figure
    /// what it is. Nothing by default (a figure named by its name alone).
    fn sizing(_params: &Self::Params) -> Sizing {
        Sizing::default()
    }

    /// The figures a comparison judges ([`Report::figures`]), from the report as finished so
    /// far: by default each measurement's per-cluster figures under its name and sizing
    /// ([`default_figures`], [`Measurement::label`]).
    fn figures(report: &Report<Self>) -> Vec<Figure> {
        default_figures(&report.measurements, Measurement::label)
    }

    /// What the tool finds odd about its own figures that is not noise ([`Quality::notes`]);
    /// none by default.
    fn notes(_report: &Report<Self>) -> Vec<String> {
        Vec::new()
    }

    /// Noise the tool found in its own measurements, one reason each, added to the run's
    /// verdict (which any reason makes noisy); none by default.
    fn noise(_report: &Report<Self>) -> Vec<String> {
        Vec::new()
    }

    /// The work a measurement's power is divided by ([`crate::power::PowerRecord::per_watt`]),
    /// when the tool's headline figure is its own rather than the measurement's (dhry's DMIPS
    /// by `--aggregate`, from its tool section): the system's and each cluster's. `None` by
    /// default: the measurement's own figures ([`crate::session::works`]).
    fn work(_extra: &Self::Extra, _measurement: &Measurement<Self>) -> Option<Works> {
        None
    }

    /// Whether the report keeps each sample's tool detail (`Benchmark::Sample`); a tool that
    /// writes every sample elsewhere (dto's distributions.csv) keeps only their timing.
    const SAMPLE_DETAIL_KEPT: bool = true;
}

/// The system's work and each cluster's (index, work), to put per watt ([`ToolData::work`]).
pub type Works = (
    crate::power::Work<'static>,
    Vec<(usize, crate::power::Work<'static>)>,
);

/// Any tool's report read without knowing the tool (`benchmp compare`, scripts): its tool
/// data stay JSON values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnyTool;

impl ToolData for AnyTool {
    type Params = serde_json::Value;
    type Sample = serde_json::Value;
    type Child = serde_json::Value;
    type Extra = serde_json::Value;
}

/// A tool with no data of its own (the framework's probe).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoData;

impl ToolData for NoData {
    type Params = ();
    type Sample = ();
    type Child = ();
    type Extra = ();
}

/// One measurement: one benchmark configuration run by all children.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Measurement<T: ToolData> {
    /// What was measured (e.g. `rd`, `lat_mem_rd`, `dhrystone`).
    pub name: String,
    /// Tool-specific parameters (e.g. `size_bytes`, `stride_bytes`).
    pub params: T::Params,
    /// What sizes it besides its name, as the tool declares it ([`ToolData::sizing`]; absent
    /// from reports made before it was kept).
    #[serde(default, skip_serializing_if = "Sizing::is_empty")]
    pub sizing: Sizing,
    /// How samples become figures.
    pub metric: Metric,
    /// Representative sample rule.
    pub rule: Rule,
    /// Interval floor used, µs.
    pub enough_us: u64,
    /// Per-child figures.
    pub figures: Vec<ChildFigure>,
    /// System figures.
    pub aggregate: Aggregate,
    /// Raw results of every child.
    pub children: Vec<ChildRun<T::Sample, T::Child>>,
    /// Wall time of the measurement (fork to reap), ns.
    pub wall_ns: u64,
    /// Time the children spent sizing their counts (longest child), ns.
    pub calibration_ns: u64,
    /// How much of each child's timed work ran while all were timing (absent in reports before it was kept).
    #[serde(default = "Overlap::unknown")]
    pub overlap: Overlap,
    /// What each load child did over the measuring window (empty without load children).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<LoadRun>,
    /// What `--cool-down` waited for before this measurement, and the zones it started at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cool_down: Option<crate::quality::CoolDown>,
    /// Energy, power and temperatures over its timed window (absent without a power source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::power::PowerRecord>,
}

// By hand: a derived Clone would ask the marker type `T` itself to be Clone.
impl<T: ToolData> Clone for Measurement<T> {
    fn clone(&self) -> Self {
        Measurement {
            name: self.name.clone(),
            params: self.params.clone(),
            sizing: self.sizing.clone(),
            metric: self.metric.clone(),
            rule: self.rule,
            enough_us: self.enough_us,
            figures: self.figures.clone(),
            aggregate: self.aggregate.clone(),
            children: self.children.clone(),
            wall_ns: self.wall_ns,
            calibration_ns: self.calibration_ns,
            overlap: self.overlap.clone(),
            loads: self.loads.clone(),
            cool_down: self.cool_down.clone(),
            power: self.power.clone(),
        }
    }
}

/// Run quality: machine state around the run and the noise verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quality {
    /// State before the first measurement.
    pub before: MachineState,
    /// State after the last measurement.
    pub after: MachineState,
    /// Noise verdict over all measurements.
    pub verdict: RunVerdict,
    /// What the tool found odd about its own figures that is not noise (e.g. bw_mem's shape
    /// check), one line each; `--fail-on-noise` does not refuse them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A phase of the parent process (calibration, each measurement's run), mirrored by a
/// trace_marker slice of the same name when tracing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParentPhase {
    /// `calibrate` or `run`.
    pub name: String,
    /// The measurement's name for `run`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub label: Option<String>,
    /// Start, CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    /// End, CLOCK_MONOTONIC ns.
    pub end_ns: u64,
}

/// Everything a tool run produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Report<T: ToolData> {
    /// Tool name.
    pub tool: String,
    /// socbench version.
    pub version: String,
    /// Command line.
    pub args: Vec<String>,
    /// Host identity.
    pub host: Host,
    /// How the binary was built.
    pub build: Build,
    /// CPUs, clusters and caches.
    pub topology: Topology,
    /// Interval and overheads.
    pub calibration: Calibration,
    /// Child placement.
    pub placement: Placement,
    /// Figure shown on the text line.
    pub aggregate_mode: AggregateMode,
    /// All measurements, in order.
    pub measurements: Vec<Measurement<T>>,
    /// Run quality.
    pub quality: Quality,
    /// Wall time of the whole run, ns.
    pub wall_ns: u64,
    /// Time spent calibrating (framework calibration + children sizing counts), ns.
    pub calibration_ns: u64,
    /// Process id of the parent.
    pub pid: i32,
    /// The parent's phases, in order (children's phases are in each child's result).
    pub phases: Vec<ParentPhase>,
    /// The figures a comparison judges ([`crate::schema::Figure`]); absent from reports made before
    /// they were kept (`benchmp compare` then derives them from the measurements).
    #[serde(default)]
    pub figures: Vec<Figure>,
    /// What `--pin-freq` / `--governor` wrote for the run and whether it was written back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<crate::freq::pin::PinRecord>,
    /// The idle power measured before the run (`--power-baseline`), subtracted from every
    /// measurement's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_baseline: Option<crate::power::Baseline>,
    /// Tool-specific results beyond the measurements (e.g. a latency curve summary).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub extra: Option<T::Extra>,
    /// Set when the run was stopped before it finished: the measurements here are those
    /// that finished, and the tool's own summary (`extra`) is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<Incomplete>,
}

/// How an interrupted run ended ([`Report::incomplete`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Incomplete {
    /// The signal that stopped it (`SIGINT`).
    pub signal: String,
    /// The measurement that was running, if one was.
    pub running: Option<String>,
    /// How many measurements finished (all of them are in the report).
    pub measured: usize,
}

impl<T: ToolData> Measurement<T> {
    /// Its name with its sizing (`rd 64M`, `loads 256M stride 64 random`): what its figures
    /// are called unless the tool names them otherwise.
    pub fn label(&self) -> String {
        self.sizing.label(&self.name)
    }

    /// The figure the text output shows, per the aggregate mode.
    pub fn figure(&self, mode: AggregateMode) -> f64 {
        self.aggregate.get(mode)
    }
}

/// The median of the clocks `cpu`'s children measured over all `measurements` (MHz), with
/// the source of that median's measurement.
pub fn measured_clock<T: ToolData>(
    measurements: &[Measurement<T>],
    cpu: usize,
) -> Option<(f64, crate::freq::ClockSource)> {
    let mut v: Vec<(f64, crate::freq::ClockSource)> = measurements
        .iter()
        .flat_map(|m| &m.children)
        .filter(|c| c.cpu == Some(cpu))
        .filter_map(|c| c.measured_clock())
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    crate::stats::middle(&v).copied()
}

/// The default figures of measurements: each cluster's (the sum of its children's figures for
/// a throughput, their mean for a latency; the child's own CPU when it has one child), and
/// with several clusters the system's. Single children of a parallel run are not judged on
/// their own: how a cluster's bandwidth splits between its cores moves from run to run, its
/// total does not. `label` names each measurement (a tool's own naming, e.g. with its size).
pub fn default_figures<T: ToolData>(
    measurements: &[Measurement<T>],
    label: impl Fn(&Measurement<T>) -> String,
) -> Vec<Figure> {
    let mut out = Vec::new();
    for m in measurements {
        let name = label(m);
        let unit = m.metric.unit().to_string();
        let better = m.metric.better();
        let additive = crate::aggregate::additive(&m.metric, m.overlap.sequential);
        let per_child: Vec<Vec<f64>> = m
            .children
            .iter()
            .map(|c| c.pairs().map(|p: Pair| m.metric.value(p)).collect())
            .collect();
        for k in &m.aggregate.per_cluster {
            let members: Vec<usize> = (0..m.figures.len())
                .filter(|&i| m.figures[i].cluster == k.cluster)
                .collect();
            let samples: Vec<Vec<f64>> = members.iter().map(|&i| per_child[i].clone()).collect();
            out.push(Figure {
                name: name.clone(),
                cpu: match members.as_slice() {
                    [one] => m.figures[*one].cpu,
                    _ => None,
                },
                cluster: Some(k.cluster),
                unit: unit.clone(),
                better,
                value: k.total,
                samples: system_samples(&samples, additive),
                sizing: m.sizing.clone(),
            });
        }
        if m.aggregate.per_cluster.len() > 1 {
            out.push(Figure {
                name,
                cpu: None,
                cluster: None,
                unit,
                better,
                value: m.aggregate.cluster,
                samples: system_samples(&per_child, additive),
                sizing: m.sizing.clone(),
            });
        }
    }
    out
}

/// Samples of the system figure: for an additive figure the children's i-th samples added
/// (as many as the child with the fewest), else every child's samples pooled.
fn system_samples(per_child: &[Vec<f64>], additive: bool) -> Vec<f64> {
    if !additive {
        return per_child.iter().flatten().copied().collect();
    }
    let n = per_child.iter().map(Vec::len).min().unwrap_or(0);
    (0..n)
        .map(|i| per_child.iter().map(|s| s[i]).sum())
        .collect()
}

#[cfg(test)]
mod figure_tests {
    use super::*;
    use crate::schema::Better;

    #[test]
    fn system_samples_add_or_pool() {
        let kids = vec![vec![1.0, 2.0, 3.0], vec![10.0, 20.0]];
        assert_eq!(system_samples(&kids, true), vec![11.0, 22.0]);
        assert_eq!(system_samples(&kids, false).len(), 5);
    }

    #[test]
    fn figures_describe_their_cpu_or_cluster() {
        let f = Figure {
            name: "rd 64M".into(),
            cpu: Some(3),
            cluster: Some(1),
            unit: "MB/s".into(),
            better: Better::Higher,
            value: 1.0,
            samples: vec![1.0],
            sizing: Sizing::default(),
        };
        assert_eq!(f.describe(), "rd 64M cpu3");
        let sys = Figure {
            cpu: None,
            cluster: None,
            ..f
        };
        assert_eq!(sys.describe(), "rd 64M");
    }
}
