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

/// The suite's tools, in plan order: `SUITE_TOOLS` of `scripts/lib/tools.sh`, the one list
/// that the scripts (some of which run before any binary exists), `benchmp suite` and the
/// tests all take, read by `build.rs`. A new tool is added there, and the suite's plan takes
/// its entries from the tool's own `src/suite.rs`.
pub fn suite_tools() -> &'static [&'static str] {
    include!(concat!(env!("OUT_DIR"), "/suite_list.rs"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tool_list_is_read_from_tools_sh() {
        let tools = super::suite_tools();
        let sh = include_str!("../../scripts/lib/tools.sh");
        let line = format!("SUITE_TOOLS=\"{}\"", tools.join(" "));
        assert!(sh.lines().any(|l| l == line), "{tools:?}");
        let mut unique = tools.to_vec();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), tools.len(), "{tools:?}");
    }
}
