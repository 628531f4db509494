//! `benchmp summary --lava DIR`: a results folder as LAVA test cases, one line each, for a
//! POSIX shell to hand to LAVA's helpers (scripts/lava/report.sh) on a device that has
//! neither bash nor Python. Every name is one word of `[A-Za-z0-9._-]`, every unit one word,
//! every measurement a plain decimal, so a line splits on white space:
//!
//! ```text
//! set topology                                the CPUs and clusters the reports ran on
//! case topology-cluster0-capacity pass 512 capacity
//! set bw_mem                                  lava-test-set start bw_mem
//! log bw_mem-rd-P1: noisy run: ...            a line for the log, before the case it explains
//! case bw_mem-rd-P1 pass 12345.6 MB/s         lava-test-case NAME --result R [--measurement M --units U]
//! stop                                        lava-test-set stop
//! ```
//!
//! An entry is `pass` when its tool exited 0 and its report does not call the run noisy,
//! `skip` when the tool exited 3 (not supported here), `unknown` when the only thing against
//! it is a noisy run (the figure is reported, but not to be trusted) or a parallel run whose
//! children another task kept apart (refused by its tool, no figure), and `fail` otherwise
//! (the tool failed, left no report or no figure, or the suite was stopped while it ran).
//! Each reason is a case of its own, `LABEL-reason-KIND`, with the entry's result; the
//! headline's figure per cluster (`LABEL-cluster0`, where the report has two clusters or
//! more), lat_mem_rd's plateaus, the events `--counters` counted (`LABEL-counter-cycles`) and
//! the energy follow as cases of their own with the entry's result. After the
//! entries, a comparison in `DIR/compare/compare.json` (`benchmp compare --json`) gives the set
//! `compare`: a case `compare` (fail when a figure regressed) and one per figure with its
//! change in percent. scripts/lava/README.md lists every name and unit.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use super::{Outcome, SummaryRow, bad, last_error_line, read_report, summarize};

