//! From samples to figures: the per-child value, the per-cluster and system figures, and
//! lmbench's own figure for comparison. Pure functions of the children's results.
//!
//! lmbench reports the median of all children's samples times the number of children, which on
//! a phone with big and little cores describes no core at all. socbench's default (`cluster`)
//! takes each child's own figure; for a throughput a cluster's figure is the sum of its
//! children's (its mean × its children) and the system's the sum of the clusters', that is of
//! every child: what the cores moved together. For a latency a cluster's figure is the mean of
//! its children and the system's the mean of the clusters', each cluster weighted once.
//! `median` is lmbench's figure, kept for comparison: one odd child cannot move it, but on
//! mixed cores it describes none of them.
//!
//! When the children ran one after another (`--sequential`) nothing ran together, so nothing
//! is added: every figure is a mean (one core's figure), and lmbench's median is not scaled.

use serde::{Deserialize, Serialize};

use crate::schema::{Metric, Pair};
use crate::stats::{median, minimum, sorted_pairs};
use crate::topology::Topology;

/// Which sample represents a set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// lmbench's median (bw_mem and most tools).
    Median,
    /// lmbench's minimum (lat_mem_rd: the fastest run is the truest latency).
    Minimum,
}

impl Rule {
    /// Applies the rule to a sorted array.
    pub fn pick(self, sorted: &[Pair]) -> Pair {
        match self {
            Rule::Median => median(sorted),
            Rule::Minimum => minimum(sorted),
        }
    }
}

/// Which system figure a tool prints on its text line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum AggregateMode {
    /// Each child's own figure, per cluster and for the system: throughputs added, latencies
    /// averaged (default). `sum`, its earlier second name, is still accepted.
    #[default]
    #[value(alias = "sum")]
    #[serde(alias = "sum")]
    Cluster,
    /// lmbench's figure: its rule over all children's samples (× children for throughputs).
    Median,
}

/// One child's figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildFigure {
    /// Child number.
    pub index: usize,
    /// CPU it was pinned to or last seen on.
    pub cpu: Option<usize>,
    /// Cluster of that CPU.
    pub cluster: usize,
    /// The figure of the child's representative sample.
    pub value: f64,
    /// The representative (n, u).
    pub pair: Pair,
    /// Accepted samples.
    pub samples: usize,
}

/// One cluster's figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterFigure {
    /// Cluster index in the topology.
    pub cluster: usize,
    /// Children in it.
    pub children: usize,
    /// Mean of its children's figures.
    pub mean: f64,
    /// For throughputs mean × children; for latencies the mean.
    pub total: f64,
}

/// All system figures of a measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aggregate {
    /// Per-cluster figures, by cluster index.
    pub per_cluster: Vec<ClusterFigure>,
    /// Throughputs: Σ cluster totals (= Σ children). Latencies: mean of the cluster means.
    pub cluster: f64,
    /// lmbench's figure: its rule over the merged samples, × children for throughputs.
    pub median: f64,
    /// The merged representative (n, u) lmbench would keep.
    pub lmbench_pair: Pair,
}

impl Aggregate {
    /// The figure selected by `mode`.
    pub fn get(&self, mode: AggregateMode) -> f64 {
        match mode {
            AggregateMode::Cluster => self.cluster,
            AggregateMode::Median => self.median,
        }
    }
}

/// Per-child figures from each child's accepted samples, with its cluster.
pub fn child_figures(
    children: &[(usize, Option<usize>, Vec<Pair>)],
    metric: &Metric,
    rule: Rule,
    topo: &Topology,
) -> Vec<ChildFigure> {
    children
        .iter()
        .map(|(index, cpu, pairs)| {
            let sorted = sorted_pairs(pairs.iter().copied());
            let pair = rule.pick(&sorted);
            ChildFigure {
                index: *index,
                cpu: *cpu,
                cluster: cluster_of(*cpu, topo),
                value: metric.value(pair),
                pair,
                samples: sorted.len(),
            }
        })
        .collect()
}

/// The cluster a child's figure counts in: its CPU's, or the first for a child whose CPU is
/// not known.
pub fn cluster_of(cpu: Option<usize>, topo: &Topology) -> usize {
    cpu.map(|c| topo.cluster_of(c)).unwrap_or(0)
}

/// Whether a metric's figures add up over children: throughputs of children that ran together
/// (`solo`: one after another, when nothing is added).
pub fn additive(metric: &Metric, solo: bool) -> bool {
    metric.is_rate() && !solo
}

/// Per-cluster figures of children's figures given as (cluster, figure), by cluster index:
/// each cluster's mean, and its total (for `additive` figures the mean × its children).
pub fn cluster_figures(values: &[(usize, f64)], additive: bool) -> Vec<ClusterFigure> {
    let mut clusters: Vec<usize> = values.iter().map(|v| v.0).collect();
    clusters.sort_unstable();
    clusters.dedup();
    clusters
        .iter()
        .map(|&c| {
            let vals: Vec<f64> = values.iter().filter(|v| v.0 == c).map(|v| v.1).collect();
            let mean = vals.iter().sum::<f64>() / vals.len() as f64;
            ClusterFigure {
                cluster: c,
                children: vals.len(),
                mean,
                total: if additive {
                    mean * vals.len() as f64
                } else {
                    mean
                },
            }
        })
        .collect()
}

/// The system figure of per-cluster figures: `additive` ones the sum of the clusters' totals
/// (every child's figure added), the others the mean of the clusters' means, each cluster
/// weighted once. Every system figure socbench gives (a report's, `benchmp ab`'s per step) is
/// this one.
pub fn system_figure(per_cluster: &[ClusterFigure], additive: bool) -> f64 {
    if additive {
        per_cluster.iter().map(|c| c.total).sum()
    } else {
        per_cluster.iter().map(|c| c.mean).sum::<f64>() / per_cluster.len().max(1) as f64
    }
}

