//! Building the Chrome trace-event document from the parsed lines.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::parse::{
    Atrace, Line, marker_text, parse_atrace, parse_cpu_frequency, parse_line, parse_switch,
};

/// Pid of the pseudo-process holding the per-CPU tracks (above any Linux pid).
pub const CPU_TRACKS_PID: u32 = 0x4000_0000;

/// Tid of CPU `cpu`'s track inside [`CPU_TRACKS_PID`].
pub fn cpu_track_tid(cpu: u32) -> u32 {
    CPU_TRACKS_PID + 1 + cpu
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
    /// About the capture (the trace-event format's free `metadata` object): `lost_events`,
    /// the events its ring buffer lost, where the text trace said.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
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
    /// Events the capture lost: its header's count (`# lost events: N`, written by `ftrace
    /// record`), else the kernel's `[LOST N EVENTS]` lines added up; `None` when the text
    /// says neither.
    pub lost_events: Option<u64>,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

pub(super) fn event(name: &str, ph: &str, ts_ns: u64, pid: u32, tid: u32) -> ChromeEvent {
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

/// Converts a text trace into Chrome trace-event JSON.
pub fn convert(text: &str) -> Conversion {
    let mut builder = Builder::default();
    for (index, raw) in text.lines().enumerate() {
        builder.line(index + 1, raw);
    }
    builder.finish()
}

/// The conversion's state while lines are read.
#[derive(Debug, Default)]
struct Builder {
    events: Vec<ChromeEvent>,
    lines: usize,
    markers: usize,
    unreadable: Vec<(usize, String)>,
    /// Open slice names per (pid, tid), so an `E` carries the name of the slice it closes.
    open: HashMap<(u32, u32), Vec<String>>,
    /// Per CPU: the running task (start, name, pid).
    running: BTreeMap<u32, (u64, String, u32)>,
    cpus_seen: BTreeMap<u32, ()>,
    /// Task names by (pid, tid), for the metadata events.
    names: BTreeMap<(u32, u32), String>,
    last_ts: u64,
    /// The capture header's count of lost events.
    lost_header: Option<u64>,
    /// The kernel's `[LOST N EVENTS]` lines, added up.
    lost_lines: Option<u64>,
}

/// `# lost events: 12 (...)` as 12.
fn lost_from_header(raw: &str) -> Option<u64> {
    let rest = raw.trim_start().strip_prefix(crate::record::LOST_HEADER)?;
    rest.split_ascii_whitespace().next()?.parse().ok()
}

/// `CPU:1 [LOST 12 EVENTS]` as 12.
fn lost_from_line(raw: &str) -> Option<u64> {
    let (_, rest) = raw.split_once("[LOST ")?;
    rest.strip_suffix(" EVENTS]")?.trim().parse().ok()
}

impl Builder {
    /// Reads line `number` (1-based) of the text.
    fn line(&mut self, number: usize, raw: &str) {
        let Some(line) = parse_line(raw) else {
            if let Some(n) = lost_from_header(raw) {
                self.lost_header = Some(n);
            } else if let Some(n) = lost_from_line(raw.trim()) {
                self.lost_lines = Some(self.lost_lines.unwrap_or(0).saturating_add(n));
            } else if !raw.trim().is_empty() && !raw.trim_start().starts_with('#') {
                self.unreadable.push((number, raw.to_string()));
            }
            return;
        };
        self.lines += 1;
        self.last_ts = self.last_ts.max(line.ts_ns);
        if let Some(marker) = marker_text(&line) {
            self.markers += 1;
            self.marker(&line, marker);
            return;
        }
        match line.function {
            "sched_switch" => self.sched_switch(&line),
            "cpu_frequency" => self.cpu_frequency(&line),
            _ => {}
        }
    }

    /// A trace_marker write: an event on the track of the thread that wrote it.
    fn marker(&mut self, line: &Line<'_>, marker: &str) {
        let record = parse_atrace(marker);
        let pid = match record {
            Atrace::Begin { pid, .. }
            | Atrace::Counter { pid, .. }
            | Atrace::Instant { pid, .. }
            | Atrace::End { pid: Some(pid) } => pid,
            Atrace::End { pid: None } | Atrace::Text(_) => line.tgid.unwrap_or(line.tid),
        };
        if line.task != "<...>" {
            self.names
                .entry((pid, line.tid))
                .or_insert_with(|| line.task.to_string());
        } else {
            self.names.entry((pid, line.tid)).or_default();
        }
        let track = (pid, line.tid);
        let mut ev = match record {
            Atrace::Begin { name, .. } => {
                self.open.entry(track).or_default().push(name.to_string());
                let mut ev = event(name, "B", line.ts_ns, pid, line.tid);
                ev.args = Some(label_args(name, line.cpu));
                ev
            }
            Atrace::End { .. } => {
                let name = self
                    .open
                    .get_mut(&track)
                    .and_then(Vec::pop)
                    .unwrap_or_default();
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
        self.events.push(ev);
    }

    /// Closes the CPU's running-task slice and opens the next task's.
    fn sched_switch(&mut self, line: &Line<'_>) {
        let Some(switch) = parse_switch(line.details) else {
            return;
        };
        self.cpus_seen.insert(line.cpu, ());
        if let Some(slice) = close_running(&mut self.running, line.cpu, line.ts_ns) {
            self.events.push(slice);
        }
        if switch.next_pid != 0 {
            let name = format!("{} {}", switch.next_comm, switch.next_pid);
            self.running
                .insert(line.cpu, (line.ts_ns, name, switch.next_pid));
        }
    }

    /// A frequency change as a counter on the CPU's track.
    fn cpu_frequency(&mut self, line: &Line<'_>) {
        let Some((khz, cpu)) = parse_cpu_frequency(line.details) else {
            return;
        };
        self.cpus_seen.insert(cpu, ());
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
        self.events.push(ev);
    }

    /// Closes the tasks still running at the last timestamp and puts the names first.
    fn finish(mut self) -> Conversion {
        let cpus: Vec<u32> = self.running.keys().copied().collect();
        for cpu in cpus {
            if let Some(slice) = close_running(&mut self.running, cpu, self.last_ts) {
                self.events.push(slice);
            }
        }
        let mut trace_events = metadata(&self.names, self.cpus_seen.keys().copied());
        trace_events.extend(self.events);
        let lost_events = self.lost_header.or(self.lost_lines);
        let mut about = Map::new();
        if let Some(n) = lost_events {
            about.insert("lost_events".into(), Value::from(n));
        }
        Conversion {
            trace: ChromeTrace {
                trace_events,
                display_time_unit: "ns".into(),
                metadata: about,
            },
            lines: self.lines,
            markers: self.markers,
            unreadable: self.unreadable,
            lost_events,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_events_come_from_the_header_or_the_kernels_lines() {
        let head = "# tracer: nop\n# lost events: 7 (overrun 7, dropped 0; CPU 1: 7)\n#\n";
        let c = convert(head);
        assert_eq!(c.lost_events, Some(7));
        assert_eq!(c.trace.metadata["lost_events"], 7);
        assert!(c.unreadable.is_empty());
        let c = convert("CPU:1 [LOST 12 EVENTS]\nCPU:0 [LOST 3 EVENTS]\n");
        assert_eq!(c.lost_events, Some(15));
        assert!(c.unreadable.is_empty(), "{:?}", c.unreadable);
        let c = convert("# tracer: nop\n");
        assert_eq!(c.lost_events, None);
        assert!(
            serde_json::to_value(&c.trace)
                .unwrap()
                .get("metadata")
                .is_none()
        );
    }
}
