//! `ftrace`: capture a systrace-format trace around a command, convert it for Perfetto and
//! chrome://tracing, write markers from scripts, and time a marker write.
//!
//! Exit status: 0 ok; 1 failed (trace invalid or empty, a setting not restored); 2 usage or
//! setup error (bad arguments, not root, tracefs not mounted, unknown event, buffer refused, a
//! command that cannot run, an output that cannot be written); 3 the kernel has no tracefs.
//! `record` otherwise ends with its command's status (128 + N after signal N). Every error is
//! one line on stderr starting `ftrace: `.

use std::ffi::OsString;
use std::io::{BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::builder::Styles;
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use ftrace::error::{excerpt, printable, shown};
use ftrace::exit_code;
use ftrace::output::OutputFile;
use ftrace::record::RecordOptions;

#[derive(Debug, Parser)]
#[command(
    name = "ftrace",
    version,
    about = "Capture and convert systrace-format traces with socbench's trace markers."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Record a text trace (systrace format) while COMMAND runs, then restore tracefs.
    Record(RecordArgs),
    /// Convert a text trace to Chrome trace-event JSON and check it.
    Convert(ConvertArgs),
    /// Write trace markers: a sequence of `begin NAME`, `end`, `counter NAME VALUE`,
    /// `instant NAME` and `sleep MS`, from one process.
    Mark(MarkArgs),
    /// Print the cost of one marker write with tracing on and off, next to a null syscall.
    BenchMarker(BenchArgs),
}

#[derive(Debug, Args)]
struct RecordArgs {
    /// File the trace is written to.
    #[arg(short, long, value_name = "FILE", default_value = "trace.txt")]
    output: PathBuf,
    /// Ring buffer size per CPU in KiB, at least 1; the current size is kept when not given.
    #[arg(long, value_name = "N", value_parser = buffer_kb)]
    buffer_kb: Option<u64>,
    /// Kernel event to record as GROUP/NAME, e.g. sched/sched_switch or power/cpu_frequency.
    /// Repeat for several.
    #[arg(long = "event", value_name = "GROUP/NAME", value_parser = event_name)]
    events: Vec<String>,
    /// Trace clock to use (one of tracefs trace_clock); the current clock is kept when not given.
    #[arg(long, value_name = "CLOCK", value_parser = clock_name)]
    clock: Option<String>,
    /// Mount tracefs on /sys/kernel/tracing when it is not mounted (root only).
    #[arg(long)]
    mount: bool,
    /// The command to trace and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

#[derive(Debug, Args)]
struct ConvertArgs {
    /// Write Chrome trace-event JSON (the only output format).
    #[arg(long)]
    json: bool,
    /// Text trace to read, as written by `ftrace record` or tracefs `trace`.
    input: PathBuf,
    /// JSON file to write.
    output: PathBuf,
}

#[derive(Debug, Args)]
struct MarkArgs {
    /// Also run the sequence in N forked children at once, after the calling process.
    #[arg(long, value_name = "N", default_value_t = 0)]
    children: usize,
    /// Write to this file instead of tracefs trace_marker.
    #[arg(long, value_name = "PATH")]
    marker: Option<PathBuf>,
    /// Print {"pid": .., "children": [..]} on stdout.
    #[arg(long)]
    json: bool,
    /// Operations, e.g. `begin phase counter n 4 end`.
    #[arg(
        value_name = "OP",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    ops: Vec<String>,
}

#[derive(Debug, Args)]
struct BenchArgs {
    /// Calls per round, at least 1.
    #[arg(long, default_value_t = 2000, value_parser = at_least_one)]
    calls: usize,
    /// Rounds, at least 1; the median round is reported.
    #[arg(long, default_value_t = 21, value_parser = at_least_one)]
    rounds: usize,
}

/// `--buffer-kb`: at least 1 KiB, and few enough that the size in bytes fits the kernel's
/// `unsigned long` (the kernel multiplies by 1024 and would wrap to a small buffer).
fn buffer_kb(text: &str) -> Result<u64, String> {
    let kb: u64 = text
        .parse()
        .map_err(|_| "not a whole number of KiB".to_string())?;
    let max = (usize::MAX >> 10) as u64;
    if kb == 0 {
        return Err("a ring buffer of 0 KiB holds no events: give at least 1 KiB per CPU, or leave --buffer-kb out to keep the current size".into());
    }
    if kb > max {
        return Err(format!(
            "more KiB than this machine can address (at most {max})"
        ));
    }
    Ok(kb)
}

/// `--event`: GROUP/NAME as tracefs names events; whether this kernel has it is checked later.
fn event_name(text: &str) -> Result<String, String> {
    if ftrace::record::well_formed_event(text) {
        Ok(text.to_string())
    } else {
        Err(
            "expected GROUP/NAME as tracefs available_events lists them, e.g. sched/sched_switch"
                .into(),
        )
    }
}

/// `--clock`: one word; whether this kernel has it is checked later.
fn clock_name(text: &str) -> Result<String, String> {
    let word = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if word {
        Ok(text.to_string())
    } else {
        Err("expected a clock name as tracefs trace_clock lists them, e.g. global or mono".into())
    }
}

/// A count that must be at least 1.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("not a whole number".into()),
    }
}

