//! `ftrace record`: capture a text trace around one command, leaving tracefs as it was.
//!
//! The ring buffer is sized for the capture (see [`capture_buffer_kb`]), not left at the
//! kernel's default (1408 KiB per CPU, which a traced run with power sampling overran), and
//! what it lost anyway is counted from each CPU's `stats` (events overwritten, and dropped)
//! and said in the capture's header, on stderr and, through `ftrace convert`, in the JSON.
//!
//! Every setting changed goes through [`Restore`], which remembers the old value and puts it
//! back when the capture ends, fails or is interrupted: SIGINT, SIGTERM and SIGHUP are caught
//! for the whole capture and passed on to the command, so the process lives long enough to
//! restore. Concurrent captures on one machine would share the single top-level ring buffer and
//! undo each other's settings, so a capture holds tracefs's lock ([`foundation::claim::Lock`]) and a
//! second one is refused.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};

use nix::unistd::AccessFlags;

use crate::error::{Error, Result, exit_code};
use crate::sys;
use crate::tracefs::{self, Setting, Tracefs};
use foundation::output::OutputFile;

/// What to capture.
#[derive(Debug, Clone, Default)]
pub struct RecordOptions {
    /// Where the text trace goes.
    pub output: PathBuf,
    /// Ring buffer size per CPU, KiB; the current size when `None`.
    pub buffer_kb: Option<u64>,
    /// Kernel events to enable, as `GROUP/NAME`.
    pub events: Vec<String>,
    /// Trace clock to select (see tracefs `trace_clock`); unchanged when `None`.
    pub clock: Option<String>,
    /// Mount tracefs on `/sys/kernel/tracing` when it is not mounted.
    pub mount: bool,
    /// The program and its arguments.
    pub command: Vec<OsString>,
}

/// What a capture produced.
#[derive(Debug)]
pub struct Recorded {
    /// The command's exit status; `None` when a signal stopped the capture before it started.
    pub status: Option<ExitStatus>,
    /// A signal `ftrace record` itself received (and passed on).
    pub signal: Option<i32>,
    /// The trace file written.
    pub output: PathBuf,
    /// Its size in bytes.
    pub bytes: usize,
    /// Event lines kept in the trace and events written during the capture, from the trace
    /// header; fewer kept than written means the ring buffer wrapped.
    pub entries: Option<(u64, u64)>,
    /// Events the ring buffer lost during the capture (`None` where the kernel keeps no
    /// per-CPU `stats`).
    pub lost: Option<Lost>,
    /// The ring buffer's size per CPU during the capture, KiB.
    pub buffer_kb: Option<u64>,
}

/// Events a capture lost, from each CPU's `per_cpu/cpuN/stats`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lost {
    /// Overwritten by newer ones (`overrun`).
    pub overrun: u64,
    /// Not written because the buffer was full (`dropped events`, when overwriting is off).
    pub dropped: u64,
    /// CPUs that lost any, with their count.
    pub cpus: Vec<(usize, u64)>,
}

impl Lost {
    /// All events lost.
    pub fn total(&self) -> u64 {
        self.overrun.saturating_add(self.dropped)
    }

    /// Adds one CPU's `stats` text.
    fn add(&mut self, cpu: usize, stats: &str) {
        let field = |name: &str| {
            stats.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == name)
                    .then(|| v.trim().parse::<u64>().ok())
                    .flatten()
            })
        };
        let overrun = field("overrun").unwrap_or(0);
        let dropped = field("dropped events").unwrap_or(0);
        self.overrun = self.overrun.saturating_add(overrun);
        self.dropped = self.dropped.saturating_add(dropped);
        if overrun + dropped > 0 {
            self.cpus.push((cpu, overrun + dropped));
        }
    }

    /// The header line the capture carries: `# lost events: 12 (overrun 12, dropped 0;
    /// CPU 1: 12)`, which `ftrace convert` reads back.
    pub fn header_line(&self) -> String {
        format!("{LOST_HEADER} {} ({})", self.total(), self.detail())
    }

    /// `overrun 12, dropped 0; CPU 1: 12`.
    pub fn detail(&self) -> String {
        let cpus = self
            .cpus
            .iter()
            .map(|(c, n)| format!("CPU {c}: {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "overrun {}, dropped {}{}{cpus}",
            self.overrun,
            self.dropped,
            if cpus.is_empty() { "" } else { "; " }
        )
    }
}

