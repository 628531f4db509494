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

use anyhow::Result;
use clap::{Parser, Subcommand};

mod cmd;

#[derive(Debug, Parser)]
#[command(
    name = "benchmp",
    version,
    about = "socbench's timing framework: calibration, topology and self-checks"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Measure the interval (ENOUGH), timing and loop overheads, store them in the cache, and
    /// print them as shell exports.
    Calibrate {
        /// Minimum length of a timed interval in microseconds, at least 1 (the interval is
        /// then not searched for).
        #[arg(long, value_name = "US", value_parser = benchmp::cli::interval)]
        enough: Option<u64>,
        /// Calibration cache file to write, or "off" (default: $BENCHMP_CALIBRATION, else
        /// ~/.cache/socbench/calibration.json or /data/local/tmp/socbench/calibration.json).
        #[arg(long, value_name = "FILE")]
        calibration: Option<String>,
        /// Print JSON instead of shell exports.
        #[arg(long)]
        json: bool,
    },
    /// Print the CPUs, clusters and caches read from sysfs ($BENCHMP_SYSFS_ROOT or /sys).
    Topology {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run a trivial workload through the framework (spin or nothing), optionally making one
    /// child fail, to check placement, sample counts and failure handling.
    Probe(Box<cmd::probe::ProbeArgs>),
    /// Compare separate runs: report files (any tool's --json) or result folders of
    /// scripts/suite.sh, one run per side (BASE CUR) or several (BASE... -- CUR...). Every
    /// figure both sides have gets a verdict: PASS, FAIL (a regression), IMPROVED, NOISY (a
    /// change that cannot be told from the drift between runs; the reason is shown) or
    /// MISSING. Exit status 1 when any figure regressed, 0 otherwise, 2 for bad input (an
    /// output file that is an input, by inode, included: inputs are never written).
    ///
    /// Two runs of one build on a shared host differ by 5-30 %, and every sample of a run
    /// shares that run's state, so the run, not the sample, is the unit. With one run per side
    /// the change of the samples' trimmed means is PASS within ±--min-effect, FAIL or IMPROVED
    /// only beyond both --min-effect and --run-spread, and NOISY otherwise (always beyond
    /// --min-effect when --run-spread is not given); the KS p of the samples is shown as a
    /// diagnostic only. With several runs on a side each run gives one value per figure (its
    /// trimmed mean) and the change is between the sides' medians: PASS within ±--min-effect,
    /// FAIL or IMPROVED beyond it when the Mann-Whitney U test of the runs gives p < --alpha,
    /// NOISY otherwise (4 runs a side at least can reach p < 0.05). A side's runs are matched
    /// by entry name; a run without an entry gives it no value. Two builds that can run side by
    /// side are better compared with benchmp ab, which pairs their repetitions so that drift
    /// cancels.
    #[command(
        override_usage = "benchmp compare [OPTIONS] BASE CUR\n       benchmp compare [OPTIONS] BASE... -- CUR..."
    )]
    Compare(cmd::compare::CompareArgs),
    /// Compare two builds (or two settings) of one tool, paired: both commands start as
    /// workers on the same CPUs, and each figure's repetitions are taken in pairs, A and B
    /// back to back in random order, in up to --processes fresh pairs of workers; the
    /// verdict is over the process pairs' estimates, looked at after each from the 4th until
    /// decided or the budget is spent, alpha spent over the looks (O'Brien-Fleming type).
    /// Verdicts: PASS (within ±--min-effect), FAIL (B worse), IMPROVED, NOISY (undecided).
    /// Exit status 1 when a figure regressed or a side failed, 0 otherwise, 2 for bad input
    /// (a missing program, a command that is no socbench tool, two tools or figures).
    Ab(cmd::ab::AbArgs),
    /// Run socbench's plan (every tool with defaults that finish in a few minutes on a
    /// 2-core machine) with the binaries next to this one, into a results folder: each
    /// entry's JSON, CSV, text and errors and status.tsv; a failed entry is reported and the
    /// next one runs. Exit status: 0 every entry measured (those that measured on a busy
    /// machine are listed as noisy) and nothing regressed, 1 otherwise, 2 refused before
    /// anything ran, 128+n stopped by signal n (the running entry and everything it forked
    /// are stopped first, and recorded as interrupted: --resume runs what is left).
    Suite(cmd::suite::SuiteArgs),
    /// Print the summary of a results folder: every entry with its headline figure, its
    /// time, what was noisy, failed or interrupted and, after a comparison, its worst
    /// verdict. Exit status 2 (one line naming the file) when a file of the folder cannot be
    /// read or status.tsv holds a row that is not one.
    Summary(cmd::summary::SummaryArgs),
    /// Sweep each cluster's clock: at every frequency its cpufreq policy offers, run tool
    /// commands (dhry and coremark by default, on one CPU of the cluster and on all of its
    /// CPUs) pinned there with --pin-freq, and record per step the headline figure, the figure
    /// per MHz, the power above the idle baseline and the energy per unit of work (from the
    /// reports' power records), into a results folder: a table per cluster, JSON, CSV and an
    /// Energy-Model-style table (frequency, power, cost) to set beside
    /// /sys/kernel/debug/energy_model. After each step the policy must be as before it (the
    /// tools write their pin back; the sweep says so when one is not back). Exit status: 0
    /// every step measured, 1 a step failed or a policy is not back, 2 refused before anything
    /// ran, 3 no cpufreq here (or a policy listing no frequencies without --freqs), 128+n
    /// stopped by signal n (the running tool is stopped first; what was measured is written,
    /// marked incomplete).
    Efficiency(cmd::efficiency::EfficiencyArgs),
    /// Print the framework's own costs: timing and loop overhead, fork and handshake time per
    /// child, and the error of known-duration workloads measured through the framework.
    Overhead {
        /// Minimum length of a timed interval in microseconds, at least 1 (the interval is
        /// then not searched for).
        #[arg(long, value_name = "US", value_parser = benchmp::cli::interval)]
        enough: Option<u64>,
    },
    /// List the power and energy sources found under the sysfs root ($BENCHMP_SYSFS_ROOT or
    /// /sys), the names --power takes: each with its kind, unit, what it covers, its files
    /// and its update period as measured (read every millisecond for up to 2 s); the sources
    /// that are there but unusable (root-only, a charging battery) with the reason; and the
    /// thermal zones and cpufreq policies sampled beside them. Nothing found is no error.
    Power {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// The statuses of the commands' own errors, besides the framework's (a comparison's
/// errors are bad input, exit 2).
const PROBES: &[benchmp::error::Probe] = &[benchmp::error::probe::<benchmp::compare::CompareError>];

/// How the contract test runs each command (benchmp::cli::Example).
const EXAMPLES: &[benchmp::cli::Example] = &[
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
        long: "probe -N 1000000 --json={tmp}/out.json",
    },
    benchmp::cli::Example {
        command: "compare",
        quick: "compare {report_a} {report_b}",
        long: "compare --json={tmp}/out.json --csv={tmp}/out.csv {report_a} {report_b}",
    },
    benchmp::cli::Example {
        command: "ab",
        quick: "ab --processes 1 --pairs 2 --rep-ms 1 '{bin}/benchmp probe --cpus 0' '{bin}/benchmp probe --cpus 0'",
        long: "ab --time 1000 --json={tmp}/out.json --csv={tmp}/out.csv '{bin}/benchmp probe --cpus 0' '{bin}/benchmp probe --cpus 0'",
    },
    benchmp::cli::Example {
        command: "suite",
        quick: "suite --quick --quiet-wait 0 --only dhry --out {tmp}/out --bin-dir {stubs}",
        long: "suite --only dhry --out {tmp}/out --bin-dir {stubs}",
    },
    benchmp::cli::Example {
        command: "summary",
        quick: "summary {suite}",
        long: "summary --json={tmp}/out.json --csv={tmp}/out.csv {suite}",
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
        long: "overhead",
    },
];

fn main() {
    let cli: Cli = benchmp::cli::parse(EXAMPLES);
    let trace = matches!(&cli.cmd, Cmd::Probe(p) if p.output.trace);
    benchmp::cli::init_logging(trace);
    match run(cli) {
        Ok(code) => benchmp::cli::exit(code),
        Err(e) => benchmp::cli::exit(benchmp::cli::report_error_by("benchmp", &e, PROBES)),
    }
}

fn run(cli: Cli) -> Result<i32> {
    match cli.cmd {
        Cmd::Compare(args) => cmd::compare::run(args),
        Cmd::Ab(args) => cmd::ab::run(&args),
        Cmd::Suite(args) => cmd::suite::run(&args),
        Cmd::Summary(args) => cmd::summary::run(&args),
        Cmd::Efficiency(args) => cmd::efficiency::run(&args),
        Cmd::Calibrate {
            enough,
            calibration,
            json,
        } => cmd::calibrate::run(enough, calibration, json),
        Cmd::Topology { json } => cmd::topology::run(json),
        Cmd::Probe(args) => cmd::probe::run(*args),
        Cmd::Overhead { enough } => cmd::overhead::run(enough),
        Cmd::Power { json } => cmd::power::run(json),
    }
}
