//! Every way a report leaves a tool: the JSON document, the CSV of its samples, the text
//! the tool renders, the note lines (placement warnings, noise, notes, counters, a frequency
//! pin), report files, and the per-cluster lines tools print. One place for every tool, dto
//! included, so a report is written the same way whatever wrote it.

use std::io::Write;

use serde::Serialize;

use crate::aggregate::AggregateMode;
use crate::error::{EXIT_FAILED, EXIT_OK};
pub use crate::files::write_file;
use crate::output::{Export, OutputArgs, Outputs};
use crate::report::{Measurement, Report, ToolData};

/// Noise reasons shown on the note stream at most; the rest are counted in one line (all are
/// in the JSON report's `quality.verdict`).
pub const SHOWN_REASONS: usize = 5;

/// Writes the report as one pretty JSON document.
pub fn write_json<T: ToolData>(report: &Report<T>, mut w: impl Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut w, report)?;
    writeln!(w)
}

/// `key=value;key=value` of a measurement's parameters, for one CSV column.
fn params_text(params: &impl Serialize) -> String {
    match serde_json::to_value(params)
        .ok()
        .as_ref()
        .and_then(|v| v.as_object())
    {
        Some(m) => m
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(";"),
        None => String::new(),
    }
}

/// Writes one CSV row per child per timed interval (accepted or not); with a power source,
/// each row also carries its measurement's `energy_j`, `mean_w` and `per_energy` (of the
/// first source), empty with the reason in `power_missing` when that source's power is
/// missing.
pub fn write_csv<T: ToolData>(report: &Report<T>, w: impl Write) -> std::io::Result<()> {
    let mut out = csv::Writer::from_writer(w);
    let power = report.measurements.iter().any(|m| m.power.is_some());
    let mut header = vec![
        "tool",
        "measurement",
        "params",
        "child",
        "pid",
        "cpu",
        "cluster",
        "rep",
        "accepted",
        "iterations",
        "elapsed_ns",
        "net_ns",
        "value",
        "unit",
        "counters",
    ];
    if power {
        header.extend(["energy_j", "mean_w", "per_energy", "power_missing"]);
    }
    out.write_record(&header)?;
    for m in &report.measurements {
        let params = params_text(&m.params);
        let energy: Vec<String> = if power {
            let first = m.power.as_ref().and_then(|p| p.sources.first());
            let per = m.power.as_ref().and_then(|p| p.per_energy.as_ref());
            vec![
                first
                    .and_then(|s| s.energy_j)
                    .map(|j| format!("{j:.6}"))
                    .unwrap_or_default(),
                first
                    .and_then(|s| s.mean_w)
                    .map(|w| format!("{w:.6}"))
                    .unwrap_or_default(),
                per.map(|e| format!("{:.6} {}", e.value, e.unit))
                    .unwrap_or_default(),
                first
                    .and_then(|s| s.missing.as_deref())
                    .map(|why| format!("missing, because {why}"))
                    .unwrap_or_default(),
            ]
        } else {
            Vec::new()
        };
        for c in &m.children {
            let cluster = c
                .cpu_for_topology()
                .map(|cpu| report.topology.cluster_of(cpu).to_string())
                .unwrap_or_default();
            let counters = c
                .counters
                .as_ref()
                .map(crate::counters::Counted::csv_text)
                .unwrap_or_default();
            for (rep, s) in c.samples.iter().enumerate() {
                let value = m.metric.value(crate::schema::Pair {
                    n: s.iterations,
                    u: s.net_ns,
                });
                let mut row: Vec<String> = vec![
                    report.tool.clone(),
                    m.name.clone(),
                    params.clone(),
                    c.index.to_string(),
                    c.pid.to_string(),
                    c.cpu.map(|x| x.to_string()).unwrap_or_default(),
                    cluster.clone(),
                    rep.to_string(),
                    if s.accepted { "true" } else { "false" }.to_string(),
                    s.iterations.to_string(),
                    s.elapsed_ns.to_string(),
                    s.net_ns.to_string(),
                    format!("{value:.6}"),
                    m.metric.unit().to_string(),
                    counters.clone(),
                ];
                row.extend(energy.iter().cloned());
                out.write_record(&row)?;
            }
        }
    }
    out.flush()
}

