//! Worker mode for `benchmp ab`: a tool whose repetitions start only when a driver asks.
//!
//! `benchmp ab` starts two builds of one tool with [`FDS_ENV`] naming two inherited pipe ends.
//! Each measurement's children are forked, pinned and built before the worker says
//! [`ToDriver::Ready`]; one side is then asked to size its count to the driver's repetition
//! length ([`REP_ENV`], [`ToWorker::Size`]) alone on its CPUs, and every
//! [`ToWorker::Step`] runs one timed repetition in every child and is answered with its
//! samples (between steps, [`ToWorker::Renew`] gives a child that can fresh buffers), until
//! [`ToWorker::Stop`] ends the measurement and the tool goes on as usual. The
//! driver interleaves the two workers' steps, so both builds see the machine in the same state.
//! Messages are JSON, one per line.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::BorrowedFd;
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use crate::schema::{Metric, Sizing};

/// `R,W`: the descriptors a worker reads the driver's commands from and writes to.
pub const FDS_ENV: &str = "BENCHMP_AB_FDS";
/// The length a repetition is sized to in worker mode, µs.
pub const REP_ENV: &str = "BENCHMP_AB_REP_US";
/// The repetition length without [`REP_ENV`], µs.
pub const DEFAULT_REP_US: u64 = 20_000;
/// The pages a worker's buffers take when its command names none (`thp`, `4k`, `huge`,
/// `system`): set by the driver, so that both sides' buffers are backed alike.
pub const PAGES_ENV: &str = "BENCHMP_AB_PAGES";

/// Worker to driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToDriver {
    /// The tool started as a worker (sent when its session starts).
    Hello {
        /// The tool (`bw_mem`).
        tool: String,
        /// socbench's version.
        version: String,
        /// Its command line.
        args: Vec<String>,
    },
    /// A measurement's children are ready for their first step.
    Ready {
        /// The measurement's name (`rd 64M`): both sides must agree.
        measurement: String,
        /// How a sample becomes the figure.
        metric: Metric,
        /// The tool's parameters of the measurement (sizes, strides, settings).
        #[serde(default)]
        params: serde_json::Value,
        /// What sizes it besides its name, as the tool declares it: with the name, what makes
        /// two sides' measurements the same figure (absent from builds before it was sent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sizing: Option<Sizing>,
        /// CPU of each measuring child.
        cpus: Vec<Option<usize>>,
        /// The children can renew their buffers ([`ToWorker::Renew`]); absent from older
        /// builds, which are never asked.
        #[serde(default)]
        renews: bool,
        /// The children are timed one after another (`--sequential`): a step's figure is their
        /// mean, not their sum; absent from older builds, which stepped them together.
        #[serde(default)]
        sequential: bool,
    },
    /// The answer to [`ToWorker::Renew`]: true when every child's buffers are fresh.
    Renewed {
        /// Every child renewed.
        renewed: bool,
    },
    /// The count each child sized for one repetition, after [`ToWorker::Size`].
    Sized {
        /// One per child, in index order.
        counts: Vec<u64>,
    },
    /// One step's samples, one per child in index order.
    Rep {
        /// The samples.
        samples: Vec<StepSample>,
    },
    /// The measurement cannot run as a worker (why, in one line).
    Refused {
        /// Why.
        message: String,
    },
    /// Every measurement the run will make, in order, sent before the first
    /// [`ToDriver::Ready`] by a tool that knows them: the driver refuses two commands that
    /// measure different figures before it times any pair.
    Plan {
        /// Each measurement as its [`ToDriver::Ready`] will name it.
        measurements: Vec<Planned>,
    },
}

/// One measurement of a [`ToDriver::Plan`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Planned {
    /// Its name, as in [`ToDriver::Ready`].
    pub measurement: String,
    /// Its parameters, as in [`ToDriver::Ready`].
    #[serde(default)]
    pub params: serde_json::Value,
    /// Its sizing, as in [`ToDriver::Ready`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizing: Option<Sizing>,
}

