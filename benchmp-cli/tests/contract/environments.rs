//! The contract's environment axis: every command the binaries describe also runs in each
//! hostile environment of [`ENVIRONMENTS`] (resource limits, closed standard streams, a FIFO
//! or a link to `/dev/zero` in place of each file it reads by default, links planted where
//! it writes temporary files, a power source that breaks mid-run, one allowed CPU, SIGKILL
//! mid-run followed by a second run that must find and restore what the first changed).
//!
//! An environment is a row of the table: how it changes one run of a command ([`Setting`],
//! or a runner of its own), the statuses the run may end with given the quick example's own,
//! and what else the run must show. A new environment is a new row; a new command is reached
//! without editing anything. A run that breaks the contract for a reason another change
//! addresses is listed in [`PENDING`] with its case, and skipped (said with `--nocapture`)
//! until that change removes its line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use benchmp::sys::process::Confinement;
use nix::sys::resource::Resource;

use super::{Example, Ran, Scene, Setting, Streams};

/// One command as the environments see it.
#[derive(Debug, Clone)]
pub struct Case {
    /// The binary.
    pub binary: String,
    /// The command's path (`["ab"]`, `[]` for a binary without subcommands).
    pub path: Vec<String>,
    /// How to run it.
    pub example: Example,
    /// The long names of its options.
    pub options: Vec<String>,
    /// The status its quick example ended with as it is.
    pub base: i32,
}

impl Case {
    /// `binary command`, for messages and [`PENDING`].
    pub fn name(&self) -> String {
        std::iter::once(self.binary.as_str())
            .chain(self.path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn takes(&self, option: &str) -> bool {
        self.options.iter().any(|o| o == option)
    }

    fn quick(&self, scene: &Scene, tmp: &Path) -> Vec<String> {
        scene.places.fill(&self.example.quick, tmp)
    }
}

/// One run an environment makes of a command: its arguments, setting and streams.
pub type Run = (Vec<String>, Setting, Streams);

/// How one environment runs a command: a [`Setting`] over the quick example, or a runner of
/// its own (for runs in several steps).
pub enum How {
    /// The run in `tmp` (of job number `usize`); `None` where the environment does not apply
    /// to the command.
    Once(fn(&Scene, &Case, &Path, usize) -> Option<Run>),
    /// Runs the command as it needs and gives the problems found.
    Own(fn(&Scene, &Case, &Path, usize) -> Vec<String>),
}

/// A hostile environment.
pub struct Environment {
    /// Its name, as [`PENDING`] and the messages give it.
    pub name: &'static str,
    /// How a command runs in it.
    pub how: How,
    /// The statuses a run may end with, given the quick example's own.
    pub codes: fn(i32) -> Vec<i32>,
    /// What else a run must show (a problem when it does not).
    pub check: fn(&Case, &Ran, &Path) -> Option<String>,
}

/// Runs that break the contract for a reason another change addresses: (command, environment,
/// the case). Each is skipped, and said with `--nocapture`; remove its line with the
/// change that fixes it.
pub const PENDING: &[(&str, &str, &str)] = &[];

fn same_or_failed(base: i32) -> Vec<i32> {
    vec![base, 1]
}

fn same(base: i32) -> Vec<i32> {
    vec![base]
}

fn failed(_: i32) -> Vec<i32> {
    vec![1]
}

fn any_status(_: i32) -> Vec<i32> {
    vec![0, 1, 2, 3]
}

fn nothing_more(_: &Case, _: &Ran, _: &Path) -> Option<String> {
    None
}

/// A run that failed where the quick example did not must say which limit it met.
fn names(ran: &Ran, case: &Case, limit: &str) -> Option<String> {
    (ran.code == Some(1) && case.base != 1 && !ran.err_text().contains(limit)).then(|| {
        format!(
            "exit 1 without naming the limit ({limit}): {}",
            super::head(&ran.err_text())
        )
    })
}

/// The setting of a run held to `limit`.
fn limited(limit: Resource, value: u64) -> Setting {
    Setting {
        confine: Some(Confinement {
            limits: vec![(limit, value)],
            ..Confinement::default()
        }),
        ..Setting::default()
    }
}

/// The calibration done for real (no fixed values), its cache in `tmp/cache`.
fn own_calibration(tmp: &Path) -> Setting {
    let cache = tmp.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    Setting {
        unset: vec!["ENOUGH", "TIMING_O", "LOOP_O", "BENCHMP_CALIBRATION"],
        set: vec![("BENCHMP_CACHE_DIR".into(), cache.display().to_string())],
        ..Setting::default()
    }
}

/// The user id the `ulimit -u` runs take (root ignores that limit): one per job, so one
/// job's processes never count against another's.
fn user_for(job: usize) -> u32 {
    62_000 + job as u32
}

fn chown_tree(dir: &Path, uid: u32) {
    let id = Some(nix::unistd::Uid::from_raw(uid));
    let gid = Some(nix::unistd::Gid::from_raw(uid));
    let _ = nix::unistd::chown(dir, id, gid);
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            chown_tree(&p, uid);
        } else {
            let _ = nix::unistd::fchownat(
                nix::fcntl::AT_FDCWD,
                &p,
                id,
                gid,
                nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
            );
        }
    }
}

