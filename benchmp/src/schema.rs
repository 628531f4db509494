//! The words every report and comparison is written in: a [`Figure`] (what was measured, on
//! which CPU or cluster, in which unit, which way is better, its value and samples), the
//! direction [`Better`], the timed interval [`Pair`] children send, and the [`Metric`] that
//! turns one into a figure, and a figure's [`Sizing`]. A leaf: it imports nothing of the crate
//! but its size words.

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

/// What sizes a measurement or figure besides its name, typed, as the tool that makes it
/// declares it ([`crate::ToolData::sizing`]). Two figures of one tool are the same figure
/// when their names and sizings are equal; settings a command may change without changing
/// what is measured (pages, an implementation, a variant) are not part of it. Readers (ab,
/// compare, the summary's headline, the plots, LAVA's report) take a figure's size, stride,
/// order and level from here, never from a tool's own parameter names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sizing {
    /// The array or buffer size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// The distance between consecutive accesses, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride_bytes: Option<u64>,
    /// The access order or layout (`random`, `sequential`, `conflict`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// The level of the memory hierarchy a figure stands for (`L1`, `L2`, `DRAM`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
}

impl Sizing {
    /// Nothing sizes it (a figure named by its name alone).
    pub fn is_empty(&self) -> bool {
        *self == Sizing::default()
    }

    /// `name` with its sizing after it: `rd 64M`, `loads 256M stride 64 random`. The size is
    /// left out when the name already shows it (`memcpy_64k 4k portable 64K`).
    pub fn label(&self, name: &str) -> String {
        let mut out = name.to_string();
        if let Some(b) = self.size_bytes {
            let shown = crate::size::HumanSize(b).to_string();
            if !out.contains(&shown) {
                out = format!("{out} {shown}");
            }
        }
        if let Some(s) = self.stride_bytes {
            out = format!("{out} stride {s}");
        }
        for part in [&self.layout, &self.level].into_iter().flatten() {
            out = format!("{out} {part}");
        }
        out
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
    /// What sizes it ([`Sizing`]; absent from reports made before figures carried it).
    #[serde(default, skip_serializing_if = "Sizing::is_empty")]
    pub sizing: Sizing,
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
