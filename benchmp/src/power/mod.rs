//! Power, energy and temperature beside every measurement: the sources a machine offers
//! ([`sources`]; each family a file implementing [`meter::Family`] and its [`meter::Meter`]:
//! [`battery`], [`powercap`], [`hwmon`], [`odpm`]; and an external meter, [`cmd`]), the sampler the parent runs from its poll loop while the children
//! are timed ([`sampler`]), and what each measurement records ([`record`]).
//!
//! SoC teams judge cores by performance per watt and fill the kernel's Energy Model from each
//! frequency step's performance and power; a figure without its energy sends them to wire a
//! meter beside the tool and line samples up by hand. Here every measurement of every tool
//! gets its energy over exactly its timed window, net of an idle baseline, per watt of the
//! figure, with the temperatures it ran at, and (with `--trace`) the samples on the trace's
//! clock. A machine without a source runs exactly as before: nothing is read, nothing added.

use std::path::Path;

pub mod battery;
pub mod cmd;
pub mod discover;
pub mod hwmon;
pub mod meter;
pub mod odpm;
pub mod powercap;
pub mod record;
pub mod sampler;
pub mod sources;

pub use meter::{Family, Meter};
pub use record::{Baseline, PowerRecord, Work};
pub use sources::{Found, Source, Unusable};

use crate::error::{EXIT_FAILED, EXIT_UNSUPPORTED, EXIT_USAGE, ExitStatus};

/// Most sources `--power` may name.
const MAX_NAMED: usize = 256;
/// Lowest and highest `--power-hz`.
pub const HZ_RANGE: (f64, f64) = (0.1, 1000.0);
/// Longest `--power-baseline`, seconds.
pub const MAX_BASELINE_S: f64 = 3600.0;

/// Which sources `--power` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Every source found (the default).
    Found,
    /// None (`--power none`).
    Off,
    /// These, by name, in this order.
    Named(Vec<String>),
}

/// The value parser of `--power`: `none`, or a comma list of source names.
pub fn parse_choice(s: &str) -> Result<Choice, String> {
    let s = s.trim();
    if s == "none" {
        return Ok(Choice::Off);
    }
    let names: Vec<String> = s.split(',').map(|n| n.trim().to_string()).collect();
    if names.iter().any(String::is_empty) {
        return Err(format!(
            "'{s}' is not a comma list of source names (benchmp power lists them), nor none"
        ));
    }
    if names.iter().any(|n| n == "none") {
        return Err(format!(
            "'{s}': none means no source and stands alone; give none, or a list of sources"
        ));
    }
    if names.len() > MAX_NAMED {
        return Err(format!("more than {MAX_NAMED} sources named"));
    }
    let mut seen: Vec<&String> = Vec::new();
    for n in &names {
        if seen.contains(&n) {
            return Err(format!("source {n} is named twice"));
        }
        seen.push(n);
    }
    Ok(Choice::Named(names))
}

/// Checks `--power` against `--power-cmd`: `none` with a meter contradicts itself (the meter
/// would be started and sampled all the same).
pub fn check_meter(power: Option<&Choice>, power_cmd: Option<&str>) -> Result<(), String> {
    match (power, power_cmd) {
        (Some(Choice::Off), Some(_)) => Err(
            "--power none asks for no source, and --power-cmd for a meter: give one of them".into(),
        ),
        _ => Ok(()),
    }
}

/// The value parser of `--power-hz`.
pub fn parse_hz(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(h) if (HZ_RANGE.0..=HZ_RANGE.1).contains(&h) => Ok(h),
        _ => Err(format!(
            "'{s}' is not a sampling rate from {} to {} Hz",
            HZ_RANGE.0, HZ_RANGE.1
        )),
    }
}

/// The value parser of `--power-baseline`.
pub fn parse_baseline(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if (0.0..=MAX_BASELINE_S).contains(&x) => Ok(x),
        _ => Err(format!(
            "'{s}' is not a number of seconds from 0 to {MAX_BASELINE_S}"
        )),
    }
}