/// Bad arguments found after parsing (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Usage(String);

fn main() -> ExitCode {
    let cli = match parse_args() {
        Ok(cli) => cli,
        Err(err)
            if matches!(
                err.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
            ) =>
        {
            let _ = err.print();
            return ExitCode::from(exit_code::OK as u8);
        }
        Err(err) => {
            eprintln!("ftrace: {}", usage_line(&err));
            return ExitCode::from(exit_code::USAGE as u8);
        }
    };
    let code = match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("ftrace: {}", printable(&message(&err)));
            if let Some(e) = err.downcast_ref::<ftrace::Error>() {
                e.exit_code()
            } else if err.downcast_ref::<Usage>().is_some() {
                exit_code::USAGE
            } else {
                exit_code::FAILED
            }
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The command line, parsed without styles: a usage message is then clap's text exactly,
/// with any escape character of the user's arguments still there to be shown escaped.
fn parse_args() -> Result<Cli, clap::Error> {
    let matches = Cli::command().styles(Styles::plain()).try_get_matches()?;
    Cli::from_arg_matches(&matches)
}

/// Longest usage message printed, in characters; arguments can be long.
const USAGE_LINE_MAX: usize = 300;

/// clap's complaint as one line ending in "(see --help)", as the other socbench tools print
/// it: the message before clap's tip, usage and help hint, its indented list lines joined,
/// control characters (from the arguments quoted) escaped and the length capped.
fn usage_line(err: &clap::Error) -> String {
    if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        return format!(
            "a subcommand is missing, one of: {} (see --help)",
            names.join(", ")
        );
    }
    let text = err.render().ansi().to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    let end = ["\n\n  tip:", "\n\nUsage:", "\n\nFor more information"]
        .iter()
        .filter_map(|tail| text.find(tail))
        .min()
        .unwrap_or(text.len());
    // clap indents the lines of a list ("the following required arguments were not provided:").
    let message = text[..end].trim().replace("\n  ", " ");
    let message = printable(&message);
    let mut line: String = message.chars().take(USAGE_LINE_MAX).collect();
    if line.len() < message.len() {
        line.push_str("...");
    }
    if line.is_empty() {
        line.push_str("invalid arguments");
    }
    line.push_str(" (see --help)");
    line
}

/// The error and its causes on one line; ftrace errors already name their cause.
fn message(err: &anyhow::Error) -> String {
    let mut parts = Vec::new();
    for cause in err.chain() {
        parts.push(cause.to_string());
        if cause.is::<ftrace::Error>() {
            break;
        }
    }
    parts.join(": ")
}

fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Record(args) => record(args),
        Command::Convert(args) => convert(args),
        Command::Mark(args) => mark(args),
        Command::BenchMarker(args) => {
            let report = ftrace::bench::measure(args.calls, args.rounds)?;
            print_stdout(&ftrace::bench::render(&report, args.calls, args.rounds))?;
            Ok(exit_code::OK)
        }
    }
}

fn record(args: RecordArgs) -> Result<i32> {
    let opts = RecordOptions {
        output: args.output,
        buffer_kb: args.buffer_kb,
        events: args.events,
        clock: args.clock,
        mount: args.mount,
        command: args.command,
    };
    let rec = ftrace::record::record(&opts)?;
    eprintln!(
        "ftrace: wrote {} ({} bytes); tracefs settings restored",
        shown(&rec.output),
        rec.bytes
    );
    if let Some((kept, written)) = rec.entries.filter(|_| rec.overflowed()) {
        eprintln!(
            "ftrace: the ring buffer wrapped: {kept} of {written} events kept; pass a larger --buffer-kb"
        );
    }
    let code = rec.exit_code();
    if let Some(sig) = rec.signal {
        eprintln!("ftrace: stopped by signal {sig}");
    } else if code != 0 {
        eprintln!("ftrace: the command exited with status {code}");
    }
    Ok(code)
}

