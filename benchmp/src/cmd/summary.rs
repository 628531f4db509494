//! `benchmp summary DIR`: the table of a suite's results folder, every entry of its
//! `status.tsv` with its headline figure (text, `--json`, `--csv`), and after a comparison
//! the worst verdict of each entry. [`headline`] is the one rule for which figure stands
//! for an entry: the suite, the LAVA report and the tests all read it from here.

use std::path::{Path, PathBuf};

use anyhow::Result;
use benchmp::figure::Figure;
use serde::{Deserialize, Serialize};

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

/// A measurement's figure per energy (`power.per_energy` of its report): the system figure
/// per net watt of the first power source, or per joule (`DMIPS/W`, `iterations/J`, `nJ/load`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerEnergy {
    /// The value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// The first source's energy over the measurement above the idle baseline, J
    /// (`net_energy_j`, else `energy_j`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
}

impl PerEnergy {
    /// The `power.per_energy` of a report's measurement, if it has one with a finite value.
    pub fn of(measurement: &serde_json::Value) -> Option<PerEnergy> {
        let p = &measurement["power"]["per_energy"];
        let value = p["value"].as_f64().filter(|v| v.is_finite())?;
        let source = &measurement["power"]["sources"][0];
        let joules = |k: &str| source[k].as_f64().filter(|j| j.is_finite());
        Some(PerEnergy {
            value,
            unit: p["unit"].as_str().unwrap_or_default().to_string(),
            energy_j: joules("net_energy_j").or_else(|| joules("energy_j")),
        })
    }
}

/// Which of a report's measurements (by name, in order) its headline figure comes from: the
/// last one whose name begins the headline's name word by word (`dhrystone` for `dhrystone
/// strict cpu0`), else the last one (a report's only figure has no name; the few-figure rule
/// takes the last, a parallel run's system figure).
pub fn headline_measurement(names: &[&str], headline: &Headline) -> Option<usize> {
    let words: Vec<&str> = headline.name.split(' ').collect();
    names
        .iter()
        .rposition(|n| {
            let m: Vec<&str> = n.split(' ').collect();
            !n.is_empty() && words.len() >= m.len() && words[..m.len()] == m[..]
        })
        .or_else(|| names.len().checked_sub(1))
}

/// lmbench-like numbers for the table: thousands grouped above 100, 2 decimals above 1, 4
/// below.
pub fn number(x: Option<f64>) -> String {
    let Some(x) = x else { return "-".into() };
    if !x.is_finite() || x.abs() >= 1e12 || (x != 0.0 && x.abs() < 1e-4) {
        return benchmp::export::table_number(x, 2);
    }
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

/// How an entry ended, as status.tsv records it: the suite's exit status 0 needs every entry
/// to have measured (`ok` or `noisy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It measured.
    Ok,
    /// It measured on a busy machine: its report calls the run noisy (and it exited 0, or 1
    /// only because of that, as with `--fail-on-noise`).
    Noisy,
    /// It could not measure.
    Failed,
    /// The suite was stopped while it ran; `benchmp suite --resume` runs it again.
    Interrupted,
}

impl Outcome {
    /// The word status.tsv gives it.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Noisy => "noisy",
            Outcome::Failed => "failed",
            Outcome::Interrupted => "interrupted",
        }
    }

    fn from_word(w: &str) -> Option<Outcome> {
        [
            Outcome::Ok,
            Outcome::Noisy,
            Outcome::Failed,
            Outcome::Interrupted,
        ]
        .into_iter()
        .find(|o| o.word() == w)
    }
}

/// The outcome of an entry that ended by itself with `exit`, given its report.
pub fn outcome(exit: i32, report: Option<&EntryReport>) -> Outcome {
    let noisy = report.is_some_and(|r| r.noisy && r.figures.is_ok());
    match exit {
        0 if noisy => Outcome::Noisy,
        0 => Outcome::Ok,
        benchmp::EXIT_FAILED if noisy => Outcome::Noisy,
        _ => Outcome::Failed,
    }
}

/// status.tsv's first line.
pub const STATUS_HEADER: &str = "label\ttool\texit\tseconds\tstatus";