/// Why power cannot be measured as asked.
#[derive(Debug, thiserror::Error)]
pub enum PowerError {
    /// A source named with `--power` is not here.
    #[error("--power {name}: no such power source here ({found})")]
    NoSuchSource {
        /// The name given.
        name: String,
        /// What there is, in words.
        found: String,
    },
    /// A source is here but cannot be used (root-only, a charging battery, unreadable).
    #[error("--power {name}: {why}")]
    Unusable {
        /// Its name.
        name: String,
        /// Why.
        why: String,
    },
    /// `--power-baseline` on a machine without a source.
    #[error("--power-baseline: there is no power source to measure ({0})")]
    NothingToMeasure(String),
    /// Power options under `benchmp ab`.
    #[error(
        "--power{0}: not under benchmp ab, whose repetitions carry no power readings; measure power in a run of the tool alone"
    )]
    NotUnderAb(&'static str),
    /// A bad `--power-cmd`.
    #[error("{0}")]
    MeterUsage(String),
    /// The meter could not be started.
    #[error("--power-cmd {}: cannot start it", foundation::error::printable(.command))]
    MeterStart {
        /// The command.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The meter printed something that is not a reading.
    #[error(
        "--power-cmd {}: line {line} is not '<unix seconds> <watts>': {text}",
        foundation::error::printable(.command)
    )]
    MeterLine {
        /// The command.
        command: String,
        /// Its line number.
        line: usize,
        /// The line, quoted.
        text: String,
    },
    /// The meter's first reading cannot be believed (a time ahead of its arrival, a power
    /// below zero or beyond any machine's).
    #[error("--power-cmd {}: {why}", foundation::error::printable(.command))]
    MeterRefused {
        /// The command.
        command: String,
        /// Why, naming the line.
        why: String,
    },
    /// The meter ended before its first reading.
    #[error(
        "--power-cmd {}: the meter ended ({status}) after {readings} line(s){}",
        foundation::error::printable(.command),
        .said.as_ref().map(|s| format!("; its last error line: {s}")).unwrap_or_default()
    )]
    MeterEnded {
        /// The command.
        command: String,
        /// How it ended.
        status: String,
        /// The last line it wrote to stderr, quoted.
        said: Option<String>,
        /// Lines it printed.
        readings: usize,
        /// Whether it gave a reading first (an end mid-run only makes the power of later
        /// measurements missing; one before its first reading is a --power-cmd that does
        /// not work: bad input).
        midway: bool,
    },
    /// The meter gave no reading in time: a command that is no meter (bad input).
    #[error(
        "--power-cmd {}: no reading in {secs} s (a meter prints '<unix seconds> <watts>' lines)",
        foundation::error::printable(.command)
    )]
    MeterSilent {
        /// The command.
        command: String,
        /// Seconds waited.
        secs: u64,
    },
    /// A stop signal arrived while measuring the baseline or waiting for the meter.
    #[error("interrupted by {}", .0.as_str())]
    Interrupted(nix::sys::signal::Signal),
}

impl ExitStatus for PowerError {
    fn exit_status(&self) -> i32 {
        match self {
            PowerError::NoSuchSource { .. }
            | PowerError::Unusable { .. }
            | PowerError::NothingToMeasure(_) => EXIT_UNSUPPORTED,
            // A meter that cannot start for a resource limit (too many open files, no
            // process left) is a failure, not a bad command.
            PowerError::MeterStart { source, .. }
                if foundation::error::Limit::in_chain(source).is_some() =>
            {
                EXIT_FAILED
            }
            PowerError::NotUnderAb(_)
            | PowerError::MeterUsage(_)
            | PowerError::MeterStart { .. }
            | PowerError::MeterLine { .. }
            | PowerError::MeterRefused { .. }
            | PowerError::MeterSilent { .. }
            | PowerError::MeterEnded { midway: false, .. } => EXIT_USAGE,
            PowerError::MeterEnded { midway: true, .. } => EXIT_FAILED,
            PowerError::Interrupted(sig) => 128 + *sig as i32,
        }
    }
}

