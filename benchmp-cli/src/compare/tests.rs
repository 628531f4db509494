//! The judging of figures, and the reading of runs.

use std::path::PathBuf;

use super::*;
use benchmp::schema::Better;
use benchmp::schema::Figure;
use benchmp::stats::verdict::{JudgeRule, Verdict};

fn fig(name: &str, cpu: Option<usize>, better: Better, samples: &[f64]) -> Figure {
    Figure {
        name: name.into(),
        cpu,
        cluster: cpu.map(|_| 0),
        unit: "MB/s".into(),
        better,
        value: samples.iter().sum::<f64>() / samples.len().max(1) as f64,
        samples: samples.to_vec(),
        sizing: Default::default(),
    }
}

fn spread(center: f64) -> Vec<f64> {
    (0..11)
        .map(|i| center * (1.0 + (i as f64 - 5.0) * 0.001))
        .collect()
}

/// The runs of one side, each with the figures given.
fn runs(sets: &[Vec<Figure>]) -> Vec<RunFigures<'_>> {
    sets.iter()
        .enumerate()
        .map(|(i, figures)| RunFigures {
            figures,
            noisy: false,
            run: i,
            of: sets.len(),
        })
        .collect()
}

fn judge(base: &[Vec<Figure>], cur: &[Vec<Figure>], how: Judging) -> Vec<Row> {
    compare_figures("e", "bw_mem", &runs(base), &runs(cur), how).unwrap()
}

fn spread_known(pct: f64) -> Judging {
    Judging {
        rule: JudgeRule::default(),
        run_spread_pct: Some(pct),
    }
}

#[test]
fn direction_decides_fail_and_improved_beyond_the_run_spread() {
    let how = spread_known(10.0);
    let base = [vec![fig(
        "rd 64M",
        Some(0),
        Better::Higher,
        &spread(1000.0),
    )]];
    let slower = [vec![fig("rd 64M", Some(0), Better::Higher, &spread(850.0))]];
    let faster = [vec![fig(
        "rd 64M",
        Some(0),
        Better::Higher,
        &spread(1200.0),
    )]];
    let rows = judge(&base, &slower, how);
    assert_eq!((rows[0].verdict, &rows[0].why), (Verdict::Fail, &None));
    assert!((rows[0].change_pct.unwrap() + 15.0).abs() < 0.01);
    assert!(rows[0].ks_p.is_some() && rows[0].mann_whitney.is_none());
    assert_eq!(judge(&base, &faster, how)[0].verdict, Verdict::Improved);
    // For a latency, more is worse.
    let lat = [vec![fig("L1", None, Better::Lower, &spread(1.0))]];
    let more = [vec![fig("L1", None, Better::Lower, &spread(1.2))]];
    assert_eq!(judge(&lat, &more, how)[0].verdict, Verdict::Fail);
    assert_eq!(judge(&base, &base, how)[0].verdict, Verdict::Pass);
}

#[test]
fn one_run_per_side_cannot_call_drift_a_regression() {
    let base = [vec![fig(
        "rd 64M",
        Some(0),
        Better::Higher,
        &spread(1000.0),
    )]];
    let slower = [vec![fig("rd 64M", Some(0), Better::Higher, &spread(880.0))]];
    // The KS test rejects (tight samples), yet without the spread between runs the change
    // is NOISY, and says what would decide it.
    let rows = judge(&base, &slower, Judging::default());
    assert!(rows[0].ks_p.unwrap() < 0.05, "{rows:?}");
    assert_eq!(rows[0].verdict, Verdict::Noisy);
    let why = rows[0].why.as_deref().unwrap();
    assert!(
        why.starts_with("one run per side: a change of -12.0 % cannot be told")
            && why.contains("--run-spread PCT")
            && why.contains("benchmp ab"),
        "{why}"
    );
    // Within a known spread it is still NOISY; beyond it a FAIL.
    let rows = judge(&base, &slower, spread_known(15.0));
    assert_eq!(rows[0].verdict, Verdict::Noisy);
    assert!(
        rows[0]
            .why
            .as_deref()
            .unwrap()
            .contains("(--run-spread 15 %)")
    );
    assert_eq!(
        judge(&base, &slower, spread_known(8.0))[0].verdict,
        Verdict::Fail
    );
    // Within the minimum effect it passes whatever the spread.
    let near = [vec![fig("rd 64M", Some(0), Better::Higher, &spread(970.0))]];
    let rows = judge(&base, &near, Judging::default());
    assert_eq!((rows[0].verdict, &rows[0].why), (Verdict::Pass, &None));
}

