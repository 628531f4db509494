//! Process control for the forked children: fork only while single-threaded, tie children to
//! the parent's life, wait with deadlines, and turn SIGINT/SIGTERM into a flag the parent polls.
#![allow(unsafe_code)]

use std::io::Write;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid};

/// Number of threads in the calling process (from /proc/self/task; 1 when unreadable).
pub fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|rd| rd.count())
        .unwrap_or(1)
}

static BASELINE_THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Records how many threads the process had when the tool started, before any code of ours
/// could start one. Under a user-mode emulator (qemu-user) the emulator's own helper threads
/// show in /proc/self/task; they are not ours and do not hold our locks.
pub fn note_baseline_threads() {
    let _ = BASELINE_THREADS.compare_exchange(
        0,
        thread_count(),
        std::sync::atomic::Ordering::SeqCst,
        std::sync::atomic::Ordering::SeqCst,
    );
}

/// Which side of a fork the caller is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forked {
    /// The parent, with the child's pid.
    Parent(Pid),
    /// The new child process.
    Child,
}

/// Why a fork did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    /// The process has more threads than when it started.
    #[error(
        "refusing to fork: the process has {threads} threads (fork is only safe single-threaded)"
    )]
    Threads {
        /// Threads counted in /proc/self/task.
        threads: usize,
    },
    /// fork(2) failed.
    #[error("fork failed")]
    Fork(#[source] nix::Error),
}

/// Forks the calling process. Refuses when more threads exist than when the tool started
/// (normally one; see [`note_baseline_threads`]), because a forked copy
/// of a multi-threaded process may deadlock on locks held by threads that did not come along.
pub fn fork_process() -> Result<Forked, ForkError> {
    let threads = thread_count();
    let allowed = BASELINE_THREADS
        .load(std::sync::atomic::Ordering::SeqCst)
        .max(1);
    if threads > allowed {
        return Err(ForkError::Threads { threads });
    }
    // Buffered output would otherwise be written twice, once by each process.
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: the process has exactly one thread (checked above), so no lock can be held by a
    // thread that does not exist in the child; the child only pins, runs, reports and _exits.
    match unsafe { nix::unistd::fork() } {
        Ok(ForkResult::Parent { child }) => Ok(Forked::Parent(child)),
        Ok(ForkResult::Child) => Ok(Forked::Child),
        Err(e) => Err(ForkError::Fork(e)),
    }
}

/// The signals that end a run cleanly: the parent kills and reaps its children first.
pub const STOP_SIGNALS: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// In a child: get SIGKILL when the parent dies, and take default handling of the stop signals.
pub fn child_setup(parent: Pid) {
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    default_stop_signals();
    // The parent may have died between fork and prctl.
    if nix::unistd::getppid() != parent {
        exit_now(1);
    }
}

/// Takes the default action of the stop signals again, in this process and every program it
/// runs after: one started with them ignored (a background job of a shell without job
/// control) would otherwise pass that on, and a program relying on the default would not stop.
pub fn default_stop_signals() {
    for sig in STOP_SIGNALS {
        // SAFETY: restoring the default disposition installs no Rust code as a handler.
        let _ = unsafe { signal::signal(sig, SigHandler::SigDfl) };
    }
}

/// Ends the calling process at once, without running exit handlers or flushing stdio twice.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit takes no pointers and never returns; skipping atexit handlers is the point.
    unsafe { libc::_exit(code) }
}

/// How long `pid` has waited on a run queue for a CPU, ns (`/proc/PID/schedstat`'s second
/// field): the time a busy machine kept it from running. `None` where the kernel does not
/// keep it or the process is gone.
pub fn run_queue_wait_ns(pid: u32) -> Option<u64> {
    let text =
        crate::sysfs::read_attr(std::path::Path::new(&format!("/proc/{pid}/schedstat"))).ok()?;
    parse_schedstat_wait(&text)
}

/// The run-queue wait of a schedstat line: "ON_CPU_NS WAIT_NS TIMESLICES".
fn parse_schedstat_wait(text: &str) -> Option<u64> {
    text.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// Sends `sig` to `pid`, ignoring a process that is already gone.
pub fn kill(pid: Pid, sig: Signal) {
    let _ = signal::kill(pid, sig);
}

/// Sends `sig` to every process of the group `pgid` (a command started in a group of its
/// own), ignoring a group that is gone.
pub fn kill_group(pgid: Pid, sig: Signal) {
    let _ = signal::killpg(pgid, sig);
}

/// Makes reads on `fd` return at once when nothing is waiting, so a parent can drain a
/// command's output from its poll loop without blocking or starting a thread.
pub fn set_nonblocking(fd: std::os::fd::BorrowedFd<'_>) -> nix::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL)?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).map(|_| ())
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Exited with this status.
    Code(i32),
    /// Killed by this signal.
    Signal(Signal),
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exited with status {c}"),
            Exit::Signal(s) => write!(f, "was killed by {}", s.as_str()),
        }
    }
}

