//! What a paired comparison (`benchmp ab`) adds to a comparison's schema: each row's pairs,
//! their judgement and the processes they ran in ([`PairedFigure`]), and the commands and rule
//! of the run ([`AbRun`]). `benchmp ab` writes its verdicts as a [`super::Comparison`] with
//! these, so `benchmp compare`'s readers (the summary's verdict column, the plots) read either.

use serde::{Deserialize, Deserializer, Serialize};

use crate::stats::paired::{Decision, Judgement, Looks};

/// The order of the two halves of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// A fair coin per pair.
    Random,
    /// A B, then B A, alternating.
    Abba,
}

/// One side as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideInfo {
    /// The command as given.
    pub command: String,
    /// The tool it runs.
    pub tool: String,
    /// Its exit status at the end.
    pub exit: Option<i32>,
    /// The signal that ended it, when one did (`SIGSEGV`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub signal: Option<String>,
    /// Its last error line, if it failed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// Stopped by the driver because the other side failed (its pairs so far are kept).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub stopped: bool,
}

/// The rule the verdicts were reached by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbRule {
    /// Smallest change that counts, percent.
    pub min_effect_pct: f64,
    /// False-alarm rate per figure.
    pub alpha: f64,
    /// Budget per figure, s (`None` with a fixed pair count).
    pub time_s: Option<f64>,
    /// Process pairs per figure at most (1: the repetition pair is the unit).
    #[serde(default = "one")]
    pub processes: usize,
    /// The looks at the pairs: with `--processes 1` at doubling pair counts; over process
    /// pairs after every process pair from the fourth (`first`) to `max_pairs`.
    pub looks: Looks,
    /// The information fractions (share of the budget spent, or of the process pairs with
    /// `--pairs`) of the looks over process pairs, in order: alpha is spent by them
    /// (O'Brien-Fleming type, [`crate::stats::paired::sequential`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub looked_at: Vec<f64>,
    /// Figures the false-alarm rate is split over (over process pairs: all of the command's;
    /// with one process pair each figure is judged on its own).
    #[serde(default = "one")]
    pub figures: usize,
    /// Confidence of the last look's interval (each look's is in its figure's judgement):
    /// before any look 1 − alpha/figures, the level of a single look.
    pub confidence: f64,
    /// Repetition length asked for, µs.
    pub rep_us: u64,
    /// Order within pairs.
    pub order: Order,
    /// Seed of the random order.
    pub seed: u64,
    /// Process pairs run when the `--time` budget was spent before `--processes` of them.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub budget_spent_after: Option<usize>,
    /// The pages both sides' buffers were asked to take where a command names none
    /// (`thp`, `huge`, `4k`, `system`); `None`: each command's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<String>,
    /// Whether the workers' buffers were renewed between blocks of repetitions (in each
    /// process pair, where the tool can).
    #[serde(default)]
    pub renew: bool,
    /// How the two sides' processes were laid out (absent in reports from before it was
    /// handled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<AbLayout>,
}

/// How `benchmp ab` laid out both sides' processes: alike within a process pair, moved from
/// one process pair to the next (JSON: `equal_paths`, `evened_bytes`, `max_offset_bytes`,
/// `aslr`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbLayout {
    /// Both programs ran through one exec path (`/proc/self/fd/5`) with one `argv[0]`, so
    /// where they sit took the same room on both stacks (false where there is no
    /// `/proc/self/fd`).
    pub equal_paths: bool,
    /// The room each side's exec path, arguments and environment took on its stack before the
    /// process pair's offset, bytes (a pad variable evens the two).
    pub evened_bytes: usize,
    /// Each process pair's stack offset, the same on both sides, was below this, bytes (each
    /// pair's own is in its `processes[]` entry).
    pub max_offset_bytes: usize,
    /// Whether address-space randomisation was left on (`--aslr`).
    pub aslr: bool,
}

impl AbRule {
    /// What the verdicts count as their units: process pairs unless there is only one.
    pub fn unit(&self) -> Unit {
        if self.processes > 1 {
            Unit::ProcessPairs
        } else {
            Unit::RepetitionPairs
        }
    }
}

fn one() -> usize {
    1
}

/// What a figure's verdict counts as its independent units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Each process pair's estimate (the default).
    ProcessPairs,
    /// Each repetition pair, in one process pair (`--processes 1`).
    RepetitionPairs,
}

