//! `benchmp suite`: runs socbench's plan with the binaries next to it (or `--bin-dir`) and
//! writes the results folder: every entry's JSON, CSV, text and errors, `status.tsv` (how
//! each entry ended), the record of what it made there (what `--force` and `--resume` act
//! on), and with `--ab` or `--baseline` its comparison. It needs nothing but the binaries, so the
//! same plan runs on this machine (scripts/suite.sh builds, calls it, then plots) and on a
//! phone after `adb push` (scripts/android.sh).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use anyhow::Result;
use benchmp::{EXIT_FAILED, EXIT_OK};

mod ab;
mod entry;
pub mod exec;
pub mod plan;
pub mod quiet;
mod steps;

use crate::cmd::outdir::{Input, write_whole};
use crate::cmd::summary::{self, Outcome, StatusRow};
use entry::{Run, Runner};
use exec::StatusFile;
use plan::{Machine, Mode, SuiteEntry};

/// `benchmp suite`'s options.
#[derive(Debug, clap::Args)]
pub struct SuiteArgs {
    /// Fewer operations and repetitions (about a minute on a 2-core machine); the latency
    /// sweep ends at four times the last-level cache or 256 MiB, whichever is smaller.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// Every operation, lmbench's 11 repetitions, more strides (tens of minutes).
    #[arg(long)]
    pub full: bool,
    /// Run only this tool's entries (repeatable).
    #[arg(long, value_name = "TOOL", value_parser = clap::builder::PossibleValuesParser::new(benchmp_cli::suite_tools().iter().copied()))]
    pub only: Vec<String>,
    /// Results folder (default results/<host>-<UTC time> here); it must be new or empty, and
    /// no other suite may be writing into it.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run into a --out folder an earlier suite made, after removing what that suite recorded
    /// in it (.socbench-suite.json: every entry's files and folder, status.tsv, summary.json,
    /// the comparisons and the plots); anything else stays. Refused when removing them would
    /// remove an input (--bin-dir, --ab, --baseline, this benchmp), when something the suite
    /// writes is there and was not recorded, and for a folder without that record unless it
    /// is empty.
    #[arg(long, conflicts_with = "resume")]
    pub force: bool,
    /// Go on with a suite's folder that was stopped (a signal, a lost device): run the entries
    /// it did not finish (no row in status.tsv, or one marked interrupted) and keep the rest.
    /// The options must give the plan it was made with (mode, --only, --cpus, --trace, the
    /// binary folders, --ab and --baseline, on the same machine).
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub resume: Option<PathBuf>,
    /// Where the tools' binaries are (default: the folder of this benchmp).
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
    /// Run every entry on these CPUs (tools get --cpus LIST, dto PERF_CPU, the list's first);
    /// the all-CPU entries run one child per CPU of the list. Default: every CPU allowed.
    #[arg(long, value_name = "LIST", value_parser = benchmp::cli::cpu_list)]
    pub cpus: Option<benchmp::cli::CpuList>,
    /// Compare with an earlier results folder (benchmp compare): OUT/compare.txt, .json, .csv.
    #[arg(long, value_name = "DIR", conflicts_with = "ab")]
    pub baseline: Option<PathBuf>,
    /// Also pair every entry with the binaries in BIN_DIR (the baseline build) through
    /// benchmp ab: OUT/ab/ENTRY.json and .txt. The false-alarm rate, 0.05, is held over the
    /// whole suite (split over its entries).
    #[arg(long, value_name = "BIN_DIR")]
    pub ab: Option<PathBuf>,
    /// benchmp ab's budget per figure with --ab, seconds.
    #[arg(long, value_name = "S", default_value_t = 3.0, value_parser = seconds)]
    pub ab_time: f64,
    /// benchmp ab's process pairs per figure at most, with --ab.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub ab_processes: u32,
    /// Stop an entry that runs longer than this many seconds (status 124) and go on.
    #[arg(long, value_name = "S", value_parser = seconds)]
    pub entry_timeout: Option<f64>,
    /// Before each entry, wait up to this many seconds for the CPUs it runs on to be quiet
    /// (none more than 10 % busy over half a second); after a wait that ran out, the next
    /// ones wait 2 s at most. 0 does not wait. A noisy entry is run once more at the end
    /// either way (unless --no-rerun).
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = wait_seconds)]
    pub quiet_wait: f64,
    /// Measure each entry once: a noisy entry is kept as noisy, and a parallel entry whose
    /// children ran apart as failed, instead of being run once more at the end. For a run
    /// whose length matters more than its noise (a machine known to be busy, a CI job).
    #[arg(long)]
    pub no_rerun: bool,
    /// Pass --trace to every entry: each tool's phases become trace_marker slices (for a
    /// capture around the suite, as scripts/android.sh --trace makes).
    #[arg(long)]
    pub trace: bool,
    /// Print the plan (one `LABEL|ENV|TOOL|ARGS` line per entry, `{json}`, `{csv}` and `{dir}`
    /// for its files; --cpus, --trace and the power options not shown) and exit without
    /// running anything.
    #[arg(long)]
    pub list: bool,
    /// Do not print the summary table at the end (scripts/suite.sh prints it after plotting).
    #[arg(long)]
    pub no_summary: bool,
    #[command(flatten)]
    pub power: crate::cmd::power_args::PowerArgs,
}

