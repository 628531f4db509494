//! `benchmp compare BASE CUR`: an A/B verdict on every figure two runs share.
//!
//! BASE and CUR are report files (any tool's `--json`) or result folders of
//! `scripts/suite.sh` (one report per entry, matched by file name). Within a pair of reports,
//! figures ([`crate::figure`]) are matched by name and CPU/cluster; a name each side has once
//! is matched across CPUs, so one core can be compared with another. Every matched figure
//! gets dto's method ([`crate::ab`]): the change of the trimmed means of the samples, the KS
//! test, outliers against one shared threshold, and a verdict aware of the figure's
//! direction: PASS, FAIL (a regression), IMPROVED, NOISY (a shift the KS test cannot tell
//! from the spread) or MISSING (in one run only).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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
    /// The two runs share no entry or no figure.
    #[error("{} and {} have nothing in common: {why}", .base.display(), .cur.display())]
    NothingInCommon {
        /// BASE.
        base: PathBuf,
        /// CUR.
        cur: PathBuf,
        /// What did not match.
        why: String,
    },
    /// A figure of one name is measured differently on the two sides.
    #[error(
        "{entry} {figure}: BASE has {base} and CUR {cur}; a figure can only be compared with the same figure"
    )]
    Mismatch {
        /// The entry.
        entry: String,
        /// The figure.
        figure: String,
        /// BASE's unit and direction.
        base: String,
        /// CUR's.
        cur: String,
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
        /// BASE or CUR.
        side: &'static str,
        /// The value.
        value: f64,
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
/// beside its reports), which is passed over.
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
            Err(e) => return Err(CompareError::NotReport(f, e)),
        }
    }
    if entries.is_empty() {
        return Err(CompareError::Empty(path.to_path_buf()));
    }
    Ok(entries)
}

