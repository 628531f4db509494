//! The `ftrace` binary without tracefs: help, bad input, convert, and mark into a file.
//!
//! Every bad invocation is checked against the same contract: the documented exit status, one
//! line on stderr starting `ftrace: `, nothing on stdout, no panic, and no hang.

use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

fn ftrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ftrace"))
        .args(args)
        .output()
        .expect("run ftrace")
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ftrace-cli-{}-{name}", std::process::id()))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_lists_the_subcommands() {
    let out = ftrace(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for cmd in ["record", "convert", "mark", "bench-marker"] {
        assert!(text.contains(cmd), "{cmd} missing from help: {text}");
    }
}

#[test]
fn convert_writes_valid_json() {
    let out_path = temp("tgid.json");
    let out = ftrace(&[
        "convert",
        "--json",
        &fixture("tgid.txt"),
        out_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("8 slices"), "{}", stderr(&out));
    let text = std::fs::read_to_string(&out_path).unwrap();
    std::fs::remove_file(&out_path).unwrap();
    let check = ftrace::convert::validate_json(&text).unwrap();
    assert!(check.is_ok());
    assert_eq!(check.slices.len(), 8);
}

#[test]
fn convert_reports_a_broken_trace_with_status_1() {
    let out_path = temp("broken.json");
    let out = ftrace(&[
        "convert",
        "--json",
        &fixture("broken.txt"),
        out_path.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&out_path);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("has no E"), "{}", stderr(&out));
}

/// One bad invocation and what ftrace must answer.
#[derive(Debug)]
struct Case {
    args: Vec<OsString>,
    env: Vec<(&'static str, Option<OsString>)>,
    stdout: Option<PathBuf>,
    code: i32,
    says: String,
}

/// `ftrace ARGS` must exit with `code` and a message containing `says`.
fn case(args: &[&str], code: i32, says: &str) -> Case {
    Case {
        args: args.iter().map(OsString::from).collect(),
        env: Vec::new(),
        stdout: None,
        code,
        says: says.to_string(),
    }
}

impl Case {
    /// The same with raw (possibly invalid UTF-8) arguments.
    fn raw(args: Vec<OsString>, code: i32, says: &str) -> Case {
        Case {
            args,
            ..case(&[], code, says)
        }
    }

    /// Runs with `key` set to `value` (or removed when `None`).
    fn env(mut self, key: &'static str, value: Option<&str>) -> Case {
        self.env.push((key, value.map(OsString::from)));
        self
    }

    /// Runs with stdout on `path`.
    fn stdout(mut self, path: &str) -> Case {
        self.stdout = Some(PathBuf::from(path));
        self
    }
}

/// Longest a bad invocation may take before it counts as hung (a guard, not a timing check).
const HANG_GUARD: Duration = Duration::from_secs(30);

/// Runs the case with stdin empty, killing it and failing when it outlives [`HANG_GUARD`].
fn run_guarded(case: &Case) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ftrace"));
    cmd.args(&case.args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    for (key, value) in &case.env {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    match &case.stdout {
        Some(path) => cmd.stdout(File::options().write(true).open(path).unwrap()),
        None => cmd.stdout(Stdio::piped()),
    };
    let mut child = cmd.spawn().expect("spawn ftrace");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > HANG_GUARD {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{case:?}: still running after {HANG_GUARD:?}, killed");
        }
        thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// The error contract: the status asked, one line on stderr starting `ftrace: ` and saying
/// what it should, no raw control character, no panic, nothing on stdout.
fn check(case: &Case) {
    let out = run_guarded(case);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(case.code), "{case:?}: {err}");
    assert!(err.starts_with("ftrace: "), "{case:?}: {err}");
    assert!(err.ends_with('\n'), "{case:?}: {err:?}");
    assert_eq!(err.lines().count(), 1, "{case:?}: {err}");
    assert!(
        !err.trim_end().contains(char::is_control),
        "{case:?}: {err:?}"
    );
    assert!(!err.contains("panicked"), "{case:?}: {err}");
    assert!(err.contains(&case.says), "{case:?}: {err}");
    assert!(
        out.stdout.is_empty(),
        "{case:?}: stdout {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn usage_errors_are_one_line_and_status_2() {
    let cases = [
        case(&[], 2, "a subcommand is missing, one of: record, convert"),
        case(
            &["bogus"],
            2,
            "unrecognized subcommand 'bogus' (see --help)",
        ),
        case(&["bogus"], 2, "'bogus'").env("RUST_BACKTRACE", Some("full")),
        case(&["--bogus"], 2, "unexpected argument '--bogus'"),
        case(
            &["record"],
            2,
            "required arguments were not provided: <COMMAND>",
        ),
        case(&["record", "--"], 2, "<COMMAND>"),
        case(
            &["record", "-o"],
            2,
            "a value is required for '--output <FILE>'",
        ),
        case(&["convert", "--json", "in"], 2, "not provided: <OUTPUT>"),
        case(&["convert", "--json"], 2, "not provided: <INPUT> <OUTPUT>"),
        case(
            &["convert", "--json", "a", "b", "c"],
            2,
            "unexpected argument 'c'",
        ),
        case(
            &["mark", "--children", "x", "begin", "a"],
            2,
            "invalid value 'x'",
        ),
        case(
            &["bench-marker", "--calls", "lots"],
            2,
            "invalid value 'lots'",
        ),
        case(&["bogus\u{1b}[2J\nx"], 2, "'bogus\\u{1b}[2J\\nx'"),
        Case::raw(
            vec![
                "record".into(),
                "--event".into(),
                OsString::from_vec(vec![0xff]),
            ],
            2,
            "invalid UTF-8",
        ),
    ];
    for case in &cases {
        check(case);
    }
}

#[test]
fn nonsensical_option_values_are_refused_while_parsing() {
    let run = ["--", "true"];
    let record = |opts: &[&str]| -> Vec<String> {
        let mut args = vec!["record".to_string(), "-o".into(), "/dev/null".into()];
        args.extend(opts.iter().chain(&run).map(|s| s.to_string()));
        args
    };
    let cases = [
        (
            record(&["--buffer-kb", "0"]),
            "'0' for '--buffer-kb <N>': a ring buffer of 0 KiB holds no events",
        ),
        (record(&["--buffer-kb", "-5"]), "unexpected argument '-5'"),
        (record(&["--buffer-kb", "1.5"]), "not a whole number of KiB"),
        (
            record(&["--buffer-kb", "99999999999999999999"]),
            "not a whole number of KiB",
        ),
        (
            record(&["--buffer-kb", "18014398509481984"]),
            "more KiB than this machine can address",
        ),
        (record(&["--event", "sched"]), "expected GROUP/NAME"),
        (record(&["--event", "../../x"]), "expected GROUP/NAME"),
        (record(&["--event", "sched/a b"]), "expected GROUP/NAME"),
        (record(&["--clock", ""]), "expected a clock name"),
        (record(&["--clock", "x\ny"]), "'x\\ny'"),
        (
            vec!["bench-marker".into(), "--calls".into(), "0".into()],
            "must be at least 1",
        ),
        (
            vec!["bench-marker".into(), "--rounds".into(), "0".into()],
            "must be at least 1",
        ),
        (vec!["mark".into()], "not provided: <OP>"),
        (vec!["mark".into(), "--json".into()], "not provided: <OP>"),
    ];
    for (args, says) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        check(&case(&args, 2, says));
    }
}

/// A scratch folder of this test process, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = temp(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn convert_refuses_bad_input_and_outputs() {
    let dir = Scratch::new("convert");
    let trace = dir.path("trace.txt");
    let original = std::fs::read(fixture("tgid.txt")).unwrap();
    std::fs::write(&trace, &original).unwrap();
    std::os::unix::fs::symlink(&trace, dir.path("link.txt")).unwrap();
    std::fs::hard_link(&trace, dir.path("hard.txt")).unwrap();
    let garbage = dir.path("garbage");
    std::fs::write(&garbage, b"\x1b[31mred\x07\xff\xfe\r more\n").unwrap();
    let long = dir.path("long");
    std::fs::write(&long, "x".repeat(100_000)).unwrap();
    let empty = dir.path("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let header = dir.path("header.txt");
    std::fs::write(
        &header,
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:2\n",
    )
    .unwrap();
    let out = dir.path("out.json");
    let folder = dir.path("folder");
    std::fs::create_dir(&folder).unwrap();
    let spelled = format!("{}/./trace.txt", dir.0.display());

    let json = |input: &str, output: &str| {
        vec!["convert", "--json"]
            .into_iter()
            .chain([input, output])
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let cases = [
        (
            json(&garbage, &out),
            2,
            r#"not an ftrace text trace line: "\u{1b}[31mred\u{7}\xff\xfe\r more""#,
        ),
        (json(&long, &out), 2, &format!("\"{}\"...", "x".repeat(80))),
        (json(&trace, &trace), 2, "is the input"),
        (json(&trace, &spelled), 2, "is the input"),
        (json(&trace, &dir.path("link.txt")), 2, "is the input"),
        (json(&trace, &dir.path("hard.txt")), 2, "is the input"),
        (json(&dir.path("link.txt"), &trace), 2, "is the input"),
        (json(&empty, &out), 1, "the trace has no events"),
        (json(&header, &out), 1, "the trace has no events"),
        (json(&folder, &out), 2, "is a directory"),
        (json("/dev/zero", &out), 2, "is a device"),
        (json(&trace, &folder), 2, "cannot write: Is a directory"),
        (
            json(&trace, "/nonexistent/dir/out.json"),
            2,
            "cannot write: No such file",
        ),
        // A full device is a full disk: a resource, not bad input (1, naming it).
        (
            json(&trace, "/dev/full"),
            1,
            "/dev/full: cannot write: No space left on device (os error 28) (the file system is full)",
        ),
    ];
    for (args, code, says) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        check(&case(&args, *code, says));
        assert_eq!(
            std::fs::read(&trace).unwrap(),
            original,
            "{args:?} changed the input"
        );
        assert!(!Path::new(&out).exists(), "{args:?} wrote an output");
    }
    let long_message = run_guarded(&case(
        &json(&long, &out)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        2,
        "",
    ));
    assert!(long_message.stderr.len() < 300, "{}", stderr(&long_message));
}

/// A conversion whose write fails part-way (a file-size limit of 512 bytes, as a full disk
/// would) leaves the earlier output byte for byte, and no partial copy beside it.
#[test]
fn convert_that_cannot_finish_its_output_keeps_the_earlier_one() {
    let dir = Scratch::new("fsize");
    let out = dir.path("out.json");
    std::fs::write(&out, "earlier\n").unwrap();
    // SIGXFSZ ignored (and inherited through exec), so a write past the limit fails (EFBIG)
    // instead of killing ftrace.
    let script = r#"trap "" XFSZ; ulimit -f 1; exec "$0" convert --json "$1" "$2""#;
    let o = Command::new("sh")
        .args([
            "-c",
            script,
            env!("CARGO_BIN_EXE_ftrace"),
            &fixture("tgid.txt"),
            &out,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&o);
    // The file-size limit is a resource, not bad input: 1, naming it.
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("ulimit -f"), "{err}");
    assert!(
        err.starts_with("ftrace: ") && err.contains("out.json: cannot write"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "earlier\n");
    let names: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["out.json"], "a partial copy was left");
}

/// `record` checks its command and output before looking for tracefs, so these fail the same
/// way on any machine and touch nothing; `mark` fails on an output it cannot write.
#[test]
fn record_and_mark_refuse_bad_commands_outputs_and_environments() {
    let dir = Scratch::new("record");
    let created = dir.path("created.txt");
    let marker = dir.path("marker.txt");
    std::fs::write(&marker, "").unwrap();
    let folder = dir.path("folder");
    std::fs::create_dir(&folder).unwrap();
    let cases = [
        case(
            &["record", "-o", &created, "--", "/nonexistent/program"],
            2,
            "cannot run /nonexistent/program: no executable file there",
        ),
        case(
            &[
                "record",
                "-o",
                &created,
                "--",
                "no-such-program-of-socbench",
            ],
            2,
            "no executable file of that name in PATH",
        ),
        case(
            &["record", "-o", &created, "--", "/etc/passwd"],
            2,
            "cannot run /etc/passwd",
        ),
        case(
            &["record", "-o", &created, "--", &folder],
            2,
            "no executable file there",
        ),
        case(
            &["record", "-o", &created, "--", "\u{1b}[2J"],
            2,
            "cannot run \\u{1b}[2J",
        ),
        case(
            &["record", "-o", &created, "--", "true"],
            2,
            "cannot run true",
        )
        .env("PATH", Some("/nonexistent")),
        case(
            &["record", "-o", &created, "--", "true"],
            2,
            "cannot run true",
        )
        .env("PATH", Some("")),
        case(
            &["record", "-o", &folder, "--", "true"],
            2,
            "folder: cannot write: Is a directory",
        ),
        case(
            &["record", "-o", "/nonexistent/dir/trace.txt", "--", "true"],
            2,
            "cannot write: No such file",
        ),
        case(
            &["mark", "--marker", "/dev/full", "begin", "x"],
            1,
            "/dev/full: cannot write: No space left",
        ),
        case(
            &["mark", "--marker", "/dev/full", "--children", "2", "end"],
            1,
            "No space left",
        ),
        case(
            &["mark", "--marker", &folder, "begin", "x"],
            2,
            "cannot open for writing: Is a directory",
        ),
        case(
            &["mark", "--json", "--marker", &marker, "begin", "x"],
            1,
            "stdout: cannot write the result: No space left",
        )
        .stdout("/dev/full"),
    ];
    for case in &cases {
        check(case);
        assert!(!Path::new(&created).exists(), "{case:?} left {created}");
    }
}

#[test]
fn help_and_version_print_on_stdout_with_status_0() {
    for args in [
        &["--help"][..],
        &["--version"],
        &["record", "--help"],
        &["help", "convert"],
    ] {
        let out = ftrace(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(out.stderr.is_empty(), "{args:?}: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("ftrace"), "{args:?}: {text}");
    }
}

#[test]
fn bad_input_is_status_2_with_one_line() {
    let out_path = temp("bad.json");
    let out_path = out_path.to_str().unwrap();
    let cases = [
        case(
            &["convert", &fixture("tgid.txt"), out_path],
            2,
            "choose the output format",
        ),
        case(
            &["convert", "--json", "/nonexistent/trace.txt", out_path],
            2,
            "/nonexistent/trace.txt: cannot read",
        ),
        case(
            &[
                "convert",
                "--json",
                concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
                out_path,
            ],
            2,
            "not an ftrace text trace line",
        ),
        case(&["mark", "jump"], 2, "unknown operation \"jump\""),
        case(
            &["mark", "--marker", "/nonexistent/dir/marker", "begin", "x"],
            2,
            "/nonexistent/dir/marker: cannot open for writing",
        ),
    ];
    for case in &cases {
        check(case);
    }
    let _ = std::fs::remove_file(out_path);
}

#[test]
fn mark_writes_a_sequence_into_a_file() {
    let path = temp("marker.txt");
    std::fs::write(&path, "").unwrap();
    let out = ftrace(&[
        "mark",
        "--json",
        "--marker",
        path.to_str().unwrap(),
        "begin",
        "phase one",
        "counter",
        "n",
        "-3",
        "instant",
        "tick",
        "end",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ids: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pid = ids["pid"].as_u64().unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        written,
        format!("B|{pid}|phase oneC|{pid}|n|-3I|{pid}|tickE|{pid}")
    );
}
