//! `benchmp compare BASE CUR` (or `BASE... -- CUR...`): an A/B verdict on every figure
//! separate runs share.
//!
//! Each run is a report file (any tool's `--json`) or a result folder of `scripts/suite.sh`
//! (one report per entry, matched by file name). Within an entry, figures ([`benchmp::schema::Figure`])
//! are matched by name and CPU/cluster; a name each side has once is matched across CPUs, so
//! one core can be compared with another. Two runs of one build on a shared host differ by
//! 5-30 % and every sample of a run shares that run's state, so the run, not the sample, is the
//! unit of drift (docs: ab.md, "Why runs are the wrong unit"). With one run per side the
//! change of the trimmed means counts only beyond both `--min-effect` and the between-run
//! spread the user measured (`--run-spread`), the KS p of the samples being a diagnostic;
//! with several runs per side each run gives one value per figure and the sides are compared
//! with the Mann-Whitney U test ([`crate::stats::mann_whitney`]). Verdicts know the figure's
//! direction: PASS, FAIL (a regression), IMPROVED, NOISY (a change that cannot be told from
//! the drift between runs, with the reason) or MISSING (in one side only).

mod judge;
mod load;
pub mod paired;
mod render;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::stats::mann_whitney::MannWhitney;
use benchmp::report::{AnyTool, Report};
use benchmp::schema::Better;
use benchmp::stats::verdict::{JudgeRule, Verdict};

pub use judge::{RunFigures, compare, compare_figures, judge_one_run, judge_runs};
pub use load::{input_files, load, refuse_overwrite, report_files, sides};
pub use render::{render_text, write_csv};

/// The largest report file read (dto's, the largest, are tens of MB): a larger file, like a
/// device that never ends (`/dev/zero`), is refused before it fills memory.
pub const MAX_REPORT_BYTES: u64 = 512 << 20;

/// Why two runs cannot be compared (always bad input, exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The path cannot be read.
    #[error("cannot read {}", .0.display())]
    Read(PathBuf, #[source] std::io::Error),
    /// A path that is no report file: a device, a FIFO, a socket.
    #[error("{} is {}, not a report file", .0.display(), .1)]
    NotAFile(PathBuf, &'static str),
    /// A file too large to be a report.
    #[error("{} has {} bytes, more than a report can ({} at most)", .0.display(), .1, MAX_REPORT_BYTES)]
    TooLarge(PathBuf, u64),
    /// A file is not a socbench report.
    #[error("{} is not a socbench report", .0.display())]
    NotReport(PathBuf, #[source] serde_json::Error),
    /// A folder holds no report.
    #[error("{} holds no socbench report (*.json written with --json)", .0.display())]
    Empty(PathBuf),
    /// The two sides share no entry or no figure.
    #[error("{base} and {cur} have nothing in common: {why}")]
    NothingInCommon {
        /// BASE's runs.
        base: String,
        /// CUR's runs.
        cur: String,
        /// What did not match.
        why: String,
    },
    /// A figure of one name is measured differently by two runs.
    #[error("{entry} {figure}: {a} and {b}; a figure can only be compared with the same figure")]
    Mismatch {
        /// The entry.
        entry: String,
        /// The figure.
        figure: String,
        /// The first run's unit and direction (`BASE has MB/s (higher is better)`).
        a: String,
        /// The other run's (`CUR ns (lower is better)`).
        b: String,
    },
    /// A figure with no size to take a change against (0, negative or not a number).
    #[error(
        "{entry} {figure}: {side}'s figure is {value}, so no change can be computed against it"
    )]
    NoBase {
        /// The entry.
        entry: String,
        /// The figure.
        figure: String,
        /// BASE or CUR (`BASE run 2` when the side has several).
        side: String,
        /// The value.
        value: f64,
    },
    /// Paths that are not two sides: more or fewer than two without `--`.
    #[error(
        "{0} run path(s) without `--`: give BASE CUR (one run each), or BASE... -- CUR... for several runs a side"
    )]
    Sides(usize),
    /// An option written after `--`, where every word is a run of CUR.
    #[error("{0}: after `--` every word is a run of CUR; put options before `--`")]
    OptionAfterSeparator(String),
    /// One run given twice on a side (by inode): it would count as two units.
    #[error("{side} has {} twice; each run counts once", .path.display())]
    GivenTwice {
        /// BASE or CUR.
        side: &'static str,
        /// The second mention.
        path: PathBuf,
    },
    /// An output file is one of the inputs (by inode: a link or another spelling counts).
    #[error("{option}={}: is the input {}; choose another output file", .output.display(), .input.display())]
    OutputIsInput {
        /// The format's option (`--json`, `--csv`, `--md`).
        option: String,
        /// The output path as given.
        output: PathBuf,
        /// The input file it is.
        input: PathBuf,
    },
}

impl benchmp::error::ExitStatus for CompareError {
    fn exit_status(&self) -> i32 {
        benchmp::error::EXIT_USAGE
    }
}

/// One report of a run, with the entry name it is matched by.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The suite entry (file name without `.json`), or the tool for a single file.
    pub label: String,
    /// The report.
    pub report: Report<AnyTool>,
}