/// One child's timed repetition of one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSample {
    /// Iterations run.
    pub iterations: u64,
    /// Clock difference, ns.
    pub elapsed_ns: u64,
    /// After the timing and loop overheads, ns.
    pub net_ns: u64,
    /// Start, CLOCK_MONOTONIC ns.
    pub start_ns: u64,
    /// CPU at the start and the end.
    pub cpus: (Option<usize>, Option<usize>),
    /// Involuntary context switches of the child during the step.
    #[serde(default)]
    pub preempted: u64,
    /// CPU time the child's thread got during the step, ns: below the elapsed time by what
    /// other tasks, or a CPU quota, took from it.
    #[serde(default)]
    pub cpu_ns: u64,
}

/// Driver to worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToWorker {
    /// Size the count to the repetition length (asked of one side only, so it sizes alone).
    Size,
    /// Run one repetition of this many iterations in every child.
    Step {
        /// Iterations per child.
        iterations: u64,
    },
    /// Give every child fresh buffers and run one untimed repetition over them (sent only to
    /// a worker whose [`ToDriver::Ready`] said it renews).
    Renew,
    /// The measurement is over.
    Stop,
}

/// Why the link to the driver failed.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// The variable does not name two open descriptors.
    #[error("{FDS_ENV}={0}: not two open descriptors R,W given by benchmp ab")]
    Env(String),
    /// Reading or writing the pipes failed, or the driver closed them.
    #[error("the benchmp ab driver went away ({0})")]
    Gone(String),
    /// A line that is not a command.
    #[error("the benchmp ab driver sent garbage: {0}")]
    Garbage(String),
}

/// The worker's two pipe ends.
#[derive(Debug)]
pub struct Link {
    r: BufReader<File>,
    w: File,
}

static LINK: OnceLock<Result<Mutex<Link>, String>> = OnceLock::new();

/// The link from [`FDS_ENV`], opened once; `None` when this is no worker.
fn link() -> Option<Result<&'static Mutex<Link>, LinkError>> {
    let spec = std::env::var(FDS_ENV).ok()?;
    let opened = LINK.get_or_init(|| {
        let bad = || spec.clone();
        let (r, w) = spec.split_once(',').ok_or_else(bad)?;
        let fd = |s: &str| s.trim().parse::<i32>().map_err(|_| bad());
        let (r, w) = (fd(r)?, fd(w)?);
        let adopt = |fd| crate::sys::process::adopt_inherited_fd(fd).map_err(|_| bad());
        Ok(Mutex::new(Link {
            r: BufReader::new(adopt(r)?),
            w: adopt(w)?,
        }))
    });
    Some(opened.as_ref().map_err(|s| LinkError::Env(s.clone())))
}

/// A `benchmp ab` worker's run: read from the driver's environment once, when the tool's
/// arguments are parsed ([`crate::cli::PlacementArgs::worker`]), and handed down from there
/// (the session, the power sources, the tools' own choices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerMode {
    /// The repetition length the driver asked for ([`REP_ENV`], else [`DEFAULT_REP_US`]), ns.
    pub rep_ns: u64,
    /// The pages the driver asked of both sides' buffers ([`PAGES_ENV`]), if any.
    pub pages: Option<crate::Pages>,
}

impl WorkerMode {
    /// The worker mode [`FDS_ENV`], [`REP_ENV`] and [`PAGES_ENV`] set; `None` when this
    /// process is no worker.
    pub fn from_env() -> Option<WorkerMode> {
        use clap::ValueEnum;
        std::env::var_os(FDS_ENV)?;
        let rep_us = std::env::var(REP_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&us| us > 0)
            .unwrap_or(DEFAULT_REP_US);
        let pages = std::env::var(PAGES_ENV)
            .ok()
            .and_then(|v| crate::Pages::from_str(v.trim(), false).ok());
        Some(WorkerMode {
            rep_ns: rep_us * 1000,
            pages,
        })
    }
}

/// A session's one handle on the `benchmp ab` driver that paces it: what the session tells
/// the driver and how it hands a measurement over to it. The children's side of the pacing
/// is the harness's ([`super::Paced`], `parent::steps`).
#[derive(Debug, Clone, Copy)]
pub struct Driver {
    mode: WorkerMode,
}

impl Driver {
    /// Says hello to the driver as `tool` (its version and command line, which the driver
    /// checks against the other side's).
    pub fn join(mode: WorkerMode, tool: &str) -> Result<Driver, super::Error> {
        send(&ToDriver::Hello {
            tool: tool.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            args: std::env::args().collect(),
        })
        .map_err(|e| match e {
            LinkError::Env(_) => super::Error::DriverEnv(e.to_string()),
            _ => super::Error::Driver(e.to_string()),
        })?;
        Ok(Driver { mode })
    }

