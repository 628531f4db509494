//! The sampler beside a measurement, in the parent: energy counters read when the timed window
//! opens and closes (and at every sample between, to follow a counter's wraps), power, every
//! thermal zone and each cpufreq policy's clock sampled at `--power-hz` from the parent's poll
//! loop ([`crate::beside::Beside`]), never from a measuring child and never in a thread. With
//! `--trace` every sample is also a trace_marker counter, on the clock of the tool's slices.
//!
//! An observer never takes a figure down: a source that fails in the window (a battery put on
//! its charger, a file gone or holding text, a rail renamed, a meter that ends or prints
//! garbage) or whose readings cannot be believed (a counter that goes back other than by a
//! wrap near its range, or never moves; a power below zero or above [`MAX_W`]; a meter whose
//! readings do not cover the window) has its power missing in that measurement's record, with
//! the reason, and the measurement stands.

use super::record::{Baseline, From, PowerRecord, Series, SourceRecord, TempRecord};
use super::sources::{self, Reading, Value};
use super::{Power, PowerError};
use crate::sys::clock::now_ns;

/// The most power a reading may say, W: no machine socbench measures draws a megawatt, so a
/// reading above it (or below zero) is a broken source, not a figure.
pub const MAX_W: f64 = 1e6;

/// How long the window's end waits at most for the external meter's first reading after it,
/// so that its readings cover the window.
const METER_AFTER_MAX: Duration = Duration::from_secs(2);

use std::time::Duration;

/// What one source saw over the window.
#[derive(Debug, Default)]
struct Track {
    /// Last counter reading: (time ns, µJ, the meter's own ms).
    last: Option<(u64, u64, Option<u64>)>,
    /// Energy counted so far, µJ (counters).
    counted_uj: f64,
    /// (time ns, W) of every power reading (sampled sources).
    points: Vec<(u64, f64)>,
    /// Power at each sample, W.
    series: Vec<Option<f64>>,
    /// The power last worked out (a counter between its updates holds it).
    held: Option<f64>,
    /// When a counter last moved (ns, on its own clock when it has one) and what it had
    /// counted then, µJ.
    since: Option<(u64, f64)>,
    /// Times its value was seen to change, ns.
    changes: Vec<u64>,
    /// Readings taken.
    samples: usize,
    /// Why its power is missing in this window (the first reason seen).
    missing: Option<String>,
}

impl Track {
    /// Marks the source's power missing in this window, keeping the first reason.
    fn fail(&mut self, why: String) {
        self.missing.get_or_insert(why);
    }
}

/// The difference between two readings of a counter, µJ. powercap's counter wraps to 0 past
/// `wrap_uj`, and a wrap is believed only near that range: the energy across it must be at
/// most half the range (a counter read every few seconds crosses a tiny part of it; a step
/// back from its middle would cross nearly all of it). Any other step back (a counter reset, a file that is no
/// counter) is an error saying so: the energy over the window is unknown.
pub fn counter_delta(last: u64, now: u64, wrap_uj: Option<u64>) -> Result<u64, String> {
    if now >= last {
        return Ok(now - last);
    }
    match wrap_uj.filter(|&w| w >= last) {
        Some(w) if (w - last).saturating_add(now) <= w / 2 => Ok(w - last + now),
        Some(w) => Err(format!(
            "its counter went back from {last} to {now}, which is no wrap (its range is {w}, and it was not near it)"
        )),
        None => Err(format!(
            "its counter went back from {last} to {now} (it was reset, or is no counter)"
        )),
    }
}

/// A power reading that can be believed: finite, from 0 to [`MAX_W`].
pub fn plausible(w: f64) -> Result<f64, String> {
    if w.is_finite() && (0.0..=MAX_W).contains(&w) {
        Ok(w)
    } else {
        Err(format!(
            "it read {}, not a power from 0 to {MAX_W:.0} W",
            crate::number::table_number(w, 2) + " W"
        ))
    }
}

