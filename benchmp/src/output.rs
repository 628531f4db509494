//! One way out for a command's result (a comparison, an A/B result, a suite's summary): the
//! result says what it is as text, JSON and CSV ([`Export`], pure: strings, no files), and
//! [`emit`] alone decides where each goes, as every command spells it: `--json` or `--csv`
//! alone puts that form on stdout instead of the text, `--json=FILE` or `--csv=FILE` writes a
//! file besides it (whole or not at all, [`crate::files::write_file`]), and a failed write
//! names the file or the stream.
//!
//! Only the commands above the library's modules use this; nothing below them does.

use std::io::Write as _;

/// A result in the three forms a command writes.
pub trait Export {
    /// The table shown on stdout when neither JSON nor CSV goes there.
    fn text(&self) -> String;
    /// The JSON, pretty-printed, ending in a newline.
    fn json(&self) -> anyhow::Result<String>;
    /// The CSV: a header, then one row per figure or entry.
    fn csv(&self) -> anyhow::Result<String>;
}

/// Where a result goes: `None` not asked, `Some("-")` stdout, `Some(FILE)` that file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outputs<'a> {
    /// `--json[=FILE]`.
    pub json: Option<&'a str>,
    /// `--csv[=FILE]`.
    pub csv: Option<&'a str>,
}

impl<'a> Outputs<'a> {
    /// From the options as parsed (`--json` alone parses as `-`).
    pub fn new(json: Option<&'a str>, csv: Option<&'a str>) -> Outputs<'a> {
        Outputs { json, csv }
    }
}

/// `value` as pretty JSON with a final newline.
pub fn json_text<T: serde::Serialize>(value: &T) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// Writes `result`: on stdout its JSON (`--json`), else its CSV (`--csv`), else its text; then
/// each file asked for.
pub fn emit(result: &impl Export, to: Outputs) -> anyhow::Result<()> {
    let shown = match (to.json, to.csv) {
        (Some("-"), _) => result.json()?,
        (_, Some("-")) => result.csv()?,
        _ => result.text(),
    };
    write_stdout(&shown)?;
    if let Some(path) = to.json.filter(|p| *p != "-") {
        let text = result.json()?;
        crate::files::write_file(path, |w| w.write_all(text.as_bytes()))?;
    }
    if let Some(path) = to.csv.filter(|p| *p != "-") {
        let text = result.csv()?;
        crate::files::write_file(path, |w| w.write_all(text.as_bytes()))?;
    }
    Ok(())
}

/// Writes a command's result to stdout and flushes it, so a closed or full stdout (`>
/// /dev/full`) is an error naming it (exit 1), not a panic of `print!`.
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())
        .and_then(|()| o.flush())
        .context("cannot write the result to stdout")
}
