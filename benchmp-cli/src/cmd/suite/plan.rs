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
    fn quick_plan_on_this_kind_of_machine() {
        let p = plan(
            Mode::Quick,
            Machine {
                cpus: 2,
                llc_bytes: 32 << 20,
            },
        );
        let labels: Vec<&str> = p.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "bw_mem-rd-P1",
                "bw_mem-wr-P1",
                "bw_mem-cp-P1",
                "bw_mem-bzero-P1",
                "bw_mem-rd-P2",
                "bw_mem-wr-P2",
                "bw_mem-cp-P2",
                "bw_mem-bzero-P2",
                "lat_mem_rd-t",
                "lat_mem_rd-c2c",
                "lat_mem_rd-loaded",
                "dhry-P1",
                "coremark-P1",
                "dto-speedup",
            ]
        );
        assert!(p.last().unwrap().needs_dir());
        assert!(!p[0].needs_dir());
    }

    #[test]
    fn default_plan_runs_each_tool_alone_then_on_every_cpu() {
        let d = plan(
            Mode::Default,
            Machine {
                cpus: 8,
                llc_bytes: 0,
            },
        );
        let labels: Vec<&str> = d.iter().map(|e| e.label.as_str()).collect();
        assert!(labels.ends_with(&[
            "dhry-P1",
            "dhry-P8",
            "coremark-P1",
            "coremark-P8",
            "dto-speedup"
        ]));
        // No CPU known: the plan of one.
        let none = plan(
            Mode::Default,
            Machine {
                cpus: 0,
                llc_bytes: 0,
            },
        );
        assert!(none.iter().all(|e| !e.label.contains("-P0")));
    }
}