/// What a folder's suite was run with; `--resume` must be run with the same.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Recipe {
    /// `quick`, `default` or `full`.
    pub mode: String,
    /// The plan's entries as `--list` prints them (the machine and `--only` included).
    pub entries: Vec<String>,
    /// `--cpus`, as given.
    pub cpus: Option<String>,
    /// `--trace`.
    pub trace: bool,
    /// The tools' folder.
    pub bin_dir: PathBuf,
    /// `--ab`, with its budget and processes.
    pub ab: Option<PathBuf>,
    /// `--ab-time`.
    pub ab_time: f64,
    /// `--ab-processes`.
    pub ab_processes: u32,
    /// `--baseline`.
    pub baseline: Option<PathBuf>,
    /// The power options, when any was given (absent from the records of folders made
    /// without them, and before they existed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::cmd::power_args::PowerArgs>,
}

fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= 86_400.0 => Ok(x),
        _ => Err(format!(
            "'{s}' is not a number of seconds above 0 (at most 86400)"
        )),
    }
}

fn wait_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=3600.0).contains(&x) => Ok(x),
        _ => Err(format!("'{s}' is not a number of seconds from 0 to 3600")),
    }
}

impl SuiteArgs {
    fn mode(&self) -> Mode {
        match (self.quick, self.full) {
            (true, _) => Mode::Quick,
            (_, true) => Mode::Full,
            _ => Mode::Default,
        }
    }
}

/// A refusal: exit status 2, one line, nothing run.
fn refuse<T>(why: String) -> Result<T> {
    Err(benchmp::Usage(why).into())
}

/// Refuses an environment every entry would refuse (each exiting 2 while the suite went on):
/// benchmp ab's descriptor variable, and LMBENCH_SCHED, ENOUGH, TIMING_O, LOOP_O and
/// BENCHMP_CALIBRATION as the tools check them.
pub(crate) fn check_environment() -> Result<()> {
    let fds = benchmp::run::worker::FDS_ENV;
    if let Some(v) = std::env::var_os(fds) {
        return Err(benchmp::Usage(format!(
            "{fds}={} is set: it is how benchmp ab talks to its workers, and every entry would take itself for one; unset it",
            foundation::error::printable(&v.to_string_lossy())
        ))
        .into());
    }
    benchmp::sched::env_policy()?;
    benchmp::timing::check_env()?;
    benchmp::cli::TimingArgs::default().cache_file()?;
    Ok(())
}

/// What the plan is sized by here: the CPUs given (each online and allowed for this process,
/// as the tools require) or allowed, and the first one's largest cache.
fn machine(
    topology: &benchmp::topology::Topology,
    cpus: Option<&[usize]>,
) -> Result<(Machine, Vec<usize>)> {
    let online = topology.online();
    let allowed = benchmp::sys::affinity::allowed_cpus().unwrap_or_else(|_| online.clone());
    if let Some(c) = cpus {
        benchmp::sched::check_cpu_list(c, &online, &allowed).map_err(|e| {
            benchmp::Usage(format!(
                "--cpus {}: {e}",
                benchmp::cpulist::format_cpu_list(c)
            ))
        })?;
    }
    let mut list: Vec<usize> = match cpus {
        Some(c) => c.to_vec(),
        None => allowed,
    };
    list.sort_unstable();
    list.dedup();
    let first = list.first().copied().unwrap_or(0);
    let llc_bytes = topology
        .caches
        .iter()
        .filter(|c| c.shared_cpus.contains(&first))
        .map(|c| c.size_bytes)
        .max()
        .unwrap_or(0);
    Ok((
        Machine {
            cpus: list.len().max(1),
            llc_bytes,
        },
        list,
    ))
}

