//! Freezing a tool's child as a debugger or a phone's freezer would, at a moment a test can
//! name (the children timing), for as long as the test needs (until a sibling is done).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Process ids of the children of `parent`, in fork order (from the parent field of each
/// process's /proc stat).
pub fn children_of(parent: u32) -> Vec<i32> {
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_string));
        if ppid.as_deref() == Some(parent.to_string().as_str()) {
            found.push(pid);
        }
    }
    found.sort_unstable();
    found
}

/// When [`freeze_second_child`] stops a child and for how long.
#[derive(Debug, Clone, Copy)]
pub struct Freeze {
    /// CPU time each of the two children has used before the freeze.
    pub after: Duration,
    /// Frames the first child sends before the second is let go: its count of timed
    /// intervals, so that it runs (nearly) its whole measurement while the other is stopped,
    /// however slowly a busy machine runs it.
    pub first_frames: u64,
    /// How long the freeze lasts instead where the kernel counts no write calls.
    pub otherwise: Duration,
}

/// Waits (up to a minute) until `parent` has two children, each has run for `after` of CPU
/// time and the first has sent [`TIMED_FRAMES`] frames to its parent, then
/// stops the second one forked (SIGSTOP), as a debugger or a phone's freezer would, until the
/// first has sent its `first_frames` (or ended, or two minutes went by).
///
/// CPU time, not time since the fork: on a busy machine a child can take longer than `after`
/// to get through its start-up. And CPU time alone is not enough either: while the parent
/// waits for the CPU, its children keep busy (warm-up) or spin on the start line and use CPU
/// time before any interval is timed; a freeze there only delays the start both children wait
/// for. A measuring child sends one frame per timed interval and only a few before its first,
/// so its count of write calls (`syscw` of /proc/PID/io) says it is timing, and when it is
/// done. A fixed freeze is not enough: a machine busy enough stretches the other child's run
/// past any length chosen (in one test run, 0.6 s of work took 12.6 s beside a 2 s freeze).
/// Where /proc/PID/io is missing (a kernel without task I/O accounting) CPU time alone starts
/// the freeze and `otherwise` ends it.
pub fn freeze_second_child(parent: u32, freeze: Freeze) {
    assert!(
        freeze_second_of_new_pair(parent, &mut Vec::new(), freeze),
        "{parent} had no two children to freeze one of"
    );
}

/// [`freeze_second_child`] for a pair of `parent`'s children none of which is in `seen` (which
/// gets them); false when no such pair came within a minute, or the tool ended first.
fn freeze_second_of_new_pair(parent: u32, seen: &mut Vec<i32>, freeze: Freeze) -> bool {
    use nix::sys::signal::{Signal, kill};
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut kids = Vec::new();
    while kids.len() < 2 && Instant::now() < deadline {
        kids = children_of(parent);
        kids.retain(|k| !seen.contains(k));
        std::thread::sleep(Duration::from_millis(5));
    }
    if kids.len() < 2 {
        return false;
    }
    seen.extend(&kids);
    // Frames the first child has sent (a forked process's count starts at 0), if the kernel
    // counts them.
    let sent = || write_calls(kids[0]);
    loop {
        match (cpu_time(kids[0]), cpu_time(kids[1])) {
            (Some(a), Some(b))
                if a >= freeze.after
                    && b >= freeze.after
                    && sent().is_none_or(|n| n >= TIMED_FRAMES) =>
            {
                break;
            }
            (Some(_), Some(_)) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            // One ended (or a minute went by) first.
            _ => return false,
        }
    }
    let pid = nix::unistd::Pid::from_raw(kids[1]);
    if kill(pid, Signal::SIGSTOP).is_err() {
        return false;
    }
    let stopped = Instant::now();
    loop {
        let done = cpu_time(kids[0]).is_none()
            || match sent() {
                Some(n) => n >= freeze.first_frames,
                None => stopped.elapsed() >= freeze.otherwise,
            };
        if done || stopped.elapsed() >= Duration::from_secs(120) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = kill(pid, Signal::SIGCONT);
    true
}

/// Frames a measuring child sends before [`freeze_second_child`] takes it to be timing: more
/// than it sends before its first timed interval (ready, armed), one per interval after.
pub const TIMED_FRAMES: u64 = 16;

/// The write calls process `pid` has made (`syscw` of /proc/PID/io), if the kernel counts them.
fn write_calls(pid: i32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("syscw:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The CPU time (user and system) process `pid` has used, from /proc; None once it has ended
/// (gone, or a zombie).
fn cpu_time(pid: i32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command's closing parenthesis: state is the first, utime the 12th.
    let rest = &stat[stat.rfind(')')? + 2..];
    if rest.starts_with('Z') {
        return None;
    }
    let mut f = rest.split(' ').skip(11);
    let ticks: u64 = f.next()?.parse::<u64>().ok()? + f.next()?.parse::<u64>().ok()?;
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok()??;
    (hz > 0).then(|| Duration::from_secs_f64(ticks as f64 / hz as f64))
}

/// Runs `cmd` with its output captured and, for each of its first `runs` pairs of children
/// (a measurement and its repeats), freezes the second child as [`freeze_second_child`] does;
/// returns what it printed.
pub fn output_with_each_second_child_frozen(
    cmd: &mut Command,
    freeze: Freeze,
    runs: usize,
) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the tool");
    let mut seen: Vec<i32> = Vec::new();
    for _ in 0..runs {
        if !freeze_second_of_new_pair(child.id(), &mut seen, freeze) {
            break;
        }
    }
    child.wait_with_output().expect("wait for the tool")
}

/// Runs `cmd` with its output captured, freezes its second child as [`freeze_second_child`]
/// does, and returns what it printed.
pub fn output_with_second_child_frozen(cmd: &mut Command, freeze: Freeze) -> Output {
    output_with_each_second_child_frozen(cmd, freeze, 1)
}
