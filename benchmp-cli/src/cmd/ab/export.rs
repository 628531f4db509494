//! The A/B result: as text, ab's own table (medians, intervals, process pairs); as JSON and
//! CSV, a comparison in `benchmp compare`'s schema ([`benchmp_cli::compare::Comparison`]) whose rows
//! carry their pairs, so what reads a comparison reads this one too.

use std::fmt::Write as _;

use benchmp::output::{Export, Outputs};
use benchmp::stats::verdict::JudgeRule;
use benchmp_cli::compare::paired::AbRun;
use benchmp_cli::compare::{Comparison, Counts, Row, Side};

use super::*;

/// The A/B result with its comparison, as [`benchmp::output::emit`] writes it.
pub(super) struct AbResult<'a> {
    report: &'a AbReport,
    comparison: Comparison,
}

impl Export for AbResult<'_> {
    fn text(&self) -> String {
        render_text(self.report)
    }

    fn json(&self) -> Result<String, benchmp::output::OutputError> {
        self.comparison.json()
    }

    fn csv(&self) -> Result<String, benchmp::output::OutputError> {
        self.comparison.csv()
    }

    /// An interrupted comparison's line, over a format's table (the Markdown): its rows judge
    /// only the pairs taken.
    fn title(&self) -> Option<String> {
        self.report.incomplete.as_ref().map(incomplete_line)
    }
}

/// The line that says a comparison was interrupted, in the text and over a format's table.
fn incomplete_line(i: &benchmp::report::Incomplete) -> String {
    format!(
        "INCOMPLETE: interrupted by {}; the verdicts judge the pairs taken until then",
        i.signal
    )
}

/// Writes the table (or JSON/CSV on stdout) and any files asked for. An interrupted
/// comparison's files never replace a complete one's: they go beside it as `FILE.partial`
/// (as a tool's do), unless what is there is empty, incomplete, or the same comparison's; each
/// file is named on stderr.
pub(super) fn write_outputs(r: &AbReport, args: &AbArgs) -> Result<()> {
    let result = AbResult {
        report: r,
        comparison: comparison(r),
    };
    let files = match &r.incomplete {
        None => args.files.clone(),
        Some(_) => {
            let same = |v: &serde_json::Value| {
                v["base"] == r.base.command.as_str() && v["current"] == r.current.command.as_str()
            };
            args.files.placed(|format, p| {
                if format.self_describing() {
                    benchmp::export::partial_json_path(p, same)
                } else {
                    benchmp::export::partial_csv_path(p)
                }
            })
        }
    };
    benchmp::output::emit(&result, Outputs::to(&files))?;
    if r.incomplete.is_some() {
        for (_, p) in files.to_files() {
            benchmp::errln!(
                "benchmp: interrupted: the pairs taken so far are in {} (marked incomplete)",
                foundation::error::printable(p)
            );
        }
    }
    Ok(())
}

/// The A/B result as a comparison: one row per figure, entry and tool the current side's
/// tool, each side its repetitions (the value compared their median), the change the pairs'
/// estimate, and the pairs themselves ([`PairedFigure`]).
pub fn comparison(r: &AbReport) -> Comparison {
    let tool = &r.current.tool;
    let rows: Vec<Row> = r
        .figures
        .iter()
        .map(|f| Row {
            entry: tool.clone(),
            tool: tool.clone(),
            figure: f.measurement.clone(),
            unit: f.unit.clone(),
            better: f.better,
            base: Some(side(&f.paired.cpus, &f.paired.base_values, f.base_median)),
            current: Some(side(
                &f.paired.cpus,
                &f.paired.current_values,
                f.current_median,
            )),
            change_pct: Some(f.paired.judgement.estimate_pct),
            ks_d: None,
            ks_p: None,
            mann_whitney: None,
            verdict: f.verdict,
            why: f.paired.judgement.why.clone(),
            paired: Some(f.paired.clone()),
        })
        .collect();
    Comparison {
        base: r.base.command.clone(),
        current: r.current.command.clone(),
        base_runs: Vec::new(),
        current_runs: Vec::new(),
        rule: JudgeRule {
            min_effect_pct: r.rule.min_effect_pct,
            alpha: r.rule.alpha,
        },
        run_spread_pct: None,
        counts: Counts::of(&rows),
        rows,
        paired: true,
        ab: Some(AbRun {
            base: r.base.clone(),
            current: r.current.clone(),
            rule: r.rule.clone(),
        }),
        incomplete: r.incomplete.clone(),
    }
}

/// One side of a row: its repetitions sorted, the value compared their median.
fn side(cpus: &[Option<usize>], values: &[f64], median: f64) -> Side {
    let mut samples = values.to_vec();
    samples.sort_by(f64::total_cmp);
    Side {
        cpu: match cpus {
            [one] => *one,
            _ => None,
        },
        value: median,
        trimmed_mean: median,
        n: samples.len(),
        outliers: 0,
        samples,
        noisy: false,
        noisy_runs: 0,
        runs: Vec::new(),
    }
}