#[test]
fn unmatched_figures_are_missing_and_single_ones_match_across_cpus() {
    let base = [vec![
        fig("rd 64M", Some(0), Better::Higher, &spread(1000.0)),
        fig("wr 64M", Some(0), Better::Higher, &spread(500.0)),
    ]];
    let cur = [vec![fig(
        "rd 64M",
        Some(4),
        Better::Higher,
        &spread(2000.0),
    )]];
    let rows = judge(&base, &cur, spread_known(10.0));
    assert_eq!(rows.len(), 2);
    let rd = rows.iter().find(|r| r.figure.starts_with("rd")).unwrap();
    assert_eq!(rd.figure, "rd 64M (cpu0 vs cpu4)");
    assert_eq!(rd.verdict, Verdict::Improved);
    let wr = rows.iter().find(|r| r.figure.starts_with("wr")).unwrap();
    assert_eq!(wr.verdict, Verdict::Missing);
    assert!(wr.current.is_none());
}

#[test]
fn single_samples_are_judged_by_the_effect_and_the_spread() {
    let base = [vec![fig("coremark", Some(0), Better::Higher, &[100.0])]];
    let half = [vec![fig("coremark", Some(0), Better::Higher, &[50.0])]];
    assert_eq!(
        judge(&base, &half, spread_known(10.0))[0].verdict,
        Verdict::Fail
    );
    assert_eq!(
        judge(&base, &half, Judging::default())[0].verdict,
        Verdict::Noisy
    );
    let near = [vec![fig("coremark", Some(0), Better::Higher, &[97.0])]];
    assert_eq!(
        judge(&base, &near, Judging::default())[0].verdict,
        Verdict::Pass
    );
}

/// One run per value, each a figure of 11 tight samples around it.
fn side_of(values: &[f64]) -> Vec<Vec<Figure>> {
    values
        .iter()
        .map(|&v| vec![fig("rd 64M", Some(0), Better::Higher, &spread(v))])
        .collect()
}

#[test]
fn several_runs_a_side_are_the_units_of_a_mann_whitney_test() {
    let how = Judging::default();
    let base = side_of(&[1000.0, 1040.0, 980.0, 1010.0]);
    // Every current run below every base run: p = 2/70, a FAIL on the medians' change.
    let rows = judge(&base, &side_of(&[900.0, 880.0, 920.0, 905.0]), how);
    let r = &rows[0];
    assert_eq!((r.verdict, &r.why), (Verdict::Fail, &None), "{r:?}");
    let mw = r.mann_whitney.unwrap();
    assert!((mw.p - 2.0 / 70.0).abs() < 1e-12 && mw.u == 16.0, "{mw:?}");
    let (b, c) = (r.base.as_ref().unwrap(), r.current.as_ref().unwrap());
    assert_eq!((b.runs.len(), c.runs.len(), b.n, c.n), (4, 4, 44, 44));
    assert!((b.trimmed_mean - 1005.0).abs() < 1e-9, "{b:?}");
    assert!((r.change_pct.unwrap() - (902.5 / 1005.0 - 1.0) * 100.0).abs() < 1e-9);
    assert!(r.ks_p.is_none());
    // The same runs on both sides: PASS.
    assert_eq!(judge(&base, &base, how)[0].verdict, Verdict::Pass);
    // A median shift beyond the effect whose runs overlap the base's: NOISY, and why.
    let rows = judge(&base, &side_of(&[1100.0, 990.0, 1120.0, 1060.0]), how);
    assert_eq!(rows[0].verdict, Verdict::Noisy, "{rows:?}");
    let why = rows[0].why.as_deref().unwrap();
    assert!(
        why.starts_with("4 runs against 4: a change of +7.5 %") && why.contains("overlap"),
        "{why}"
    );
    // Three runs a side can never reach p < 0.05, however far apart.
    let rows = judge(&base[..3], &side_of(&[500.0, 510.0, 490.0]), how);
    assert_eq!(rows[0].verdict, Verdict::Noisy);
    assert!(
        rows[0]
            .why
            .as_deref()
            .unwrap()
            .contains("cannot reach p < 0.05")
    );
}

