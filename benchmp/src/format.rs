//! The result formats every tool and command writes, each an option of its own (`--json`,
//! `--csv`, `--md`, with `=FILE` or alone for stdout): a format is a type implementing
//! [`Format`], which renders any result from what every result says of itself
//! ([`Export`]: its JSON and CSV, a title and figures when it has them), and one line of
//! [`FORMATS`]. The option ([`crate::output::ResultFiles`]), where each format goes
//! ([`crate::output::emit`]), an interrupted tool's partial files
//! ([`crate::export::write_partial`]) and the contract test take every format from that list.
//! JSON and CSV, the two a result defines itself, are here; Markdown is in
//! [`crate::markdown`].

use crate::output::{Export, OutputError};

/// One result format.
pub trait Format: Sync {
    /// The format's name, and its option's: `json` is `--json[=FILE]`.
    fn name(&self) -> &'static str;
    /// The option's help.
    fn help(&self) -> &'static str;
    /// `result` in this format.
    fn render(&self, result: &dyn Export) -> Result<String, OutputError>;
    /// True when the format names the command that made it and says whether it is complete
    /// (JSON): an interrupted tool writes it on stdout too, and its partial file may replace
    /// a complete one of the same command. Any other format's partial file only takes a
    /// missing or empty file's place.
    fn self_describing(&self) -> bool {
        false
    }
}

/// Every format, in the order [`crate::output::emit`] writes their files.
pub static FORMATS: &[&dyn Format] = &[&Json, &Csv, &crate::markdown::Markdown];

/// The format named `name`.
pub fn named(name: &str) -> Option<&'static dyn Format> {
    FORMATS.iter().copied().find(|f| f.name() == name)
}

/// `--json`: the result's own JSON (a tool's full report, a command's result in its layout).
#[derive(Debug)]
pub struct Json;

impl Format for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn help(&self) -> &'static str {
        "Write the result as JSON (a tool's full report, a command's result in its layout): to \
         stdout instead of the text (--json), or to a file besides the text (--json=FILE)"
    }

    fn render(&self, result: &dyn Export) -> Result<String, OutputError> {
        result.json()
    }

    fn self_describing(&self) -> bool {
        true
    }
}

/// `--csv`: the result's own CSV (a tool: one row per child per interval; a command: one row
/// per figure or entry).
#[derive(Debug)]
pub struct Csv;

impl Format for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn help(&self) -> &'static str {
        "Write the result as CSV (a tool: one row per child per interval; a command: one row per \
         figure or entry): to stdout instead of the text (--csv), or to a file besides the text \
         (--csv=FILE)"
    }

    fn render(&self, result: &dyn Export) -> Result<String, OutputError> {
        result.csv()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_its_own_name_and_a_sentence_of_help() {
        let mut names: Vec<&str> = FORMATS.iter().map(|f| f.name()).collect();
        assert!(
            ["json", "csv", "md"].iter().all(|n| names.contains(n)),
            "{names:?}"
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FORMATS.len(), "two formats share a name");
        assert!(
            FORMATS
                .iter()
                .all(|f| f.help().starts_with("Write the result as "))
        );
        assert!(named("md").is_some() && named("xml").is_none());
        assert!(named("json").is_some_and(|f| f.self_describing()));
    }
}
