//! Markdown, the result files' third format (`--md[=FILE]`, [`Markdown`]): a table a reader
//! pastes into a review, an issue or a wiki page. Every result has it from what it says of
//! itself ([`crate::output::Export`]): its figures when it has them ([`figures`]: a tool's
//! report), else its CSV as a table (a comparison's row per figure, a summary's row per
//! entry), under its title when it has one. Pure: text in, text out.

use crate::format::Format;
use crate::output::{Export, OutputError};
use crate::schema::Figure;

/// `--md`: the result as a Markdown table.
#[derive(Debug)]
pub struct Markdown;

impl Format for Markdown {
    fn name(&self) -> &'static str {
        "md"
    }

    fn help(&self) -> &'static str {
        "Write the result as a Markdown table (a tool: its figures; a command: one row per \
         figure or entry): to stdout instead of the text (--md), or to a file besides the text \
         (--md=FILE)"
    }

    fn render(&self, result: &dyn Export) -> Result<String, OutputError> {
        let table = match result.figures() {
            Some(f) => figures(f),
            None => from_csv(&result.csv()?)?,
        };
        Ok(match result.title() {
            Some(title) => format!("{title}\n\n{table}"),
            None => table,
        })
    }
}

/// A cell as Markdown shows it literally: `|` and `\` escaped, a line break as a space, an
/// empty value as a space (an empty cell reads as a missing column in some renderers).
fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    if out.trim().is_empty() {
        " ".into()
    } else {
        out
    }
}

/// A Markdown table: the header, the rule, one line a row. A row shorter than the header is
/// filled with empty cells, a longer one keeps its extra cells under empty headers.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let width = rows
        .iter()
        .map(Vec::len)
        .chain([header.len()])
        .max()
        .unwrap_or(0);
    let line = |cells: &[String]| {
        let mut l = String::from("|");
        for i in 0..width {
            l.push(' ');
            l.push_str(&cell(cells.get(i).map(String::as_str).unwrap_or("")));
            l.push_str(" |");
        }
        l.push('\n');
        l
    };
    let mut out = line(header);
    out.push('|');
    out.push_str(&" --- |".repeat(width));
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

/// A CSV document (a header line, then records) as a Markdown table.
pub fn from_csv(csv_text: &str) -> Result<String, OutputError> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(csv_text.as_bytes());
    let header: Vec<String> = r.headers()?.iter().map(str::to_string).collect();
    let rows = r
        .records()
        .map(|rec| rec.map(|rec| rec.iter().map(str::to_string).collect()))
        .collect::<Result<Vec<Vec<String>>, _>>()?;
    Ok(table(&header, &rows))
}

/// A run's figures as a table: each figure, the CPU or cluster it describes (blank: the
/// system), its value and unit, which way is better and how many samples it comes from.
pub fn figures(figures: &[Figure]) -> String {
    let header: Vec<String> = [
        "figure", "cpu", "cluster", "value", "unit", "better", "samples",
    ]
    .map(String::from)
    .to_vec();
    let opt = |v: Option<usize>| v.map(|v| v.to_string()).unwrap_or_default();
    let rows: Vec<Vec<String>> = figures
        .iter()
        .map(|f| {
            vec![
                f.name.clone(),
                opt(f.cpu),
                opt(f.cluster),
                crate::number::table_number(f.value, 2),
                f.unit.clone(),
                f.better.word().to_string(),
                f.samples.len().to_string(),
            ]
        })
        .collect();
    table(&header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_becomes_a_table_with_its_cells_escaped() {
        let md = from_csv("name,value\n\"a|b\",1\n\"two\nlines\",\nback\\slash,3\n").unwrap();
        assert_eq!(
            md,
            "| name | value |\n| --- | --- |\n| a\\|b | 1 |\n| two lines |   |\n| back\\\\slash | 3 |\n"
        );
    }

    #[test]
    fn ragged_rows_keep_every_cell() {
        let md = table(&["a".into()], &[vec!["1".into(), "2".into()], vec![]]);
        assert_eq!(md, "| a |   |\n| --- | --- |\n| 1 | 2 |\n|   |   |\n");
    }

    #[test]
    fn figures_name_their_cpu_cluster_or_system() {
        let f = |cpu, cluster, value| Figure {
            name: "rd 64M".into(),
            cpu,
            cluster,
            unit: "MB/s".into(),
            better: crate::schema::Better::Higher,
            value,
            samples: vec![value; 3],
            sizing: Default::default(),
        };
        let md = figures(&[f(Some(1), Some(0), 1000.0), f(None, None, 2e13)]);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(
            lines[0],
            "| figure | cpu | cluster | value | unit | better | samples |"
        );
        assert_eq!(lines[2], "| rd 64M | 1 | 0 | 1000.00 | MB/s | higher | 3 |");
        assert_eq!(
            lines[3],
            "| rd 64M |   |   | 2.000e13 | MB/s | higher | 3 |"
        );
    }
}
