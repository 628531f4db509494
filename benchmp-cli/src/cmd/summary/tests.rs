//! The headline rule, the status file, the table.

use super::headline::Also;
use super::*;
use benchmp::schema::Better;

fn fig(name: &str, cpu: Option<usize>, cluster: Option<usize>, value: f64) -> Figure {
    Figure {
        name: name.into(),
        cpu,
        cluster,
        unit: "ns".into(),
        better: Better::Lower,
        value,
        samples: vec![value],
        sizing: Default::default(),
    }
}

/// A latency plateau's figure as lat_mem_rd makes it: named, and sized by stride and level.
fn plateau_fig(stride: u64, level: &str, value: f64) -> Figure {
    Figure {
        sizing: benchmp::schema::Sizing {
            stride_bytes: Some(stride),
            layout: Some("random".into()),
            level: Some(level.into()),
            size_bytes: None,
        },
        ..fig(
            &format!("random stride {stride} {level}"),
            Some(0),
            Some(0),
            value,
        )
    }
}

#[test]
fn a_latency_sweep_is_its_dram_plateau_with_l1_beside_it() {
    let f = vec![
        plateau_fig(16, "L1", 1.1),
        plateau_fig(16, "DRAM", 90.0),
        plateau_fig(64, "L1", 1.2),
        plateau_fig(64, "L2", 4.0),
        plateau_fig(64, "DRAM", 110.0),
        plateau_fig(64, "L3", 12.0),
    ];
    let h = headline(&f).unwrap();
    assert_eq!(
        (h.name.as_str(), h.value),
        ("random stride 64 DRAM cpu0", 110.0)
    );
    assert_eq!(
        h.also,
        [Also {
            name: "L1".into(),
            value: 1.2
        }]
    );
    // No DRAM plateau found: the last one at that stride.
    let h = headline(&f[2..4]).unwrap();
    assert_eq!(h.value, 4.0);
    // The rule follows the declared sizing, not the words of a name: figures named like
    // plateaus but not sized as such are headed as any few figures are (the last).
    let named_only: Vec<Figure> = f
        .iter()
        .map(|p| Figure {
            sizing: Default::default(),
            ..p.clone()
        })
        .collect();
    assert_eq!(headline(&named_only).unwrap().value, 12.0);
}

#[test]
fn one_few_or_many_figures() {
    let one = [fig("rd 64M", Some(0), Some(0), 5.0)];
    let h = headline(&one).unwrap();
    assert_eq!((h.name.as_str(), h.value, h.of), ("", 5.0, 1));
    let few = [
        fig("rd 64M", None, Some(0), 5.0),
        fig("rd 64M", None, Some(1), 7.0),
        fig("rd 64M", None, None, 12.0),
    ];
    let h = headline(&few).unwrap();
    assert_eq!((h.name.as_str(), h.value), ("rd 64M", 12.0));
    // The shared words stop before the whole of a name ("rd 64M").
    assert_eq!(
        h.also,
        [
            Also {
                name: "64M cluster0".into(),
                value: 5.0
            },
            Also {
                name: "64M cluster1".into(),
                value: 7.0
            },
        ]
    );
    let many: Vec<Figure> = (0..9)
        .map(|i| {
            fig(
                &format!("memcpy_{i}k 4k cpu"),
                Some(1),
                Some(0),
                f64::from(i * 10),
            )
        })
        .collect();
    let h = headline(&many).unwrap();
    assert_eq!(
        (h.name.as_str(), h.value, h.of),
        ("memcpy_4k 4k cpu cpu1", 40.0, 9)
    );
    assert_eq!(h.also[0].name, "lowest memcpy_0k 4k cpu cpu1");
    assert_eq!(h.also[1].value, 80.0);
    assert_eq!(headline(&[]), None);
}