/// Every tool of `tools` is an executable file in `dir` (`what` names the folder).
fn check_bins(dir: &Path, what: &str, tools: &[&str]) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    if !dir.is_dir() {
        return Err(format!("{what} {} is not a folder", dir.display()));
    }
    for t in tools {
        let p = dir.join(t);
        let ok =
            std::fs::metadata(&p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        if !ok {
            return Err(format!("{what} {} has no executable {t}", dir.display()));
        }
    }
    Ok(())
}

/// An absolute form of `p` (relative to the current folder).
pub(crate) fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn shown(p: &Path) -> String {
    foundation::error::shown(p)
}

/// What `--force` or `--resume` must never remove: this program, the tools run and compared,
/// the baseline folder (each folder first, so a refusal names it).
fn inputs(
    me: &Path,
    bin: &Path,
    ab: Option<&Path>,
    baseline: Option<&Path>,
    tools: &[&str],
) -> Vec<Input> {
    let input = |what: String, path: &Path, whole: bool| Input {
        what,
        path: path.to_path_buf(),
        whole,
    };
    let mut v = vec![input(
        format!("the program running ({})", shown(me)),
        me,
        false,
    )];
    for (option, dir) in [("--bin-dir", Some(bin)), ("--ab", ab)] {
        let Some(dir) = dir else { continue };
        v.push(input(format!("{option} {}", shown(dir)), dir, false));
        for t in tools {
            let p = dir.join(t);
            v.push(input(format!("{option}'s {t} ({})", shown(&p)), &p, false));
        }
    }
    if let Some(b) = baseline {
        v.push(input(format!("--baseline {}", shown(b)), b, true));
    }
    v
}

