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

use super::protocol::{
    self, EXIT, GO, LOAD, PAUSE, RENEW, RESULT, SIZE, START, STEP, STOP, Up, WINDOW,
};
use super::worker::{self, StepSample, ToDriver, ToWorker};
use super::{Benchmark, ChildInfo, ChildRun, Data, LoadRun, Ran, Role, RunConfig, Who, child};
use super::{Error, Stage};
use crate::beside::{Beside, Nothing};
use crate::sys::clock::now_ns;
use crate::sys::process::{self, Exit, Forked, InterruptGuard};

/// Where a child is in the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum State {
    Starting,
    Ready,
    Loading,
    Armed,
    Done,
    Reported,
}

impl State {
    /// The stage a child that dies in this state died in.
    fn stage(self) -> Stage {
        match self {
            State::Starting => Stage::Setup,
            State::Ready | State::Loading | State::Armed | State::Done => Stage::Measuring,
            State::Reported => Stage::AfterReporting,
        }
    }
}

/// The parent's view of one child.
#[derive(Debug)]
struct Kid<S, C> {
    who: Who,
    role: Role,
    pid: Pid,
    up: File,
    down: File,
    buf: Vec<u8>,
    state: State,
    last_heard: Instant,
    longest_ns: u64,
    result: Option<ChildRun<S, C>>,
    load: Option<LoadRun>,
    eof: bool,
    reaped: Option<Exit>,
    /// Worker mode: the count it sized.
    count: Option<u64>,
    /// Worker mode: the sample of the step under way, once it arrives.
    stepped: Option<StepSample>,
    /// Worker mode: its answer to the renewal under way, once it arrives.
    renewed: Option<bool>,
    /// A load child between Loading and Paused.
    loading: bool,
}

/// Runs the measurement: forks one child per placement entry (each pins itself, builds its
/// benchmark with `make`, sizes its count, waits for the common start, runs its timed
/// intervals and reports), then returns the results in index order and the run's start and
/// end. On any failure every child is killed and reaped before the error is returned.
pub fn run<B, F>(cfg: &RunConfig, make: F) -> Result<Ran<B::Sample, B::Child>, Error>
where
    B: Benchmark,
    F: super::Make<B>,
{
    let idle = |_: &ChildInfo| -> Result<Idle, super::BuildError> {
        Err("a run without load children has no load to build".into())
    };
    run_beside(cfg, make, idle, &mut Nothing)
}

/// The load of a run that has none (never built).
#[derive(Debug)]
pub struct Idle;

impl Benchmark for Idle {
    type Sample = ();
    type Child = ();

    fn run(&mut self, _iterations: u64) -> u64 {
        0
    }
}

/// [`run`] with load children: one per `cfg.loads` entry, each building its benchmark with
/// `make_load`, loading from before the measuring children's first timed interval until
/// after their last, and reporting what it did over exactly their window; and with `beside`
/// told when the timed window opens and closes and ticked from the parent's poll loop
/// meanwhile (the power sampler), after every child is forked.
pub fn run_beside<B, F, L, G>(
    cfg: &RunConfig,
    mut make: F,
    mut make_load: G,
    beside: &mut dyn Beside,
) -> Result<Ran<B::Sample, B::Child>, Error>
where
    B: Benchmark,
    F: super::Make<B>,
    L: Benchmark,
    G: super::Make<L>,
{
    let span = tracing::info_span!("run", label = %cfg.label, parallel = cfg.placement.len());
    let _g = span.enter();
    let start_ns = now_ns();
    let parent = nix::unistd::getpid();
    let guard = InterruptGuard::install();
    let mut kids: Vec<Kid<B::Sample, B::Child>> = Vec::new();
    let roles = cfg
        .placement
        .iter()
        .map(|&cpu| (cpu, Role::Measure))
        .chain(cfg.loads.iter().map(|&cpu| (cpu, Role::Load)));
    for (index, (cpu, role)) in roles.enumerate() {
        let who = Who { index, cpu };
        let info = ChildInfo {
            index,
            cpu,
            parallel: cfg.placement.len(),
            role,
        };
        let forked = match role {
            Role::Measure => spawn(who, parent, &mut kids, |up, down| {
                child::main(cfg, info, up, down, &mut make)
            }),
            Role::Load => spawn(who, parent, &mut kids, |up, down| {
                child::load_main::<L, B::Sample, B::Child>(info, up, down, &mut make_load)
            }),
        };
        match forked {
            Ok(mut k) => {
                k.role = role;
                kids.push(k);
            }
            Err(e) => {
                abort_all(&mut kids);
                return Err(e);
            }
        }
    }
    let outcome = drive(cfg, &mut kids, beside, B::RENEWS);
    drop(guard);
    match outcome {
        Ok(()) => {
            let loads = kids.iter_mut().filter_map(|k| k.load.take()).collect();
            Ok(Ran {
                children: kids.into_iter().filter_map(|k| k.result).collect(),
                loads,
                start_ns,
                end_ns: now_ns(),
            })
        }
        Err(e) => {
            abort_all(&mut kids);
            Err(e)
        }
    }
}

