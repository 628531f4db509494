//! The sweep in its steps, each short enough to read at once: the inputs checked (commands,
//! CPUs, clusters and their clocks), the results folder opened, each step run and read back,
//! the policies checked to be as before, the exit status. [`super::run`] calls them in order.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use benchmp::{EXIT_FAILED, EXIT_OK};

use super::cpus::{chosen_cpus, clusters};
use super::plan::{self, Command, Step, SweepCluster};
use super::policy::{not_back, say_not_back, snapshot, write_back};
use super::result::{self, NotBack, StepResult};
use super::{EfficiencyArgs, FILES, IncompleteSweep, Outputs, refuse, shown, step_args};
use crate::cmd::outdir::{self, Input, OutDir, Take, write_whole};
use crate::cmd::suite::exec::{Ended, Job};
use crate::cmd::summary::Outcome;

/// What the sweep runs with, checked before anything runs.
pub(super) struct Inputs {
    /// This benchmp.
    me: PathBuf,
    /// The tools' folder.
    bin: PathBuf,
    /// The commands each step runs.
    pub(super) commands: Vec<Command>,
    /// The machine's topology.
    pub(super) topology: benchmp::topology::Topology,
    /// The CPUs swept.
    cpus: Vec<usize>,
    /// Their clusters, each with the clocks swept.
    pub(super) clusters: Vec<SweepCluster>,
    /// Every step, in order.
    pub(super) steps: Vec<Step>,
    /// Options every step passes to its tool (power, cool-down).
    passed: Vec<String>,
}

/// Parses the commands, checks the power options and the environment, finds the clusters and
/// plans the steps; `--list` prints them and ends there.
pub(super) fn inputs(args: &EfficiencyArgs) -> Result<ControlFlow<i32, Inputs>> {
    let me = std::env::current_exe().context("cannot find the path of the running benchmp")?;
    let bin = crate::cmd::suite::absolute(&match &args.bin_dir {
        Some(d) => d.clone(),
        None => me.parent().map(Path::to_path_buf).unwrap_or_default(),
    });
    let texts: Vec<String> = if args.cmds.is_empty() {
        plan::DEFAULT_COMMANDS
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        args.cmds.clone()
    };
    let mut commands = texts
        .iter()
        .map(|t| plan::command(t, &bin))
        .collect::<Result<Vec<Command>, String>>()
        .map_err(|why| {
            if args.cmds.is_empty() {
                refuse(format!("{why} (the default commands are dhry and coremark; --bin-dir says where they are)").replace("--cmd '", "'"))
            } else {
                refuse(why)
            }
        })?;
    plan::name_apart(&mut commands);
    args.power.check().map_err(refuse)?;
    crate::cmd::suite::check_environment()?;
    let topology = benchmp::topology::Topology::detect().map_err(benchmp::Error::from)?;
    let cpus = chosen_cpus(&topology, args.cpus.as_ref().map(|c| c.0.as_slice()))?;
    let clusters = clusters(
        &topology,
        &cpus,
        args.freqs.as_ref().map(|f| f.0.as_slice()),
    )?;
    let steps = plan::steps(&clusters, &commands);
    let mut passed = args.power.words();
    if let Some(c) = &args.cool_down {
        passed.push(format!("--cool-down={c}"));
    }
    if let Some(t) = &args.cool_down_timeout {
        passed.push(format!("--cool-down-timeout={t}"));
    }
    let inputs = Inputs {
        me,
        bin,
        commands,
        topology,
        cpus,
        clusters,
        steps,
        passed,
    };
    if args.list {
        benchmp::cli::write_stdout(&list(&inputs))?;
        return Ok(ControlFlow::Break(EXIT_OK));
    }
    Ok(ControlFlow::Continue(inputs))
}

/// `--list`: a line per step, `LABEL|PROGRAM|ARGS`.
fn list(inputs: &Inputs) -> String {
    inputs
        .steps
        .iter()
        .map(|s| {
            let c = &inputs.commands[s.command];
            let words: Vec<String> = step_args(c, s, "{json}", &inputs.passed)
                .iter()
                .map(|w| match w.as_str() {
                    "--json={json}" => w.clone(),
                    _ => shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned()),
                })
                .collect();
            let line = format!("{}|{}|{}", s.label, c.program.display(), words.join(" "));
            format!("{}\n", foundation::error::printable(&line))
        })
        .collect()
}

