//! What `dhry` reports, built from benchmp's measurement: per-child results and per-cluster
//! and total figures ([`model`], the JSON report's `extra`), and the reference's text
//! ([`text`], a pure function of [`Summary`]). JSON and CSV are benchmp's, shared by every
//! socbench tool.

pub mod model;
pub mod text;

#[cfg(test)]
mod fixtures;

pub use model::{ChildResult, ClusterResult, Setup, Summary, Verification};
pub use text::render_text;

use serde::{Deserialize, Serialize};

use crate::{FinalValues, Mismatch, Variant};

/// dhry's report data: each measurement's variant and run count, each child's timed loop
/// record, and the summary as the tool section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dhry;

impl benchmp::ToolData for Dhry {
    type Params = Params;
    type Sample = LoopDetail;
    type Child = ();
    type Extra = Summary;

    /// The measurement's figures under its own name, with its variant
    /// ([`Params::figure_name`]).
    fn figures(report: &Report) -> Vec<benchmp::schema::Figure> {
        benchmp::report::default_figures(&report.measurements, |m| m.params.figure_name())
    }

    /// The run's DMIPS per watt (`power.per_energy`, `per_cluster`) are the figures the text
    /// shows: the total by `--aggregate` and each cluster's DMIPS, each per net watt of its
    /// source.
    fn work(summary: &Summary, _: &benchmp::Measurement<Dhry>) -> Option<benchmp::report::Works> {
        use benchmp::power::Work;
        let dmips = |value| Work::Rate {
            value,
            unit: "DMIPS",
        };
        let clusters = summary
            .clusters
            .iter()
            .map(|c| (c.cluster, dmips(c.dmips_total)))
            .collect();
        Some((dmips(summary.total_dmips), clusters))
    }
}

/// dhry's report.
pub type Report = benchmp::Report<Dhry>;

/// Parameters of one measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Build variant of the loop.
    pub variant: Variant,
    /// Dhrystone runs per child.
    pub runs: u64,
}

impl Params {
    /// The name of its figure (`dhrystone strict`), the same in every run of the variant.
    pub fn figure_name(&self) -> String {
        format!("dhrystone {}", self.variant)
    }
}

/// What a child records about its timed loop (benchmp's per-sample detail).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopDetail {
    /// The build variant that ran.
    pub variant: Variant,
    /// Runs through Dhrystone in the timed loop.
    pub runs: u64,
    /// Runs made by the instance that ran the timed loop, since it was set up (equal to
    /// `runs`; `Arr_2_Glob[8][7]` is checked against it).
    pub runs_done: u64,
    /// Runs made on the spare instance to keep the core busy outside the timed loop, so far.
    pub keep_busy_runs: u64,
    /// The thread's CPU time (user + system) over the timed loop, if the clock could be read.
    pub thread_cpu_ns: Option<u64>,
    /// CPUs the child was allowed on (1 when pinned), if known.
    pub allowed_cpus: Option<usize>,
    /// True when every checked variable has its expected value.
    pub passed: bool,
    /// The variables that differ.
    pub mismatches: Vec<Mismatch>,
    /// The values the reference prints after the loop.
    pub final_values: FinalValues,
    /// [`crate::Dhrystone::checksum`] of the final state.
    pub checksum: u64,
}
