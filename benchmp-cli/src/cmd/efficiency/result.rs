//! What each step measured, read from its tool's report (the headline figure by
//! [`crate::cmd::summary::headline`], the power record of the measurement it comes from), the
//! figures derived from it (per MHz, energy per unit of work), the efficiency curves, the
//! Energy-Model tables, and the sweep's text, CSV and JSON: pure functions of the results.

use serde::Serialize;

use super::plan::{Command, Step, StepPlacement, SweepCluster};
use crate::cmd::summary::{self, Outcome, number};
use benchmp::schema::Better;
use benchmp::schema::Figure;

/// A value with its unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quantity {
    /// The value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
}

/// The step's headline figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Performance {
    /// Which figure (empty for a report's only one).
    pub name: String,
    /// Its value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// `higher` or `lower`.
    pub better: Better,
}

/// The power record of the step's headline measurement (`measurements[*].power`), its first
/// source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepPower {
    /// The source (`battery:battery`, `odpm:S4M_VDD_CPUCL0`).
    pub source: String,
    /// What it covers.
    pub covers: String,
    /// Mean power above the idle baseline, W (`net_mean_w`).
    pub net_mean_w: f64,
    /// Mean power, W.
    pub mean_w: Option<f64>,
    /// The idle baseline, W (`None` without `--power-baseline`).
    pub baseline_w: Option<f64>,
    /// Energy above the baseline over the measurement, J.
    pub net_energy_j: Option<f64>,
    /// The tool's figure per energy (`per_energy`).
    pub per_energy: Option<Quantity>,
    /// The hottest thermal zone's highest temperature, C.
    pub max_temp_c: Option<f64>,
}

/// A policy file that was not back after a step (or after the sweep).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotBack {
    /// The file.
    pub file: String,
    /// What it held before.
    pub was: String,
    /// What it holds now (`None`: it cannot be read).
    pub now: Option<String>,
    /// Whether the sweep wrote `was` back (`None`: it did not try).
    pub written_back: Option<bool>,
    /// The live socbench process holding it at `now`, which the sweep leaves it to.
    pub held_by: Option<u32>,
}

/// One step and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepResult {
    /// The step.
    #[serde(flatten)]
    pub step: Step,
    /// The pinned clock, MHz.
    pub mhz: f64,
    /// The tool's exit status (128+n: stopped by signal n).
    pub exit: i32,
    /// How it ended.
    pub status: Outcome,
    /// Its wall time, seconds.
    pub seconds: f64,
    /// Its headline figure.
    pub performance: Option<Performance>,
    /// The figure per pinned MHz (all the step's CPUs together).
    pub per_mhz: Option<Quantity>,
    /// Its power record.
    pub power: Option<StepPower>,
    /// Energy above the baseline per unit of work: `µJ/U` for a figure in `U/s`,
    /// `µJ/(U·s)` for another throughput (DMIPS), `nJ/op` for a latency in ns.
    pub energy_per_work: Option<Quantity>,
    /// True when the tool's report says it wrote every pinned file back.
    pub tool_restored: Option<bool>,
    /// The policy files that were not as before the step once it ended (and whether the
    /// sweep wrote them back).
    pub not_back: Vec<NotBack>,
    /// What else to know: why there is no figure or power, the tool's last error line.
    pub note: String,
}

/// What a step's report gives.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Read {
    /// The headline figure.
    pub performance: Option<Performance>,
    /// The headline measurement's power record.
    pub power: Option<StepPower>,
    /// Whether the tool wrote its pin back (`pinned.files[*].restored`, all of them).
    pub tool_restored: Option<bool>,
    /// True when the report calls the run noisy.
    pub noisy: bool,
    /// Why there is no figure or no power, when there is none.
    pub note: String,
}

