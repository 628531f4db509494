//! What a `--loaded` run reports: its report data as types (each row's parameters, the
//! table as the tool section), a row made from its measurement and its loads, the figures a
//! comparison judges, and the table as text in Intel MLC's loaded-latency layout.

use std::fmt::Write as _;

use benchmp::cpulist::format_cpu_list;
use benchmp::run::LoadRun;
use benchmp::schema::Better;
use benchmp::schema::{Figure, Sizing};
use benchmp::size::HumanSize;
use benchmp::topology::Topology;
use benchmp::{Measurement, ToolData};
use serde::{Deserialize, Serialize};

use crate::report::ChildNote;

/// The report data of a `--loaded` run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loaded;

impl ToolData for Loaded {
    type Params = RowParams;
    type Sample = ();
    type Child = ChildNote;
    type Extra = Table;

    /// The chain's size and stride (the row's delay is in its name).
    fn sizing(p: &RowParams) -> Sizing {
        Sizing {
            size_bytes: Some(p.size_bytes),
            stride_bytes: Some(p.stride_bytes),
            ..Sizing::default()
        }
    }

    /// One figure per row ([`figures`]).
    fn figures(report: &Report) -> Vec<Figure> {
        report.extra.as_ref().map(figures).unwrap_or_default()
    }

    /// A row kept with a starved load measured on a busy machine: the run is noisy, not
    /// failed.
    fn noise(report: &Report) -> Vec<String> {
        report
            .extra
            .iter()
            .flat_map(|t| &t.rows)
            .filter_map(|r| r.noise.clone())
            .collect()
    }
}

/// The report of a `--loaded` run.
pub type Report = benchmp::Report<Loaded>;

/// Parameters of one row's measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowParams {
    /// Chain size, bytes.
    pub size_bytes: u64,
    /// Chain stride, bytes.
    pub stride_bytes: u64,
    /// Injection delay (`None`: the unloaded row).
    pub delay: Option<u64>,
    /// The load's operation.
    pub load: String,
}

/// One load child's share of a row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadFigure {
    /// CPU it ran on.
    pub cpu: usize,
    /// Its cluster.
    pub cluster: usize,
    /// Bandwidth over the chaser's window, MB/s (lmbench's accounting: bytes of the chunks).
    pub mb_s: f64,
    /// Share of the chaser's window it spent loading (1: all of it).
    pub coverage: f64,
    /// Time inside the window it was not running, ns.
    pub stalled_ns: u64,
    /// It loaded the whole window.
    pub ran_through: bool,
}

/// Load bandwidth of one cluster in a row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterLoad {
    /// Cluster.
    pub cluster: usize,
    /// Load CPUs in it.
    pub cpus: Vec<usize>,
    /// Their summed bandwidth, MB/s.
    pub mb_s: f64,
}

/// One row of the table: a delay, the load it gave, the latency under it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Injection delay (`None`: unloaded).
    pub delay: Option<u64>,
    /// Chaser's latency, ns per load (lmbench's minimum rule over its intervals).
    pub latency_ns: f64,
    /// ns per load of every accepted interval.
    pub samples: Vec<f64>,
    /// Summed load bandwidth over the chaser's window, MB/s.
    pub load_mb_s: f64,
    /// The same as memory traffic (bw_mem's bus model: write-allocate counted), MB/s.
    pub load_bus_mb_s: f64,
    /// Each load child.
    pub loads: Vec<LoadFigure>,
    /// Per cluster of the load CPUs.
    pub clusters: Vec<ClusterLoad>,
    /// Smallest share of the window any load covered (1 for the unloaded row).
    pub overlap: f64,
    /// Measurements taken for the row: more than one when a load was starved (another task
    /// took its CPU for part of the window) and the row was measured again.
    #[serde(default = "one")]
    pub attempts: usize,
    /// Why the row is noisy: its load was still starved after every attempt. The row is
    /// kept, with its measured load share (`overlap`), instead of failing the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<String>,
}

fn one() -> usize {
    1
}

/// The report's tool section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Chain size, bytes.
    pub size_bytes: u64,
    /// Chain stride, bytes.
    pub stride_bytes: u64,
    /// The chain's layout.
    pub layout: String,
    /// The chaser's CPU.
    pub chase_cpu: usize,
    /// The load's operation.
    pub load: String,
    /// The load's implementation.
    pub load_kernel: String,
    /// The load CPUs.
    pub load_cpus: Vec<usize>,
    /// Each load child's buffer, bytes.
    pub load_bytes: u64,
    /// Bytes between two delays.
    pub chunk_bytes: u64,
    /// What a delay counts.
    pub delay_unit: String,
    /// Rows: unloaded first, then one per delay in the order given.
    pub rows: Vec<Row>,
}

/// Share of the window `l` spent loading: its run cut to the window, less its stalls.
pub fn coverage(l: &LoadRun) -> f64 {
    let w = l.window_ns();
    if w == 0 {
        return 0.0;
    }
    let from = l.started_ns.max(l.window_start_ns);
    let to = l.stopped_ns.min(l.window_end_ns);
    let ran = to.saturating_sub(from).saturating_sub(l.stalled_ns);
    ran as f64 / w as f64
}

