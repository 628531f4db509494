//! The summary as a table and as CSV (its JSON is the [`super::FolderSummary`] itself).

use super::{FolderSummary, Outcome, number};

/// The summary as a table: entry, tool, figure, unit, seconds (verdict), notes.
pub fn render(s: &FolderSummary) -> String {
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
            if s.compared {
                v.push(
                    foundation::error::printable(r.verdict.as_deref().unwrap_or_default())
                        .into_owned(),
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
            foundation::error::printable(&r.note)
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
        foundation::error::printable(&tools.join(", ")),
        foundation::error::shown(&s.folder)
    );
    out
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
