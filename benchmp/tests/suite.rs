//! `benchmp suite` and `benchmp summary` from outside, on results folders the tests make:
//! what they refuse, and what they say about what they read.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use benchmp::testing::{Bad, Tool, check_bad_inputs, stderr, stdout, temp_dir};

const BIN: &str = env!("CARGO_BIN_EXE_benchmp");
const TOOLS: [&str; 5] = ["bw_mem", "lat_mem_rd", "dhry", "coremark", "dto"];

/// Every tool: `STANDIN_<tool>` says what it does (ok by default); each start is logged to
/// `$STANDIN_LOG` as `TOOL PID` before it does it.
const STANDIN: &str = r#"#!/bin/sh
tool=${0##*/}
json=""
for a in "$@"; do case $a in --json=*) json=${a#--json=} ;; esac; done
eval "how=\${STANDIN_$tool:-ok}"
[ -z "${STANDIN_LOG:-}" ] || echo "$tool $$" >> "$STANDIN_LOG"
report() {
  [ -z "$json" ] || printf '{"tool":"%s","figures":[{"name":"score","cpu":0,"cluster":0,"unit":"DMIPS","better":"higher","value":100.0,"samples":[100.0]}],"quality":{"verdict":{"noisy":%s,"reasons":["child 0 on CPU 0 lost 9%% of its run to other tasks"]}}}\n' "$tool" "$1" > "$json"
}
case $how in
  ok) report false; echo "$tool result" ;;
  noisy) report true; echo "$tool result" ;;
  noisy-fail) report true; echo "$tool: the run was noisy" >&2; exit 1 ;;
  fail) echo "$tool: it broke" >&2; exit 1 ;;
  hang) exec sleep 1000 ;;
  hang-bg) sleep 1000 & echo "bg $!" >> "$STANDIN_LOG"; exec sleep 1000 ;;
  fill) head -c 1048576 /dev/zero > "$json"; exit 1 ;;
esac
"#;

fn benchmp() -> Tool {
    Tool::new("benchmp", BIN)
}

