//! Reading ftrace text traces and turning them into Chrome trace-event JSON.
//!
//! The input is what tracefs `trace` prints (and what `ftrace record` saves): a `#` header,
//! then one event per line,
//!
//! ```text
//!           bw_mem-1234    (   1234) [001] ...1.   208.091172: tracing_mark_write: B|1234|rep cpu=1
//!           bw_mem-1234    [001] ....   208.091172: tracing_mark_write: E|1234
//! ```
//!
//! with or without the `(tgid)` column and the flags column. Marker lines (`tracing_mark_write`,
//! or `print` on other kernels) are read as atrace records; `sched_switch` and `cpu_frequency`
//! lines become per-CPU tracks; other lines are skipped.
//!
//! The output opens in ui.perfetto.dev and chrome://tracing: `B`/`E` slices on the track of
//! the writing thread (pid from the marker, tid from the line), `C` counters, `i` instants,
//! and on a pseudo-process "CPUs" one track per CPU with the running task as `X` slices and the
//! CPU frequency as a counter. Timestamps are microseconds from the trace clock. The conversion
//! is faithful: an unmatched `E` stays unmatched so that [`validate`] can report it.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Pid of the pseudo-process holding the per-CPU tracks (above any Linux pid).
pub const CPU_TRACKS_PID: u32 = 0x4000_0000;

/// Tid of CPU `cpu`'s track inside [`CPU_TRACKS_PID`].
pub fn cpu_track_tid(cpu: u32) -> u32 {
    CPU_TRACKS_PID + 1 + cpu
}

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
        ("I", Some(pid), Some(name)) if !name.is_empty() => Atrace::Instant {
            pid,
            name: name.split('|').next().unwrap_or(name),
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

/// One Chrome trace event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChromeEvent {
    /// Slice, counter or metadata name.
    pub name: String,
    /// Phase: B, E, X, i, C or M.
    pub ph: String,
    /// Microseconds.
    pub ts: f64,
    /// Process (track group).
    pub pid: u32,
    /// Thread (track).
    pub tid: u32,
    /// Duration of an `X` slice, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dur: Option<f64>,
    /// Scope of an instant (`t`: thread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s: Option<String>,
    /// Arguments (counter series, slice details).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Map<String, Value>>,
}

/// A Chrome trace-event JSON document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChromeTrace {
    /// All events.
    #[serde(rename = "traceEvents")]
    pub trace_events: Vec<ChromeEvent>,
    /// How the viewer shows times.
    #[serde(rename = "displayTimeUnit", default)]
    pub display_time_unit: String,
}

/// The result of [`convert`].
#[derive(Debug, Clone)]
pub struct Conversion {
    /// The Chrome trace.
    pub trace: ChromeTrace,
    /// Event lines read.
    pub lines: usize,
    /// Marker lines among them.
    pub markers: usize,
    /// Non-header lines that could not be read, as (1-based line number, text).
    pub unreadable: Vec<(usize, String)>,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn event(name: &str, ph: &str, ts_ns: u64, pid: u32, tid: u32) -> ChromeEvent {
    ChromeEvent {
        name: name.to_string(),
        ph: ph.to_string(),
        ts: us(ts_ns),
        pid,
        tid,
        dur: None,
        s: None,
        args: None,
    }
}

/// `key=value` words of a slice label as arguments (numbers where they parse), plus the CPU
/// the marker was written on as `on_cpu`.
fn label_args(label: &str, on_cpu: u32) -> Map<String, Value> {
    let mut args = Map::new();
    for word in label.split_ascii_whitespace() {
        if let Some((key, value)) = word.split_once('=')
            && !key.is_empty()
        {
            let value = match value.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::from(value),
            };
            args.insert(key.to_string(), value);
        }
    }
    args.insert("on_cpu".into(), Value::from(on_cpu));
    args
}

/// What a `sched_switch` line says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Switch<'a> {
    next_comm: &'a str,
    next_pid: u32,
}

fn field_between<'a>(text: &'a str, key: &str, next_key: &str) -> Option<&'a str> {
    let start = text.find(key)? + key.len();
    let rest = &text[start..];
    Some(match rest.find(next_key) {
        Some(end) => &rest[..end],
        None => rest.split_ascii_whitespace().next().unwrap_or(""),
    })
}