/// A row from a measurement and its loads; `bytes`/`bus` per load iteration.
pub(super) fn row(
    m: &Measurement<Loaded>,
    delay: Option<u64>,
    topo: &Topology,
    bytes: f64,
    bus: f64,
) -> Row {
    let samples: Vec<f64> = m
        .children
        .iter()
        .flat_map(|c| c.pairs().map(|p| m.metric.value(p)))
        .collect();
    let loads: Vec<LoadFigure> = m
        .loads
        .iter()
        .map(|l| {
            let cpu = l.cpu.unwrap_or(0);
            LoadFigure {
                cpu,
                cluster: topo.cluster_of(cpu),
                mb_s: l.rate(bytes) / 1e6,
                coverage: coverage(l),
                stalled_ns: l.stalled_ns,
                ran_through: l.ran_through,
            }
        })
        .collect();
    let bus_mb_s = m.loads.iter().map(|l| l.rate(bus) / 1e6).sum();
    Row {
        delay,
        latency_ns: m.aggregate.cluster,
        samples,
        load_mb_s: loads.iter().map(|l| l.mb_s).sum(),
        load_bus_mb_s: bus_mb_s,
        overlap: loads.iter().map(|l| l.coverage).fold(1.0, f64::min),
        clusters: per_cluster(&loads),
        loads,
        attempts: 1,
        noise: None,
    }
}

/// Load bandwidth summed per cluster, clusters in order.
pub fn per_cluster(loads: &[LoadFigure]) -> Vec<ClusterLoad> {
    let mut out: Vec<ClusterLoad> = Vec::new();
    for l in loads {
        match out.iter_mut().find(|c| c.cluster == l.cluster) {
            Some(c) => {
                c.cpus.push(l.cpu);
                c.mb_s += l.mb_s;
            }
            None => out.push(ClusterLoad {
                cluster: l.cluster,
                cpus: vec![l.cpu],
                mb_s: l.mb_s,
            }),
        }
    }
    out.sort_by_key(|c| c.cluster);
    out
}

/// One latency figure per row, for comparisons.
pub fn figures(t: &Table) -> Vec<Figure> {
    t.rows
        .iter()
        .map(|r| Figure {
            name: match r.delay {
                None => "loaded latency unloaded".into(),
                Some(d) => format!("loaded latency delay {d}"),
            },
            cpu: Some(t.chase_cpu),
            cluster: None,
            unit: "ns".into(),
            better: Better::Lower,
            value: r.latency_ns,
            samples: r.samples.clone(),
            sizing: Sizing {
                size_bytes: Some(t.size_bytes),
                stride_bytes: Some(t.stride_bytes),
                ..Sizing::default()
            },
        })
        .collect()
}

/// The table as text, in MLC's loaded-latency layout (delay, latency, bandwidth), with a
/// column per cluster when the loads span several.
pub fn render(t: &Table) -> String {
    let mut out = format!(
        "loaded latency: random chain over {} (stride {}) on CPU {}; load {} ({}) on CPUs {}, {} per chunk\n",
        HumanSize(t.size_bytes),
        t.stride_bytes,
        t.chase_cpu,
        t.load,
        t.load_kernel,
        format_cpu_list(&t.load_cpus),
        HumanSize(t.chunk_bytes),
    );
    let clusters: Vec<usize> = t
        .rows
        .iter()
        .flat_map(|r| r.clusters.iter().map(|c| c.cluster))
        .fold(Vec::new(), |mut v, c| {
            if !v.contains(&c) {
                v.push(c);
            }
            v
        });
    let split = clusters.len() > 1;
    let _ = write!(
        out,
        "{:>10} {:>10} {:>12}",
        "Inject", "Latency", "Bandwidth"
    );
    if split {
        for c in &clusters {
            let _ = write!(out, " {:>12}", format!("cluster {c}"));
        }
    }
    out.push('\n');
    let _ = write!(out, "{:>10} {:>10} {:>12}", "Delay", "(ns)", "MB/sec");
    if split {
        for _ in &clusters {
            let _ = write!(out, " {:>12}", "MB/sec");
        }
    }
    out.push('\n');
    let width = 34 + if split { 13 * clusters.len() } else { 0 };
    out.push_str(&"=".repeat(width));
    out.push('\n');
    for r in &t.rows {
        let (delay, mb) = match r.delay {
            None => ("unloaded".to_string(), "-".to_string()),
            Some(d) => (d.to_string(), format!("{:.0}", r.load_mb_s)),
        };
        // A row whose load was starved shows its load share instead of a clean figure.
        let mb = match &r.noise {
            Some(_) => format!("{mb} ({:.0} %)", r.overlap * 100.0),
            None => mb,
        };
        let _ = write!(out, "{delay:>10} {:>10.2} {mb:>12}", r.latency_ns);
        if split {
            for c in &clusters {
                let mb = r
                    .clusters
                    .iter()
                    .find(|k| k.cluster == *c)
                    .map_or(0.0, |k| k.mb_s);
                let _ = write!(out, " {mb:>12.0}");
            }
        }
        out.push('\n');
    }
    out
}
