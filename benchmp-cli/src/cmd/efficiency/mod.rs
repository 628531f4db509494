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

use anyhow::{Context as _, Result};
use serde::Serialize;

mod cpus;
pub mod plan;
mod policy;
pub mod result;
mod sweep;

use crate::cmd::outdir::write_whole;
use crate::cmd::power_args::PowerArgs;
use crate::cmd::summary::Outcome;
use plan::{Command, Step, SweepCluster};
use policy::snapshot;
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
pub struct IncompleteSweep {
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
    clusters: &'a [SweepCluster],
    steps: &'a [StepResult],
    curves: Vec<result::Curve>,
    energy_model: Vec<result::EnergyModel>,
    /// Policy files not as before the sweep once it ended.
    not_back: &'a [NotBack],
    #[serde(skip_serializing_if = "Option::is_none")]
    incomplete: Option<&'a IncompleteSweep>,
}

/// The results folder's own files.
const FILES: [&str; 6] = [
    "efficiency.json",
    "efficiency.csv",
    "efficiency.txt",
    "energy_model.txt",
    "steps/",
    // scripts/plot_efficiency.py's, recorded here so that the plot is the sweep's own file.
    "efficiency.png",
];

/// What the sweep has measured so far, written whole into its folder.
struct Outputs<'a> {
    dest: &'a Path,
    host: String,
    root: &'a Path,
    commands: &'a [Command],
    clusters: &'a [SweepCluster],
    args: &'a EfficiencyArgs,
}

impl Outputs<'_> {
    /// Writes the JSON, CSV, table and Energy-Model files; returns the table and the EM text.
    fn write(
        &self,
        results: &[StepResult],
        not_back: &[NotBack],
        incomplete: Option<&IncompleteSweep>,
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
    let inputs = match sweep::inputs(args)? {
        std::ops::ControlFlow::Continue(i) => i,
        std::ops::ControlFlow::Break(code) => return Ok(code),
    };
    let (mut out, doomed) = sweep::open_folder(args, &inputs)?;
    // From here on a stop signal only sets a flag: the running step is stopped and reaped,
    // and what was measured is written, before the sweep ends.
    let _signals = benchmp::sys::process::InterruptGuard::install();
    let planned: Vec<String> = FILES.iter().map(|f| f.to_string()).collect();
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
        root: &inputs.topology.root,
        commands: &inputs.commands,
        clusters: &inputs.clusters,
        args,
    };
    let at_start: Vec<Vec<(PathBuf, Option<String>)>> =
        inputs.clusters.iter().map(|c| snapshot(&c.dir)).collect();
    sweep::announce(&inputs, &host, &dest)?;
    let (results, stopped) = sweep::steps(args, &inputs, &outputs, &step_dir, out.lock_fd())?;
    let (left, left_lines) = sweep::restore(&inputs.clusters, &at_start);
    let measured = results
        .iter()
        .filter(|r| r.status != Outcome::Interrupted)
        .count();
    let incomplete = stopped.as_ref().map(|(sig, running)| IncompleteSweep {
        signal: Some(sig.as_str().to_string()),
        running: running.clone(),
        measured,
        of: inputs.steps.len(),
    });
    let (table, em) = outputs.write(&results, &left, incomplete.as_ref())?;
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
            inputs.steps.len(),
            shown(&dest)
        );
        return Ok(128 + *sig as i32);
    }
    outln!("\n{table}{em}");
    sweep::conclude(&results, &left)
}
