//! Checking a Chrome trace: slices nest and close on their track, time never goes back.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::chrome::{ChromeEvent, ChromeTrace};

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
    let mut checker = Checker::default();
    for (index, ev) in trace.trace_events.iter().enumerate() {
        checker.event(index, ev);
    }
    checker.finish()
}

/// The validation's state while events are read.
#[derive(Debug, Default)]
struct Checker {
    result: Validation,
    /// Last timestamp per (pid, tid) track.
    last_ts: HashMap<(u32, u32), f64>,
    /// Open `B` events per track: their slot in `pending` and timestamp.
    stacks: HashMap<(u32, u32), Vec<(usize, f64)>>,
    /// Slices in order of their `B`; `None` once dropped for want of an `E`.
    pending: Vec<Option<Slice>>,
}

impl Checker {
    fn event(&mut self, index: usize, ev: &ChromeEvent) {
        let at = format!(
            "event {index} ({} {:?} pid {} tid {} ts {} us)",
            ev.ph, ev.name, ev.pid, ev.tid, ev.ts
        );
        let track = (ev.pid, ev.tid);
        if ev.ph == "M" {
            return;
        }
        let problems = &mut self.result.problems;
        if !ev.ts.is_finite() || ev.ts < 0.0 {
            problems.push(format!(
                "{at}: timestamp is not a finite non-negative number"
            ));
            return;
        }
        if ev.ph == "C" {
            self.result.counters += 1;
            let numeric = ev
                .args
                .as_ref()
                .is_some_and(|a| !a.is_empty() && a.values().all(Value::is_number));
            if !numeric {
                problems.push(format!("{at}: counter without numeric args"));
            }
            return;
        }
        let previous = self.last_ts.insert(track, ev.ts);
        if let Some(prev) = previous
            && ev.ts < prev
        {
            problems.push(format!(
                "{at}: timestamp goes back from {prev} us on its track"
            ));
        }
        match ev.ph.as_str() {
            "B" => self.begin(ev),
            "E" => self.end(ev, &at),
            "X" => {
                if !ev.dur.is_some_and(|d| d.is_finite() && d >= 0.0) {
                    problems.push(format!("{at}: X without a non-negative dur"));
                }
            }
            "i" | "I" => {}
            other => problems.push(format!("{at}: unknown phase {other:?}")),
        }
    }

    fn begin(&mut self, ev: &ChromeEvent) {
        let stack = self.stacks.entry((ev.pid, ev.tid)).or_default();
        stack.push((self.pending.len(), ev.ts));
        self.pending.push(Some(Slice {
            pid: ev.pid,
            tid: ev.tid,
            name: ev.name.clone(),
            args: ev.args.clone().unwrap_or_default(),
            begin_us: ev.ts,
            end_us: f64::NAN,
            depth: stack.len() - 1,
        }));
    }

    fn end(&mut self, ev: &ChromeEvent, at: &str) {
        match self.stacks.get_mut(&(ev.pid, ev.tid)).and_then(Vec::pop) {
            None => self
                .result
                .problems
                .push(format!("{at}: E without an open B on its track")),
            Some((slot, _)) => {
                if let Some(slice) = self.pending[slot].as_mut() {
                    if !ev.name.is_empty() && ev.name != slice.name {
                        self.result.problems.push(format!(
                            "{at}: E names {:?} but the innermost open slice is {:?}",
                            ev.name, slice.name
                        ));
                    }
                    slice.end_us = ev.ts;
                }
            }
        }
    }

    /// Reports the slices never closed and keeps the matched ones.
    fn finish(mut self) -> Validation {
        for ((pid, tid), stack) in &self.stacks {
            for (slot, ts) in stack {
                let name = self.pending[*slot].as_ref().map_or("", |s| s.name.as_str());
                self.result.problems.push(format!(
                    "B {name:?} at {ts} us on pid {pid} tid {tid} has no E"
                ));
                self.pending[*slot] = None;
            }
        }
        self.result.problems.sort();
        self.result.tracks = self.last_ts.len();
        self.result.slices = self.pending.into_iter().flatten().collect();
        self.result
    }
}

/// Parses Chrome trace JSON text (the schema check) and validates it.
pub fn validate_json(text: &str) -> Result<Validation, serde_json::Error> {
    let trace: ChromeTrace = serde_json::from_str(text)?;
    Ok(validate(&trace))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::chrome::event;
    use crate::convert::convert;

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
            metadata: Default::default(),
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
