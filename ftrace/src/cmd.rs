//! The bodies of ftrace's subcommands: `record`, `convert` (with its checks of the input and
//! output files), `mark` and `bench-marker`, each returning the exit status.

use std::io::{BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use foundation::output::OutputFile;
use ftrace::error::{excerpt, shown};
use ftrace::exit_code;
use ftrace::record::RecordOptions;

use crate::cli::{BenchArgs, ConvertArgs, MarkArgs, RecordArgs};

/// Bad arguments found after parsing (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(String);

/// `ftrace record`: the trace around the command, what it kept, and the command's status.
pub fn record(args: RecordArgs) -> Result<i32> {
    let opts = RecordOptions {
        output: args.output,
        buffer_kb: args.buffer_kb,
        events: args.events,
        clock: args.clock,
        mount: args.mount,
        command: args.command,
    };
    let rec = ftrace::record::record(&opts)?;
    let lost = match &rec.lost {
        Some(l) => format!("{} events lost", l.total()),
        None => "events lost unknown: no per-CPU stats".to_string(),
    };
    let buffer = rec.buffer_kb.map_or(String::new(), |kb| {
        format!(", ring buffer {kb} KiB per CPU")
    });
    foundation::errln!(
        "ftrace: wrote {} ({} bytes, {lost}{buffer}); tracefs settings restored",
        shown(&rec.output),
        rec.bytes
    );
    if let Some(l) = rec.lost.as_ref().filter(|l| l.total() > 0) {
        foundation::errln!(
            "ftrace: the ring buffer lost {} events ({}); the trace says so in its header: pass a larger --buffer-kb",
            l.total(),
            l.detail()
        );
    } else if let Some((kept, written)) = rec.entries.filter(|_| rec.overflowed()) {
        foundation::errln!(
            "ftrace: the ring buffer wrapped: {kept} of {written} events kept; pass a larger --buffer-kb"
        );
    }
    let code = rec.exit_code();
    if let Some(sig) = rec.signal {
        foundation::errln!("ftrace: stopped by signal {sig}");
    } else if code != 0 {
        foundation::errln!("ftrace: the command exited with status {code}");
    }
    Ok(code)
}

/// `ftrace convert --json`: the text trace as Chrome trace-event JSON, checked once written.
pub fn convert(args: ConvertArgs) -> Result<i32> {
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
    let lost = match conv.lost_events {
        Some(n) => format!(", {n} events lost in the capture"),
        None => String::new(),
    };
    foundation::errln!(
        "ftrace: wrote {}: {} events, {} slices and {} counter events on {} tracks ({} lines, {} markers, {} unreadable lines{lost})",
        shown(&args.output),
        conv.trace.trace_events.len(),
        check.slices.len(),
        check.counters,
        check.tracks,
        conv.lines,
        conv.markers,
        conv.unreadable.len()
    );
    if let Some(n) = conv.lost_events.filter(|&n| n > 0) {
        foundation::errln!(
            "ftrace: warning: the capture lost {n} events (its ring buffer overran): slices may be cut and counters have gaps"
        );
    }
    if check.is_ok() {
        return Ok(exit_code::OK);
    }
    foundation::errln!("ftrace: the trace has {} problems:", check.problems.len());
    for problem in check.problems.iter().take(10) {
        foundation::errln!("  {problem}");
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

/// `ftrace mark`: the operations written as markers, in this process and any children.
pub fn mark(args: MarkArgs) -> Result<i32> {
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

/// `ftrace bench-marker`: the cost of one marker write, tracing on and off, and a null syscall.
pub fn bench_marker(args: &BenchArgs) -> Result<i32> {
    let report = ftrace::bench::measure(args.calls, args.rounds)?;
    print_stdout(&ftrace::bench::render(&report, args.calls, args.rounds))?;
    Ok(exit_code::OK)
}

/// Prints on stdout; a stdout that cannot be written (a closed pipe, `/dev/full`) is an
/// output error rather than a panic.
fn print_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| ftrace::Error::Io {
            path: PathBuf::from("stdout"),
            action: "write the result".into(),
            source,
        })?;
    Ok(())
}
