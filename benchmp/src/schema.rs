//! The words every report and comparison is written in: a [`Figure`] (what was measured, on
//! which CPU or cluster, in which unit, which way is better, its value and samples), the
//! direction [`Better`], the timed interval [`Pair`] children send, and the [`Metric`] that
//! turns one into a figure. A leaf: it imports nothing of the crate.

use serde::{Deserialize, Serialize};

/// One timed interval: `n` iterations took `u` nanoseconds (after overhead subtraction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pair {
    /// Iterations run in the interval.
    pub n: u64,
    /// Net time of the interval in nanoseconds.
    pub u: u64,
}

impl Pair {
    /// Time per iteration in nanoseconds (0 when `n` is 0).
    pub fn per_iteration_ns(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.u as f64 / self.n as f64
        }
    }
}

/// Which way a figure gets better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Throughputs (MB/s, iterations/s, DMIPS).
    Higher,
    /// Times and latencies (ns).
    Lower,
}

impl Better {
    /// "higher" or "lower".
    pub fn word(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }
}

/// What a sample's (n, u) turns into.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Metric {
    /// A throughput: `per_iteration` units per iteration, reported per second (MB/s, DMIPS…).
    Rate {
        /// Units of work in one iteration (e.g. MB = 10^6 bytes for bandwidth).
        per_iteration: f64,
        /// Unit of the figure, e.g. `MB/s`.
        unit: String,
    },
    /// A latency: time per operation, `per_iteration` operations per iteration, in ns.
    Latency {
        /// Operations in one iteration (e.g. dependent loads).
        per_iteration: f64,
        /// Unit of the figure, `ns`.
        unit: String,
    },
}

impl Metric {
    /// The figure of one (n, u) pair (0 when nothing was measured).
    pub fn value(&self, p: Pair) -> f64 {
        if p.u == 0 || p.n == 0 {
            return 0.0;
        }
        match self {
            Metric::Rate { per_iteration, .. } => per_iteration * p.n as f64 * 1e9 / p.u as f64,
            Metric::Latency { per_iteration, .. } => p.u as f64 / (p.n as f64 * per_iteration),
        }
    }

    /// Unit label.
    pub fn unit(&self) -> &str {
        match self {
            Metric::Rate { unit, .. } | Metric::Latency { unit, .. } => unit,
        }
    }

    /// True for throughputs (which add up over cores).
    pub fn is_rate(&self) -> bool {
        matches!(self, Metric::Rate { .. })
    }
}

impl Metric {
    /// The direction of a figure of this metric: throughputs up, latencies down.
    pub fn better(&self) -> Better {
        if self.is_rate() {
            Better::Higher
        } else {
            Better::Lower
        }
    }
}

/// One figure of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// What was measured, stable across runs of the same command (e.g. `rd 64M`,
    /// `stride 128 L2`, `memcpy_64k 4k ab`).
    pub name: String,
    /// CPU of the child it describes (`None`: a cluster or system figure).
    pub cpu: Option<usize>,
    /// Cluster of that CPU, or of a cluster figure (`None`: the whole system).
    pub cluster: Option<usize>,
    /// Unit (`MB/s`, `ns`, `DMIPS`, `iterations/s`).
    pub unit: String,
    /// Which way it gets better.
    pub better: Better,
    /// The figure as the run reports it.
    pub value: f64,
    /// The values it comes from (one per accepted interval, or per timed operation).
    pub samples: Vec<f64>,
}

impl Figure {
    /// `rd 64M` on CPU 3, `rd 64M` for the system.
    pub fn describe(&self) -> String {
        match (self.cpu, self.cluster) {
            (Some(c), _) => format!("{} cpu{c}", self.name),
            (None, Some(k)) => format!("{} cluster{k}", self.name),
            (None, None) => self.name.clone(),
        }
    }
}