/// Reads a step's report (its text): the headline figure and the power of its measurement.
pub fn read(text: &str) -> Read {
    let data: serde_json::Value = match serde_json::from_str(text) {
        Ok(d) => d,
        Err(e) => {
            return Read {
                note: format!("its report is not JSON: {e}"),
                ..Read::default()
            };
        }
    };
    let mut out = Read {
        noisy: data["quality"]["verdict"]["noisy"].as_bool() == Some(true),
        ..Read::default()
    };
    let figures: Vec<Figure> = match serde_json::from_value(data["figures"].clone()) {
        Ok(f) => f,
        Err(_) => {
            out.note = "its report has no figures".into();
            return out;
        }
    };
    let Some(h) = summary::headline(&figures) else {
        out.note = "its report has no figures".into();
        return out;
    };
    let better = figures
        .iter()
        .find(|f| f.describe() == h.name || h.name.is_empty())
        .map_or(Better::Higher, |f| f.better);
    out.performance = Some(Performance {
        name: h.name.clone(),
        value: h.value,
        unit: h.unit.clone(),
        better,
    });
    let measurements = data["measurements"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = measurements
        .iter()
        .map(|m| m["name"].as_str().unwrap_or_default())
        .collect();
    let headline = summary::headline_measurement(&names, &h).map(|i| &measurements[i]);
    out.power = headline.and_then(power);
    if out.power.is_none() {
        let missing = headline.and_then(|m| m["power"]["sources"][0]["missing"].as_str());
        out.note = match missing {
            Some(why) => format!(
                "power missing, because {}",
                foundation::error::printable(why)
            ),
            None => "no power record (no power source)".into(),
        };
    }
    let files = data["pinned"]["files"].as_array();
    out.tool_restored = files.map(|f| {
        f.iter()
            .all(|f| f["restored"] == true || f["left_to"].is_number())
    });
    out
}

/// The power record of a measurement: its first source's net power and energy, the figure
/// per energy, the hottest zone.
pub fn power(m: &serde_json::Value) -> Option<StepPower> {
    let p = &m["power"];
    let s = &p["sources"][0];
    let num = |v: &serde_json::Value| v.as_f64().filter(|x| x.is_finite());
    let net_mean_w = num(&s["net_mean_w"]).or_else(|| num(&s["mean_w"]))?;
    let max_temp_c = p["temps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| num(&t["max_c"]))
        .reduce(f64::max);
    Some(StepPower {
        source: s["name"].as_str().unwrap_or_default().to_string(),
        covers: s["covers"].as_str().unwrap_or_default().to_string(),
        net_mean_w,
        mean_w: num(&s["mean_w"]),
        baseline_w: num(&s["baseline_w"]),
        net_energy_j: num(&s["net_energy_j"]).or_else(|| num(&s["energy_j"])),
        per_energy: summary::ReportedPerEnergy::of(m).map(|e| Quantity {
            value: e.value,
            unit: e.unit,
        }),
        max_temp_c,
    })
}

/// The figure per MHz: `U/MHz`.
pub fn per_mhz(p: &Performance, mhz: f64) -> Option<Quantity> {
    (mhz > 0.0 && p.value.is_finite()).then(|| Quantity {
        value: p.value / mhz,
        unit: format!("{}/MHz", p.unit),
    })
}

/// Energy above the baseline per unit of work: for a throughput in `U/s`, µJ per U (net W /
/// figure); for another throughput (DMIPS), µJ per U·s; for a latency in ns, nJ per
/// operation (net W × ns).
pub fn energy_per_work(p: &Performance, net_w: f64) -> Option<Quantity> {
    if !(p.value.is_finite() && p.value > 0.0 && net_w.is_finite()) {
        return None;
    }
    match p.better {
        Better::Lower if p.unit == "ns" => Some(Quantity {
            value: net_w * p.value,
            unit: "nJ/op".into(),
        }),
        Better::Lower => None,
        Better::Higher => Some(Quantity {
            value: net_w / p.value * 1e6,
            unit: match p.unit.strip_suffix("/s") {
                Some(u) => format!("µJ/{u}"),
                None => format!("µJ/({}·s)", p.unit),
            },
        }),
    }
}

/// One efficiency curve: a command on one CPU (or all) of a cluster, frequency by frequency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    /// The cluster's index in the topology.
    pub cluster: usize,
    /// Its CPUs.
    pub cpus: Vec<usize>,
    /// The command's name.
    pub command: String,
    /// One CPU or all of the cluster's (a cluster of one CPU has the same points in both).
    pub placement: StepPlacement,
    /// The figure's unit.
    pub unit: String,
    /// Its points, frequency ascending: the steps with a figure and a power.
    pub points: Vec<Point>,
}

/// A point of a curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// The pinned clock, MHz.
    pub mhz: f64,
    /// Power above the baseline, W.
    pub power_w: f64,
    /// The figure.
    pub performance: f64,
}

