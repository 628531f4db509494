//! The suite's run in its steps, each short enough to read at once: the inputs checked, the
//! results folder opened, the entries run (each paired with `--ab`'s build when asked), the
//! paired verdicts gathered, the comparison with `--baseline`. [`super::run`] calls them in
//! that order.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result};
use benchmp::EXIT_OK;

use super::ab::{self, AbRun};
use super::entry::{Run, Runner};
use super::exec::{Ended, EntryFiles, Job, StatusFile};
use super::plan::{self, Machine, SuiteEntry};
use super::{SuiteArgs, absolute, check_bins, finished, head, inputs as protected, machine};
use super::{again, read_own, refuse, shown, stopped};
use crate::cmd::outdir::{self, OutDir, Take};
use crate::cmd::summary::{Outcome, StatusRow};

/// What the suite runs with, checked before anything runs.
pub(super) struct Inputs {
    /// This benchmp.
    pub(super) me: PathBuf,
    /// The tools' folder.
    pub(super) bin: PathBuf,
    /// `--ab`'s folder.
    pub(super) ab_bin: Option<PathBuf>,
    /// `--baseline`'s folder.
    pub(super) baseline: Option<PathBuf>,
    /// `--cpus`.
    pub(super) cpus: Option<Vec<usize>>,
    /// What the plan is sized by, and the CPUs the entries run on.
    pub(super) machine: Machine,
    used_cpus: Vec<usize>,
    /// The entries selected, in their order.
    pub(super) plan: Vec<SuiteEntry>,
    /// The tools they need.
    needed: Vec<&'static str>,
}

/// Checks the environment, the binary folders and `--baseline`, and makes the plan; `--list`
/// prints it and ends there.
pub(super) fn inputs(args: &SuiteArgs) -> Result<ControlFlow<i32, Inputs>> {
    let me = std::env::current_exe().context("cannot find the path of the running benchmp")?;
    let bin = absolute(&match &args.bin_dir {
        Some(d) => d.clone(),
        None => me.parent().map(Path::to_path_buf).unwrap_or_default(),
    });
    super::check_environment()?;
    let cpus = args.cpus.as_ref().map(|c| c.0.clone());
    let topology = benchmp::topology::Topology::detect().map_err(benchmp::Error::from)?;
    let (machine, used_cpus) = machine(&topology, cpus.as_deref())?;
    let plan: Vec<SuiteEntry> = plan::plan(args.mode(), machine)
        .into_iter()
        .filter(|e| args.only.is_empty() || args.only.iter().any(|t| t == e.tool))
        .collect();
    if args.list {
        let text: String = plan.iter().map(|e| format!("{e}\n")).collect();
        benchmp::cli::write_stdout(&text)?;
        return Ok(ControlFlow::Break(EXIT_OK));
    }
    let mut needed: Vec<&'static str> = Vec::new();
    for e in &plan {
        if !needed.contains(&e.tool) {
            needed.push(e.tool);
        }
    }
    check_bins(&bin, "the binary folder", &needed).or_else(refuse)?;
    let ab_bin = args.ab.as_deref().map(absolute);
    if let Some(d) = &ab_bin {
        check_bins(d, "--ab", &needed).or_else(refuse)?;
    }
    let baseline = args.baseline.as_deref().map(absolute);
    if let Some(b) = &baseline {
        check_baseline(b, &plan)?;
    }
    Ok(ControlFlow::Continue(Inputs {
        me,
        bin,
        ab_bin,
        baseline,
        cpus,
        machine,
        used_cpus,
        plan,
        needed,
    }))
}

/// `--baseline` is a folder holding a report of at least one selected entry.
fn check_baseline(b: &Path, plan: &[SuiteEntry]) -> Result<()> {
    if !b.is_dir() {
        refuse(format!("--baseline {} is not a folder", b.display()))?;
    }
    if !plan
        .iter()
        .any(|e| b.join(format!("{}.json", e.label)).is_file())
    {
        refuse(format!(
            "--baseline {} holds no JSON report of a selected entry (such as {}.json): nothing to compare",
            b.display(),
            plan.first().map_or("", |e| e.label.as_str())
        ))?;
    }
    Ok(())
}