/// How the capture's header line on lost events starts.
pub const LOST_HEADER: &str = "# lost events:";

/// The ring buffer a capture asks for in all, KiB (split over the CPUs): Perfetto's default
/// on Android is 32 MiB; socbench's traced runs write counters as well as slices.
pub const CAPTURE_TOTAL_KB: u64 = 64 << 10;
/// ...but at least this much per CPU, KiB (a 2-CPU run with power sampling wrote about
/// 2 MiB on one CPU)...
pub const CAPTURE_MIN_CPU_KB: u64 = 8 << 10;
/// ...and never more than this share of the memory available.
pub const CAPTURE_MEMORY_SHARE: u64 = 16;

/// The per-CPU ring buffer size a capture sets when not given one, KiB: [`CAPTURE_TOTAL_KB`]
/// over `cpus`, at least [`CAPTURE_MIN_CPU_KB`], all of it within 1/[`CAPTURE_MEMORY_SHARE`]
/// of `available_kb`; `None` when the `current` size (per CPU, the smallest) is already as
/// large (a capture never shrinks the buffer).
pub fn capture_buffer_kb(current: u64, cpus: u64, available_kb: Option<u64>) -> Option<u64> {
    let cpus = cpus.max(1);
    let mut want = (CAPTURE_TOTAL_KB / cpus).max(CAPTURE_MIN_CPU_KB);
    if let Some(avail) = available_kb {
        want = want.min(avail / CAPTURE_MEMORY_SHARE / cpus);
    }
    (want > current).then_some(want)
}

impl Recorded {
    /// 0 on success, the command's status when it failed, 128 + signal when a signal ended
    /// the command or the capture.
    pub fn exit_code(&self) -> i32 {
        if let Some(sig) = self.signal {
            return 128 + sig;
        }
        match self.status {
            None => exit_code::FAILED,
            Some(status) => status
                .code()
                .or_else(|| status.signal().map(|s| 128 + s))
                .unwrap_or(exit_code::FAILED),
        }
    }

    /// Whether events were lost because the ring buffer wrapped.
    pub fn overflowed(&self) -> bool {
        self.entries.is_some_and(|(kept, written)| kept < written)
    }
}

/// Settings changed so far and their old values, put back on [`Restore::restore`] or drop.
/// Each is in the claim registry ([`foundation::claim::Claim::note`]) from before it changes until
/// it is back, so a capture killed outright (SIGKILL) has its settings written back by the
/// next socbench command ([`foundation::restore`]).
#[derive(Debug)]
pub struct Restore {
    fs: Tracefs,
    saved: Vec<(Setting, String, Option<foundation::claim::Claim>)>,
}

impl Restore {
    /// Nothing changed yet.
    pub fn new(fs: Tracefs) -> Restore {
        Restore {
            fs,
            saved: Vec::new(),
        }
    }

    /// The tracefs folder.
    pub fn tracefs(&self) -> &Tracefs {
        &self.fs
    }

    /// Sets `setting` to `value`, remembering the old value the first time it changes: the
    /// value in effect, which for CPUs whose buffers differ (`buffer_size_kb` reads `X`, which
    /// cannot be written back) is each CPU's own size.
    pub fn change(&mut self, setting: &Setting, value: &str) -> Result<()> {
        let old = self.fs.get(setting)?;
        if old == value {
            return Ok(());
        }
        let olds = if *setting == Setting::BufferSizeKb && old == "X" {
            self.fs.cpu_buffer_sizes()?
        } else {
            vec![(setting.clone(), old)]
        };
        for (setting, old) in olds {
            if !self.saved.iter().any(|(s, _, _)| *s == setting) {
                // Where the registry cannot be written (no folder of this user's), the
                // setting is still written back at any end but a SIGKILL.
                let noted =
                    foundation::claim::Claim::note(&self.fs.path(&setting.file()), &old, value)
                        .ok();
                self.saved.push((setting, old, noted));
            }
        }
        self.fs.set(setting, value)
    }

    /// Puts back every changed setting, newest first; reports the first failure after trying
    /// them all.
    pub fn restore(mut self) -> Result<()> {
        self.restore_all()
    }