/// A folder of stand-in tools.
fn standins(test: &str) -> PathBuf {
    let d = temp_dir("benchmp-suite-bin", test);
    for t in TOOLS {
        let p = d.join(t);
        std::fs::write(&p, STANDIN).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn what_every_entry_would_refuse_is_refused_before_anything_runs() {
    let bin = standins("refusals");
    let root = temp_dir("benchmp-suite", "refusals");
    let out = root.join("o");
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    let absent = (online + 3).to_string();
    let listed = format!("0,{absent}");
    let args = |extra: &[&str]| -> Vec<String> {
        [
            "suite",
            "--quick",
            "--only",
            "dhry",
            "--bin-dir",
            s(&bin),
            "--out",
            s(&out),
        ]
        .iter()
        .chain(extra)
        .map(|a| a.to_string())
        .collect()
    };
    let plain = args(&[]);
    let plain = strs(&plain);
    let absent_cpu = args(&["--cpus", &absent]);
    let listed_cpus = args(&["--cpus", &listed]);
    check_bad_inputs(
        &benchmp(),
        &[
            Bad::args(&strs(&absent_cpu), &format!("CPU {absent}")),
            Bad::args(&strs(&listed_cpus), &format!("CPU {absent}")),
            Bad::env(&plain, &[("BENCHMP_AB_FDS", "7,8")], "BENCHMP_AB_FDS"),
            Bad::env(&plain, &[("LMBENCH_SCHED", "NOPE")], "LMBENCH_SCHED"),
            Bad::env(&plain, &[("ENOUGH", "0")], "ENOUGH"),
            Bad::env(&plain, &[("LOOP_O", "x")], "LOOP_O"),
            Bad::env(
                &plain,
                &[("BENCHMP_SYSFS_ROOT", "/nonexist")],
                "BENCHMP_SYSFS_ROOT",
            ),
        ],
    );
    assert!(!out.exists(), "a refused suite made its folder");
    // A CPU this process may not use.
    if online < 2 {
        benchmp::testing::skip(
            "what_every_entry_would_refuse_is_refused_before_anything_runs",
            "one CPU: no CPU outside the allowed set",
        );
    } else {
        let mut c = Command::new("taskset");
        c.args(["-c", "0", BIN]).args(args(&["--cpus", "1"]));
        for (k, v) in benchmp::testing::FIXED_CALIBRATION {
            c.env(k, v);
        }
        for k in benchmp::testing::CLEARED {
            c.env_remove(k);
        }
        match c.stdin(Stdio::null()).output() {
            Ok(o) => {
                assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
                assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
                assert!(stderr(&o).contains("allowed"), "{}", stderr(&o));
                assert!(!out.exists());
            }
            Err(e) => {
                benchmp::testing::skip(
                    "what_every_entry_would_refuse_is_refused_before_anything_runs",
                    &format!("no taskset here ({e})"),
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&bin);
}

/// A results folder with `status` as its status.tsv.
fn folder(root: &Path, name: &str, status: &str) -> PathBuf {
    let d = root.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("status.tsv"), status).unwrap();
    d
}

const HEADER: &str = "label\ttool\texit\tseconds\n";

#[test]
fn summary_refuses_what_it_cannot_read_in_one_line() {
    let root = temp_dir("benchmp-summary", "refusals");
    let fifo = |p: &Path| {
        nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    };
    let fifo_status = root.join("fifo-status");
    std::fs::create_dir_all(&fifo_status).unwrap();
    fifo(&fifo_status.join("status.tsv"));
    let ok_row = format!("{HEADER}dhry-P1\tdhry\t0\t1.0\n");
    let fifo_report = folder(&root, "fifo-report", &ok_row);
    fifo(&fifo_report.join("dhry-P1.json"));
    let zero = folder(&root, "zero", &ok_row);
    std::os::unix::fs::symlink("/dev/zero", zero.join("dhry-P1.json")).unwrap();
    let failed = folder(
        &root,
        "fifo-err",
        &format!("{HEADER}dhry-P1\tdhry\t1\t1.0\n"),
    );
    fifo(&failed.join("dhry-P1.err"));
    let folder_status = root.join("folder-status");
    std::fs::create_dir_all(folder_status.join("status.tsv")).unwrap();
    let binary = root.join("binary");
    std::fs::create_dir_all(&binary).unwrap();
    std::fs::write(
        binary.join("status.tsv"),
        b"label\ttool\texit\tseconds\n\xff\xfe\n",
    )
    .unwrap();
    let word = folder(
        &root,
        "word",
        &format!("{HEADER}dhry-P1\tdhry\tzero\t1.0\n"),
    );
    let short = folder(
        &root,
        "short",
        &format!("{HEADER}dhry-P1\tdhry\t0\t1.0\ncoremark-P1\tcoremark\n"),
    );
    let file = root.join("file");
    std::fs::write(&file, "x").unwrap();
    let missing = root.join("missing");
    let summary = |d: &Path| vec!["summary".to_string(), s(d).to_string()];
    let table: Vec<Bad> = [
        (summary(&fifo_status), "status.tsv: is a FIFO"),
        (summary(&fifo_report), "dhry-P1.json: is a FIFO"),
        (summary(&zero), "dhry-P1.json: is a character device"),
        (summary(&failed), "dhry-P1.err: is a FIFO"),
        (summary(&folder_status), "status.tsv: is a folder"),
        (summary(&binary), "status.tsv: is not UTF-8"),
        (summary(&word), "status.tsv row 2"),
        (summary(&short), "status.tsv row 3"),
        (summary(&file), "is not a folder"),
        (summary(&missing), "no such file or folder"),
    ]
    .into_iter()
    .map(|(args, says)| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Bad::args(&args, says)
    })
    .collect();
    check_bad_inputs(&benchmp(), &table);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn summary_says_what_is_wrong_with_a_report() {
    let root = temp_dir("benchmp-summary", "reports");
    let rows = format!("{HEADER}dhry-P1\tdhry\t0\t1.0\ncoremark-P1\tcoremark\t0\t1.0\n");
    let d = folder(&root, "old", &rows);
    // Reports from before `figures` existed: none, or null.
    std::fs::write(d.join("dhry-P1.json"), r#"{"tool":"dhry","figures":null}"#).unwrap();
    std::fs::write(d.join("coremark-P1.json"), r#"{"tool":"coremark"}"#).unwrap();
    let o = benchmp().ok(&["summary", s(&d)]);
    let text = stdout(&o);
    for label in ["dhry-P1", "coremark-P1"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_default();
        assert!(
            line.contains(&format!("{label}.json has no figures"))
                && line.contains("older socbench"),
            "{text}"
        );
    }
    // A report or a folder this user cannot read is named, never "not found".
    let nobody = as_nobody();
    let unreadable = folder(&root, "unreadable", &rows);
    std::fs::write(unreadable.join("dhry-P1.json"), "{}").unwrap();
    std::fs::set_permissions(
        unreadable.join("dhry-P1.json"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let closed = folder(&root, "closed", &rows);
    for d in [&root, &unreadable] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o000)).unwrap();
    match nobody {
        None => {
            benchmp::testing::skip(
                "summary_says_what_is_wrong_with_a_report",
                "root without setpriv: every file is readable",
            );
        }
        Some(prefix) => {
            for (d, says) in [
                (
                    &unreadable,
                    "dhry-P1.json: cannot be read (permission denied)",
                ),
                (&closed, "cannot be read (permission denied)"),
            ] {
                let mut c = Command::new(&prefix[0]);
                c.args(&prefix[1..]).args([BIN, "summary", s(d)]);
                let o = c.stdin(Stdio::null()).output().unwrap();
                let err = stderr(&o);
                assert_eq!(o.status.code(), Some(2), "{err}");
                assert_eq!(err.lines().count(), 1, "{err}");
                assert!(err.contains(says) && !err.contains("not found"), "{err}");
            }
        }
    }
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o755)).unwrap();
    let _ = std::fs::remove_dir_all(&root);
}

/// How to run a command as a user without root's power to read anything: nothing to add
/// when this is not root, `setpriv` to user nobody when it is (`None`: no way here).
fn as_nobody() -> Option<Vec<String>> {
    if !nix::unistd::geteuid().is_root() {
        return Some(vec!["env".into()]);
    }
    let setpriv = which("setpriv")?;
    Some(vec![
        setpriv,
        "--reuid=65534".into(),
        "--regid=65534".into(),
        "--clear-groups".into(),
    ])
}

fn which(program: &str) -> Option<String> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
            .map(|p| p.display().to_string())
    })
}
