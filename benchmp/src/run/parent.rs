//! The parent's side of a run: fork the children, drive lmbench's protocol, watch for deaths,
//! hangs and interrupts, and leave nothing behind whatever happens.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::Signal;
use nix::unistd::Pid;

use super::protocol::{self, EXIT, GO, RESULT, Up};
use super::{Benchmark, ChildInfo, ChildRun, Data, Ran, RunConfig, Who, child};
use crate::error::{Error, Stage};
use crate::sys::clock::now_ns;
use crate::sys::process::{self, Exit, Forked, InterruptGuard};

/// Where a child is in the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum State {
    Starting,
    Ready,
    Done,
    Reported,
}

impl State {
    /// The stage a child that dies in this state died in.
    fn stage(self) -> Stage {
        match self {
            State::Starting => Stage::Setup,
            State::Ready | State::Done => Stage::Measuring,
            State::Reported => Stage::AfterReporting,
        }
    }
}

/// The parent's view of one child.
#[derive(Debug)]
struct Kid<S, C> {
    who: Who,
    pid: Pid,
    up: File,
    down: File,
    buf: Vec<u8>,
    state: State,
    last_heard: Instant,
    longest_ns: u64,
    result: Option<ChildRun<S, C>>,
    eof: bool,
    reaped: Option<Exit>,
}

/// Runs the measurement: forks one child per placement entry (each pins itself, builds its
/// benchmark with `make`, sizes its count, waits for the common start, runs its timed
/// intervals and reports), then returns the results in index order and the run's start and
/// end. On any failure every child is killed and reaped before the error is returned.
pub fn run<B, F>(cfg: &RunConfig, mut make: F) -> Result<Ran<B::Sample, B::Child>, Error>
where
    B: Benchmark,
    F: FnMut(&ChildInfo) -> anyhow::Result<B>,
{
    let span = tracing::info_span!("run", label = %cfg.label, parallel = cfg.placement.len());
    let _g = span.enter();
    let start_ns = now_ns();
    let parent = nix::unistd::getpid();
    let guard = InterruptGuard::install();
    let mut kids: Vec<Kid<B::Sample, B::Child>> = Vec::new();
    for (index, &cpu) in cfg.placement.iter().enumerate() {
        let who = Who { index, cpu };
        match spawn(cfg, who, parent, &mut make, &mut kids) {
            Ok(k) => kids.push(k),
            Err(e) => {
                abort_all(&mut kids);
                return Err(e);
            }
        }
    }
    let outcome = drive(cfg, &mut kids);
    drop(guard);
    match outcome {
        Ok(()) => Ok(Ran {
            children: kids.into_iter().filter_map(|k| k.result).collect(),
            start_ns,
            end_ns: now_ns(),
        }),
        Err(e) => {
            abort_all(&mut kids);
            Err(e)
        }
    }
}

/// Forks one child with its two pipes. The child never returns from here.
fn spawn<B, F>(
    cfg: &RunConfig,
    who: Who,
    parent: Pid,
    make: &mut F,
    earlier: &mut Vec<Kid<B::Sample, B::Child>>,
) -> Result<Kid<B::Sample, B::Child>, Error>
where
    B: Benchmark,
    F: FnMut(&ChildInfo) -> anyhow::Result<B>,
{
    let pipe = || {
        nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|source| Error::Sys {
            what: "pipe",
            source,
        })
    };
    let (up_r, up_w) = pipe()?;
    let (down_r, down_w) = pipe()?;
    match process::fork_process().map_err(|source| Error::Fork { child: who, source })? {
        Forked::Child => {
            // The earlier children's parent-side pipe ends came along with the fork: close
            // them, or those children would not see EOF when the parent goes away.
            earlier.clear();
            drop(up_r);
            drop(down_w);
            process::child_setup(parent);
            protocol::set_nonblocking(&down_r);
            let info = ChildInfo {
                index: who.index,
                cpu: who.cpu,
                parallel: cfg.placement.len(),
            };
            child::main(cfg, info, File::from(up_w), File::from(down_r), make)
        }
        Forked::Parent(pid) => {
            drop(up_w);
            drop(down_r);
            protocol::set_nonblocking(&up_r);
            Ok(Kid {
                who,
                pid,
                up: File::from(up_r),
                down: File::from(down_w),
                buf: Vec::new(),
                state: State::Starting,
                last_heard: Instant::now(),
                longest_ns: 0,
                result: None,
                eof: false,
                reaped: None,
            })
        }
    }
}

/// Kills and reaps every child still around; nothing is left behind, not even a zombie.
fn abort_all<S, C>(kids: &mut [Kid<S, C>]) {
    for k in kids.iter() {
        if k.reaped.is_none() {
            process::kill(k.pid, Signal::SIGKILL);
        }
    }
    for k in kids.iter_mut() {
        if k.reaped.is_none() {
            k.reaped = Some(process::reap(k.pid, Duration::from_secs(5)));
        }
    }
}

/// Sends a control byte; the child's silence is counted from here on.
fn send_byte<S, C>(k: &mut Kid<S, C>, b: u8) -> Result<(), Error> {
    k.last_heard = Instant::now();
    k.down.write_all(&[b]).map_err(|_| Error::ChildGone {
        child: k.who,
        stage: k.state.stage(),
    })
}

