//! The sweep's plan as data: the clusters swept (each cpufreq policy's CPUs, or those of
//! `--cpus`), the frequencies each policy offers (`scaling_available_frequencies`, else the
//! states of `stats/time_in_state`, or `--freqs`), the tool commands, and the steps: every
//! command at every frequency on one CPU of the cluster and on all of its CPUs.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// Where a cluster's frequencies came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FreqSource {
    /// cpufreq's `scaling_available_frequencies`.
    ScalingAvailableFrequencies,
    /// The states listed in cpufreq's `stats/time_in_state`.
    TimeInState,
    /// `--freqs`, for a policy that lists none (within its cpuinfo range).
    Given,
}

/// One cluster of the sweep: its CPUs and its cpufreq policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepCluster {
    /// The topology's cluster index.
    pub index: usize,
    /// The CPUs swept (all of the cluster's, or those of `--cpus` in it).
    pub cpus: Vec<usize>,
    /// The policy's name (`policy0`; `cpu0` on kernels with a folder per CPU).
    pub policy: String,
    /// The policy's folder (through the first CPU's `cpufreq` link).
    pub dir: PathBuf,
    /// Every frequency the policy offers, kHz, ascending.
    pub offered_khz: Vec<u64>,
    /// Where they came from.
    pub from: FreqSource,
    /// The frequencies swept, kHz, ascending.
    pub swept_khz: Vec<u64>,
    /// The policy's highest frequency, kHz: the Energy Model's `fmax`.
    pub max_khz: u64,
}

/// A tool command of the sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Command {
    /// Names its steps (`dhry`; `dhry-2` for a second dhry command).
    pub name: String,
    /// The program.
    pub program: PathBuf,
    /// Its own arguments (the sweep adds `--cpus`, `--pin-freq`, `--json=` and the power
    /// options).
    pub args: Vec<String>,
}

/// Where a step runs within its cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepPlacement {
    /// On the cluster's first CPU.
    One,
    /// On every CPU of the cluster, one child each.
    All,
}

impl StepPlacement {
    /// Its word in a step's label.
    pub fn word(self) -> &'static str {
        match self {
            StepPlacement::One => "one",
            StepPlacement::All => "all",
        }
    }
}

/// One run of one command at one frequency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// Names its files: `c0-dhry-one-307200`.
    pub label: String,
    /// Index into the plan's clusters.
    pub cluster: usize,
    /// Index into the plan's commands.
    pub command: usize,
    /// One CPU or all of them.
    pub placement: StepPlacement,
    /// The CPUs it runs on.
    pub cpus: Vec<usize>,
    /// The pinned frequency, kHz.
    pub khz: u64,
}

/// Options the sweep sets on every command itself; a `--cmd` that gives one is refused.
pub const SET_BY_SWEEP: [&str; 7] = [
    "--pin-freq",
    "--cpus",
    "--json",
    "-P",
    "--parallel",
    "--sched",
    "--csv",
];

/// The default commands: dhry and coremark with their own defaults.
pub const DEFAULT_COMMANDS: [&str; 2] = ["dhry", "coremark"];

/// A `--cmd 'TOOL ARGS'` as a command: TOOL is a program in `bin` (a name) or a path (with a
/// `/`); it must be an executable file, and ARGS must leave the sweep's own options to it.
pub fn command(text: &str, bin: &Path) -> Result<Command, String> {
    let shown = foundation::error::printable(text);
    let words = shlex::split(text)
        .ok_or_else(|| format!("--cmd '{shown}': unbalanced quotes (give 'TOOL ARGS')"))?;
    let Some((tool, args)) = words.split_first() else {
        return Err("--cmd '': give a tool and its arguments ('TOOL ARGS')".into());
    };
    if let Some(a) = args.iter().find(|a| {
        SET_BY_SWEEP
            .iter()
            .any(|o| *a == o || a.starts_with(&format!("{o}=")))
            || (a.starts_with("-P") && a.len() > 2 && !a.starts_with("--"))
    }) {
        return Err(format!(
            "--cmd '{shown}': {} is the sweep's to give (--cpus, --pin-freq and --json= are set for each step)",
            foundation::error::printable(a)
        ));
    }
    let program = if tool.contains('/') {
        std::path::absolute(tool).unwrap_or_else(|_| PathBuf::from(tool))
    } else {
        bin.join(tool)
    };
    if !executable(&program) {
        return Err(format!(
            "--cmd '{shown}': {} is not an executable file",
            foundation::error::shown(&program)
        ));
    }
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Command {
        name: plain_name(&name),
        program,
        args: args.to_vec(),
    })
}