/// The `*.json` files of a result folder, sorted, with their metadata (through symlinks).
pub fn report_files(dir: &Path) -> Result<Vec<(PathBuf, std::fs::Metadata)>, CompareError> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| CompareError::Read(dir.to_path_buf(), e))? {
        let p = e
            .map_err(|e| CompareError::Read(dir.to_path_buf(), e))?
            .path();
        if p.extension().is_some_and(|x| x == "json") {
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

/// One side of a compared figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// CPU of the figure (`None`: cluster or system).
    pub cpu: Option<usize>,
    /// The figure as its run reported it.
    pub value: f64,
    /// Trimmed mean of its samples (the value when it has none): what is compared.
    pub trimmed_mean: f64,
    /// Samples.
    pub n: usize,
    /// Samples above the shared outlier threshold.
    pub outliers: usize,
    /// The samples, sorted (for plots of both sides' distributions).
    pub samples: Vec<f64>,
    /// The run-quality verdict of this side's report was noisy (a child lost time to other
    /// tasks, migrated, or the clock changed): a change may be the run's, not the build's.
    #[serde(default)]
    pub noisy: bool,
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
    /// (current − base) / base × 100 of the trimmed means.
    pub change_pct: Option<f64>,
    /// KS statistic of the trimmed samples.
    pub ks_d: Option<f64>,
    /// KS p-value.
    pub ks_p: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// BASE as given.
    pub base: String,
    /// CUR as given.
    pub current: String,
    /// The rule applied.
    pub rule: Rule,
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

/// Compares two runs: entries matched by label (a single file on each side is matched
/// whatever its name, when both are the same tool), figures within them by name and CPU.
pub fn compare(
    base_path: &Path,
    base: &[Entry],
    cur_path: &Path,
    cur: &[Entry],
    rule: Rule,
) -> Result<Comparison, CompareError> {
    let nothing = |why: String| CompareError::NothingInCommon {
        base: base_path.to_path_buf(),
        cur: cur_path.to_path_buf(),
        why,
    };
    let single = base.len() == 1 && cur.len() == 1;
    // Two single reports pair whatever their names, when they are of the same tool.
    let pairs =
        |a: &Entry, b: &Entry| a.report.tool == b.report.tool && (single || a.label == b.label);
    let mut rows = Vec::new();
    let mut shared = 0;
    for b in base {
        let c = cur.iter().find(|c| pairs(b, c));
        shared += usize::from(c.is_some());
        let theirs = c.map_or(&[][..], |c| &c.report.figures[..]);
        rows.extend(with_noise(
            compare_figures(&b.label, &b.report.tool, &b.report.figures, theirs, rule)?,
            Some(b),
            c,
        ));
    }
    for c in cur.iter().filter(|c| !base.iter().any(|b| pairs(b, c))) {
        rows.extend(with_noise(
            compare_figures(&c.label, &c.report.tool, &[], &c.report.figures, rule)?,
            None,
            Some(c),
        ));
    }
    if shared == 0 {
        let names = |e: &[Entry]| {
            e.iter()
                .map(|x| format!("{} ({})", x.label, x.report.tool))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(nothing(format!(
            "no entry of the same name and tool (BASE: {}; CUR: {})",
            names(base),
            names(cur)
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
    Ok(Comparison {
        base: base_path.display().to_string(),
        current: cur_path.display().to_string(),
        rule,
        rows,
        counts,
    })
}

/// One entry's rows, each side carrying its report's run-quality verdict.
fn with_noise(mut rows: Vec<Row>, base: Option<&Entry>, cur: Option<&Entry>) -> Vec<Row> {
    let noisy = |e: Option<&Entry>| e.is_some_and(|e| e.report.quality.verdict.noisy);
    for row in &mut rows {
        if let Some(s) = row.base.as_mut() {
            s.noisy = noisy(base);
        }
        if let Some(s) = row.current.as_mut() {
            s.noisy = noisy(cur);
        }
    }
    rows
}

/// Matches two reports' figures and judges every pair; the unmatched are MISSING. A pair that
/// cannot be judged (other units or directions, a base of 0) is an error.
pub fn compare_figures(
    entry: &str,
    tool: &str,
    base: &[Figure],
    cur: &[Figure],
    rule: Rule,
) -> Result<Vec<Row>, CompareError> {
    let key = |f: &Figure| (f.name.clone(), f.cpu, f.cluster);
    let mut used_cur = vec![false; cur.len()];
    let mut pairs: Vec<(Option<&Figure>, Option<&Figure>)> = Vec::new();
    let mut unmatched_base = Vec::new();
    for b in base {
        match (0..cur.len()).find(|&j| !used_cur[j] && key(&cur[j]) == key(b)) {
            Some(j) => {
                used_cur[j] = true;
                pairs.push((Some(b), Some(&cur[j])));
            }
            None => unmatched_base.push(b),
        }
    }
    // A name each side has exactly once more: the same figure on another CPU or cluster.
    for b in unmatched_base {
        let once = |fs: &[&Figure]| fs.iter().filter(|f| f.name == b.name).count() == 1;
        let left: Vec<&Figure> = cur
            .iter()
            .enumerate()
            .filter(|(j, _)| !used_cur[*j])
            .map(|(_, f)| f)
            .collect();
        let j = (0..cur.len()).find(|&j| !used_cur[j] && cur[j].name == b.name);
        match j {
            Some(j) if once(&left) && once(&[b]) && b.cpu.is_some() == cur[j].cpu.is_some() => {
                used_cur[j] = true;
                pairs.push((Some(b), Some(&cur[j])));
            }
            _ => pairs.push((Some(b), None)),
        }
    }
    for (j, f) in cur.iter().enumerate() {
        if !used_cur[j] {
            pairs.push((None, Some(f)));
        }
    }
    pairs
        .into_iter()
        .map(|(b, c)| judge_pair(entry, tool, b, c, rule))
        .collect()
}

/// Refuses a pair whose change means nothing: other units or directions, or a base that is 0,
/// negative or not a number (a change against it is infinite or undefined).
fn check_pair(entry: &str, b: &Figure, c: &Figure) -> Result<(), CompareError> {
    let how = |f: &Figure| format!("{} ({} is better)", f.unit, f.better.word());
    if b.unit != c.unit || b.better != c.better {
        return Err(CompareError::Mismatch {
            entry: entry.to_string(),
            figure: b.describe(),
            base: how(b),
            cur: how(c),
        });
    }
    let bad = |side, value| CompareError::NoBase {
        entry: entry.to_string(),
        figure: b.describe(),
        side,
        value,
    };
    let (tb, tc) = (ab::trimmed_mean(&sorted(b)), ab::trimmed_mean(&sorted(c)));
    if !(tb.is_finite() && tb > 0.0) {
        return Err(bad("BASE", tb));
    }
    if !(tc.is_finite() && tc >= 0.0) {
        return Err(bad("CUR", tc));
    }
    Ok(())
}

/// The row of one matched (or unmatched) pair of figures.
fn judge_pair(
    entry: &str,
    tool: &str,
    b: Option<&Figure>,
    c: Option<&Figure>,
    rule: Rule,
) -> Result<Row, CompareError> {
    let any = b.or(c).expect("one side at least");
    let figure = match (b, c) {
        (Some(b), Some(c)) if b.cpu != c.cpu => {
            format!("{} ({} vs {})", b.name, place(b), place(c))
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
        verdict: Verdict::Missing,
    };
    let (Some(b), Some(c)) = (b, c) else {
        row.base = b.map(|f| side(f, &sorted(f), 0));
        row.current = c.map(|f| side(f, &sorted(f), 0));
        return Ok(row);
    };
    check_pair(entry, b, c)?;
    let (sb, sc) = (sorted(b), sorted(c));
    let cmp = ab::compare(&sb, &sc, rule.min_effect_pct, false);
    let outliers = |s: &[f64], n: usize| if s.is_empty() { 0 } else { n };
    row.base = Some(side(b, &sb, outliers(&sb, cmp.outliers.baseline)));
    row.current = Some(side(c, &sc, outliers(&sc, cmp.outliers.current)));
    row.change_pct = Some(cmp.change_pct);
    row.ks_d = Some(cmp.ks.d);
    row.ks_p = Some(cmp.ks.p);
    row.verdict = ab::judge(&cmp, any.better, rule, (b.samples.len(), c.samples.len()));
    Ok(row)
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

fn side(f: &Figure, sorted: &[f64], outliers: usize) -> Side {
    Side {
        cpu: f.cpu,
        value: f.value,
        trimmed_mean: ab::trimmed_mean(sorted),
        n: f.samples.len(),
        outliers,
        samples: if f.samples.is_empty() {
            Vec::new()
        } else {
            sorted.to_vec()
        },
        noisy: false,
    }
}

fn place(f: &Figure) -> String {
    match (f.cpu, f.cluster) {
        (Some(c), _) => format!("cpu{c}"),
        (None, Some(k)) => format!("cluster{k}"),
        (None, None) => "system".into(),
    }
}

/// The text table: one row per figure with both figures, the change, p and the verdict,
/// then the counts.
pub fn render_text(c: &Comparison) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "benchmp compare: BASE {} vs CUR {} (minimum effect {:.1} %, KS alpha {})\n",
        c.base, c.current, c.rule.min_effect_pct, c.rule.alpha
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
    let num = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.2}"));
    for r in &c.rows {
        let _ = writeln!(
            out,
            "{:<w$}  {:>12}  {:>12}  {:<12}  {:>8}  {:>8}  {}{}",
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
            r.ks_p.map_or("-".to_string(), |p| format!("{p:.3}")),
            r.verdict.label(),
            noisy_note(r)
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

/// " (base run noisy)", " (current run noisy)" or " (both runs noisy)": which side's report
/// judged its own run noisy, so that a verdict can be read with it.
fn noisy_note(r: &Row) -> &'static str {
    let noisy = |s: &Option<Side>| s.as_ref().is_some_and(|s| s.noisy);
    match (noisy(&r.base), noisy(&r.current)) {
        (true, true) => " (both runs noisy)",
        (true, false) => " (base run noisy)",
        (false, true) => " (current run noisy)",
        (false, false) => "",
    }
}

/// One CSV row per figure.
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
    ])?;
    let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.6}"));
    for r in &c.rows {
        let s = |x: &Option<Side>, f: fn(&Side) -> String| x.as_ref().map_or(String::new(), f);
        out.write_record([
            r.entry.clone(),
            r.tool.clone(),
            r.figure.clone(),
            r.unit.clone(),
            match r.better {
                Better::Higher => "higher",
                Better::Lower => "lower",
            }
            .to_string(),
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

    #[test]
    fn direction_decides_fail_and_improved() {
        let rule = Rule::default();
        let base = [fig("rd 64M", Some(0), Better::Higher, &spread(1000.0))];
        let slower = [fig("rd 64M", Some(0), Better::Higher, &spread(850.0))];
        let faster = [fig("rd 64M", Some(0), Better::Higher, &spread(1200.0))];
        let rows = compare_figures("e", "bw_mem", &base, &slower, rule).unwrap();
        assert_eq!(rows[0].verdict, Verdict::Fail);
        assert!((rows[0].change_pct.unwrap() + 15.0).abs() < 0.01);
        let rows = compare_figures("e", "bw_mem", &base, &faster, rule).unwrap();
        assert_eq!(rows[0].verdict, Verdict::Improved);
        // For a latency, more is worse.
        let lat = [fig("L1", None, Better::Lower, &spread(1.0))];
        let more = [fig("L1", None, Better::Lower, &spread(1.2))];
        let rows = compare_figures("e", "lat_mem_rd", &lat, &more, rule).unwrap();
        assert_eq!(rows[0].verdict, Verdict::Fail);
        let rows = compare_figures("e", "bw_mem", &base, &base, rule).unwrap();
        assert_eq!(rows[0].verdict, Verdict::Pass);
    }

    #[test]
    fn unmatched_figures_are_missing_and_single_ones_match_across_cpus() {
        let rule = Rule::default();
        let base = [
            fig("rd 64M", Some(0), Better::Higher, &spread(1000.0)),
            fig("wr 64M", Some(0), Better::Higher, &spread(500.0)),
        ];
        let cur = [fig("rd 64M", Some(4), Better::Higher, &spread(2000.0))];
        let rows = compare_figures("e", "bw_mem", &base, &cur, rule).unwrap();
        assert_eq!(rows.len(), 2);
        let rd = rows.iter().find(|r| r.figure.starts_with("rd")).unwrap();
        assert_eq!(rd.figure, "rd 64M (cpu0 vs cpu4)");
        assert_eq!(rd.verdict, Verdict::Improved);
        let wr = rows.iter().find(|r| r.figure.starts_with("wr")).unwrap();
        assert_eq!(wr.verdict, Verdict::Missing);
        assert!(wr.current.is_none());
    }

    #[test]
    fn single_samples_are_judged_by_the_effect() {
        let rule = Rule::default();
        let base = [fig("coremark", Some(0), Better::Higher, &[100.0])];
        let cur = [fig("coremark", Some(0), Better::Higher, &[50.0])];
        let rows = compare_figures("e", "coremark", &base, &cur, rule).unwrap();
        assert_eq!(rows[0].verdict, Verdict::Fail);
        let cur = [fig("coremark", Some(0), Better::Higher, &[97.0])];
        let rows = compare_figures("e", "coremark", &base, &cur, rule).unwrap();
        assert_eq!(rows[0].verdict, Verdict::Pass);
    }
}
