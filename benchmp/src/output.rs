//! One way out for a command's result (a comparison, an A/B result, a suite's summary): the
//! result says what it is as text, JSON and CSV ([`Export`], pure: strings, no files), each
//! format of [`crate::format::FORMATS`] renders it from that, and [`emit`] alone decides where
//! each goes, as every command spells it: `--json` (or any format's option) alone puts that
//! form on stdout instead of the text, `--json=FILE` writes a file besides it (whole or not at
//! all, [`crate::files::write_file`]), and a failed write names the file or the stream.
//!
//! The tools' output options ([`OutputArgs`]) and the refusals that keep an output off an
//! input or the running program ([`Protected`], [`ResultFiles::check_besides`]) are here too, so
//! the modules that measure need nothing above them to know where a result goes; this module
//! needs only [`crate::files`] and the aggregate modes.

use std::io::Write as _;

use clap::Args;

use crate::format::{FORMATS, Format};

use crate::aggregate::AggregateMode;

/// Why a result could not be rendered or written; each names what it was doing and carries
/// its cause ([`std::error::Error::source`]), so a full disk or a resource limit under it is
/// still found ([`crate::error::exit_code_by`]).
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The result could not be serialised as JSON.
    #[error("cannot render the JSON")]
    Json(#[from] serde_json::Error),
    /// The CSV could not be written into memory.
    #[error("cannot render the CSV")]
    Csv(#[source] std::io::Error),
    /// A rendered CSV could not be read back (as the Markdown table).
    #[error("cannot read the CSV back")]
    CsvRead(#[from] csv::Error),
    /// A rendered CSV was not UTF-8.
    #[error("the CSV is not UTF-8")]
    Utf8(#[from] std::string::FromUtf8Error),
    /// The text or a format on stdout or stderr could not be written.
    #[error("cannot write the result to {0}")]
    Stream(&'static str, #[source] std::io::Error),
    /// A report file could not be written whole (the earlier file, if any, is as it was).
    #[error("cannot write {path}")]
    File {
        /// The file as given.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl OutputError {
    /// The CSV `write` rendered into `buf` (for [`Export::csv`]).
    pub fn csv_text(
        write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>,
    ) -> Result<String, OutputError> {
        let mut buf = Vec::new();
        write(&mut buf).map_err(OutputError::Csv)?;
        Ok(String::from_utf8(buf)?)
    }
}

/// What a result says of itself, from which every format renders it ([`Format`]).
pub trait Export {
    /// The table shown on stdout when no format goes there.
    fn text(&self) -> String;
    /// The JSON, pretty-printed, ending in a newline.
    fn json(&self) -> Result<String, OutputError>;
    /// The CSV: a header, then one row per figure or entry.
    fn csv(&self) -> Result<String, OutputError>;
    /// One line that says what the result is, for formats that put a title over a table (a
    /// tool's report: the tool, its arguments, its quality); none by default.
    fn title(&self) -> Option<String> {
        None
    }
    /// The figures, for formats that show them rather than the CSV's rows (a tool's report's);
    /// none by default.
    fn figures(&self) -> Option<&[crate::schema::Figure]> {
        None
    }
    /// Warnings and notes for a reader, on the stream the result does not use (none by
    /// default).
    fn notes(&self) -> String {
        String::new()
    }
}

/// Where a result goes: each format's file as asked (`-` for stdout); the text, when no
/// format is on stdout, to `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outputs<'a> {
    /// The formats asked for.
    pub files: &'a ResultFiles,
    /// The text's stream (a tool's `--stdout`/`--stderr`; stdout for the commands).
    pub text: Stream,
}

impl<'a> Outputs<'a> {
    /// A command's: the files as parsed (`--json` alone parses as `-`), the text on stdout.
    pub fn to(files: &'a ResultFiles) -> Outputs<'a> {
        Outputs {
            files,
            text: Stream::Stdout,
        }
    }

    /// A tool's: its files, and its text on the stream [`OutputArgs::result_stream`] says.
    pub fn of(args: &'a OutputArgs) -> Outputs<'a> {
        Outputs {
            text: args.result_stream(),
            ..Outputs::to(&args.files)
        }
    }

    /// Where notes go: the stream the text does not use, or stderr when a format is on
    /// stdout, so nothing but data ever lands inside a data block.
    pub fn note_stream(&self) -> Stream {
        if !self.files.text_mode() {
            Stream::Stderr
        } else {
            self.text.other()
        }
    }
}

/// `value` as pretty JSON with a final newline.
pub fn json_text<T: serde::Serialize>(value: &T) -> Result<String, OutputError> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// Writes `result`: on stdout the format asked there (`--json`, `--csv` or `--md` alone),
/// else its text on its stream; then its notes on the other stream; then each file asked for.
/// The terminal output comes first, so a file that fails to write at the end (a full disk,
/// /dev/full) loses only that file, never the result on the screen.
pub fn emit(result: &dyn Export, to: Outputs) -> Result<(), OutputError> {
    match to.files.on_stdout() {
        Some(format) => write_stdout(&format.render(result)?)?,
        None => to
            .text
            .write(&result.text())
            .map_err(|e| OutputError::Stream(to.text.name(), e))?,
    }
    let notes = result.notes();
    if !notes.is_empty() {
        let _ = to.note_stream().write(&notes);
    }
    for (format, path) in to.files.to_files() {
        let text = format.render(result)?;
        crate::files::write_file(path, |w| w.write_all(text.as_bytes()))?;
    }
    Ok(())
}

/// Writes a command's result to stdout and flushes it, so a closed or full stdout (`>
/// /dev/full`) is an error naming it (exit 1), not a panic of `print!`.
pub fn write_stdout(text: &str) -> Result<(), OutputError> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())
        .and_then(|()| o.flush())
        .map_err(|e| OutputError::Stream("stdout", e))
}

fn percent(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("'{s}' is not a percentage from 0 to 100")),
    }
}

/// The result files every tool and command offers, flattened into each one's options: one
/// option per format of [`FORMATS`] (`--json[=FILE]`, `--csv[=FILE]`, `--md[=FILE]`), its
/// value `-` for stdout (the option alone) or a file. A new format is a type of its own and
/// its line in that list ([`crate::format`]).
#[derive(Clone, Default)]
pub struct ResultFiles {
    /// Each format given and its value, in the order of [`FORMATS`].
    given: Vec<(&'static dyn Format, String)>,
}

impl ResultFiles {
    /// `(format name, value)` of each format given.
    fn pairs(&self) -> Vec<(&'static str, &str)> {
        self.given
            .iter()
            .map(|(f, v)| (f.name(), v.as_str()))
            .collect()
    }
}

impl PartialEq for ResultFiles {
    fn eq(&self, other: &Self) -> bool {
        self.pairs() == other.pairs()
    }
}

impl Eq for ResultFiles {}

impl std::fmt::Debug for ResultFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.pairs()).finish()
    }
}

