//! `benchmp efficiency`: the efficiency sweep. For each cluster (cpufreq policy) and each
//! frequency it offers, runs tool commands (dhry and coremark by default, on one CPU of the
//! cluster and on all of them), each pinned there with its own `--pin-freq` (the tools write
//! the pin back on every exit), and records per step the headline figure, the figure per MHz,
//! the power above the idle baseline and the energy per unit of work. After each step it
//! checks that the policy is back as it was (a pin a killed tool left is undone through
//! `foundation::claim` first) and says so when it is not. Output: a results folder like the
//! suite's (each step's report, text and errors under `steps/`; `efficiency.txt`, `.json`,
//! `.csv` and `energy_model.txt`, an Energy-Model-style table per cluster beside which
//! `/sys/kernel/debug/energy_model` can be set); `scripts/plot_efficiency.py` draws its curves.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use benchmp::{EXIT_FAILED, EXIT_OK};
use serde::Serialize;

mod cpus;
pub mod plan;
mod policy;
pub mod result;

use crate::cmd::outdir::{self, Input, OutDir, Take, write_whole};
use crate::cmd::power_args::PowerArgs;
use crate::cmd::suite::exec::{Ended, Job};
use crate::cmd::summary::Outcome;
use cpus::{chosen_cpus, clusters};
use plan::{Cluster, Command, Step};
use policy::{not_back, say_not_back, snapshot, write_back};
use result::{NotBack, StepResult};

/// `benchmp efficiency`'s options.
#[derive(Debug, clap::Args)]
pub struct EfficiencyArgs {
    /// Sweep these CPUs, cluster by cluster (each cluster's steps run on its CPUs of the
    /// list). Default: every online CPU (every one this process may use, on this machine).
    #[arg(long, value_name = "LIST", value_parser = benchmp::cli::cpu_list)]
    pub cpus: Option<benchmp::cli::CpuList>,
    /// Sweep only these frequencies, MHz, comma-separated (each the nearest a policy offers,
    /// within 1 MHz). Default: every frequency each policy offers (scaling_available_frequencies,
    /// else its stats/time_in_state); for a policy that lists none, --freqs gives them (within
    /// its cpuinfo range).
    #[arg(long, value_name = "MHZ,...", value_parser = freq_list)]
    pub freqs: Option<FreqList>,
    /// A tool command to run at every step, 'TOOL ARGS' (repeatable): TOOL a program in
    /// --bin-dir or a path. The sweep adds --cpus, --pin-freq, --json=FILE and the power and
    /// cool-down options. Default: dhry and coremark with their own defaults.
    #[arg(long = "cmd", value_name = "'TOOL ARGS'")]
    pub cmds: Vec<String>,
    /// Where the tools are (default: the folder of this benchmp).
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
    /// Results folder (default results/efficiency-<host>-<UTC time> here); it must be new or
    /// empty, and no other sweep may be writing into it.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run into a --out folder an earlier sweep made, after removing what that sweep recorded
    /// in it (.socbench-efficiency.json); anything else stays.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub power: PowerArgs,
    /// Passed to every tool: before each measurement, wait until the CPU thermal zones read at
    /// most this many degrees C.
    #[arg(long, value_name = "C", value_parser = crate::cmd::power_args::celsius, allow_negative_numbers = true)]
    pub cool_down: Option<String>,
    /// Passed to every tool: seconds --cool-down waits at most (the tools' default is 600).
    #[arg(long, value_name = "S", value_parser = crate::cmd::power_args::timeout)]
    pub cool_down_timeout: Option<String>,
    /// Stop a step that runs longer than this many seconds (status 124) and go on.
    #[arg(long, value_name = "S", value_parser = seconds)]
    pub step_timeout: Option<f64>,
    /// Print the steps (`LABEL|TOOL|ARGS`, `{json}` for the step's report) and exit without
    /// running anything.
    #[arg(long)]
    pub list: bool,
}

/// `--freqs`: clocks in MHz.
#[derive(Debug, Clone, PartialEq)]
pub struct FreqList(pub Vec<f64>);

fn freq_list(s: &str) -> Result<FreqList, String> {
    let v: Result<Vec<f64>, String> = s.split(',').map(benchmp::freq::parse_mhz).collect();
    let v = v?;
    if v.is_empty() {
        return Err("give at least one frequency in MHz".into());
    }
    Ok(FreqList(v))
}

fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= 86_400.0 => Ok(x),
        _ => Err(format!(
            "'{s}' is not a number of seconds above 0 (at most 86400)"
        )),
    }
}

/// A refusal: exit status 2, one line, nothing run.
fn refuse(why: String) -> anyhow::Error {
    benchmp::Usage(why).into()
}

fn shown(p: &Path) -> String {
    foundation::error::shown(p)
}

/// A step's arguments: the command's own, then `--cpus`, `--pin-freq`, `--json=FILE` and
/// the options passed through.
fn step_args(cmd: &Command, step: &Step, json: &str, passed: &[String]) -> Vec<String> {
    let mut a = cmd.args.clone();
    a.push("--cpus".into());
    a.push(benchmp::cpulist::format_cpu_list(&step.cpus));
    a.push("--pin-freq".into());
    a.push(plan::mhz_arg(step.khz));
    a.push(format!("--json={json}"));
    a.extend_from_slice(passed);
    a
}

/// How the sweep ended before its last step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Incomplete {
    /// The stop signal (`SIGINT`); `None` while the sweep runs or when it was killed outright.
    pub signal: Option<String>,
    /// The step that was running when it was stopped.
    pub running: Option<String>,
    /// Steps measured (all of them are in the results).
    pub measured: usize,
    /// Steps planned.
    pub of: usize,
}

/// The sweep's JSON.
#[derive(Debug, Serialize)]
struct Document<'a> {
    /// The layout of this document.
    socbench_efficiency: u32,
    host: String,
    sysfs_root: &'a Path,
    commands: &'a [Command],
    power: &'a PowerArgs,
    cool_down: Option<&'a str>,
    clusters: &'a [Cluster],
    steps: &'a [StepResult],
    curves: Vec<result::Curve>,
    energy_model: Vec<result::EnergyModel>,
    /// Policy files not as before the sweep once it ended.
    not_back: &'a [NotBack],
    #[serde(skip_serializing_if = "Option::is_none")]
    incomplete: Option<&'a Incomplete>,
}

/// The results folder's own files.
const FILES: [&str; 5] = [
    "efficiency.json",
    "efficiency.csv",
    "efficiency.txt",
    "energy_model.txt",
    "steps/",
];

/// What the sweep has measured so far, written whole into its folder.
struct Outputs<'a> {
    dest: &'a Path,
    host: String,
    root: &'a Path,
    commands: &'a [Command],
    clusters: &'a [Cluster],
    args: &'a EfficiencyArgs,
}

impl Outputs<'_> {
    /// Writes the JSON, CSV, table and Energy-Model files; returns the table and the EM text.
    fn write(
        &self,
        results: &[StepResult],
        not_back: &[NotBack],
        incomplete: Option<&Incomplete>,
    ) -> Result<(String, String)> {
        let models = result::energy_models(self.clusters, self.commands, results);
        let doc = Document {
            socbench_efficiency: 1,
            host: self.host.clone(),
            sysfs_root: self.root,
            commands: self.commands,
            power: &self.args.power,
            cool_down: self.args.cool_down.as_deref(),
            clusters: self.clusters,
            steps: results,
            curves: result::curves(self.clusters, self.commands, results),
            energy_model: models.clone(),
            not_back,
            incomplete,
        };
        write_whole(
            &self.dest.join("efficiency.json"),
            (serde_json::to_string_pretty(&doc)? + "\n").as_bytes(),
        )?;
        let mut csv = Vec::new();
        result::write_csv(self.clusters, self.commands, results, &mut csv)?;
        write_whole(&self.dest.join("efficiency.csv"), &csv)?;
        let mut table = result::render(self.clusters, self.commands, results);
        if let Some(i) = incomplete {
            table += &format!(
                "incomplete: {} of {} steps measured{}\n",
                i.measured,
                i.of,
                i.signal
                    .as_ref()
                    .map_or(String::new(), |s| format!(" (stopped by {s})"))
            );
        }
        write_whole(&self.dest.join("efficiency.txt"), table.as_bytes())?;
        let em = result::render_energy_models(&models);
        write_whole(&self.dest.join("energy_model.txt"), em.as_bytes())?;
        Ok((table, em))
    }
}

