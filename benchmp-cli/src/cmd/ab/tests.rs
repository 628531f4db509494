//! The driver's pieces: commands, figures, the order coin.

use super::tally::value;
use super::*;
use benchmp::schema::Sizing;

#[test]
fn commands_split_into_environment_program_and_arguments() {
    let p = Prepared::parse("A", "LD_LIBRARY_PATH=/x FOO='a b' sh -c 'echo hi'").unwrap();
    assert_eq!(
        p.env,
        [
            ("LD_LIBRARY_PATH".to_string(), "/x".to_string()),
            ("FOO".to_string(), "a b".to_string())
        ]
    );
    assert!(p.program.ends_with("sh"), "{:?}", p.program);
    assert_eq!(p.args, ["-c", "echo hi"]);
    for (text, says) in [
        ("", "no program"),
        ("X=1", "no program"),
        ("'unclosed", "unbalanced quotes"),
        ("/nonexistent/bw_mem 64m rd", "no such file"),
        ("/etc/passwd", "not an executable file"),
        ("no-such-program-here", "not found on PATH"),
    ] {
        let e = Prepared::parse("B", text).unwrap_err();
        assert!(e.downcast_ref::<Usage>().is_some(), "{text}: {e}");
        assert!(e.to_string().contains(says), "{text}: {e}");
    }
}

#[test]
fn a_step_becomes_the_tools_system_figure() {
    let s = |iterations, net_ns| StepSample {
        iterations,
        elapsed_ns: net_ns,
        net_ns,
        start_ns: 0,
        cpus: (Some(0), Some(0)),
        preempted: 0,
        cpu_ns: net_ns,
    };
    let rate = Metric::Rate {
        per_iteration: 2.0,
        unit: "MB/s".into(),
    };
    // Two children, 10 iterations of 2 MB in 1 ms each: 20 000 MB/s each, added, in one
    // cluster or two.
    for clusters in [[0, 0], [0, 1]] {
        assert_eq!(
            value(
                &rate,
                &[s(10, 1_000_000), s(10, 1_000_000)],
                &clusters,
                false
            ),
            40_000.0
        );
    }
    // Timed one after another (--sequential): nothing ran together, so nothing is added.
    assert_eq!(
        value(&rate, &[s(10, 1_000_000), s(10, 2_000_000)], &[0, 0], true),
        15_000.0
    );
    let lat = Metric::Latency {
        per_iteration: 100.0,
        unit: "ns".into(),
    };
    // 10 iterations of 100 loads in 5 µs and 7 µs: 5 ns and 7 ns, averaged.
    assert_eq!(
        value(&lat, &[s(10, 5_000), s(10, 7_000)], &[0, 0], false),
        6.0
    );
    // Clusters of unequal size: a little core at 3 ns, two big ones at 6 and 8 ns. As the
    // tool's own system figure, each cluster once: (3 + 7) / 2 = 5 ns, not the children's
    // mean (5.67 ns).
    let steps = [s(10, 3_000), s(10, 6_000), s(10, 8_000)];
    assert_eq!(value(&lat, &steps, &[0, 1, 1], false), 5.0);
    let metric = lat.clone();
    let figures: Vec<benchmp::aggregate::ChildFigure> = [(0, 3.0), (1, 6.0), (1, 8.0)]
        .iter()
        .enumerate()
        .map(|(i, &(cluster, value))| benchmp::aggregate::ChildFigure {
            index: i,
            cpu: Some(i),
            cluster,
            value,
            pair: benchmp::schema::Pair { n: 1, u: 1 },
            samples: 1,
        })
        .collect();
    let report = benchmp::aggregate::aggregate(
        &figures,
        &[],
        &metric,
        benchmp::aggregate::Rule::Median,
        false,
    );
    assert_eq!(report.cluster, value(&lat, &steps, &[0, 1, 1], false));
}

