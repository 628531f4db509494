//! `benchmp compare BASE CUR` (or `BASE... -- CUR...`): an A/B verdict on every figure
//! separate runs share.
//!
//! Each run is a report file (any tool's `--json`) or a result folder of `scripts/suite.sh`
//! (one report per entry, matched by file name). Within an entry, figures ([`crate::figure`])
//! are matched by name and CPU/cluster; a name each side has once is matched across CPUs, so
//! one core can be compared with another. Two runs of one build on a shared host differ by
//! 5-30 % and every sample of a run shares that run's state, so the run, not the sample, is the
//! unit of drift (docs: ab.md, "Why runs are the wrong unit"). With one run per side the
//! change of the trimmed means counts only beyond both `--min-effect` and the between-run
//! spread the user measured (`--run-spread`), the KS p of the samples being a diagnostic;
//! with several runs per side each run gives one value per figure and the sides are compared
//! with the Mann-Whitney U test ([`crate::ab::mann_whitney`]). Verdicts know the figure's
//! direction: PASS, FAIL (a regression), IMPROVED, NOISY (a change that cannot be told from
//! the drift between runs, with the reason) or MISSING (in one side only).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ab::mann_whitney::{self, MannWhitney};
use crate::ab::{self, Better, Rule, Verdict};
use crate::figure::Figure;
use crate::report::{AnyTool, Report};

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
        /// --json or --csv.
        option: &'static str,
        /// The output path as given.
        output: PathBuf,
        /// The input file it is.
        input: PathBuf,
    },
}

