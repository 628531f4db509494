//! The crate's few unsafe libc calls: the fork-aware pid cache, the signal handlers of
//! `ftrace record`, and the fork used by the `ftrace mark` helper.
//!
//! The marker write itself needs no `unsafe`: `nix::unistd::write` is a safe, allocation-free
//! wrapper around write(2).
#![allow(unsafe_code)]

use std::sync::Once;
use std::sync::atomic::{AtomicI32, Ordering};

use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::unistd::{ForkResult, Pid};

/// Process id written into every marker; 0 until first used.
static PID: AtomicI32 = AtomicI32::new(0);
static ATFORK: Once = Once::new();

extern "C" fn refresh_pid_after_fork() {
    // Runs in the child right after fork(2): getpid and an atomic store are async-signal-safe.
    PID.store(nix::unistd::getpid().as_raw(), Ordering::Relaxed);
}

/// The calling process's id, cached and refreshed in forked children.
///
/// Benchmark frameworks open the marker once and then fork pinned children that inherit the
/// descriptor; each child must write its own pid. A `pthread_atfork` child handler refreshes the
/// cache, so the hot path is one relaxed load instead of a getpid(2) syscall. Children created
/// by a raw `clone` syscall that bypasses libc's fork would keep the parent's pid.
#[inline]
pub(crate) fn pid() -> i32 {
    match PID.load(Ordering::Relaxed) {
        0 => init_pid(),
        pid => pid,
    }
}

#[cold]
fn init_pid() -> i32 {
    ATFORK.call_once(|| {
        // SAFETY: the handler only calls getpid and stores an atomic, which is all a handler
        // may do in a child of a multi-threaded parent; the function lives for the whole
        // program. The return value only reports ENOMEM, in which case the pid is looked up on
        // every call below instead.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(refresh_pid_after_fork)) };
        if rc != 0 {
            return;
        }
        PID.store(nix::unistd::getpid().as_raw(), Ordering::Relaxed);
    });
    match PID.load(Ordering::Relaxed) {
        0 => nix::unistd::getpid().as_raw(),
        pid => pid,
    }
}

/// Signal number caught by [`install_forwarding_handlers`], 0 while none.
static CAUGHT: AtomicI32 = AtomicI32::new(0);
/// Pid of the recorded command, 0 while it is not running.
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Signals `ftrace record` forwards to its command instead of dying with tracefs half set up.
pub(crate) const FORWARDED: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

extern "C" fn forward_signal(raw: libc::c_int) {
    CAUGHT.store(raw, Ordering::SeqCst);
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0
        && let Ok(sig) = Signal::try_from(raw)
    {
        // kill(2) is async-signal-safe; a failure (child already gone) needs no handling.
        let _ = signal::kill(Pid::from_raw(child), sig);
    }
}

/// Replaces the default action of [`FORWARDED`] signals: remember the signal and pass it on
/// to the recorded command (see [`set_forward_target`]) so the process survives to restore
/// tracefs.
pub(crate) fn install_forwarding_handlers() -> nix::Result<()> {
    let action = SigAction::new(
        SigHandler::Handler(forward_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in FORWARDED {
        // SAFETY: the handler only touches atomics and calls kill(2), all async-signal-safe.
        unsafe { signal::sigaction(sig, &action) }?;
    }
    Ok(())
}

/// Puts back the default action of the [`FORWARDED`] signals.
pub(crate) fn restore_default_handlers() {
    let action = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
    for sig in FORWARDED {
        // SAFETY: installing SIG_DFL has no handler code to check.
        let _ = unsafe { signal::sigaction(sig, &action) };
    }
}

/// Sets (or clears with 0) the pid that caught signals are forwarded to.
pub(crate) fn set_forward_target(pid: i32) {
    CHILD.store(pid, Ordering::SeqCst);
}

/// The signal caught since the handlers were installed, if any.
pub(crate) fn caught_signal() -> Option<i32> {
    match CAUGHT.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// Number of threads of this process, from /proc/self/status.
pub(crate) fn thread_count() -> Option<usize> {
    let status =
        foundation::input::read_small(std::path::Path::new("/proc/self/status"), 1 << 20).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
}

/// Forks a child that runs `body` and exits with its return value; returns the child's pid.
///
/// Refuses (EDEADLK) when the process has more than one thread: only the forking thread
/// survives in the child, so a lock held by another thread would never be released.
pub(crate) fn fork_and_run(body: impl FnOnce() -> i32) -> nix::Result<Pid> {
    if thread_count() != Some(1) {
        return Err(nix::errno::Errno::EDEADLK);
    }
    // SAFETY: the process is single-threaded (checked above), so the child starts with every
    // lock free and may run ordinary Rust code before it exits without returning.
    match unsafe { nix::unistd::fork() }? {
        ForkResult::Parent { child } => Ok(child),
        ForkResult::Child => {
            let code = body();
            // SAFETY: _exit ends the child without running the parent's atexit handlers or
            // flushing stdio buffers copied from the parent, which would print twice.
            unsafe { libc::_exit(code) }
        }
    }
}

/// Makes the command's process get `sig` when this process dies, however it dies: a capture,
/// a suite or an A/B driver killed with SIGKILL leaves no command running on without it.
pub fn die_with_parent(cmd: &mut std::process::Command, sig: Signal) {
    use std::os::unix::process::CommandExt;
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child before exec and only makes the prctl(2),
    // getppid(2) and raise (kill(2)) system calls, which are async-signal-safe; it allocates
    // nothing and touches no lock.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(sig)?;
            // The parent died before the request took effect: go now, as it would have made
            // this process go.
            if nix::unistd::getppid() != parent {
                let _ = signal::raise(sig);
            }
            Ok(())
        })
    };
}

/// `MemAvailable` of /proc/meminfo, KiB (the memory a ring buffer may take without swapping).
pub(crate) fn mem_available_kb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix("MemAvailable:")?;
        rest.trim().trim_end_matches("kB").trim().parse().ok()
    })
}

/// Makes this process the reaper of its orphaned descendants (PR_SET_CHILD_SUBREAPER), so that
/// what a traced command leaves behind comes back to it instead of to init.
pub(crate) fn become_subreaper() -> nix::Result<()> {
    nix::sys::prctl::set_child_subreaper(true)
}

/// Kills (SIGKILL) and reaps every child this process still has, over and over while killed
/// ones leave orphans of their own to it (a subreaper's); at most `rounds` times.
pub(crate) fn end_leftovers(rounds: usize) -> usize {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    let me = nix::unistd::getpid().as_raw().to_string();
    let mut ended = 0;
    for _ in 0..rounds {
        let kids: Vec<i32> = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|s| {
                        let (_, rest) = s.rsplit_once(") ")?;
                        rest.split_whitespace().nth(1).map(|p| p == me)
                    })
                    .unwrap_or(false)
            })
            .collect();
        if kids.is_empty() {
            break;
        }
        for pid in kids {
            let _ = signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
            ended += 1;
        }
        loop {
            match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) | Err(_) => break,
                Ok(_) => {}
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    ended
}
