//! `benchmp`: the framework's own command line.
//!
//! - `benchmp calibrate` measures (or re-measures) the interval and overheads once, stores them
//!   in the cache every tool reads, and prints them as lmbench's `enough`, `timing_o` and
//!   `loop_o` would, ready to export on a phone (`ENOUGH=… TIMING_O=… LOOP_O=…`).
//! - `benchmp topology` prints the CPUs, clusters and caches as detected.
//! - `benchmp probe` runs a trivial workload through the framework (used by the tests to check
//!   placement, sample counts and failure handling from outside the test process).
//! - `benchmp overhead` measures the framework's own costs on this machine.
//! - `benchmp power` lists the power and energy sources every tool samples beside its
//!   measurements (the names `--power` takes), with their update periods.
//! - `benchmp compare BASE CUR` gives an A/B verdict on every figure two runs share.
//! - `benchmp ab 'A' 'B'` pairs two builds' repetitions milliseconds apart and judges each pair.
//! - `benchmp suite` runs socbench's plan into a results folder; `benchmp summary DIR` prints
//!   its table with one headline figure per entry.
//! - `benchmp efficiency` sweeps every cluster's frequencies with pinned tool runs: figure,
//!   figure per MHz, power and energy per step, and an Energy-Model-style table.

mod cmd;

fn main() {
    let cli: cmd::Cli = benchmp::cli::parse(cmd::examples::EXAMPLES);
    benchmp::cli::init_logging(cli.traced());
    match cmd::run(cli) {
        Ok(code) => benchmp::cli::exit(code),
        Err(e) => benchmp::cli::exit(benchmp::cli::report_error_by(
            "benchmp",
            &*e,
            cmd::examples::PROBES,
        )),
    }
}