/// The rows an earlier run of a resumed folder finished (anything but interrupted) for
/// entries of `plan`.
fn finished(dir: &Path, plan: &[SuiteEntry]) -> Result<Vec<StatusRow>> {
    let rows = match summary::read_status(dir) {
        Ok(rows) => rows,
        // Stopped before its first row was written.
        Err(e)
            if matches!(
                e.downcast_ref::<benchmp::input::InputError>(),
                Some(benchmp::input::InputError::Missing(_))
            ) =>
        {
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    Ok(rows
        .into_iter()
        .filter(|r| r.outcome != Some(Outcome::Interrupted))
        .filter(|r| plan.iter().any(|e| e.label == r.label))
        .collect())
}

/// Runs the suite; the exit status: 0 every entry measured (some perhaps on a busy machine,
/// `noisy`) and nothing regressed, 1 otherwise, 2 refused before anything ran, 128+n stopped
/// by signal n.
pub fn run(args: &SuiteArgs) -> Result<i32> {
    let inputs = match steps::inputs(args)? {
        ControlFlow::Continue(i) => i,
        ControlFlow::Break(code) => return Ok(code),
    };
    let mut folder = steps::open_folder(args, &inputs)?;
    // From here on a stop signal only sets a flag: the running entry is stopped and reaped,
    // and recorded as interrupted, before the suite ends.
    let _signals = benchmp::sys::process::InterruptGuard::install();
    folder.out.clear(&folder.doomed)?;
    folder.out.record(&folder.shared)?;
    let dest = folder.out.path.clone();
    steps::announce(&inputs, &folder, &dest)?;
    let order: Vec<String> = inputs.plan.iter().map(|e| e.label.clone()).collect();
    let kept = std::mem::take(&mut folder.kept);
    let mut status = StatusFile::create(&dest.join("status.tsv"), order, kept)?;
    let mut runner = steps::runner(args, &inputs, &dest, folder.out.lock_fd());
    let mut tally = match steps::entries(args, &inputs, &mut folder, &mut runner, &mut status)? {
        ControlFlow::Continue(t) => t,
        ControlFlow::Break(code) => return Ok(code),
    };
    if inputs.ab_bin.is_some() {
        tally.failures += steps::gather_paired(&dest, &inputs)?;
    }
    if let Some(b) = &inputs.baseline {
        match steps::compare_with(b, &inputs.me, &dest, folder.out.lock_fd())? {
            ControlFlow::Continue(regressed) => tally.regressed |= regressed,
            ControlFlow::Break(code) => return Ok(code),
        }
    }
    let summary = write_summary(&dest)?;
    if !args.no_summary {
        benchmp::cli::write_stdout(&summary::render(&summary))?;
    }
    Ok(if tally.failures == 0 && !tally.regressed {
        EXIT_OK
    } else {
        EXIT_FAILED
    })
}

/// Leaves the folder's summary in it (`summary.json`, benchmp's headline rule) for whoever
/// reads it later without a benchmp that runs there (the LAVA report of a phone's results).
fn write_summary(dest: &Path) -> Result<summary::FolderSummary> {
    // The folder is the suite's own: a file in it that cannot be read is a failure here, not
    // bad input.
    let s = summary::summarize(dest)
        .map_err(|e| anyhow::anyhow!("the results folder cannot be summed up: {e:#}"))?;
    write_whole(
        &dest.join("summary.json"),
        (serde_json::to_string_pretty(&s)? + "\n").as_bytes(),
    )?;
    Ok(s)
}

/// The status after a stop signal, said in one line, with the folder's summary written.
/// Runs each of the `noisy` entries (and those whose children ran apart) once more, at the
/// end and after a wait for a quiet machine (their second run replaces the first), and says
/// which stayed noisy and why. The entries that failed the second time, or the stop signal
/// that ended it.
fn again(
    runner: &mut Runner<'_>,
    noisy: &[&SuiteEntry],
    status: &mut StatusFile,
) -> Result<Result<usize, nix::sys::signal::Signal>> {
    if noisy.is_empty() {
        return Ok(Ok(0));
    }
    outln!(
        "== {} entr{} run again (noisy, or children that ran apart)",
        noisy.len(),
        if noisy.len() == 1 { "y" } else { "ies" }
    );
    let (mut failed, mut stayed) = (0, Vec::new());
    for e in noisy {
        if let Some(sig) = benchmp::sys::process::interrupted() {
            return Ok(Err(sig));
        }
        match runner.run(e, status, true)? {
            Run::Interrupted(sig) => return Ok(Err(sig)),
            Run::Ended {
                outcome: Outcome::Noisy,
                report,
                ..
            } => stayed.push(format!("{} ({})", e.label, entry::reason(report.as_ref()))),
            Run::Ended {
                outcome: Outcome::Failed,
                ..
            } => failed += 1,
            Run::Ended { .. } => {}
        }
    }
    if stayed.is_empty() {
        outln!("   none stayed noisy");
    } else {
        outln!("   stayed noisy: {}", stayed.join("; "));
    }
    Ok(Ok(failed))
}

fn stopped(sig: nix::sys::signal::Signal, dest: &Path, running: bool) -> Result<i32> {
    let code = 128 + sig as i32;
    if let Err(e) = write_summary(dest) {
        benchmp::errln!(
            "benchmp: {}",
            foundation::error::printable(&format!("{e:#}").replace('\n', " "))
        );
    }
    let what = if running {
        "the running entry was stopped and recorded as interrupted"
    } else {
        "no entry was running"
    };
    benchmp::errln!(
        "benchmp: suite interrupted by {}; {what} (benchmp suite --resume {} with the same options runs what is left)",
        sig.as_str(),
        shown(dest)
    );
    Ok(code)
}

/// A file the suite's own commands wrote (an ab table, compare.txt), read as any input is;
/// empty when it cannot be.
fn read_own(path: &Path) -> String {
    benchmp::input::read_text(path, benchmp::input::MAX_INPUT_BYTES).unwrap_or_default()
}

/// The first 300 bytes of a file of errors, on one line, control characters escaped.
pub(crate) fn head(path: &Path) -> String {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    if let Ok(f) = benchmp::input::open_file(path) {
        let _ = f.take(300).read_to_end(&mut bytes);
    }
    one_line(&String::from_utf8_lossy(&bytes), 300)
}

/// `s` on one line of at most `max` bytes, control characters escaped.
pub(crate) fn one_line(s: &str, max: usize) -> String {
    let mut t: String = s.trim_end().replace('\n', " ");
    if t.len() > max {
        let mut cut = max;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        t.truncate(cut);
    }
    foundation::error::printable(&t).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchmp::EXIT_USAGE;

    #[test]
    fn usage_exit() {
        assert_eq!(
            benchmp::cli::exit_code_of(&*refuse::<()>("x".into()).unwrap_err()),
            EXIT_USAGE
        );
    }
}