/// One row of status.tsv.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusRow {
    /// The entry's label (names its files).
    pub label: String,
    /// Its tool.
    pub tool: String,
    /// Its exit status (128+n: stopped by signal n).
    pub exit: i32,
    /// Its wall time, seconds, as written (`-` where not known).
    pub seconds: String,
    /// How it ended; `None` in a row written before the column existed (or by a script that
    /// only knows the exit status), where [`outcome`] decides.
    pub outcome: Option<Outcome>,
}

impl StatusRow {
    /// The row as status.tsv holds it, with its line end.
    pub fn line(&self) -> String {
        let mut l = format!(
            "{}\t{}\t{}\t{}",
            self.label, self.tool, self.exit, self.seconds
        );
        if let Some(o) = self.outcome {
            l += "\t";
            l += o.word();
        }
        l + "\n"
    }
}

/// A result folder's file refused as input: exit status 2, one line naming it.
fn bad(path: &Path, row: Option<usize>, why: String) -> anyhow::Error {
    let at = row.map(|n| format!(" row {n}")).unwrap_or_default();
    benchmp::Usage(format!("{}{at}: {why}", ftrace::error::shown(path))).into()
}

/// True when a label can name files in the folder: a plain name.
fn plain_label(label: &str) -> bool {
    !label.is_empty() && label != "." && label != ".." && !label.contains('/')
}

/// The rows of a results folder's status.tsv (the folder and file read as every input is,
/// [`benchmp::input`]); a row that is not label, tool, exit, seconds (and status) is bad
/// input naming its row.
pub fn read_status(dir: &Path) -> Result<Vec<StatusRow>> {
    benchmp::input::check_folder(dir)?;
    let path = dir.join("status.tsv");
    let text = benchmp::input::read_text(&path, benchmp::input::MAX_INPUT_BYTES)?;
    let mut lines = text.lines();
    if !lines
        .next()
        .is_some_and(|h| h.starts_with("label\ttool\texit\tseconds"))
    {
        return Err(bad(
            &path,
            Some(1),
            "is not the header label, tool, exit, seconds".into(),
        ));
    }
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let n = Some(i + 2);
        if line.is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [label, tool, code, seconds, rest @ ..] = cols.as_slice() else {
            return Err(bad(
                &path,
                n,
                format!("{} column(s), not label, tool, exit, seconds", cols.len()),
            ));
        };
        let (label, tool, code, seconds) = (*label, *tool, *code, *seconds);
        if !plain_label(label) {
            return Err(bad(
                &path,
                n,
                format!(
                    "label '{}' is not a file name",
                    ftrace::error::printable(label)
                ),
            ));
        }
        let exit: i32 = code.parse().map_err(|_| {
            bad(
                &path,
                n,
                format!(
                    "exit status '{}' is not a number",
                    ftrace::error::printable(code)
                ),
            )
        })?;
        let outcome = match rest.first() {
            None => None,
            Some(w) => Some(Outcome::from_word(w).ok_or_else(|| {
                bad(
                    &path,
                    n,
                    format!(
                        "status '{}' is not ok, noisy, failed or interrupted",
                        ftrace::error::printable(w)
                    ),
                )
            })?),
        };
        rows.push(StatusRow {
            label: label.to_string(),
            tool: tool.to_string(),
            exit,
            seconds: seconds.to_string(),
            outcome,
        });
    }
    Ok(rows)
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
    /// How it ended.
    pub status: Outcome,
    /// Its wall time as status.tsv gives it, seconds (`-` where it is not known).
    pub seconds: String,
    /// Its headline figure.
    pub headline: Option<Headline>,
    /// The headline measurement's figure per energy, where its report has a power record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy: Option<PerEnergy>,
    /// True when its report calls the run noisy.
    pub noisy: bool,
    /// Its worst verdict after a comparison (`FAIL (2/5)`), if the folder has one.
    pub verdict: Option<String>,
    /// What else to know: the figures beside the headline, why it was noisy, a failure's
    /// last line.
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
    /// Entries that could not measure.
    pub failed: usize,
    /// Entries that measured on a busy machine.
    pub noisy: usize,
    /// Entries the suite was stopped in.
    pub interrupted: usize,
}

