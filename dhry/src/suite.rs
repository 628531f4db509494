//! dhry's entries in `benchmp suite`'s plan: one core and, outside quick mode on more than one
//! CPU, every core. `benchmp suite` compiles this file into its plan too, so it uses only
//! `benchmp::suite` and `std` (benchmp/src/suite.rs).

use benchmp::suite::{Machine, Mode, SuiteEntry};

/// The entries of `mode` on `machine`, in the order they run.
pub fn plan(mode: Mode, machine: Machine) -> Vec<SuiteEntry> {
    let (time, parallel) = match mode {
        Mode::Quick => ("0.5", vec![1]),
        Mode::Default => ("2", machine.parallel()),
        Mode::Full => ("5", machine.parallel()),
    };
    parallel
        .into_iter()
        .map(|p| {
            SuiteEntry::new(
                format!("dhry-P{p}"),
                "dhry",
                &format!("-P {p} --time {time} --json={{json}} --csv={{csv}}"),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_core_when_quick_and_every_core_otherwise() {
        let eight = Machine {
            cpus: 8,
            llc_bytes: 0,
        };
        let lines =
            |mode| -> Vec<String> { plan(mode, eight).iter().map(|e| e.to_string()).collect() };
        assert_eq!(
            lines(Mode::Quick),
            ["dhry-P1||dhry|-P 1 --time 0.5 --json={json} --csv={csv}"]
        );
        assert_eq!(
            lines(Mode::Full),
            [
                "dhry-P1||dhry|-P 1 --time 5 --json={json} --csv={csv}",
                "dhry-P8||dhry|-P 8 --time 5 --json={json} --csv={csv}",
            ]
        );
        let one = Machine {
            cpus: 1,
            llc_bytes: 0,
        };
        assert_eq!(plan(Mode::Default, one).len(), 1);
    }
}