fn parse_switch(details: &str) -> Option<Switch<'_>> {
    let next = &details[details.find("==>")?..];
    Some(Switch {
        next_comm: field_between(next, "next_comm=", " next_pid=")?,
        next_pid: field_between(next, "next_pid=", " ")?.parse().ok()?,
    })
}

fn parse_cpu_frequency(details: &str) -> Option<(u64, u32)> {
    let state = field_between(details, "state=", " ")?.parse().ok()?;
    let cpu = field_between(details, "cpu_id=", " ")?.parse().ok()?;
    Some((state, cpu))
}

/// Converts a text trace into Chrome trace-event JSON.
pub fn convert(text: &str) -> Conversion {
    let mut events = Vec::new();
    let mut lines = 0;
    let mut markers = 0;
    let mut unreadable = Vec::new();
    // Open slice names per (pid, tid), so an `E` carries the name of the slice it closes.
    let mut open: HashMap<(u32, u32), Vec<String>> = HashMap::new();
    // Per CPU: the running task (start, name, pid).
    let mut running: BTreeMap<u32, (u64, String, u32)> = BTreeMap::new();
    let mut cpus_seen: BTreeMap<u32, ()> = BTreeMap::new();
    // Task names by (pid, tid), for the metadata events.
    let mut names: BTreeMap<(u32, u32), String> = BTreeMap::new();
    let mut last_ts = 0;

    for (index, raw) in text.lines().enumerate() {
        let Some(line) = parse_line(raw) else {
            if !raw.trim().is_empty() && !raw.trim_start().starts_with('#') {
                unreadable.push((index + 1, raw.to_string()));
            }
            continue;
        };
        lines += 1;
        last_ts = last_ts.max(line.ts_ns);
        let pid_of_line = line.tgid.unwrap_or(line.tid);

        if let Some(marker) = marker_text(&line) {
            markers += 1;
            let record = parse_atrace(marker);
            let pid = match record {
                Atrace::Begin { pid, .. }
                | Atrace::Counter { pid, .. }
                | Atrace::Instant { pid, .. }
                | Atrace::End { pid: Some(pid) } => pid,
                Atrace::End { pid: None } | Atrace::Text(_) => pid_of_line,
            };
            if line.task != "<...>" {
                names
                    .entry((pid, line.tid))
                    .or_insert_with(|| line.task.to_string());
            } else {
                names.entry((pid, line.tid)).or_default();
            }
            let track = (pid, line.tid);
            let mut ev = match record {
                Atrace::Begin { name, .. } => {
                    open.entry(track).or_default().push(name.to_string());
                    let mut ev = event(name, "B", line.ts_ns, pid, line.tid);
                    ev.args = Some(label_args(name, line.cpu));
                    ev
                }
                Atrace::End { .. } => {
                    let name = open.get_mut(&track).and_then(Vec::pop).unwrap_or_default();
                    let mut ev = event(&name, "E", line.ts_ns, pid, line.tid);
                    ev.args = Some(label_args("", line.cpu));
                    ev
                }
                Atrace::Counter { name, value, .. } => {
                    let mut ev = event(name, "C", line.ts_ns, pid, line.tid);
                    let mut args = Map::new();
                    args.insert("value".into(), Value::from(value));
                    ev.args = Some(args);
                    ev
                }
                Atrace::Instant { name, .. } | Atrace::Text(name) => {
                    let mut ev = event(name, "i", line.ts_ns, pid, line.tid);
                    ev.args = Some(label_args("", line.cpu));
                    ev
                }
            };
            if ev.ph == "i" {
                ev.s = Some("t".into());
            }
            events.push(ev);
            continue;
        }

        match line.function {
            "sched_switch" => {
                let Some(switch) = parse_switch(line.details) else {
                    continue;
                };
                cpus_seen.insert(line.cpu, ());
                if let Some(slice) = close_running(&mut running, line.cpu, line.ts_ns) {
                    events.push(slice);
                }
                if switch.next_pid != 0 {
                    let name = format!("{} {}", switch.next_comm, switch.next_pid);
                    running.insert(line.cpu, (line.ts_ns, name, switch.next_pid));
                }
            }
            "cpu_frequency" => {
                let Some((khz, cpu)) = parse_cpu_frequency(line.details) else {
                    continue;
                };
                cpus_seen.insert(cpu, ());
                let mut ev = event(
                    &format!("cpu{cpu} freq"),
                    "C",
                    line.ts_ns,
                    CPU_TRACKS_PID,
                    cpu_track_tid(cpu),
                );
                let mut args = Map::new();
                args.insert("kHz".into(), Value::from(khz));
                ev.args = Some(args);
                events.push(ev);
            }
            _ => {}
        }
    }
    let cpus: Vec<u32> = running.keys().copied().collect();
    for cpu in cpus {
        if let Some(slice) = close_running(&mut running, cpu, last_ts) {
            events.push(slice);
        }
    }

    let mut trace_events = metadata(&names, cpus_seen.keys().copied());
    trace_events.extend(events);
    Conversion {
        trace: ChromeTrace {
            trace_events,
            display_time_unit: "ns".into(),
        },
        lines,
        markers,
        unreadable,
    }
}