/// Forks one child with its two pipes; in the child, `body` runs and never returns.
fn spawn<S, C>(
    who: Who,
    parent: Pid,
    earlier: &mut Vec<Kid<S, C>>,
    body: impl FnOnce(File, File),
) -> Result<Kid<S, C>, Error> {
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
            body(File::from(up_w), File::from(down_r));
            // A child's body ends the process itself; this is only a backstop.
            process::exit_now(crate::error::EXIT_FAILED)
        }
        Forked::Parent(pid) => {
            drop(up_w);
            drop(down_r);
            protocol::set_nonblocking(&up_r);
            Ok(Kid {
                who,
                role: Role::Measure,
                pid,
                up: File::from(up_r),
                down: File::from(down_w),
                buf: Vec::new(),
                state: State::Starting,
                last_heard: Instant::now(),
                longest_ns: 0,
                result: None,
                load: None,
                eof: false,
                reaped: None,
                count: None,
                stepped: None,
                renewed: None,
                loading: false,
            })
        }
    }
}

/// How long a child that has reported may take to exit before it is killed (and the run
/// fails, naming it). Its exit only frees its buffers, yet a child of `bw_mem -P 6 64m cp` in
/// the emulated arm64 guest of the device test, its host busy, was still exiting at 10 s (the
/// earlier grace) and was killed with a complete figure in hand.
const EXIT_GRACE: Duration = Duration::from_secs(60);

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
/// Sequential runs give each child its GO only after the one before it is done. Load
/// children get LOAD before any GO and, once every measuring child has reported, the
/// measuring window with WINDOW; they report last.
fn drive<S: Data, C: Data>(
    cfg: &RunConfig,
    kids: &mut [Kid<S, C>],
    beside: &mut dyn Beside,
    renews: bool,
) -> Result<(), Error> {
    let load = |k: &Kid<S, C>| k.role == Role::Load;
    pump(cfg, kids, beside, |k| k.state >= State::Ready, None)?;
    if cfg.warmup_us > 0 {
        let until = Instant::now() + Duration::from_micros(cfg.warmup_us);
        pump(cfg, kids, beside, |_| false, Some(until))?;
    }
    // In worker mode the loads run only during their side's repetitions (steps() wakes them).
    if cfg.paced.is_none() {
        for k in kids.iter_mut().filter(|k| load(k)) {
            send_byte(k, LOAD)?;
        }
        pump(
            cfg,
            kids,
            beside,
            |k| !load(k) || k.state >= State::Loading,
            None,
        )?;
    }
    beside.opened();
    // A worker's steps run sequential children in turn themselves.
    if cfg.sequential && cfg.paced.is_none() {
        for i in measuring(kids) {
            send_byte(&mut kids[i], GO)?;
            pump(
                cfg,
                kids,
                beside,
                |k| load(k) || k.who.index != i || k.state >= State::Done,
                None,
            )?;
        }
    } else {
        for k in kids.iter_mut().filter(|k| !load(k)) {
            send_byte(k, GO)?;
        }
        if cfg.starts_together() {
            pump(
                cfg,
                kids,
                beside,
                |k| load(k) || k.state >= State::Armed,
                None,
            )?;
            for k in kids.iter_mut().filter(|k| !load(k)) {
                send_byte(k, START)?;
            }
        }
        if let Some(paced) = &cfg.paced {
            steps(cfg, paced, renews, kids, beside)?;
        }
        pump(
            cfg,
            kids,
            beside,
            |k| load(k) || k.state >= State::Done,
            None,
        )?;
    }
    beside.closed();
    for k in kids.iter_mut().filter(|k| !load(k)) {
        send_byte(k, RESULT)?;
    }
    pump(
        cfg,
        kids,
        beside,
        |k| load(k) || k.state >= State::Reported,
        None,
    )?;
    if let Some((start, end)) = measuring_window(kids) {
        let mut msg = vec![WINDOW];
        msg.extend_from_slice(&start.to_le_bytes());
        msg.extend_from_slice(&end.to_le_bytes());
        for k in kids.iter_mut().filter(|k| load(k)) {
            k.last_heard = Instant::now();
            k.down.write_all(&msg).map_err(|_| Error::ChildGone {
                child: k.who,
                stage: k.state.stage(),
            })?;
        }
        pump(cfg, kids, beside, |k| k.state >= State::Reported, None)?;
    }
    for k in kids.iter_mut() {
        let _ = k.down.write_all(&[EXIT]);
    }
    for k in kids.iter_mut() {
        let asked = Instant::now();
        let exit = process::reap(k.pid, EXIT_GRACE);
        k.reaped = Some(exit);
        if exit == Exit::Signal(Signal::SIGKILL) && asked.elapsed() >= EXIT_GRACE {
            // Killed by the reap at the end of the grace, not dead of its own accord.
            return Err(Error::ChildHung {
                child: k.who,
                secs: EXIT_GRACE.as_secs(),
            });
        }
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

/// Positions of the measuring children (not the load children) in `kids`.
fn measuring<S, C>(kids: &[Kid<S, C>]) -> Vec<usize> {
    (0..kids.len())
        .filter(|&i| kids[i].role != Role::Load)
        .collect()
}

/// Worker mode: tells the driver the children are ready, then runs one repetition in every
/// child per STEP it sends, answering with their samples, until STOP.
fn steps<S: Data, C: Data>(
    cfg: &RunConfig,
    paced: &super::Paced,
    renews: bool,
    kids: &mut [Kid<S, C>],
    beside: &mut dyn Beside,
) -> Result<(), Error> {
    let link = |e: worker::LinkError| Error::Driver(e.to_string());
    let load = |k: &Kid<S, C>| k.role == Role::Load;
    worker::send(&ToDriver::Ready {
        measurement: cfg.label.clone(),
        metric: paced.metric.clone(),
        params: paced.params.clone(),
        sizing: Some(paced.sizing.clone()),
        cpus: kids
            .iter()
            .filter(|k| !load(k))
            .map(|k| k.who.cpu)
            .collect(),
        renews,
        sequential: cfg.sequential,
    })
    .map_err(link)?;
    loop {
        wait_for_command(kids)?;
        match worker::next().map_err(link)? {
            ToWorker::Size => {
                loads_on(cfg, kids, beside, true)?;
                for k in kids.iter_mut().filter(|k| !load(k)) {
                    k.count = None;
                    send_byte(k, SIZE)?;
                }
                pump(cfg, kids, beside, |k| load(k) || k.count.is_some(), None)?;
                loads_on(cfg, kids, beside, false)?;
                let counts = kids
                    .iter()
                    .filter(|k| !load(k))
                    .map(|k| k.count.unwrap_or(1))
                    .collect();
                worker::send(&ToDriver::Sized { counts }).map_err(link)?;
            }
            ToWorker::Step { iterations } => {
                // A count no repetition can run (a tool's own counters would overflow) is
                // the driver's mistake, refused here rather than in the children.
                if iterations > crate::timing::MAX_ITERATIONS {
                    return Err(Error::Driver(format!(
                        "the driver asked for {iterations} iterations per child; a repetition runs at most {} (2^48)",
                        crate::timing::MAX_ITERATIONS
                    )));
                }
                loads_on(cfg, kids, beside, true)?;
                let mut msg = vec![STEP];
                msg.extend_from_slice(&iterations.to_le_bytes());
                // All children at once; with --sequential one after another, as the tool
                // itself times them (their figures are then averaged, not added).
                let rounds: Vec<Vec<usize>> = if cfg.sequential {
                    measuring(kids).into_iter().map(|i| vec![i]).collect()
                } else {
                    vec![measuring(kids)]
                };
                for round in rounds {
                    for &i in &round {
                        let k = &mut kids[i];
                        k.stepped = None;
                        k.last_heard = Instant::now();
                        k.down.write_all(&msg).map_err(|_| Error::ChildGone {
                            child: k.who,
                            stage: k.state.stage(),
                        })?;
                    }
                    pump(
                        cfg,
                        kids,
                        beside,
                        |k| load(k) || !round.contains(&k.who.index) || k.stepped.is_some(),
                        None,
                    )?;
                }
                loads_on(cfg, kids, beside, false)?;
                let samples = kids.iter_mut().filter_map(|k| k.stepped.take()).collect();
                worker::send(&ToDriver::Rep { samples }).map_err(link)?;
            }
            ToWorker::Renew => {
                for k in kids.iter_mut().filter(|k| !load(k)) {
                    k.renewed = None;
                    k.last_heard = Instant::now();
                    send_byte(k, RENEW)?;
                }
                pump(cfg, kids, beside, |k| load(k) || k.renewed.is_some(), None)?;
                let renewed = kids
                    .iter()
                    .filter(|k| !load(k))
                    .all(|k| k.renewed == Some(true));
                worker::send(&ToDriver::Renewed { renewed }).map_err(link)?;
            }
            ToWorker::Stop => break,
        }
    }
    for k in kids.iter_mut().filter(|k| !load(k)) {
        send_byte(k, STOP)?;
    }
    Ok(())
}

/// Worker mode: wakes the load children (LOAD) or puts them to sleep (PAUSE) and waits until
/// each says it did, so that a load runs during its own side's repetitions and never during
/// the other side's.
fn loads_on<S: Data, C: Data>(
    cfg: &RunConfig,
    kids: &mut [Kid<S, C>],
    beside: &mut dyn Beside,
    on: bool,
) -> Result<(), Error> {
    let load = |k: &Kid<S, C>| k.role == Role::Load;
    for k in kids.iter_mut().filter(|k| load(k)) {
        // Asleep since its last repetition: its silence was no hang.
        k.last_heard = Instant::now();
        send_byte(k, if on { LOAD } else { PAUSE })?;
    }
    pump(cfg, kids, beside, |k| !load(k) || k.loading == on, None)
}

/// Waits until the driver's next command is there, watching the children meanwhile (a child
/// that dies or an interrupt ends the wait with its error; silence is no hang here: the
/// children wait for the command too).
fn wait_for_command<S: Data, C: Data>(kids: &mut [Kid<S, C>]) -> Result<(), Error> {
    let Some(cmd) = worker::command_fd() else {
        return Ok(());
    };
    loop {
        if let Some(sig) = process::interrupted() {
            return Err(Error::Interrupted(sig));
        }
        if worker::has_buffered_command() {
            return Ok(());
        }
        let mut fds: Vec<PollFd> = vec![PollFd::new(cmd, PollFlags::POLLIN)];
        let map: Vec<usize> = (0..kids.len()).filter(|&i| !kids[i].eof).collect();
        fds.extend(
            map.iter()
                .map(|&i| PollFd::new(kids[i].up.as_fd(), PollFlags::POLLIN)),
        );
        match poll(&mut fds, PollTimeout::from(100u16)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(source) => {
                return Err(Error::Sys {
                    what: "poll",
                    source,
                });
            }
        }
        let ready = |fd: &PollFd| fd.revents().is_some_and(|r| !r.is_empty());
        let kids_ready: Vec<usize> = fds[1..]
            .iter()
            .zip(&map)
            .filter(|(fd, _)| ready(fd))
            .map(|(_, &i)| i)
            .collect();
        let command = ready(&fds[0]);
        for i in kids_ready {
            listen(&mut kids[i])?;
            kids[i].last_heard = Instant::now();
        }
        if command {
            return Ok(());
        }
    }
}

/// First timed interval's start to the last one's end over every measuring child.
fn measuring_window<S, C>(kids: &[Kid<S, C>]) -> Option<(u64, u64)> {
    let samples = kids
        .iter()
        .filter_map(|k| k.result.as_ref())
        .flat_map(|r| r.samples.iter());
    let start = samples.clone().map(|s| s.start_ns).min()?;
    let end = samples.map(|s| s.start_ns + s.elapsed_ns).max()?;
    Some((start, end))
}

/// Reads children's messages until every child satisfies `done` (or `until` passes), failing
/// on an interrupt, a child's error, a child's death or a child that stays silent too long.
fn pump<S: Data, C: Data>(
    cfg: &RunConfig,
    kids: &mut [Kid<S, C>],
    beside: &mut dyn Beside,
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
        let due = beside.due_in();
        if due == Some(Duration::ZERO) {
            beside.tick();
            continue;
        }
        let wait = until
            .map(|t| t.saturating_duration_since(Instant::now()).as_millis())
            .unwrap_or(100)
            .min(due.map_or(100, |d| d.as_millis().max(1)))
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
            Up::Armed => k.state = k.state.max(State::Armed),
            Up::Progress { elapsed_ns } => k.longest_ns = k.longest_ns.max(elapsed_ns),
            Up::Sized { count } => k.count = Some(count),
            Up::Stepped(step) => {
                k.longest_ns = k.longest_ns.max(step.elapsed_ns);
                k.stepped = Some(step);
            }
            Up::Done => k.state = k.state.max(State::Done),
            Up::Result(r) => {
                k.state = State::Reported;
                k.result = Some(*r);
            }
            Up::Loading => {
                k.state = k.state.max(State::Loading);
                k.loading = true;
            }
            Up::Paused => k.loading = false,
            Up::Renewed { renewed } => k.renewed = Some(renewed),
            Up::Alive => {}
            Up::Load(r) => {
                k.state = State::Reported;
                k.load = Some(*r);
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
