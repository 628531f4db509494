//! An external power meter (`--power-cmd CMD`): a command whose stdout lines are `<unix
//! seconds> <watts>`, started in a process group of its own that ends with this process, and
//! read without blocking from the parent's poll loop (no thread). Each reading's wall-clock
//! time is put on CLOCK_MONOTONIC, the clock of the measurements' windows and of the trace.
//!
//! A meter ([`ExternalMeter`]) is believed only as far as its readings go: one whose times go
//! back or repeat, lie ahead of the moment the line arrived, or whose watts are below zero or
//! beyond [`super::sampler::MAX_W`] gives no power for the window they fall in, nor does one
//! whose readings do not reach from the window's start to its end
//! ([`ExternalMeter::cover`]). A meter that ends or prints garbage after its first reading
//! makes the power of every later window missing; the measurements stand.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Read;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use super::PowerError;
use crate::sys::clock::now_ns;

/// How long the meter may take to give its first reading before the run is refused.
pub const FIRST_READING: Duration = Duration::from_secs(10);
/// The longest line a meter may print.
const MAX_LINE: usize = 4096;
/// Readings kept before the oldest are dropped (over an hour at 1 kHz).
const MAX_READINGS: usize = 4_000_000;
/// How far ahead of its arrival a reading's time may lie (the meter's clock and this one's
/// disagreeing by a little), ns.
const AHEAD_NS: i128 = 1_000_000_000;
/// Refused readings remembered (the latest).
const MAX_REFUSED: usize = 16;

/// An external meter's reading: CLOCK_MONOTONIC ns and watts.
pub type TimedWatts = (u64, f64);

/// A running external meter and what it printed so far.
#[derive(Debug)]
pub struct ExternalMeter {
    /// The command as given.
    pub command: String,
    child: std::process::Child,
    out: File,
    err: File,
    line: Vec<u8>,
    lines: usize,
    err_tail: Vec<u8>,
    readings: VecDeque<TimedWatts>,
    /// Readings refused since it started: when each arrived (CLOCK_MONOTONIC ns) and why.
    refused: VecDeque<(u64, String)>,
    /// What went wrong after it started (a bad line, its end), kept for every later window.
    pub failed: Option<PowerError>,
}

/// `<unix seconds> <watts>`: two finite numbers, the time positive; `None` for anything else.
pub fn parse_line(line: &str) -> Option<(f64, f64)> {
    let mut words = line.split_whitespace();
    let t: f64 = words.next()?.parse().ok()?;
    let w: f64 = words.next()?.parse().ok()?;
    (words.next().is_none() && t.is_finite() && t > 0.0 && w.is_finite()).then_some((t, w))
}

/// Nanoseconds between the wall clock and CLOCK_MONOTONIC now.
fn realtime_offset_ns() -> i128 {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    wall - now_ns() as i128
}