/// The curves the plot draws: per cluster, command and placement, the points of the steps
/// that have both a figure and a power record.
pub fn curves(
    clusters: &[SweepCluster],
    commands: &[Command],
    results: &[StepResult],
) -> Vec<Curve> {
    let mut out = Vec::new();
    for (ci, c) in clusters.iter().enumerate() {
        for (k, cmd) in commands.iter().enumerate() {
            for placement in [StepPlacement::One, StepPlacement::All] {
                // A cluster of one CPU ran once: that run is both of its curves.
                let ran = if c.cpus.len() == 1 {
                    StepPlacement::One
                } else {
                    placement
                };
                let steps: Vec<&StepResult> = results
                    .iter()
                    .filter(|r| {
                        r.step.cluster == ci && r.step.command == k && r.step.placement == ran
                    })
                    .collect();
                let points: Vec<Point> = steps
                    .iter()
                    .filter_map(|r| {
                        Some(Point {
                            mhz: r.mhz,
                            power_w: r.power.as_ref()?.net_mean_w,
                            performance: r.performance.as_ref()?.value,
                        })
                    })
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let unit = steps
                    .iter()
                    .find_map(|r| r.performance.as_ref().map(|p| p.unit.clone()))
                    .unwrap_or_default();
                out.push(Curve {
                    cluster: c.index,
                    cpus: c.cpus.clone(),
                    command: cmd.name.clone(),
                    placement,
                    unit,
                    points,
                });
            }
        }
    }
    out
}

/// One state of an Energy-Model table, as the kernel's `/sys/kernel/debug/energy_model/
/// cpuN/ps:FREQ/` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct State {
    /// `frequency`, kHz.
    pub frequency_khz: u64,
    /// `power`, µW: one CPU's power above the idle baseline at this frequency.
    pub power_uw: u64,
    /// `cost`: power × the policy's highest frequency / frequency, as the kernel's
    /// `em_create_perf_table` computes it (integer division).
    pub cost: u64,
}

/// An Energy-Model-style table of one cluster, from one command's one-CPU steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnergyModel {
    /// The cluster's index in the topology.
    pub cluster: usize,
    /// Its CPUs.
    pub cpus: Vec<usize>,
    /// Its cpufreq policy.
    pub policy: String,
    /// The command whose power it is.
    pub command: String,
    /// The policy's highest frequency (`fmax` of the cost), kHz.
    pub max_freq_khz: u64,
    /// The states measured, frequency ascending.
    pub states: Vec<State>,
}

/// The kernel's cost of a state: `power × fmax / freq`.
pub fn cost(power_uw: u64, max_khz: u64, khz: u64) -> u64 {
    if khz == 0 {
        return 0;
    }
    ((u128::from(power_uw) * u128::from(max_khz)) / u128::from(khz)) as u64
}

