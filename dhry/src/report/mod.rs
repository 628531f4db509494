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

use crate::Variant;
use crate::parallel::LoopDetail;

/// dhry's report data: each measurement's variant and run count, each child's timed loop
/// record, and the summary as the tool section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dhry;

impl benchmp::ToolData for Dhry {
    type Params = Params;
    type Sample = LoopDetail;
    type Child = ();
    type Extra = Summary;
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