/// A LAVA test case name: letters, digits, `.`, `_` and `-` only (others become `-`), the
/// parts joined by `-`.
pub fn case_name(parts: &[&str]) -> String {
    let joined = parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("-");
    let mut out = String::new();
    for ch in joined.chars() {
        if ch.is_ascii_alphanumeric() || matches!(ch, '.' | '_' | '-') {
            out.push(ch);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// A unit as one word LAVA's signal parser keeps intact (spaces, `=`, `<` and `>` become `_`).
fn unit_word(unit: &str) -> Option<String> {
    let mut out = String::new();
    for ch in unit.trim().chars() {
        if ch.is_whitespace() || matches!(ch, '=' | '<' | '>') {
            if !out.ends_with('_') {
                out.push('_');
            }
        } else if !ch.is_control() {
            out.push(ch);
        }
    }
    let out = out.trim_matches('_').to_string();
    (!out.is_empty()).then_some(out)
}

/// A measurement as LAVA reads it: a decimal number without exponent where it can be one,
/// no thousands separators.
fn measurement(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    if x.abs() >= 1e-3 {
        let s = format!("{x:.6}");
        return s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    format!("{x:.6e}")
}

/// Why an entry is not a pass: its kind (the case's suffix), a measurement with its units,
/// and the text for the log.
#[derive(Debug, Clone, PartialEq)]
struct Reason {
    kind: &'static str,
    measured: Option<(f64, &'static str)>,
    text: String,
}

/// The lines being written.
#[derive(Debug, Default)]
struct Lines(String);

impl Lines {
    fn set(&mut self, name: &str) {
        let _ = writeln!(self.0, "set {}", case_name(&[name]));
    }
    fn stop(&mut self) {
        self.0.push_str("stop\n");
    }
    fn log(&mut self, name: &str, text: &str) {
        let text: String = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let _ = writeln!(self.0, "log {name}: {text}");
    }
    fn case(&mut self, name: &str, result: &str, value: Option<f64>, unit: Option<&str>) {
        let _ = write!(self.0, "case {name} {result}");
        if let Some(v) = value.filter(|v| v.is_finite()) {
            let _ = write!(self.0, " {}", measurement(v));
            if let Some(u) = unit.and_then(unit_word) {
                let _ = write!(self.0, " {u}");
            }
        }
        self.0.push('\n');
    }
    fn reasons(&mut self, name: &str, result: &str, reasons: &[Reason]) {
        for r in reasons {
            let (value, unit) = r.measured.map_or((None, None), |(v, u)| (Some(v), Some(u)));
            self.case(&case_name(&[name, "reason", r.kind]), result, value, unit);
        }
    }
}

/// (name, value) of every latency plateau among a report's figures, as their sizing declares
/// them (lat_mem_rd's: a stride and a level; `-L1`, `-DRAM`, with `-s64` and `-c1` when the
/// report has several strides or clusters).
fn plateaus(label: &str, figures: &[benchmp::schema::Figure]) -> Vec<(String, f64)> {
    let found: Vec<(&benchmp::schema::Figure, u64, &str)> = figures
        .iter()
        .filter_map(|f| Some((f, f.sizing.stride_bytes?, f.sizing.level.as_deref()?)))
        .filter(|(f, _, _)| f.value.is_finite())
        .collect();
    let distinct = |mut seen: Vec<Option<u64>>| {
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    };
    let strides = distinct(found.iter().map(|p| Some(p.1)).collect());
    let clusters = distinct(
        found
            .iter()
            .map(|p| p.0.cluster.map(|c| c as u64))
            .collect(),
    );
    found
        .iter()
        .map(|(f, stride, level)| {
            let mut parts = vec![label.to_string()];
            if strides > 1 {
                parts.push(format!("s{stride}"));
            }
            if clusters > 1 {
                parts.push(format!(
                    "c{}",
                    f.cluster.map_or("all".into(), |c| c.to_string())
                ));
            }
            parts.push((*level).to_string());
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            (case_name(&parts), f.value)
        })
        .collect()
}

/// (name, value, unit) of the headline's figure per cluster, where the report has one for
/// two clusters or more: the figures named as the system figure whose value is the headline,
/// counted per cluster (`LABEL-cluster0`, `LABEL-cluster1`).
fn cluster_cases(
    label: &str,
    figures: &[benchmp::schema::Figure],
    value: f64,
) -> Vec<(String, f64, String)> {
    let Some(system) = figures
        .iter()
        .find(|f| f.cpu.is_none() && f.cluster.is_none() && f.value == value)
    else {
        return Vec::new();
    };
    let per: Vec<_> = figures
        .iter()
        .filter(|f| f.name == system.name && f.cpu.is_none())
        .filter_map(|f| Some((f.cluster?, f)))
        .collect();
    if per.len() < 2 {
        return Vec::new();
    }
    per.into_iter()
        .map(|(c, f)| {
            (
                case_name(&[label, &format!("cluster{c}")]),
                f.value,
                f.unit.clone(),
            )
        })
        .collect()
}

/// (name, count) of each event `--counters` counted, summed over the children of the
/// report's first measurement that has counts (`LABEL-counter-cycles`).
fn counter_cases(label: &str, report: &serde_json::Value) -> Vec<(String, f64)> {
    let mut sums: Vec<(String, f64)> = Vec::new();
    for m in report["measurements"].as_array().into_iter().flatten() {
        for child in m["children"].as_array().into_iter().flatten() {
            for c in child["counters"]["counts"].as_array().into_iter().flatten() {
                let (Some(event), Some(value)) = (c["event"].as_str(), c["value"].as_f64()) else {
                    continue;
                };
                match sums.iter_mut().find(|(e, _)| e == event) {
                    Some((_, sum)) => *sum += value,
                    None => sums.push((event.to_string(), value)),
                }
            }
        }
        if !sums.is_empty() {
            break;
        }
    }
    sums.into_iter()
        .map(|(e, v)| (case_name(&[label, "counter", &e]), v))
        .collect()
}

/// Why an entry's exit status counts against it, if it does: not supported here (exit 3),
/// stopped with the suite, refused because its children ran apart, or a failed tool (not a
/// noisy run's exit 1, which its report explains). All but the stopped one quote the last
/// line of `LABEL.err`.
fn exit_reason(dir: &Path, row: &SummaryRow) -> Result<Option<Reason>> {
    let label = &row.entry;
    let code = row.exit;
    let last = || -> Result<String> { Ok(last_error_line(&dir.join(format!("{label}.err")))?) };
    let (kind, text) = if code == benchmp::EXIT_UNSUPPORTED {
        let text = format!("not supported here (exit 3): {}", last()?);
        ("unsupported", text)
    } else if row.status == Outcome::Interrupted {
        let text = format!("the suite was stopped while it ran (exit {code})");
        ("interrupted", text)
    } else if code == benchmp::EXIT_FAILED
        && row.status != Outcome::Noisy
        && last()?.contains(benchmp::run::overlap::RAN_APART)
    {
        // A parallel run refused because another task kept its children apart: no figure,
        // and nothing known against the device, as with a noisy one.
        let text = format!("its children ran apart on a busy machine: {}", last()?);
        ("apart", text)
    } else if code != 0 && row.status != Outcome::Noisy {
        let text = format!("the tool failed (exit {code}): {}", last()?);
        ("exit", text)
    } else {
        return Ok(None);
    };
    let measured = Some((f64::from(code), "status"));
    Ok(Some(Reason {
        kind,
        measured,
        text,
    }))
}

/// A case beside an entry's own: its name, measurement and unit.
type SubCase = (String, Option<f64>, Option<String>);

/// What an entry's report gives its lines.
#[derive(Debug, Default)]
struct ReportCases {
    /// The headline figure: value and unit.
    figure: Option<(f64, String)>,
    /// The cases beside the entry's own, in the order they are written.
    subs: Vec<SubCase>,
    /// The reasons the report gives against the entry, in the order they are logged.
    reasons: Vec<Reason>,
}

/// What an entry's report (`LABEL.json`) says: its headline figure, the cases beside it
/// ([`sub_cases`]), and why it counts against the entry: no report or no figures where the
/// tool exited 0, a noisy run, no headline figure.
fn report_cases(dir: &Path, row: &SummaryRow) -> Result<ReportCases> {
    let label = &row.entry;
    let path = dir.join(format!("{label}.json"));
    let missing = |text: String| ReportCases {
        reasons: vec![Reason {
            kind: "report",
            measured: None,
            text,
        }],
        ..ReportCases::default()
    };
    let report = match read_report(&path)? {
        None if row.exit == 0 => return Ok(missing(format!("no JSON report ({label}.json)"))),
        None => return Ok(ReportCases::default()),
        Some(r) => r,
    };
    let figures = match &report.figures {
        Err(why) if row.exit == 0 => return Ok(missing(why.clone())),
        Err(_) => return Ok(ReportCases::default()),
        Ok(figures) => figures,
    };
    let figure = row.headline.as_ref().map(|h| (h.value, h.unit.clone()));
    let subs = sub_cases(&path, row, figures, figure.as_ref().map(|f| f.0))?;
    let mut reasons = Vec::new();
    if report.noisy {
        reasons.push(noisy_reason(&report.reasons));
    }
    if figure.is_none() {
        let text = format!("no headline figure for {label}: its report has no figures");
        reasons.extend(missing(text).reasons);
    }
    Ok(ReportCases {
        figure,
        subs,
        reasons,
    })
}

/// The cases beside an entry's own, in order: the headline's figure per cluster (for the
/// headline `value`), lat_mem_rd's plateaus, the events `--counters` counted (read from the
/// report at `path`) and the energy.
fn sub_cases(
    path: &Path,
    row: &SummaryRow,
    figures: &[benchmp::schema::Figure],
    value: Option<f64>,
) -> Result<Vec<SubCase>> {
    let label = &row.entry;
    let text = benchmp::input::read_text_if_there(path, benchmp::input::MAX_INPUT_BYTES)?
        .unwrap_or_default();
    let data: serde_json::Value = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    let mut subs: Vec<SubCase> = Vec::new();
    if let Some(value) = value {
        for (n, v, u) in cluster_cases(label, figures, value) {
            subs.push((n, Some(v), Some(u)));
        }
    }
    for (n, ns) in plateaus(label, figures) {
        subs.push((n, Some(ns), Some("ns".to_string())));
    }
    for (n, count) in counter_cases(label, &data) {
        subs.push((n, Some(count), Some("events".to_string())));
    }
    if let Some(e) = &row.energy {
        if let Some(j) = e.energy_j {
            subs.push((case_name(&[label, "energy"]), Some(j), Some("J".into())));
        }
        let per = case_name(&[label, "per-energy"]);
        subs.push((per, Some(e.value), Some(e.unit.clone())));
    }
    Ok(subs)
}

/// The reason a noisy run gives: measured as its report's count of reasons, the first three
/// of them (and how many more) for the log.
fn noisy_reason(why: &[String]) -> Reason {
    let shown: Vec<&str> = why.iter().take(3).map(String::as_str).collect();
    let more = why.len().saturating_sub(3);
    let more = if more > 0 {
        format!(" (and {more} more)")
    } else {
        String::new()
    };
    Reason {
        kind: "noisy",
        measured: Some((why.len() as f64, "reasons")),
        text: format!("noisy run: {}{more}", shown.join("; ")),
    }
}

/// An entry's result: `skip` when its tool exited 3, `pass` with no reason against it,
/// `unknown` when the only reasons are a noisy run or children kept apart, `fail` otherwise.
fn entry_result(code: i32, reasons: &[Reason]) -> &'static str {
    if code == benchmp::EXIT_UNSUPPORTED {
        "skip"
    } else if reasons.is_empty() {
        "pass"
    } else if reasons.iter().all(|r| matches!(r.kind, "noisy" | "apart")) {
        "unknown"
    } else {
        "fail"
    }
}

/// One entry: its reasons, its result and its lines.
fn entry(lines: &mut Lines, dir: &Path, row: &SummaryRow) -> Result<()> {
    let name = case_name(&[&row.entry]);
    let mut reasons: Vec<Reason> = exit_reason(dir, row)?.into_iter().collect();
    let report = report_cases(dir, row)?;
    reasons.extend(report.reasons);
    let result = entry_result(row.exit, &reasons);
    for r in &reasons {
        lines.log(&name, &r.text);
    }
    let (value, unit) = report
        .figure
        .map_or((None, None), |(v, u)| (Some(v), Some(u)));
    lines.case(&name, result, value, unit.as_deref());
    lines.reasons(&name, result, &reasons);
    for (n, v, u) in report.subs {
        lines.case(&n, result, v, u.as_deref());
    }
    Ok(())
}

/// `compare/compare.json`'s verdicts as LAVA results: PASS and IMPROVED (and the reference
/// REF) pass, FAIL fails, NOISY is unknown, MISSING (in one run only) is a skip.
fn compare_result(verdict: &str) -> &'static str {
    match verdict {
        "PASS" | "IMPROVED" | "REF" => "pass",
        "FAIL" => "fail",
        "MISSING" => "skip",
        _ => "unknown",
    }
}

/// The set `compare`, from `DIR/compare/compare.json` when it is there.
fn compare(lines: &mut Lines, dir: &Path) -> Result<()> {
    let path = dir.join("compare").join("compare.json");
    let Some(text) = benchmp::input::read_text_if_there(&path, benchmp::input::MAX_INPUT_BYTES)?
    else {
        return Ok(());
    };
    let data: benchmp_cli::compare::Comparison = serde_json::from_str(&text)
        .map_err(|e| bad(&path, None, format!("is not a comparison's JSON: {e}")))?;
    let regressed = data
        .rows
        .iter()
        .filter(|r| r.verdict.label() == "FAIL")
        .count();
    lines.set("compare");
    let result = if regressed > 0 { "fail" } else { "pass" };
    let reasons = if regressed > 0 {
        vec![Reason {
            kind: "regression",
            measured: Some((regressed as f64, "figures")),
            text: format!("{regressed} figure(s) regressed against {}", data.base),
        }]
    } else {
        Vec::new()
    };
    for r in &reasons {
        lines.log("compare", &r.text);
    }
    lines.case("compare", result, None, None);
    lines.reasons("compare", result, &reasons);
    let mut seen = std::collections::HashSet::new();
    for r in &data.rows {
        let name = case_name(&["compare", &r.entry, &r.figure]);
        if !seen.insert(name.clone()) {
            continue;
        }
        lines.case(
            &name,
            compare_result(r.verdict.label()),
            r.change_pct,
            Some("%"),
        );
    }
    lines.stop();
    Ok(())
}

/// The set `topology`: the CPUs and clusters the folder's first report ran on (every report
/// carries the topology it saw), each cluster's size and capacity as cases, and a line in the
/// log for each cluster and for an emulated or virtual CPU. Nothing when no report has one.
fn topology(lines: &mut Lines, dir: &Path, rows: &[SummaryRow]) -> Result<()> {
    let mut found = None;
    for r in rows {
        let path = dir.join(format!("{}.json", r.entry));
        let Ok(Some(text)) =
            benchmp::input::read_text_if_there(&path, benchmp::input::MAX_INPUT_BYTES)
        else {
            continue;
        };
        let Ok(data) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let Ok(t) = serde_json::from_value::<benchmp::topology::Topology>(data["topology"].clone())
        else {
            continue;
        };
        let host: Option<benchmp::host::Host> = serde_json::from_value(data["host"].clone()).ok();
        found = Some((t, host));
        break;
    }
    let Some((t, host)) = found else {
        return Ok(());
    };
    lines.set("topology");
    if let Some(v) = host.and_then(|h| h.virtual_cpu) {
        lines.log("topology", &v.note());
    }
    lines.case(
        "topology-cpus",
        "pass",
        Some(t.cpus.len() as f64),
        Some("cpus"),
    );
    lines.case(
        "topology-clusters",
        "pass",
        Some(t.clusters.len() as f64),
        Some("clusters"),
    );
    for c in &t.clusters {
        let name = format!("topology-cluster{}", c.index);
        let capacity = c.capacity.map_or("-".into(), |v| v.to_string());
        let mhz = c
            .max_freq_khz
            .map_or("-".into(), |v| format!("{}", v / 1000));
        lines.log(
            "topology",
            &format!(
                "cluster {}: CPUs {}, capacity {capacity}, max {mhz} MHz",
                c.index,
                benchmp::cpulist::format_cpu_list(&c.cpus)
            ),
        );
        lines.case(
            &format!("{name}-cpus"),
            "pass",
            Some(c.cpus.len() as f64),
            Some("cpus"),
        );
        if let Some(v) = c.capacity {
            lines.case(
                &format!("{name}-capacity"),
                "pass",
                Some(f64::from(v)),
                Some("capacity"),
            );
        }
        if let Some(v) = c.max_freq_khz {
            lines.case(
                &format!("{name}-max-freq"),
                "pass",
                Some(v as f64 / 1000.0),
                Some("MHz"),
            );
        }
    }
    lines.stop();
    Ok(())
}

/// The folder's results as LAVA lines: the set `topology`, a set per tool (in the order status.tsv first names
/// them) with a case per entry, then the comparison's set when there is one.
pub fn render(dir: &Path) -> Result<String> {
    let s = summarize(dir)?;
    let mut lines = Lines::default();
    topology(&mut lines, dir, &s.entries)?;
    let mut tools: Vec<&str> = Vec::new();
    for r in &s.entries {
        if !tools.contains(&r.tool.as_str()) {
            tools.push(&r.tool);
        }
    }
    for tool in tools {
        lines.set(tool);
        for r in s.entries.iter().filter(|r| r.tool == tool) {
            entry(&mut lines, dir, r)?;
        }
        lines.stop();
    }
    compare(&mut lines, dir)?;
    Ok(lines.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchmp::schema::{Better, Figure};

    fn figures(unit: &str, value: f64) -> String {
        serde_json::to_string(&[Figure {
            name: "score".into(),
            cpu: Some(0),
            cluster: Some(0),
            unit: unit.into(),
            better: Better::Higher,
            value,
            samples: vec![value],
            sizing: Default::default(),
        }])
        .unwrap()
    }

    /// lat_mem_rd's plateau figures at stride 64 on cluster 0, sized as it declares them.
    fn plateau_figures(levels: &[(&str, f64)]) -> String {
        let figures: Vec<Figure> = levels
            .iter()
            .map(|&(level, ns)| Figure {
                name: format!("random stride 64 {level}"),
                cpu: Some(0),
                cluster: Some(0),
                unit: "ns".into(),
                better: Better::Lower,
                value: ns,
                samples: vec![ns],
                sizing: benchmp::schema::Sizing {
                    size_bytes: None,
                    stride_bytes: Some(64),
                    layout: Some("random".into()),
                    level: Some(level.into()),
                },
            })
            .collect();
        serde_json::to_string(&figures).unwrap()
    }

    #[test]
    fn names_units_and_measurements_are_single_words() {
        assert_eq!(case_name(&["bw_mem-rd P1", "", "x/y"]), "bw_mem-rd-P1-x-y");
        assert_eq!(case_name(&["--a  b--"]), "a-b");
        assert_eq!(unit_word(" MB / s ").as_deref(), Some("MB_/_s"));
        assert_eq!(unit_word("=<>"), None);
        assert_eq!(measurement(12_345.678_901_2), "12345.678901");
        assert_eq!(measurement(2.5), "2.5");
        assert_eq!(measurement(0.0), "0");
        assert_eq!(measurement(1.5e-7), "1.500000e-7");
    }

    #[test]
    fn every_entry_gets_its_result_and_reasons() {
        let d = std::env::temp_dir().join(format!("benchmp-lava-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("status.tsv"),
            "label\ttool\texit\tseconds\tstatus\n\
             ok\tdhry\t0\t1.0\tok\n\
             shaky\tdhry\t0\t1.0\tnoisy\n\
             broke\tcoremark\t1\t1.0\tfailed\n\
             apart\tcoremark\t1\t1.0\tfailed\n\
             none\tcoremark\t3\t1.0\tfailed\n\
             cut\tcoremark\t143\t1.0\tinterrupted\n\
             lost\tcoremark\t0\t1.0\tok\n\
             lat\tlat_mem_rd\t0\t1.0\tok\n",
        )
        .unwrap();
        let clean = r#""quality":{"verdict":{"noisy":false,"reasons":[]}}"#;
        std::fs::write(
            d.join("ok.json"),
            format!(r#"{{"figures":{},{clean}}}"#, figures("DMIPS", 1234.5)),
        )
        .unwrap();
        std::fs::write(
            d.join("shaky.json"),
            format!(
                r#"{{"figures":{},"quality":{{"verdict":{{"noisy":true,"reasons":["child 0 lost 9 %","two","three","four"]}}}}}}"#,
                figures("DMIPS", 1.0)
            ),
        )
        .unwrap();
        std::fs::write(d.join("broke.err"), "first\nit broke\n").unwrap();
        std::fs::write(d.join("none.err"), "no NEON here\n").unwrap();
        std::fs::write(
            d.join("apart.err"),
            "a note\nx: the children did not run together in 3 attempts\n",
        )
        .unwrap();
        std::fs::write(
            d.join("lat.json"),
            format!(
                r#"{{"figures":{},{clean}}}"#,
                plateau_figures(&[("L1", 1.25), ("DRAM", 95.5)])
            ),
        )
        .unwrap();
        let text = render(&d).unwrap();
        let want = "\
set dhry
case ok pass 1234.5 DMIPS
log shaky: noisy run: child 0 lost 9 %; two; three (and 1 more)
case shaky unknown 1 DMIPS
case shaky-reason-noisy unknown 4 reasons
stop
set coremark
log broke: the tool failed (exit 1): it broke
case broke fail
case broke-reason-exit fail 1 status
log apart: its children ran apart on a busy machine: x: the children did not run together in 3 attempts
case apart unknown
case apart-reason-apart unknown 1 status
log none: not supported here (exit 3): no NEON here
case none skip
case none-reason-unsupported skip 3 status
log cut: the suite was stopped while it ran (exit 143)
case cut fail
case cut-reason-interrupted fail 143 status
log lost: no JSON report (lost.json)
case lost fail
case lost-reason-report fail
stop
set lat_mem_rd
case lat pass 95.5 ns
case lat-L1 pass 1.25 ns
case lat-DRAM pass 95.5 ns
stop
";
        assert_eq!(text, want);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_run_over_two_clusters_gives_each_clusters_figure_and_its_counts() {
        let f = |cluster: Option<usize>, value: f64| Figure {
            name: "rd 8M".into(),
            cpu: None,
            cluster,
            unit: "MB/s".into(),
            better: Better::Higher,
            value,
            samples: vec![value],
            sizing: Default::default(),
        };
        let figures = [f(Some(0), 300.0), f(Some(1), 200.0), f(None, 500.0)];
        assert_eq!(
            cluster_cases("xc", &figures, 500.0),
            [
                ("xc-cluster0".to_string(), 300.0, "MB/s".to_string()),
                ("xc-cluster1".to_string(), 200.0, "MB/s".to_string())
            ]
        );
        // One cluster: its figure is the system's, no case of its own.
        assert!(cluster_cases("xc", &figures[..1], 300.0).is_empty());
        let report = serde_json::json!({"measurements": [{"children": [
            {"counters": {"counts": [{"event": "cycles", "value": 10.0}, {"event": "instructions", "value": 4.0}]}},
            {"counters": {"counts": [{"event": "cycles", "value": 5.0}, {"event": "instructions", "value": 1.0}]}},
        ]}]});
        assert_eq!(
            counter_cases("c", &report),
            [
                ("c-counter-cycles".to_string(), 15.0),
                ("c-counter-instructions".to_string(), 5.0)
            ]
        );
        assert!(
            counter_cases(
                "c",
                &serde_json::json!({"measurements": [{"children": [{}]}]})
            )
            .is_empty()
        );
    }

    #[test]
    fn the_topology_set_gives_each_clusters_size_and_capacity() {
        let d = std::env::temp_dir().join(format!("benchmp-lava-topo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let root =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../benchmp/tests/fixtures/phone8/sys");
        let t = benchmp::topology::Topology::from_root(&root).unwrap();
        std::fs::write(
            d.join("status.tsv"),
            "label\ttool\texit\tseconds\tstatus\nok\tdhry\t0\t1.0\tok\n",
        )
        .unwrap();
        let report = serde_json::json!({
            "figures": serde_json::from_str::<serde_json::Value>(&figures("DMIPS", 2.0)).unwrap(),
            "quality": {"verdict": {"noisy": false, "reasons": []}},
            "topology": t,
        });
        std::fs::write(d.join("ok.json"), report.to_string()).unwrap();
        let text = render(&d).unwrap();
        let set: Vec<&str> = text.lines().take_while(|l| *l != "stop").collect();
        assert_eq!(set[0], "set topology", "{text}");
        assert!(set.contains(&"case topology-cpus pass 8 cpus"), "{text}");
        let clusters = format!("case topology-clusters pass {} clusters", t.clusters.len());
        assert!(
            t.clusters.len() > 1 && set.contains(&clusters.as_str()),
            "{text}"
        );
        for c in &t.clusters {
            let size = format!(
                "case topology-cluster{}-cpus pass {} cpus",
                c.index,
                c.cpus.len()
            );
            assert!(set.contains(&size.as_str()), "{size}: {text}");
            let cap = format!(
                "case topology-cluster{}-capacity pass {} capacity",
                c.index,
                c.capacity.unwrap()
            );
            assert!(set.contains(&cap.as_str()), "{cap}: {text}");
        }
        assert!(
            text.contains("\nset dhry\ncase ok pass 2 DMIPS\nstop\n"),
            "{text}"
        );
        let _ = std::fs::remove_dir_all(d);
    }
}