/// The Energy-Model tables: per cluster and command, each one-CPU step's net power (the EM's
/// power is one CPU's) and its cost.
pub fn energy_models(
    clusters: &[SweepCluster],
    commands: &[Command],
    results: &[StepResult],
) -> Vec<EnergyModel> {
    let mut out = Vec::new();
    for (ci, c) in clusters.iter().enumerate() {
        for (k, cmd) in commands.iter().enumerate() {
            let states: Vec<State> = results
                .iter()
                .filter(|r| {
                    r.step.cluster == ci
                        && r.step.command == k
                        && r.step.placement == StepPlacement::One
                })
                .filter_map(|r| {
                    let w = r.power.as_ref()?.net_mean_w;
                    let power_uw = (w * 1e6).round().max(0.0) as u64;
                    Some(State {
                        frequency_khz: r.step.khz,
                        power_uw,
                        cost: cost(power_uw, c.max_khz, r.step.khz),
                    })
                })
                .collect();
            if states.is_empty() {
                continue;
            }
            out.push(EnergyModel {
                cluster: c.index,
                cpus: c.cpus.clone(),
                policy: c.policy.clone(),
                command: cmd.name.clone(),
                max_freq_khz: c.max_khz,
                states,
            });
        }
    }
    out
}

/// Lines of cells, each column as wide as its widest cell (the columns in `right` aligned
/// right).
fn table(head: &[&str], rows: &[Vec<String>], right: &[usize]) -> String {
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([head[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<String>| {
        let v: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                let pad = w.saturating_sub(c.chars().count());
                if right.contains(&i) {
                    format!("{}{c}", " ".repeat(pad))
                } else {
                    format!("{c}{}", " ".repeat(pad))
                }
            })
            .collect();
        v.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(head.iter().map(|h| h.to_string()).collect());
    out += &line(widths.iter().map(|w| "-".repeat(*w)).collect());
    for r in rows {
        out += &line(r.clone());
    }
    out
}

/// A quantity for a table: its number and unit, or `-`.
fn shown(q: Option<&Quantity>) -> String {
    q.map_or("-".into(), |q| {
        format!(
            "{} {}",
            number(Some(q.value)),
            foundation::error::printable(&q.unit)
        )
    })
}

/// Watts with 4 decimals (mW resolution and below), or `-`.
fn watts(w: Option<f64>) -> String {
    w.map_or("-".into(), |w| format!("{w:.4}"))
}

/// The text tables: one per cluster, a row per step.
pub fn render(clusters: &[SweepCluster], commands: &[Command], results: &[StepResult]) -> String {
    let mut out = String::new();
    for (ci, c) in clusters.iter().enumerate() {
        let rows: Vec<&StepResult> = results.iter().filter(|r| r.step.cluster == ci).collect();
        let source =
            rows.iter()
                .find_map(|r| r.power.as_ref())
                .map_or("no power record".to_string(), |p| {
                    let net = if p.baseline_w.is_some() {
                        ", net of the idle baseline"
                    } else {
                        ""
                    };
                    format!("power: {}{net}", foundation::error::printable(&p.source))
                });
        out += &format!(
            "cluster {}: CPUs {} ({}), {}; {source}\n",
            c.index,
            benchmp::cpulist::format_cpu_list(&c.cpus),
            foundation::error::printable(&c.policy),
            super::plan::describe(&c.swept_khz)
        );
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                let p = r.performance.as_ref();
                vec![
                    super::plan::mhz_arg(r.step.khz),
                    foundation::error::printable(&commands[r.step.command].name).into_owned(),
                    benchmp::cpulist::format_cpu_list(&r.step.cpus),
                    number(p.map(|p| p.value)),
                    p.map_or(String::new(), |p| {
                        foundation::error::printable(&p.unit).into_owned()
                    }),
                    r.per_mhz
                        .as_ref()
                        .map_or("-".into(), |q| number(Some(q.value))),
                    watts(r.power.as_ref().map(|p| p.net_mean_w)),
                    shown(r.energy_per_work.as_ref()),
                    shown(r.power.as_ref().and_then(|p| p.per_energy.as_ref())),
                    r.power
                        .as_ref()
                        .and_then(|p| p.max_temp_c)
                        .map_or("-".into(), |t| format!("{t:.1}")),
                    status(r),
                ]
            })
            .collect();
        out += &table(
            &[
                "MHz",
                "command",
                "CPUs",
                "figure",
                "unit",
                "per MHz",
                "net W",
                "energy per work",
                "per energy",
                "max C",
                "status",
            ],
            &cells,
            &[0, 3, 5, 6, 7, 8, 9],
        );
        out += "\n";
    }
    out
}