/// Per entry, the worst verdict of `compare.json` and its count; and what an entry without
/// one shows (MISSING, or "not paired" in a paired comparison, `benchmp ab`'s). `None` when
/// the folder holds no comparison.
fn verdicts(dir: &Path) -> Result<Option<(std::collections::HashMap<String, String>, String)>> {
    let path = dir.join("compare.json");
    let Some(text) = benchmp::input::read_text_if_there(&path, benchmp::input::MAX_INPUT_BYTES)?
    else {
        return Ok(None);
    };
    let data: benchmp::compare::Comparison = serde_json::from_str(&text)
        .map_err(|e| bad(&path, None, format!("is not a comparison's JSON: {e}")))?;
    let order = ["FAIL", "NOISY", "MISSING", "IMPROVED", "PASS", "REF"];
    let rank = |v: &str| order.iter().position(|o| *o == v).unwrap_or(order.len());
    let mut per: Vec<(String, Vec<String>)> = Vec::new();
    for r in &data.rows {
        let v = r.verdict.label().to_string();
        match per.iter_mut().find(|(e, _)| *e == r.entry) {
            Some((_, vs)) => vs.push(v),
            None => per.push((r.entry.clone(), vec![v])),
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
    let unjudged = if data.paired { "not paired" } else { "MISSING" };
    Ok(Some((map, unjudged.to_string())))
}

/// What an entry's report says, as far as the summary reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryReport {
    /// Its figures, or why it has none (naming the file).
    pub figures: Result<Vec<Figure>, String>,
    /// True when it calls the run noisy (`quality.verdict.noisy`).
    pub noisy: bool,
    /// Why (`quality.verdict.reasons`).
    pub reasons: Vec<String>,
    /// Its measurements' names with their figure per energy (where they have a power record).
    pub measured: Vec<(String, Option<PerEnergy>)>,
}

/// An entry's report: `None` when there is none; an error when the file is there but cannot
/// be read ([`benchmp::input`]: a FIFO, a device, no permission, not UTF-8), since a table
/// that quietly lacked the figure would read as a failed entry.
pub fn read_report(path: &Path) -> Result<Option<EntryReport>, benchmp::input::InputError> {
    let Some(text) = benchmp::input::read_text_if_there(path, benchmp::input::MAX_INPUT_BYTES)?
    else {
        return Ok(None);
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let data: serde_json::Value = match serde_json::from_str(&text) {
        Ok(d) => d,
        Err(_) if text.trim().is_empty() => {
            return Ok(Some(EntryReport {
                figures: Err(format!("{name} is empty")),
                noisy: false,
                reasons: Vec::new(),
                measured: Vec::new(),
            }));
        }
        Err(e) => {
            return Ok(Some(EntryReport {
                figures: Err(format!("{name} is not JSON: {e}")),
                noisy: false,
                reasons: Vec::new(),
                measured: Vec::new(),
            }));
        }
    };
    let figures = match &data["figures"] {
        serde_json::Value::Null => Err(format!(
            "{name} has no figures (a report from an older socbench?)"
        )),
        f => serde_json::from_value(f.clone())
            .map_err(|e| format!("{name}: unreadable figures: {e}")),
    };
    let verdict = &data["quality"]["verdict"];
    Ok(Some(EntryReport {
        figures,
        noisy: verdict["noisy"].as_bool() == Some(true),
        reasons: verdict["reasons"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(str::to_string))
            .collect(),
        measured: data["measurements"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                (
                    m["name"].as_str().unwrap_or_default().to_string(),
                    PerEnergy::of(m),
                )
            })
            .collect(),
    }))
}

/// The figure per energy of a report's headline measurement ([`headline_measurement`]).
pub fn headline_energy(report: &EntryReport, headline: &Headline) -> Option<PerEnergy> {
    let names: Vec<&str> = report.measured.iter().map(|(n, _)| n.as_str()).collect();
    let i = headline_measurement(&names, headline)?;
    report.measured[i].1.clone()
}

/// The last line of an entry's errors that says something (at most 80 characters, control
/// characters escaped): read from the file's last 64 KiB, whatever its size.
fn last_error_line(path: &Path) -> Result<String, benchmp::input::InputError> {
    use std::io::{Read, Seek, SeekFrom};
    const TAIL: u64 = 64 << 10;
    let mut f = match benchmp::input::open_file(path) {
        Err(benchmp::input::InputError::Missing(_)) => return Ok(String::new()),
        other => other?,
    };
    let io = |source| benchmp::input::InputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let len = f.metadata().map_err(io)?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(TAIL)))
        .map_err(io)?;
    let mut bytes = Vec::new();
    f.take(TAIL).read_to_end(&mut bytes).map_err(io)?;
    let text = String::from_utf8_lossy(&bytes);
    let last: String = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .chars()
        .take(80)
        .collect();
    Ok(ftrace::error::printable(last.trim_end()).into_owned())
}

