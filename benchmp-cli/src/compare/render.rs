//! The comparison as text (the table) and as CSV (one row per figure).

use super::{Comparison, Row, Side};
use benchmp::schema::Better;

impl benchmp::output::Export for Comparison {
    fn text(&self) -> String {
        render_text(self)
    }

    fn json(&self) -> Result<String, benchmp::output::OutputError> {
        benchmp::output::json_text(self)
    }

    fn csv(&self) -> Result<String, benchmp::output::OutputError> {
        benchmp::output::OutputError::csv_text(|buf| write_csv(self, buf))
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
    let num = |x: Option<f64>| x.map_or("-".to_string(), |v| benchmp::number::table_number(v, 2));
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

/// One CSV row per figure (the columns after `verdict` are newer than the others; those from
/// `paired` on are a paired comparison's, empty in the others' rows).
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
        "paired",
        "pairs",
        "processes",
        "seconds",
        "low_pct",
        "high_pct",
    ])?;
    let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.6}"));
    // A paired row's: its repetition pairs, process pairs, seconds and interval.
    let p = |r: &Row, f: fn(&super::paired::PairedFigure) -> String| {
        r.paired.as_ref().map_or(String::new(), f)
    };
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
            r.paired.is_some().to_string(),
            p(r, |x| x.differences.len().to_string()),
            p(r, |x| x.processes.len().to_string()),
            p(r, |x| format!("{:.3}", x.seconds)),
            p(r, |x| format!("{:.6}", x.judgement.low_pct)),
            p(r, |x| format!("{:.6}", x.judgement.high_pct)),
        ])?;
    }
    out.flush()
}