fn repetition_pairs() -> Unit {
    Unit::RepetitionPairs
}

/// One process pair's share of a figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessPair {
    /// Repetition pairs it took.
    pub pairs: usize,
    /// Hodges–Lehmann estimate of its pairs' log ratios (positive: B worse).
    pub estimate: f64,
    /// The same, percent.
    pub estimate_pct: f64,
    /// Times both sides' buffers were renewed during its pairs.
    #[serde(default)]
    pub renewals: usize,
    /// Bytes both sides' stacks were moved by in this process pair ([`AbLayout`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_offset_bytes: Option<usize>,
}

/// One figure's pairs: what `benchmp ab` measured of it beyond its row's two sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedFigure {
    /// What the judgement's units are.
    #[serde(default = "repetition_pairs")]
    pub judged_over: Unit,
    /// The statistics of the units.
    #[serde(deserialize_with = "judgement")]
    pub judgement: Judgement,
    /// CPUs of the children (the same on both sides).
    pub cpus: Vec<Option<usize>>,
    /// Iterations per repetition, both sides.
    pub iterations: u64,
    /// Wall time spent on the pairs, s.
    pub seconds: f64,
    /// Where the differences' variance lives: within a process pair and between them
    /// (absent with fewer than two process pairs, and in reports from before it was kept).
    #[serde(default)]
    pub variance: Option<crate::stats::paired::variance::Components>,
    /// Each process pair's part, in time order.
    #[serde(default)]
    pub processes: Vec<ProcessPair>,
    /// Involuntary context switches of A's and B's children during their repetitions.
    pub preempted: (u64, u64),
    /// Repetitions whose child ended on another CPU than it started on, A and B.
    pub migrated: (usize, usize),
    /// Wall time of A's and B's timed repetitions (the longest child's per step), ns.
    pub timed_ns: (u64, u64),
    /// CPU time A's and B's children got during their timed repetitions, ns: a side whose
    /// share (CPU over wall time) is lower lost time to other tasks or a CPU quota.
    pub cpu_ns: (u64, u64),
    /// A's and B's parameters of the measurement as their workers gave them (sizes, and
    /// settings such as the pages their buffers were asked to take).
    #[serde(default)]
    pub params: (serde_json::Value, serde_json::Value),
    /// Each pair's log ratio (positive: B worse), in time order.
    pub differences: Vec<f64>,
    /// A's figure per repetition, in time order.
    pub base_values: Vec<f64>,
    /// B's.
    pub current_values: Vec<f64>,
}

/// The commands and the rule of a paired comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbRun {
    /// A.
    pub base: SideInfo,
    /// B.
    pub current: SideInfo,
    /// The rule.
    pub rule: AbRule,
}

/// A [`Judgement`] as JSON holds it: a number that is not finite (an unbounded interval's
/// upper end, +∞) is written as null.
#[derive(Deserialize)]
struct JudgementJson {
    pairs: usize,
    estimate_pct: Option<f64>,
    low_pct: Option<f64>,
    high_pct: Option<f64>,
    confidence: Option<f64>,
    wilcoxon_p: Option<f64>,
    sign_p: Option<f64>,
    rho: Option<f64>,
    n_eff: Option<f64>,
    decision: Decision,
    why: Option<String>,
}

/// Reads a [`Judgement`] back from its JSON: an interval's null ends are unbounded (−100 %
/// below, as [`Judgement::low_pct`] says, +∞ above), any other null not a number.
fn judgement<'de, D: Deserializer<'de>>(d: D) -> Result<Judgement, D::Error> {
    let j = JudgementJson::deserialize(d)?;
    let nan = |x: Option<f64>| x.unwrap_or(f64::NAN);
    Ok(Judgement {
        pairs: j.pairs,
        estimate_pct: nan(j.estimate_pct),
        low_pct: j.low_pct.unwrap_or(-100.0),
        high_pct: j.high_pct.unwrap_or(f64::INFINITY),
        confidence: nan(j.confidence),
        wilcoxon_p: nan(j.wilcoxon_p),
        sign_p: nan(j.sign_p),
        rho: nan(j.rho),
        n_eff: nan(j.n_eff),
        decision: j.decision,
        why: j.why,
    })
}
