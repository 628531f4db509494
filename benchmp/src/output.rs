//! One way out for a command's result (a comparison, an A/B result, a suite's summary): the
//! result says what it is as text, JSON and CSV ([`Export`], pure: strings, no files), and
//! [`emit`] alone decides where each goes, as every command spells it: `--json` or `--csv`
//! alone puts that form on stdout instead of the text, `--json=FILE` or `--csv=FILE` writes a
//! file besides it (whole or not at all, [`crate::files::write_file`]), and a failed write
//! names the file or the stream.
//!
//! The tools' output options ([`OutputArgs`]) and the refusals that keep an output off an
//! input or the running program ([`Protected`], [`check_outputs_besides`]) are here too, so
//! the modules that measure need nothing above them to know where a result goes; this module
//! needs only [`crate::files`] and the aggregate modes.

use std::io::Write as _;

use clap::Args;

use crate::aggregate::AggregateMode;

/// A result in the three forms a command writes.
pub trait Export {
    /// The table shown on stdout when neither JSON nor CSV goes there.
    fn text(&self) -> String;
    /// The JSON, pretty-printed, ending in a newline.
    fn json(&self) -> anyhow::Result<String>;
    /// The CSV: a header, then one row per figure or entry.
    fn csv(&self) -> anyhow::Result<String>;
    /// Warnings and notes for a reader, on the stream the result does not use (none by
    /// default).
    fn notes(&self) -> String {
        String::new()
    }
}

/// Where a result goes: `None` not asked, `Some("-")` stdout, `Some(FILE)` that file; the
/// text, when neither JSON nor CSV is on stdout, to `text`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outputs<'a> {
    /// `--json[=FILE]`.
    pub json: Option<&'a str>,
    /// `--csv[=FILE]`.
    pub csv: Option<&'a str>,
    /// The text's stream (a tool's `--stdout`/`--stderr`; stdout for the commands).
    pub text: Stream,
}

impl<'a> Outputs<'a> {
    /// From the options as parsed (`--json` alone parses as `-`), the text on stdout.
    pub fn new(json: Option<&'a str>, csv: Option<&'a str>) -> Outputs<'a> {
        Outputs {
            json,
            csv,
            text: Stream::Stdout,
        }
    }

    /// A tool's: its files, and its text on the stream [`OutputArgs::result_stream`] says.
    pub fn of(args: &'a OutputArgs) -> Outputs<'a> {
        Outputs {
            json: args.json.as_deref(),
            csv: args.csv.as_deref(),
            text: args.result_stream(),
        }
    }

    /// Where notes go: the stream the text does not use, or stderr when JSON or CSV is on
    /// stdout, so nothing but data ever lands inside a data block.
    pub fn note_stream(&self) -> Stream {
        if self.json == Some("-") || self.csv == Some("-") {
            Stream::Stderr
        } else {
            self.text.other()
        }
    }
}

/// `value` as pretty JSON with a final newline.
pub fn json_text<T: serde::Serialize>(value: &T) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// Writes `result`: on stdout its JSON (`--json`), else its CSV (`--csv`), else its text on
/// its stream; then its notes on the other stream; then each file asked for. The terminal
/// output comes first, so a file that fails to write at the end (a full disk, /dev/full)
/// loses only that file, never the result on the screen.
pub fn emit(result: &impl Export, to: Outputs) -> anyhow::Result<()> {
    use anyhow::Context;
    match (to.json, to.csv) {
        (Some("-"), _) => write_stdout(&result.json()?)?,
        (_, Some("-")) => write_stdout(&result.csv()?)?,
        _ => to
            .text
            .write(&result.text())
            .with_context(|| format!("cannot write the result to {}", to.text.name()))?,
    }
    let notes = result.notes();
    if !notes.is_empty() {
        let _ = to.note_stream().write(&notes);
    }
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

fn percent(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("'{s}' is not a percentage from 0 to 100")),
    }
}

/// Output formats and run-quality policy.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// System figure on the text line: cluster (mean per cluster × its children, clusters
    /// added), sum (children added) or median (lmbench's own figure).
    #[arg(long, value_enum, default_value_t = AggregateMode::Cluster)]
    pub aggregate: AggregateMode,
    /// Write the full report as JSON: to stdout instead of the text (--json), or to a file
    /// besides the text (--json=FILE).
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub json: Option<String>,
    /// Write one CSV row per child per interval: to stdout instead of the text (--csv), or to
    /// a file besides the text (--csv=FILE).
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub csv: Option<String>,
    /// Write the text result to stderr, as lmbench's tools do (the default of bw_mem and
    /// lat_mem_rd, so lmbench's harness, which keeps only stderr, finds every line).
    #[arg(long, conflicts_with = "stdout")]
    pub stderr: bool,
    /// Write the text result to stdout (the default of the tools that are not lmbench's).
    #[arg(long)]
    pub stdout: bool,
    /// The stream the text result goes to when neither --stdout nor --stderr is given: the
    /// tool's choice ([`OutputArgs::results_on`]), stdout unless it says otherwise.
    #[arg(skip)]
    pub default_stream: Stream,
    /// Exit with status 1 when the run is flagged noisy.
    #[arg(long)]
    pub fail_on_noise: bool,
    /// Percentage of its timed run a child may lose to other tasks before the run is noisy.
    #[arg(long, value_name = "PCT", default_value_t = 2.0, value_parser = percent)]
    pub noise_lost: f64,
    /// Write trace_marker begin/end markers for every phase (also BENCHMP_TRACE=1).
    #[arg(long)]
    pub trace: bool,
}