/// lmbench's sequence: all ready, warmup, GO, all done, RESULT, all reported, EXIT, reap.
/// Sequential runs give each child its GO only after the one before it is done.
fn drive<S: Data, C: Data>(cfg: &RunConfig, kids: &mut [Kid<S, C>]) -> Result<(), Error> {
    pump(cfg, kids, |k| k.state >= State::Ready, None)?;
    if cfg.warmup_us > 0 {
        let until = Instant::now() + Duration::from_micros(cfg.warmup_us);
        pump(cfg, kids, |_| false, Some(until))?;
    }
    if cfg.sequential {
        for i in 0..kids.len() {
            send_byte(&mut kids[i], GO)?;
            pump(
                cfg,
                kids,
                |k| k.who.index != i || k.state >= State::Done,
                None,
            )?;
        }
    } else {
        for k in kids.iter_mut() {
            send_byte(k, GO)?;
        }
        pump(cfg, kids, |k| k.state >= State::Done, None)?;
    }
    for k in kids.iter_mut() {
        send_byte(k, RESULT)?;
    }
    pump(cfg, kids, |k| k.state >= State::Reported, None)?;
    for k in kids.iter_mut() {
        let _ = k.down.write_all(&[EXIT]);
    }
    for k in kids.iter_mut() {
        let exit = process::reap(k.pid, Duration::from_secs(10));
        k.reaped = Some(exit);
        if exit != Exit::Code(0) {
            return Err(Error::ChildDied {
                child: k.who,
                exit,
                stage: Stage::AfterReporting,
            });
        }
    }
    Ok(())
}

/// Reads children's messages until every child satisfies `done` (or `until` passes), failing
/// on an interrupt, a child's error, a child's death or a child that stays silent too long.
fn pump<S: Data, C: Data>(
    cfg: &RunConfig,
    kids: &mut [Kid<S, C>],
    done: impl Fn(&Kid<S, C>) -> bool,
    until: Option<Instant>,
) -> Result<(), Error> {
    loop {
        if let Some(sig) = process::interrupted() {
            return Err(Error::Interrupted(sig));
        }
        match until {
            None if kids.iter().all(&done) => return Ok(()),
            Some(t) if Instant::now() >= t => return Ok(()),
            _ => {}
        }
        let wait = until
            .map(|t| t.saturating_duration_since(Instant::now()).as_millis())
            .unwrap_or(100)
            .min(100) as u16;
        for i in readable(kids, wait)? {
            listen(&mut kids[i])?;
        }
        for k in kids.iter() {
            if done(k) || k.state == State::Reported {
                continue;
            }
            let limit = cfg.child_timeout + Duration::from_nanos(k.longest_ns.saturating_mul(4));
            if k.last_heard.elapsed() > limit {
                return Err(Error::ChildHung {
                    child: k.who,
                    secs: k.last_heard.elapsed().as_secs(),
                });
            }
        }
    }
}

/// Indexes of the children whose pipes have something to read (or hung up), waiting up to
/// `wait_ms`.
fn readable<S, C>(kids: &[Kid<S, C>], wait_ms: u16) -> Result<Vec<usize>, Error> {
    let (mut fds, map): (Vec<PollFd>, Vec<usize>) = kids
        .iter()
        .enumerate()
        .filter(|(_, k)| !k.eof)
        .map(|(i, k)| (PollFd::new(k.up.as_fd(), PollFlags::POLLIN), i))
        .unzip();
    match poll(&mut fds, PollTimeout::from(wait_ms)) {
        Ok(_) => Ok(fds
            .iter()
            .zip(map)
            .filter(|(fd, _)| fd.revents().is_some_and(|r| !r.is_empty()))
            .map(|(_, i)| i)
            .collect()),
        Err(nix::errno::Errno::EINTR) => Ok(Vec::new()),
        Err(source) => Err(Error::Sys {
            what: "poll",
            source,
        }),
    }
}

/// Reads what one child sent and acts on it; a failure report or an early end is an error.
fn listen<S: Data, C: Data>(k: &mut Kid<S, C>) -> Result<(), Error> {
    let mut chunk = [0u8; 65536];
    loop {
        match k.up.read(&mut chunk) {
            Ok(0) => {
                k.eof = true;
                break;
            }
            Ok(n) => {
                k.buf.extend_from_slice(&chunk[..n]);
                k.last_heard = Instant::now();
            }
            Err(_) => break,
        }
    }
    let msgs = protocol::decode(&mut k.buf).map_err(|source| Error::Protocol {
        child: k.who,
        source,
    })?;
    for msg in msgs {
        match msg {
            Up::Ready => k.state = k.state.max(State::Ready),
            Up::Progress { elapsed_ns } => k.longest_ns = k.longest_ns.max(elapsed_ns),
            Up::Done => k.state = k.state.max(State::Done),
            Up::Result(r) => {
                k.state = State::Reported;
                k.result = Some(*r);
            }
            Up::Failed { code, message } => {
                k.reaped = Some(process::reap(k.pid, Duration::from_secs(5)));
                return Err(Error::ChildError {
                    child: k.who,
                    code,
                    message,
                });
            }
        }
    }
    if k.eof && k.state < State::Reported {
        if let Some(sig) = process::interrupted() {
            return Err(Error::Interrupted(sig));
        }
        let exit = process::reap(k.pid, Duration::from_secs(5));
        k.reaped = Some(exit);
        if let Exit::Signal(s @ (Signal::SIGINT | Signal::SIGTERM | Signal::SIGHUP)) = exit {
            return Err(Error::Interrupted(s));
        }
        return Err(Error::ChildDied {
            child: k.who,
            exit,
            stage: k.state.stage(),
        });
    }
    Ok(())
}
