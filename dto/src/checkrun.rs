//! `dto check` in benchmp children: each function's checks run in a child of their own, which
//! loads the implementation itself, so a library that crashes (or hangs) ends that child, not
//! dto. The parent then narrows the crash down, one child per size in the check's order, to
//! the first size that crashes on its own, and names the function and the size.

use std::time::Duration;

use benchmp::cli::{PlacementArgs, TimingArgs};
use benchmp::sys::process::Exit;
use benchmp::{Iterations, Session, Spec};
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::check::{self, CheckReport, Func};
use crate::impls::{ImplSpec, Loaded};
use crate::measure::load;
use crate::report::{CheckSummary, Mode, PassFail};

/// The check's report data (the children's records; `dto check` prints its own output).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckData;

impl benchmp::ToolData for CheckData {
    type Params = CheckParams;
    type Sample = CheckReport;
    type Child = String;
    type Extra = ();
}

/// What one child checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckParams {
    /// The function.
    pub func: Func,
    /// The sizes, in order.
    pub sizes: Vec<usize>,
}

/// One child's work: the checks of one function at the given sizes, on threads started (with
/// their buffers) when the child set up, so that what the process cannot have is the
/// harness's error, not the implementation's crash.
#[derive(Debug)]
struct CheckBench {
    loaded: Loaded,
    pool: check::Pool,
    sizes: Vec<usize>,
    report: Option<CheckReport>,
}

impl benchmp::Benchmark for CheckBench {
    type Sample = CheckReport;
    type Child = String;

    fn run(&mut self, iterations: u64) -> u64 {
        let mut r = CheckReport::default();
        for _ in 0..iterations {
            r = self.pool.run(&self.sizes);
        }
        let cases = r.cases;
        self.report = Some(r);
        cases
    }

    fn sample_detail(&mut self) -> Option<CheckReport> {
        self.report.take()
    }

    fn child_detail(&mut self) -> Option<String> {
        Some(self.loaded.source.clone())
    }

    fn keep_busy(&mut self, _iterations: u64) -> u64 {
        0
    }
}

/// What a whole check found.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Where the functions came from (as the children loaded them).
    pub source: String,
    /// Cases, failures and mismatches of the four functions.
    pub report: CheckReport,
}

impl Outcome {
    /// What `dto check --json` prints of it, for `spec` checked with `threads` threads.
    pub fn summary(&self, spec: &ImplSpec, threads: usize) -> CheckSummary {
        CheckSummary {
            tool: "dto".into(),
            mode: Mode::Check,
            implementation: spec.clone(),
            source: self.source.clone(),
            threads,
            cases: self.report.cases,
            failures: self.report.failures,
            mismatches: self.report.mismatches.clone(),
            result: PassFail::of(self.report.failures),
        }
    }
}

/// How a child ended without a result, in words (`crashed (SIGSEGV)`, `hung`), or `None`
/// when it did not (it reported an error, or the run was interrupted).
fn death(e: &benchmp::Error) -> Option<String> {
    match e {
        benchmp::Error::ChildDied { exit, .. } => Some(match exit {
            Exit::Signal(s) => format!("crashed ({})", s.as_str()),
            Exit::Code(c) => format!("exited with status {c} without a result"),
        }),
        benchmp::Error::ChildGone { .. } | benchmp::Error::Protocol { .. } => {
            Some("ended without a result".into())
        }
        benchmp::Error::ChildHung { secs, .. } => Some(format!("hung (silent for {secs} s)")),
        _ => None,
    }
}

/// `dto check`: refuses an implementation this machine cannot run or load (exit 3 or 2), sets
/// `env` for the children, runs the checks and writes what they found on stdout, as JSON with
/// `json`. Exit status 1 when a result was wrong.
pub fn check(
    spec: &ImplSpec,
    threads: usize,
    env: &[(String, String)],
    timeout: Duration,
    json: bool,
) -> Result<i32, Error> {
    spec.require()?;
    // Inherited by the children, which load the implementation (this process never does).
    crate::measure::set_process_env(env)?;
    let s = run(spec, threads, timeout)?.summary(spec, threads);
    benchmp::cli::write_stdout(&if json {
        crate::report::sorted_json(&s)?
    } else {
        crate::text::check(&s)
    })?;
    if s.failures > 0 {
        benchmp::console::err(&crate::text::check_failed(&s));
        return Ok(benchmp::EXIT_FAILED);
    }
    Ok(benchmp::EXIT_OK)
}