impl ExternalMeter {
    /// Starts `command` (split into words as a shell would, run without one) and waits up to
    /// [`FIRST_READING`] for its first reading.
    pub fn start(command: &str) -> Result<ExternalMeter, PowerError> {
        let words = shlex::split(command).unwrap_or_default();
        let Some((program, args)) = words.split_first() else {
            return Err(PowerError::MeterUsage(
                "--power-cmd: needs a command that prints '<unix seconds> <watts>' lines".into(),
            ));
        };
        let mut cmd = std::process::Command::new(program);
        cmd.args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        crate::sys::process::end_with_this_process(&mut cmd, None);
        let mut child = cmd.spawn().map_err(|source| PowerError::MeterStart {
            command: command.to_string(),
            source,
        })?;
        let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(PowerError::MeterUsage(
                "--power-cmd: its output could not be taken".into(),
            ));
        };
        let (out, err) = (File::from(std::os::fd::OwnedFd::from(out)), {
            File::from(std::os::fd::OwnedFd::from(err))
        });
        for f in [&out, &err] {
            let _ = crate::sys::process::set_nonblocking(f.as_fd());
        }
        let mut meter = ExternalMeter {
            command: command.to_string(),
            child,
            out,
            err,
            line: Vec::new(),
            lines: 0,
            err_tail: Vec::new(),
            readings: VecDeque::new(),
            refused: VecDeque::new(),
            failed: None,
        };
        let start = Instant::now();
        loop {
            meter.drain();
            if let Some(e) = meter.failed.take() {
                return Err(e);
            }
            if !meter.readings.is_empty() {
                return Ok(meter);
            }
            // Its first line already cannot be believed: a meter that does not work.
            if let Some((_, why)) = meter.refused.front() {
                return Err(PowerError::MeterRefused {
                    command: command.to_string(),
                    why: why.clone(),
                });
            }
            if let Some(sig) = crate::sys::process::interrupted() {
                return Err(PowerError::Interrupted(sig));
            }
            if start.elapsed() >= FIRST_READING {
                return Err(PowerError::MeterSilent {
                    command: command.to_string(),
                    secs: FIRST_READING.as_secs(),
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Reads whatever the meter printed since the last call, without waiting: each line
    /// becomes a reading on CLOCK_MONOTONIC; a bad line or the meter's end is kept in
    /// [`ExternalMeter::failed`].
    pub fn drain(&mut self) {
        let mut chunk = [0u8; 8192];
        loop {
            match self.err.read(&mut chunk) {
                Ok(n) if n > 0 => {
                    self.err_tail.extend_from_slice(&chunk[..n]);
                    let keep = self.err_tail.len().saturating_sub(MAX_LINE);
                    self.err_tail.drain(..keep);
                }
                _ => break,
            }
        }
        let mut ended = false;
        loop {
            match self.out.read(&mut chunk) {
                Ok(0) => {
                    ended = true;
                    break;
                }
                Ok(n) => self.take(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        if ended && self.failed.is_none() {
            // Its output closed: it has ended or is ending; give it a moment to say how.
            let mut status = None;
            for _ in 0..100 {
                status = self.child.try_wait().ok().flatten();
                if status.is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            self.failed = Some(PowerError::MeterEnded {
                command: self.command.clone(),
                status: status
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "its output closed".into()),
                said: self.last_error_line(),
                readings: self.lines,
                midway: !self.readings.is_empty(),
            });
        }
    }

    /// The last line the meter wrote to its stderr, for a message.
    fn last_error_line(&self) -> Option<String> {
        let text = String::from_utf8_lossy(&self.err_tail);
        text.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| foundation::error::excerpt(l.trim().as_bytes(), 200))
    }

    fn take(&mut self, bytes: &[u8]) {
        let offset = realtime_offset_ns();
        for &b in bytes {
            if b != b'\n' {
                if self.line.len() < MAX_LINE {
                    self.line.push(b);
                } else if self.failed.is_none() {
                    self.failed = Some(PowerError::MeterLine {
                        command: self.command.clone(),
                        line: self.lines + 1,
                        text: foundation::error::excerpt(&self.line, 80),
                    });
                }
                continue;
            }
            self.lines += 1;
            let line = std::mem::take(&mut self.line);
            let text = String::from_utf8_lossy(&line);
            let trimmed = text.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            match parse_line(trimmed) {
                Some((t, w)) => {
                    let mono = (t * 1e9) as i128 - offset;
                    let arrived = now_ns();
                    let last = self.readings.back().map(|r| r.0 as i128);
                    let why = if mono <= 0 {
                        Some("its time lies before this machine booted".to_string())
                    } else if mono > arrived as i128 + AHEAD_NS {
                        Some(format!(
                            "its time lies {:.1} s after the line arrived",
                            (mono - arrived as i128) as f64 / 1e9
                        ))
                    } else if last.is_some_and(|l| mono <= l) {
                        Some("its time is not after the reading before it".to_string())
                    } else {
                        super::sampler::plausible(w).err()
                    };
                    match why {
                        None => {
                            if self.readings.len() >= MAX_READINGS {
                                self.readings.pop_front();
                            }
                            self.readings.push_back((mono as u64, w));
                        }
                        Some(why) => {
                            if self.refused.len() >= MAX_REFUSED {
                                self.refused.pop_front();
                            }
                            self.refused.push_back((
                                arrived,
                                format!("its line {} was refused: {why}", self.lines),
                            ));
                        }
                    }
                }
                None if self.failed.is_none() => {
                    self.failed = Some(PowerError::MeterLine {
                        command: self.command.clone(),
                        line: self.lines,
                        text: foundation::error::excerpt(&line, 80),
                    });
                }
                None => {}
            }
        }
    }

    /// The readings that cover the window `[start, end]` (ns): from the last one at or before
    /// its start to the first one at or after its end, waiting up to `wait` for that one to
    /// arrive; or why the meter gives no power for this window (it failed, a line was
    /// refused while the window was open, or its readings leave the start or the end
    /// uncovered). A stop signal ends the wait.
    pub fn cover(
        &mut self,
        start: u64,
        end: u64,
        wait: Duration,
    ) -> Result<Vec<TimedWatts>, String> {
        let waited = Instant::now();
        loop {
            self.drain();
            if self.readings.iter().any(|&(t, _)| t >= end)
                || self.failed.is_some()
                || waited.elapsed() >= wait
                || crate::sys::process::interrupted().is_some()
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if let Some(e) = &self.failed {
            return Err(format!("the meter failed: {e}"));
        }
        let after = now_ns();
        if let Some((_, why)) = self
            .refused
            .iter()
            .find(|(arrived, _)| *arrived >= start && *arrived <= after)
        {
            return Err(format!("the meter lied in the window: {why}"));
        }
        let readings = self.since(start);
        match (readings.first(), readings.last()) {
            (Some(&(first, _)), Some(&(last, _))) if first <= start && last >= end => Ok(readings),
            (Some(&(first, _)), _) if first > start => {
                Err("the meter has no reading at or before the window's start".to_string())
            }
            (_, Some(&(last, _))) => Err(format!(
                "the meter has no reading at or after the window's end: its last was {:.3} s before it, and none came in {:.1} s",
                end.saturating_sub(last) as f64 / 1e9,
                wait.as_secs_f64()
            )),
            _ => Err("the meter has no reading".to_string()),
        }
    }

    /// The readings from the last one at or before `from_ns` on, oldest first; the older
    /// ones are forgotten.
    pub fn since(&mut self, from_ns: u64) -> Vec<TimedWatts> {
        let keep_from = self
            .readings
            .iter()
            .rposition(|&(t, _)| t <= from_ns)
            .unwrap_or(0);
        self.readings.drain(..keep_from);
        self.readings.iter().copied().collect()
    }
}

impl Drop for ExternalMeter {
    fn drop(&mut self) {
        let pgid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        crate::sys::process::kill_group(pgid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_are_two_numbers() {
        assert_eq!(parse_line("1700000000.25 3.5"), Some((1700000000.25, 3.5)));
        assert_eq!(parse_line("  1700000000\t0 "), Some((1700000000.0, 0.0)));
        assert_eq!(parse_line("1700000000 3.5 extra"), None);
        assert_eq!(parse_line("1700000000"), None);
        assert_eq!(parse_line("-5 3"), None);
        assert_eq!(parse_line("1700000000 NaN"), None);
        assert_eq!(parse_line("Dhrystone Benchmark"), None);
    }

    #[test]
    fn a_meter_is_read_on_the_monotonic_clock_and_ended_with_us() {
        let m = ExternalMeter::start(
            "sh -c 'while :; do echo \"$(date +%s.%N) 2.5\"; sleep 0.01; done'",
        )
        .unwrap();
        let mut m = m;
        let first = m.since(0);
        assert!(!first.is_empty());
        let (t, w) = first[0];
        assert_eq!(w, 2.5);
        // Put on CLOCK_MONOTONIC: within a minute of now (the wall clock is seconds since 1970).
        assert!(t.abs_diff(now_ns()) < 60_000_000_000, "{t} vs {}", now_ns());
        let pid = m.child.id();
        drop(m);
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|s| s.contains(") Z"))
        );
    }

    #[test]
    fn a_meter_that_prints_something_else_or_nothing_is_refused() {
        let e = ExternalMeter::start("echo hello").unwrap_err();
        assert!(
            e.to_string()
                .contains("line 1 is not '<unix seconds> <watts>': \"hello\""),
            "{e}"
        );
        let e = ExternalMeter::start("sh -c 'echo broken >&2; exit 4'").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("ended") && text.contains("\"broken\""),
            "{text}"
        );
        assert!(matches!(
            ExternalMeter::start("/nonexistent/meter").unwrap_err(),
            PowerError::MeterStart { .. }
        ));
        assert!(matches!(
            ExternalMeter::start("").unwrap_err(),
            PowerError::MeterUsage(_)
        ));
    }
}