/// lmbench's number style: `%.6f` below 1, `%.2f` otherwise.
pub fn lmbench_number(x: f64) -> String {
    if x < 1.0 {
        format!("{x:.6}")
    } else {
        format!("{x:.2}")
    }
}

/// Writes the report as asked (text, JSON, CSV; stdout, stderr or files), warns about noise on
/// the stream the results do not use, and returns the exit status (1 for a noisy run under
/// --fail-on-noise). The terminal output comes first, so a report file that fails to write
/// at the end (a full disk, /dev/full) loses only that file, never the result on the screen.
pub fn emit<T: ToolData>(
    report: &Report<T>,
    output: &OutputArgs,
    text: impl FnOnce(&Report<T>) -> String,
) -> Result<i32, crate::output::OutputError> {
    emit_with(report, output, &text(report), None)
}

/// [`emit`] with the text already rendered, and `csv` in place of the samples' CSV when the
/// tool's CSV is its own (dto's one row per cell). The report goes out through the one router
/// ([`crate::output::emit`]) as every command's result does.
pub fn emit_with<T: ToolData>(
    report: &Report<T>,
    output: &OutputArgs,
    text: &str,
    csv: Option<&str>,
) -> Result<i32, crate::output::OutputError> {
    let tool = ToolReport { report, text, csv };
    crate::output::emit(&tool, Outputs::of(output))?;
    Ok(if report.quality.verdict.noisy && output.fail_on_noise {
        EXIT_FAILED
    } else {
        EXIT_OK
    })
}

/// A tool's report in the forms it leaves in: its own text, the report as JSON, the samples'
/// CSV (or the tool's own), and the note lines.
struct ToolReport<'a, T: ToolData> {
    report: &'a Report<T>,
    text: &'a str,
    csv: Option<&'a str>,
}

impl<T: ToolData> Export for ToolReport<'_, T> {
    fn text(&self) -> String {
        self.text.to_string()
    }

    fn json(&self) -> Result<String, crate::output::OutputError> {
        crate::output::json_text(self.report)
    }

    fn csv(&self) -> Result<String, crate::output::OutputError> {
        match self.csv {
            Some(c) => Ok(c.to_string()),
            None => crate::output::OutputError::csv_text(|buf| write_csv(self.report, buf)),
        }
    }

    fn title(&self) -> Option<String> {
        Some(title(self.report))
    }

    fn figures(&self) -> Option<&[crate::schema::Figure]> {
        Some(&self.report.figures)
    }

    fn notes(&self) -> String {
        note_lines(self.report)
    }
}

/// A tool's report in one line, over its figures where a format shows them (Markdown): the
/// tool, its arguments, and what the run's quality verdict or an interruption says.
pub fn title<T: ToolData>(report: &Report<T>) -> String {
    let args = shlex::try_join(report.args.iter().skip(1).map(String::as_str))
        .unwrap_or_else(|_| report.args.get(1..).unwrap_or(&[]).join(" "));
    // One line whatever the arguments hold: control characters escaped, no backtick to end
    // the code span early.
    let args = foundation::error::printable(&args).replace('`', "'");
    let mut head = format!("**{}** `{args}`", report.tool);
    if report.quality.verdict.noisy {
        head.push_str(" (noisy: the JSON report's quality.verdict says why)");
    }
    if let Some(i) = &report.incomplete {
        head.push_str(&format!(
            " (incomplete: interrupted by {} after {} measurement(s))",
            i.signal, i.measured
        ));
    }
    head
}

/// Where a partial report goes instead of `path`: `path` itself when nothing complete would
/// be lost (no file there, an empty or partial one, or a complete report of the same tool
/// and arguments, which the newer run's measurements supersede), else `path.partial` beside
/// it, so an earlier complete result of another command is never replaced by a torso.
pub fn partial_path<T: ToolData>(path: &str, report: &Report<T>) -> String {
    partial_json_path(path, |v| {
        v["tool"] == report.tool.as_str() && v["args"] == serde_json::json!(report.args)
    })
}