/// The meter of the power environment: three good readings 10 ms apart, then a line that is
/// none, then silence.
const BREAKING_METER: &str = "sh -c 'i=0; while [ $i -lt 3 ]; do echo \"$(date +%s.%N) 2.5\"; sleep 0.01; i=$((i+1)); done; echo garbage; exec sleep 1000'";

/// Every hostile environment.
pub const ENVIRONMENTS: &[Environment] = &[
    Environment {
        name: "ulimit -n 8",
        how: How::Once(|scene, case, tmp, _| {
            Some((
                case.quick(scene, tmp),
                limited(Resource::RLIMIT_NOFILE, 8),
                Streams::Captured,
            ))
        }),
        codes: same_or_failed,
        check: |case, ran, _| names(ran, case, "ulimit -n"),
    },
    Environment {
        name: "ulimit -u 1",
        how: How::Once(|scene, case, tmp, job| {
            let root = nix::unistd::geteuid().is_root();
            let state = tmp.join("state");
            std::fs::create_dir_all(&state).unwrap();
            let user = root.then(|| user_for(job));
            if let Some(uid) = user {
                chown_tree(tmp, uid);
            }
            let setting = Setting {
                set: vec![("SOCBENCH_STATE_DIR".into(), state.display().to_string())],
                confine: Some(Confinement {
                    limits: vec![(Resource::RLIMIT_NPROC, 1)],
                    user,
                    ..Confinement::default()
                }),
                ..Setting::default()
            };
            Some((case.quick(scene, tmp), setting, Streams::Captured))
        }),
        // A run as another user than root may also be refused for that alone (a capture).
        codes: |base| vec![base, 1, 2],
        check: |case, ran, _| {
            if ran.code == Some(2) && case.base != 2 && !ran.err_text().contains("root") {
                return Some(format!(
                    "refused (2) for something else than not being root: {}",
                    super::head(&ran.err_text())
                ));
            }
            names(ran, case, "ulimit -u")
        },
    },
    Environment {
        name: "ulimit -f 1",
        how: How::Once(|scene, case, tmp, _| {
            Some((
                case.quick(scene, tmp),
                limited(Resource::RLIMIT_FSIZE, 1024),
                Streams::Piped,
            ))
        }),
        codes: same_or_failed,
        check: |case, ran, _| names(ran, case, "ulimit -f"),
    },
    Environment {
        name: "ulimit -v 256 MiB",
        how: How::Once(|scene, case, tmp, _| {
            Some((
                case.quick(scene, tmp),
                limited(Resource::RLIMIT_AS, 256 << 20),
                Streams::Captured,
            ))
        }),
        codes: same_or_failed,
        check: |case, ran, _| names(ran, case, "ulimit -v"),
    },
    Environment {
        name: "stdin closed",
        how: How::Once(|scene, case, tmp, _| {
            Some((case.quick(scene, tmp), closed(0), Streams::Captured))
        }),
        codes: same,
        check: nothing_more,
    },
    Environment {
        name: "stdout closed",
        how: How::Once(|scene, case, tmp, _| {
            Some((case.quick(scene, tmp), closed(1), Streams::Captured))
        }),
        codes: failed,
        check: |_, ran, _| {
            (!ran.err_text().contains("stdout is closed")).then(|| {
                format!(
                    "a closed stdout is not said: {}",
                    super::head(&ran.err_text())
                )
            })
        },
    },
    Environment {
        name: "stderr closed",
        how: How::Once(|scene, case, tmp, _| {
            Some((case.quick(scene, tmp), closed(2), Streams::Captured))
        }),
        codes: failed,
        check: nothing_more,
    },
    Environment {
        name: "calibration cache a FIFO",
        how: How::Once(|scene, case, tmp, _| {
            let setting = own_calibration(tmp);
            let cache = tmp.join("cache/calibration.json");
            nix::unistd::mkfifo(&cache, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
            Some((case.quick(scene, tmp), setting, Streams::Captured))
        }),
        codes: same,
        check: |_, _, tmp| {
            use std::os::unix::fs::FileTypeExt;
            let kept = std::fs::symlink_metadata(tmp.join("cache/calibration.json"))
                .is_ok_and(|m| m.file_type().is_fifo());
            (!kept).then(|| "the FIFO in the calibration cache's place was replaced".to_string())
        },
    },
    Environment {
        name: "calibration cache a link to /dev/zero",
        how: How::Once(|scene, case, tmp, _| {
            let setting = own_calibration(tmp);
            std::os::unix::fs::symlink("/dev/zero", tmp.join("cache/calibration.json")).unwrap();
            Some((case.quick(scene, tmp), setting, Streams::Captured))
        }),
        codes: same,
        check: |_, _, tmp| {
            let kept = std::fs::read_link(tmp.join("cache/calibration.json"))
                .is_ok_and(|t| t == Path::new("/dev/zero"));
            (!kept).then(|| "the link in the calibration cache's place was replaced".to_string())
        },
    },
    Environment {
        name: "sysfs tree of FIFOs",
        how: How::Once(|scene, case, tmp, _| {
            Some((
                case.quick(scene, tmp),
                sysfs(&scene.fifo_tree),
                Streams::Captured,
            ))
        }),
        codes: any_status,
        check: nothing_more,
    },
    Environment {
        name: "sysfs tree of links to /dev/zero",
        how: How::Once(|scene, case, tmp, _| {
            Some((
                case.quick(scene, tmp),
                sysfs(&scene.zero_tree),
                Streams::Captured,
            ))
        }),
        codes: any_status,
        check: nothing_more,
    },
    Environment {
        name: "links planted at temporary names",
        how: How::Once(|scene, case, tmp, _| {
            let mut setting = own_calibration(tmp);
            let victim = tmp.join("victim");
            std::fs::write(&victim, "victim").unwrap();
            let args = case.quick(scene, tmp);
            // The names a writer of the program's pid could take: the calibration cache's
            // and those beside each file the run writes in its folder.
            let mut beside: Vec<PathBuf> = vec![tmp.join("cache/calibration.json")];
            for a in &args {
                let path = a.rsplit_once('=').map_or(a.as_str(), |(_, v)| v);
                let p = Path::new(path);
                if p.starts_with(tmp) && p != tmp {
                    beside.push(p.to_path_buf());
                }
            }
            setting.started = Some(Box::new(move |pid| {
                for p in &beside {
                    let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
                        continue;
                    };
                    let name = name.to_string_lossy();
                    let stem = p.with_extension("");
                    let stem = stem.file_name().unwrap_or_default().to_string_lossy();
                    for planted in [format!(".{name}.{pid}.tmp"), format!("{stem}.tmp{pid}")] {
                        let _ = std::os::unix::fs::symlink(&victim, dir.join(planted));
                    }
                }
            }));
            Some((args, setting, Streams::Captured))
        }),
        codes: same,
        check: |_, _, tmp| {
            let victim = std::fs::read_to_string(tmp.join("victim")).unwrap_or_default();
            // The planted links go, so that they are not taken for partial files.
            for p in super::walk_files(tmp) {
                if p.is_symlink() && std::fs::read_link(&p).is_ok_and(|t| t.ends_with("victim")) {
                    let _ = std::fs::remove_file(&p);
                }
            }
            (victim != "victim").then(|| "a file was written through a planted link".to_string())
        },
    },
    Environment {
        name: "a power meter that breaks mid-run",
        how: How::Once(|scene, case, tmp, _| {
            if !case.takes("power-cmd") {
                return None;
            }
            let mut args = case.quick(scene, tmp);
            args.push(format!("--power-cmd={BREAKING_METER}"));
            Some((args, Setting::default(), Streams::Captured))
        }),
        codes: same,
        check: |case, ran, _| {
            // A tool's measurement keeps its figure (exit as without the meter) and says the
            // meter's power: missing when the meter broke before the window closed, a figure
            // when the measurement ended first. The note goes to the stream the result does
            // not use (stdout for lmbench's tools); a sweep passes the meter on to its tools.
            let measures = !(case.binary == "benchmp" && case.path != ["probe"]);
            let said = ran.err_text() + &String::from_utf8_lossy(&ran.stdout);
            let told = said.contains("cmd missing, because") || said.contains(": cmd ");
            (measures && ran.code == Some(0) && !told).then(|| {
                format!(
                    "the meter's power is not said: {}",
                    super::head(&ran.err_text())
                )
            })
        },
    },
    Environment {
        name: "one allowed CPU",
        how: How::Once(|scene, case, tmp, _| {
            let first = benchmp::sys::affinity::allowed_cpus().unwrap()[0];
            let setting = Setting {
                confine: Some(Confinement {
                    cpus: Some(vec![first]),
                    ..Confinement::default()
                }),
                ..Setting::default()
            };
            Some((case.quick(scene, tmp), setting, Streams::Captured))
        }),
        codes: same,
        check: nothing_more,
    },
    Environment {
        name: "SIGKILL mid-run, then a second run",
        how: How::Own(killed_then_restored),
        codes: any_status,
        check: nothing_more,
    },
];