/// The table: one row per figure, then the counts.
pub fn render_text(r: &AbReport) -> String {
    let mut out = header(r);
    let w = r
        .figures
        .iter()
        .map(|f| f.measurement.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        out,
        "{:<w$}  {:>12}  {:>12}  {:<14}  {:>5}  {:>6}  {:>6}  {:>7}  {:<18}  verdict",
        "figure", "A median", "B median", "unit", "procs", "pairs", "s", "change", "interval"
    );
    for f in &r.figures {
        write_row(&mut out, f, w);
    }
    write_counts(&mut out, r);
    out
}

/// The table's first line: the commands and the rule the verdicts were reached by.
fn header(r: &AbReport) -> String {
    let conf = confidence_shown(r);
    let units = if r.rule.unit() == Unit::ProcessPairs {
        format!("up to {} process pairs", r.rule.processes)
    } else {
        "one process pair".to_string()
    };
    // Alpha is spent over the looks: each look's interval has its own confidence.
    let looks = match r.rule.looked_at.len() {
        0 => String::new(),
        1 => " in 1 look".to_string(),
        n => format!(" spent over {n} looks"),
    };
    let buffers = buffers_text(&r.rule);
    let layout = layout_text(&r.rule);
    format!(
        "benchmp ab: A '{}' vs B '{}' (minimum effect {:.1} %, alpha {} over {} figure(s){looks}: {conf} % intervals at the last, {units}{buffers}{layout}, {} order)\n",
        foundation::error::printable(&r.base.command),
        foundation::error::printable(&r.current.command),
        r.rule.min_effect_pct,
        r.rule.alpha,
        r.rule.figures,
        match r.rule.order {
            Order::Random => "random",
            Order::Abba => "ABBA",
        }
    )
}

/// The confidence of the intervals at the last look, percent, without trailing zeros.
fn confidence_shown(r: &AbReport) -> String {
    // With one process pair each figure spends its own alpha over its looks: the last looks'
    // widest interval is the one to name.
    let confidence = match r.rule.unit() {
        Unit::RepetitionPairs if !r.figures.is_empty() => r
            .figures
            .iter()
            .map(|f| f.paired.judgement.confidence)
            .fold(f64::INFINITY, f64::min),
        _ => r.rule.confidence,
    };
    let conf = format!("{:.4}", confidence * 100.0);
    conf.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// How both sides' buffers were backed and kept, as the header says it (empty when as each
/// command had them).
fn buffers_text(rule: &AbRule) -> String {
    match (&rule.pages, rule.renew) {
        (Some(p), true) => format!(", buffers (where the tool has them) {p} and renewed"),
        (Some(p), false) => format!(", buffers (where the tool has them) {p}"),
        (None, true) => ", buffers (where the tool has them) renewed".to_string(),
        (None, false) => String::new(),
    }
}

/// How both sides' processes were laid out (layout.rs), as the header says it (empty when the
/// rule does not record it).
fn layout_text(rule: &AbRule) -> String {
    match &rule.layout {
        Some(l) => format!(
            ", equal paths and environments, stacks moved by the same 0-{} bytes per process pair{}",
            l.max_offset_bytes.saturating_sub(1),
            if l.aslr { ", ASLR on" } else { "" }
        ),
        None => String::new(),
    }
}

/// Appends one figure's row to the table, its name in a column `w` wide.
fn write_row(out: &mut String, f: &AbFigure, w: usize) {
    let j = &f.paired.judgement;
    let arrow = match f.better {
        Better::Higher => "↑",
        Better::Lower => "↓",
    };
    // A process pair a stop signal cut short holds pairs too.
    let finished: usize = f.paired.processes.iter().map(|p| p.pairs).sum();
    let procs = f.paired.processes.len() + usize::from(f.paired.differences.len() > finished);
    let change = if j.estimate_pct.is_finite() {
        format!("{:>+6.2}%", j.estimate_pct)
    } else {
        "-".into()
    };
    let interval = if j.low_pct.is_finite() && j.high_pct.is_finite() {
        format!("[{:+.2}, {:+.2}]%", j.low_pct, j.high_pct)
    } else {
        "-".into()
    };
    let _ = writeln!(
        out,
        "{:<w$}  {:>12}  {:>12}  {:<14}  {:>5}  {:>6}  {:>6.1}  {:>7}  {:<18}  {}{}",
        f.measurement,
        benchmp::number::table_number(f.base_median, 2),
        benchmp::number::table_number(f.current_median, 2),
        format!("{} {arrow}", f.unit),
        procs,
        f.paired.differences.len(),
        f.paired.seconds,
        change,
        interval,
        f.verdict.label(),
        j.why
            .as_deref()
            .map_or(String::new(), |w| format!(" ({w})"))
    );
}

/// Appends the table's last lines: the figures per verdict, and whether a stop signal cut the
/// comparison short.
fn write_counts(out: &mut String, r: &AbReport) {
    let _ = writeln!(
        out,
        "{} figures: {} PASS, {} FAIL, {} IMPROVED, {} NOISY (change: B against A, positive = B worse)",
        r.figures.len(),
        r.count(Verdict::Pass),
        r.count(Verdict::Fail),
        r.count(Verdict::Improved),
        r.count(Verdict::Noisy)
    );
    if let Some(i) = &r.incomplete {
        let _ = writeln!(out, "{}", incomplete_line(i));
    }
}
