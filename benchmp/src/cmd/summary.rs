//! `benchmp summary DIR`: the table of a suite's results folder, every entry of its
//! `status.tsv` with its headline figure (text, `--json`, `--csv`), and after a comparison
//! the worst verdict of each entry. [`headline`] is the one rule for which figure stands
//! for an entry: the suite, the LAVA report and the tests all read it from here.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use benchmp::figure::Figure;
use serde::Serialize;

/// A figure shown next to the headline (`L1 1.42 ns`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Also {
    /// Its name, as the report gives it (after the part all figures share).
    pub name: String,
    /// Its value.
    pub value: f64,
}

/// The figure that stands for a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headline {
    /// Which figure (its name with its CPU or cluster); empty for a report's only figure.
    pub name: String,
    /// Its value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// Figures shown beside it.
    pub also: Vec<Also>,
    /// How many figures the report has.
    pub of: usize,
}

/// Reports with more figures than this are summed up by one of them, named, and their range.
const LISTED: usize = 6;

/// `(stride, label)` of a latency plateau figure (`random stride 64 DRAM`).
fn plateau(f: &Figure) -> Option<(u64, &str)> {
    let (_, rest) = f.name.split_once(" stride ")?;
    let (stride, label) = rest.split_once(' ')?;
    Some((stride.parse().ok()?, label))
}

/// The headline of a report's figures:
/// - a latency sweep (lat_mem_rd's plateaus): the DRAM plateau at the largest stride (its
///   last plateau when none is DRAM), with that stride's L1 beside it;
/// - one figure: it;
/// - up to six: the last (a parallel run's system or largest one), the others beside it;
/// - more: the median one by value, named, with the smallest and largest beside it.
pub fn headline(figures: &[Figure]) -> Option<Headline> {
    let of = figures.len();
    let named = |f: &Figure, also: Vec<Also>| Headline {
        name: f.describe(),
        value: f.value,
        unit: f.unit.clone(),
        also,
        of,
    };
    if !figures.is_empty() && figures.iter().all(|f| plateau(f).is_some()) {
        let stride = figures.iter().filter_map(plateau).map(|(s, _)| s).max()?;
        let at: Vec<&Figure> = figures
            .iter()
            .filter(|f| plateau(f).is_some_and(|(s, _)| s == stride))
            .collect();
        // The first cluster's curve when there are several.
        let cluster = at.iter().map(|f| f.cluster).min().flatten();
        let at: Vec<&Figure> = at.into_iter().filter(|f| f.cluster == cluster).collect();
        let main = at
            .iter()
            .find(|f| plateau(f).is_some_and(|(_, l)| l == "DRAM"))
            .or(at.last())?;
        let also = at
            .iter()
            .find(|f| plateau(f).is_some_and(|(_, l)| l == "L1") && !std::ptr::eq(**f, *main))
            .map(|l1| Also {
                name: "L1".into(),
                value: l1.value,
            });
        return Some(named(main, also.into_iter().collect()));
    }
    match figures {
        [] => None,
        [one] => Some(Headline {
            name: String::new(),
            ..named(one, Vec::new())
        }),
        few if few.len() <= LISTED => {
            let names: Vec<String> = few.iter().map(Figure::describe).collect();
            let prefix = common_prefix(&names);
            let also = few[..few.len() - 1]
                .iter()
                .zip(&names)
                .map(|(f, n)| Also {
                    name: n[prefix.len()..].to_string(),
                    value: f.value,
                })
                .collect();
            Some(named(few.last()?, also))
        }
        many => {
            let mut by_value: Vec<&Figure> = many.iter().collect();
            by_value.sort_by(|a, b| a.value.total_cmp(&b.value));
            let (lo, hi) = (by_value[0], by_value[by_value.len() - 1]);
            let also = vec![
                Also {
                    name: format!("lowest {}", lo.describe()),
                    value: lo.value,
                },
                Also {
                    name: format!("highest {}", hi.describe()),
                    value: hi.value,
                },
            ];
            Some(named(by_value[by_value.len() / 2], also))
        }
    }
}

/// The words every name starts with, with the space after them (none when it is a whole name).
fn common_prefix(names: &[String]) -> String {
    let words: Vec<Vec<&str>> = names.iter().map(|n| n.split(' ').collect()).collect();
    let mut k = 0;
    while words.iter().all(|w| w.len() > k + 1 && w[k] == words[0][k]) {
        k += 1;
    }
    if k == 0 {
        String::new()
    } else {
        format!("{} ", words[0][..k].join(" "))
    }
}

