//! Reading the lines of a text trace: the event line itself, the atrace record a marker line
//! carries, and the two kernel events the converter draws (`sched_switch`, `cpu_frequency`).
//! [`Line`] and [`Atrace`] display as the kernel and atrace write them, so that what is parsed
//! can be written back and parsed again to the same value.

use std::fmt;

/// One event line of a text trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    /// Task name (`<...>` when the kernel had not saved it).
    pub task: &'a str,
    /// Thread id of the task that wrote the event.
    pub tid: u32,
    /// Its process id, when the trace has the tgid column (`-------` reads as none).
    pub tgid: Option<u32>,
    /// CPU the event was written on.
    pub cpu: u32,
    /// Timestamp in nanoseconds of the trace clock.
    pub ts_ns: u64,
    /// Event name, e.g. `tracing_mark_write` or `sched_switch`.
    pub function: &'a str,
    /// Everything after `function: `.
    pub details: &'a str,
}

/// Parses one event line; `None` for headers, blank and unrecognised lines.
pub fn parse_line(line: &str) -> Option<Line<'_>> {
    if line.trim_start().starts_with('#') {
        return None;
    }
    // The task name may itself hold brackets: try each `[` until one leads to a full parse.
    for (at, _) in line.match_indices('[') {
        if let Some(parsed) = parse_line_at(line, at) {
            return Some(parsed);
        }
    }
    None
}

fn parse_line_at(line: &str, bracket: usize) -> Option<Line<'_>> {
    let after = &line[bracket + 1..];
    let close = after.find(']')?;
    let cpu: u32 = parse_digits(&after[..close])?;
    let (ts_ns, function, details) = parse_after_cpu(&after[close + 1..])?;

    let mut head = line[..bracket].trim_end();
    let mut tgid = None;
    if let Some(inner) = head.strip_suffix(')') {
        let open = inner.rfind('(')?;
        let column = inner[open + 1..].trim();
        if !column.chars().all(|c| c == '-') {
            tgid = Some(parse_digits(column)?);
        }
        head = inner[..open].trim_end();
    }
    let (task, tid) = head.rsplit_once('-')?;
    Some(Line {
        task: task.trim_start(),
        tid: parse_digits(tid)?,
        tgid,
        cpu,
        ts_ns,
        function,
        details,
    })
}

/// `[flags] TIMESTAMP: FUNCTION: DETAILS` after the CPU column.
fn parse_after_cpu(rest: &str) -> Option<(u64, &str, &str)> {
    let rest = rest.trim_start();
    let (first, tail) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let (ts, tail) = match first.strip_suffix(':').and_then(parse_timestamp) {
        Some(ts) => (ts, tail),
        None => {
            // `first` was the flags column.
            let tail = tail.trim_start();
            let (ts, tail) = tail.split_once(char::is_whitespace).unwrap_or((tail, ""));
            (parse_timestamp(ts.strip_suffix(':')?)?, tail)
        }
    };
    let tail = tail.trim_start();
    let (function, details) = match tail.split_once(": ") {
        Some((f, d)) => (f, d),
        None => (tail.strip_suffix(':')?, ""),
    };
    if function.is_empty() || function.contains(char::is_whitespace) {
        return None;
    }
    Some((ts, function, details))
}

/// `208.091172` (seconds) to nanoseconds; a bare integer (counter clocks) is taken as is.
fn parse_timestamp(text: &str) -> Option<u64> {
    match text.split_once('.') {
        None => parse_digits(text),
        Some((secs, frac)) => {
            let secs: u64 = parse_digits(secs)?;
            if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let mut ns = 0u64;
            for i in 0..9 {
                let digit = frac.as_bytes().get(i).map_or(0, |b| u64::from(b - b'0'));
                ns = ns * 10 + digit;
            }
            secs.checked_mul(1_000_000_000)?.checked_add(ns)
        }
    }
}

fn parse_digits<T: std::str::FromStr>(text: &str) -> Option<T> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The line as tracefs `trace` prints it: task and tid, the tgid column when known, the CPU,
/// a flags column, the timestamp in seconds (microseconds as the kernel prints them, or
/// nanoseconds when the value has them), then `function: details`.
impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:>16}-{:<7} ", self.task, self.tid)?;
        if let Some(tgid) = self.tgid {
            write!(f, "({tgid:>7}) ")?;
        }
        write!(f, "[{:03}] ..... ", self.cpu)?;
        let (secs, ns) = (self.ts_ns / 1_000_000_000, self.ts_ns % 1_000_000_000);
        if ns % 1000 == 0 {
            write!(f, "{secs:5}.{:06}", ns / 1000)?;
        } else {
            write!(f, "{secs:5}.{ns:09}")?;
        }
        write!(f, ": {}: {}", self.function, self.details)
    }
}