/// One of the two output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stream {
    /// Standard output.
    #[default]
    Stdout,
    /// Standard error.
    Stderr,
}

impl Stream {
    /// The other stream.
    pub fn other(self) -> Stream {
        match self {
            Stream::Stdout => Stream::Stderr,
            Stream::Stderr => Stream::Stdout,
        }
    }

    /// Writes `text` and flushes.
    pub fn write(self, text: &str) -> std::io::Result<()> {
        use std::io::Write;
        match self {
            Stream::Stdout => {
                let mut o = std::io::stdout().lock();
                o.write_all(text.as_bytes()).and_then(|()| o.flush())
            }
            Stream::Stderr => std::io::stderr().lock().write_all(text.as_bytes()),
        }
    }

    /// Its name in a message: `stdout` or `stderr`.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }

    /// True when the stream is a terminal.
    pub fn is_terminal(self) -> bool {
        use std::io::IsTerminal;
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }
}

impl OutputArgs {
    /// The same options with the tool's own default stream for the text result (lmbench's
    /// tools: stderr).
    pub fn results_on(mut self, default: Stream) -> OutputArgs {
        self.default_stream = default;
        self
    }

    /// Where the text result goes: --stdout, --stderr, else the tool's default.
    pub fn result_stream(&self) -> Stream {
        match (self.stdout, self.stderr) {
            (true, _) => Stream::Stdout,
            (_, true) => Stream::Stderr,
            _ => self.default_stream,
        }
    }

    /// Where warnings and notes go: the stream the results do not use, so nothing but data
    /// ever lands inside a data block (JSON or CSV on stdout: stderr).
    pub fn note_stream(&self) -> Stream {
        if self.text_mode() {
            self.result_stream().other()
        } else {
            Stream::Stderr
        }
    }

    /// Refuses output requests that cannot all be honoured, before anything is measured: JSON
    /// and CSV both on stdout, and report files that cannot be written (see
    /// [`check_output_file`]). Accepted, they are where an interrupted run writes what it
    /// measured (`export::write_partial`).
    pub fn check(&self) -> Result<(), crate::error::Usage> {
        check_outputs(self.json.as_deref(), self.csv.as_deref())?;
        // These are the files an interrupted run leaves what it measured in.
        keep_partial_in(self);
        Ok(())
    }

    /// True when the text (not JSON or CSV) goes to the terminal streams.
    pub fn text_mode(&self) -> bool {
        self.json.as_deref() != Some("-") && self.csv.as_deref() != Some("-")
    }
}

/// The files a command's outputs must never be: the program running, and whatever inputs and
/// programs the command names ([`Protected::file`]). Compared by inode, so a symlink, a hard
/// link or another spelling of a protected file is refused as well.
#[derive(Debug, Clone)]
pub struct Protected {
    files: Vec<(String, std::path::PathBuf)>,
}

impl Default for Protected {
    fn default() -> Self {
        Protected::new()
    }
}

impl Protected {
    /// The running program only.
    pub fn new() -> Protected {
        let files = std::env::current_exe()
            .map(|me| vec![("the program running".to_string(), me)])
            .unwrap_or_default();
        Protected { files }
    }

    /// Also `path`, described as `what` in a refusal ("A's program", "an input").
    pub fn file(mut self, what: impl Into<String>, path: impl Into<std::path::PathBuf>) -> Self {
        self.files.push((what.into(), path.into()));
        self
    }

    /// Refuses `option=path` when `path` is one of the protected files.
    pub fn check(&self, option: &str, path: &str) -> Result<(), crate::error::Usage> {
        let out = std::path::Path::new(path);
        let Some(id) = crate::files::file_id(out) else {
            return Ok(());
        };
        match self
            .files
            .iter()
            .find(|(_, p)| crate::files::file_id(p) == Some(id))
        {
            Some((what, _)) => Err(crate::error::Usage(format!(
                "{option}={}: is {what}; an output never replaces an input or a program",
                ftrace::error::printable(path)
            ))),
            None => Ok(()),
        }
    }
}

/// Where an interrupted run writes what it measured: the report files of the tool's
/// `--json`/`--csv`, registered when [`OutputArgs::check`] accepted them.
static PARTIAL_TARGET: std::sync::Mutex<Option<OutputArgs>> = std::sync::Mutex::new(None);

