//! What a `dto ab` or `dto speedup` run measures, shared by the run itself and by its worker
//! mode under `benchmp ab` (paired.rs).

use crate::bench::{Config, PageKind};
use crate::env::Settings;
use crate::report;

/// What to run.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// ab or speedup.
    pub mode: report::Mode,
    /// Configurations, in table order (cpu first when present).
    pub configs: Vec<Config>,
    /// `--only` names (empty: the table, or the PERF_SHORT subset).
    pub only: Vec<String>,
    /// Page sizes asked for.
    pub pages: Vec<PageKind>,
    /// Validated environment.
    pub settings: Settings,
}