impl clap::FromArgMatches for ResultFiles {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut files = ResultFiles::default();
        files.update_from_arg_matches(m)?;
        Ok(files)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        for &f in FORMATS {
            if let Ok(Some(v)) = m.try_get_one::<String>(f.name()) {
                self.given.retain(|(g, _)| g.name() != f.name());
                self.given.push((f, v.clone()));
            }
        }
        let order = |f: &dyn Format| FORMATS.iter().position(|g| g.name() == f.name());
        self.given.sort_by_key(|(f, _)| order(*f));
        Ok(())
    }
}

impl clap::Args for ResultFiles {
    /// One option per format: `--NAME` alone (stdout) or `--NAME=FILE`.
    fn augment_args(cmd: clap::Command) -> clap::Command {
        FORMATS.iter().fold(cmd, |cmd, f| {
            cmd.arg(
                clap::Arg::new(f.name())
                    .long(f.name())
                    .value_name("FILE")
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value("-")
                    .action(clap::ArgAction::Set)
                    .value_parser(clap::value_parser!(String))
                    .help(f.help()),
            )
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl ResultFiles {
    /// These files: `(format name, value)` each, in any order (a name no format has is left
    /// out).
    pub fn of<'s>(given: impl IntoIterator<Item = (&'s str, String)>) -> ResultFiles {
        let given: Vec<(&str, String)> = given.into_iter().collect();
        ResultFiles {
            given: FORMATS
                .iter()
                .filter_map(|&f| {
                    let (_, v) = given.iter().find(|(n, _)| *n == f.name())?;
                    Some((f, v.clone()))
                })
                .collect(),
        }
    }

    /// The value of the format named `format`: `-` for stdout, else a file.
    pub fn get(&self, format: &str) -> Option<&str> {
        self.given
            .iter()
            .find(|(f, _)| f.name() == format)
            .map(|(_, v)| v.as_str())
    }

    /// The format asked on stdout, if any (at most one: [`ResultFiles::check_besides`]).
    pub fn on_stdout(&self) -> Option<&'static dyn Format> {
        self.given.iter().find(|(_, v)| v == "-").map(|(f, _)| *f)
    }

    /// Each format asked into a file, with the file, in the order of [`FORMATS`].
    pub fn to_files(&self) -> impl Iterator<Item = (&'static dyn Format, &str)> {
        self.given
            .iter()
            .filter(|(_, v)| v != "-")
            .map(|(f, v)| (*f, v.as_str()))
    }

    /// Each file as its option names it (`--json`, the file), for refusals and notes.
    pub fn named_files(&self) -> Vec<(String, &str)> {
        self.to_files()
            .map(|(f, p)| (format!("--{}", f.name()), p))
            .collect()
    }

    /// The same formats with each file replaced by `place(format, file)` (stdout kept): where
    /// an interrupted run writes its partial files.
    pub fn placed(&self, place: impl Fn(&dyn Format, &str) -> String) -> ResultFiles {
        ResultFiles {
            given: self
                .given
                .iter()
                .map(|(f, v)| {
                    let v = if v == "-" { v.clone() } else { place(*f, v) };
                    (*f, v)
                })
                .collect(),
        }
    }

    /// Refuses what cannot all be honoured, before anything is measured: more than one format
    /// on stdout, a file that cannot be written ([`check_output_file`]) or is one of the
    /// `protected` files, two formats into one file.
    pub fn check_besides(&self, protected: &Protected) -> Result<(), crate::error::Usage> {
        let on_stdout: Vec<String> = self
            .given
            .iter()
            .filter(|(_, v)| v == "-")
            .map(|(f, _)| format!("--{}", f.name()))
            .collect();
        if on_stdout.len() > 1 {
            let (all, one) = if on_stdout.len() == 2 {
                ("both", "one")
            } else {
                ("all", "all but one")
            };
            return Err(crate::error::Usage(format!(
                "{} cannot {all} write to stdout; give {one} a file ({}=FILE)",
                on_stdout.join(" and "),
                on_stdout[on_stdout.len() - 1]
            )));
        }
        let files = self.named_files();
        for (option, p) in &files {
            protected.check(option, p)?;
            check_output_file(option, p)?;
        }
        for (i, (o1, p1)) in files.iter().enumerate() {
            for (o2, p2) in &files[i + 1..] {
                if crate::files::same_file(std::path::Path::new(p1), std::path::Path::new(p2)) {
                    return Err(crate::error::Usage(format!(
                        "{o1}={p1} and {o2}={p2} are one file; the second would replace the first: give each its own"
                    )));
                }
            }
        }
        Ok(())
    }

    /// True when the text (no format) goes to the terminal streams.
    pub fn text_mode(&self) -> bool {
        self.on_stdout().is_none()
    }
}

/// Output formats and run-quality policy.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// System figure on the text line: cluster (mean per cluster × its children, clusters
    /// added), sum (children added) or median (lmbench's own figure).
    #[arg(long, value_enum, default_value_t = AggregateMode::Cluster)]
    pub aggregate: AggregateMode,
    /// The result files: `--json[=FILE]`, `--csv[=FILE]`, `--md[=FILE]`, one per format.
    #[command(flatten)]
    pub files: ResultFiles,
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
    /// [`check_output_file`]). Accepted, they are also where an interrupted run writes what it
    /// measured, when the tool gives them to its session (`Session::start`).
    pub fn check(&self) -> Result<(), crate::error::Usage> {
        self.files.check_besides(&Protected::new())
    }

