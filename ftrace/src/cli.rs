//! ftrace's command line: its subcommands, their options, the checks of option values, and
//! clap's complaints shown as the one line every socbench tool prints.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};

use foundation::error::printable;

#[derive(Debug, Parser)]
#[command(
    name = "ftrace",
    version,
    about = "Capture and convert systrace-format traces with socbench's trace markers."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// ftrace's subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
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

/// `ftrace record`'s options.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// File the trace is written to.
    #[arg(short, long, value_name = "FILE", default_value = "trace.txt")]
    pub output: PathBuf,
    /// Ring buffer size per CPU in KiB, at least 1; the current size is kept when not given.
    #[arg(long, value_name = "N", value_parser = buffer_kb)]
    pub buffer_kb: Option<u64>,
    /// Kernel event to record as GROUP/NAME, e.g. sched/sched_switch or power/cpu_frequency.
    /// Repeat for several.
    #[arg(long = "event", value_name = "GROUP/NAME", value_parser = event_name)]
    pub events: Vec<String>,
    /// Trace clock to use (one of tracefs trace_clock); the current clock is kept when not given.
    #[arg(long, value_name = "CLOCK", value_parser = clock_name)]
    pub clock: Option<String>,
    /// Mount tracefs on /sys/kernel/tracing when it is not mounted (root only).
    #[arg(long)]
    pub mount: bool,
    /// The command to trace and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// `ftrace convert`'s options.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Write Chrome trace-event JSON (the only output format).
    #[arg(long)]
    pub json: bool,
    /// Text trace to read, as written by `ftrace record` or tracefs `trace`.
    pub input: PathBuf,
    /// JSON file to write.
    pub output: PathBuf,
}

/// `ftrace mark`'s options.
#[derive(Debug, Args)]
pub struct MarkArgs {
    /// Also run the sequence in N forked children at once, after the calling process.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub children: usize,
    /// Write to this file instead of tracefs trace_marker.
    #[arg(long, value_name = "PATH")]
    pub marker: Option<PathBuf>,
    /// Print {"pid": .., "children": [..]} on stdout.
    #[arg(long)]
    pub json: bool,
    /// Operations, e.g. `begin phase counter n 4 end`.
    #[arg(
        value_name = "OP",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub ops: Vec<String>,
}

/// `ftrace bench-marker`'s options.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Calls per round, at least 1.
    #[arg(long, default_value_t = 2000, value_parser = at_least_one)]
    pub calls: usize,
    /// Rounds, at least 1; the median round is reported.
    #[arg(long, default_value_t = 21, value_parser = at_least_one)]
    pub rounds: usize,
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

/// Longest usage message printed, in characters; arguments can be long.
const USAGE_LINE_MAX: usize = 300;

/// clap's complaint as one line ending in "(see --help)", as the other socbench tools print
/// it: the message before clap's tip, usage and help hint, its indented list lines joined,
/// control characters (from the arguments quoted) escaped and the length capped.
pub fn usage_line(err: &clap::Error) -> String {
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