fn closed(fd: i32) -> Setting {
    Setting {
        confine: Some(Confinement {
            close: vec![fd],
            ..Confinement::default()
        }),
        ..Setting::default()
    }
}

fn sysfs(tree: &Path) -> Setting {
    Setting {
        set: vec![("BENCHMP_SYSFS_ROOT".into(), tree.display().to_string())],
        ..Setting::default()
    }
}

/// Makes `dest`, a copy of the captured tree `fixture` with every regular file replaced by
/// what `replace` makes at its path.
pub fn hostile_tree(dest: &Path, fixture: &str, replace: fn(&Path)) -> PathBuf {
    let dest = dest.to_path_buf();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../benchmp/tests/fixtures")
        .join(fixture)
        .join("sys");
    let o = std::process::Command::new("cp")
        .arg("-a")
        .arg(&src)
        .arg(&dest)
        .status()
        .unwrap();
    assert!(o.success(), "cp -a {}", src.display());
    for f in super::walk_files(&dest) {
        if f.is_file() && !f.is_symlink() {
            std::fs::remove_file(&f).unwrap();
            replace(&f);
        }
    }
    dest
}

/// The cpufreq files of `tree`'s policies with what they hold.
fn policies(tree: &Path) -> Vec<(PathBuf, String)> {
    let mut v: Vec<(PathBuf, String)> = super::walk_files(&tree.join("devices/system/cpu/cpufreq"))
        .into_iter()
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                ["scaling_min_freq", "scaling_max_freq", "scaling_governor"]
                    .contains(&n.to_string_lossy().as_ref())
            })
        })
        .map(|p| {
            let v = std::fs::read_to_string(&p).unwrap_or_default();
            (p, v)
        })
        .collect();
    v.sort();
    v
}