fn close_running(
    running: &mut BTreeMap<u32, (u64, String, u32)>,
    cpu: u32,
    now: u64,
) -> Option<ChromeEvent> {
    let (start, name, pid) = running.remove(&cpu)?;
    let mut ev = event(&name, "X", start, CPU_TRACKS_PID, cpu_track_tid(cpu));
    ev.dur = Some(us(now.saturating_sub(start)));
    let mut args = Map::new();
    args.insert("pid".into(), Value::from(pid));
    ev.args = Some(args);
    Some(ev)
}

fn meta(kind: &str, pid: u32, tid: u32, key: &str, value: Value) -> ChromeEvent {
    let mut ev = event(kind, "M", 0, pid, tid);
    let mut args = Map::new();
    args.insert(key.into(), value);
    ev.args = Some(args);
    ev
}

/// Process and thread names, so viewers label the tracks.
fn metadata(
    names: &BTreeMap<(u32, u32), String>,
    cpus: impl Iterator<Item = u32>,
) -> Vec<ChromeEvent> {
    let mut out = Vec::new();
    let mut named_pids = BTreeMap::new();
    for (&(pid, tid), task) in names {
        if task.is_empty() {
            continue;
        }
        // A process is named after its main thread, else after any of its threads.
        let entry = named_pids.entry(pid).or_insert_with(|| task.clone());
        if tid == pid {
            *entry = task.clone();
        }
        out.push(meta(
            "thread_name",
            pid,
            tid,
            "name",
            Value::from(format!("{task} {tid}")),
        ));
    }
    for (pid, task) in named_pids {
        out.push(meta(
            "process_name",
            pid,
            pid,
            "name",
            Value::from(format!("{task} {pid}")),
        ));
    }
    let mut any_cpu = false;
    for cpu in cpus {
        any_cpu = true;
        let tid = cpu_track_tid(cpu);
        out.push(meta(
            "thread_name",
            CPU_TRACKS_PID,
            tid,
            "name",
            Value::from(format!("CPU {cpu}")),
        ));
        out.push(meta(
            "thread_sort_index",
            CPU_TRACKS_PID,
            tid,
            "sort_index",
            Value::from(cpu),
        ));
    }
    if any_cpu {
        out.push(meta(
            "process_name",
            CPU_TRACKS_PID,
            CPU_TRACKS_PID,
            "name",
            Value::from("CPUs"),
        ));
    }
    out
}

/// A B/E pair found by [`validate`].
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// Process id (from the marker).
    pub pid: u32,
    /// Thread that wrote the markers.
    pub tid: u32,
    /// The slice label, e.g. `rep child=1 cpu=3 n=4`.
    pub name: String,
    /// Arguments of the `B` event (label fields and `on_cpu`).
    pub args: Map<String, Value>,
    /// Begin, microseconds.
    pub begin_us: f64,
    /// End, microseconds.
    pub end_us: f64,
    /// Nesting depth on its track, 0 for outermost.
    pub depth: usize,
}

impl Slice {
    /// Duration in microseconds.
    pub fn dur_us(&self) -> f64 {
        self.end_us - self.begin_us
    }

    /// An integer argument, e.g. `cpu` or `on_cpu`.
    pub fn arg_i64(&self, key: &str) -> Option<i64> {
        self.args.get(key).and_then(Value::as_i64)
    }
}