#[test]
fn a_figure_is_its_name_and_declared_sizing_not_its_settings() {
    let ready = |name: &str, sizing: Option<Sizing>, params: serde_json::Value, cpu| Ready {
        measurement: name.into(),
        metric: Metric::Latency {
            per_iteration: 1.0,
            unit: "ns".into(),
        },
        params_b: params.clone(),
        params,
        sizing,
        cpus: vec![Some(cpu)],
        renews: false,
        sequential: false,
    };
    let sized = |size: u64| {
        Some(Sizing {
            size_bytes: Some(size),
            stride_bytes: Some(64),
            layout: Some("random".into()),
            level: None,
        })
    };
    // The tool's own names for its settings are not read when it declared its sizing.
    let p = |pages: &str| serde_json::json!({"pages": pages});
    let a = ready("loads", sized(256 << 20), p("thp"), 1);
    assert_eq!(a.figure(), "loads 256M stride 64 random");
    // Another page size is a setting: the same figure.
    assert!(same_figure(&a, &ready("loads", sized(256 << 20), p("small"), 1)).is_ok());
    let e = same_figure(&a, &ready("loads", sized(64 << 20), p("thp"), 1)).unwrap_err();
    assert!(e.downcast_ref::<Usage>().is_some(), "{e}");
    assert!(e.to_string().contains("the same figure"), "{e}");
    let e = same_figure(&a, &ready("loads", sized(256 << 20), p("thp"), 0)).unwrap_err();
    assert!(e.to_string().contains("on the same CPUs"), "{e}");
    // A worker of an older build sent only its parameters: the same figure as a newer one's.
    let old = serde_json::json!({"size_bytes": 256u64 << 20, "stride_bytes": 64, "layout": "random", "pages": "thp"});
    assert!(same_figure(&a, &ready("loads", None, old, 1)).is_ok());
    // A name that already shows its size is not given it twice.
    let rd = Sizing {
        size_bytes: Some(64 << 20),
        ..Sizing::default()
    };
    let rd = ready("rd 64M", Some(rd), serde_json::Value::Null, 0);
    assert_eq!(rd.figure(), "rd 64M");
}

#[test]
fn the_order_coin_is_fair_and_reproducible() {
    let mut r = XorShift(12345);
    let heads = (0..10_000).filter(|_| r.coin()).count();
    assert!((4_800..5_200).contains(&heads), "{heads}");
    let (mut x, mut y) = (XorShift(7), XorShift(7));
    assert!((0..100).all(|_| x.coin() == y.coin()));
}

#[test]
fn the_block_length_follows_where_the_variance_lives() {
    let ready = Ready {
        measurement: "op".into(),
        metric: Metric::Latency {
            per_iteration: 1.0,
            unit: "ns".into(),
        },
        params: serde_json::Value::Null,
        params_b: serde_json::Value::Null,
        sizing: None,
        cpus: vec![Some(0)],
        renews: false,
        sequential: false,
    };
    // Process pairs of the given differences, 0.1 s per repetition pair.
    let tally = |groups: &[&[f64]]| {
        let mut t = Tally::new(ready.clone(), 1, 0.05);
        for g in groups {
            t.d.extend_from_slice(g);
            t.processes.push(ProcessPair {
                pairs: g.len(),
                estimate: 0.0,
                estimate_pct: 0.0,
                renewals: 0,
                stack_offset_bytes: None,
            });
        }
        t.seconds = 0.1 * t.d.len() as f64;
        t
    };
    // 200 s left, 10 s per process pair beyond its pairs: 8 process pairs in all leave at most
    // (200/5 - 10)/0.1 = 300 pairs per block after the third.
    let plan = Plan {
        round: 3,
        whole: None,
        left: 200.0,
        rounds_left: 61,
        overhead: Some(10.0),
        time: 200.0,
    };
    // All of the spread within process pairs: as long a block as the 8 allow.
    let within: [&[f64]; 3] = [&[0.0, 0.04, -0.04]; 3];
    assert_eq!(plan.block_pairs(&tally(&within)), Some(300));
    // All of it between them: the shortest block, many process pairs.
    let between: [&[f64]; 3] = [&[0.02; 3], &[-0.02; 3], &[0.0; 3]];
    assert_eq!(plan.block_pairs(&tally(&between)), Some(3));
    // Both, four pairs each: MSW = 0.0192/9 (σ_w 4.62 %), MSB = 0.08/2 with n0 = 4,
    // σ_b² = (0.04 − 0.00213)/4 (σ_b 9.73 %), F = 18.75 on (2, 9), p < 0.001:
    // m* = (4.62/9.73)·√(10/0.1) = 4.7.
    let both: [&[f64]; 3] = [
        &[0.14, 0.06, 0.14, 0.06],
        &[-0.06, -0.14, -0.06, -0.14],
        &[0.04, -0.04, 0.04, -0.04],
    ];
    assert_eq!(plan.block_pairs(&tally(&both)), Some(5));
    // The same means from two pairs each: F = 0.02/0.0032 = 6.25 on (2, 3), p = 0.085, which
    // chance gives: taken as no between part, the longest block.
    let few: [&[f64]; 3] = [&[0.14, 0.06], &[-0.06, -0.14], &[0.04, -0.04]];
    assert_eq!(plan.block_pairs(&tally(&few)), Some(300));
    // Two process pairs do not tell the parts apart: no plan yet.
    assert_eq!(plan.block_pairs(&tally(&both[..2])), None);
}