/// Opens `--out` (new, or an earlier sweep's with `--force`) and refuses one where the sweep
/// would remove an input or write over what no sweep recorded; with what `--force` removes.
pub(super) fn open_folder(args: &EfficiencyArgs, inputs: &Inputs) -> Result<(OutDir, Vec<String>)> {
    let out_given = args
        .out
        .clone()
        .unwrap_or_else(|| outdir::default_out("efficiency-"));
    if out_given.as_os_str().is_empty() {
        return Err(refuse("--out needs a folder".into()));
    }
    let out_path = crate::cmd::suite::absolute(&out_given);
    let recipe = serde_json::json!({
        "cpus": benchmp::cpulist::format_cpu_list(&inputs.cpus),
        "freqs": inputs.clusters.iter().map(|c| (c.policy.clone(), c.swept_khz.clone())).collect::<Vec<_>>(),
        "commands": inputs.commands,
        "power": args.power,
        "cool_down": args.cool_down,
        "bin_dir": inputs.bin,
    });
    let take = if args.force { Take::Force } else { Take::New };
    let out = OutDir::open(outdir::EFFICIENCY, &out_path, take, &recipe)
        .map_err(|e| refuse(format!("--out {} {e}", shown(&out_path))))?;
    let input = |what: String, path: &Path| Input {
        what,
        path: path.to_path_buf(),
        whole: false,
    };
    let mut protected = vec![
        input(
            format!("the program running ({})", shown(&inputs.me)),
            &inputs.me,
        ),
        input(format!("--bin-dir {}", shown(&inputs.bin)), &inputs.bin),
    ];
    for c in &inputs.commands {
        protected.push(input(
            format!("the program {}", shown(&c.program)),
            &c.program,
        ));
    }
    let doomed = if args.force {
        out.recorded()
    } else {
        Vec::new()
    };
    let planned: Vec<String> = FILES.iter().map(|f| f.to_string()).collect();
    if let Err(e) = out.check(&doomed, &planned, &protected) {
        let why = format!("--out {}: {e}", shown(&out_path));
        out.undo();
        return Err(refuse(why));
    }
    Ok((out, doomed))
}

/// The sweep's first lines: host, clusters, steps, folder; each cluster's CPUs and clocks.
pub(super) fn announce(inputs: &Inputs, host: &str, dest: &Path) -> Result<()> {
    outln!(
        "== efficiency sweep on {}: {} cluster(s), {} step(s), results in {}",
        foundation::error::printable(host),
        inputs.clusters.len(),
        inputs.steps.len(),
        dest.display()
    );
    for c in &inputs.clusters {
        outln!(
            "cluster {}: CPUs {} ({}), {}",
            c.index,
            benchmp::cpulist::format_cpu_list(&c.cpus),
            foundation::error::printable(&c.policy),
            plan::describe(&c.swept_khz)
        );
    }
    Ok(())
}

/// A stop signal, and the step it stopped (none when it came between steps).
pub(super) type Stopped = (nix::sys::signal::Signal, Option<String>);

/// Runs every step in turn, the folder's files rewritten before each; the results, and the
/// stop signal with the step it stopped (none when it came between steps) if one came.
pub(super) fn steps(
    args: &EfficiencyArgs,
    inputs: &Inputs,
    outputs: &Outputs<'_>,
    step_dir: &Path,
    hold: std::os::fd::RawFd,
) -> Result<(Vec<StepResult>, Option<Stopped>)> {
    let timeout = args.step_timeout.map(Duration::from_secs_f64);
    let mut results: Vec<StepResult> = Vec::new();
    for step in &inputs.steps {
        if let Some(sig) = benchmp::sys::process::interrupted() {
            return Ok((results, Some((sig, None))));
        }
        let progress = IncompleteSweep {
            signal: None,
            running: Some(step.label.clone()),
            measured: results.len(),
            of: inputs.steps.len(),
        };
        outputs.write(&results, &[], Some(&progress))?;
        let cmd = &inputs.commands[step.command];
        let json = step_dir.join(format!("{}.json", step.label));
        let job = Job {
            program: cmd.program.clone(),
            args: step_args(cmd, step, &json.display().to_string(), &inputs.passed),
            env: Vec::new(),
            stdout: Some(step_dir.join(format!("{}.txt", step.label))),
            stderr: Some(step_dir.join(format!("{}.err", step.label))),
            timeout,
            hold: Some(hold),
        };
        outln!(
            "{:<28} {} {}",
            step.label,
            cmd.name,
            foundation::error::printable(&job.args.join(" "))
        );
        let cluster = &inputs.clusters[step.cluster];
        let (ended, result) = one_step(step, cluster, job, &json, step_dir)?;
        results.push(result);
        if let Ended::Interrupted(sig) = ended {
            return Ok((results, Some((sig, Some(step.label.clone())))));
        }
    }
    Ok((results, None))
}

