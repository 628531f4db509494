//! How each entry ended, as the suite's status.tsv records it, and the reading of that file.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::EntryReport;

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

/// The outcome of an entry that ended by itself with `exit`, given its report: an entry that
/// wrote none measured nothing, whatever its status says.
pub fn outcome(exit: i32, report: Option<&EntryReport>) -> Outcome {
    let noisy = report.is_some_and(|r| r.noisy && r.figures.is_ok());
    match exit {
        0 if report.is_none() => Outcome::Failed,
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
pub(super) fn bad(path: &Path, row: Option<usize>, why: String) -> anyhow::Error {
    let at = row.map(|n| format!(" row {n}")).unwrap_or_default();
    benchmp::Usage(format!("{}{at}: {why}", foundation::error::shown(path))).into()
}

/// True when a label can name files in the folder: a plain name.
pub(super) fn plain_label(label: &str) -> bool {
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
        if line.is_empty() {
            continue;
        }
        rows.push(status_row(&path, i + 2, line)?);
    }
    Ok(rows)
}

/// One row of status.tsv (`path`), line `n` of the file: its columns checked in order
/// (their count, the label, the exit status, the seconds, the status), the first wrong one
/// bad input naming the row.
fn status_row(path: &Path, n: usize, line: &str) -> Result<StatusRow> {
    let n = Some(n);
    let cols: Vec<&str> = line.split('\t').collect();
    let [label, tool, code, seconds, rest @ ..] = cols.as_slice() else {
        return Err(bad(
            path,
            n,
            format!("{} column(s), not label, tool, exit, seconds", cols.len()),
        ));
    };
    let (label, tool, code, seconds) = (*label, *tool, *code, *seconds);
    if !plain_label(label) {
        return Err(bad(
            path,
            n,
            format!(
                "label '{}' is not a file name",
                foundation::error::printable(label)
            ),
        ));
    }
    let exit: i32 = code.parse().map_err(|_| {
        bad(
            path,
            n,
            format!(
                "exit status '{}' is not a number",
                foundation::error::printable(code)
            ),
        )
    })?;
    check_seconds(path, n, seconds)?;
    let outcome = match rest.first() {
        None => None,
        Some(w) => Some(status_word(path, n, w)?),
    };
    Ok(StatusRow {
        label: label.to_string(),
        tool: tool.to_string(),
        exit,
        seconds: seconds.to_string(),
        outcome,
    })
}

/// A row's seconds column, at row `n` of status.tsv (`path`): `-` where not known;
/// otherwise a finite, non-negative number of seconds (a time that is NaN, infinite or
/// negative is no wall time, and would be shown as one), or bad input naming the row.
fn check_seconds(path: &Path, n: Option<usize>, seconds: &str) -> Result<()> {
    if seconds != "-"
        && !seconds
            .parse::<f64>()
            .is_ok_and(|x| x.is_finite() && x >= 0.0)
    {
        return Err(bad(
            path,
            n,
            format!(
                "seconds '{}' is not a number of seconds from 0 (or -)",
                foundation::error::printable(seconds)
            ),
        ));
    }
    Ok(())
}

/// A row's status column, at row `n` of status.tsv (`path`): the [`Outcome`] it names, or
/// bad input naming the row.
fn status_word(path: &Path, n: Option<usize>, w: &str) -> Result<Outcome> {
    Outcome::from_word(w).ok_or_else(|| {
        bad(
            path,
            n,
            format!(
                "status '{}' is not ok, noisy, failed or interrupted",
                foundation::error::printable(w)
            ),
        )
    })
}