/// lmbench-like numbers for the table: thousands grouped above 100, 2 decimals above 1, 4
/// below.
pub fn number(x: Option<f64>) -> String {
    let Some(x) = x else { return "-".into() };
    if x.abs() >= 100.0 {
        let whole = format!("{:.0}", x.abs());
        let mut grouped = String::new();
        for (i, c) in whole.chars().enumerate() {
            if i > 0 && (whole.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        format!("{}{grouped}", if x < 0.0 { "-" } else { "" })
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

/// One entry of the results folder.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The entry's label.
    pub entry: String,
    /// Its tool.
    pub tool: String,
    /// Its exit status.
    pub exit: i32,
    /// Its wall time as status.tsv gives it, seconds (`-` where it is not known).
    pub seconds: String,
    /// Its headline figure.
    pub headline: Option<Headline>,
    /// True when its run was noisy.
    pub noisy: bool,
    /// Its worst verdict after a comparison (`FAIL (2/5)`), if the folder has one.
    pub verdict: Option<String>,
    /// What else to know: the figures beside the headline, a failure's last line.
    pub note: String,
}

/// The summary of a results folder.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The folder.
    pub folder: PathBuf,
    /// One row per entry run, in order.
    pub entries: Vec<Row>,
    /// True when the folder holds a comparison (the verdict column is shown).
    pub compared: bool,
    /// Entries that failed.
    pub failed: usize,
}

/// Per entry, the worst verdict of `compare.json` and its count; and what an entry without
/// one shows. `None` when the folder holds no comparison.
fn verdicts(dir: &Path) -> Option<(std::collections::HashMap<String, String>, String)> {
    let text = std::fs::read_to_string(dir.join("compare.json")).ok()?;
    let data: serde_json::Value = serde_json::from_str(&text).ok()?;
    let order = ["FAIL", "NOISY", "MISSING", "IMPROVED", "PASS", "REF"];
    let rank = |v: &str| order.iter().position(|o| *o == v).unwrap_or(order.len());
    let mut per: Vec<(String, Vec<String>)> = Vec::new();
    for r in data["rows"].as_array().into_iter().flatten() {
        let entry = r["entry"].as_str().unwrap_or_default().to_string();
        let v = r["verdict"].as_str().unwrap_or("?").to_string();
        match per.iter_mut().find(|(e, _)| *e == entry) {
            Some((_, vs)) => vs.push(v),
            None => per.push((entry, vec![v])),
        }
    }
    let map = per
        .into_iter()
        .map(|(entry, vs)| {
            let worst = vs
                .iter()
                .min_by_key(|v| rank(v))
                .cloned()
                .unwrap_or_default();
            let n = vs.iter().filter(|v| **v == worst).count();
            let shown = if vs.len() > 1 {
                format!("{worst} ({n}/{})", vs.len())
            } else {
                worst
            };
            (entry, shown)
        })
        .collect();
    let unjudged = if data["paired"].as_bool() == Some(true) {
        "not paired"
    } else {
        "MISSING"
    };
    Some((map, unjudged.to_string()))
}

/// The figures and noise flag of one entry's report, or why it has none.
fn read_report(path: &Path) -> Result<(Vec<Figure>, bool), String> {
    let text = std::fs::read_to_string(path).map_err(|_| String::new())?;
    if text.is_empty() {
        return Err(String::new());
    }
    let data: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("unreadable JSON: {e}"))?;
    let figures: Vec<Figure> = serde_json::from_value(data["figures"].clone())
        .map_err(|e| format!("unreadable figures: {e}"))?;
    Ok((
        figures,
        data["quality"]["verdict"]["noisy"].as_bool() == Some(true),
    ))
}

/// Reads a results folder.
pub fn summarize(dir: &Path) -> Result<Summary> {
    let status = dir.join("status.tsv");
    let text = std::fs::read_to_string(&status)
        .map_err(|_| benchmp::Usage(format!("{} not found", status.display())))?;
    let judged = verdicts(dir);
    let mut entries = Vec::new();
    for line in text.lines().skip(1).filter(|l| !l.is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [label, tool, code, seconds, ..] = cols[..] else {
            return Err(benchmp::Usage(format!(
                "{}: a row is not label, tool, exit, seconds: {line}",
                status.display()
            ))
            .into());
        };
        let exit: i32 = code
            .parse()
            .with_context(|| format!("{}: exit status '{code}'", status.display()))?;
        let (headline, noisy, mut note) = match read_report(&dir.join(format!("{label}.json"))) {
            Ok((figures, noisy)) => {
                let h = headline(&figures);
                let note = match &h {
                    None => "no figures".to_string(),
                    Some(h) => {
                        let mut parts: Vec<String> = Vec::new();
                        if !h.name.is_empty() {
                            parts.push(h.name.clone());
                        }
                        parts.extend(
                            h.also
                                .iter()
                                .map(|a| format!("{} {}", a.name, number(Some(a.value)))),
                        );
                        parts.join(", ")
                    }
                };
                (h, noisy, note)
            }
            Err(why) => (None, false, why),
        };
        if noisy {
            note = if note.is_empty() {
                "noisy".into()
            } else {
                format!("{note}, noisy")
            };
        }
        if exit != 0 {
            let err = std::fs::read_to_string(dir.join(format!("{label}.err"))).unwrap_or_default();
            let last: String = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or_default()
                .chars()
                .take(80)
                .collect();
            note = format!("FAILED (exit {exit}) {last}")
                .trim_end()
                .to_string();
        }
        let verdict = judged
            .as_ref()
            .map(|(map, unjudged)| map.get(label).cloned().unwrap_or_else(|| unjudged.clone()));
        entries.push(Row {
            entry: label.to_string(),
            tool: tool.to_string(),
            exit,
            seconds: seconds.to_string(),
            headline,
            noisy,
            verdict,
            note,
        });
    }
    let failed = entries.iter().filter(|r| r.exit != 0).count();
    Ok(Summary {
        folder: dir.to_path_buf(),
        entries,
        compared: judged.is_some(),
        failed,
    })
}

/// The summary as a table: entry, tool, figure, unit, seconds (verdict), notes.
pub fn render(s: &Summary) -> String {
    let mut head = vec!["entry", "tool", "figure", "unit", "s"];
    if s.compared {
        head.push("verdict");
    }
    let rows: Vec<Vec<String>> = s
        .entries
        .iter()
        .map(|r| {
            let mut v = vec![
                r.entry.clone(),
                r.tool.clone(),
                number(r.headline.as_ref().map(|h| h.value)),
                r.headline
                    .as_ref()
                    .map(|h| h.unit.clone())
                    .unwrap_or_default(),
                r.seconds.clone(),
            ];
            if s.compared {
                v.push(r.verdict.clone().unwrap_or_default());
            }
            v
        })
        .collect();
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::from("\n");
    let cells: Vec<String> = head
        .iter()
        .zip(&widths)
        .map(|(h, w)| format!("{h:<w$}"))
        .collect();
    out += &format!("{}  notes\n", cells.join("  "));
    let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out += &format!("{}  -----\n", dashes.join("  "));
    for (r, row) in s.entries.iter().zip(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i == 2 || i == 4 {
                    format!("{c:>w$}")
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        out += &format!("{}  {}\n", cells.join("  "), r.note);
    }
    let mut tools: Vec<&str> = s.entries.iter().map(|r| r.tool.as_str()).collect();
    tools.sort_unstable();
    tools.dedup();
    out += &format!(
        "\n{} entries over {} tools ({}); {} failed. Results: {}\n",
        s.entries.len(),
        tools.len(),
        tools.join(", "),
        s.failed,
        s.folder.display()
    );
    out
}

/// One CSV row per entry.
pub fn write_csv(s: &Summary, w: impl std::io::Write) -> Result<()> {
    let mut out = csv::Writer::from_writer(w);
    out.write_record([
        "entry", "tool", "exit", "seconds", "figure", "value", "unit", "noisy", "verdict", "note",
    ])?;
    for r in &s.entries {
        let h = r.headline.as_ref();
        out.write_record([
            r.entry.as_str(),
            r.tool.as_str(),
            &r.exit.to_string(),
            r.seconds.as_str(),
            h.map_or("", |h| h.name.as_str()),
            &h.map(|h| h.value.to_string()).unwrap_or_default(),
            h.map_or("", |h| h.unit.as_str()),
            if r.noisy { "true" } else { "false" },
            r.verdict.as_deref().unwrap_or(""),
            r.note.as_str(),
        ])?;
    }
    out.flush()?;
    Ok(())
}

/// `benchmp summary`'s options.
#[derive(Debug, clap::Args)]
pub struct SummaryArgs {
    /// A results folder of `benchmp suite` (scripts/suite.sh, scripts/android.sh).
    pub dir: PathBuf,
    /// Print JSON instead of the table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print one CSV row per entry instead of the table.
    #[arg(long)]
    pub csv: bool,
}

/// Prints the summary as asked.
pub fn run(args: &SummaryArgs) -> Result<i32> {
    let s = summarize(&args.dir)?;
    let text = if args.json {
        serde_json::to_string_pretty(&s)? + "\n"
    } else if args.csv {
        let mut buf = Vec::new();
        write_csv(&s, &mut buf)?;
        String::from_utf8(buf)?
    } else {
        render(&s)
    };
    benchmp::cli::write_stdout(&text)?;
    Ok(benchmp::EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchmp::ab::Better;

    fn fig(name: &str, cpu: Option<usize>, cluster: Option<usize>, value: f64) -> Figure {
        Figure {
            name: name.into(),
            cpu,
            cluster,
            unit: "ns".into(),
            better: Better::Lower,
            value,
            samples: vec![value],
        }
    }

    #[test]
    fn a_latency_sweep_is_its_dram_plateau_with_l1_beside_it() {
        let f = vec![
            fig("random stride 16 L1", Some(0), Some(0), 1.1),
            fig("random stride 16 DRAM", Some(0), Some(0), 90.0),
            fig("random stride 64 L1", Some(0), Some(0), 1.2),
            fig("random stride 64 L2", Some(0), Some(0), 4.0),
            fig("random stride 64 DRAM", Some(0), Some(0), 110.0),
            fig("random stride 64 L3", Some(0), Some(0), 12.0),
        ];
        let h = headline(&f).unwrap();
        assert_eq!(
            (h.name.as_str(), h.value),
            ("random stride 64 DRAM cpu0", 110.0)
        );
        assert_eq!(
            h.also,
            [Also {
                name: "L1".into(),
                value: 1.2
            }]
        );
        // No DRAM plateau found: the last one at that stride.
        let h = headline(&f[2..4]).unwrap();
        assert_eq!(h.value, 4.0);
    }

    #[test]
    fn one_few_or_many_figures() {
        let one = [fig("rd 64M", Some(0), Some(0), 5.0)];
        let h = headline(&one).unwrap();
        assert_eq!((h.name.as_str(), h.value, h.of), ("", 5.0, 1));
        let few = [
            fig("rd 64M", None, Some(0), 5.0),
            fig("rd 64M", None, Some(1), 7.0),
            fig("rd 64M", None, None, 12.0),
        ];
        let h = headline(&few).unwrap();
        assert_eq!((h.name.as_str(), h.value), ("rd 64M", 12.0));
        // The shared words stop before the whole of a name ("rd 64M").
        assert_eq!(
            h.also,
            [
                Also {
                    name: "64M cluster0".into(),
                    value: 5.0
                },
                Also {
                    name: "64M cluster1".into(),
                    value: 7.0
                },
            ]
        );
        let many: Vec<Figure> = (0..9)
            .map(|i| {
                fig(
                    &format!("memcpy_{i}k 4k cpu"),
                    Some(1),
                    Some(0),
                    f64::from(i * 10),
                )
            })
            .collect();
        let h = headline(&many).unwrap();
        assert_eq!(
            (h.name.as_str(), h.value, h.of),
            ("memcpy_4k 4k cpu cpu1", 40.0, 9)
        );
        assert_eq!(h.also[0].name, "lowest memcpy_0k 4k cpu cpu1");
        assert_eq!(h.also[1].value, 80.0);
        assert_eq!(headline(&[]), None);
    }

    #[test]
    fn numbers() {
        assert_eq!(number(None), "-");
        assert_eq!(number(Some(12345.6)), "12,346");
        assert_eq!(number(Some(100.0)), "100");
        assert_eq!(number(Some(1234567.0)), "1,234,567");
        assert_eq!(number(Some(12.345)), "12.35");
        assert_eq!(number(Some(0.5)), "0.5000");
    }
}