    fn restore_all(&mut self) -> Result<()> {
        let mut first_error = None;
        while let Some((setting, old, noted)) = self.saved.pop() {
            match self.fs.set(&setting, &old) {
                Ok(()) => {
                    if let Some(c) = noted {
                        c.forget();
                    }
                }
                // Kept in the registry: the next socbench command tries again.
                Err(err) => {
                    if let Some(c) = noted {
                        std::mem::forget(c);
                    }
                    first_error.get_or_insert(err);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        if let Err(err) = self.restore_all() {
            foundation::errln!("ftrace: could not restore a tracefs setting: {err}");
        }
    }
}

/// Finds tracefs, mounting it first when asked to.
pub fn locate(mount: bool) -> Result<Tracefs> {
    match Tracefs::locate() {
        Err(Error::NotMounted { .. }) if mount => Ok(Tracefs::at(tracefs::mount_default()?)),
        other => other,
    }
}

/// Checks that this process may change tracefs settings.
pub fn check_writable(fs: &Tracefs) -> Result<()> {
    let path = fs.path(&Setting::TracingOn.file());
    nix::unistd::access(&path, AccessFlags::W_OK).map_err(|errno| match errno {
        nix::errno::Errno::EACCES | nix::errno::Errno::EPERM | nix::errno::Errno::EROFS => {
            Error::NotRoot { path: path.clone() }
        }
        other => Error::Io {
            path: path.clone(),
            action: "access".into(),
            source: other.into(),
        },
    })
}

/// Whether `event` has the shape of a tracefs event, `GROUP/NAME`, each a plain name.
pub fn well_formed_event(event: &str) -> bool {
    let plain = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && !part.contains(|c: char| c == '/' || c.is_whitespace() || c.is_control())
    };
    event
        .split_once('/')
        .is_some_and(|(g, n)| plain(g) && plain(n))
}

/// Checks that `GROUP/NAME` names an event of this kernel.
pub fn check_event(fs: &Tracefs, event: &str) -> Result<Setting> {
    let setting = Setting::Event(event.to_string());
    if !well_formed_event(event) || !fs.has(&setting) {
        return Err(Error::NoSuchEvent {
            event: event.to_string(),
            path: fs.path(&setting.file()),
            available: fs.path("available_events"),
        });
    }
    Ok(setting)
}

/// Checks that `program` can be started, found as exec finds it (in PATH, or `/bin:/usr/bin`
/// without one, unless it names a path), so that a typo fails before tracefs is touched.
pub fn check_program(program: &OsStr) -> Result<()> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into());
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    which::which_in(program, Some(path), cwd)
        .map(drop)
        .map_err(|_| {
            let why = if program.as_bytes().contains(&b'/') {
                "no executable file there"
            } else {
                "no executable file of that name in PATH"
            };
            Error::Spawn {
                command: program.to_string_lossy().into_owned(),
                source: io::Error::new(io::ErrorKind::NotFound, why),
            }
        })
}

/// Sets up tracefs, runs the command, saves the trace and restores every setting.
///
/// The command and the output are checked first, so that a usage mistake is reported as such
/// on any machine, before tracefs is looked for.
pub fn record(opts: &RecordOptions) -> Result<Recorded> {
    let Some((program, args)) = opts.command.split_first() else {
        return Err(Error::Spawn {
            command: String::new(),
            source: io::Error::new(io::ErrorKind::InvalidInput, "no command given"),
        });
    };
    check_program(program)?;
    // The trace goes to a hidden copy beside the output, created now so that an output that
    // cannot be written fails first, and renamed over it once saved whole: an earlier file
    // stays as it was until then, and is untouched when the capture fails.
    let out = OutputFile::create(&opts.output).map_err(|source| Error::Output {
        path: opts.output.clone(),
        source,
    })?;
    let result = sys::install_forwarding_handlers()
        .map_err(|e| Error::Io {
            path: PathBuf::from("(signal handlers)"),
            action: "install".into(),
            source: e.into(),
        })
        .and_then(|()| record_with_handlers(opts, out, program, args));
    sys::set_forward_target(0);
    sys::restore_default_handlers();
    result
}

