//! The converter and validator on handwritten fixture traces.

use ftrace::convert::{CPU_TRACKS_PID, ChromeTrace, Slice, convert, validate, validate_json};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn names(slices: &[&Slice]) -> Vec<String> {
    slices.iter().map(|s| s.name.clone()).collect()
}

#[test]
fn trace_with_tgid_column() {
    let conv = convert(&fixture("tgid.txt"));
    assert_eq!((conv.lines, conv.markers), (23, 19));
    assert!(conv.unreadable.is_empty(), "{:?}", conv.unreadable);

    // What is written is what is validated.
    let json = serde_json::to_string(&conv.trace).unwrap();
    let check = validate_json(&json).unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
    assert_eq!(check.slices.len(), 8);

    let of = |pid: u32| -> Vec<&Slice> { check.slices.iter().filter(|s| s.pid == pid).collect() };
    assert_eq!(
        names(&of(2000)),
        ["calibrate", "benchmark size=8388608 what=rd"]
    );
    for (child, pid) in [(0, 2001), (1, 2002)] {
        let slices = of(pid);
        assert_eq!(
            names(&slices),
            [
                format!("child child={child} cpu={child}"),
                format!("warmup child={child} cpu={child}"),
                format!("rep child={child} cpu={child} n=4"),
            ]
        );
        assert_eq!(
            slices.iter().map(|s| s.depth).collect::<Vec<_>>(),
            [0, 1, 1]
        );
        for s in &slices {
            assert_eq!(s.tid, pid);
            // The CPU in the label is the CPU the marker was written on.
            assert_eq!(s.arg_i64("cpu"), Some(child));
            assert_eq!(s.arg_i64("on_cpu"), Some(child));
        }
        // rep lasted 100 ms.
        assert!(
            (slices[2].dur_us() - 100_000.0).abs() < 0.01,
            "{}",
            slices[2].dur_us()
        );
        assert!(slices[2].begin_us >= slices[0].begin_us && slices[2].end_us <= slices[0].end_us);
    }

    let events = &conv.trace.trace_events;
    let counters: Vec<_> = events.iter().filter(|e| e.ph == "C").collect();
    assert_eq!(counters.len(), 3);
    assert_eq!(counters[0].name, "cpu1 freq");
    assert_eq!(counters[0].pid, CPU_TRACKS_PID);
    assert_eq!(counters[1].name, "mb_per_s");
    assert_eq!(
        (
            counters[1].pid,
            counters[1].args.as_ref().unwrap()["value"].as_i64()
        ),
        (2001, Some(11500))
    );

    let instants: Vec<_> = events.iter().filter(|e| e.ph == "i").collect();
    assert_eq!(instants.len(), 1);
    assert_eq!(
        (instants[0].name.as_str(), instants[0].pid),
        ("children done", 2000)
    );

    // CPU 0 ran 2001 from its switch-in until the switch back to 2000, then 2000 to the end.
    let running: Vec<_> = events.iter().filter(|e| e.ph == "X").collect();
    assert_eq!(running.len(), 2);
    assert_eq!(running[0].name, "bw_mem 2001");
    assert!((running[0].dur.unwrap() - 150_200.0).abs() < 1e-6);
    assert_eq!(running[1].name, "bw_mem 2000");

    // Tracks are named.
    let meta: Vec<_> = events
        .iter()
        .filter(|e| e.ph == "M")
        .map(|e| {
            (
                e.name.as_str(),
                e.pid,
                e.args
                    .as_ref()
                    .unwrap()
                    .get("name")
                    .and_then(|v| v.as_str()),
            )
        })
        .collect();
    assert!(
        meta.contains(&("process_name", 2001, Some("bw_mem 2001"))),
        "{meta:?}"
    );
    assert!(
        meta.contains(&("process_name", CPU_TRACKS_PID, Some("CPUs"))),
        "{meta:?}"
    );
}

#[test]
fn trace_without_tgid_column_with_threads_and_print_events() {
    let conv = convert(&fixture("no_tgid.txt"));
    assert_eq!((conv.lines, conv.markers), (8, 8));
    let check = validate(&conv.trace);
    assert!(check.is_ok(), "{:?}", check.problems);
    let tracks: Vec<_> = check
        .slices
        .iter()
        .map(|s| (s.pid, s.tid, s.name.as_str(), s.depth))
        .collect();
    assert_eq!(
        tracks,
        [
            (700, 700, "rep child=0 cpu=2 n=1", 0),
            // A thread of 700 has its own track.
            (700, 701, "worker", 0),
            (650, 650, "script phase", 0),
        ]
    );
    // Text that is not an atrace record shows as an instant.
    assert!(
        conv.trace
            .trace_events
            .iter()
            .any(|e| e.ph == "i" && e.name == "free text from echo")
    );
}

#[test]
fn broken_trace_fails_validation() {
    let conv = convert(&fixture("broken.txt"));
    let check = validate(&conv.trace);
    assert_eq!(check.problems.len(), 2, "{:?}", check.problems);
    assert!(
        check
            .problems
            .iter()
            .any(|p| p.contains("E without an open B"))
    );
    assert!(check.problems.iter().any(|p| p.contains("has no E")));
    assert_eq!(check.slices.len(), 1);
}

#[test]
fn output_has_the_chrome_trace_shape() {
    let conv = convert(&fixture("tgid.txt"));
    let value: serde_json::Value = serde_json::to_value(&conv.trace).unwrap();
    assert_eq!(value["displayTimeUnit"], "ns");
    let events = value["traceEvents"].as_array().unwrap();
    for ev in events {
        for key in ["name", "ph", "ts", "pid", "tid"] {
            assert!(ev.get(key).is_some(), "{key} missing in {ev}");
        }
    }
    // Microseconds: 100.250010 s.
    assert!(
        events
            .iter()
            .any(|e| e["ts"].as_f64() == Some(100_250_010.0))
    );
    let back: ChromeTrace = serde_json::from_value(value).unwrap();
    assert_eq!(back, conv.trace);
}