/// The integral over `[from, to]` of the line through `points` (ns, W), each end held flat
/// beyond the first and last point, J.
pub fn integral(points: &[(u64, f64)], from: u64, to: u64) -> f64 {
    if points.is_empty() || to <= from {
        return 0.0;
    }
    let at = |t: u64| -> f64 {
        match points.iter().position(|&(pt, _)| pt >= t) {
            Some(0) => points[0].1,
            None => points[points.len() - 1].1,
            Some(i) => {
                let (t0, p0) = points[i - 1];
                let (t1, p1) = points[i];
                p0 + (p1 - p0) * (t - t0) as f64 / (t1 - t0).max(1) as f64
            }
        }
    };
    let mut edges: Vec<u64> = vec![from];
    edges.extend(
        points
            .iter()
            .map(|&(t, _)| t)
            .filter(|&t| t > from && t < to),
    );
    edges.push(to);
    edges
        .windows(2)
        .map(|w| (at(w[0]) + at(w[1])) / 2.0 * (w[1] - w[0]) as f64 / 1e9)
        .sum()
}

/// The mean interval between `changes`, ms (`None` with fewer than two).
fn period_ms(changes: &[u64]) -> Option<f64> {
    match changes {
        [first, .., last] => Some((last - first) as f64 / (changes.len() - 1) as f64 / 1e6),
        _ => None,
    }
}

/// One measurement's window: opened, ticked and closed by the parent's poll loop.
#[derive(Debug)]
pub struct PowerWindow<'a> {
    power: &'a mut Power,
    /// CPUs the measurement runs on (its children's; `None` for an unpinned one).
    measured: Vec<Option<usize>>,
    period_ns: u64,
    next_ns: Option<u64>,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
    ticks: Vec<u64>,
    tracks: Vec<Track>,
    temps: Vec<Vec<Option<f64>>>,
    freqs: Vec<Vec<Option<u64>>>,
    restore_mask: Option<Vec<usize>>,
    /// CPU time the parent spent sampling, ns.
    cpu_ns: u64,
}