/// Runs the four functions' checks of `spec`, each in a child with `threads` threads. The
/// library's variables must already be in this process's environment. A child that dies
/// makes the check fail with the function and the first size that dies on its own.
pub fn run(spec: &ImplSpec, threads: usize, timeout: Duration) -> Result<Outcome, Error> {
    // A malformed LMBENCH_SCHED is refused as `dto ab` refuses it (exit 2), although the
    // check's children are unpinned whatever it says: a typo is never silently passed.
    benchmp::sched::env_policy()?;
    let placement = PlacementArgs {
        // Unpinned, as an application's threads would be; one child at a time.
        sched: Some("DEFAULT".into()),
        parallel: Some(1),
        cpus: None,
        timeout: timeout.as_secs().max(1),
        sequential: true,
        ..Default::default()
    };
    let mut session = Session::<CheckData>::start("dto", &placement, &TimingArgs::default(), None)?;
    session.set_repetitions(1);
    let mut out = Outcome::default();
    for func in Func::ALL {
        let sizes = func.sizes();
        match check_in_child(&mut session, spec, threads, func, &sizes) {
            Ok((source, r)) => {
                out.source = source;
                out.report.merge(r);
            }
            Err(e) => {
                let Some(how) = died(&e) else {
                    return Err(Error::at(format!("{func} check of {spec}"), e));
                };
                return Err(narrow(&mut session, spec, threads, func, &sizes, &how));
            }
        }
    }
    Ok(out)
}

/// Looks for the first size of `func` whose check alone ends its child, one child per size;
/// the error that fails the check.
fn narrow(
    session: &mut Session<CheckData>,
    spec: &ImplSpec,
    threads: usize,
    func: Func,
    sizes: &[usize],
    how: &str,
) -> Error {
    for &size in sizes {
        match check_in_child(session, spec, threads, func, &[size]) {
            Ok(_) => {}
            Err(e) => {
                return match died(&e) {
                    Some(at) => Error::CheckFailed(format!("{func} {at} at size {size} ({spec})")),
                    None => Error::at(format!("{func} check of {spec} at size {size}"), e),
                };
            }
        }
    }
    Error::CheckFailed(format!(
        "{func} {how} during its check, but no size ended its child on its own ({spec})"
    ))
}

/// How a check's child died, when `e` says it did ([`death`]).
fn died(e: &Error) -> Option<String> {
    match e {
        Error::Run(run) => death(run),
        _ => None,
    }
}

/// One child checking `func` at `sizes`: the source it loaded and what it found.
fn check_in_child(
    session: &mut Session<CheckData>,
    spec: &ImplSpec,
    threads: usize,
    func: Func,
    sizes: &[usize],
) -> Result<(String, CheckReport), Error> {
    let name = match sizes {
        [one] => format!("{func} size {one}"),
        _ => func.to_string(),
    };
    let params = CheckParams {
        func,
        sizes: sizes.to_vec(),
    };
    let mut s = Spec::latency(&name, 1.0, params);
    s.iterations = Iterations::Fixed(1);
    s.subtract_loop_overhead = false;
    let m = session.measure(s, |_| {
        let loaded = load(spec)?;
        Ok(CheckBench {
            pool: check::Pool::start(loaded.fns, threads, func, sizes)?,
            loaded,
            sizes: sizes.to_vec(),
            report: None,
        })
    })?;
    let child = m.children.first().ok_or(Error::NoChild)?;
    let (_, r) = child.timed_detail()?;
    Ok((child.detail.clone().unwrap_or_default(), r.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Mismatch;

    #[test]
    fn the_summary_keeps_the_json_names_and_sorted_keys() {
        let out = Outcome {
            source: "built-in portable kernel".into(),
            report: CheckReport {
                cases: 10,
                failures: 1,
                mismatches: vec![Mismatch {
                    op: "memcpy".into(),
                    size: 1000,
                    src_offset: 1,
                    dst_offset: 0,
                    thread: 0,
                    detail: "byte 500".into(),
                }],
            },
        };
        let spec = ImplSpec::Kernel(crate::kernels::Kernel::Portable);
        let text = crate::report::sorted_json(&out.summary(&spec, 4)).unwrap();
        let keys: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("  \""))
            .map(|l| l.trim().split('"').nth(1).unwrap())
            .collect();
        assert_eq!(
            keys,
            [
                "cases",
                "failures",
                "impl",
                "mismatches",
                "mode",
                "result",
                "source",
                "threads",
                "tool"
            ]
        );
        assert!(
            text.contains("\"detail\": \"byte 500\",\n      \"dst_offset\": 0,"),
            "{text}"
        );
        let j: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (&j["impl"], &j["mode"], &j["result"]),
            (&"portable".into(), &"check".into(), &"FAIL".into())
        );
        assert_eq!(
            serde_json::from_value::<CheckSummary>(j).unwrap(),
            out.summary(&spec, 4)
        );
    }
}