/// [`partial_path`] for any JSON report: `path` when nothing complete would be lost (no file,
/// an empty one, one marked `incomplete`, or one `same` calls the same command's), else
/// `path.partial`.
pub fn partial_json_path(path: &str, same: impl Fn(&serde_json::Value) -> bool) -> String {
    let replaceable =
        match crate::input::read_text(std::path::Path::new(path), crate::input::MAX_INPUT_BYTES) {
            Err(crate::input::InputError::Missing(_)) => true,
            Err(_) => false,
            Ok(text) if text.trim().is_empty() => true,
            Ok(text) => match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(v) => !v["incomplete"].is_null() || same(&v),
                Err(_) => false,
            },
        };
    if replaceable {
        path.to_string()
    } else {
        format!("{path}.partial")
    }
}

/// Where a partial CSV or Markdown file goes instead of `path`: `path` when there is nothing
/// there (or only an empty file), else `path.partial` (neither says whether it was complete).
pub fn partial_csv_path(path: &str) -> String {
    let empty = std::fs::metadata(path)
        .map(|m| m.len() == 0)
        .unwrap_or(true);
    if empty {
        path.to_string()
    } else {
        format!("{path}.partial")
    }
}

/// Writes an interrupted run's report to the tool's report files (a self-describing format's
/// where [`partial_path`] says, any other's where [`partial_csv_path`] says) and says where on
/// stderr, one line per file. A self-describing format (JSON) asked on stdout is printed there.
pub fn write_partial<T: ToolData>(report: &Report<T>, output: &OutputArgs) {
    let measured = report.measurements.len();
    let tool = &report.tool;
    let whole = ToolReport {
        report,
        text: "",
        csv: None,
    };
    if let Some(text) = output
        .files
        .on_stdout()
        .filter(|f| f.self_describing())
        .and_then(|f| f.render(&whole).ok())
    {
        let _ = crate::output::write_stdout(&text);
    }
    for (format, path) in output.files.to_files() {
        let target = if format.self_describing() {
            partial_path(path, report)
        } else {
            partial_csv_path(path)
        };
        let written = format
            .render(&whole)
            .and_then(|text| write_file(&target, |w| w.write_all(text.as_bytes())));
        match written {
            Ok(()) => foundation::errln!(
                "{tool}: interrupted: the {measured} measurement(s) that finished are in {} (marked incomplete)",
                foundation::error::printable(&target)
            ),
            Err(e) => foundation::errln!("{tool}: interrupted, and {}", crate::error::chain_of(&e)),
        }
    }
}

/// The note stream's lines: placement warnings, noise reasons (at most [`SHOWN_REASONS`],
/// then a count), the report's notes and the run conditions'.
pub fn note_lines<T: ToolData>(report: &Report<T>) -> String {
    let tool = &report.tool;
    let mut out: String = report
        .placement
        .warnings
        .iter()
        .map(|w| format!("{tool}: warning: {w}\n"))
        .collect();
    if let (Some(file), Some(why)) = (
        &report.calibration.cache_file,
        &report.calibration.cache_problem,
    ) {
        out += &format!(
            "{tool}: note: calibration cache {}: {}\n",
            foundation::error::shown(file),
            foundation::error::printable(why)
        );
    }
    out += &noise_lines(tool, &report.quality.verdict.reasons);
    // Not a noise reason: the run may be clean, but its figures are not the hardware's.
    if let Some(v) = &report.host.virtual_cpu {
        out += &format!("{tool}: note: {}\n", v.note());
    }
    out.extend(
        report
            .quality
            .notes
            .iter()
            .map(|n| format!("{tool}: note: {n}\n")),
    );
    out.extend(condition_lines(report));
    out
}

/// `tool: noisy: REASON` for the first [`SHOWN_REASONS`] reasons, then how many more.
fn noise_lines(tool: &str, reasons: &[String]) -> String {
    let mut out: String = reasons
        .iter()
        .take(SHOWN_REASONS)
        .map(|r| format!("{tool}: noisy: {r}\n"))
        .collect();
    if reasons.len() > SHOWN_REASONS {
        out += &format!(
            "{tool}: noisy: {} more reasons (all in the JSON report's quality.verdict)\n",
            reasons.len() - SHOWN_REASONS
        );
    }
    out
}