/// The results folder, opened and checked, with what the run will do in it.
pub(super) struct Folder {
    pub(super) out: OutDir,
    /// How the suite's mode is written (`quick`, `default`, `full`).
    mode: String,
    /// The rows a resumed folder keeps.
    pub(super) kept: Vec<StatusRow>,
    /// The labels of the entries to run.
    todo: Vec<String>,
    /// Files the suite writes besides the entries' (status, summary, comparisons).
    pub(super) shared: Vec<String>,
    /// What `--force` or `--resume` removes first.
    pub(super) doomed: Vec<String>,
}

/// Opens `--out` (new, or an earlier suite's with `--force`) or `--resume`'s folder, and
/// refuses one where the run would remove an input or write over what no suite recorded.
pub(super) fn open_folder(args: &SuiteArgs, inputs: &Inputs) -> Result<Folder> {
    let (option, out_path, take) = match &args.resume {
        Some(d) => ("--resume", absolute(d), Take::Resume),
        None => (
            "--out",
            absolute(&args.out.clone().unwrap_or_else(|| outdir::default_out(""))),
            if args.force { Take::Force } else { Take::New },
        ),
    };
    let recipe = super::Recipe {
        mode: format!("{:?}", args.mode()).to_lowercase(),
        entries: inputs.plan.iter().map(SuiteEntry::to_string).collect(),
        cpus: inputs
            .cpus
            .as_deref()
            .map(benchmp::cpulist::format_cpu_list),
        trace: args.trace,
        bin_dir: inputs.bin.clone(),
        ab: inputs.ab_bin.clone(),
        ab_time: args.ab_time,
        ab_processes: args.ab_processes,
        baseline: inputs.baseline.clone(),
        power: (!args.power.words().is_empty()).then(|| args.power.clone()),
    };
    let out = OutDir::open(
        outdir::SUITE,
        &out_path,
        take,
        &serde_json::to_value(&recipe)?,
    )
    .or_else(|e| refuse(format!("{option} {} {e}", shown(&out_path))))?;
    let kept = if take == Take::Resume {
        match finished(&out.path, &inputs.plan) {
            Ok(k) => k,
            Err(e) => {
                out.undo();
                return refuse(format!("--resume {}: {e:#}", shown(&out_path)));
            }
        }
    } else {
        Vec::new()
    };
    let todo: Vec<&SuiteEntry> = inputs
        .plan
        .iter()
        .filter(|e| !kept.iter().any(|r| r.label == e.label))
        .collect();
    let with_ab = inputs.ab_bin.is_some();
    // plots/: scripts/plot.py's (recorded here, so the plots are the suite's own files).
    let mut shared: Vec<String> = vec!["status.tsv".into(), "summary.json".into(), "plots/".into()];
    if with_ab {
        shared.push("ab/".into());
    }
    if with_ab || inputs.baseline.is_some() {
        shared.extend(["compare.txt", "compare.json", "compare.csv"].map(String::from));
    }
    let entries_files: Vec<String> = todo
        .iter()
        .flat_map(|e| EntryFiles::names(e, with_ab))
        .collect();
    let doomed = match take {
        Take::New => Vec::new(),
        Take::Force => out.recorded(),
        Take::Resume => entries_files.clone(),
    };
    let planned: Vec<String> = shared.iter().chain(&entries_files).cloned().collect();
    let inputs_kept = protected(
        &inputs.me,
        &inputs.bin,
        inputs.ab_bin.as_deref(),
        inputs.baseline.as_deref(),
        &inputs.needed,
    );
    if let Err(e) = out.check(&doomed, &planned, &inputs_kept) {
        let why = format!("{option} {}: {e}", shown(&out_path));
        out.undo();
        return refuse(why);
    }
    Ok(Folder {
        out,
        mode: recipe.mode,
        todo: todo.iter().map(|e| e.label.clone()).collect(),
        kept,
        shared,
        doomed,
    })
}