/// The run's power sources and what is sampled beside them, held by the session from start
/// to finish.
#[derive(Debug)]
pub struct Power {
    /// The sources, the first being the one figures are put per watt of.
    pub sources: Vec<Source>,
    /// Every thermal zone.
    pub zones: Vec<sources::Zone>,
    /// Each cpufreq policy.
    pub policies: Vec<sources::FreqPolicy>,
    /// The external meter, when `--power-cmd` started one.
    pub meter: Option<cmd::ExternalMeter>,
    /// Samples per second.
    pub hz: f64,
    /// Whether samples are also trace_marker counters (`--trace`).
    pub trace: bool,
    /// The idle baseline, once measured.
    pub baseline: Option<Baseline>,
}

/// A source list in words for a message: `found: a, b` or `none found under ROOT`.
fn listing(found: &Found, root: &Path) -> String {
    let names: Vec<&str> = found
        .usable
        .iter()
        .map(|s| s.name.as_str())
        .chain(found.unusable.iter().map(|u| u.name.as_str()))
        .collect();
    if names.is_empty() {
        format!(
            "none under {} (powercap, hwmon, power_supply, IIO energy meters)",
            foundation::error::shown(root)
        )
    } else {
        format!("found: {}", names.join(", "))
    }
}

/// The external meter's source.
fn cmd_source(command: &str) -> Source {
    Source {
        name: "cmd".into(),
        kind: "cmd",
        unit: "W",
        covers: format!("external meter ({})", foundation::error::printable(command)),
        paths: Vec::new(),
        cluster: None,
        meter: std::sync::Arc::new(meter::External),
    }
}

/// What a run asks of power: its `--power`, `--power-cmd`, `--power-hz` and
/// `--power-baseline`, whether trace markers are on, and whether it is a paired repetition
/// under `benchmp ab` (which carries no power readings).
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `--power`: off, every source found, or the named ones (`None`: found).
    pub power: Option<Choice>,
    /// `--power-cmd`: an external meter's command.
    pub power_cmd: Option<String>,
    /// `--power-hz`: samples per second.
    pub power_hz: f64,
    /// `--power-baseline`: seconds of idle measured first (0: none).
    pub power_baseline: f64,
    /// Power counter tracks go to the trace as well.
    pub trace: bool,
    /// A paired repetition of `benchmp ab`.
    pub worker: bool,
}