/// An atrace record read back from a marker line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Atrace<'a> {
    /// `B|pid|name`
    Begin {
        /// Process id in the record.
        pid: u32,
        /// Slice name.
        name: &'a str,
    },
    /// `E|pid` (or a bare `E`).
    End {
        /// Process id in the record, if any.
        pid: Option<u32>,
    },
    /// `C|pid|name|value`
    Counter {
        /// Process id in the record.
        pid: u32,
        /// Counter name.
        name: &'a str,
        /// Counter value.
        value: i64,
    },
    /// `I|pid|name`
    Instant {
        /// Process id in the record.
        pid: u32,
        /// Event name.
        name: &'a str,
    },
    /// Anything else written to trace_marker.
    Text(&'a str),
}

/// The record as atrace writes it to trace_marker.
impl fmt::Display for Atrace<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atrace::Begin { pid, name } => write!(f, "B|{pid}|{name}"),
            Atrace::End { pid: Some(pid) } => write!(f, "E|{pid}"),
            Atrace::End { pid: None } => write!(f, "E"),
            Atrace::Counter { pid, name, value } => write!(f, "C|{pid}|{name}|{value}"),
            Atrace::Instant { pid, name } => write!(f, "I|{pid}|{name}"),
            Atrace::Text(text) => write!(f, "{text}"),
        }
    }
}

/// Reads a marker's text as an atrace record.
pub fn parse_atrace(text: &str) -> Atrace<'_> {
    let text = text.trim_end_matches(['\n', '\0']);
    let mut fields = text.splitn(3, '|');
    let (Some(kind), pid) = (fields.next(), fields.next().and_then(parse_digits::<u32>)) else {
        return Atrace::Text(text);
    };
    let rest = fields.next();
    match (kind, pid, rest) {
        ("B", Some(pid), name) => Atrace::Begin {
            pid,
            name: name.unwrap_or(""),
        },
        ("E", pid, _) => Atrace::End { pid },
        // Fields after the name are ignored, and so is what a writer may end the name with as
        // it would end the record; an empty name is not an instant.
        ("I", Some(pid), Some(rest)) if !instant_name(rest).is_empty() => Atrace::Instant {
            pid,
            name: instant_name(rest),
        },
        ("C", Some(pid), Some(rest)) => {
            // A fifth field (Chromium's category) is ignored.
            let mut parts = rest.split('|');
            match (
                parts.next(),
                parts.next().and_then(|v| v.parse::<i64>().ok()),
            ) {
                (Some(name), Some(value)) if !name.is_empty() => {
                    Atrace::Counter { pid, name, value }
                }
                _ => Atrace::Text(text),
            }
        }
        _ => Atrace::Text(text),
    }
}

/// The name field of an instant's `name|...` text.
fn instant_name(rest: &str) -> &str {
    rest.split('|')
        .next()
        .unwrap_or(rest)
        .trim_end_matches(['\n', '\0'])
}

/// The marker text of a line, if it is a trace_marker write.
pub fn marker_text<'a>(line: &Line<'a>) -> Option<&'a str> {
    match line.function {
        "tracing_mark_write" | "0" => Some(line.details),
        // Some tools print marker writes as `print` events, with the writer in front.
        "print" => Some(
            line.details
                .strip_prefix("tracing_mark_write: ")
                .unwrap_or(line.details),
        ),
        _ => None,
    }
}

/// What a `sched_switch` line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Switch<'a> {
    pub(super) next_comm: &'a str,
    pub(super) next_pid: u32,
}

fn field_between<'a>(text: &'a str, key: &str, next_key: &str) -> Option<&'a str> {
    let start = text.find(key)? + key.len();
    let rest = &text[start..];
    Some(match rest.find(next_key) {
        Some(end) => &rest[..end],
        None => rest.split_ascii_whitespace().next().unwrap_or(""),
    })
}

pub(super) fn parse_switch(details: &str) -> Option<Switch<'_>> {
    let next = &details[details.find("==>")?..];
    Some(Switch {
        next_comm: field_between(next, "next_comm=", " next_pid=")?,
        next_pid: field_between(next, "next_pid=", " ")?.parse().ok()?,
    })
}