fn convert(args: ConvertArgs) -> Result<i32> {
    if !args.json {
        bail!(Usage(
            "choose the output format: ftrace convert --json IN OUT".into()
        ));
    }
    check_input(&args.input)?;
    refuse_same_file(&args.input, &args.output)?;
    let bytes = std::fs::read(&args.input)
        .map_err(|e| Usage(format!("{}: cannot read: {e}", shown(&args.input))))?;
    let text = String::from_utf8_lossy(&bytes);
    let conv = ftrace::convert::convert(&text);
    if conv.lines == 0 {
        if let Some((line, _)) = conv.unreadable.first() {
            // The raw line, so that invalid UTF-8 shows as the bytes it is.
            let raw = bytes
                .split(|&b| b == b'\n')
                .nth(line - 1)
                .unwrap_or_default();
            bail!(Usage(format!(
                "{}:{line}: not an ftrace text trace line: {}",
                shown(&args.input),
                excerpt(raw, EXCERPT_CHARS)
            )));
        }
        bail!(
            "{}: the trace has no events (an empty capture, or only its header); no JSON written",
            shown(&args.input)
        );
    }
    let output_error = |source| ftrace::Error::Output {
        path: args.output.clone(),
        source,
    };
    // Written beside the output and renamed over it once whole: a write that fails (a full
    // disk) leaves an earlier output as it was.
    let mut file = OutputFile::create(&args.output).map_err(output_error)?;
    let mut out = BufWriter::new(&mut file);
    serde_json::to_writer(&mut out, &conv.trace)
        .map_err(std::io::Error::from)
        .and_then(|()| out.flush())
        .map_err(output_error)?;
    drop(out);
    file.commit().map_err(output_error)?;

    let check = ftrace::convert::validate(&conv.trace);
    eprintln!(
        "ftrace: wrote {}: {} events, {} slices and {} counter events on {} tracks ({} lines, {} markers, {} unreadable lines)",
        shown(&args.output),
        conv.trace.trace_events.len(),
        check.slices.len(),
        check.counters,
        check.tracks,
        conv.lines,
        conv.markers,
        conv.unreadable.len()
    );
    if check.is_ok() {
        return Ok(exit_code::OK);
    }
    eprintln!("ftrace: the trace has {} problems:", check.problems.len());
    for problem in check.problems.iter().take(10) {
        eprintln!("  {problem}");
    }
    Ok(exit_code::FAILED)
}

/// Characters of a bad input line quoted in a message.
const EXCERPT_CHARS: usize = 80;

/// Refuses an input that cannot be a text trace before reading it: a folder, or a device that
/// may never end (`/dev/zero`); a regular file or a pipe is read.
fn check_input(input: &Path) -> Result<()> {
    let meta = std::fs::metadata(input)
        .map_err(|e| Usage(format!("{}: cannot read: {e}", shown(input))))?;
    let kind = meta.file_type();
    let what = if kind.is_file() || kind.is_fifo() {
        return Ok(());
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    };
    bail!(Usage(format!(
        "{}: is {what}; give a text trace file (or a pipe)",
        shown(input)
    )))
}

/// Refuses an output that is the input under another name (`./in`, a link): creating it
/// would empty the trace before it is read.
fn refuse_same_file(input: &Path, output: &Path) -> Result<()> {
    let (Ok(a), Ok(b)) = (std::fs::metadata(input), std::fs::metadata(output)) else {
        return Ok(());
    };
    if (a.dev(), a.ino()) == (b.dev(), b.ino()) {
        bail!(Usage(format!(
            "{}: is the input {}; choose another output file",
            shown(output),
            shown(input)
        )));
    }
    Ok(())
}

fn mark(args: MarkArgs) -> Result<i32> {
    let ops = ftrace::script::parse_ops(&args.ops).map_err(Usage)?;
    let (marker, path) = match args.marker {
        Some(path) => {
            let marker = ftrace::Marker::open(&path)
                .map_err(|e| Usage(format!("{}: cannot open for writing: {e}", shown(&path))))?;
            (marker, path)
        }
        // Markers are this command's whole point: no tracefs is an error, not a warning.
        None => ftrace::Marker::open_tracefs()?,
    };
    ftrace::script::run_ops(&marker, &ops).map_err(|errno| ftrace::Error::Output {
        path: path.clone(),
        source: errno.into(),
    })?;
    let children = if args.children > 0 {
        ftrace::script::run_in_children(&marker, &ops, args.children)
            .context("forked marker children failed")?
    } else {
        Vec::new()
    };
    if args.json {
        let value = serde_json::json!({ "pid": std::process::id(), "children": children });
        print_stdout(&format!("{value}\n"))?;
    }
    Ok(exit_code::OK)
}

/// Prints on stdout; a stdout that cannot be written (a closed pipe, `/dev/full`) is an
/// output error rather than a panic.
fn print_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| ftrace::Error::Output {
            path: PathBuf::from("(stdout)"),
            source,
        })?;
    Ok(())
}
