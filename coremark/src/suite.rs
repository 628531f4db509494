//! coremark's entries in `benchmp suite`'s plan: one core and, outside quick mode on more than
//! one CPU, every core; a CoreMark-compatible run needs at least 10 s to validate, so the modes
//! differ only in how many cores. `benchmp suite` compiles this file into its plan too, so it
//! uses only `benchmp::suite` and `std` (benchmp/src/suite.rs).

use benchmp::suite::{Machine, Mode, SuiteEntry};

/// The entries of `mode` on `machine`, in the order they run.
pub fn plan(mode: Mode, machine: Machine) -> Vec<SuiteEntry> {
    let parallel = match mode {
        Mode::Quick => vec![1],
        Mode::Default | Mode::Full => machine.parallel(),
    };
    parallel
        .into_iter()
        .map(|p| {
            SuiteEntry::new(
                format!("coremark-P{p}"),
                "coremark",
                &format!("-P {p} --json={{json}} --csv={{csv}}"),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_core_when_quick_and_every_core_otherwise() {
        let two = Machine {
            cpus: 2,
            llc_bytes: 0,
        };
        let labels =
            |mode| -> Vec<String> { plan(mode, two).into_iter().map(|e| e.label).collect() };
        assert_eq!(labels(Mode::Quick), ["coremark-P1"]);
        assert_eq!(labels(Mode::Default), ["coremark-P1", "coremark-P2"]);
        assert_eq!(
            plan(Mode::Quick, two)[0].to_string(),
            "coremark-P1||coremark|-P 1 --json={json} --csv={csv}"
        );
    }
}
