//! Matching the figures of both sides and judging each pair: a verdict that knows the
//! figure's direction, from one run a side or from several.

use super::{CompareError, Comparison, Counts, Judging, Row, Run, Side};
use crate::stats::mann_whitney::{self, MannWhitney};
use benchmp::schema::Better;
use benchmp::schema::Figure;
use benchmp::stats::descriptive::{iqr_outliers, sort, trimmed_mean};
use benchmp::stats::verdict::{self, Verdict};

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
    let counts = Counts::of(&rows);
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
        paired: false,
        ab: None,
        incomplete: None,
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
        let t = trimmed_mean(&sorted(m.fig));
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
        paired: None,
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
        let cmp = verdict::compare(&sb, &sc, how.rule.min_effect_pct, false);
        row.base = side(b, cmp.outliers.baseline);
        row.current = side(c, cmp.outliers.current);
        row.change_pct = Some(cmp.change_pct);
        row.ks_d = Some(cmp.ks.d);
        row.ks_p = Some(cmp.ks.p);
        (row.verdict, row.why) = judge_one_run(cmp.change_pct, any.better, how);
    } else {
        // Several runs: one value per run, the medians' change, Mann-Whitney between sides.
        let o = iqr_outliers(&pooled(b), &pooled(c));
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
    sort(&mut s);
    s
}

/// Every run's samples (or value) together, sorted.
fn pooled(runs: &[Measured]) -> Vec<f64> {
    let mut all: Vec<f64> = runs.iter().flat_map(|m| sorted(m.fig)).collect();
    sort(&mut all);
    all
}

/// A side of a row from the runs that have the figure (`None`: none has).
fn side(runs: &[Measured], outliers: usize) -> Option<Side> {
    let first = runs.first()?;
    let tms: Vec<f64> = runs.iter().map(|m| trimmed_mean(&sorted(m.fig))).collect();
    let mut samples: Vec<f64> = runs.iter().flat_map(|m| m.fig.samples.clone()).collect();
    sort(&mut samples);
    let median = |v: Vec<f64>| benchmp::stats::median_of(&v);
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