/// True for an executable regular file.
pub fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A name fit for a file name: letters, digits, `_` and `-` only.
fn plain_name(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if t.is_empty() { "tool".into() } else { t }
}

/// Gives commands of one tool distinct names (`dhry`, `dhry-2`).
pub fn name_apart(commands: &mut [Command]) {
    for i in 0..commands.len() {
        let base = commands[i].name.clone();
        let n = commands[..i]
            .iter()
            .filter(|c| c.name == base || c.name.starts_with(&format!("{base}-")))
            .count();
        if n > 0 {
            commands[i].name = format!("{base}-{}", n + 1);
        }
    }
}

/// The frequencies a policy offers, kHz ascending: `scaling_available_frequencies`, else the
/// first column of `stats/time_in_state`; `None` when it lists neither.
pub fn offered(dir: &Path) -> Option<(Vec<u64>, FreqSource)> {
    let read = |f: &str| benchmp::sysfs::read_attr(&dir.join(f)).ok();
    let list = |v: Vec<u64>| {
        let mut v: Vec<u64> = v.into_iter().filter(|&k| k > 0).collect();
        v.sort_unstable();
        v.dedup();
        (!v.is_empty()).then_some(v)
    };
    if let Some(v) = read("scaling_available_frequencies")
        .and_then(|t| t.split_whitespace().map(|w| w.parse().ok()).collect())
        .and_then(list)
    {
        return Some((v, FreqSource::ScalingAvailableFrequencies));
    }
    let table = benchmp::freq::residency::parse(&read("stats/time_in_state")?)?;
    list(table.into_iter().map(|(k, _)| k).collect()).map(|v| (v, FreqSource::TimeInState))
}