impl crate::error::ExitStatus for CompareError {
    fn exit_status(&self) -> i32 {
        crate::error::EXIT_USAGE
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

/// Reads a report file, or every report of a result folder. In a folder every `*.json` must
/// be a report, except a comparison written there earlier (suite.sh keeps `compare.json`
/// beside its reports) and the suite's summary (`summary.json`), which are passed over.
pub fn load(path: &Path) -> Result<Vec<Entry>, CompareError> {
    let meta = std::fs::metadata(path).map_err(|e| CompareError::Read(path.to_path_buf(), e))?;
    if !meta.is_dir() {
        let report = read_report(path, &meta)?;
        return Ok(vec![Entry {
            label: report.tool.clone(),
            report,
        }]);
    }
    let mut entries = Vec::new();
    for (f, meta) in report_files(path)? {
        let text = read_bounded(&f, &meta)?;
        match serde_json::from_slice::<Report<AnyTool>>(&text) {
            Ok(report) => entries.push(Entry {
                label: f
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                report: with_figures(report),
            }),
            Err(_) if serde_json::from_slice::<Comparison>(&text).is_ok() => {}
            Err(_) if serde_json::from_slice::<SuiteSummary>(&text).is_ok() => {}
            Err(e) => return Err(CompareError::NotReport(f, e)),
        }
    }
    if entries.is_empty() {
        return Err(CompareError::Empty(path.to_path_buf()));
    }
    Ok(entries)
}

/// The shape of a suite's `summary.json` (`benchmp summary --json`), enough to know one.
#[derive(Deserialize)]
struct SuiteSummary {
    #[serde(rename = "folder")]
    _folder: PathBuf,
    #[serde(rename = "entries")]
    _entries: Vec<serde_json::Value>,
}

/// The `*.json` files of a result folder, sorted, with their metadata (through symlinks).
/// Hidden files are passed over: the suite's own record of the folder
/// (`.socbench-suite.json`) and staging copies are no reports.
pub fn report_files(dir: &Path) -> Result<Vec<(PathBuf, std::fs::Metadata)>, CompareError> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| CompareError::Read(dir.to_path_buf(), e))? {
        let p = e
            .map_err(|e| CompareError::Read(dir.to_path_buf(), e))?
            .path();
        let hidden = p
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."));
        if p.extension().is_some_and(|x| x == "json") && !hidden {
            let meta = std::fs::metadata(&p).map_err(|e| CompareError::Read(p.clone(), e))?;
            files.push((p, meta));
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// Every file a run's path stands for: the report itself, or each `*.json` of a folder.
pub fn input_files(path: &Path) -> Vec<PathBuf> {
    if path.is_dir() {
        report_files(path)
            .map(|v| v.into_iter().map(|(p, _)| p).collect())
            .unwrap_or_default()
    } else {
        vec![path.to_path_buf()]
    }
}

fn read_report(path: &Path, meta: &std::fs::Metadata) -> Result<Report<AnyTool>, CompareError> {
    let text = read_bounded(path, meta)?;
    let report: Report<AnyTool> = serde_json::from_slice(&text)
        .map_err(|e| CompareError::NotReport(path.to_path_buf(), e))?;
    Ok(with_figures(report))
}

/// A regular file's bytes, refusing what cannot be a report file before reading it (a
/// device, a FIFO, a folder, a file over [`MAX_REPORT_BYTES`]) and reading at most that much
/// in case the file grows meanwhile.
fn read_bounded(path: &Path, meta: &std::fs::Metadata) -> Result<Vec<u8>, CompareError> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let kind = if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a folder")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else {
        Some("a special file")
    };
    if let Some(kind) = kind {
        return Err(CompareError::NotAFile(path.to_path_buf(), kind));
    }
    if meta.len() > MAX_REPORT_BYTES {
        return Err(CompareError::TooLarge(path.to_path_buf(), meta.len()));
    }
    let read = |e| CompareError::Read(path.to_path_buf(), e);
    let mut text = Vec::new();
    std::fs::File::open(path)
        .map_err(read)?
        .take(MAX_REPORT_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(read)?;
    if text.len() as u64 > MAX_REPORT_BYTES {
        return Err(CompareError::TooLarge(
            path.to_path_buf(),
            text.len() as u64,
        ));
    }
    Ok(text)
}

/// A report from before figures were kept gets its measurements' default figures.
fn with_figures(mut report: Report<AnyTool>) -> Report<AnyTool> {
    if report.figures.is_empty() {
        report.figures = crate::figure::default_figures(&report.measurements, |m| m.name.clone());
    }
    report
}

/// Refuses an output file that is one of the inputs (by inode, so `./a.json`, a symlink or a
/// hard link to it count), before anything is read: writing it would destroy the input.
pub fn refuse_overwrite(
    inputs: &[&Path],
    outputs: &[(&'static str, Option<&str>)],
) -> Result<(), CompareError> {
    for &(option, out) in outputs {
        let Some(out) = out.filter(|o| *o != "-") else {
            continue;
        };
        let out = Path::new(out);
        for input in inputs.iter().flat_map(|p| input_files(p)) {
            if crate::files::same_file(&input, out) {
                return Err(CompareError::OutputIsInput {
                    option,
                    output: out.to_path_buf(),
                    input,
                });
            }
        }
    }
    Ok(())
}

/// One run of a side: the path given and the reports read from it.
#[derive(Debug, Clone)]
pub struct Run {
    /// The report file or result folder.
    pub path: PathBuf,
    /// Its reports.
    pub entries: Vec<Entry>,
}

impl Run {
    /// Reads a run (see [`load`]).
    pub fn load(path: &Path) -> Result<Run, CompareError> {
        Ok(Run {
            path: path.to_path_buf(),
            entries: load(path)?,
        })
    }
}

/// The runs of each side from the command line: `BASE CUR` (exactly two paths without `--`),
/// or `BASE... -- CUR...` (every path after `--` a run of CUR). A run given twice on one side
/// (by inode) is refused, since it would count as two units; the same run on both sides is an
/// A/A comparison and allowed.
pub fn sides(
    before: Vec<PathBuf>,
    after: Vec<PathBuf>,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), CompareError> {
    if let Some(o) = after
        .iter()
        .find(|p| p.to_string_lossy().starts_with('-') && !p.exists())
    {
        return Err(CompareError::OptionAfterSeparator(o.display().to_string()));
    }
    let (base, cur) = match (before.len(), after.is_empty()) {
        (2, true) => (before[..1].to_vec(), before[1..].to_vec()),
        (n, true) | (n @ 0, false) => return Err(CompareError::Sides(n)),
        _ => (before, after),
    };
    for (name, side) in [("BASE", &base), ("CUR", &cur)] {
        for (i, p) in side.iter().enumerate() {
            if side[..i].iter().any(|q| crate::files::same_file(p, q)) {
                return Err(CompareError::GivenTwice {
                    side: name,
                    path: p.clone(),
                });
            }
        }
    }
    Ok((base, cur))
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
    pub rule: Rule,
    /// The between-run spread given (`--run-spread`), percent; `None`: unknown.
    #[serde(default)]
    pub run_spread_pct: Option<f64>,
    /// Every figure.
    pub rows: Vec<Row>,
    /// Rows per verdict.
    pub counts: Counts,
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
    pub rule: Rule,
    /// Between-run spread, percent (`--run-spread`); `None`: unknown.
    pub run_spread_pct: Option<f64>,
}

/// Compares the runs of two sides: entries matched by label and tool (a single report against
/// a single report, by tool whatever their names), figures within them by name and CPU.
pub fn compare(base: &[Run], cur: &[Run], how: Judging) -> Result<Comparison, CompareError> {
    let nothing = |why: String| CompareError::NothingInCommon {
        base: runs_named(base),
        cur: runs_named(cur),
        why,
    };
    // One report against one pairs whatever their names; runs of a side need their names.
    let single = matches!((base, cur), ([b], [c]) if b.entries.len() == 1 && c.entries.len() == 1);
    let (bg, cg) = (groups(base, single), groups(cur, single));
    let mut rows = Vec::new();
    let mut shared = 0;
    for b in &bg {
        let c = cg.iter().find(|c| c.key == b.key);
        shared += usize::from(c.is_some());
        let theirs = c.map_or(&[][..], |c| &c.runs[..]);
        rows.extend(compare_figures(b.label, b.key.1, &b.runs, theirs, how)?);
    }
    for c in cg.iter().filter(|c| !bg.iter().any(|b| b.key == c.key)) {
        rows.extend(compare_figures(c.label, c.key.1, &[], &c.runs, how)?);
    }
    if shared == 0 {
        let names = |g: &[Group]| {
            g.iter()
                .map(|x| format!("{} ({})", x.label, x.key.1))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(nothing(format!(
            "no entry of the same name and tool (BASE: {}; CUR: {})",
            names(&bg),
            names(&cg)
        )));
    }
    if rows.iter().all(|r| r.verdict == Verdict::Missing) {
        return Err(nothing("no figure is in both".into()));
    }
    let mut counts = Counts::default();
    for r in &rows {
        match r.verdict {
            Verdict::Pass | Verdict::Ref => counts.pass += 1,
            Verdict::Fail => counts.fail += 1,
            Verdict::Improved => counts.improved += 1,
            Verdict::Noisy => counts.noisy += 1,
            Verdict::Missing => counts.missing += 1,
        }
    }
    let shown = |r: &[Run]| {
        r.iter()
            .map(|r| r.path.display().to_string())
            .collect::<Vec<_>>()
    };
    Ok(Comparison {
        base: shown(base).first().cloned().unwrap_or_default(),
        current: shown(cur).first().cloned().unwrap_or_default(),
        base_runs: shown(base),
        current_runs: shown(cur),
        rule: how.rule,
        run_spread_pct: how.run_spread_pct,
        rows,
        counts,
    })
}

/// `a.json`, or `a1 and 3 more runs`.
fn runs_named(runs: &[Run]) -> String {
    match runs {
        [] => "nothing".into(),
        [one] => one.path.display().to_string(),
        [first, rest @ ..] => format!("{} and {} more runs", first.path.display(), rest.len()),
    }
}

/// One entry as the runs of a side have it.
struct Group<'a> {
    /// Label (`None` when every run is a single report) and tool.
    key: (Option<&'a str>, &'a str),
    /// The label shown: the first run's.
    label: &'a str,
    /// The runs that have it.
    runs: Vec<RunFigures<'a>>,
}

/// Every entry of a side's runs, in the order first seen.
fn groups(runs: &[Run], single: bool) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        for e in &run.entries {
            let key = (
                (!single).then_some(e.label.as_str()),
                e.report.tool.as_str(),
            );
            let figures = RunFigures {
                figures: &e.report.figures,
                noisy: e.report.quality.verdict.noisy,
                run: i,
                of: runs.len(),
            };
            match out.iter_mut().find(|g| g.key == key) {
                Some(g) => g.runs.push(figures),
                None => out.push(Group {
                    key,
                    label: &e.label,
                    runs: vec![figures],
                }),
            }
        }
    }
    out
}

/// One run's figures of an entry.
#[derive(Debug, Clone, Copy)]
pub struct RunFigures<'a> {
    /// The figures of its report.
    pub figures: &'a [Figure],
    /// Its report judged the run noisy.
    pub noisy: bool,
    /// Its place among the runs of its side, from 0 (for messages: `BASE run 2`).
    pub run: usize,
    /// How many runs the side has.
    pub of: usize,
}

/// One figure as one run measured it.
#[derive(Debug, Clone, Copy)]
struct Measured<'a> {
    fig: &'a Figure,
    noisy: bool,
    /// Its run's place among its side's runs, and how many the side has.
    run: (usize, usize),
}

