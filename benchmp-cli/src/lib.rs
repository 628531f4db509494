//! benchmp-cli: the front door of socbench, apart from the framework every tool links. Its
//! binary is `benchmp` (calibrate, topology, probe, overhead, power, compare, ab, suite,
//! summary, efficiency; `src/cmd/`); this library holds what only those commands need, so that
//! no tool carries it:
//!
//! - [`compare`]: `benchmp compare` and the comparisons of ab and the suite: loading reports
//!   and results folders, matching figures, verdicts, the text and CSV tables.
//! - [`stats`]: the statistics of those verdicts (`benchmp ab`'s paired tests, Mann–Whitney,
//!   the normal distribution) and their one dependency beyond the framework's, statrs.

pub mod compare;
pub mod stats;
