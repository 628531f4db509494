//! The `benchmp` binary's commands, one module each: its options and the `run` that
//! `main` dispatches to.

/// `println!` that fails with an error (exit 1) instead of panicking when stdout cannot be
/// written (a full disk, `> /dev/full`, a closed pipe). Defined before the modules so every
/// one of them can use it.
macro_rules! outln {
    ($($arg:tt)*) => {
        benchmp::cli::write_stdout(&format!("{}\n", format_args!($($arg)*)))?
    };
}

pub mod ab;
pub mod calibrate;
pub mod compare;
pub mod efficiency;
pub mod examples;
pub mod outdir;
pub mod overhead;
pub mod power;
pub mod power_args;
pub mod probe;
pub mod suite;
pub mod summary;
pub mod topology;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// `benchmp`'s command line.
#[derive(Debug, Parser)]
#[command(
    name = "benchmp",
    version,
    about = "socbench's timing framework: calibration, topology and self-checks"
)]
pub struct Cli {
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
    Probe(Box<probe::ProbeArgs>),
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
    Compare(compare::CompareArgs),
    /// Compare two builds (or two settings) of one tool, paired: both commands start as
    /// workers on the same CPUs, and each figure's repetitions are taken in pairs, A and B
    /// back to back in random order, in up to --processes fresh pairs of workers; the
    /// verdict is over the process pairs' estimates, looked at after each from the 4th until
    /// decided or the budget is spent, alpha spent over the looks (O'Brien-Fleming type).
    /// Verdicts: PASS (within ±--min-effect), FAIL (B worse), IMPROVED, NOISY (undecided).
    /// Exit status 1 when a figure regressed or a side failed, 0 otherwise, 2 for bad input
    /// (a missing program, a command that is no socbench tool, two tools or figures).
    Ab(ab::AbArgs),
    /// Run socbench's plan (every tool with defaults that finish in a few minutes on a
    /// 2-core machine) with the binaries next to this one, into a results folder: each
    /// entry's JSON, CSV, text and errors and status.tsv; a failed entry is reported and the
    /// next one runs. Exit status: 0 every entry measured (those that measured on a busy
    /// machine are listed as noisy) and nothing regressed, 1 otherwise, 2 refused before
    /// anything ran, 128+n stopped by signal n (the running entry and everything it forked
    /// are stopped first, and recorded as interrupted: --resume runs what is left).
    Suite(suite::SuiteArgs),
    /// Print the summary of a results folder: every entry with its headline figure, its
    /// time, what was noisy, failed or interrupted and, after a comparison, its worst
    /// verdict. Exit status 2 (one line naming the file) when a file of the folder cannot be
    /// read or status.tsv holds a row that is not one.
    Summary(summary::SummaryArgs),
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
    Efficiency(efficiency::EfficiencyArgs),
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

impl Cli {
    /// Whether the run writes trace markers (`probe --trace`), which the logging set-up
    /// must know before anything runs.
    pub fn traced(&self) -> bool {
        matches!(&self.cmd, Cmd::Probe(p) if p.output.trace)
    }
}

/// Runs the command the line names; its exit status, or the error `main` reports.
pub fn run(cli: Cli) -> Result<i32> {
    match cli.cmd {
        Cmd::Compare(args) => compare::run(args),
        Cmd::Ab(args) => ab::run(&args),
        Cmd::Suite(args) => suite::run(&args),
        Cmd::Summary(args) => summary::run(&args),
        Cmd::Efficiency(args) => efficiency::run(&args),
        Cmd::Calibrate {
            enough,
            calibration,
            json,
        } => calibrate::run(enough, calibration, json),
        Cmd::Topology { json } => topology::run(json),
        Cmd::Probe(args) => probe::run(*args),
        Cmd::Overhead { enough } => overhead::run(enough),
        Cmd::Power { json } => power::run(json),
    }
}

/// Parses a false-alarm rate (`--alpha`): a probability above 0 and below 1.
fn probability(s: &str) -> Result<f64, String> {
    // Below 1e-9 no run of socbench's could ever reach a verdict (the intervals it asks for
    // need more units than any comparison takes), and the rate prints as hundreds of digits.
    match s.trim().parse::<f64>() {
        Ok(p) if (1e-9..1.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "'{s}' is not a false-alarm rate from 1e-9 up to (not including) 1"
        )),
    }
}