impl<'a> PowerWindow<'a> {
    /// A window over `power`'s sources for a measurement on `measured` CPUs.
    pub fn new(power: &'a mut Power, measured: Vec<Option<usize>>) -> PowerWindow<'a> {
        let period_ns = (1e9 / power.hz).round().max(1.0) as u64;
        let n = power.sources.len();
        let (z, p) = (power.zones.len(), power.policies.len());
        PowerWindow {
            power,
            measured,
            period_ns,
            next_ns: None,
            start_ns: None,
            end_ns: None,
            ticks: Vec::new(),
            tracks: (0..n).map(|_| Track::default()).collect(),
            temps: vec![Vec::new(); z],
            freqs: vec![Vec::new(); p],
            restore_mask: None,
            cpu_ns: 0,
        }
    }

    /// Keeps the parent off the measured CPUs while the window is open, when the children
    /// are all pinned and another CPU is allowed.
    fn step_aside(&mut self) {
        if self.measured.is_empty() || self.measured.iter().any(Option::is_none) {
            return;
        }
        let Ok(allowed) = crate::sys::affinity::allowed_cpus() else {
            return;
        };
        let free: Vec<usize> = allowed
            .iter()
            .copied()
            .filter(|c| !self.measured.contains(&Some(*c)))
            .collect();
        if !free.is_empty() {
            self.restore_mask = crate::sys::affinity::confine(&free).ok();
        }
    }

    fn step_back(&mut self) {
        if let Some(mask) = self.restore_mask.take() {
            let _ = crate::sys::affinity::confine(&mask);
        }
    }

    /// Takes one sample of everything at `t` (ns).
    fn sample(&mut self, t: u64) {
        let cpu = crate::sys::clock::thread_cpu_ns();
        self.take(t);
        self.cpu_ns += crate::sys::clock::thread_cpu_ns().saturating_sub(cpu);
    }

    /// [`PowerWindow::sample`]'s reads.
    fn take(&mut self, t: u64) {
        self.ticks.push(t);
        let values = sources::read_all(&self.power.sources);
        if let Some(m) = self.power.meter.as_mut() {
            m.drain();
        }
        let readings: Vec<(u64, f64)> = match self.power.meter.as_mut() {
            Some(m) => m.since(self.start_ns.unwrap_or(t)),
            None => Vec::new(),
        };
        let trace = self.power.trace;
        for ((source, track), value) in self.power.sources.iter().zip(&mut self.tracks).zip(values)
        {
            let w = match (source.meter.reading(), value) {
                (Reading::External, _) => {
                    let latest = readings.iter().rev().find(|(rt, _)| *rt <= t);
                    latest.map(|&(_, w)| w)
                }
                (Reading::Counter { wrap_uj }, Ok(Value::Energy { uj, at_ms })) => {
                    track.samples += 1;
                    counter(track, t, uj, at_ms, wrap_uj)
                }
                (_, Ok(Value::Power(w))) => {
                    track.samples += 1;
                    match plausible(w) {
                        Ok(w) => {
                            if track.points.last().is_none_or(|&(_, p)| p != w) {
                                track.changes.push(t);
                            }
                            track.points.push((t, w));
                            Some(w)
                        }
                        Err(why) => {
                            track.fail(why);
                            None
                        }
                    }
                }
                (_, Ok(Value::Energy { .. })) => None,
                (_, Err(why)) => {
                    track.fail(why);
                    None
                }
            };
            track.series.push(w);
            if trace && let Some(w) = w {
                ftrace::counter(&format!("power {} [mW]", source.name), (w * 1e3) as i64);
            }
        }
        for (zone, series) in self.power.zones.iter().zip(&mut self.temps) {
            let c = crate::sysfs::read_attr(&zone.path)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .map(|m| m / 1000.0)
                // A zone that lies (no CPU runs below -100 C or above 400 C) has no reading.
                .filter(|c| (-100.0..=400.0).contains(c));
            if trace && let Some(c) = c {
                ftrace::counter(&format!("temp {} [mC]", zone.name), (c * 1e3) as i64);
            }
            series.push(c);
        }
        for (policy, series) in self.power.policies.iter().zip(&mut self.freqs) {
            let khz = crate::sysfs::read_attr(&policy.path)
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                // Nor does a clock of 0 or above 100 GHz.
                .filter(|k| (1..=100_000_000).contains(k));
            if trace && let Some(k) = khz {
                ftrace::counter(&format!("freq {} [kHz]", policy.name), k as i64);
            }
            series.push(khz);
        }
    }

    /// Closes the window (if the run did not) and gives its record (`None` when it was never
    /// opened). A source that failed or cannot be believed is missing in it, with the reason;
    /// the external meter's end waits up to `METER_AFTER_MAX` (2 s) for a reading past the
    /// window, so that its readings cover it.
    pub fn finish(mut self) -> Option<PowerRecord> {
        self.step_back();
        let (Some(start), Some(end)) = (self.start_ns, self.end_ns) else {
            return None;
        };
        let secs = (end - start) as f64 / 1e9;
        let meter = self
            .power
            .meter
            .as_mut()
            .map(|m| m.cover(start, end, METER_AFTER_MAX));
        let baseline = self.power.baseline.as_ref();
        let mut series = Series {
            t_ns: self.ticks.clone(),
            ..Series::default()
        };
        let mut records = Vec::new();
        for (source, mut track) in self
            .power
            .sources
            .iter()
            .zip(std::mem::take(&mut self.tracks))
        {
            let figures = match source.meter.reading() {
                Reading::External => match &meter {
                    Some(Ok(readings)) => {
                        let inside: Vec<&(u64, f64)> = readings
                            .iter()
                            .filter(|(t, _)| *t >= start && *t <= end)
                            .collect();
                        let peak = inside.iter().map(|r| r.1).fold(f64::NAN, f64::max);
                        Ok((
                            From::Samples,
                            integral(readings, start, end),
                            inside.len(),
                            peak,
                            inside.iter().map(|r| r.0).collect(),
                        ))
                    }
                    Some(Err(why)) => Err((why.clone(), 0)),
                    None => Err(("the meter is not running".to_string(), 0)),
                },
                Reading::Counter { .. } => {
                    if track.missing.is_none() && track.changes.is_empty() {
                        track.fail(
                            "its counter did not move in the window (it updates more slowly than the window lasts, or is stuck)"
                                .into(),
                        );
                    }
                    let peak = track
                        .series
                        .iter()
                        .flatten()
                        .copied()
                        .fold(f64::NAN, f64::max);
                    match track.missing.take() {
                        Some(why) => Err((why, track.samples)),
                        None => Ok((
                            From::Counter,
                            track.counted_uj / 1e6,
                            track.samples,
                            peak,
                            track.changes.clone(),
                        )),
                    }
                }
                _ => {
                    let peak = track.points.iter().map(|p| p.1).fold(f64::NAN, f64::max);
                    match track.missing.take() {
                        Some(why) => Err((why, track.samples)),
                        None => Ok((
                            From::Samples,
                            integral(&track.points, start, end),
                            track.samples,
                            peak,
                            track.changes.clone(),
                        )),
                    }
                }
            };
            let figures = figures.and_then(|f| {
                let mean_w = if secs > 0.0 { f.1 / secs } else { 0.0 };
                plausible(mean_w)
                    .map(|_| f)
                    .map_err(|why| (format!("over the window {why}"), track.samples))
            });
            let baseline_w = baseline.and_then(|b| b.sources.get(&source.name).copied());
            let no_baseline = baseline.filter(|_| baseline_w.is_none()).map(|b| {
                format!(
                    "its idle baseline is missing ({})",
                    b.missing
                        .get(&source.name)
                        .map_or("it gave no reading then", String::as_str)
                )
            });
            let record = |from, samples, period_ms| SourceRecord {
                name: source.name.clone(),
                kind: source.kind.to_string(),
                unit: source.unit.to_string(),
                covers: source.covers.clone(),
                cluster: source.cluster,
                from,
                samples,
                period_ms,
                energy_j: None,
                mean_w: None,
                peak_w: None,
                baseline_w,
                net_energy_j: None,
                net_mean_w: None,
                missing: None,
            };
            records.push(match (figures, no_baseline) {
                (Ok((from, energy_j, samples, peak, changes)), None) => {
                    let mean_w = if secs > 0.0 { energy_j / secs } else { 0.0 };
                    let base = baseline_w.unwrap_or(0.0);
                    SourceRecord {
                        energy_j: Some(energy_j),
                        mean_w: Some(mean_w),
                        peak_w: Some(if peak.is_finite() { peak } else { mean_w }),
                        net_energy_j: Some(energy_j - base * secs),
                        net_mean_w: Some(mean_w - base),
                        ..record(from, samples, period_ms(&changes))
                    }
                }
                (Ok((from, _, samples, _, _)), Some(why)) => SourceRecord {
                    missing: Some(why),
                    ..record(from, samples, None)
                },
                (Err((why, samples)), _) => SourceRecord {
                    missing: Some(why),
                    ..record(
                        if source.is_counter() {
                            From::Counter
                        } else {
                            From::Samples
                        },
                        samples,
                        None,
                    )
                },
            });
            series.power_w.insert(source.name.clone(), track.series);
        }
        let mut temps = Vec::new();
        for (zone, s) in self.power.zones.iter().zip(std::mem::take(&mut self.temps)) {
            let read: Vec<f64> = s.iter().flatten().copied().collect();
            if let (Some(&first), Some(&last)) = (read.first(), read.last()) {
                temps.push(TempRecord {
                    zone: zone.name.clone(),
                    start_c: first,
                    end_c: last,
                    max_c: read.iter().copied().fold(first, f64::max),
                });
            }
            series.temp_c.insert(zone.name.clone(), s);
        }
        for (policy, s) in self
            .power
            .policies
            .iter()
            .zip(std::mem::take(&mut self.freqs))
        {
            series.freq_khz.insert(policy.name.clone(), s);
        }
        Some(PowerRecord {
            window_ns: [start, end],
            sampler_cpu_ns: self.cpu_ns,
            sources: records,
            per_energy: None,
            per_cluster: Vec::new(),
            temps,
            series,
        })
    }
}

/// Takes a counter reading into its track; the power since its last change, W (on the meter's
/// own clock when it has one), held while it does not move, so a counter that updates more
/// slowly than the sampling shows its power, not steps and zeros.
fn counter(
    track: &mut Track,
    t: u64,
    uj: u64,
    at_ms: Option<u64>,
    wrap_uj: Option<u64>,
) -> Option<f64> {
    let when = at_ms.map_or(t, |ms| ms.saturating_mul(1_000_000));
    let Some((lt, luj, lat)) = track.last.replace((t, uj, at_ms)) else {
        track.since = Some((when, 0.0));
        return None;
    };
    let delta = match counter_delta(luj, uj, wrap_uj) {
        Ok(d) => d,
        Err(why) => {
            track.fail(why);
            return None;
        }
    };
    // A step no machine can make between two readings is no energy either.
    let (was, now) = (lat.map_or(lt, |ms| ms.saturating_mul(1_000_000)), when);
    if now > was {
        let w = delta as f64 / 1e6 / ((now - was) as f64 / 1e9);
        if let Err(why) = plausible(w) {
            track.fail(format!("between two readings {why}"));
            return None;
        }
    }
    track.counted_uj += delta as f64;
    let moved = match (lat, at_ms) {
        (Some(a), Some(b)) => b != a,
        _ => delta > 0,
    };
    if moved {
        track.changes.push(when);
        if let Some((t0, c0)) = track.since
            && when > t0
        {
            track.held = Some((track.counted_uj - c0) / 1e6 / ((when - t0) as f64 / 1e9));
        }
        track.since = Some((when, track.counted_uj));
    }
    track.held
}

impl crate::beside::Beside for PowerWindow<'_> {
    fn opened(&mut self) {
        self.step_aside();
        let t = now_ns();
        self.start_ns = Some(t);
        self.sample(t);
        self.next_ns = Some(t + self.period_ns);
    }