pub(super) fn parse_cpu_frequency(details: &str) -> Option<(u64, u32)> {
    let state = field_between(details, "state=", " ")?.parse().ok()?;
    let cpu = field_between(details, "cpu_id=", " ")?.parse().ok()?;
    Some((state, cpu))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_with_tgid_column() {
        let line = parse_line(
            "            bash-5151    (   5151) [000] ...1.   210.415171: tracing_mark_write: B|4490|hello x",
        )
        .unwrap();
        assert_eq!(
            line,
            Line {
                task: "bash",
                tid: 5151,
                tgid: Some(5151),
                cpu: 0,
                ts_ns: 210_415_171_000,
                function: "tracing_mark_write",
                details: "B|4490|hello x",
            }
        );
    }

    #[test]
    fn line_without_tgid_and_odd_task_names() {
        let line = parse_line(
            " memfd:sealed-91-4489 [001] d..2.   210.422811: sched_switch: prev_comm=a prev_pid=1",
        )
        .unwrap();
        assert_eq!(
            (line.task, line.tid, line.tgid, line.cpu),
            ("memfd:sealed-91", 4489, None, 1)
        );
        let line = parse_line(
            "          <idle>-0       (-------) [000] d..2.   210.422776: sched_switch: x",
        )
        .unwrap();
        assert_eq!((line.task, line.tid, line.tgid), ("<idle>", 0, None));
        let line =
            parse_line("  my [weird] task-77  [003] ....  5.000000001: print: B|77|x").unwrap();
        assert_eq!(
            (line.task, line.tid, line.cpu, line.ts_ns),
            ("my [weird] task", 77, 3, 5_000_000_001)
        );
    }

    #[test]
    fn line_without_flags_and_with_counter_clock() {
        let line =
            parse_line("  bw_mem-1234  [001]  12345.678901: tracing_mark_write: E|1234").unwrap();
        assert_eq!((line.ts_ns, line.details), (12_345_678_901_000, "E|1234"));
        let line =
            parse_line("  bw_mem-1234  [001] .... 99887766: tracing_mark_write: E|1234").unwrap();
        assert_eq!(line.ts_ns, 99_887_766);
    }

    #[test]
    fn headers_and_junk_are_not_lines() {
        assert_eq!(parse_line("# tracer: nop"), None);
        assert_eq!(parse_line(""), None);
        assert_eq!(parse_line("hello [1] world"), None);
        assert_eq!(parse_line("CPU:1 [LOST 12 EVENTS]"), None);
    }

    #[test]
    fn atrace_records() {
        assert_eq!(
            parse_atrace("B|12|rep cpu=1"),
            Atrace::Begin {
                pid: 12,
                name: "rep cpu=1"
            }
        );
        assert_eq!(
            parse_atrace("B|12|a|b"),
            Atrace::Begin {
                pid: 12,
                name: "a|b"
            }
        );
        assert_eq!(parse_atrace("E|12"), Atrace::End { pid: Some(12) });
        assert_eq!(parse_atrace("E"), Atrace::End { pid: None });
        assert_eq!(parse_atrace("E|12|name"), Atrace::End { pid: Some(12) });
        assert_eq!(
            parse_atrace("C|12|mb|-5|cat"),
            Atrace::Counter {
                pid: 12,
                name: "mb",
                value: -5
            }
        );
        assert_eq!(
            parse_atrace("I|12|tick\n"),
            Atrace::Instant {
                pid: 12,
                name: "tick"
            }
        );
        assert_eq!(parse_atrace("C|12|mb|x"), Atrace::Text("C|12|mb|x"));
        assert_eq!(parse_atrace("hello"), Atrace::Text("hello"));
        assert_eq!(parse_atrace("B|x|y"), Atrace::Text("B|x|y"));
    }

    #[test]
    fn lines_display_in_the_kernel_format() {
        let text = "            bash-5151    (   5151) [000] ..... 210.415171: tracing_mark_write: B|4490|hello x";
        let line = parse_line(text).unwrap();
        assert_eq!(
            line.to_string(),
            "            bash-5151    (   5151) [000] .....   210.415171: tracing_mark_write: B|4490|hello x"
        );
        assert_eq!(parse_line(&line.to_string()), Some(line));
        let line = parse_line("  my [weird] task-77  [003] ....  5.000000001: print: x").unwrap();
        assert_eq!(
            line.to_string(),
            " my [weird] task-77      [003] .....     5.000000001: print: x"
        );
        assert_eq!(parse_line(&line.to_string()), Some(line));
    }

    #[test]
    fn atrace_records_display_as_written() {
        for text in [
            "B|12|rep cpu=1",
            "E|12",
            "E",
            "C|12|mb|-5",
            "I|12|tick",
            "hello",
        ] {
            assert_eq!(parse_atrace(text).to_string(), text);
        }
        // Fields past the ones read are not kept.
        assert_eq!(parse_atrace("C|12|mb|-5|cat").to_string(), "C|12|mb|-5");
        // An instant needs a name.
        assert_eq!(parse_atrace("I|1||x"), Atrace::Text("I|1||x"));
        assert_eq!(parse_atrace("I|1|\n|x"), Atrace::Text("I|1|\n|x"));
        assert_eq!(
            parse_atrace("I|1|a\n|x"),
            Atrace::Instant { pid: 1, name: "a" }
        );
    }

    #[test]
    fn print_events_carry_markers() {
        let line =
            parse_line(" sh-9 [000] ...1 1.000000: print: tracing_mark_write: B|9|x").unwrap();
        assert_eq!(marker_text(&line), Some("B|9|x"));
        let line = parse_line(" sh-9 [000] ...1 1.000000: sched_waking: comm=x").unwrap();
        assert_eq!(marker_text(&line), None);
    }
}