/// Runs the sweep; the exit status: 0 every step measured and every policy is back, 1 a step
/// failed or a policy is not back, 2 refused before anything ran, 3 no cpufreq here, 128+n
/// stopped by signal n.
pub fn run(args: &EfficiencyArgs) -> Result<i32> {
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
    if args.list {
        let text: String = steps
            .iter()
            .map(|s| {
                let c = &commands[s.command];
                let words: Vec<String> = step_args(c, s, "{json}", &passed)
                    .iter()
                    .map(|w| match w.as_str() {
                        "--json={json}" => w.clone(),
                        _ => shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned()),
                    })
                    .collect();
                let line = format!("{}|{}|{}", s.label, c.program.display(), words.join(" "));
                format!("{}\n", foundation::error::printable(&line))
            })
            .collect();
        benchmp::cli::write_stdout(&text)?;
        return Ok(EXIT_OK);
    }
    let out_given = args
        .out
        .clone()
        .unwrap_or_else(|| outdir::default_out("efficiency-"));
    if out_given.as_os_str().is_empty() {
        return Err(refuse("--out needs a folder".into()));
    }
    let out_path = crate::cmd::suite::absolute(&out_given);
    let recipe = serde_json::json!({
        "cpus": benchmp::cpulist::format_cpu_list(&cpus),
        "freqs": clusters.iter().map(|c| (c.policy.clone(), c.swept_khz.clone())).collect::<Vec<_>>(),
        "commands": commands,
        "power": args.power,
        "cool_down": args.cool_down,
        "bin_dir": bin,
    });
    let take = if args.force { Take::Force } else { Take::New };
    let mut out = OutDir::open(outdir::EFFICIENCY, &out_path, take, &recipe)
        .map_err(|e| refuse(format!("--out {} {e}", shown(&out_path))))?;
    let mut protected = vec![
        Input {
            what: format!("the program running ({})", shown(&me)),
            path: me.clone(),
            whole: false,
        },
        Input {
            what: format!("--bin-dir {}", shown(&bin)),
            path: bin.clone(),
            whole: false,
        },
    ];
    for c in &commands {
        protected.push(Input {
            what: format!("the program {}", shown(&c.program)),
            path: c.program.clone(),
            whole: false,
        });
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
    // From here on a stop signal only sets a flag: the running step is stopped and reaped,
    // and what was measured is written, before the sweep ends.
    let _signals = benchmp::sys::process::InterruptGuard::install();
    out.clear(&doomed)?;
    out.record(&planned)?;
    let dest = out.path.clone();
    let step_dir = dest.join("steps");
    std::fs::create_dir_all(&step_dir)
        .with_context(|| format!("cannot create {}", shown(&step_dir)))?;
    let host = nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    let outputs = Outputs {
        dest: &dest,
        host: host.clone(),
        root: &topology.root,
        commands: &commands,
        clusters: &clusters,
        args,
    };
    let at_start: Vec<Vec<(PathBuf, Option<String>)>> =
        clusters.iter().map(|c| snapshot(&c.dir)).collect();
    outln!(
        "== efficiency sweep on {}: {} cluster(s), {} step(s), results in {}",
        foundation::error::printable(&host),
        clusters.len(),
        steps.len(),
        dest.display()
    );
    for c in &clusters {
        outln!(
            "cluster {}: CPUs {} ({}), {}",
            c.index,
            benchmp::cpulist::format_cpu_list(&c.cpus),
            foundation::error::printable(&c.policy),
            plan::describe(&c.swept_khz)
        );
    }
    let timeout = args.step_timeout.map(Duration::from_secs_f64);
    let mut results: Vec<StepResult> = Vec::new();
    let mut stopped: Option<(nix::sys::signal::Signal, Option<String>)> = None;
    for step in &steps {
        if let Some(sig) = benchmp::sys::process::interrupted() {
            stopped = Some((sig, None));
            break;
        }
        let progress = Incomplete {
            signal: None,
            running: Some(step.label.clone()),
            measured: results.len(),
            of: steps.len(),
        };
        outputs.write(&results, &[], Some(&progress))?;
        let cmd = &commands[step.command];
        let json = step_dir.join(format!("{}.json", step.label));
        let job = Job {
            program: cmd.program.clone(),
            args: step_args(cmd, step, &json.display().to_string(), &passed),
            env: Vec::new(),
            stdout: Some(step_dir.join(format!("{}.txt", step.label))),
            stderr: Some(step_dir.join(format!("{}.err", step.label))),
            timeout,
            hold: Some(out.lock_fd()),
        };
        outln!(
            "{:<28} {} {}",
            step.label,
            cmd.name,
            foundation::error::printable(&job.args.join(" "))
        );
        let cluster = &clusters[step.cluster];
        let before = snapshot(&cluster.dir);
        let start = Instant::now();
        let ended = match job.run() {
            Ok(e) => e,
            Err(e @ crate::cmd::suite::exec::JobError::Start { .. }) => {
                // The line names a resource limit that kept it from starting (ulimit -n, -u).
                let line = benchmp::error::chain_line(&anyhow::Error::from(e));
                write_whole(
                    &step_dir.join(format!("{}.err", step.label)),
                    format!("{line}\n").as_bytes(),
                )?;
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
        let read = match benchmp::input::read_text_if_there(&json, benchmp::input::MAX_INPUT_BYTES)
        {
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
        let (exit, status) = match ended {
            Ended::Interrupted(sig) => (128 + sig as i32, Outcome::Interrupted),
            Ended::Status(code) => (
                code,
                match code {
                    // Nothing to sweep with: no report, or no figure in it.
                    0 if read.performance.is_none() => Outcome::Failed,
                    0 if read.noisy => Outcome::Noisy,
                    0 => Outcome::Ok,
                    benchmp::EXIT_FAILED if read.noisy && read.performance.is_some() => {
                        Outcome::Noisy
                    }
                    _ => Outcome::Failed,
                },
            ),
        };
        let mhz = step.khz as f64 / 1000.0;
        let mut note = read.note.clone();
        if status == Outcome::Failed {
            let last = crate::cmd::suite::head(&step_dir.join(format!("{}.err", step.label)));
            let why = if exit == 0 || last.is_empty() {
                read.note.clone()
            } else {
                last
            };
            outln!("   FAILED (exit {exit}, {seconds:.1} s): {why}");
            note = why;
        }
        let r = StepResult {
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
        results.push(r);
        if let Ended::Interrupted(sig) = ended {
            stopped = Some((sig, Some(step.label.clone())));
            break;
        }
    }
    foundation::claim::recover_stale();
    let mut left: Vec<NotBack> = Vec::new();
    let mut left_lines: Vec<String> = Vec::new();
    for (c, before) in clusters.iter().zip(&at_start) {
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
    let measured = results
        .iter()
        .filter(|r| r.status != Outcome::Interrupted)
        .count();
    let incomplete = stopped.as_ref().map(|(sig, running)| Incomplete {
        signal: Some(sig.as_str().to_string()),
        running: running.clone(),
        measured,
        of: steps.len(),
    });
    let (table, em) = outputs.write(&results, &left, incomplete.as_ref())?;
    let failed = results
        .iter()
        .filter(|r| r.status == Outcome::Failed)
        .count();
    if !left_lines.is_empty() {
        benchmp::errln!(
            "benchmp: efficiency: after the sweep, the policy is not as before it: {}",
            left_lines.join("; ")
        );
    }
    if let Some((sig, running)) = &stopped {
        let what = match running {
            Some(l) => format!("the running step {l} was stopped and recorded as interrupted"),
            None => "no step was running".into(),
        };
        benchmp::errln!(
            "benchmp: efficiency sweep interrupted by {}; {what}; {measured} of {} steps measured, in {}",
            sig.as_str(),
            steps.len(),
            shown(&dest)
        );
        return Ok(128 + *sig as i32);
    }
    outln!("\n{table}{em}");
    let powered = results.iter().any(|r| r.power.is_some());
    // Said only when a step measured: without one, the steps' own failures are the reason.
    let measured_any = results.iter().any(|r| r.performance.is_some());
    if !powered && measured_any {
        benchmp::errln!(
            "benchmp: efficiency: no step's report has a power record (no power source here, or tools without one): power, energy and the Energy Model are left out"
        );
    }
    Ok(if failed == 0 && left.is_empty() {
        EXIT_OK
    } else {
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
        EXIT_FAILED
    })
}