/// A clock in kHz as `--pin-freq` takes it, MHz without trailing zeros (`1804.8`).
pub fn mhz_arg(khz: u64) -> String {
    let s = format!("{}.{:03}", khz / 1000, khz % 1000);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The offered frequency `mhz` names: the nearest within 1 MHz.
pub fn nearest(offered_khz: &[u64], mhz: f64) -> Option<u64> {
    let want = (mhz * 1000.0).round() as i64;
    offered_khz
        .iter()
        .copied()
        .min_by_key(|&k| (k as i64 - want).abs())
        .filter(|&k| (k as i64 - want).abs() <= 1000)
}

/// `lo-hi MHz (N steps)` of a list of frequencies.
pub fn describe(khz: &[u64]) -> String {
    match (khz.first(), khz.last()) {
        (Some(lo), Some(hi)) => format!(
            "{}-{} MHz ({} step{})",
            mhz_arg(*lo),
            mhz_arg(*hi),
            khz.len(),
            if khz.len() == 1 { "" } else { "s" }
        ),
        _ => "no frequencies".into(),
    }
}

/// The steps: per cluster, per frequency ascending, per command, on one CPU and then on all
/// (once for a cluster of one CPU).
pub fn steps(clusters: &[SweepCluster], commands: &[Command]) -> Vec<Step> {
    let mut out = Vec::new();
    for (ci, c) in clusters.iter().enumerate() {
        let placements: &[StepPlacement] = if c.cpus.len() > 1 {
            &[StepPlacement::One, StepPlacement::All]
        } else {
            &[StepPlacement::One]
        };
        for &khz in &c.swept_khz {
            for (k, cmd) in commands.iter().enumerate() {
                for &p in placements {
                    let cpus = match p {
                        StepPlacement::One => c.cpus[..1].to_vec(),
                        StepPlacement::All => c.cpus.clone(),
                    };
                    out.push(Step {
                        label: format!("c{}-{}-{}-{khz}", c.index, cmd.name, p.word()),
                        cluster: ci,
                        command: k,
                        placement: p,
                        cpus,
                        khz,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("benchmp-eff-plan-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn frequencies_from_the_list_else_time_in_state() {
        let d = scratch("freqs");
        assert_eq!(offered(&d), None);
        std::fs::create_dir_all(d.join("stats")).unwrap();
        std::fs::write(d.join("stats/time_in_state"), "1804800 10\n307200 5\n").unwrap();
        assert_eq!(
            offered(&d),
            Some((vec![307_200, 1_804_800], FreqSource::TimeInState))
        );
        std::fs::write(
            d.join("scaling_available_frequencies"),
            "300000 1000000 300000 \n",
        )
        .unwrap();
        assert_eq!(
            offered(&d),
            Some((
                vec![300_000, 1_000_000],
                FreqSource::ScalingAvailableFrequencies
            ))
        );
        // A list that is not one gives way to time_in_state.
        std::fs::write(d.join("scaling_available_frequencies"), "fast\n").unwrap();
        assert_eq!(offered(&d).unwrap().1, FreqSource::TimeInState);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn clocks_as_pin_freq_takes_them_and_the_nearest_offered() {
        assert_eq!(mhz_arg(1_804_800), "1804.8");
        assert_eq!(mhz_arg(300_000), "300");
        assert_eq!(mhz_arg(2_265_600), "2265.6");
        assert_eq!(mhz_arg(1), "0.001");
        let offered = [307_200, 1_804_800];
        assert_eq!(nearest(&offered, 1804.8), Some(1_804_800));
        assert_eq!(nearest(&offered, 1805.0), Some(1_804_800));
        assert_eq!(nearest(&offered, 1806.0), None);
        assert_eq!(describe(&offered), "307.2-1804.8 MHz (2 steps)");
    }

    #[test]
    fn a_command_leaves_the_sweeps_options_to_it() {
        let d = scratch("cmd");
        let tool = d.join("dhry");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let c = command("dhry --time 1 --variant 'pack-inline'", &d).unwrap();
        assert_eq!((c.name.as_str(), c.program.clone()), ("dhry", tool.clone()));
        assert_eq!(c.args, ["--time", "1", "--variant", "pack-inline"]);
        for (bad, says) in [
            ("dhry --cpus 0", "--cpus is the sweep's"),
            ("dhry --json=x", "--json=x is the sweep's"),
            ("dhry -P2", "-P2 is the sweep's"),
            ("dhry --pin-freq 300", "--pin-freq is the sweep's"),
            ("nosuch", "is not an executable file"),
            ("", "give a tool"),
            ("dhry 'x", "unbalanced quotes"),
        ] {
            let e = command(bad, &d).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let mut two = vec![c.clone(), c.clone(), c];
        name_apart(&mut two);
        let names: Vec<&str> = two.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["dhry", "dhry-2", "dhry-3"]);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn every_command_at_every_frequency_on_one_cpu_and_on_all() {
        let cluster = |index: usize, cpus: Vec<usize>, swept: Vec<u64>| SweepCluster {
            index,
            cpus,
            policy: format!("policy{index}"),
            dir: PathBuf::new(),
            offered_khz: swept.clone(),
            from: FreqSource::ScalingAvailableFrequencies,
            max_khz: *swept.last().unwrap(),
            swept_khz: swept,
        };
        let cmd = |name: &str| Command {
            name: name.into(),
            program: PathBuf::from(name),
            args: Vec::new(),
        };
        let s = steps(
            &[
                cluster(0, vec![0, 1], vec![300_000, 600_000]),
                cluster(3, vec![7], vec![500_000]),
            ],
            &[cmd("dhry"), cmd("coremark")],
        );
        let labels: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "c0-dhry-one-300000",
                "c0-dhry-all-300000",
                "c0-coremark-one-300000",
                "c0-coremark-all-300000",
                "c0-dhry-one-600000",
                "c0-dhry-all-600000",
                "c0-coremark-one-600000",
                "c0-coremark-all-600000",
                "c3-dhry-one-500000",
                "c3-coremark-one-500000",
            ]
        );
        assert_eq!(s[1].cpus, [0, 1]);
        assert_eq!(s[0].cpus, [0]);
        assert_eq!((s[8].cluster, s[8].cpus.as_slice()), (1, &[7][..]));
    }
}
