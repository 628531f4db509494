//! The summary as a table and as CSV (its JSON is the [`super::FolderSummary`] itself).

use super::{FolderSummary, Outcome, SummaryRow, number};

/// The summary as a table: entry, tool, figure, unit, seconds (verdict), notes.
pub fn render(s: &FolderSummary) -> String {
    // Only where a report has a power record: without one the table is as it always was.
    let energy = s.entries.iter().any(|r| r.energy.is_some());
    let head = head(energy, s.compared);
    let rows: Vec<Vec<String>> = s
        .entries
        .iter()
        .map(|r| cells(r, energy, s.compared))
        .collect();
    let widths = widths(&head, &rows);
    let mut out = String::from("\n");
    out += &header(&head, &widths);
    for (r, row) in s.entries.iter().zip(&rows) {
        out += &line(row, &widths, energy, &r.note);
    }
    out += &totals(s);
    out
}

/// The table's column names: entry, tool, figure, unit, s, then energy (where a report has
/// a power record) and verdict (where the folder holds a comparison).
fn head(energy: bool, compared: bool) -> Vec<&'static str> {
    let mut head = vec!["entry", "tool", "figure", "unit", "s"];
    if energy {
        head.push("energy");
    }
    if compared {
        head.push("verdict");
    }
    head
}

/// One entry's cells, as printable text, in the order of [`head`]'s columns.
fn cells(r: &SummaryRow, energy: bool, compared: bool) -> Vec<String> {
    let mut v = vec![
        foundation::error::printable(&r.entry).into_owned(),
        foundation::error::printable(&r.tool).into_owned(),
        number(r.headline.as_ref().map(|h| h.value)),
        r.headline
            .as_ref()
            .map(|h| foundation::error::printable(&h.unit).into_owned())
            .unwrap_or_default(),
        foundation::error::printable(&r.seconds).into_owned(),
    ];
    if energy {
        v.push(r.energy.as_ref().map_or_else(String::new, |e| {
            format!(
                "{} {}",
                number(Some(e.value)),
                foundation::error::printable(&e.unit)
            )
        }));
    }
    if compared {
        v.push(foundation::error::printable(r.verdict.as_deref().unwrap_or_default()).into_owned());
    }
    v
}

/// Each column's width in characters: its widest cell, or its name where that is wider.
fn widths(head: &[&str], rows: &[Vec<String>]) -> Vec<usize> {
    (0..head.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// The table's first two lines: the column names padded to their widths, then `notes`; and
/// under them a line of dashes as wide as each column.
fn header(head: &[&str], widths: &[usize]) -> String {
    let cells: Vec<String> = head
        .iter()
        .zip(widths)
        .map(|(h, w)| format!("{h:<w$}"))
        .collect();
    let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    format!(
        "{}  notes\n{}  -----\n",
        cells.join("  "),
        dashes.join("  ")
    )
}

/// One entry's line of the table: its cells padded to their widths (figure, seconds and
/// energy to the right, the others to the left), then its note.
fn line(row: &[String], widths: &[usize], energy: bool, note: &str) -> String {
    let cells: Vec<String> = row
        .iter()
        .zip(widths)
        .enumerate()
        .map(|(i, (c, w))| {
            if i == 2 || i == 4 || (energy && i == 5) {
                format!("{c:>w$}")
            } else {
                format!("{c:<w$}")
            }
        })
        .collect();
    format!(
        "{}  {}\n",
        cells.join("  "),
        foundation::error::printable(note)
    )
}

/// The line under the table, after a blank one: how many entries over which tools, how many
/// failed and were noisy (naming the noisy ones), how many were interrupted, and the folder.
fn totals(s: &FolderSummary) -> String {
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
    format!(
        "\n{} entries over {} tools ({}); {counts}. Results: {}\n",
        s.entries.len(),
        tools.len(),
        foundation::error::printable(&tools.join(", ")),
        foundation::error::shown(&s.folder)
    )
}

/// One CSV row per entry.
pub fn write_csv(s: &FolderSummary, w: impl std::io::Write) -> std::io::Result<()> {
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