/// Non-blocking reap: `Some` once the child has ended.
pub fn try_reap(pid: Pid) -> Option<Exit> {
    match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
        Ok(WaitStatus::Exited(_, code)) => Some(Exit::Code(code)),
        Ok(WaitStatus::Signaled(_, sig, _)) => Some(Exit::Signal(sig)),
        Ok(_) => None,
        // ECHILD: already reaped or not ours; treat as gone.
        Err(_) => Some(Exit::Code(-1)),
    }
}

/// Waits up to `grace` for the child to end, then SIGKILLs and reaps it. Never leaves a zombie.
pub fn reap(pid: Pid, grace: Duration) -> Exit {
    let deadline = Instant::now() + grace;
    loop {
        if let Some(e) = try_reap(pid) {
            return e;
        }
        if Instant::now() >= deadline {
            kill(pid, Signal::SIGKILL);
            return match waitpid(pid, None) {
                Ok(WaitStatus::Exited(_, code)) => Exit::Code(code),
                Ok(WaitStatus::Signaled(_, sig, _)) => Exit::Signal(sig),
                _ => Exit::Signal(Signal::SIGKILL),
            };
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

static INTERRUPT: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    INTERRUPT.store(sig, Ordering::SeqCst);
}

/// The stop signal (SIGINT, SIGTERM or SIGHUP) received since the guard was installed, if any.
pub fn interrupted() -> Option<Signal> {
    match INTERRUPT.load(Ordering::SeqCst) {
        0 => None,
        s => Signal::try_from(s).ok(),
    }
}

/// While alive, the stop signals set a flag (and interrupt blocking calls) instead of killing
/// the parent, so it can kill and reap its children first. Restores the old handlers on drop.
#[derive(Debug)]
pub struct InterruptGuard {
    old: Vec<(Signal, SigAction)>,
}

/// Guards alive now: only the outermost installs and restores the handlers, and only it
/// clears the flag, so a signal that arrived under an outer guard is never forgotten.
static GUARDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl InterruptGuard {
    /// Installs the flag handlers (inside another guard: keeps the outer one's).
    pub fn install() -> InterruptGuard {
        if GUARDS.fetch_add(1, Ordering::SeqCst) > 0 {
            return InterruptGuard { old: Vec::new() };
        }
        INTERRUPT.store(0, Ordering::SeqCst);
        // No SA_RESTART: a blocking poll returns EINTR so the parent notices at once.
        let action = SigAction::new(
            SigHandler::Handler(on_signal),
            SaFlags::empty(),
            SigSet::empty(),
        );
        let mut old = Vec::new();
        for sig in STOP_SIGNALS {
            // SAFETY: the handler only stores into an atomic, which is async-signal-safe.
            if let Ok(prev) = unsafe { signal::sigaction(sig, &action) } {
                old.push((sig, prev));
            }
        }
        InterruptGuard { old }
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        GUARDS.fetch_sub(1, Ordering::SeqCst);
        for (sig, prev) in self.old.drain(..) {
            // SAFETY: reinstalls the disposition that was in place before `install`.
            let _ = unsafe { signal::sigaction(sig, &prev) };
        }
    }
}

/// Takes ownership of a descriptor this process inherited (a pipe end `benchmp ab` passed by
/// number), after checking that it is open; it is marked close-on-exec.
pub fn adopt_inherited_fd(fd: i32) -> std::io::Result<std::fs::File> {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    use std::os::fd::{BorrowedFd, FromRawFd};
    if fd < 3 {
        return Err(std::io::Error::other(format!(
            "descriptor {fd} is a standard stream"
        )));
    }
    // SAFETY: fcntl(F_GETFD) on any number is harmless; it fails with EBADF when the number
    // is not open, which is checked before the descriptor is used.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    fcntl(borrowed, FcntlArg::F_GETFD).map_err(std::io::Error::from)?;
    let _ = fcntl(borrowed, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
    // SAFETY: the descriptor is open (checked above), was passed to this process to own, and
    // is adopted once (the caller keeps it in a OnceLock), so no other owner closes it.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// A descriptor of the process's own that stays open until it exits (a static's), borrowed
/// for as long.
pub fn borrow_static_fd(fd: i32) -> std::os::fd::BorrowedFd<'static> {
    // SAFETY: callers pass only descriptors owned by statics that are never closed, so the
    // number refers to the same open file for the rest of the process.
    unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }
}

/// Makes a command's process get two pipe ends as descriptors 3 and 4 (whatever numbers they
/// have here), with every other descriptor of ours closed at exec as usual; with `fixed_layout`
/// its address space is not randomised, so two processes of one binary lay out their code,
/// stacks and buffers alike (4 KiB aliasing between buffers then cannot differ between them).
pub fn pass_fds(
    cmd: &mut std::process::Command,
    read: std::os::fd::RawFd,
    write: std::os::fd::RawFd,
    fixed_layout: bool,
) {
    pass_fds_and_program(cmd, read, write, None, fixed_layout);
}

/// The descriptor [`pass_fds_and_program`] puts the program on: the command runs
/// `/proc/self/fd/5`.
pub const PROGRAM_FD: std::os::fd::RawFd = 5;

/// [`pass_fds`], and also `program` (a descriptor of ours open on the file to run, and whether
/// the command's process may close it at exec: not for a script, whose interpreter opens it
/// again) as descriptor [`PROGRAM_FD`], so that the command can be `/proc/self/fd/5`: every
/// program then runs through the same path, whose room on the new stack is the same.
pub fn pass_fds_and_program(
    cmd: &mut std::process::Command,
    read: std::os::fd::RawFd,
    write: std::os::fd::RawFd,
    program: Option<(std::os::fd::RawFd, bool)>,
    fixed_layout: bool,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and only makes the
    // async-signal-safe calls personality, fcntl, dup2 and dup3 on descriptors open in it.
    unsafe {
        cmd.pre_exec(move || {
            if fixed_layout {
                // Best effort: a kernel that refuses leaves the layout randomised.
                let current = libc::personality(0xffff_ffff);
                if current >= 0 {
                    libc::personality((current | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong);
                }
            }
            // First move all above the targets, so none is overwritten by another.
            let r = libc::fcntl(read, libc::F_DUPFD_CLOEXEC, 10);
            let w = libc::fcntl(write, libc::F_DUPFD_CLOEXEC, 10);
            let p = match program {
                Some((fd, _)) => libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10),
                None => 0,
            };
            if r < 0 || w < 0 || p < 0 || libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some((_, close_at_exec)) = program {
                let flags = if close_at_exec { libc::O_CLOEXEC } else { 0 };
                if libc::dup3(p, PROGRAM_FD, flags) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// What a command's process is held to between fork and exec: resource limits (soft and
/// hard alike), a user and group id to run as (root's limits are not all enforced on root:
/// `RLIMIT_NPROC` is not), and standard descriptors to close. The tests' hostile
/// environments are made of these.
#[derive(Debug, Clone, Default)]
pub struct Confinement {
    /// Each resource and its limit.
    pub limits: Vec<(nix::sys::resource::Resource, u64)>,
    /// The user (and group) id to run as; needs root.
    pub user: Option<u32>,
    /// Descriptors to close (0, 1, 2).
    pub close: Vec<std::os::fd::RawFd>,
    /// The CPUs it may run on (`taskset`).
    pub cpus: Option<Vec<usize>>,
}

/// Holds `cmd`'s process to `c` ([`Confinement`]).
pub fn confine_command(cmd: &mut std::process::Command, c: Confinement) {
    use std::os::unix::process::CommandExt;
    let cpus = c.cpus.as_ref().map(|list| {
        let mut set = nix::sched::CpuSet::new();
        for &cpu in list {
            let _ = set.set(cpu);
        }
        set
    });
    // SAFETY: the closure runs in the forked child before exec and only makes the
    // async-signal-safe sched_setaffinity, setrlimit, setgroups, setgid, setuid and close
    // system calls on values made beforehand; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(set) = &cpus {
                nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), set)?;
            }
            for &(resource, limit) in &c.limits {
                nix::sys::resource::setrlimit(resource, limit, limit)?;
            }
            if let Some(id) = c.user {
                nix::unistd::setgroups(&[])?;
                nix::unistd::setgid(nix::unistd::Gid::from_raw(id))?;
                nix::unistd::setuid(nix::unistd::Uid::from_raw(id))?;
            }
            for &fd in &c.close {
                libc::close(fd);
            }
            Ok(())
        });
    }
}

/// Makes a command's process get SIGKILL when this process ends, however it ends (SIGKILL
/// included, when it can stop nothing itself), and inherit `hold`, a descriptor of ours,
/// across exec: a lock held through it stays held while anything the command started lives.
pub fn end_with_this_process(cmd: &mut std::process::Command, hold: Option<std::os::fd::RawFd>) {
    use std::os::unix::process::CommandExt;
    ftrace::die_with_parent(cmd, Signal::SIGKILL);
    if let Some(fd) = hold {
        // SAFETY: the closure runs in the forked child before exec and only makes the
        // async-signal-safe fcntl call, building its error without allocating.
        unsafe {
            cmd.pre_exec(move || {
                if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_gives_the_run_queue_wait() {
        assert_eq!(parse_schedstat_wait("123456 7890 12\n"), Some(7890));
        assert_eq!(parse_schedstat_wait("123456"), None);
        assert_eq!(parse_schedstat_wait(""), None);
        // This process's own, where the kernel keeps it: a number, never a parse failure.
        if std::path::Path::new("/proc/self/schedstat").exists() {
            assert!(run_queue_wait_ns(std::process::id()).is_some());
        }
    }
}