impl Power {
    /// The power of a run under `root` as the options ask: `None` when there is no source
    /// (nothing is sampled then, at no cost). A named source that is missing or unusable, a
    /// meter that does not work and a baseline with nothing to measure are errors; the
    /// baseline is measured here, before anything else runs. A `benchmp ab` worker (`worker`)
    /// samples nothing: its repetitions carry no power readings to the driver.
    pub fn open(
        c: &Request,
        topology: &crate::topology::Topology,
    ) -> Result<Option<Power>, PowerError> {
        let worker = c.worker;
        check_meter(c.power.as_ref(), c.power_cmd.as_deref()).map_err(PowerError::MeterUsage)?;
        let root = topology.root.as_path();
        if worker {
            // A paired repetition carries no power readings to the driver.
            return match (&c.power, &c.power_cmd, c.power_baseline > 0.0) {
                (Some(Choice::Named(_)), _, _) => Err(PowerError::NotUnderAb("")),
                (_, Some(_), _) => Err(PowerError::NotUnderAb("-cmd")),
                (_, _, true) => Err(PowerError::NotUnderAb("-baseline")),
                _ => Ok(None),
            };
        }
        let mut chosen: Vec<Source> = match c.power.as_ref().unwrap_or(&Choice::Found) {
            Choice::Off => Vec::new(),
            Choice::Found => discover::discover(root, Some(topology)).usable,
            Choice::Named(names) => {
                let found = discover::discover(root, Some(topology));
                let mut v = Vec::new();
                for n in names
                    .iter()
                    .filter(|n| *n != "cmd" || c.power_cmd.is_none())
                {
                    if let Some(s) = found.usable.iter().find(|s| &s.name == n) {
                        v.push(s.clone());
                    } else if n == "cmd" {
                        return Err(PowerError::NoSuchSource {
                            name: n.clone(),
                            found: "cmd is the meter of --power-cmd, which is not given".into(),
                        });
                    } else if let Some(u) = found.unusable.iter().find(|u| &u.name == n) {
                        return Err(PowerError::Unusable {
                            name: n.clone(),
                            why: u.why.clone(),
                        });
                    } else {
                        return Err(PowerError::NoSuchSource {
                            name: n.clone(),
                            found: listing(&found, root),
                        });
                    }
                }
                v
            }
        };
        let meter = match &c.power_cmd {
            Some(command) => {
                // Where --power names it, else first: an external meter is the one wired up
                // for this run.
                let at = match &c.power {
                    Some(Choice::Named(names)) => {
                        names.iter().position(|n| n == "cmd").unwrap_or(0)
                    }
                    _ => 0,
                };
                let m = cmd::ExternalMeter::start(command)?;
                chosen.insert(at.min(chosen.len()), cmd_source(command));
                Some(m)
            }
            None => None,
        };
        if chosen.is_empty() {
            if c.power_baseline > 0.0 {
                let why = match &c.power {
                    Some(Choice::Off) => "--power none".to_string(),
                    _ => listing(&discover::discover(root, Some(topology)), root),
                };
                return Err(PowerError::NothingToMeasure(why));
            }
            return Ok(None);
        }
        let mut power = Power {
            sources: chosen,
            zones: sources::zones(root),
            policies: sources::policies(root, &topology.online()),
            meter,
            hz: c.power_hz,
            trace: c.trace,
            baseline: None,
        };
        if c.power_baseline > 0.0 {
            power.baseline = Some(sampler::idle(&mut power, c.power_baseline)?);
        }
        Ok(Some(power))
    }

    /// A sampler for one measurement whose children run on `measured`.
    pub fn window(&mut self, measured: Vec<Option<usize>>) -> sampler::PowerWindow<'_> {
        sampler::PowerWindow::new(self, measured)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_values() {
        assert_eq!(parse_choice("none"), Ok(Choice::Off));
        assert_eq!(
            parse_choice("battery:battery, odpm:S4M_VDD_CPUCL0"),
            Ok(Choice::Named(vec![
                "battery:battery".into(),
                "odpm:S4M_VDD_CPUCL0".into()
            ]))
        );
        assert!(parse_choice("").is_err());
        assert!(parse_choice("a,,b").is_err());
        assert!(parse_choice("a,a").is_err());
        let e = parse_choice("none,cmd").unwrap_err();
        assert!(e.contains("stands alone"), "{e}");
        assert!(check_meter(Some(&Choice::Off), Some("meter")).is_err());
        assert!(check_meter(None, Some("meter")).is_ok());
        assert_eq!(parse_hz("10"), Ok(10.0));
        assert!(parse_hz("0").is_err());
        assert!(parse_hz("1001").is_err());
        assert!(parse_hz("NaN").is_err());
        assert_eq!(parse_baseline("0"), Ok(0.0));
        assert!(parse_baseline("-1").is_err());
        assert!(parse_baseline("3601").is_err());
    }

    #[test]
    fn exit_statuses() {
        let e = PowerError::Unusable {
            name: "powercap:package-0".into(),
            why: "root only".into(),
        };
        assert_eq!(e.exit_status(), 3);
        assert_eq!(PowerError::NotUnderAb("").exit_status(), 2);
        let silent = PowerError::MeterSilent {
            command: "sleep 100".into(),
            secs: 10,
        };
        assert_eq!(silent.exit_status(), 2);
        let limited = PowerError::MeterStart {
            command: "meter".into(),
            source: std::io::Error::from_raw_os_error(nix::libc::EMFILE),
        };
        assert_eq!(limited.exit_status(), 1);
        assert_eq!(
            PowerError::Interrupted(nix::sys::signal::Signal::SIGINT).exit_status(),
            130
        );
    }
}