/// [`system_figure`] straight from children's (cluster, figure).
pub fn system_value(values: &[(usize, f64)], metric: &Metric, solo: bool) -> f64 {
    let additive = additive(metric, solo);
    system_figure(&cluster_figures(values, additive), additive)
}

/// System figures from per-child figures and the merged samples; `solo` when the children
/// ran one after another (nothing is added then).
pub fn aggregate(
    figures: &[ChildFigure],
    all_pairs: &[Pair],
    metric: &Metric,
    rule: Rule,
    solo: bool,
) -> Aggregate {
    let additive = additive(metric, solo);
    let values: Vec<(usize, f64)> = figures.iter().map(|f| (f.cluster, f.value)).collect();
    let per_cluster = cluster_figures(&values, additive);
    let cluster = system_figure(&per_cluster, additive);
    let merged = sorted_pairs(all_pairs.iter().copied());
    let lmbench_pair = rule.pick(&merged);
    let one = metric.value(lmbench_pair);
    let median = if additive {
        one * figures.len() as f64
    } else {
        one
    };
    Aggregate {
        per_cluster,
        cluster,
        median,
        lmbench_pair,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn phone() -> Topology {
        Topology::from_root(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/phone8/sys"),
        )
        .unwrap()
    }

    fn rate() -> Metric {
        Metric::Rate {
            per_iteration: 1.0,
            unit: "MB/s".into(),
        }
    }

    /// Children whose every sample gives `v` units/s with per_iteration 1: n = v, u = 1e9.
    fn kids(values: &[(usize, f64)]) -> Vec<(usize, Option<usize>, Vec<Pair>)> {
        values
            .iter()
            .enumerate()
            .map(|(i, &(cpu, v))| {
                (
                    i,
                    Some(cpu),
                    vec![
                        Pair {
                            n: v as u64,
                            u: 1_000_000_000
                        };
                        3
                    ],
                )
            })
            .collect()
    }

    #[test]
    fn cluster_rule_on_the_phone() {
        // 10,10 | 20,20,20 | 30,30 | 40 → 10·2 + 20·3 + 30·2 + 40·1 = 180.
        let t = phone();
        let k = kids(&[
            (0, 10.0),
            (1, 10.0),
            (2, 20.0),
            (3, 20.0),
            (4, 20.0),
            (5, 30.0),
            (6, 30.0),
            (7, 40.0),
        ]);
        let figs = child_figures(&k, &rate(), Rule::Median, &t);
        let all: Vec<Pair> = k.iter().flat_map(|(_, _, p)| p.clone()).collect();
        let a = aggregate(&figs, &all, &rate(), Rule::Median, false);
        assert_eq!(a.cluster, 180.0);
        // The same children timed one by one: per-core figures, nothing added.
        let solo = aggregate(&figs, &all, &rate(), Rule::Median, true);
        assert_eq!(
            solo.cluster, 25.0,
            "mean of the cluster means 10, 20, 30, 40"
        );
        assert_eq!(solo.median, 20.0);
        let totals: Vec<f64> = a.per_cluster.iter().map(|c| c.total).collect();
        assert_eq!(totals, vec![20.0, 60.0, 60.0, 40.0]);
        // lmbench: median of 24 samples (middle two are 20s) × 8 children = 160.
        assert_eq!(a.median, 160.0);
        assert_eq!(a.get(AggregateMode::Median), 160.0);
    }

    #[test]
    fn cluster_rule_averages_within_a_cluster() {
        // Two little cores measured 8 and 12 → cluster 20; one prime core 40 → 60 in all.
        let t = phone();
        let k = kids(&[(0, 8.0), (1, 12.0), (7, 40.0)]);
        let figs = child_figures(&k, &rate(), Rule::Median, &t);
        let all: Vec<Pair> = k.iter().flat_map(|(_, _, p)| p.clone()).collect();
        let a = aggregate(&figs, &all, &rate(), Rule::Median, false);
        assert_eq!(a.cluster, 60.0);
        assert_eq!(a.per_cluster.len(), 2);
        assert_eq!(a.per_cluster[0].mean, 10.0);
    }

    #[test]
    fn latency_aggregates_are_means_and_lmbench_minimum() {
        let t = phone();
        let lat = Metric::Latency {
            per_iteration: 100.0,
            unit: "ns".into(),
        };
        let k = vec![
            (
                0,
                Some(0),
                vec![Pair { n: 10, u: 5000 }, Pair { n: 10, u: 4000 }],
            ),
            (
                1,
                Some(7),
                vec![Pair { n: 10, u: 2000 }, Pair { n: 10, u: 3000 }],
            ),
        ];
        let figs = child_figures(&k, &lat, Rule::Minimum, &t);
        assert_eq!(figs[0].value, 4.0);
        assert_eq!(figs[1].value, 2.0);
        let all: Vec<Pair> = k.iter().flat_map(|(_, _, p)| p.clone()).collect();
        let a = aggregate(&figs, &all, &lat, Rule::Minimum, false);
        assert_eq!(a.cluster, 3.0);
        assert_eq!(a.median, 2.0, "lmbench keeps the fastest sample of all");
    }

    #[test]
    fn metric_values() {
        let bw = Metric::Rate {
            per_iteration: 64.0,
            unit: "MB/s".into(),
        };
        // 10 passes of 64 MB in 0.5 s = 1280 MB/s.
        assert_eq!(
            bw.value(Pair {
                n: 10,
                u: 500_000_000
            }),
            1280.0
        );
        assert_eq!(bw.value(Pair { n: 1, u: 0 }), 0.0);
    }
}