/// A side's figures, each with every run that has it: matched by name, CPU and cluster (the
/// k-th figure of a key in one run with the k-th of that key in another).
fn merge_runs<'a>(runs: &[RunFigures<'a>]) -> Vec<Vec<Measured<'a>>> {
    let key = |f: &Figure| (f.name.clone(), f.cpu, f.cluster);
    let mut out: Vec<Vec<Measured>> = Vec::new();
    for r in runs {
        let mut used = vec![false; out.len()];
        for fig in r.figures {
            let m = Measured {
                fig,
                noisy: r.noisy,
                run: (r.run, r.of),
            };
            match (0..out.len()).find(|&k| !used[k] && key(out[k][0].fig) == key(fig)) {
                Some(k) => {
                    used[k] = true;
                    out[k].push(m);
                }
                None => {
                    out.push(vec![m]);
                    used.push(true);
                }
            }
        }
    }
    out
}

/// Matches the figures of an entry's runs on both sides and judges every pair; the unmatched
/// are MISSING. A pair that cannot be judged (other units or directions, a base of 0) is an
/// error.
pub fn compare_figures(
    entry: &str,
    tool: &str,
    base: &[RunFigures],
    cur: &[RunFigures],
    how: Judging,
) -> Result<Vec<Row>, CompareError> {
    let (base, cur) = (merge_runs(base), merge_runs(cur));
    let (bf, cf): (Vec<&Figure>, Vec<&Figure>) = (
        base.iter().map(|m| m[0].fig).collect(),
        cur.iter().map(|m| m[0].fig).collect(),
    );
    match_figures(&bf, &cf)
        .into_iter()
        .map(|(b, c)| {
            let none: &[Measured] = &[];
            let b = b.map_or(none, |i| &base[i][..]);
            let c = c.map_or(none, |j| &cur[j][..]);
            judge_pair(entry, tool, b, c, how)
        })
        .collect()
}

/// Pairs of indexes into `base` and `cur`: by name and CPU/cluster, then an unmatched base
/// figure with the one unmatched current figure of its name (the same figure on another CPU or
/// cluster); the rest alone.
fn match_figures(base: &[&Figure], cur: &[&Figure]) -> Vec<(Option<usize>, Option<usize>)> {
    let key = |f: &Figure| (f.name.clone(), f.cpu, f.cluster);
    let mut used_cur = vec![false; cur.len()];
    let mut pairs = Vec::new();
    let mut unmatched_base = Vec::new();
    for (i, b) in base.iter().enumerate() {
        match (0..cur.len()).find(|&j| !used_cur[j] && key(cur[j]) == key(b)) {
            Some(j) => {
                used_cur[j] = true;
                pairs.push((Some(i), Some(j)));
            }
            None => unmatched_base.push(i),
        }
    }
    for i in unmatched_base {
        let b = base[i];
        let mut left = (0..cur.len()).filter(|&j| !used_cur[j] && cur[j].name == b.name);
        match (left.next(), left.next()) {
            (Some(j), None) if b.cpu.is_some() == cur[j].cpu.is_some() => {
                used_cur[j] = true;
                pairs.push((Some(i), Some(j)));
            }
            _ => pairs.push((Some(i), None)),
        }
    }
    for (j, used) in used_cur.iter().enumerate() {
        if !used {
            pairs.push((None, Some(j)));
        }
    }
    pairs
}

