//! `benchmp summary DIR`: the table of a suite's results folder, every entry of its
//! `status.tsv` with its headline figure (text, `--json`, `--csv`), and after a comparison
//! the worst verdict of each entry. [`headline()`] is the one rule for which figure stands
//! for an entry: the suite, the LAVA report and the tests all read it from here.

mod headline;
pub mod lava;
mod render;
mod status;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use anyhow::Result;
use benchmp::schema::Figure;
use serde::Serialize;

pub use headline::{Headline, ReportedPerEnergy, headline, headline_measurement, number};
pub use render::{render, write_csv};
use status::bad;
pub use status::{Outcome, STATUS_HEADER, StatusRow, outcome, read_status};

/// One entry of the results folder.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
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
    pub energy: Option<ReportedPerEnergy>,
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
pub struct FolderSummary {
    /// The folder.
    pub folder: PathBuf,
    /// One row per entry run, in order.
    pub entries: Vec<SummaryRow>,
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
    let data: benchmp_cli::compare::Comparison = serde_json::from_str(&text)
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
    pub measured: Vec<(String, Option<ReportedPerEnergy>)>,
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
                    ReportedPerEnergy::of(m),
                )
            })
            .collect(),
    }))
}

/// The figure per energy of a report's headline measurement ([`headline_measurement`]).
pub fn headline_energy(report: &EntryReport, headline: &Headline) -> Option<ReportedPerEnergy> {
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
    Ok(foundation::error::printable(last.trim_end()).into_owned())
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
pub fn summarize(dir: &Path) -> Result<FolderSummary> {
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
                    [one] => format!("NOISY: {}", foundation::error::printable(one)),
                    [first, more @ ..] => format!(
                        "NOISY: {} (and {} more)",
                        foundation::error::printable(first),
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
        entries.push(SummaryRow {
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
    Ok(FolderSummary {
        folder: dir.to_path_buf(),
        failed: count(Outcome::Failed),
        noisy: count(Outcome::Noisy),
        interrupted: count(Outcome::Interrupted),
        entries,
        compared: judged.is_some(),
    })
}

/// `benchmp summary`'s options.
#[derive(Debug, clap::Args)]
pub struct SummaryArgs {
    /// A results folder of `benchmp suite` (scripts/suite.sh, scripts/android.sh).
    pub dir: PathBuf,
    /// `--json[=FILE]`: the summary; `--csv[=FILE]`: one row per entry.
    #[command(flatten)]
    pub files: benchmp::cli::ResultFiles,
    /// Print the results as LAVA test cases instead of the table, one line each for a shell
    /// to hand to LAVA's helpers (`set TOOL`, `log TEXT`, `case NAME RESULT [MEASUREMENT
    /// UNITS]`, `stop`): a test set per tool, a case per entry with its headline figure,
    /// one per reason it is not a pass, then the set `compare` from compare/compare.json
    /// when the folder has one (scripts/lava/report.sh).
    #[arg(long, conflicts_with_all = ["json", "csv", "md"])]
    pub lava: bool,
}

impl benchmp::output::Export for FolderSummary {
    fn text(&self) -> String {
        render(self)
    }

    fn json(&self) -> Result<String, benchmp::output::OutputError> {
        benchmp::output::json_text(self)
    }

    fn csv(&self) -> Result<String, benchmp::output::OutputError> {
        benchmp::output::OutputError::csv_text(|buf| write_csv(self, buf))
    }
}

/// Writes the summary as asked. No file it writes is one it reads (the folder's status.tsv or
/// compare.json, by inode).
pub fn run(args: &SummaryArgs) -> Result<i32> {
    if args.lava {
        let text = lava::render(&args.dir)?;
        benchmp::output::write_stdout(&text)?;
        return Ok(benchmp::EXIT_OK);
    }
    let read = benchmp::cli::Protected::new()
        .file("the folder's status.tsv", args.dir.join("status.tsv"))
        .file("the folder's compare.json", args.dir.join("compare.json"));
    args.files.check_besides(&read)?;
    let s = summarize(&args.dir)?;
    benchmp::output::emit(&s, benchmp::output::Outputs::to(&args.files))?;
    Ok(benchmp::EXIT_OK)
}
