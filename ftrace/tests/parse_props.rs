//! Property tests of the trace text parsers: no input makes them panic, and whatever they
//! accept is written back by its `Display` (the kernel's and atrace's text format) and parsed
//! again to the same value.

use ftrace::convert::{Atrace, Line, convert, parse_atrace, parse_line, validate};
use proptest::prelude::*;

/// Text made of the pieces trace lines are made of, so that some of it parses.
fn trace_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(" ".to_string()),
        Just("  ".to_string()),
        Just("-".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just(":".to_string()),
        Just(": ".to_string()),
        Just(".".to_string()),
        Just("|".to_string()),
        Just("#".to_string()),
        Just("-------".to_string()),
        Just("tracing_mark_write: ".to_string()),
        "[0-9]{1,12}",
        "[a-z_<>]{1,8}",
        "[BECI]\\|[0-9]{1,5}\\|",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

/// atrace-like marker text: a kind letter and a pid (most of the time), then pieces.
fn atrace_like() -> impl Strategy<Value = String> {
    let head = prop_oneof!["[BECIX]\\|[0-9]{1,11}", "[BECI]\\|?", Just(String::new()),];
    let piece = prop_oneof![
        Just("|".to_string()),
        Just("||".to_string()),
        Just("-".to_string()),
        Just("+".to_string()),
        Just("\n".to_string()),
        Just("\0".to_string()),
        "[0-9]{1,20}",
        "[a-z =]{1,8}",
        any::<char>().prop_map(String::from),
    ];
    (head, prop::collection::vec(piece, 0..8)).prop_map(|(head, pieces)| head + &pieces.concat())
}

/// Event lines as the kernel writes them, from their parts.
fn kernel_line() -> impl Strategy<Value = (String, u32, Option<u32>, u32, u64, String, String)> {
    (
        "[a-zA-Z0-9_:/.<>-][a-zA-Z0-9_:/.<> -]{0,14}[a-zA-Z0-9_:/.<>]|[a-z]",
        any::<u32>(),
        proptest::option::of(any::<u32>()),
        0u32..4096,
        any::<u64>(),
        "[a-z_]{1,20}",
        "[ -~]{0,40}",
    )
}

/// A kernel line with pieces of [`trace_like`] text put in at some places: odd lines, many of
/// which still parse.
fn mutated_line() -> impl Strategy<Value = String> {
    (
        kernel_line(),
        prop::collection::vec((any::<prop::sample::Index>(), trace_like()), 1..4),
    )
        .prop_map(|(parts, inserts)| {
            let (task, tid, tgid, cpu, ts_ns, function, details) = parts;
            let mut text = Line {
                task: &task,
                tid,
                tgid,
                cpu,
                ts_ns,
                function: &function,
                details: &details,
            }
            .to_string();
            for (at, piece) in inserts {
                let bounds: Vec<usize> = (0..=text.len())
                    .filter(|&i| text.is_char_boundary(i))
                    .collect();
                text.insert_str(bounds[at.index(bounds.len())], &piece);
            }
            text
        })
}

proptest! {
    #[test]
    fn mutated_lines_never_panic_and_round_trip(text in mutated_line()) {
        if let Some(line) = parse_line(&text) {
            let shown = line.to_string();
            prop_assert_eq!(parse_line(&shown), Some(line), "shown as {:?}", shown);
        }
    }

    #[test]
    fn parse_line_never_panics_and_round_trips(text in trace_like()) {
        if let Some(line) = parse_line(&text) {
            let shown = line.to_string();
            prop_assert_eq!(parse_line(&shown), Some(line), "shown as {:?}", shown);
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        if let Some(line) = parse_line(&text) {
            let shown = line.to_string();
            prop_assert_eq!(parse_line(&shown), Some(line));
        }
        let record = parse_atrace(&text);
        let shown = record.to_string();
        prop_assert_eq!(parse_atrace(&shown), record);
    }

    #[test]
    fn parse_atrace_round_trips(text in atrace_like()) {
        let record = parse_atrace(&text);
        let shown = record.to_string();
        prop_assert_eq!(parse_atrace(&shown), record, "shown as {:?}", shown);
    }

    #[test]
    fn kernel_lines_parse_to_their_parts(parts in kernel_line()) {
        let (task, tid, tgid, cpu, ts_ns, function, details) = parts;
        let line = Line {
            task: &task,
            tid,
            tgid,
            cpu,
            ts_ns,
            function: &function,
            details: &details,
        };
        let shown = line.to_string();
        prop_assert_eq!(parse_line(&shown), Some(line));
    }

    #[test]
    fn atrace_records_parse_to_their_parts(
        pid in any::<u32>(),
        name in "[^|\n\0]{1,20}",
        value in any::<i64>(),
    ) {
        // A trailing newline or NUL is what a writer may add, not part of the name.
        prop_assume!(!name.ends_with(['\n', '\0']));
        for record in [
            Atrace::Begin { pid, name: &name },
            Atrace::End { pid: Some(pid) },
            Atrace::Counter { pid, name: &name, value },
            Atrace::Instant { pid, name: &name },
        ] {
            let shown = record.to_string();
            prop_assert_eq!(parse_atrace(&shown), record);
        }
    }

    #[test]
    fn convert_and_validate_never_panic(lines in prop::collection::vec(trace_like(), 0..20)) {
        let text = lines.join("\n");
        let conv = convert(&text);
        prop_assert!(conv.lines + conv.unreadable.len() <= text.lines().count());
        let check = validate(&conv.trace);
        prop_assert!(check.slices.iter().all(|s| s.end_us >= s.begin_us || s.end_us.is_nan()));
        prop_assert!(serde_json::to_string(&conv.trace).is_ok());
    }
}
