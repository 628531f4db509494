//! dto's entry in `benchmp suite`'s plan: `dto speedup`, short except in full mode, writing its
//! distributions into a folder of the entry's own. `benchmp suite` compiles this file into its
//! plan too, so it uses only `benchmp::suite` and `std` (benchmp/src/suite.rs).

use benchmp::suite::{Machine, Mode, SuiteEntry};

/// The entries of `mode` on `machine`, in the order they run.
pub fn plan(mode: Mode, _machine: Machine) -> Vec<SuiteEntry> {
    let mut dto = SuiteEntry::new("dto-speedup", "dto", "speedup --json={json}");
    if mode != Mode::Full {
        dto = dto.with_env("PERF_SHORT", "1");
    }
    vec![dto.with_env("RESULTS_DIR", "{dir}")]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_but_in_full_mode_and_always_with_a_folder() {
        let m = Machine {
            cpus: 2,
            llc_bytes: 0,
        };
        assert_eq!(
            plan(Mode::Quick, m)[0].to_string(),
            "dto-speedup|PERF_SHORT=1 RESULTS_DIR={dir}|dto|speedup --json={json}"
        );
        let full = &plan(Mode::Full, m)[0];
        assert_eq!(
            full.to_string(),
            "dto-speedup|RESULTS_DIR={dir}|dto|speedup --json={json}"
        );
        assert!(full.needs_dir());
    }
}
