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