    /// Tells the driver every measurement the run will make ([`ToDriver::Plan`]).
    pub fn announce(&self, measurements: Vec<Planned>) -> Result<(), super::Error> {
        announce_plan(measurements).map_err(|e| super::Error::Driver(e.to_string()))
    }

    /// Makes a measurement paced by the driver: every child sizes its count to the driver's
    /// repetition length (fixed counts too: the driver shares one count between both builds)
    /// and times one repetition per step. Load children run only during their side's
    /// repetitions. Children timed one after another (`--sequential`) stay so: each step runs
    /// them in turn, and the driver averages their figures ([`ToDriver::Ready`]).
    pub fn pace(&self, cfg: &mut super::RunConfig, paced: super::Paced) {
        cfg.iterations = super::Iterations::Calibrate { hint: None };
        cfg.enough_ns = self.mode.rep_ns;
        cfg.warmup_us = 0;
        cfg.paced = Some(paced);
    }
}

/// Sends one message to the driver.
pub fn send(msg: &ToDriver) -> Result<(), LinkError> {
    let Some(link) = link() else {
        return Ok(());
    };
    let mut l = link?.lock().unwrap_or_else(|e| e.into_inner());
    let mut line = serde_json::to_vec(msg).map_err(|e| LinkError::Gone(e.to_string()))?;
    line.push(b'\n');
    l.w.write_all(&line)
        .and_then(|()| l.w.flush())
        .map_err(|e| LinkError::Gone(e.to_string()))
}

/// Worker mode: tells the driver every measurement the run will make ([`ToDriver::Plan`]);
/// nothing without a link to a driver.
pub fn announce_plan(measurements: Vec<Planned>) -> Result<(), LinkError> {
    send(&ToDriver::Plan { measurements })
}

/// The descriptor commands arrive on, to poll beside the children's pipes (the link sits in a
/// static and is never closed).
pub fn command_fd() -> Option<BorrowedFd<'static>> {
    use std::os::fd::AsRawFd;
    let link = link()?.ok()?;
    let raw = link
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .r
        .get_ref()
        .as_raw_fd();
    Some(crate::sys::process::borrow_static_fd(raw))
}

/// True when a command line is waiting (or the driver hung up): [`next`] will not block.
pub fn has_buffered_command() -> bool {
    link().and_then(Result::ok).is_some_and(|l| {
        !l.lock()
            .unwrap_or_else(|e| e.into_inner())
            .r
            .buffer()
            .is_empty()
    })
}

/// Reads the next command (blocking); EOF is an error: the driver went away.
pub fn next() -> Result<ToWorker, LinkError> {
    let Some(link) = link() else {
        return Ok(ToWorker::Stop);
    };
    let mut l = link?.lock().unwrap_or_else(|e| e.into_inner());
    let mut line = String::new();
    match l.r.read_line(&mut line) {
        Ok(0) => Err(LinkError::Gone("its pipe closed".into())),
        Ok(_) => serde_json::from_str(line.trim()).map_err(|_| LinkError::Garbage(line)),
        Err(e) => Err(LinkError::Gone(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_as_json_lines() {
        let m = ToDriver::Ready {
            measurement: "rd 64M".into(),
            metric: Metric::Rate {
                per_iteration: 1.0,
                unit: "MB/s".into(),
            },
            params: serde_json::json!({"size_bytes": 1}),
            sizing: Some(Sizing {
                size_bytes: Some(1),
                ..Sizing::default()
            }),
            cpus: vec![Some(1)],
            renews: true,
            sequential: false,
        };
        let text = serde_json::to_string(&m).unwrap();
        assert!(!text.contains('\n'));
        assert_eq!(serde_json::from_str::<ToDriver>(&text).unwrap(), m);
        let s = serde_json::to_string(&ToWorker::Step { iterations: 7 }).unwrap();
        assert_eq!(s, r#"{"step":{"iterations":7}}"#);
        assert_eq!(serde_json::to_string(&ToWorker::Stop).unwrap(), r#""stop""#);
    }
}
