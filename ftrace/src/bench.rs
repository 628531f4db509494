//! The cost of one marker write, next to a null syscall measured in the same run.
//!
//! Used by `ftrace bench-marker` and `benches/marker_cost.rs`. Variants are timed round-robin
//! (each round times every variant once) so that drift on a shared machine hits them alike;
//! the median round is reported. Timing tracefs needs write access to `tracing_on`; the
//! setting is restored afterwards. Timed-on writes land in the ring buffer like any marker.

use std::hint::black_box;
use std::time::Instant;

use crate::error::Result;
use crate::marker::{Kind, Marker};
use crate::record::{Restore, check_writable, locate};
use crate::tracefs::Setting;

/// One measured variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    /// What was timed.
    pub label: &'static str,
    /// Median over rounds of the mean ns per call.
    pub median_ns: f64,
    /// Fastest round, ns per call.
    pub min_ns: f64,
}

/// Everything measured, and why tracefs variants are missing when they are.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Measured variants; the first is the null-syscall peer.
    pub costs: Vec<Cost>,
    /// Why the tracefs rows were skipped, if they were.
    pub skipped: Option<String>,
}

fn time_per_call(calls: usize, mut body: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        body();
    }
    start.elapsed().as_nanos() as f64 / calls as f64
}

fn summarise(label: &'static str, mut samples: Vec<f64>) -> Cost {
    samples.sort_by(f64::total_cmp);
    Cost {
        label,
        median_ns: samples[samples.len() / 2],
        min_ns: samples[0],
    }
}

/// Times `calls` writes per round, `rounds` rounds, of: getppid(2) (the peer), a disabled
/// marker, and, when tracefs is writable, a marker with tracing off (EBADF) and on.
pub fn measure(calls: usize, rounds: usize) -> Result<Report> {
    let calls = calls.max(1);
    let rounds = rounds.max(1);
    let disabled = Marker::disabled();
    let tracefs = locate(false).and_then(|fs| check_writable(&fs).map(|()| fs));
    let (live, skipped) = match tracefs {
        Ok(fs) => match Marker::open(fs.path("trace_marker")) {
            Ok(marker) => (Some((fs, marker)), None),
            Err(err) => (
                None,
                Some(format!("{}: {err}", fs.path("trace_marker").display())),
            ),
        },
        Err(err) => (None, Some(err.to_string())),
    };
    let mut restore = live.as_ref().map(|(fs, _)| Restore::new(fs.clone()));
    if let Some(restore) = restore.as_mut()
        && restore.tracefs().has(&Setting::Option("markers".into()))
    {
        restore.change(&Setting::Option("markers".into()), "1")?;
    }

    let mut peer = Vec::new();
    let mut off_samples = Vec::new();
    let mut disabled_samples = Vec::new();
    let mut on_samples = Vec::new();
    for _ in 0..rounds {
        peer.push(time_per_call(calls, || {
            black_box(nix::unistd::getppid());
        }));
        disabled_samples.push(time_per_call(calls, || {
            let _ = black_box(disabled.emit(Kind::Begin, black_box("rep cpu=1")));
        }));
        if let (Some(restore), Some((_, marker))) = (restore.as_mut(), live.as_ref()) {
            restore.change(&Setting::TracingOn, "0")?;
            off_samples.push(time_per_call(calls, || {
                let _ = black_box(marker.emit(Kind::Begin, black_box("rep cpu=1")));
            }));
            restore.change(&Setting::TracingOn, "1")?;
            let mut begin = true;
            on_samples.push(time_per_call(calls, || {
                let kind = if begin { Kind::Begin } else { Kind::End };
                begin = !begin;
                let _ = black_box(marker.emit(kind, black_box("rep cpu=1")));
            }));
        }
    }
    if let Some(restore) = restore {
        restore.restore()?;
    }
    let mut costs = vec![
        summarise("getppid syscall (peer)", peer),
        summarise("marker, no tracefs (no-op)", disabled_samples),
    ];
    if !off_samples.is_empty() {
        costs.push(summarise("marker, tracing_on=0 (EBADF)", off_samples));
        costs.push(summarise("marker, tracing_on=1 (B/E written)", on_samples));
    }
    Ok(Report { costs, skipped })
}

/// The report as text: one line per variant with its ratio to the peer.
pub fn render(report: &Report, calls: usize, rounds: usize) -> String {
    let mut out =
        format!("marker write cost, ns per call (median of {rounds} rounds of {calls} calls)\n");
    let peer = report.costs.first().map_or(f64::NAN, |c| c.median_ns);
    for cost in &report.costs {
        out.push_str(&format!(
            "{:<36} {:>9.1} ns  (min {:>8.1})  {:>6.2}x peer\n",
            cost.label,
            cost.median_ns,
            cost.min_ns,
            cost.median_ns / peer
        ));
    }
    if let Some(why) = &report.skipped {
        out.push_str(&format!("tracefs variants skipped: {why}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_lists_every_row_and_the_skip_reason() {
        let report = Report {
            costs: vec![
                Cost {
                    label: "peer",
                    median_ns: 100.0,
                    min_ns: 90.0,
                },
                Cost {
                    label: "x",
                    median_ns: 250.0,
                    min_ns: 200.0,
                },
            ],
            skipped: Some("no tracefs".into()),
        };
        let text = render(&report, 10, 3);
        assert!(text.contains("median of 3 rounds of 10 calls"));
        assert!(text.contains("2.50x peer"), "{text}");
        assert!(text.ends_with("tracefs variants skipped: no tracefs\n"));
    }
}