/// `BASE`, or `BASE run 2` on a side of several runs.
fn who(side: &str, m: &Measured) -> String {
    if m.run.1 > 1 {
        format!("{side} run {}", m.run.0 + 1)
    } else {
        side.to_string()
    }
}

/// Refuses figures whose change means nothing: other units or directions than the first
/// base run's, or a value that is 0 (base only), negative or not a number (a change against
/// it is infinite or undefined).
fn check_pair(entry: &str, b: &[Measured], c: &[Measured]) -> Result<(), CompareError> {
    let first = &b[0];
    let how = |f: &Figure| format!("{} ({} is better)", f.unit, f.better.word());
    for (side, m) in b
        .iter()
        .map(|m| ("BASE", m))
        .chain(c.iter().map(|m| ("CUR", m)))
    {
        if m.fig.unit != first.fig.unit || m.fig.better != first.fig.better {
            return Err(CompareError::Mismatch {
                entry: entry.to_string(),
                figure: first.fig.describe(),
                a: format!("{} has {}", who("BASE", first), how(first.fig)),
                b: format!("{} {}", who(side, m), how(m.fig)),
            });
        }
        let t = ab::trimmed_mean(&sorted(m.fig));
        let ok = if side == "BASE" { t > 0.0 } else { t >= 0.0 };
        if !(t.is_finite() && ok) {
            return Err(CompareError::NoBase {
                entry: entry.to_string(),
                figure: first.fig.describe(),
                side: who(side, m),
                value: t,
            });
        }
    }
    Ok(())
}

/// The row of one matched (or unmatched: one side empty) figure.
fn judge_pair(
    entry: &str,
    tool: &str,
    b: &[Measured],
    c: &[Measured],
    how: Judging,
) -> Result<Row, CompareError> {
    let any = b.first().or(c.first()).expect("one side at least").fig;
    let figure = match (b.first(), c.first()) {
        (Some(b), Some(c)) if b.fig.cpu != c.fig.cpu => {
            format!("{} ({} vs {})", b.fig.name, place(b.fig), place(c.fig))
        }
        _ => any.describe(),
    };
    let mut row = Row {
        entry: entry.to_string(),
        tool: tool.to_string(),
        figure,
        unit: any.unit.clone(),
        better: any.better,
        base: None,
        current: None,
        change_pct: None,
        ks_d: None,
        ks_p: None,
        mann_whitney: None,
        verdict: Verdict::Missing,
        why: None,
    };
    if b.is_empty() || c.is_empty() {
        row.base = side(b, 0);
        row.current = side(c, 0);
        return Ok(row);
    }
    check_pair(entry, b, c)?;
    if let ([bm], [cm]) = (b, c) {
        // One run a side: the samples' trimmed means; the KS test is shown, not used.
        let (sb, sc) = (sorted(bm.fig), sorted(cm.fig));
        let cmp = ab::compare(&sb, &sc, how.rule.min_effect_pct, false);
        row.base = side(b, cmp.outliers.baseline);
        row.current = side(c, cmp.outliers.current);
        row.change_pct = Some(cmp.change_pct);
        row.ks_d = Some(cmp.ks.d);
        row.ks_p = Some(cmp.ks.p);
        (row.verdict, row.why) = judge_one_run(cmp.change_pct, any.better, how);
    } else {
        // Several runs: one value per run, the medians' change, Mann-Whitney between sides.
        let o = ab::iqr_outliers(&pooled(b), &pooled(c));
        let (bs, cs) = (side(b, o.baseline), side(c, o.current));
        let (bs, cs) = (bs.expect("a run"), cs.expect("a run"));
        let change = (cs.trimmed_mean - bs.trimmed_mean) / bs.trimmed_mean * 100.0;
        let mw = mann_whitney::mann_whitney_u(&bs.runs, &cs.runs);
        (row.verdict, row.why) =
            judge_runs(change, any.better, how, &mw, (bs.runs.len(), cs.runs.len()));
        row.change_pct = Some(change);
        row.mann_whitney = Some(mw);
        row.base = Some(bs);
        row.current = Some(cs);
    }
    Ok(row)
}

/// The change in the worse direction, percent (positive: worse).
fn worse_pct(change_pct: f64, better: Better) -> f64 {
    match better {
        Better::Higher => -change_pct,
        Better::Lower => change_pct,
    }
}

/// FAIL for a change in the worse direction, IMPROVED for one in the better.
fn beyond(worse_pct: f64) -> Verdict {
    if worse_pct > 0.0 {
        Verdict::Fail
    } else {
        Verdict::Improved
    }
}

/// One run per side: PASS within ±min-effect; FAIL or IMPROVED only beyond both min-effect and
/// the between-run spread, which must be given (a single run cannot show its own drift); NOISY
/// in between, with the reason.
pub fn judge_one_run(change_pct: f64, better: Better, how: Judging) -> (Verdict, Option<String>) {
    let worse = worse_pct(change_pct, better);
    if worse.abs() <= how.rule.min_effect_pct {
        return (Verdict::Pass, None);
    }
    let why = match how.run_spread_pct {
        None => format!(
            "one run per side: a change of {change_pct:+.1} % cannot be told from the drift \
             between runs; give --run-spread PCT, several runs per side, or pair the builds \
             with benchmp ab"
        ),
        Some(s) if worse.abs() <= s => format!(
            "one run per side: a change of {change_pct:+.1} % is within the drift between runs \
             (--run-spread {s} %)"
        ),
        Some(_) => return (beyond(worse), None),
    };
    (Verdict::Noisy, Some(why))
}