#[test]
fn numbers() {
    assert_eq!(number(None), "-");
    assert_eq!(number(Some(12345.6)), "12,346");
    assert_eq!(number(Some(100.0)), "100");
    assert_eq!(number(Some(1234567.0)), "1,234,567");
    assert_eq!(number(Some(12.345)), "12.35");
    assert_eq!(number(Some(0.5)), "0.5000");
    // Magnitudes a table cannot hold as digits (a broken report's 1e308).
    assert_eq!(number(Some(1e308)), "1.000e308");
    assert_eq!(number(Some(f64::NAN)), "NaN");
    assert_eq!(number(Some(0.0)), "0.0000");
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("benchmp-summary-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn report(noisy: bool, figures: bool) -> EntryReport {
    EntryReport {
        figures: if figures {
            Ok(vec![fig("score", Some(0), Some(0), 1.0)])
        } else {
            Err("x.json is empty".into())
        },
        noisy,
        reasons: vec!["child 0 lost 9%".into()],
        measured: Vec::new(),
    }
}

#[test]
fn an_entry_measured_unless_it_failed_for_more_than_noise() {
    // Status 0 with no report (a stand-in that printed "hi"): nothing was measured.
    assert_eq!(outcome(0, None), Outcome::Failed);
    assert_eq!(outcome(0, Some(&report(false, true))), Outcome::Ok);
    assert_eq!(outcome(0, Some(&report(true, true))), Outcome::Noisy);
    // --fail-on-noise: exit 1 with a report of the noisy run.
    assert_eq!(outcome(1, Some(&report(true, true))), Outcome::Noisy);
    assert_eq!(outcome(1, Some(&report(true, false))), Outcome::Failed);
    assert_eq!(outcome(1, None), Outcome::Failed);
    assert_eq!(outcome(2, Some(&report(true, true))), Outcome::Failed);
    assert_eq!(outcome(124, None), Outcome::Failed);
}

#[test]
fn status_rows_old_and_new_are_read_and_a_bad_one_is_named_by_row() {
    let d = scratch("rows");
    let status = d.join("status.tsv");
    std::fs::write(
        &status,
        "label\ttool\texit\tseconds\tstatus\ndhry-P1\tdhry\t130\t1.5\tinterrupted\n\ncoremark-P1\tcoremark\t0\t-\n",
    )
    .unwrap();
    let rows = read_status(&d).unwrap();
    assert_eq!(
        rows[0],
        StatusRow {
            label: "dhry-P1".into(),
            tool: "dhry".into(),
            exit: 130,
            seconds: "1.5".into(),
            outcome: Some(Outcome::Interrupted),
        }
    );
    assert_eq!(rows[0].line(), "dhry-P1\tdhry\t130\t1.5\tinterrupted\n");
    // A row from before the status column (or from scripts/android.sh).
    assert_eq!((rows[1].exit, rows[1].outcome), (0, None));
    for (text, says) in [
        ("", "row 1: is not the header"),
        (
            "label\ttool\texit\tseconds\nx\tdhry\t0\n",
            "row 2: 3 column(s)",
        ),
        (
            "label\ttool\texit\tseconds\nx\tdhry\t-\t1\n",
            "row 2: exit status '-'",
        ),
        (
            "label\ttool\texit\tseconds\nx\tdhry\t0\t1\tfine\n",
            "row 2: status 'fine'",
        ),
        (
            "label\ttool\texit\tseconds\n../x\tdhry\t0\t1\n",
            "label '../x'",
        ),
        (
            "label\ttool\texit\tseconds\nx\tdhry\t0\tNaN\n",
            "row 2: seconds 'NaN'",
        ),
        (
            "label\ttool\texit\tseconds\nx\tdhry\t0\tinf\n",
            "row 2: seconds 'inf'",
        ),
        (
            "label\ttool\texit\tseconds\nx\tdhry\t0\t-5\n",
            "row 2: seconds '-5'",
        ),
    ] {
        std::fs::write(&status, text).unwrap();
        let e = read_status(&d).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
        assert!(e.to_string().contains("status.tsv"), "{e}");
        assert_eq!(benchmp::cli::exit_code_of(&*e), benchmp::EXIT_USAGE, "{e}");
    }
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn the_table_marks_noisy_failed_and_interrupted_entries() {
    let d = scratch("marks");
    std::fs::write(
        d.join("status.tsv"),
        "label\ttool\texit\tseconds\tstatus\na\tdhry\t0\t1.0\tnoisy\nb\tdhry\t1\t1.0\tfailed\nc\tdhry\t130\t1.0\tinterrupted\nd\tdhry\t0\t1.0\tok\n",
    )
    .unwrap();
    std::fs::write(
        d.join("a.json"),
        r#"{"figures":[],"quality":{"verdict":{"noisy":true,"reasons":["child 0 lost 9%","two"]}}}"#,
    )
    .unwrap();
    std::fs::write(d.join("b.err"), "first\nit broke \x1b[31mred\n\n").unwrap();
    let s = summarize(&d).unwrap();
    let by: Vec<(Outcome, &str)> = s
        .entries
        .iter()
        .map(|r| (r.status, r.note.as_str()))
        .collect();
    assert_eq!(
        by[0],
        (
            Outcome::Noisy,
            "NOISY: child 0 lost 9% (and 1 more); no figures"
        )
    );
    assert_eq!(
        by[1],
        (Outcome::Failed, "FAILED (exit 1) it broke \\u{1b}[31mred")
    );
    assert_eq!(by[2], (Outcome::Interrupted, "INTERRUPTED (exit 130)"));
    assert_eq!((s.failed, s.noisy, s.interrupted), (1, 1, 1));
    let table = render(&s);
    assert!(
        table.contains("4 entries over 1 tools (dhry); 1 failed, 1 noisy (a: measured on a busy machine), 1 interrupted."),
        "{table}"
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn the_headline_measurement_is_the_one_its_name_begins_with() {
    let h = |name: &str| Headline {
        name: name.into(),
        value: 1.0,
        unit: "DMIPS".into(),
        also: Vec::new(),
        of: 1,
    };
    let names = ["rd", "wr", "rd"];
    assert_eq!(headline_measurement(&names, &h("wr 64M cpu0")), Some(1));
    assert_eq!(headline_measurement(&names, &h("rd 64M")), Some(2));
    // A report's only figure has no name; a name that matches none: the last.
    assert_eq!(headline_measurement(&names, &h("")), Some(2));
    assert_eq!(headline_measurement(&["dhrystone"], &h("rdx")), Some(0));
    assert_eq!(headline_measurement(&[], &h("rd")), None);
    assert_eq!(
        headline_measurement(&["random stride", "x"], &h("random stride 64 DRAM")),
        Some(0)
    );
}

#[test]
fn the_energy_column_is_there_only_where_a_report_has_a_power_record() {
    let d = scratch("watts");
    std::fs::write(
        d.join("status.tsv"),
        "label\ttool\texit\tseconds\tstatus\na\tdhry\t0\t1.0\tok\nb\tdhry\t0\t1.0\tok\n",
    )
    .unwrap();
    let report = |power: &str| {
        format!(
            r#"{{"figures":[{{"name":"dhrystone strict","cpu":0,"cluster":0,"unit":"DMIPS","better":"higher","value":500.0,"samples":[500.0]}}],"measurements":[{{"name":"dhrystone"{power}}}],"quality":{{"verdict":{{"noisy":false,"reasons":[]}}}}}}"#
        )
    };
    std::fs::write(d.join("a.json"), report("")).unwrap();
    std::fs::write(d.join("b.json"), report("")).unwrap();
    let plain = summarize(&d).unwrap();
    assert!(!render(&plain).contains("energy"), "{}", render(&plain));
    let mut csv = Vec::new();
    write_csv(&plain, &mut csv).unwrap();
    assert!(!String::from_utf8(csv).unwrap().contains("energy"));
    assert!(!serde_json::to_string(&plain).unwrap().contains("energy"));
    std::fs::write(
        d.join("b.json"),
        report(
            r#","power":{"sources":[{"net_energy_j":2.5}],"per_energy":{"value":250.0,"unit":"DMIPS/W"}}"#,
        ),
    )
    .unwrap();
    let s = summarize(&d).unwrap();
    assert_eq!(s.entries[0].energy, None);
    assert_eq!(
        s.entries[1].energy,
        Some(ReportedPerEnergy {
            value: 250.0,
            unit: "DMIPS/W".into(),
            energy_j: Some(2.5),
        })
    );
    let table = render(&s);
    assert!(table.contains("  energy  "), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("b ") && l.contains("250 DMIPS/W")),
        "{table}"
    );
    let mut csv = Vec::new();
    write_csv(&s, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].ends_with(",energy,energy_unit,energy_j"), "{csv}");
    assert!(lines[2].ends_with(",250,DMIPS/W,2.5"), "{csv}");
    assert!(lines[1].ends_with(",,,"), "{csv}");
    let _ = std::fs::remove_dir_all(d);
}