/// A step's status word, with what was not back.
fn status(r: &StepResult) -> String {
    let mut s = r.status.word().to_string();
    if r.status == Outcome::Failed {
        s += &format!(" (exit {})", r.exit);
    }
    if !r.not_back.is_empty() {
        s += "; policy not back";
    }
    s
}

/// The Energy-Model tables as text, laid out like the kernel's debugfs (`frequency`,
/// `power`, `cost` per state).
pub fn render_energy_models(models: &[EnergyModel]) -> String {
    if models.is_empty() {
        return "no power record in the steps' reports (no power source): no Energy Model table\n"
            .into();
    }
    let mut out = String::new();
    for m in models {
        out += &format!(
            "# cluster {} (CPUs {}, {}), {} on one CPU: power above the idle baseline, µW; cost = power x {} / frequency\n",
            m.cluster,
            benchmp::cpulist::format_cpu_list(&m.cpus),
            foundation::error::printable(&m.policy),
            foundation::error::printable(&m.command),
            m.max_freq_khz
        );
        let rows: Vec<Vec<String>> = m
            .states
            .iter()
            .map(|s| {
                vec![
                    format!("ps:{}", s.frequency_khz),
                    s.frequency_khz.to_string(),
                    s.power_uw.to_string(),
                    s.cost.to_string(),
                ]
            })
            .collect();
        out += &table(&["state", "frequency", "power", "cost"], &rows, &[1, 2, 3]);
        out += "\n";
    }
    out
}