/// The note of a report's figures: the headline's name and what is beside it, or why there
/// is none.
fn figures_note(report: Option<&EntryReport>) -> (Option<Headline>, String) {
    let Some(r) = report else {
        return (None, String::new());
    };
    match &r.figures {
        Err(why) => (None, why.clone()),
        Ok(figures) => {
            let h = headline(figures);
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
            (h, note)
        }
    }
}

/// `first; second`, leaving out an empty part.
fn joined(first: String, second: &str) -> String {
    match (first.is_empty(), second.is_empty()) {
        (_, true) => first,
        (true, false) => second.to_string(),
        (false, false) => format!("{first}; {second}"),
    }
}

/// Reads a results folder. Every file is read as an input ([`benchmp::input`]): one that
/// cannot be read, and a status.tsv row that is not one, are bad input (exit status 2)
/// naming the file; a report that is read but of no use is named in its entry's note.
pub fn summarize(dir: &Path) -> Result<Summary> {
    let status = read_status(dir)?;
    let judged = verdicts(dir)?;
    let mut entries = Vec::new();
    for s in status {
        let report = read_report(&dir.join(format!("{}.json", s.label)))?;
        let status = s
            .outcome
            .unwrap_or_else(|| outcome(s.exit, report.as_ref()));
        let (headline, figures) = figures_note(report.as_ref());
        let energy = match (&report, &headline) {
            (Some(r), Some(h)) => headline_energy(r, h),
            _ => None,
        };
        let noisy = report.as_ref().is_some_and(|r| r.noisy);
        let note = match status {
            Outcome::Ok => figures,
            Outcome::Noisy => {
                let reasons = report.as_ref().map(|r| r.reasons.as_slice()).unwrap_or(&[]);
                let why = match reasons {
                    [] => "NOISY".to_string(),
                    [one] => format!("NOISY: {}", ftrace::error::printable(one)),
                    [first, more @ ..] => format!(
                        "NOISY: {} (and {} more)",
                        ftrace::error::printable(first),
                        more.len()
                    ),
                };
                joined(why, &figures)
            }
            Outcome::Failed => {
                let last = last_error_line(&dir.join(format!("{}.err", s.label)))?;
                format!("FAILED (exit {}) {last}", s.exit)
                    .trim_end()
                    .to_string()
            }
            Outcome::Interrupted => joined(format!("INTERRUPTED (exit {})", s.exit), &figures),
        };
        let verdict = judged.as_ref().map(|(map, unjudged)| {
            map.get(&s.label)
                .cloned()
                .unwrap_or_else(|| unjudged.clone())
        });
        entries.push(Row {
            entry: s.label,
            tool: s.tool,
            exit: s.exit,
            status,
            seconds: s.seconds,
            headline,
            energy,
            noisy,
            verdict,
            note,
        });
    }
    let count = |o: Outcome| entries.iter().filter(|r| r.status == o).count();
    Ok(Summary {
        folder: dir.to_path_buf(),
        failed: count(Outcome::Failed),
        noisy: count(Outcome::Noisy),
        interrupted: count(Outcome::Interrupted),
        entries,
        compared: judged.is_some(),
    })
}