/// Several runs on a side: PASS within ±min-effect; FAIL or IMPROVED beyond it when the
/// Mann-Whitney test of the runs rejects (p < alpha); NOISY otherwise, with the reason (too few
/// runs for the test to reject at all, or runs that overlap).
pub fn judge_runs(
    change_pct: f64,
    better: Better,
    how: Judging,
    mw: &MannWhitney,
    n: (usize, usize),
) -> (Verdict, Option<String>) {
    let worse = worse_pct(change_pct, better);
    let alpha = how.rule.alpha;
    if worse.abs() <= how.rule.min_effect_pct {
        return (Verdict::Pass, None);
    }
    if mw.p < alpha {
        return (beyond(worse), None);
    }
    let runs = format!(
        "{} run{} against {}",
        n.0,
        if n.0 == 1 { "" } else { "s" },
        n.1
    );
    let best = mann_whitney::min_p(n.0, n.1);
    let why = if best >= alpha {
        format!(
            "{runs}: a change of {change_pct:+.1} % cannot reach p < {alpha} with so few runs \
             (Mann-Whitney p {:.3}, {best:.3} at best); give more runs per side (4 at least), \
             or pair the builds with benchmp ab",
            mw.p
        )
    } else {
        format!(
            "{runs}: a change of {change_pct:+.1} % with Mann-Whitney p {:.3} (not below alpha \
             {alpha}): the runs of the two sides overlap",
            mw.p
        )
    };
    (Verdict::Noisy, Some(why))
}

/// A figure's samples sorted, or its value alone when it has none.
fn sorted(f: &Figure) -> Vec<f64> {
    let mut s: Vec<f64> = if f.samples.is_empty() {
        vec![f.value]
    } else {
        f.samples.clone()
    };
    ab::sort(&mut s);
    s
}

/// Every run's samples (or value) together, sorted.
fn pooled(runs: &[Measured]) -> Vec<f64> {
    let mut all: Vec<f64> = runs.iter().flat_map(|m| sorted(m.fig)).collect();
    ab::sort(&mut all);
    all
}

/// A side of a row from the runs that have the figure (`None`: none has).
fn side(runs: &[Measured], outliers: usize) -> Option<Side> {
    let first = runs.first()?;
    let tms: Vec<f64> = runs
        .iter()
        .map(|m| ab::trimmed_mean(&sorted(m.fig)))
        .collect();
    let mut samples: Vec<f64> = runs.iter().flat_map(|m| m.fig.samples.clone()).collect();
    ab::sort(&mut samples);
    let median = |v: Vec<f64>| crate::stats::median_of(&v);
    let noisy_runs = runs.iter().filter(|m| m.noisy).count();
    Some(Side {
        cpu: first.fig.cpu,
        value: median(runs.iter().map(|m| m.fig.value).collect()),
        trimmed_mean: median(tms.clone()),
        n: samples.len(),
        outliers,
        samples,
        noisy: noisy_runs > 0,
        noisy_runs,
        runs: tms,
    })
}

fn place(f: &Figure) -> String {
    match (f.cpu, f.cluster) {
        (Some(c), _) => format!("cpu{c}"),
        (None, Some(k)) => format!("cluster{k}"),
        (None, None) => "system".into(),
    }
}

/// `a.json`, or `4 runs (a1, a2, a3, a4)`.
fn side_shown(first: &str, runs: &[String]) -> String {
    if runs.len() > 1 {
        format!("{} runs ({})", runs.len(), runs.join(", "))
    } else {
        first.to_string()
    }
}

/// The text table: one row per figure with both sides, the change, p and the verdict (with the
/// runs' noise and why a change is NOISY), then the counts.
pub fn render_text(c: &Comparison) -> String {
    use std::fmt::Write as _;
    let several = c.base_runs.len() > 1 || c.current_runs.len() > 1;
    let how = if several {
        format!(
            "several runs a side: minimum effect {:.1} %, p: Mann-Whitney over the runs, alpha {}",
            c.rule.min_effect_pct, c.rule.alpha
        )
    } else {
        format!(
            "one run per side: minimum effect {:.1} %, run spread {}, p: KS of the samples, a diagnostic",
            c.rule.min_effect_pct,
            c.run_spread_pct
                .map_or("unknown".to_string(), |s| format!("{s:.1} %"))
        )
    };
    let mut out = format!(
        "benchmp compare: BASE {} vs CUR {} ({how})\n",
        side_shown(&c.base, &c.base_runs),
        side_shown(&c.current, &c.current_runs),
    );
    let w = c
        .rows
        .iter()
        .map(|r| r.entry.len() + r.figure.len() + 1)
        .max()
        .unwrap_or(10)
        .max(10);
    let _ = writeln!(
        out,
        "{:<w$}  {:>12}  {:>12}  {:<12}  {:>8}  {:>8}  verdict",
        "figure", "base", "current", "unit", "change", "p"
    );
    let num = |x: Option<f64>| x.map_or("-".to_string(), |v| crate::figure::table_number(v, 2));
    for r in &c.rows {
        let p = r.mann_whitney.map(|m| m.p).or(r.ks_p);
        let _ = writeln!(
            out,
            "{:<w$}  {:>12}  {:>12}  {:<12}  {:>8}  {:>8}  {}{}{}",
            format!("{} {}", r.entry, r.figure),
            num(r.base.as_ref().map(|s| s.trimmed_mean)),
            num(r.current.as_ref().map(|s| s.trimmed_mean)),
            format!(
                "{}{}",
                r.unit,
                match r.better {
                    Better::Higher => " ↑",
                    Better::Lower => " ↓",
                }
            ),
            r.change_pct
                .map_or("-".to_string(), |v| format!("{v:+.1}%")),
            p.map_or("-".to_string(), |p| format!("{p:.3}")),
            r.verdict.label(),
            noisy_note(r),
            r.why.as_ref().map_or(String::new(), |w| format!(" — {w}")),
        );
    }
    let k = &c.counts;
    let _ = writeln!(
        out,
        "{} figures: {} PASS, {} FAIL, {} IMPROVED, {} NOISY, {} MISSING",
        c.rows.len(),
        k.pass,
        k.fail,
        k.improved,
        k.noisy,
        k.missing
    );
    out
}