    /// True when the text (not JSON or CSV) goes to the terminal streams.
    pub fn text_mode(&self) -> bool {
        self.files.text_mode()
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
                foundation::error::printable(path)
            ))),
            None => Ok(()),
        }
    }
}

/// Checks that a report file can be written, before any time is spent measuring: a name is
/// given, it is not a folder, and it can be opened for writing (an existing file is left as it
/// is; one this check creates is removed again).
pub fn check_output_file(option: &str, path: &str) -> Result<(), crate::error::Usage> {
    use std::io::ErrorKind;
    let bad = |why: String| {
        crate::error::Usage(format!(
            "{option}={}: {why}",
            foundation::error::printable(path)
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
        fn json(&self) -> Result<String, OutputError> {
            Ok("{\"a\": 1}\n".into())
        }
        fn csv(&self) -> Result<String, OutputError> {
            Ok("a\n1\n".into())
        }
    }

    #[test]
    fn the_files_get_the_json_and_the_csv_and_notes_go_where_the_result_does_not() {
        let dir = std::env::temp_dir().join(format!("benchmp-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (j, c, m) = (dir.join("r.json"), dir.join("r.csv"), dir.join("r.md"));
        let files = ResultFiles::of([
            ("json", j.display().to_string()),
            ("csv", c.display().to_string()),
            ("md", m.display().to_string()),
        ]);
        let to = Outputs {
            files: &files,
            text: Stream::Stderr,
        };
        emit(&Fixed, to).unwrap();
        assert_eq!(std::fs::read_to_string(&j).unwrap(), "{\"a\": 1}\n");
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "a\n1\n");
        // The Markdown a result has without saying how: its CSV as a table.
        assert_eq!(
            std::fs::read_to_string(&m).unwrap(),
            "| a |\n| --- |\n| 1 |\n"
        );
        // Notes: beside text on the other stream; beside JSON or CSV on stdout, on stderr.
        assert_eq!(to.note_stream(), Stream::Stdout);
        assert_eq!(
            Outputs::to(&ResultFiles::default()).note_stream(),
            Stream::Stderr
        );
        assert_eq!(
            Outputs::to(&ResultFiles::of([("json", "-".into())])).note_stream(),
            Stream::Stderr
        );
        let csv_out = ResultFiles::of([("csv", "-".into())]);
        let on_stdout = Outputs {
            files: &csv_out,
            text: Stream::Stderr,
        };
        assert_eq!(on_stdout.note_stream(), Stream::Stderr);
        // A file that cannot be written is named.
        let full = ResultFiles::of([("json", "/dev/full".into())]);
        let e = emit(
            &Fixed,
            Outputs {
                files: &full,
                text: Stream::Stderr,
            },
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("/dev/full"), "{e:#}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
