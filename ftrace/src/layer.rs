//! A `tracing_subscriber` layer that mirrors spans and counter events into trace_marker.
//!
//! Conventions:
//! - **Spans** become slices: entering a span writes `B|pid|<label>`, exiting writes `E|pid`.
//!   The label is the span name followed by its fields as `key=value`, e.g.
//!   `info_span!("rep", child = 1, cpu = 3, n = 4)` gives `rep child=1 cpu=3 n=4`. Strings are
//!   written without quotes, other values with their `Debug` form. The label is built when the
//!   span is created (or a field is recorded later) and kept in the span's extensions, so
//!   entering and exiting allocate nothing.
//! - **Counters** are events with a string field `counter` (the name) and a numeric field
//!   `value`: `info!(counter = "mb_per_s", value = 12345)` writes `C|pid|mb_per_s|12345`.
//!   Integers are written as `i64` (u64 above `i64::MAX` saturates), floats are rounded,
//!   booleans are 0 or 1. [`crate::counter`] does the same without going through `tracing`.
//! - **Instants** are events with a string field `instant`: `info!(instant = "fault")` writes
//!   `I|pid|fault`.
//! - Other events write nothing.
//!
//! What reaches the layer is decided by the filters: give it its own per-layer filter (as
//! below) so that a quiet `RUST_LOG` for the console does not also hide the phases from the
//! trace.
//!
//! ```no_run
//! use tracing_subscriber::prelude::*;
//! use tracing_subscriber::{EnvFilter, filter::LevelFilter, fmt};
//!
//! let trace = std::env::var_os("BENCHMP_TRACE").is_some_and(|v| v == "1");
//! tracing_subscriber::registry()
//!     .with(fmt::layer().with_writer(std::io::stderr).with_filter(EnvFilter::from_default_env()))
//!     // Option<Layer> is a layer: None when tracing is off.
//!     .with(trace.then(|| ftrace::layer::MarkerLayer::new().with_filter(LevelFilter::TRACE)))
//!     .init();
//!
//! let rep = tracing::info_span!("rep", child = 0, cpu = 2, n = 1).entered();
//! tracing::info!(counter = "mb_per_s", value = 11_500);
//! drop(rep);
//! ```

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use crate::marker::Marker;

/// Writes B/E markers for spans and C/I markers for counter and instant events.
#[derive(Debug)]
pub struct MarkerLayer {
    target: Target,
}

#[derive(Debug)]
enum Target {
    Global(&'static Marker),
    Owned(Marker),
}

impl Default for MarkerLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl MarkerLayer {
    /// A layer on the process-wide writer ([`Marker::global`]), which it opens now so that
    /// processes forked later share it.
    pub fn new() -> Self {
        MarkerLayer {
            target: Target::Global(Marker::global()),
        }
    }

    /// A layer writing through `marker` (tests, or another trace_marker).
    pub fn with_marker(marker: Marker) -> Self {
        MarkerLayer {
            target: Target::Owned(marker),
        }
    }

    fn marker(&self) -> &Marker {
        match &self.target {
            Target::Global(m) => m,
            Target::Owned(m) => m,
        }
    }
}

/// A span's fields and the label written on enter.
#[derive(Debug)]
struct Label {
    name: &'static str,
    fields: Vec<(&'static str, String)>,
    text: String,
}

impl Label {
    fn render(&mut self) {
        self.text.clear();
        self.text.push_str(self.name);
        for (key, value) in &self.fields {
            let _ = write!(self.text, " {key}={value}");
        }
    }

    fn set(&mut self, field: &Field, value: String) {
        match self.fields.iter_mut().find(|(k, _)| *k == field.name()) {
            Some((_, old)) => *old = value,
            None => self.fields.push((field.name(), value)),
        }
    }
}

impl Visit for Label {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.set(field, format!("{value:?}"));
    }
}

/// The counter or instant an event carries.
#[derive(Debug, Default)]
struct EventFields {
    counter: Option<String>,
    instant: Option<String>,
    value: Option<i64>,
}

impl Visit for EventFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "counter" => self.counter = Some(value.to_string()),
            "instant" => self.instant = Some(value.to_string()),
            _ => {}
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if field.name() == "value" {
            self.value = Some(value);
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.record_i64(field, i64::try_from(value).unwrap_or(i64::MAX));
    }

    fn record_i128(&mut self, field: &Field, value: i128) {
        let clamped = value.clamp(i128::from(i64::MIN), i128::from(i64::MAX));
        self.record_i64(field, clamped as i64);
    }

    fn record_u128(&mut self, field: &Field, value: u128) {
        self.record_i64(field, i64::try_from(value).unwrap_or(i64::MAX));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        // `as` saturates and maps NaN to 0.
        self.record_i64(field, value.round() as i64);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.record_i64(field, i64::from(value));
    }