/// " (base run noisy)", " (current run noisy)", " (both runs noisy)", or with several runs
/// " (2 of 4 base runs noisy)": which side's reports judged their own runs noisy, so that a
/// verdict can be read with it.
fn noisy_note(r: &Row) -> String {
    let part = |s: &Option<Side>, name: &str| {
        let s = s.as_ref()?;
        let k = s.noisy_runs.max(usize::from(s.noisy));
        (k > 0).then(|| {
            if s.runs.len() > 1 {
                format!("{k} of {} {name} runs", s.runs.len())
            } else {
                format!("{name} run")
            }
        })
    };
    let single = |s: &Option<Side>| s.as_ref().is_none_or(|s| s.runs.len() <= 1);
    match (part(&r.base, "base"), part(&r.current, "current")) {
        (Some(_), Some(_)) if single(&r.base) && single(&r.current) => " (both runs noisy)".into(),
        (Some(b), Some(c)) => format!(" ({b}, {c} noisy)"),
        (Some(x), None) | (None, Some(x)) => format!(" ({x} noisy)"),
        (None, None) => String::new(),
    }
}

/// One CSV row per figure (the columns after `verdict` are newer than the others).
pub fn write_csv(c: &Comparison, w: impl std::io::Write) -> std::io::Result<()> {
    let mut out = csv::Writer::from_writer(w);
    out.write_record([
        "entry",
        "tool",
        "figure",
        "unit",
        "better",
        "base",
        "base_n",
        "current",
        "current_n",
        "change_pct",
        "ks_d",
        "ks_p",
        "base_outliers",
        "current_outliers",
        "base_noisy",
        "current_noisy",
        "verdict",
        "why",
        "base_runs",
        "current_runs",
        "mw_u",
        "mw_p",
    ])?;
    let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.6}"));
    for r in &c.rows {
        let s = |x: &Option<Side>, f: fn(&Side) -> String| x.as_ref().map_or(String::new(), f);
        out.write_record([
            r.entry.clone(),
            r.tool.clone(),
            r.figure.clone(),
            r.unit.clone(),
            r.better.word().to_string(),
            s(&r.base, |x| format!("{:.6}", x.trimmed_mean)),
            s(&r.base, |x| x.n.to_string()),
            s(&r.current, |x| format!("{:.6}", x.trimmed_mean)),
            s(&r.current, |x| x.n.to_string()),
            num(r.change_pct),
            num(r.ks_d),
            num(r.ks_p),
            s(&r.base, |x| x.outliers.to_string()),
            s(&r.current, |x| x.outliers.to_string()),
            s(&r.base, |x| x.noisy.to_string()),
            s(&r.current, |x| x.noisy.to_string()),
            r.verdict.label().to_string(),
            r.why.clone().unwrap_or_default(),
            s(&r.base, |x| x.runs.len().to_string()),
            s(&r.current, |x| x.runs.len().to_string()),
            num(r.mann_whitney.map(|m| m.u)),
            num(r.mann_whitney.map(|m| m.p)),
        ])?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(name: &str, cpu: Option<usize>, better: Better, samples: &[f64]) -> Figure {
        Figure {
            name: name.into(),
            cpu,
            cluster: cpu.map(|_| 0),
            unit: "MB/s".into(),
            better,
            value: samples.iter().sum::<f64>() / samples.len().max(1) as f64,
            samples: samples.to_vec(),
        }
    }

    fn spread(center: f64) -> Vec<f64> {
        (0..11)
            .map(|i| center * (1.0 + (i as f64 - 5.0) * 0.001))
            .collect()
    }

    /// The runs of one side, each with the figures given.
    fn runs(sets: &[Vec<Figure>]) -> Vec<RunFigures<'_>> {
        sets.iter()
            .enumerate()
            .map(|(i, figures)| RunFigures {
                figures,
                noisy: false,
                run: i,
                of: sets.len(),
            })
            .collect()
    }

    fn judge(base: &[Vec<Figure>], cur: &[Vec<Figure>], how: Judging) -> Vec<Row> {
        compare_figures("e", "bw_mem", &runs(base), &runs(cur), how).unwrap()
    }

    fn spread_known(pct: f64) -> Judging {
        Judging {
            rule: Rule::default(),
            run_spread_pct: Some(pct),
        }
    }

    #[test]
    fn direction_decides_fail_and_improved_beyond_the_run_spread() {
        let how = spread_known(10.0);
        let base = [vec![fig(
            "rd 64M",
            Some(0),
            Better::Higher,
            &spread(1000.0),
        )]];
        let slower = [vec![fig("rd 64M", Some(0), Better::Higher, &spread(850.0))]];
        let faster = [vec![fig(
            "rd 64M",
            Some(0),
            Better::Higher,
            &spread(1200.0),
        )]];
        let rows = judge(&base, &slower, how);
        assert_eq!((rows[0].verdict, &rows[0].why), (Verdict::Fail, &None));
        assert!((rows[0].change_pct.unwrap() + 15.0).abs() < 0.01);
        assert!(rows[0].ks_p.is_some() && rows[0].mann_whitney.is_none());
        assert_eq!(judge(&base, &faster, how)[0].verdict, Verdict::Improved);
        // For a latency, more is worse.
        let lat = [vec![fig("L1", None, Better::Lower, &spread(1.0))]];
        let more = [vec![fig("L1", None, Better::Lower, &spread(1.2))]];
        assert_eq!(judge(&lat, &more, how)[0].verdict, Verdict::Fail);
        assert_eq!(judge(&base, &base, how)[0].verdict, Verdict::Pass);
    }

    #[test]
    fn one_run_per_side_cannot_call_drift_a_regression() {
        let base = [vec![fig(
            "rd 64M",
            Some(0),
            Better::Higher,
            &spread(1000.0),
        )]];
        let slower = [vec![fig("rd 64M", Some(0), Better::Higher, &spread(880.0))]];
        // The KS test rejects (tight samples), yet without the spread between runs the change
        // is NOISY, and says what would decide it.
        let rows = judge(&base, &slower, Judging::default());
        assert!(rows[0].ks_p.unwrap() < 0.05, "{rows:?}");
        assert_eq!(rows[0].verdict, Verdict::Noisy);
        let why = rows[0].why.as_deref().unwrap();
        assert!(
            why.starts_with("one run per side: a change of -12.0 % cannot be told")
                && why.contains("--run-spread PCT")
                && why.contains("benchmp ab"),
            "{why}"
        );
        // Within a known spread it is still NOISY; beyond it a FAIL.
        let rows = judge(&base, &slower, spread_known(15.0));
        assert_eq!(rows[0].verdict, Verdict::Noisy);
        assert!(
            rows[0]
                .why
                .as_deref()
                .unwrap()
                .contains("(--run-spread 15 %)")
        );
        assert_eq!(
            judge(&base, &slower, spread_known(8.0))[0].verdict,
            Verdict::Fail
        );
        // Within the minimum effect it passes whatever the spread.
        let near = [vec![fig("rd 64M", Some(0), Better::Higher, &spread(970.0))]];
        let rows = judge(&base, &near, Judging::default());
        assert_eq!((rows[0].verdict, &rows[0].why), (Verdict::Pass, &None));
    }

    #[test]
    fn unmatched_figures_are_missing_and_single_ones_match_across_cpus() {
        let base = [vec![
            fig("rd 64M", Some(0), Better::Higher, &spread(1000.0)),
            fig("wr 64M", Some(0), Better::Higher, &spread(500.0)),
        ]];
        let cur = [vec![fig(
            "rd 64M",
            Some(4),
            Better::Higher,
            &spread(2000.0),
        )]];
        let rows = judge(&base, &cur, spread_known(10.0));
        assert_eq!(rows.len(), 2);
        let rd = rows.iter().find(|r| r.figure.starts_with("rd")).unwrap();
        assert_eq!(rd.figure, "rd 64M (cpu0 vs cpu4)");
        assert_eq!(rd.verdict, Verdict::Improved);
        let wr = rows.iter().find(|r| r.figure.starts_with("wr")).unwrap();
        assert_eq!(wr.verdict, Verdict::Missing);
        assert!(wr.current.is_none());
    }

    #[test]
    fn single_samples_are_judged_by_the_effect_and_the_spread() {
        let base = [vec![fig("coremark", Some(0), Better::Higher, &[100.0])]];
        let half = [vec![fig("coremark", Some(0), Better::Higher, &[50.0])]];
        assert_eq!(
            judge(&base, &half, spread_known(10.0))[0].verdict,
            Verdict::Fail
        );
        assert_eq!(
            judge(&base, &half, Judging::default())[0].verdict,
            Verdict::Noisy
        );
        let near = [vec![fig("coremark", Some(0), Better::Higher, &[97.0])]];
        assert_eq!(
            judge(&base, &near, Judging::default())[0].verdict,
            Verdict::Pass
        );
    }

    /// One run per value, each a figure of 11 tight samples around it.
    fn side_of(values: &[f64]) -> Vec<Vec<Figure>> {
        values
            .iter()
            .map(|&v| vec![fig("rd 64M", Some(0), Better::Higher, &spread(v))])
            .collect()
    }

    #[test]
    fn several_runs_a_side_are_the_units_of_a_mann_whitney_test() {
        let how = Judging::default();
        let base = side_of(&[1000.0, 1040.0, 980.0, 1010.0]);
        // Every current run below every base run: p = 2/70, a FAIL on the medians' change.
        let rows = judge(&base, &side_of(&[900.0, 880.0, 920.0, 905.0]), how);
        let r = &rows[0];
        assert_eq!((r.verdict, &r.why), (Verdict::Fail, &None), "{r:?}");
        let mw = r.mann_whitney.unwrap();
        assert!((mw.p - 2.0 / 70.0).abs() < 1e-12 && mw.u == 16.0, "{mw:?}");
        let (b, c) = (r.base.as_ref().unwrap(), r.current.as_ref().unwrap());
        assert_eq!((b.runs.len(), c.runs.len(), b.n, c.n), (4, 4, 44, 44));
        assert!((b.trimmed_mean - 1005.0).abs() < 1e-9, "{b:?}");
        assert!((r.change_pct.unwrap() - (902.5 / 1005.0 - 1.0) * 100.0).abs() < 1e-9);
        assert!(r.ks_p.is_none());
        // The same runs on both sides: PASS.
        assert_eq!(judge(&base, &base, how)[0].verdict, Verdict::Pass);
        // A median shift beyond the effect whose runs overlap the base's: NOISY, and why.
        let rows = judge(&base, &side_of(&[1100.0, 990.0, 1120.0, 1060.0]), how);
        assert_eq!(rows[0].verdict, Verdict::Noisy, "{rows:?}");
        let why = rows[0].why.as_deref().unwrap();
        assert!(
            why.starts_with("4 runs against 4: a change of +7.5 %") && why.contains("overlap"),
            "{why}"
        );
        // Three runs a side can never reach p < 0.05, however far apart.
        let rows = judge(&base[..3], &side_of(&[500.0, 510.0, 490.0]), how);
        assert_eq!(rows[0].verdict, Verdict::Noisy);
        assert!(
            rows[0]
                .why
                .as_deref()
                .unwrap()
                .contains("cannot reach p < 0.05")
        );
    }

    #[test]
    fn a_run_without_a_figure_gives_it_no_value() {
        let mut base = side_of(&[1000.0, 1040.0, 980.0, 1010.0, 1020.0]);
        base[2].clear();
        let rows = judge(
            &base,
            &side_of(&[900.0, 880.0, 920.0, 905.0]),
            Judging::default(),
        );
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].base.as_ref().unwrap().runs.len(), 4);
        assert_eq!(rows[0].verdict, Verdict::Fail);
    }

    #[test]
    fn a_run_measuring_a_figure_differently_is_named() {
        let mut base = side_of(&[1000.0, 1040.0]);
        base[1][0].unit = "ns".into();
        let e = compare_figures(
            "e",
            "bw_mem",
            &runs(&base),
            &runs(&side_of(&[900.0])),
            Judging::default(),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("BASE run 1 has MB/s") && text.contains("BASE run 2 ns"),
            "{text}"
        );
    }

    #[test]
    fn a_folders_hidden_files_are_no_reports() {
        let d = std::env::temp_dir().join(format!("benchmp-compare-hidden-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        for f in ["a.json", ".socbench-suite.json", "b.txt"] {
            std::fs::write(d.join(f), "{}").unwrap();
        }
        let files: Vec<PathBuf> = report_files(&d)
            .unwrap()
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(files, [d.join("a.json")]);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_comparison_written_before_runs_were_units_still_reads_as_one() {
        // load() passes over a folder's compare.json only if it parses as a Comparison.
        let base = [vec![fig(
            "rd 64M",
            Some(0),
            Better::Higher,
            &spread(1000.0),
        )]];
        let c = Comparison {
            base: "a".into(),
            current: "b".into(),
            base_runs: vec!["a".into()],
            current_runs: vec!["b".into()],
            rule: Rule::default(),
            run_spread_pct: None,
            rows: judge(&base, &base, Judging::default()),
            counts: Counts::default(),
        };
        let mut v = serde_json::to_value(&c).unwrap();
        for k in ["base_runs", "current_runs", "run_spread_pct"] {
            v.as_object_mut().unwrap().remove(k);
        }
        for r in v["rows"].as_array_mut().unwrap() {
            let r = r.as_object_mut().unwrap();
            r.remove("mann_whitney");
            r.remove("why");
            for s in ["base", "current"] {
                let s = r[s].as_object_mut().unwrap();
                s.remove("runs");
                s.remove("noisy_runs");
            }
        }
        let old: Comparison = serde_json::from_value(v).unwrap();
        assert_eq!(old.rows[0].verdict, Verdict::Pass);
    }

    #[test]
    fn the_command_line_splits_into_two_sides() {
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        let (b, c) = sides(p(&["a", "b"]), vec![]).unwrap();
        assert_eq!((b, c), (p(&["a"]), p(&["b"])));
        let (b, c) = sides(p(&["a1", "a2", "a3"]), p(&["b1", "b2"])).unwrap();
        assert_eq!((b.len(), c.len()), (3, 2));
        let (b, c) = sides(p(&["a"]), p(&["b"])).unwrap();
        assert_eq!((b.len(), c.len()), (1, 1));
        assert!(matches!(
            sides(p(&["a", "b", "c"]), vec![]),
            Err(CompareError::Sides(3))
        ));
        assert!(matches!(
            sides(p(&["a"]), vec![]),
            Err(CompareError::Sides(1))
        ));
        assert!(matches!(
            sides(p(&["a"]), p(&["b", "--json"])),
            Err(CompareError::OptionAfterSeparator(_))
        ));
        assert!(matches!(
            sides(p(&["a1", "./a1"]), p(&["b"])),
            Err(CompareError::GivenTwice { side: "BASE", .. })
        ));
        // The same run on both sides is an A/A comparison.
        assert!(sides(p(&["a", "a"]), vec![]).is_ok());
    }
}