/// SIGKILL once the run changed the machine (pinned a clock of a copied tree), then a second
/// run with the same registry: it must write back what the first left and say so.
fn killed_then_restored(scene: &Scene, case: &Case, tmp: &Path, _job: usize) -> Vec<String> {
    let tree = tmp.join("sys");
    let o = std::process::Command::new("cp")
        .arg("-a")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../benchmp/tests/fixtures/phone8/sys"))
        .arg(&tree)
        .status()
        .unwrap();
    assert!(o.success());
    let state = tmp.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mut args = if case.binary == "benchmp" && case.path == ["efficiency"] {
        // A sweep whose steps are real tools (they pin; the stand-ins do not).
        let mut a: Vec<String> = ["efficiency", "--cpus", "0", "--freqs", "1017.6", "--out"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.push(tmp.join("out").display().to_string());
        a.push("--bin-dir".into());
        a.push(scene.places.bin.display().to_string());
        a.push("--cmd".into());
        a.push("dhry --time 60".into());
        a
    } else if case.takes("pin-freq") && !case.example.long.is_empty() {
        let mut a = scene.places.fill(&case.example.long, tmp);
        a.push("--pin-freq=1017.6".into());
        a
    } else {
        return Vec::new();
    };
    // No placement of the example's own that the tree has no clock for.
    args.retain(|a| !a.starts_with("BENCHMP_SYSFS_ROOT="));
    let before = policies(&tree);
    let watched = before.clone();
    let pinned = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let saw = pinned.clone();
    let setting = |during: bool| Setting {
        set: vec![
            ("BENCHMP_SYSFS_ROOT".into(), tree.display().to_string()),
            ("SOCBENCH_STATE_DIR".into(), state.display().to_string()),
        ],
        during: during.then(|| {
            let watched = watched.clone();
            let saw = saw.clone();
            Box::new(move |elapsed: Duration| {
                let changed = watched
                    .iter()
                    .any(|(p, v)| std::fs::read_to_string(p).ok().as_ref() != Some(v));
                saw.fetch_or(changed, std::sync::atomic::Ordering::SeqCst);
                (changed || elapsed > Duration::from_secs(30))
                    .then_some(nix::sys::signal::Signal::SIGKILL)
            })
                as Box<dyn Fn(Duration) -> Option<nix::sys::signal::Signal> + Send + Sync>
        }),
        ..Setting::default()
    };
    let mut problems = Vec::new();
    let first = scene.run_in(
        &case.binary,
        &args,
        tmp,
        Streams::Captured,
        None,
        &[("SOCBENCH_STUB_SLEEP", "1000")],
        &setting(true),
    );
    // Written back by a child that outlived it (a sweep's step gets a signal when the sweep
    // dies): then the second run has nothing to find, and only the files are checked.
    let left = policies(&tree) != before;
    if !pinned.load(std::sync::atomic::Ordering::SeqCst) {
        problems.push(format!(
            "{}: no clock was pinned within 30 s, so nothing was left to restore: {}",
            first.what,
            super::head(&first.err_text())
        ));
    }
    // The second run: the same binary's quick example over the same tree and registry.
    let quick = case.quick(scene, tmp);
    let second = scene.run_in(
        &case.binary,
        &quick,
        tmp,
        Streams::Captured,
        None,
        &[],
        &setting(false),
    );
    if left && !second.err_text().contains("restored ") {
        problems.push(format!(
            "{}: the second run did not say what it restored: {}",
            second.what,
            super::head(&second.err_text())
        ));
    }
    let after = policies(&tree);
    if after != before {
        let differ: Vec<String> = before
            .iter()
            .zip(&after)
            .filter(|(a, b)| a.1 != b.1)
            .map(|(a, b)| format!("{} {} (was {})", a.0.display(), b.1.trim(), a.1.trim()))
            .collect();
        problems.push(format!(
            "{} killed, then {}: not restored: {}",
            first.what,
            second.what,
            differ.join(", ")
        ));
    }
    problems
}