/// The suite's first line: mode, host, CPUs, folder, and what a resumed one has left.
pub(super) fn announce(inputs: &Inputs, folder: &Folder, dest: &Path) -> Result<()> {
    let host = nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    outln!(
        "== socbench suite ({}) on {host}: {} CPUs, results in {}{}",
        folder.mode,
        inputs.machine.cpus,
        dest.display(),
        if folder.kept.is_empty() {
            String::new()
        } else {
            format!(
                " (resumed: {} of {} entries left)",
                folder.todo.len(),
                inputs.plan.len()
            )
        }
    );
    Ok(())
}

/// The runner of the entries: the tools' folder, the results folder and its lock, and what
/// every tool gets besides its own arguments (`--cpus`, `--trace`, the power options; dto its
/// CPU as PERF_CPU).
pub(super) fn runner<'a>(
    args: &SuiteArgs,
    inputs: &'a Inputs,
    dest: &'a Path,
    hold: std::os::fd::RawFd,
) -> Runner<'a> {
    let (mut extra, dto_env) = match &inputs.cpus {
        Some(list) => (
            vec![
                "--cpus".to_string(),
                benchmp::cpulist::format_cpu_list(list),
            ],
            vec![("PERF_CPU".to_string(), list[0].to_string())],
        ),
        None => (Vec::new(), Vec::new()),
    };
    if args.trace {
        extra.push("--trace".into());
    }
    let mut dto_extra: Vec<String> = extra.iter().filter(|a| *a == "--trace").cloned().collect();
    let power = args.power.words();
    extra.extend(power.iter().cloned());
    dto_extra.extend(power);
    Runner {
        bin: &inputs.bin,
        dest,
        extra,
        dto_extra,
        dto_env,
        timeout: args.entry_timeout.map(Duration::from_secs_f64),
        hold,
        cpus: inputs.used_cpus.clone(),
        quiet_limit: Duration::from_secs_f64(args.quiet_wait),
        busy_before: false,
    }
}

/// How the entries went.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// Entries (or their pairings) that failed.
    pub(super) failures: usize,
    /// Whether a comparison found a regression.
    pub(super) regressed: bool,
}

/// The false-alarm rate of each entry's paired verdict: 5 % over the whole plan.
fn alpha(inputs: &Inputs) -> f64 {
    0.05 / inputs.plan.len().max(1) as f64
}

/// Runs every entry left to run (each paired with `--ab`'s build when asked), then the noisy
/// ones once more (not with `--no-rerun`); a stop signal ends it with its status.
pub(super) fn entries(
    args: &SuiteArgs,
    inputs: &Inputs,
    folder: &mut Folder,
    runner: &mut Runner<'_>,
    status: &mut StatusFile,
) -> Result<ControlFlow<i32, Tally>> {
    let dest = runner.dest;
    let with_ab = inputs.ab_bin.is_some();
    let mut tally = Tally::default();
    let mut noisy: Vec<&SuiteEntry> = Vec::new();
    let todo = inputs
        .plan
        .iter()
        .filter(|e| folder.todo.contains(&e.label));
    for e in todo {
        if let Some(sig) = benchmp::sys::process::interrupted() {
            return stopped(sig, dest, false).map(ControlFlow::Break);
        }
        folder.out.record(&EntryFiles::names(e, with_ab))?;
        match runner.run(e, status, false)? {
            Run::Interrupted(sig) => return stopped(sig, dest, true).map(ControlFlow::Break),
            Run::Ended { outcome, apart, .. } => match outcome {
                Outcome::Failed if apart && !args.no_rerun => noisy.push(e),
                Outcome::Failed => tally.failures += 1,
                Outcome::Noisy if !args.no_rerun => noisy.push(e),
                Outcome::Noisy => {}
                Outcome::Ok | Outcome::Interrupted => {}
            },
        }
        if let Some(base) = &inputs.ab_bin {
            let ab = AbRun {
                me: &inputs.me,
                base,
                bin: &inputs.bin,
                dest,
                args,
                alpha: alpha(inputs),
                hold: folder.out.lock_fd(),
            };
            if let ControlFlow::Break(code) = paired(&ab, e, status, &mut tally)? {
                return Ok(ControlFlow::Break(code));
            }
        }
    }
    match again(runner, &noisy, status)? {
        Ok(failed) => tally.failures += failed,
        Err(sig) => return stopped(sig, dest, true).map(ControlFlow::Break),
    }
    Ok(ControlFlow::Continue(tally))
}