/// Records the report files an interrupted run of this process writes its measurements to.
pub fn keep_partial_in(output: &OutputArgs) {
    *PARTIAL_TARGET.lock().unwrap_or_else(|p| p.into_inner()) = Some(output.clone());
}

/// The files an interrupted run writes to, if the tool named any.
pub fn partial_target() -> Option<OutputArgs> {
    PARTIAL_TARGET
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// The rules of [`OutputArgs::check`] for tools whose `--json[=FILE]` and `--csv[=FILE]`
/// options are their own: at most one on stdout (`-`), every file writable, none the program
/// running.
pub fn check_outputs(json: Option<&str>, csv: Option<&str>) -> Result<(), crate::error::Usage> {
    check_outputs_besides(json, csv, &Protected::new())
}

/// [`check_outputs`] with the command's own inputs and programs protected as well.
pub fn check_outputs_besides(
    json: Option<&str>,
    csv: Option<&str>,
    protected: &Protected,
) -> Result<(), crate::error::Usage> {
    if json == Some("-") && csv == Some("-") {
        return Err(crate::error::Usage(
            "--json and --csv cannot both write to stdout; give one a file (--csv=FILE)".into(),
        ));
    }
    for (option, path) in [("--json", json), ("--csv", csv)] {
        if let Some(p) = path.filter(|p| *p != "-") {
            protected.check(option, p)?;
            check_output_file(option, p)?;
        }
    }
    if let (Some(j), Some(c)) = (json.filter(|p| *p != "-"), csv.filter(|p| *p != "-"))
        && crate::files::same_file(std::path::Path::new(j), std::path::Path::new(c))
    {
        return Err(crate::error::Usage(format!(
            "--json={j} and --csv={c} are one file; the second would replace the first: give each its own"
        )));
    }
    Ok(())
}

/// Checks that a report file can be written, before any time is spent measuring: a name is
/// given, it is not a folder, and it can be opened for writing (an existing file is left as it
/// is; one this check creates is removed again).
pub fn check_output_file(option: &str, path: &str) -> Result<(), crate::error::Usage> {
    use std::io::ErrorKind;
    let bad = |why: String| {
        crate::error::Usage(format!(
            "{option}={}: {why}",
            ftrace::error::printable(path)
        ))
    };
    if path.is_empty() {
        return Err(crate::error::Usage(format!(
            "{option}= needs a file name (or {option} alone for stdout)"
        )));
    }
    let p = std::path::Path::new(path);
    if p.is_dir() {
        return Err(bad("is a folder; give a file name".into()));
    }
    let existed = p.exists();
    // Without waiting: a FIFO nobody reads is refused (ENXIO) rather than hung on.
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(p)
    {
        Ok(_) => {
            if !existed {
                let _ = std::fs::remove_file(p);
            }
            Ok(())
        }
        Err(e) => Err(bad(match e.kind() {
            ErrorKind::NotFound
                if p.parent()
                    .is_some_and(|d| d.as_os_str().is_empty() || d.is_dir()) =>
            {
                format!("cannot be created in its folder: {e}")
            }
            ErrorKind::NotFound => "its folder does not exist".into(),
            ErrorKind::PermissionDenied => "permission denied".into(),
            _ if e.raw_os_error() == Some(nix::libc::ENXIO) => "is a FIFO that nobody reads".into(),
            _ => format!("cannot be written: {e}"),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;

    impl Export for Fixed {
        fn text(&self) -> String {
            String::new()
        }
        fn json(&self) -> anyhow::Result<String> {
            Ok("{\"a\": 1}\n".into())
        }
        fn csv(&self) -> anyhow::Result<String> {
            Ok("a\n1\n".into())
        }
    }

    #[test]
    fn the_files_get_the_json_and_the_csv_and_notes_go_where_the_result_does_not() {
        let dir = std::env::temp_dir().join(format!("benchmp-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (j, c) = (dir.join("r.json"), dir.join("r.csv"));
        let (js, cs) = (j.to_str().unwrap(), c.to_str().unwrap());
        let to = Outputs {
            json: Some(js),
            csv: Some(cs),
            text: Stream::Stderr,
        };
        emit(&Fixed, to).unwrap();
        assert_eq!(std::fs::read_to_string(&j).unwrap(), "{\"a\": 1}\n");
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "a\n1\n");
        // Notes: beside text on the other stream; beside JSON or CSV on stdout, on stderr.
        assert_eq!(to.note_stream(), Stream::Stdout);
        assert_eq!(Outputs::new(None, None).note_stream(), Stream::Stderr);
        assert_eq!(Outputs::new(Some("-"), None).note_stream(), Stream::Stderr);
        let on_stdout = Outputs {
            csv: Some("-"),
            text: Stream::Stderr,
            ..Outputs::default()
        };
        assert_eq!(on_stdout.note_stream(), Stream::Stderr);
        // A file that cannot be written is named.
        let e = emit(
            &Fixed,
            Outputs {
                json: Some("/dev/full"),
                text: Stream::Stderr,
                ..Outputs::default()
            },
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("/dev/full"), "{e:#}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
