//! The suite's plan: every suite tool's entries ([`benchmp::suite`]), each tool's own
//! `src/suite.rs` compiled in by the build script for every name in `SUITE_TOOLS`
//! (`scripts/lib/tools.sh`), in that order, sized from the machine's own topology (the CPUs the
//! suite may use, the last-level cache). One plan for every place the suite runs: this machine,
//! a phone after `adb push`.

pub use benchmp::suite::{Machine, Mode, SuiteEntry, Word};

/// The tools' plans, one module per tool (made by `build.rs`).
mod tools {
    include!(concat!(env!("OUT_DIR"), "/suite_tools.rs"));
}

/// The entries of `mode` on `machine`, in the order they run: each tool's in the list's order.
pub fn plan(mode: Mode, machine: Machine) -> Vec<SuiteEntry> {
    let machine = Machine {
        cpus: machine.cpus.max(1),
        ..machine
    };
    tools::TOOLS
        .iter()
        .flat_map(|(_, plan)| plan(mode, machine))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODES: [Mode; 3] = [Mode::Quick, Mode::Default, Mode::Full];

    #[test]
    fn the_plan_runs_every_tool_of_the_list_in_its_order_and_no_other() {
        let names: Vec<&str> = tools::TOOLS.iter().map(|(t, _)| *t).collect();
        assert_eq!(names, benchmp_cli::suite_tools());
        for mode in MODES {
            let machine = Machine {
                cpus: 2,
                llc_bytes: 32 << 20,
            };
            // Each tool where it first runs, and only after the tools before it.
            let mut tools: Vec<&str> = Vec::new();
            for e in plan(mode, machine) {
                if tools.last() != Some(&e.tool) {
                    assert!(!tools.contains(&e.tool), "{mode:?}: {} is split", e.tool);
                    tools.push(e.tool);
                }
            }
            assert_eq!(tools, benchmp_cli::suite_tools(), "{mode:?}");
        }
    }

    #[test]
    fn labels_are_unique_file_names_of_their_tool() {
        for mode in MODES {
            for cpus in [1, 2, 8] {
                let p = plan(
                    mode,
                    Machine {
                        cpus,
                        llc_bytes: 1 << 20,
                    },
                );
                let mut labels: Vec<&str> = p.iter().map(|e| e.label.as_str()).collect();
                for e in &p {
                    assert!(e.label.starts_with(&format!("{}-", e.tool)), "{e}");
                    assert!(
                        e.label
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c)),
                        "{e}"
                    );
                    assert!(!e.to_string().contains('\n'), "{e}");
                }
                labels.sort_unstable();
                labels.dedup();
                assert_eq!(labels.len(), p.len(), "{mode:?} on {cpus}");
            }
        }
    }

    #[test]
    fn each_tool_brings_its_own_entries_and_no_cpu_known_is_one() {
        let eight = Machine {
            cpus: 8,
            llc_bytes: 0,
        };
        let all = plan(Mode::Default, eight);
        for (tool, own) in tools::TOOLS {
            let planned: Vec<&SuiteEntry> = all.iter().filter(|e| e.tool == *tool).collect();
            let own = own(Mode::Default, eight);
            assert_eq!(planned, own.iter().collect::<Vec<_>>(), "{tool}");
        }
        // No CPU known: each tool's plan of one.
        let none = plan(
            Mode::Default,
            Machine {
                cpus: 0,
                llc_bytes: 0,
            },
        );
        let one = plan(
            Mode::Default,
            Machine {
                cpus: 1,
                llc_bytes: 0,
            },
        );
        assert_eq!(none, one);
    }
}
