//! Why a run failed: a child that could not start, died, hung or spoke garbage, children
//! that did not run together, an interrupt, and the session's own refusals.

use nix::sys::signal::Signal;

use super::Who;
use super::overlap::Overlap;
use crate::error::{
    EXIT_FAILED, EXIT_UNSUPPORTED, EXIT_USAGE, ExitProbe, ExitStatus, Unsupported, Usage, probe,
};
use crate::sys::process::{Exit, ForkError};

/// Where a child was when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Pinning, building its benchmark or sizing its count.
    Setup,
    /// Between the common start and its result.
    Measuring,
    /// After its result reached the parent.
    AfterReporting,
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stage::Setup => "before it was ready",
            Stage::Measuring => "while measuring",
            Stage::AfterReporting => "after reporting",
        })
    }
}

/// Why a run failed. Messages never repeat their source: the one-line rendering
/// (`{:#}`, see [`crate::cli::report_error`]) appends each source after a colon.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// fork(2) failed or was refused.
    #[error("cannot start {child}")]
    Fork {
        /// The child that could not be started.
        child: Who,
        /// Why.
        #[source]
        source: ForkError,
    },
    /// A pipe, poll or affinity call of the parent failed.
    #[error("the parent's {what} call failed")]
    Sys {
        /// The call.
        what: &'static str,
        /// The system error.
        #[source]
        source: nix::Error,
    },
    /// A child died, or ended without reporting.
    #[error("{child} {exit} {stage}")]
    ChildDied {
        /// Which child.
        child: Who,
        /// How it ended.
        exit: Exit,
        /// When.
        stage: Stage,
    },
    /// A child's control pipe closed under the parent.
    #[error("{child} closed its control pipe {stage}")]
    ChildGone {
        /// Which child.
        child: Who,
        /// When.
        stage: Stage,
    },
    /// A child reported an error (its own exit code and its rendered error chain: the chain
    /// crosses the pipe as text).
    #[error("{child}: {message}")]
    ChildError {
        /// Which child.
        child: Who,
        /// Exit code the child chose.
        code: i32,
        /// Its message.
        message: String,
    },
    /// A child stopped talking.
    #[error("{child} hung: no word from it for {secs} s; killed")]
    ChildHung {
        /// Which child.
        child: Who,
        /// Seconds of silence.
        secs: u64,
    },
    /// A child sent something that is not a message.
    #[error("{child} sent garbage")]
    Protocol {
        /// Which child.
        child: Who,
        /// Decoder error.
        #[source]
        source: serde_json::Error,
    },
    /// The children of a parallel run did not time their intervals together.
    #[error(
        "{measurement}: {} in {} attempt{}: in the last, {}; a parallel figure needs every child to time {:.0} % of its work while all are timing (another task held a child's CPU? use --sequential to time the children one by one)",
        crate::run::overlap::RAN_APART,
        .overlap.attempts,
        if .overlap.attempts == 1 { "" } else { "s" },
        .overlap.apart(),
        crate::run::overlap::MIN_OVERLAP * 100.0
    )]
    NotTogether {
        /// Which measurement.
        measurement: String,
        /// The windows.
        overlap: Overlap,
    },
    /// A load child did not load the whole measuring window.
    #[error(
        "{measurement}: {} did not load the whole measuring window: it stalled for {:.3} s of {:.3} s (longest batch {:.3} s against a median of {:.3} ms), and ran from {:.3} s before the window to {:.3} s after it; the figure would not be under load",
        .load.who(),
        .load.stalled_ns as f64 / 1e9,
        .load.window_ns() as f64 / 1e9,
        .load.longest_batch_ns as f64 / 1e9,
        .load.median_batch_ns as f64 / 1e6,
        (.load.window_start_ns as i128 - .load.started_ns as i128) as f64 / 1e9,
        (.load.stopped_ns as i128 - .load.window_end_ns as i128) as f64 / 1e9
    )]
    LoadNotRunning {
        /// Which measurement.
        measurement: String,
        /// The load child's result.
        load: Box<super::LoadRun>,
    },
    /// Worker mode: the link to `benchmp ab` failed (it went away, or sent garbage).
    #[error("{0}")]
    Driver(String),
    /// Worker mode asked for by an environment variable that names no usable descriptors.
    #[error("{0}")]
    DriverEnv(String),
    /// SIGINT, SIGTERM or SIGHUP arrived; every child was killed and reaped.
    #[error("interrupted by {}; all children killed and reaped", .0.as_str())]
    Interrupted(Signal),
    /// Bad placement request.
    #[error(transparent)]
    Placement(#[from] crate::sched::PlacementError),
    /// Bad calibration input.
    #[error(transparent)]
    Calibration(#[from] crate::timing::CalibrationError),
    /// Topology unreadable.
    #[error(transparent)]
    Topology(#[from] crate::topology::TopologyError),
    /// A bad run-conditions request (a clock outside a CPU's range, an unknown governor).
    #[error(transparent)]
    Usage(#[from] Usage),
    /// A run condition this machine cannot provide (no cpufreq, counters refused, no thermal
    /// zones).
    #[error(transparent)]
    Unsupported(#[from] Unsupported),
    /// A run condition refused (`--pin-freq` out of range, or without cpufreq).
    #[error(transparent)]
    Refused(#[from] crate::error::Refused),
    /// `--cool-down`: the CPUs stayed too hot for too long.
    #[error("{0}")]
    CoolDown(String),
    /// Power cannot be measured as asked (a source missing or unusable, a meter that fails).
    #[error(transparent)]
    Power(#[from] crate::power::PowerError),
}

impl Error {
    /// The exit status this error should end the tool with.
    pub fn exit_code(&self) -> i32 {
        self.exit_status()
    }
}

impl ExitStatus for Error {
    fn exit_status(&self) -> i32 {
        match self {
            Error::ChildError { code, .. } if *code != 0 => *code,
            Error::Interrupted(sig) => 128 + *sig as i32,
            Error::Placement(_)
            | Error::DriverEnv(_)
            | Error::Calibration(_)
            | Error::Usage(_)
            | Error::Topology(crate::topology::TopologyError::GivenRoot { .. }) => EXIT_USAGE,
            Error::Unsupported(_) => EXIT_UNSUPPORTED,
            Error::Refused(r) => r.exit_status(),
            Error::Power(p) => p.exit_status(),
            _ => EXIT_FAILED,
        }
    }
}

/// The error types of the framework below its front door, for [`crate::error::exit_code_by`]:
/// what a child's or a tool's chain may hold.
pub const PROBES: &[ExitProbe] = &[
    probe::<Error>,
    probe::<crate::sys::mem::MemError>,
    probe::<crate::size::SizeError>,
    probe::<crate::cpulist::CpuListError>,
    probe::<crate::sched::PlacementError>,
    probe::<crate::timing::CalibrationError>,
    probe::<crate::input::InputError>,
    probe::<crate::power::PowerError>,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code_by;

    #[test]
    fn exit_codes() {
        let e = Error::ChildError {
            child: Who {
                index: 0,
                cpu: Some(0),
            },
            code: 3,
            message: "m".into(),
        };
        assert_eq!(e.exit_code(), 3);
        assert_eq!(Error::Interrupted(Signal::SIGINT).exit_code(), 130);
        let size = crate::size::parse_size("12q").unwrap_err();
        assert_eq!(exit_code_by(&size, PROBES), 2);
        let e = Error::Unsupported(Unsupported("x".into()));
        assert_eq!(exit_code_by(&e, PROBES), 3);
    }
}