/// One entry paired by benchmp ab with `--ab`'s build: a regression's lines said, a failure
/// counted, a stop signal recorded as the entry's interruption.
fn paired(
    ab: &AbRun<'_>,
    e: &SuiteEntry,
    status: &mut StatusFile,
    tally: &mut Tally,
) -> Result<ControlFlow<i32>> {
    match ab.run(e)? {
        Ended::Interrupted(sig) => {
            status.set(StatusRow {
                label: e.label.clone(),
                tool: e.tool.to_string(),
                exit: 128 + sig as i32,
                seconds: "-".into(),
                outcome: Some(Outcome::Interrupted),
            })?;
            return stopped(sig, ab.dest, true).map(ControlFlow::Break);
        }
        Ended::Status(0) => {}
        Ended::Status(1) => {
            tally.regressed = true;
            let txt = read_own(&ab.dest.join(format!("ab/{}.txt", e.label)));
            for l in txt.lines().filter(|l| l.contains(" FAIL")) {
                outln!("   {}", foundation::error::printable(l));
            }
        }
        Ended::Status(c) => {
            tally.failures += 1;
            outln!(
                "   FAILED (ab, exit {c}): {}",
                head(&ab.dest.join(format!("ab/{}.err", e.label)))
            );
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// Every entry's paired comparison gathered into the folder's own, as a `--baseline`'s is;
/// 1 when that failed.
pub(super) fn gather_paired(dest: &Path, inputs: &Inputs) -> Result<usize> {
    outln!("== paired with the --ab build");
    let labels: Vec<String> = inputs.plan.iter().map(|e| e.label.clone()).collect();
    match ab::gather(dest, &labels, alpha(inputs)) {
        Ok(last) => {
            outln!("{last}");
            Ok(0)
        }
        Err(e) => {
            benchmp::errln!(
                "benchmp: gathering the paired verdicts failed: {}",
                foundation::error::printable(&format!("{e:#}").replace('\n', " "))
            );
            Ok(1)
        }
    }
}

/// `benchmp compare` of `--baseline`'s folder with this one, into compare.txt, .json and
/// .csv; whether it found a regression (or failed), or the status a stop signal ends with.
pub(super) fn compare_with(
    baseline: &Path,
    me: &Path,
    dest: &Path,
    hold: std::os::fd::RawFd,
) -> Result<ControlFlow<i32, bool>> {
    outln!("== comparing with {}", baseline.display());
    let job = Job {
        program: me.to_path_buf(),
        args: vec![
            "compare".into(),
            baseline.display().to_string(),
            dest.display().to_string(),
            format!("--json={}", dest.join("compare.json").display()),
            format!("--csv={}", dest.join("compare.csv").display()),
        ],
        env: Vec::new(),
        stdout: Some(dest.join("compare.txt")),
        stderr: None,
        timeout: None,
        hold: Some(hold),
    };
    let regressed = match job.run()? {
        Ended::Interrupted(sig) => return stopped(sig, dest, false).map(ControlFlow::Break),
        Ended::Status(0) => false,
        Ended::Status(1) => true,
        Ended::Status(_) => {
            benchmp::errln!(
                "benchmp: the comparison with {} failed (see above)",
                baseline.display()
            );
            true
        }
    };
    if let Some(last) = read_own(&dest.join("compare.txt")).lines().last() {
        outln!("{}", foundation::error::printable(last));
    }
    Ok(ControlFlow::Continue(regressed))
}