fn record_with_handlers(
    opts: &RecordOptions,
    mut out: OutputFile,
    program: &OsString,
    args: &[OsString],
) -> Result<Recorded> {
    let fs = locate(opts.mount)?;
    check_writable(&fs)?;
    // One capture at a time owns tracefs: a second one would clear this one's buffer and save
    // its settings as the "old" ones. The lock goes with this process, however it ends.
    let _owner = foundation::claim::Lock::take(&fs.path("trace"), "another capture").map_err(
        |e| match e {
            foundation::claim::ClaimError::Locked { path, .. } => Error::Busy { path },
            other => Error::Io {
                path: fs.path("trace"),
                action: "lock".into(),
                source: std::io::Error::other(other.to_string()),
            },
        },
    )?;
    let events = opts
        .events
        .iter()
        .map(|e| check_event(&fs, e))
        .collect::<Result<Vec<_>>>()?;
    if let Some(clock) = &opts.clock {
        check_clock(&fs, clock)?;
    }
    let mut restore = Restore::new(fs.clone());
    let buffer_kb = set_up(&mut restore, opts, &events)?;
    fs.clear()?;

    let mut status = None;
    if sys::caught_signal().is_none() {
        fs.set(&Setting::TracingOn, "1")?;
        let waited = run_command(program, args);
        fs.set(&Setting::TracingOn, "0")?;
        status = Some(waited?);
    }

    let lost = lost_events(&fs);
    let trace_path = fs.path("trace");
    let mut trace = Vec::new();
    File::open(&trace_path)
        .and_then(|mut f| f.read_to_end(&mut trace))
        .map_err(|source| Error::Io {
            path: trace_path.clone(),
            action: "read".into(),
            source,
        })?;
    let trace = with_lost_header(trace, lost.as_ref());
    out.write_all(&trace)
        .and_then(|()| out.commit())
        .map_err(|source| Error::Output {
            path: opts.output.clone(),
            source,
        })?;
    restore.restore()?;
    Ok(Recorded {
        status,
        signal: sys::caught_signal(),
        output: opts.output.clone(),
        bytes: trace.len(),
        entries: entries_from_header(&trace),
        lost,
        buffer_kb,
    })
}

/// What each CPU's ring buffer lost since it was cleared; `None` without `per_cpu` stats.
fn lost_events(fs: &Tracefs) -> Option<Lost> {
    let mut lost = Lost::default();
    let mut any = false;
    for cpu in fs.cpus() {
        if let Ok(stats) = fs.read(&format!("per_cpu/cpu{cpu}/stats")) {
            lost.add(cpu, &stats);
            any = true;
        }
    }
    any.then_some(lost)
}

/// The trace with the line on lost events after its first (`# tracer: nop`), or first.
fn with_lost_header(trace: Vec<u8>, lost: Option<&Lost>) -> Vec<u8> {
    let Some(lost) = lost else {
        return trace;
    };
    let line = format!("{}\n", lost.header_line());
    let at = if trace.starts_with(b"# tracer:") {
        trace
            .iter()
            .position(|&b| b == b'\n')
            .map_or(trace.len(), |i| i + 1)
    } else {
        0
    };
    let mut out = Vec::with_capacity(trace.len() + line.len());
    out.extend_from_slice(&trace[..at]);
    out.extend_from_slice(line.as_bytes());
    out.extend_from_slice(&trace[at..]);
    out
}

/// Checks that this kernel offers trace clock `clock`.
fn check_clock(fs: &Tracefs, clock: &str) -> Result<()> {
    let list = fs.read("trace_clock")?;
    let known = list
        .split_ascii_whitespace()
        .any(|c| c.trim_matches(['[', ']']) == clock);
    if known {
        Ok(())
    } else {
        Err(Error::NoSuchClock {
            clock: clock.to_string(),
            path: fs.path("trace_clock"),
        })
    }
}

/// Tracing off, the nop tracer, markers with their tgid, the asked buffer (else one sized for
/// a capture, [`capture_buffer_kb`]), clock and events, each remembered by `restore`; returns
/// the buffer's size per CPU during the capture, KiB, where it is known.
fn set_up(restore: &mut Restore, opts: &RecordOptions, events: &[Setting]) -> Result<Option<u64>> {
    restore.change(&Setting::TracingOn, "0")?;
    if restore.tracefs().get(&Setting::CurrentTracer)? != "nop" {
        restore.change(&Setting::CurrentTracer, "nop")?;
    }
    for option in ["markers", "record-tgid"] {
        let setting = Setting::Option(option.into());
        if restore.tracefs().has(&setting) {
            restore.change(&setting, "1")?;
        }
    }
    let current = restore.tracefs().smallest_cpu_buffer_kb();
    let asked = match opts.buffer_kb {
        Some(kb) => Some(kb),
        None => current.and_then(|c| {
            let cpus = restore.tracefs().cpus().len() as u64;
            capture_buffer_kb(c, cpus, crate::sys::mem_available_kb())
        }),
    };
    if let Some(kb) = asked {
        restore
            .change(&Setting::BufferSizeKb, &kb.to_string())
            .map_err(|err| match err {
                Error::Io { path, source, .. } => Error::BufferRefused { path, kb, source },
                other => other,
            })?;
    }
    if let Some(clock) = &opts.clock {
        restore.change(&Setting::TraceClock, clock)?;
    }
    for event in events {
        restore.change(event, "1")?;
    }
    Ok(asked.or(current))
}