    fn closed(&mut self) {
        if self.start_ns.is_none() || self.end_ns.is_some() {
            return;
        }
        let t = now_ns();
        self.end_ns = Some(t);
        self.next_ns = None;
        self.sample(t);
        self.step_back();
    }

    fn due_in(&self) -> Option<std::time::Duration> {
        let next = self.next_ns?;
        Some(std::time::Duration::from_nanos(
            next.saturating_sub(now_ns()),
        ))
    }

    fn tick(&mut self) {
        let t = now_ns();
        self.sample(t);
        let next = self.next_ns.unwrap_or(t) + self.period_ns;
        // Behind (the parent was held up): the next sample a period from now, no burst.
        self.next_ns = Some(if next <= t { t + self.period_ns } else { next });
    }
}

impl Drop for PowerWindow<'_> {
    fn drop(&mut self) {
        self.step_back();
    }
}

/// Measures each source's idle power for `seconds` before the run, sampling as a window
/// does: the mean power of each source, W, and why a source has none.
pub fn idle(power: &mut Power, seconds: f64) -> Result<Baseline, PowerError> {
    use crate::beside::Beside;
    let mut w = PowerWindow::new(power, Vec::new());
    w.opened();
    let end = w.start_ns.unwrap_or(0) + (seconds * 1e9) as u64;
    loop {
        if let Some(sig) = crate::sys::process::interrupted() {
            return Err(PowerError::Interrupted(sig));
        }
        let now = now_ns();
        if now >= end {
            break;
        }
        let wait = w
            .due_in()
            .unwrap_or_default()
            .min(std::time::Duration::from_nanos(end - now));
        std::thread::sleep(wait);
        if w.due_in().is_some_and(|d| d.is_zero()) && now_ns() < end {
            w.tick();
        }
    }
    w.closed();
    let mut baseline = Baseline {
        seconds,
        ..Baseline::default()
    };
    for s in w.finish().map(|r| r.sources).unwrap_or_default() {
        match (s.mean_w, s.missing) {
            (Some(w), None) => {
                baseline.sources.insert(s.name, w);
            }
            (_, why) => {
                baseline
                    .missing
                    .insert(s.name, why.unwrap_or_else(|| "no figure".into()));
            }
        }
    }
    Ok(baseline)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nothing() -> Power {
        Power {
            sources: Vec::new(),
            zones: Vec::new(),
            policies: Vec::new(),
            meter: None,
            hz: 10.0,
            trace: false,
            baseline: None,
        }
    }

    #[test]
    fn the_parent_keeps_off_the_measured_cpus_while_the_window_is_open() {
        use crate::beside::Beside;
        let allowed = crate::sys::affinity::allowed_cpus().unwrap();
        let mut power = nothing();
        let mut w = PowerWindow::new(&mut power, vec![Some(allowed[0])]);
        w.opened();
        let inside = crate::sys::affinity::allowed_cpus().unwrap();
        w.tick();
        w.closed();
        assert_eq!(crate::sys::affinity::allowed_cpus().unwrap(), allowed);
        if allowed.len() > 1 {
            assert_eq!(inside, allowed[1..]);
        } else {
            assert_eq!(inside, allowed, "no other CPU: it stays");
        }
        let record = w.finish().unwrap();
        assert_eq!(record.series.t_ns.len(), 3);
        assert!(record.sources.is_empty());
        // An unpinned child could be anywhere: the parent stays where it is.
        let mut w = PowerWindow::new(&mut power, vec![Some(allowed[0]), None]);
        w.opened();
        assert_eq!(crate::sys::affinity::allowed_cpus().unwrap(), allowed);
        drop(w);
    }

    #[test]
    fn a_counter_that_never_moves_gives_no_power_but_a_reason() {
        use crate::beside::Beside;
        let dir = std::env::temp_dir().join(format!("benchmp-stuck-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("energy_uj");
        std::fs::write(&file, "123456\n").unwrap();
        let mut power = nothing();
        power.sources.push(super::super::Source {
            name: "powercap:package-0".into(),
            kind: "powercap",
            unit: "uJ",
            covers: String::new(),
            paths: vec![file.clone()],
            cluster: None,
            meter: std::sync::Arc::new(super::super::meter::EnergyCounter {
                path: file,
                wrap_uj: Some(262_143_328_850),
            }),
        });
        let mut w = PowerWindow::new(&mut power, Vec::new());
        w.opened();
        w.tick();
        w.closed();
        let r = w.finish().unwrap();
        let s = &r.sources[0];
        assert_eq!((s.energy_j, s.mean_w, s.net_mean_w), (None, None, None));
        assert!(
            s.missing.as_deref().unwrap().contains("did not move"),
            "{s:?}"
        );
        assert!(
            r.line("rd")
                .contains("powercap:package-0 missing, because its counter did not move")
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_wrapped_counter_counts_across_its_wrap() {
        assert_eq!(counter_delta(100, 250, Some(1000)), Ok(150));
        assert_eq!(counter_delta(900, 50, Some(1000)), Ok(150));
        // A step back far from the range is no wrap (it would be 119 kW on a RAPL
        // counter); without a range a step back is a reset: unknown energy either way.
        let e = counter_delta(500, 100, Some(1000)).unwrap_err();
        assert!(e.contains("no wrap"), "{e}");
        assert!(
            counter_delta(900, 50, None)
                .unwrap_err()
                .contains("went back")
        );
        // A range below the last reading is no range.
        assert!(counter_delta(900, 50, Some(500)).is_err());
        assert_eq!(plausible(2.5), Ok(2.5));
        assert!(plausible(-1.0).is_err());
        assert!(plausible(1e300).unwrap_err().contains("e300"));
        assert!(plausible(f64::NAN).is_err());
    }

    #[test]
    fn counters_add_their_steps_and_hold_their_power_between_updates() {
        let mut t = Track::default();
        let s = 1_000_000_000u64;
        assert_eq!(counter(&mut t, 0, 900_000, None, Some(1_000_000)), None);
        // 0.3 J in 1 s across the wrap.
        assert_eq!(
            counter(&mut t, s, 200_000, None, Some(1_000_000)),
            Some(0.3)
        );
        assert_eq!(t.counted_uj, 300_000.0);
        // Unmoved: held; then 0.6 J over the 2 s since it last moved.
        assert_eq!(
            counter(&mut t, 2 * s, 200_000, None, Some(1_000_000)),
            Some(0.3)
        );
        assert_eq!(
            counter(&mut t, 3 * s, 800_000, None, Some(1_000_000)),
            Some(0.3)
        );
        assert_eq!(t.changes, vec![s, 3 * s]);
        // ODPM: power from the meter's own ms, held while its timestamp stays.
        let mut o = Track::default();
        counter(&mut o, 0, 0, Some(1000), None);
        assert_eq!(counter(&mut o, s / 10, 0, Some(1000), None), None);
        assert_eq!(
            counter(&mut o, s / 5, 2_000_000, Some(1500), None),
            Some(4.0)
        );
        assert_eq!(
            counter(&mut o, s / 4, 2_000_000, Some(1500), None),
            Some(4.0)
        );
        assert_eq!(o.changes, vec![1_500_000_000]);
        assert_eq!(o.counted_uj, 2_000_000.0);
    }

    #[test]
    fn the_integral_of_samples_holds_its_ends() {
        let s = 1_000_000_000u64;
        // 2 W then 4 W, a line between: 1 s at 3 W mean.
        assert!((integral(&[(0, 2.0), (s, 4.0)], 0, s) - 3.0).abs() < 1e-12);
        // Held flat beyond the points: 2 W before, 4 W after.
        assert!((integral(&[(s, 2.0), (2 * s, 4.0)], 0, 3 * s) - 9.0).abs() < 1e-12);
        // The window inside one segment.
        assert!((integral(&[(0, 0.0), (4 * s, 4.0)], s, 3 * s) - 4.0).abs() < 1e-12);
        assert_eq!(integral(&[], 0, s), 0.0);
        assert_eq!(period_ms(&[0, 100_000_000, 200_000_000]), Some(100.0));
        assert_eq!(period_ms(&[5]), None);
    }
}