/// One CSV row per step.
pub fn write_csv(
    clusters: &[SweepCluster],
    commands: &[Command],
    results: &[StepResult],
    w: impl std::io::Write,
) -> anyhow::Result<()> {
    let mut out = csv::Writer::from_writer(w);
    out.write_record([
        "label",
        "cluster",
        "policy",
        "command",
        "placement",
        "cpus",
        "freq_khz",
        "mhz",
        "exit",
        "status",
        "seconds",
        "figure",
        "value",
        "unit",
        "per_mhz",
        "power_source",
        "net_mean_w",
        "mean_w",
        "baseline_w",
        "net_energy_j",
        "energy_per_work",
        "energy_per_work_unit",
        "per_energy",
        "per_energy_unit",
        "max_temp_c",
        "policy_back",
        "note",
    ])?;
    let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for r in results {
        let c = &clusters[r.step.cluster];
        let p = r.performance.as_ref();
        let w = r.power.as_ref();
        let pe = w.and_then(|w| w.per_energy.as_ref());
        out.write_record([
            r.step.label.clone(),
            c.index.to_string(),
            c.policy.clone(),
            commands[r.step.command].name.clone(),
            r.step.placement.word().to_string(),
            benchmp::cpulist::format_cpu_list(&r.step.cpus),
            r.step.khz.to_string(),
            r.mhz.to_string(),
            r.exit.to_string(),
            r.status.word().to_string(),
            format!("{:.1}", r.seconds),
            p.map_or(String::new(), |p| p.name.clone()),
            opt(p.map(|p| p.value)),
            p.map_or(String::new(), |p| p.unit.clone()),
            opt(r.per_mhz.as_ref().map(|q| q.value)),
            w.map_or(String::new(), |w| w.source.clone()),
            opt(w.map(|w| w.net_mean_w)),
            opt(w.and_then(|w| w.mean_w)),
            opt(w.and_then(|w| w.baseline_w)),
            opt(w.and_then(|w| w.net_energy_j)),
            opt(r.energy_per_work.as_ref().map(|q| q.value)),
            r.energy_per_work
                .as_ref()
                .map_or(String::new(), |q| q.unit.clone()),
            opt(pe.map(|q| q.value)),
            pe.map_or(String::new(), |q| q.unit.clone()),
            opt(w.and_then(|w| w.max_temp_c)),
            r.not_back.is_empty().to_string(),
            r.note.clone(),
        ])?;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perf(value: f64, unit: &str, better: Better) -> Performance {
        Performance {
            name: String::new(),
            value,
            unit: unit.into(),
            better,
        }
    }

    #[test]
    fn energy_per_unit_of_work_by_the_kind_of_figure() {
        let q = energy_per_work(&perf(10_000.0, "iterations/s", Better::Higher), 2.0).unwrap();
        assert_eq!((q.value, q.unit.as_str()), (200.0, "µJ/iterations"));
        let q = energy_per_work(&perf(5_000.0, "DMIPS", Better::Higher), 1.0).unwrap();
        assert_eq!((q.value, q.unit.as_str()), (200.0, "µJ/(DMIPS·s)"));
        let q = energy_per_work(&perf(100.0, "ns", Better::Lower), 0.5).unwrap();
        assert_eq!((q.value, q.unit.as_str()), (50.0, "nJ/op"));
        assert_eq!(
            energy_per_work(&perf(0.0, "DMIPS", Better::Higher), 1.0),
            None
        );
        let q = per_mhz(&perf(5_000.0, "DMIPS", Better::Higher), 2000.0).unwrap();
        assert_eq!((q.value, q.unit.as_str()), (2.5, "DMIPS/MHz"));
    }

    #[test]
    fn the_kernels_cost() {
        // em_create_perf_table: cost = fmax * power / freq, integer division.
        assert_eq!(cost(100_000, 2_000_000, 1_000_000), 200_000);
        assert_eq!(cost(7, 3, 2), 10);
        assert_eq!(cost(u64::MAX / 2, 4, 2), u64::MAX - 1);
    }

    #[test]
    fn a_report_gives_its_headline_and_that_measurements_power() {
        let text = r#"{
          "figures": [
            {"name":"dhrystone strict","cpu":null,"cluster":0,"unit":"DMIPS","better":"higher","value":900.0,"samples":[900.0]}
          ],
          "measurements": [
            {"name":"dhrystone","power":{"sources":[{"name":"battery:battery","covers":"whole device (battery)","mean_w":2.5,"baseline_w":0.5,"net_mean_w":2.0,"energy_j":5.0,"net_energy_j":4.0}],
              "per_energy":{"value":450.0,"unit":"DMIPS/W"},
              "temps":[{"zone":"a","start_c":40.0,"end_c":50.0,"max_c":51.5},{"zone":"b","max_c":45.0}]}}
          ],
          "pinned": {"files":[{"path":"x","was":"1","set":"2","restored":true}]},
          "quality": {"verdict": {"noisy": false, "reasons": []}}
        }"#;
        let r = read(text);
        let p = r.performance.unwrap();
        // A report's only figure has no name (the headline rule); its measurement is found.
        assert_eq!((p.name.as_str(), p.value), ("", 900.0));
        let w = r.power.unwrap();
        assert_eq!(
            (
                w.source.as_str(),
                w.net_mean_w,
                w.baseline_w,
                w.net_energy_j
            ),
            ("battery:battery", 2.0, Some(0.5), Some(4.0))
        );
        assert_eq!(w.per_energy.unwrap().value, 450.0);
        assert_eq!(w.max_temp_c, Some(51.5));
        assert_eq!(r.tool_restored, Some(true));
        let none = read(r#"{"figures":[],"measurements":[]}"#);
        assert!(none.performance.is_none() && none.note.contains("no figures"));
        assert!(read("{").note.contains("not JSON"));
    }
}