/// The note lines of the run conditions: each child's counts (`tool: counters: rd child 0
/// (CPU 0): ...`), each measurement's power (`tool: power: rd 64M: battery:battery 2.61 W
/// ...`) and what a frequency pin set and wrote back.
fn condition_lines<T: ToolData>(report: &Report<T>) -> Vec<String> {
    let mut lines = Vec::new();
    for m in &report.measurements {
        if let Some(p) = &m.power {
            lines.push(format!("{}: power: {}\n", report.tool, p.line(&m.label())));
        }
        for c in &m.children {
            if let Some(k) = &c.counters {
                lines.push(format!(
                    "{}: counters: {} {}: {}\n",
                    report.tool,
                    m.name,
                    c.who(),
                    k.describe()
                ));
            }
        }
    }
    if let Some(p) = &report.pinned {
        let what: Vec<String> = p
            .mhz
            .map(|m| format!("{m} MHz"))
            .into_iter()
            .chain(p.governor.as_ref().map(|g| format!("governor {g}")))
            .collect();
        let back = p.files.iter().filter(|f| f.restored == Some(true)).count();
        lines.push(format!(
            "{}: note: pinned CPUs {} to {} ({} files), {back} of them written back after the run\n",
            report.tool,
            crate::cpulist::format_cpu_list(&p.cpus),
            what.join(" and "),
            p.files.len()
        ));
    }
    lines
}

/// Shown by tools that print a per-cluster breakdown: `cluster 0 (CPUs 0-3): 2 children ...`.
pub fn cluster_lines<T: ToolData>(
    report: &Report<T>,
    m: &Measurement<T>,
    mode: AggregateMode,
) -> Vec<String> {
    let unit = m.metric.unit();
    let mut lines = Vec::new();
    for f in &m.figures {
        lines.push(format!(
            "  child {} cpu {} cluster {}: {:.2} {unit}",
            f.index,
            f.cpu.map_or("-".into(), |c| c.to_string()),
            f.cluster,
            f.value
        ));
    }
    for c in &m.aggregate.per_cluster {
        let cpus = report
            .topology
            .clusters
            .get(c.cluster)
            .map(|cl| crate::cpulist::format_cpu_list(&cl.cpus))
            .unwrap_or_default();
        lines.push(format!(
            "  cluster {} (CPUs {cpus}): {} children, mean {:.2}, total {:.2} {unit}",
            c.cluster, c.children, c.mean, c.total
        ));
    }
    lines.push(format!(
        "  system: cluster {:.2}, lmbench median {:.2} {unit} (shown: {mode:?})",
        m.aggregate.cluster, m.aggregate.median
    ));
    if m.children.len() > 1 && m.overlap.sequential {
        lines.push("  timed one after another (--sequential): nothing added".into());
    } else if m.children.len() > 1 {
        lines.push(format!(
            "  timed together: {:.0} % of each child's work at least ({})",
            m.overlap.fraction * 100.0,
            m.overlap.apart()
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_noise_reasons_are_shown() {
        let reasons: Vec<String> = (0..7).map(|i| format!("r{i}")).collect();
        let t = noise_lines("dto", &reasons);
        assert_eq!(t.lines().count(), 6);
        assert!(t.starts_with("dto: noisy: r0\n"));
        assert!(
            t.ends_with("dto: noisy: 2 more reasons (all in the JSON report's quality.verdict)\n")
        );
        assert_eq!(noise_lines("dto", &reasons[..1]), "dto: noisy: r0\n");
        assert_eq!(noise_lines("dto", &[]), "");
    }

    #[test]
    fn lmbench_numbers() {
        assert_eq!(lmbench_number(0.001), "0.001000");
        assert_eq!(lmbench_number(1.048576), "1.05");
        assert_eq!(lmbench_number(95888.031), "95888.03");
    }

    #[test]
    fn params_column() {
        let p = serde_json::json!({"size_bytes": 1024, "op": "rd"});
        assert_eq!(params_text(&p), "op=rd;size_bytes=1024");
    }
}
