//! How the contract test runs each of `benchmp`'s commands (`benchmp::cli::Example`), and
//! the statuses of the commands' own errors.

/// The statuses of the commands' own errors, besides the framework's (a comparison's
/// errors are bad input, exit 2).
pub const PROBES: &[benchmp::error::ExitProbe] =
    &[benchmp::error::probe::<benchmp_cli::compare::CompareError>];

/// How the contract test runs each command (benchmp::cli::Example).
pub const EXAMPLES: &[benchmp::cli::Example] = &[
    benchmp::cli::Example {
        command: "calibrate",
        quick: "calibrate --calibration {tmp}/cal.json",
        long: "calibrate --enough 1000000 --calibration {tmp}/cal.json",
    },
    benchmp::cli::Example {
        command: "topology",
        quick: "topology",
        long: "",
    },
    benchmp::cli::Example {
        command: "probe",
        quick: "probe -N 1",
        long: "probe -N 1000000 --json={tmp}/out.json --md={tmp}/out.md",
    },
    benchmp::cli::Example {
        command: "compare",
        quick: "compare {report_a} {report_b}",
        long: "compare --json={tmp}/out.json --csv={tmp}/out.csv --md={tmp}/out.md {report_a} {report_b}",
    },
    benchmp::cli::Example {
        command: "ab",
        quick: "ab --processes 1 --pairs 2 --rep-ms 1 '{bin}/benchmp probe --cpus 0' '{bin}/benchmp probe --cpus 0'",
        long: "ab --time 1000 --json={tmp}/out.json --csv={tmp}/out.csv --md={tmp}/out.md '{bin}/benchmp probe --cpus 0' '{bin}/benchmp probe --cpus 0'",
    },
    benchmp::cli::Example {
        command: "suite",
        quick: "suite --quick --quiet-wait 0 --no-rerun --only dhry --out {tmp}/out --bin-dir {stubs}",
        long: "suite --only dhry --out {tmp}/out --bin-dir {stubs}",
    },
    benchmp::cli::Example {
        command: "summary",
        quick: "summary {suite}",
        long: "summary --json={tmp}/out.json --csv={tmp}/out.csv --md={tmp}/out.md {suite}",
    },
    benchmp::cli::Example {
        command: "efficiency",
        quick: "BENCHMP_SYSFS_ROOT={repo}/benchmp/tests/fixtures/phone8/sys efficiency --cpus 7 --freqs 480 --out {tmp}/out --bin-dir {stubs}",
        long: "BENCHMP_SYSFS_ROOT={repo}/benchmp/tests/fixtures/phone8/sys efficiency --cpus 0-1,7 --freqs 480,1000 --out {tmp}/out --bin-dir {stubs}",
    },
    benchmp::cli::Example {
        command: "power",
        quick: "power",
        long: "",
    },
    benchmp::cli::Example {
        command: "overhead",
        quick: "overhead",
        long: "overhead --enough 1000",
    },
];