#[test]
fn a_run_without_a_figure_gives_it_no_value() {
    let mut base = side_of(&[1000.0, 1040.0, 980.0, 1010.0, 1020.0]);
    base[2].clear();
    let rows = judge(
        &base,
        &side_of(&[900.0, 880.0, 920.0, 905.0]),
        Judging::default(),
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].base.as_ref().unwrap().runs.len(), 4);
    assert_eq!(rows[0].verdict, Verdict::Fail);
}

#[test]
fn a_run_measuring_a_figure_differently_is_named() {
    let mut base = side_of(&[1000.0, 1040.0]);
    base[1][0].unit = "ns".into();
    let e = compare_figures(
        "e",
        "bw_mem",
        &runs(&base),
        &runs(&side_of(&[900.0])),
        Judging::default(),
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("BASE run 1 has MB/s") && text.contains("BASE run 2 ns"),
        "{text}"
    );
}

#[test]
fn a_folders_hidden_files_are_no_reports() {
    let d = std::env::temp_dir().join(format!("benchmp-compare-hidden-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    for f in ["a.json", ".socbench-suite.json", "b.txt"] {
        std::fs::write(d.join(f), "{}").unwrap();
    }
    let files: Vec<PathBuf> = report_files(&d)
        .unwrap()
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(files, [d.join("a.json")]);
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_comparison_written_before_runs_were_units_still_reads_as_one() {
    // load() passes over a folder's compare.json only if it parses as a Comparison.
    let base = [vec![fig(
        "rd 64M",
        Some(0),
        Better::Higher,
        &spread(1000.0),
    )]];
    let c = Comparison {
        base: "a".into(),
        current: "b".into(),
        base_runs: vec!["a".into()],
        current_runs: vec!["b".into()],
        rule: JudgeRule::default(),
        run_spread_pct: None,
        rows: judge(&base, &base, Judging::default()),
        counts: Counts::default(),
        paired: false,
        ab: None,
        incomplete: None,
    };
    let mut v = serde_json::to_value(&c).unwrap();
    for k in ["base_runs", "current_runs", "run_spread_pct"] {
        v.as_object_mut().unwrap().remove(k);
    }
    for r in v["rows"].as_array_mut().unwrap() {
        let r = r.as_object_mut().unwrap();
        r.remove("mann_whitney");
        r.remove("why");
        for s in ["base", "current"] {
            let s = r[s].as_object_mut().unwrap();
            s.remove("runs");
            s.remove("noisy_runs");
        }
    }
    let old: Comparison = serde_json::from_value(v).unwrap();
    assert_eq!(old.rows[0].verdict, Verdict::Pass);
}

#[test]
fn the_command_line_splits_into_two_sides() {
    let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
    let (b, c) = sides(p(&["a", "b"]), vec![]).unwrap();
    assert_eq!((b, c), (p(&["a"]), p(&["b"])));
    let (b, c) = sides(p(&["a1", "a2", "a3"]), p(&["b1", "b2"])).unwrap();
    assert_eq!((b.len(), c.len()), (3, 2));
    let (b, c) = sides(p(&["a"]), p(&["b"])).unwrap();
    assert_eq!((b.len(), c.len()), (1, 1));
    assert!(matches!(
        sides(p(&["a", "b", "c"]), vec![]),
        Err(CompareError::Sides(3))
    ));
    assert!(matches!(
        sides(p(&["a"]), vec![]),
        Err(CompareError::Sides(1))
    ));
    assert!(matches!(
        sides(p(&["a"]), p(&["b", "--json"])),
        Err(CompareError::OptionAfterSeparator(_))
    ));
    assert!(matches!(
        sides(p(&["a1", "./a1"]), p(&["b"])),
        Err(CompareError::GivenTwice { side: "BASE", .. })
    ));
    // The same run on both sides is an A/A comparison.
    assert!(sides(p(&["a", "a"]), vec![]).is_ok());
}

#[test]
fn a_paired_comparison_of_an_earlier_suite_still_reads_as_paired() {
    // As suite.sh --ab gathered it before benchmp suite did: the paired flag, and the pairs'
    // numbers loose in each row rather than under `paired`.
    let side = serde_json::json!({"cpu": null, "value": 10.0, "trimmed_mean": 10.0, "n": 3,
        "outliers": 0, "samples": [9.0, 10.0, 11.0], "noisy": false});
    let old = serde_json::json!({
        "base": "old/dhry", "current": "new/dhry",
        "rule": {"min_effect_pct": 2.0, "alpha": 0.05},
        "rows": [{"entry": "dhry-P1", "tool": "dhry", "figure": "score", "unit": "DMIPS",
            "better": "higher", "base": side, "current": side, "change_pct": 0.1,
            "ks_d": null, "ks_p": null, "verdict": "PASS", "why": null, "pairs": 3,
            "processes": 2, "low_pct": -1.0, "high_pct": 1.0, "seconds": 0.5,
            "differences": [0.0, 0.01, -0.01]}],
        "counts": {"pass": 1, "fail": 0, "improved": 0, "noisy": 0, "missing": 0},
        "paired": true
    });
    let c: Comparison = serde_json::from_value(old).unwrap();
    assert!(c.paired && c.ab.is_none() && c.rows[0].paired.is_none());
    // A comparison of separate runs is not paired.
    let base = [vec![fig(
        "rd 64M",
        Some(0),
        Better::Higher,
        &spread(1000.0),
    )]];
    let runs = judge(&base, &base, Judging::default());
    assert!(runs.iter().all(|r| r.paired.is_none()));
    let mut csv = Vec::new();
    write_csv(&c, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert!(
        csv.lines().nth(1).unwrap().ends_with(",false,,,,,"),
        "{csv}"
    );
}

#[test]
fn a_paired_row_with_an_unbounded_interval_reads_back() {
    // Too few units: the interval is [-100 %, +inf), and JSON has no infinity (null).
    let j = crate::stats::paired::judge(&[0.01, -0.01], 2.0, 0.95, "process pairs");
    assert!(j.high_pct.is_infinite(), "{j:?}");
    let p = paired::PairedFigure {
        judged_over: paired::Unit::ProcessPairs,
        judgement: j,
        cpus: vec![Some(0)],
        iterations: 10,
        seconds: 0.1,
        variance: None,
        processes: Vec::new(),
        preempted: (0, 0),
        migrated: (0, 0),
        timed_ns: (1, 1),
        cpu_ns: (1, 1),
        params: Default::default(),
        differences: vec![0.01, -0.01],
        base_values: vec![1.0, 1.0],
        current_values: vec![1.0, 1.0],
    };
    let text = serde_json::to_string(&p).unwrap();
    assert!(text.contains("\"high_pct\":null"), "{text}");
    let back: paired::PairedFigure = serde_json::from_str(&text).unwrap();
    assert_eq!(back.judgement.high_pct, f64::INFINITY);
    assert_eq!(back.judgement.low_pct, p.judgement.low_pct);
    assert_eq!(back.judgement.decision, p.judgement.decision);
}