/// Runs one step's job, writes back a policy it left changed, and reads its report.
fn one_step(
    step: &Step,
    cluster: &SweepCluster,
    job: Job,
    json: &Path,
    step_dir: &Path,
) -> Result<(Ended, StepResult)> {
    let before = snapshot(&cluster.dir);
    let start = Instant::now();
    let err_file = step_dir.join(format!("{}.err", step.label));
    let ended = match job.run() {
        Ok(e) => e,
        Err(e @ crate::cmd::suite::exec::JobError::Start { .. }) => {
            // The line names a resource limit that kept it from starting (ulimit -n, -u).
            let line = benchmp::error::chain_line(&e);
            write_whole(&err_file, format!("{line}\n").as_bytes())?;
            Ended::Status(127)
        }
        Err(e) => return Err(e.into()),
    };
    let seconds = start.elapsed().as_secs_f64();
    // A pin whose holder died outright (SIGKILL) is written back before the check.
    foundation::claim::recover_stale();
    let mut missing = not_back(&before);
    if !missing.is_empty() {
        write_back(&mut missing);
        benchmp::errln!(
            "benchmp: efficiency: after {}, the policy was not back: {}",
            step.label,
            say_not_back(&cluster.policy, &missing)
        );
    }
    let read = match benchmp::input::read_text_if_there(json, benchmp::input::MAX_INPUT_BYTES) {
        Ok(Some(text)) => result::read(&text),
        Ok(None) => result::Read {
            note: "no report".into(),
            ..result::Read::default()
        },
        Err(e) => result::Read {
            note: e.to_string(),
            ..result::Read::default()
        },
    };
    let (exit, status) = classify(&ended, &read);
    let mhz = step.khz as f64 / 1000.0;
    let mut note = read.note.clone();
    if status == Outcome::Failed {
        let last = crate::cmd::suite::head(&err_file);
        let why = if exit == 0 || last.is_empty() {
            read.note.clone()
        } else {
            last
        };
        outln!("   FAILED (exit {exit}, {seconds:.1} s): {why}");
        note = why;
    }
    let result = StepResult {
        mhz,
        exit,
        status,
        seconds,
        per_mhz: read
            .performance
            .as_ref()
            .and_then(|p| result::per_mhz(p, mhz)),
        energy_per_work: match (&read.performance, &read.power) {
            (Some(p), Some(w)) => result::energy_per_work(p, w.net_mean_w),
            _ => None,
        },
        performance: read.performance,
        power: read.power,
        tool_restored: read.tool_restored,
        not_back: missing,
        note,
        step: step.clone(),
    };
    Ok((ended, result))
}

/// A step's exit status and how the sweep counts it: a tool that exited 0 without a figure
/// failed (nothing to sweep with), a noisy one is noisy (also at exit 1 with a figure).
fn classify(ended: &Ended, read: &result::Read) -> (i32, Outcome) {
    match *ended {
        Ended::Interrupted(sig) => (128 + sig as i32, Outcome::Interrupted),
        Ended::Status(code) => (
            code,
            match code {
                0 if read.performance.is_none() => Outcome::Failed,
                0 if read.noisy => Outcome::Noisy,
                0 => Outcome::Ok,
                benchmp::EXIT_FAILED if read.noisy && read.performance.is_some() => Outcome::Noisy,
                _ => Outcome::Failed,
            },
        ),
    }
}

/// After the sweep: each cluster's policy files compared with the start, what differs written
/// back; what still differs, and a line per cluster saying so.
pub(super) fn restore(
    clusters: &[SweepCluster],
    at_start: &[Vec<(PathBuf, Option<String>)>],
) -> (Vec<NotBack>, Vec<String>) {
    foundation::claim::recover_stale();
    let mut left: Vec<NotBack> = Vec::new();
    let mut left_lines: Vec<String> = Vec::new();
    for (c, before) in clusters.iter().zip(at_start) {
        let mut missing = not_back(before);
        if !missing.is_empty() {
            write_back(&mut missing);
            missing.retain(|f| f.written_back != Some(true));
        }
        if !missing.is_empty() {
            left_lines.push(say_not_back(&c.policy, &missing));
            left.extend(missing);
        }
    }
    (left, left_lines)
}

/// The exit status of a sweep that ran to its end, with its lines: no power record (when a
/// step measured), how many steps failed and the first one's own words.
pub(super) fn conclude(results: &[StepResult], left: &[NotBack]) -> Result<i32> {
    let failed = results
        .iter()
        .filter(|r| r.status == Outcome::Failed)
        .count();
    let powered = results.iter().any(|r| r.power.is_some());
    // Said only when a step measured: without one, the steps' own failures are the reason.
    let measured_any = results.iter().any(|r| r.performance.is_some());
    if !powered && measured_any {
        benchmp::errln!(
            "benchmp: efficiency: no step's report has a power record (no power source here, or tools without one): power, energy and the Energy Model are left out"
        );
    }
    if failed == 0 && left.is_empty() {
        return Ok(EXIT_OK);
    }
    if failed > 0 {
        outln!("{failed} of {} steps failed", results.len());
        // The first failure's own words, where a user looks for why (stderr).
        if let Some(first) = results.iter().find(|r| r.status == Outcome::Failed) {
            benchmp::errln!(
                "benchmp: efficiency: {failed} of {} steps failed; the first, {} (exit {}): {}",
                results.len(),
                first.step.label,
                first.exit,
                foundation::error::printable(&first.note)
            );
        }
    }
    Ok(EXIT_FAILED)
}