    fn record_debug(&mut self, _field: &Field, _value: &dyn fmt::Debug) {}
}

impl<S> Layer<S> for MarkerLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut extensions = span.extensions_mut();
        // Extensions are shared by all layers: another MarkerLayer has built the same label.
        if extensions.get_mut::<Label>().is_some() {
            return;
        }
        let mut label = Label {
            name: attrs.metadata().name(),
            fields: Vec::new(),
            text: String::new(),
        };
        attrs.record(&mut label);
        label.render();
        extensions.insert(label);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut extensions = span.extensions_mut();
        if let Some(label) = extensions.get_mut::<Label>() {
            values.record(label);
            label.render();
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let marker = self.marker();
        if !marker.is_enabled() {
            return;
        }
        let Some(span) = ctx.span(id) else { return };
        if let Some(label) = span.extensions().get::<Label>() {
            marker.begin(&label.text);
        }
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        let marker = self.marker();
        if !marker.is_enabled() {
            return;
        }
        let Some(span) = ctx.span(id) else { return };
        // Only spans whose enter wrote a B get an E.
        if span.extensions().get::<Label>().is_some() {
            marker.end();
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let marker = self.marker();
        if !marker.is_enabled() {
            return;
        }
        let mut fields = EventFields::default();
        event.record(&mut fields);
        if let (Some(name), Some(value)) = (&fields.counter, fields.value) {
            marker.counter(name, value);
        }
        if let Some(name) = &fields.instant {
            marker.instant(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use tracing_subscriber::prelude::*;

    /// Runs `body` under a subscriber whose layer writes into a pipe; returns what was written.
    fn capture(body: impl FnOnce()) -> String {
        let (read, write) = nix::unistd::pipe().unwrap();
        let subscriber =
            tracing_subscriber::registry().with(MarkerLayer::with_marker(Marker::from_fd(write)));
        tracing::subscriber::with_default(subscriber, body);
        // The subscriber (and the write end) is dropped by now.
        let mut out = String::new();
        std::fs::File::from(read).read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn spans_become_nested_slices() {
        let pid = std::process::id();
        let got = capture(|| {
            let _outer = tracing::info_span!("calibrate").entered();
            for child in 0..2u32 {
                let _rep = tracing::info_span!("rep", child, cpu = child + 2, n = 4).entered();
            }
        });
        assert_eq!(
            got,
            format!(
                "B|{pid}|calibrateB|{pid}|rep child=0 cpu=2 n=4E|{pid}B|{pid}|rep child=1 cpu=3 n=4E|{pid}E|{pid}"
            )
        );
    }

    #[test]
    fn fields_recorded_later_and_strings_unquoted() {
        let pid = std::process::id();
        let got = capture(|| {
            let span = tracing::info_span!("warmup", mode = "rd", n = tracing::field::Empty);
            span.record("n", 16);
            let _e = span.entered();
        });
        assert_eq!(got, format!("B|{pid}|warmup mode=rd n=16E|{pid}"));
    }

    #[test]
    fn counters_and_instants() {
        let pid = std::process::id();
        let got = capture(|| {
            tracing::info!(counter = "mb_per_s", value = 11_500u64);
            tracing::info!(counter = "ratio", value = 2.6f64);
            tracing::info!(counter = "neg", value = -3i64);
            tracing::info!(instant = "fault");
            tracing::info!("ordinary events write nothing");
            tracing::info!(counter = "no value");
        });
        assert_eq!(
            got,
            format!("C|{pid}|mb_per_s|11500C|{pid}|ratio|3C|{pid}|neg|-3I|{pid}|fault")
        );
    }

    #[test]
    fn a_disabled_layer_beside_a_writing_one_changes_nothing() {
        let pid = std::process::id();
        let (read, write) = nix::unistd::pipe().unwrap();
        let disabled = MarkerLayer::with_marker(Marker::disabled());
        assert!(!disabled.marker().is_enabled());
        // Both layers keep a label in the span's shared extensions.
        let subscriber = tracing_subscriber::registry()
            .with(disabled)
            .with(MarkerLayer::with_marker(Marker::from_fd(write)));
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("rep", cpu = 1, n = tracing::field::Empty);
            span.record("n", 2);
            let _e = span.entered();
            tracing::info!(counter = "x", value = 1);
        });
        let mut got = String::new();
        std::fs::File::from(read).read_to_string(&mut got).unwrap();
        assert_eq!(got, format!("B|{pid}|rep cpu=1 n=2C|{pid}|x|1E|{pid}"));
    }
}