/// Runs the command with the terminal's stdio and waits for it, passing on the signals
/// `record` catches meanwhile; what the command left running (a background process, now
/// this process's as a subreaper's) is killed and reaped after it: the capture has ended.
fn run_command(program: &OsString, args: &[OsString]) -> Result<ExitStatus> {
    let _ = sys::become_subreaper();
    let status = run_and_wait(program, args);
    sys::end_leftovers(20);
    status
}

fn run_and_wait(program: &OsString, args: &[OsString]) -> Result<ExitStatus> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    sys::die_with_parent(&mut cmd, nix::sys::signal::Signal::SIGTERM);
    let spawned = cmd.spawn();
    let waited = spawned.and_then(|mut child| {
        let pid = i32::try_from(child.id()).unwrap_or(0);
        sys::set_forward_target(pid);
        // A signal that came before the target was set has not been passed on yet.
        if let Some(sig) = sys::caught_signal()
            && let Ok(sig) = nix::sys::signal::Signal::try_from(sig)
        {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
        }
        let status = child.wait();
        sys::set_forward_target(0);
        status
    });
    waited.map_err(|source| Error::Spawn {
        command: program.to_string_lossy().into_owned(),
        source,
    })
}

/// `# entries-in-buffer/entries-written: 15/15   #P:2` as (15, 15).
pub fn entries_from_header(trace: &[u8]) -> Option<(u64, u64)> {
    let head = &trace[..trace.len().min(4096)];
    let text = String::from_utf8_lossy(head);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("# entries-in-buffer/entries-written:"))?;
    let counts = line.split_ascii_whitespace().next()?;
    let (kept, written) = counts.split_once('/')?;
    Some((kept.parse().ok()?, written.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_counts() {
        let trace = b"# tracer: nop\n#\n# entries-in-buffer/entries-written: 15/20   #P:2\n";
        assert_eq!(entries_from_header(trace), Some((15, 20)));
        assert_eq!(entries_from_header(b"nothing"), None);
    }

    #[test]
    fn exit_codes_follow_the_command() {
        let rec = |status: Option<i32>, signal| Recorded {
            status: status.map(ExitStatus::from_raw),
            signal,
            output: PathBuf::new(),
            bytes: 0,
            entries: Some((3, 4)),
            lost: None,
            buffer_kb: None,
        };
        assert_eq!(rec(Some(0), None).exit_code(), 0);
        assert_eq!(rec(Some(3 << 8), None).exit_code(), 3);
        assert_eq!(rec(Some(9), None).exit_code(), 128 + 9);
        assert_eq!(rec(Some(0), Some(2)).exit_code(), 130);
        assert_eq!(rec(None, None).exit_code(), 1);
        assert!(rec(None, None).overflowed());
    }

    #[test]
    fn bad_event_names_are_refused() {
        let fs = Tracefs::at("/nonexistent/tracing");
        for event in [
            "sched",
            "sched/",
            "/x",
            "a/b/c",
            "../x/y",
            "sched/sched_switch",
        ] {
            let err = check_event(&fs, event).unwrap_err();
            assert!(matches!(err, Error::NoSuchEvent { .. }), "{event}: {err}");
            assert_eq!(err.exit_code(), 2);
        }
    }

    #[test]
    fn event_names_have_two_plain_parts() {
        for good in ["sched/sched_switch", "power/cpu_frequency", "a/b"] {
            assert!(well_formed_event(good), "{good}");
        }
        for bad in [
            "", "sched", "sched/", "/x", "a/b/c", "../x", "x/..", "./x", "a b/c", "a/b\n",
            "a/\u{1b}",
        ] {
            assert!(!well_formed_event(bad), "{bad:?}");
        }
    }

    /// A fake tracefs folder holding `files` (relative path, content).
    fn fake_tracefs(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
        let root = std::env::temp_dir().join(format!("ftrace-fake-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (file, content) in files {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        root
    }

    #[test]
    fn an_unexpanded_buffer_is_restored_to_the_size_in_effect() {
        let root = fake_tracefs("unexpanded", &[("buffer_size_kb", "7 (expanded: 1408)\n")]);
        let read = || std::fs::read_to_string(root.join("buffer_size_kb")).unwrap();
        // The size in effect asked again: nothing to change or restore.
        let mut restore = Restore::new(Tracefs::at(&root));
        restore.change(&Setting::BufferSizeKb, "1408").unwrap();
        restore.restore().unwrap();
        assert_eq!(read(), "7 (expanded: 1408)\n");
        let mut restore = Restore::new(Tracefs::at(&root));
        restore.change(&Setting::BufferSizeKb, "4096").unwrap();
        assert_eq!(read(), "4096");
        restore.restore().unwrap();
        assert_eq!(read(), "1408");
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn buffers_that_differ_per_cpu_are_restored_cpu_by_cpu() {
        let root = fake_tracefs(
            "per-cpu",
            &[
                ("buffer_size_kb", "X\n"),
                ("per_cpu/cpu0/buffer_size_kb", "1408\n"),
                ("per_cpu/cpu1/buffer_size_kb", "4096\n"),
                ("per_cpu/cpu10/buffer_size_kb", "64\n"),
            ],
        );
        let read = |file: &str| std::fs::read_to_string(root.join(file)).unwrap();
        let mut restore = Restore::new(Tracefs::at(&root));
        restore.change(&Setting::BufferSizeKb, "2048").unwrap();
        // What the kernel does with the write: every CPU gets the size.
        for cpu in [0, 1, 10] {
            std::fs::write(
                root.join(format!("per_cpu/cpu{cpu}/buffer_size_kb")),
                "2048",
            )
            .unwrap();
        }
        restore.restore().unwrap();
        assert_eq!(read("per_cpu/cpu0/buffer_size_kb"), "1408");
        assert_eq!(read("per_cpu/cpu1/buffer_size_kb"), "4096");
        assert_eq!(read("per_cpu/cpu10/buffer_size_kb"), "64");
        assert_ne!(
            read("buffer_size_kb").trim(),
            "X",
            "X is not a size to write"
        );
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn a_capture_sizes_the_buffer_but_never_shrinks_it() {
        // Two CPUs at the kernel's default: 32 MiB each.
        assert_eq!(capture_buffer_kb(1408, 2, Some(24 << 20)), Some(32 << 10));
        // Many CPUs: at least the minimum each.
        assert_eq!(
            capture_buffer_kb(1408, 64, Some(256 << 20)),
            Some(CAPTURE_MIN_CPU_KB)
        );
        // Already larger: kept.
        assert_eq!(capture_buffer_kb(65536, 2, Some(24 << 20)), None);
        // A 2 GiB phone with 8 CPUs: 8 MiB each; with 512 MiB available, within a sixteenth.
        assert_eq!(capture_buffer_kb(1408, 8, Some(2 << 20)), Some(8 << 10));
        assert_eq!(capture_buffer_kb(1408, 8, Some(512 << 10)), Some(4 << 10));
        assert_eq!(
            capture_buffer_kb(1408, 8, Some(64 << 10)),
            None,
            "no room to grow"
        );
    }

    #[test]
    fn lost_events_are_counted_per_cpu_and_put_in_the_header() {
        let mut lost = Lost::default();
        lost.add(
            0,
            "entries: 5\noverrun: 0\ncommit overrun: 0\ndropped events: 0\n",
        );
        lost.add(
            1,
            "entries: 9\noverrun: 12\ncommit overrun: 0\ndropped events: 3\n",
        );
        assert_eq!((lost.overrun, lost.dropped, lost.total()), (12, 3, 15));
        assert_eq!(lost.cpus, vec![(1, 15)]);
        assert_eq!(
            lost.header_line(),
            "# lost events: 15 (overrun 12, dropped 3; CPU 1: 15)"
        );
        let trace = b"# tracer: nop\n#\n x-1 [000] 1.0: y\n".to_vec();
        let with = with_lost_header(trace, Some(&Lost::default()));
        assert_eq!(
            String::from_utf8(with).unwrap(),
            "# tracer: nop\n# lost events: 0 (overrun 0, dropped 0)\n#\n x-1 [000] 1.0: y\n"
        );
        assert_eq!(with_lost_header(b"abc".to_vec(), None), b"abc");
    }

    #[test]
    fn restore_without_changes_does_nothing() {
        let restore = Restore::new(Tracefs::at("/nonexistent/tracing"));
        assert!(restore.restore().is_ok());
    }
}
