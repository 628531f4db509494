//! bw_mem's entries in `benchmp suite`'s plan: each operation at one copy and, on more than one
//! CPU, at one copy per CPU (the cluster sums). `benchmp suite` compiles this file into its plan
//! too, so it uses only `benchmp::suite` and `std` (benchmp/src/suite.rs).

use benchmp::suite::{Machine, Mode, SuiteEntry};

/// The entries of `mode` on `machine`, in the order they run.
pub fn plan(mode: Mode, machine: Machine) -> Vec<SuiteEntry> {
    let (n, ops, size) = match mode {
        Mode::Quick => (3, "rd wr cp bzero", "64m"),
        Mode::Default => (5, "rd wr rdwr cp bcopy bzero rdvec cpnt", "64m"),
        Mode::Full => (
            11,
            "rd wr rdwr cp fwr frd fcp bzero bcopy rdvec wrnt cpnt memcpy memset",
            "256m",
        ),
    };
    let mut out = Vec::new();
    for p in machine.parallel() {
        for op in ops.split_whitespace() {
            out.push(SuiteEntry::new(
                format!("bw_mem-{op}-P{p}"),
                "bw_mem",
                &format!("-P {p} -N {n} {size} {op} --stdout --json={{json}} --csv={{csv}}"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_alone_then_on_every_cpu() {
        let two = Machine {
            cpus: 2,
            llc_bytes: 32 << 20,
        };
        let lines: Vec<String> = plan(Mode::Quick, two)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(
            lines,
            [
                "bw_mem-rd-P1||bw_mem|-P 1 -N 3 64m rd --stdout --json={json} --csv={csv}",
                "bw_mem-wr-P1||bw_mem|-P 1 -N 3 64m wr --stdout --json={json} --csv={csv}",
                "bw_mem-cp-P1||bw_mem|-P 1 -N 3 64m cp --stdout --json={json} --csv={csv}",
                "bw_mem-bzero-P1||bw_mem|-P 1 -N 3 64m bzero --stdout --json={json} --csv={csv}",
                "bw_mem-rd-P2||bw_mem|-P 2 -N 3 64m rd --stdout --json={json} --csv={csv}",
                "bw_mem-wr-P2||bw_mem|-P 2 -N 3 64m wr --stdout --json={json} --csv={csv}",
                "bw_mem-cp-P2||bw_mem|-P 2 -N 3 64m cp --stdout --json={json} --csv={csv}",
                "bw_mem-bzero-P2||bw_mem|-P 2 -N 3 64m bzero --stdout --json={json} --csv={csv}",
            ]
        );
        let eight = Machine {
            cpus: 8,
            llc_bytes: 0,
        };
        assert_eq!(plan(Mode::Default, eight).len(), 16);
        assert_eq!(plan(Mode::Full, eight).len(), 28);
        let one = Machine {
            cpus: 1,
            llc_bytes: 0,
        };
        assert!(
            plan(Mode::Default, one)
                .iter()
                .all(|e| e.label.ends_with("-P1"))
        );
    }
}