/// One run of a side: the path given and the reports read from it.
#[derive(Debug, Clone)]
pub struct Run {
    /// The report file or result folder.
    pub path: PathBuf,
    /// Its reports.
    pub entries: Vec<Entry>,
}

/// One side of a compared figure: one run's figure, or what several runs measured of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// CPU of the figure (`None`: cluster or system).
    pub cpu: Option<usize>,
    /// The figure as its run reported it (several runs: the median of theirs).
    pub value: f64,
    /// What is compared: the trimmed mean of its samples (the value when it has none), or with
    /// several runs the median of the runs' trimmed means ([`Side::runs`]).
    pub trimmed_mean: f64,
    /// Samples (of every run of the side).
    pub n: usize,
    /// Samples above the shared outlier threshold.
    pub outliers: usize,
    /// The samples, sorted (several runs: pooled), for plots of both sides' distributions.
    pub samples: Vec<f64>,
    /// The run-quality verdict of this side's report (of any of its runs) was noisy (a child
    /// lost time to other tasks, migrated, or the clock changed).
    #[serde(default)]
    pub noisy: bool,
    /// How many of the side's runs judged themselves noisy.
    #[serde(default)]
    pub noisy_runs: usize,
    /// Each run's trimmed mean, one per run of the side that has the figure, in the order given:
    /// the units of the test between sides when there are several.
    #[serde(default)]
    pub runs: Vec<f64>,
}

/// One row of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Suite entry (or tool).
    pub entry: String,
    /// Tool.
    pub tool: String,
    /// Figure name and CPU or cluster (`rd 64M cpu0`).
    pub figure: String,
    /// Unit.
    pub unit: String,
    /// Which way is better.
    pub better: Better,
    /// BASE's side (`None`: missing there).
    pub base: Option<Side>,
    /// CUR's side (`None`: missing there).
    pub current: Option<Side>,
    /// (current − base) / base × 100 of the compared values ([`Side::trimmed_mean`]).
    pub change_pct: Option<f64>,
    /// KS statistic of the trimmed samples (one run per side; a diagnostic only).
    pub ks_d: Option<f64>,
    /// KS p-value (one run per side; a diagnostic only: the samples of a run are not
    /// independent).
    pub ks_p: Option<f64>,
    /// The Mann-Whitney U test of the runs' values (several runs on a side).
    #[serde(default)]
    pub mann_whitney: Option<MannWhitney>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why a change beyond the minimum effect is NOISY.
    #[serde(default)]
    pub why: Option<String>,
    /// The pairs of a paired comparison (`benchmp ab`), which its verdict was judged over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<paired::PairedFigure>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// BASE as given (its first run when it has several).
    pub base: String,
    /// CUR as given (its first run when it has several).
    pub current: String,
    /// Every run of BASE.
    #[serde(default)]
    pub base_runs: Vec<String>,
    /// Every run of CUR.
    #[serde(default)]
    pub current_runs: Vec<String>,
    /// The rule applied.
    pub rule: JudgeRule,
    /// The between-run spread given (`--run-spread`), percent; `None`: unknown.
    #[serde(default)]
    pub run_spread_pct: Option<f64>,
    /// Every figure.
    pub rows: Vec<Row>,
    /// Rows per verdict.
    pub counts: Counts,
    /// A paired comparison (`benchmp ab`): each row judged over its pairs of interleaved
    /// repetitions, not over separate runs. An entry without a row was not paired.
    #[serde(default)]
    pub paired: bool,
    /// What `benchmp ab` ran (its commands, their ends, the rule), when one comparison is
    /// one `benchmp ab`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ab: Option<paired::AbRun>,
    /// Set when a stop signal ended a paired comparison early (as on any report): the rows
    /// hold the pairs taken until then, judged as they stand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<benchmp::report::Incomplete>,
}

/// How many rows got each verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// PASS.
    pub pass: usize,
    /// FAIL (regressions).
    pub fail: usize,
    /// IMPROVED.
    pub improved: usize,
    /// NOISY.
    pub noisy: usize,
    /// MISSING.
    pub missing: usize,
}

impl Counts {
    /// The counts of `rows`' verdicts (REF counts as PASS).
    pub fn of(rows: &[Row]) -> Counts {
        let mut counts = Counts::default();
        for r in rows {
            match r.verdict {
                Verdict::Pass | Verdict::Ref => counts.pass += 1,
                Verdict::Fail => counts.fail += 1,
                Verdict::Improved => counts.improved += 1,
                Verdict::Noisy => counts.noisy += 1,
                Verdict::Missing => counts.missing += 1,
            }
        }
        counts
    }
}

impl Comparison {
    /// True when some figure regressed.
    pub fn regressed(&self) -> bool {
        self.counts.fail > 0
    }
}

/// What turns a change into a verdict: the rule, and with one run per side the drift between
/// runs the user measured on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Judging {
    /// Minimum effect, and the alpha of the Mann-Whitney test between several runs a side.
    pub rule: JudgeRule,
    /// Between-run spread, percent (`--run-spread`); `None`: unknown.
    pub run_spread_pct: Option<f64>,
}

#[cfg(test)]
mod tests;