/// The summary as a table: entry, tool, figure, unit, seconds (verdict), notes.
pub fn render(s: &Summary) -> String {
    let mut head = vec!["entry", "tool", "figure", "unit", "s"];
    // Only where a report has a power record: without one the table is as it always was.
    let energy = s.entries.iter().any(|r| r.energy.is_some());
    if energy {
        head.push("energy");
    }
    if s.compared {
        head.push("verdict");
    }
    let rows: Vec<Vec<String>> = s
        .entries
        .iter()
        .map(|r| {
            let mut v = vec![
                ftrace::error::printable(&r.entry).into_owned(),
                ftrace::error::printable(&r.tool).into_owned(),
                number(r.headline.as_ref().map(|h| h.value)),
                r.headline
                    .as_ref()
                    .map(|h| ftrace::error::printable(&h.unit).into_owned())
                    .unwrap_or_default(),
                ftrace::error::printable(&r.seconds).into_owned(),
            ];
            if energy {
                v.push(r.energy.as_ref().map_or_else(String::new, |e| {
                    format!(
                        "{} {}",
                        number(Some(e.value)),
                        ftrace::error::printable(&e.unit)
                    )
                }));
            }
            if s.compared {
                v.push(
                    ftrace::error::printable(r.verdict.as_deref().unwrap_or_default()).into_owned(),
                );
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
                if i == 2 || i == 4 || (energy && i == 5) {
                    format!("{c:>w$}")
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        out += &format!(
            "{}  {}\n",
            cells.join("  "),
            ftrace::error::printable(&r.note)
        );
    }
    let mut tools: Vec<&str> = s.entries.iter().map(|r| r.tool.as_str()).collect();
    tools.sort_unstable();
    tools.dedup();
    let noisy: Vec<&str> = s
        .entries
        .iter()
        .filter(|r| r.status == Outcome::Noisy)
        .map(|r| r.entry.as_str())
        .collect();
    let mut counts = format!("{} failed, {} noisy", s.failed, s.noisy);
    if !noisy.is_empty() {
        counts += &format!(" ({}: measured on a busy machine)", noisy.join(", "));
    }
    if s.interrupted > 0 {
        counts += &format!(", {} interrupted", s.interrupted);
    }
    out += &format!(
        "\n{} entries over {} tools ({}); {counts}. Results: {}\n",
        s.entries.len(),
        tools.len(),
        ftrace::error::printable(&tools.join(", ")),
        ftrace::error::shown(&s.folder)
    );
    out
}

/// One CSV row per entry.
pub fn write_csv(s: &Summary, w: impl std::io::Write) -> Result<()> {
    let mut out = csv::Writer::from_writer(w);
    // The energy columns only where a report has a power record, as in the table.
    let energy = s.entries.iter().any(|r| r.energy.is_some());
    let mut head = vec![
        "entry", "tool", "exit", "status", "seconds", "figure", "value", "unit", "noisy",
        "verdict", "note",
    ];
    if energy {
        head.extend(["energy", "energy_unit", "energy_j"]);
    }
    out.write_record(&head)?;
    for r in &s.entries {
        let h = r.headline.as_ref();
        let mut row = vec![
            r.entry.clone(),
            r.tool.clone(),
            r.exit.to_string(),
            r.status.word().to_string(),
            r.seconds.clone(),
            h.map_or(String::new(), |h| h.name.clone()),
            h.map(|h| h.value.to_string()).unwrap_or_default(),
            h.map_or(String::new(), |h| h.unit.clone()),
            (if r.noisy { "true" } else { "false" }).to_string(),
            r.verdict.clone().unwrap_or_default(),
            r.note.clone(),
        ];
        if energy {
            row.push(
                r.energy
                    .as_ref()
                    .map(|e| e.value.to_string())
                    .unwrap_or_default(),
            );
            row.push(r.energy.as_ref().map_or(String::new(), |e| e.unit.clone()));
            row.push(
                r.energy
                    .as_ref()
                    .and_then(|e| e.energy_j)
                    .map(|j| j.to_string())
                    .unwrap_or_default(),
            );
        }
        out.write_record(&row)?;
    }
    out.flush()?;
    Ok(())
}

/// `benchmp summary`'s options.
#[derive(Debug, clap::Args)]
pub struct SummaryArgs {
    /// A results folder of `benchmp suite` (scripts/suite.sh, scripts/android.sh).
    pub dir: PathBuf,
    /// Write the summary as JSON: to stdout instead of the table (--json), or to a file
    /// besides it (--json=FILE).
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub json: Option<String>,
    /// Write one CSV row per entry: to stdout instead of the table (--csv), or to a file
    /// besides it (--csv=FILE).
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub csv: Option<String>,
}

impl benchmp::output::Export for Summary {
    fn text(&self) -> String {
        render(self)
    }

    fn json(&self) -> Result<String> {
        benchmp::output::json_text(self)
    }

    fn csv(&self) -> Result<String> {
        let mut buf = Vec::new();
        write_csv(self, &mut buf)?;
        Ok(String::from_utf8(buf)?)
    }
}

/// Writes the summary as asked. No file it writes is one it reads (the folder's status.tsv or
/// compare.json, by inode).
pub fn run(args: &SummaryArgs) -> Result<i32> {
    let (json, csv) = (args.json.as_deref(), args.csv.as_deref());
    let read = benchmp::cli::Protected::new()
        .file("the folder's status.tsv", args.dir.join("status.tsv"))
        .file("the folder's compare.json", args.dir.join("compare.json"));
    benchmp::cli::check_outputs_besides(json, csv, &read)?;
    let s = summarize(&args.dir)?;
    benchmp::output::emit(&s, benchmp::output::Outputs::new(json, csv))?;
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
        // Magnitudes a table cannot hold as digits (a broken report's 1e308).
        assert_eq!(number(Some(1e308)), "1.000e308");
        assert_eq!(number(Some(f64::NAN)), "NaN");
        assert_eq!(number(Some(0.0)), "0.0000");
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("benchmp-summary-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn report(noisy: bool, figures: bool) -> EntryReport {
        EntryReport {
            figures: if figures {
                Ok(vec![fig("score", Some(0), Some(0), 1.0)])
            } else {
                Err("x.json is empty".into())
            },
            noisy,
            reasons: vec!["child 0 lost 9%".into()],
            measured: Vec::new(),
        }
    }

    #[test]
    fn an_entry_measured_unless_it_failed_for_more_than_noise() {
        assert_eq!(outcome(0, None), Outcome::Ok);
        assert_eq!(outcome(0, Some(&report(false, true))), Outcome::Ok);
        assert_eq!(outcome(0, Some(&report(true, true))), Outcome::Noisy);
        // --fail-on-noise: exit 1 with a report of the noisy run.
        assert_eq!(outcome(1, Some(&report(true, true))), Outcome::Noisy);
        assert_eq!(outcome(1, Some(&report(true, false))), Outcome::Failed);
        assert_eq!(outcome(1, None), Outcome::Failed);
        assert_eq!(outcome(2, Some(&report(true, true))), Outcome::Failed);
        assert_eq!(outcome(124, None), Outcome::Failed);
    }

    #[test]
    fn status_rows_old_and_new_are_read_and_a_bad_one_is_named_by_row() {
        let d = scratch("rows");
        let status = d.join("status.tsv");
        std::fs::write(
            &status,
            "label\ttool\texit\tseconds\tstatus\ndhry-P1\tdhry\t130\t1.5\tinterrupted\n\ncoremark-P1\tcoremark\t0\t-\n",
        )
        .unwrap();
        let rows = read_status(&d).unwrap();
        assert_eq!(
            rows[0],
            StatusRow {
                label: "dhry-P1".into(),
                tool: "dhry".into(),
                exit: 130,
                seconds: "1.5".into(),
                outcome: Some(Outcome::Interrupted),
            }
        );
        assert_eq!(rows[0].line(), "dhry-P1\tdhry\t130\t1.5\tinterrupted\n");
        // A row from before the status column (or from scripts/android.sh).
        assert_eq!((rows[1].exit, rows[1].outcome), (0, None));
        for (text, says) in [
            ("", "row 1: is not the header"),
            (
                "label\ttool\texit\tseconds\nx\tdhry\t0\n",
                "row 2: 3 column(s)",
            ),
            (
                "label\ttool\texit\tseconds\nx\tdhry\t-\t1\n",
                "row 2: exit status '-'",
            ),
            (
                "label\ttool\texit\tseconds\nx\tdhry\t0\t1\tfine\n",
                "row 2: status 'fine'",
            ),
            (
                "label\ttool\texit\tseconds\n../x\tdhry\t0\t1\n",
                "label '../x'",
            ),
        ] {
            std::fs::write(&status, text).unwrap();
            let e = read_status(&d).unwrap_err();
            assert!(e.to_string().contains(says), "{e}");
            assert!(e.to_string().contains("status.tsv"), "{e}");
            assert_eq!(benchmp::cli::exit_code_of(&e), benchmp::EXIT_USAGE, "{e}");
        }
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn the_table_marks_noisy_failed_and_interrupted_entries() {
        let d = scratch("marks");
        std::fs::write(
            d.join("status.tsv"),
            "label\ttool\texit\tseconds\tstatus\na\tdhry\t0\t1.0\tnoisy\nb\tdhry\t1\t1.0\tfailed\nc\tdhry\t130\t1.0\tinterrupted\nd\tdhry\t0\t1.0\tok\n",
        )
        .unwrap();
        std::fs::write(
            d.join("a.json"),
            r#"{"figures":[],"quality":{"verdict":{"noisy":true,"reasons":["child 0 lost 9%","two"]}}}"#,
        )
        .unwrap();
        std::fs::write(d.join("b.err"), "first\nit broke \x1b[31mred\n\n").unwrap();
        let s = summarize(&d).unwrap();
        let by: Vec<(Outcome, &str)> = s
            .entries
            .iter()
            .map(|r| (r.status, r.note.as_str()))
            .collect();
        assert_eq!(
            by[0],
            (
                Outcome::Noisy,
                "NOISY: child 0 lost 9% (and 1 more); no figures"
            )
        );
        assert_eq!(
            by[1],
            (Outcome::Failed, "FAILED (exit 1) it broke \\u{1b}[31mred")
        );
        assert_eq!(by[2], (Outcome::Interrupted, "INTERRUPTED (exit 130)"));
        assert_eq!((s.failed, s.noisy, s.interrupted), (1, 1, 1));
        let table = render(&s);
        assert!(
            table.contains("4 entries over 1 tools (dhry); 1 failed, 1 noisy (a: measured on a busy machine), 1 interrupted."),
            "{table}"
        );
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn the_headline_measurement_is_the_one_its_name_begins_with() {
        let h = |name: &str| Headline {
            name: name.into(),
            value: 1.0,
            unit: "DMIPS".into(),
            also: Vec::new(),
            of: 1,
        };
        let names = ["rd", "wr", "rd"];
        assert_eq!(headline_measurement(&names, &h("wr 64M cpu0")), Some(1));
        assert_eq!(headline_measurement(&names, &h("rd 64M")), Some(2));
        // A report's only figure has no name; a name that matches none: the last.
        assert_eq!(headline_measurement(&names, &h("")), Some(2));
        assert_eq!(headline_measurement(&["dhrystone"], &h("rdx")), Some(0));
        assert_eq!(headline_measurement(&[], &h("rd")), None);
        assert_eq!(
            headline_measurement(&["random stride", "x"], &h("random stride 64 DRAM")),
            Some(0)
        );
    }

    #[test]
    fn the_energy_column_is_there_only_where_a_report_has_a_power_record() {
        let d = scratch("watts");
        std::fs::write(
            d.join("status.tsv"),
            "label\ttool\texit\tseconds\tstatus\na\tdhry\t0\t1.0\tok\nb\tdhry\t0\t1.0\tok\n",
        )
        .unwrap();
        let report = |power: &str| {
            format!(
                r#"{{"figures":[{{"name":"dhrystone strict","cpu":0,"cluster":0,"unit":"DMIPS","better":"higher","value":500.0,"samples":[500.0]}}],"measurements":[{{"name":"dhrystone"{power}}}],"quality":{{"verdict":{{"noisy":false,"reasons":[]}}}}}}"#
            )
        };
        std::fs::write(d.join("a.json"), report("")).unwrap();
        std::fs::write(d.join("b.json"), report("")).unwrap();
        let plain = summarize(&d).unwrap();
        assert!(!render(&plain).contains("energy"), "{}", render(&plain));
        let mut csv = Vec::new();
        write_csv(&plain, &mut csv).unwrap();
        assert!(!String::from_utf8(csv).unwrap().contains("energy"));
        assert!(!serde_json::to_string(&plain).unwrap().contains("energy"));
        std::fs::write(
            d.join("b.json"),
            report(
                r#","power":{"sources":[{"net_energy_j":2.5}],"per_energy":{"value":250.0,"unit":"DMIPS/W"}}"#,
            ),
        )
        .unwrap();
        let s = summarize(&d).unwrap();
        assert_eq!(s.entries[0].energy, None);
        assert_eq!(
            s.entries[1].energy,
            Some(PerEnergy {
                value: 250.0,
                unit: "DMIPS/W".into(),
                energy_j: Some(2.5),
            })
        );
        let table = render(&s);
        assert!(table.contains("  energy  "), "{table}");
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("b ") && l.contains("250 DMIPS/W")),
            "{table}"
        );
        let mut csv = Vec::new();
        write_csv(&s, &mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].ends_with(",energy,energy_unit,energy_j"), "{csv}");
        assert!(lines[2].ends_with(",250,DMIPS/W,2.5"), "{csv}");
        assert!(lines[1].ends_with(",,,"), "{csv}");
        let _ = std::fs::remove_dir_all(d);
    }
}