/// What [`validate`] found.
#[derive(Debug, Clone, Default)]
pub struct Validation {
    /// Matched B/E slices, in order of their `B`.
    pub slices: Vec<Slice>,
    /// Distinct (pid, tid) tracks with events.
    pub tracks: usize,
    /// Counter events.
    pub counters: usize,
    /// Everything wrong, one sentence each.
    pub problems: Vec<String>,
}

impl Validation {
    /// No problems found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks a Chrome trace: known phases; finite timestamps; per (pid, tid) track, timestamps
/// never decrease and every `B` has its `E`, properly nested (an `E` that carries a name must
/// close the slice of that name); `X` durations are not negative; counters carry numbers.
pub fn validate(trace: &ChromeTrace) -> Validation {
    let mut result = Validation::default();
    let mut last_ts: HashMap<(u32, u32), f64> = HashMap::new();
    let mut stacks: HashMap<(u32, u32), Vec<(usize, f64)>> = HashMap::new();
    let mut pending: Vec<Option<Slice>> = Vec::new();

    for (index, ev) in trace.trace_events.iter().enumerate() {
        let at = format!(
            "event {index} ({} {:?} pid {} tid {} ts {} us)",
            ev.ph, ev.name, ev.pid, ev.tid, ev.ts
        );
        let track = (ev.pid, ev.tid);
        if ev.ph == "M" {
            continue;
        }
        if !ev.ts.is_finite() || ev.ts < 0.0 {
            result.problems.push(format!(
                "{at}: timestamp is not a finite non-negative number"
            ));
            continue;
        }
        if ev.ph == "C" {
            result.counters += 1;
            let numeric = ev
                .args
                .as_ref()
                .is_some_and(|a| !a.is_empty() && a.values().all(Value::is_number));
            if !numeric {
                result
                    .problems
                    .push(format!("{at}: counter without numeric args"));
            }
            continue;
        }
        let previous = last_ts.insert(track, ev.ts);
        if let Some(prev) = previous
            && ev.ts < prev
        {
            result.problems.push(format!(
                "{at}: timestamp goes back from {prev} us on its track"
            ));
        }
        match ev.ph.as_str() {
            "B" => {
                let stack = stacks.entry(track).or_default();
                stack.push((pending.len(), ev.ts));
                pending.push(Some(Slice {
                    pid: ev.pid,
                    tid: ev.tid,
                    name: ev.name.clone(),
                    args: ev.args.clone().unwrap_or_default(),
                    begin_us: ev.ts,
                    end_us: f64::NAN,
                    depth: stack.len() - 1,
                }));
            }
            "E" => match stacks.get_mut(&track).and_then(Vec::pop) {
                None => result
                    .problems
                    .push(format!("{at}: E without an open B on its track")),
                Some((slot, _)) => {
                    if let Some(slice) = pending[slot].as_mut() {
                        if !ev.name.is_empty() && ev.name != slice.name {
                            result.problems.push(format!(
                                "{at}: E names {:?} but the innermost open slice is {:?}",
                                ev.name, slice.name
                            ));
                        }
                        slice.end_us = ev.ts;
                    }
                }
            },
            "X" => {
                if !ev.dur.is_some_and(|d| d.is_finite() && d >= 0.0) {
                    result
                        .problems
                        .push(format!("{at}: X without a non-negative dur"));
                }
            }
            "i" | "I" => {}
            other => result
                .problems
                .push(format!("{at}: unknown phase {other:?}")),
        }
    }
    for ((pid, tid), stack) in &stacks {
        for (slot, ts) in stack {
            let name = pending[*slot].as_ref().map_or("", |s| s.name.as_str());
            result.problems.push(format!(
                "B {name:?} at {ts} us on pid {pid} tid {tid} has no E"
            ));
            pending[*slot] = None;
        }
    }
    result.problems.sort();
    result.tracks = last_ts.len();
    result.slices = pending.into_iter().flatten().collect();
    result
}

/// Parses Chrome trace JSON text (the schema check) and validates it.
pub fn validate_json(text: &str) -> Result<Validation, serde_json::Error> {
    let trace: ChromeTrace = serde_json::from_str(text)?;
    Ok(validate(&trace))
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
    fn print_events_carry_markers() {
        let line =
            parse_line(" sh-9 [000] ...1 1.000000: print: tracing_mark_write: B|9|x").unwrap();
        assert_eq!(marker_text(&line), Some("B|9|x"));
        let line = parse_line(" sh-9 [000] ...1 1.000000: sched_waking: comm=x").unwrap();
        assert_eq!(marker_text(&line), None);
    }

    #[test]
    fn conversion_and_validation_of_a_small_trace() {
        let text = "\
# tracer: nop
  bench-10  (  10) [001] ...1.   1.000000: tracing_mark_write: B|10|outer
  bench-10  (  10) [001] ...1.   1.000010: tracing_mark_write: B|10|rep cpu=1 n=4
  bench-10  (  10) [001] ...1.   1.000020: tracing_mark_write: C|10|mb|7
  bench-10  (  10) [001] ...1.   1.000030: tracing_mark_write: E|10
  bench-10  (  10) [001] ...1.   1.000040: tracing_mark_write: I|10|done
  bench-10  (  10) [001] ...1.   1.000050: tracing_mark_write: E|10
";
        let conv = convert(text);
        assert_eq!((conv.lines, conv.markers, conv.unreadable.len()), (6, 6, 0));
        let v = validate(&conv.trace);
        assert!(v.is_ok(), "{:?}", v.problems);
        assert_eq!(v.slices.len(), 2);
        assert_eq!(v.slices[0].name, "outer");
        assert_eq!(v.slices[1].name, "rep cpu=1 n=4");
        assert_eq!(v.slices[1].depth, 1);
        assert_eq!(v.slices[1].arg_i64("cpu"), Some(1));
        assert_eq!(v.slices[1].arg_i64("on_cpu"), Some(1));
        assert!((v.slices[1].dur_us() - 20.0).abs() < 1e-6);
        assert_eq!(v.counters, 1);
    }

    #[test]
    fn validator_catches_broken_traces() {
        let trace = |events: Vec<ChromeEvent>| ChromeTrace {
            trace_events: events,
            display_time_unit: "ns".into(),
        };
        let ev = |name: &str, ph: &str, ts: f64, tid: u32| ChromeEvent {
            ts,
            ..event(name, ph, 0, 1, tid)
        };

        let v = validate(&trace(vec![ev("a", "B", 1.0, 1)]));
        assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
        assert!(v.problems[0].contains("has no E"));

        let v = validate(&trace(vec![ev("", "E", 1.0, 1)]));
        assert!(
            v.problems[0].contains("E without an open B"),
            "{:?}",
            v.problems
        );

        // B and E on different threads are different tracks.
        let v = validate(&trace(vec![ev("a", "B", 1.0, 1), ev("", "E", 2.0, 2)]));
        assert_eq!(v.problems.len(), 2, "{:?}", v.problems);

        let v = validate(&trace(vec![ev("a", "B", 2.0, 1), ev("", "E", 1.0, 1)]));
        assert!(v.problems[0].contains("goes back"), "{:?}", v.problems);

        // Crossed slices: a named E must close the innermost slice.
        let v = validate(&trace(vec![
            ev("a", "B", 1.0, 1),
            ev("b", "B", 2.0, 1),
            ev("a", "E", 3.0, 1),
            ev("b", "E", 4.0, 1),
        ]));
        assert_eq!(v.problems.len(), 2, "{:?}", v.problems);

        let v = validate(&trace(vec![
            ev("a", "Q", 1.0, 1),
            ev("c", "C", 1.0, 1),
            ev("x", "X", 1.0, 1),
        ]));
        assert_eq!(v.problems.len(), 3, "{:?}", v.problems);
    }

    #[test]
    fn json_round_trip_and_schema_errors() {
        let conv = convert(
            "  b-3 [000] .... 2.5: tracing_mark_write: B|3|x\n  b-3 [000] .... 2.6: tracing_mark_write: E|3\n",
        );
        let text = serde_json::to_string(&conv.trace).unwrap();
        let v = validate_json(&text).unwrap();
        assert!(v.is_ok(), "{:?}", v.problems);
        assert_eq!(v.slices.len(), 1);
        assert!(validate_json("{\"traceEvents\": [{\"ph\": \"B\"}]}").is_err());
        assert!(validate_json("not json").is_err());
    }
}
