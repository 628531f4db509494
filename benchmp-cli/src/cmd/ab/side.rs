//! One side's worker process: the command prepared, started, spoken to and stopped.

use super::tally::figure_label;
use super::*;

/// A command split into environment, program and arguments, the program found.
#[derive(Debug)]
pub(super) struct Prepared {
    pub(super) name: &'static str,
    pub(super) text: String,
    pub(super) env: Vec<(String, String)>,
    pub(super) program: PathBuf,
    pub(super) args: Vec<String>,
}

impl Prepared {
    /// Splits a command as a shell would and finds its program; bad input is exit 2.
    pub(super) fn parse(name: &'static str, text: &str) -> Result<Prepared> {
        let bad = |why: String| Usage(format!("{name} '{text}': {why}"));
        let words = shlex::split(text).ok_or_else(|| bad("unbalanced quotes".into()))?;
        let mut env = Vec::new();
        let mut rest = words.into_iter().peekable();
        while let Some(w) = rest.peek() {
            match w.split_once('=') {
                Some((k, v))
                    if !k.is_empty()
                        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && !k.starts_with(|c: char| c.is_ascii_digit()) =>
                {
                    env.push((k.to_string(), v.to_string()));
                    rest.next();
                }
                _ => break,
            }
        }
        let program = rest.next().ok_or_else(|| bad("no program to run".into()))?;
        let path = if program.contains('/') {
            let p = PathBuf::from(&program);
            let meta =
                std::fs::metadata(&p).map_err(|_| bad(format!("{program}: no such file")))?;
            use std::os::unix::fs::PermissionsExt;
            if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
                return Err(bad(format!("{program}: not an executable file")).into());
            }
            p
        } else {
            which::which(&program).map_err(|_| bad(format!("{program}: not found on PATH")))?
        };
        Ok(Prepared {
            name,
            text: text.to_string(),
            env,
            program: path,
            args: rest.collect(),
        })
    }
}

/// Why a side's command could not start: exit 1 with the limit named when this machine ran
/// out of something (processes, descriptors, memory), else bad input (exit 2).
fn start_error(p: &Prepared, e: &std::io::Error) -> anyhow::Error {
    use nix::errno::Errno;
    let limit = match e.raw_os_error().map(Errno::from_raw) {
        Some(Errno::EAGAIN) => Some("the limit on processes (ulimit -u)"),
        Some(Errno::EMFILE) => Some("the limit on open files (ulimit -n)"),
        Some(Errno::ENFILE) => Some("the system's limit on open files"),
        Some(Errno::ENOMEM) => Some("memory (ulimit -v or the machine's)"),
        _ => None,
    };
    match limit {
        Some(limit) => anyhow::anyhow!(
            "{} '{}': cannot start: {limit} is reached ({e})",
            p.name,
            p.text
        ),
        None => Usage(format!("{} '{}': cannot start: {e}", p.name, p.text)).into(),
    }
}

/// One running side.
#[derive(Debug)]
pub(super) struct Worker {
    pub(super) name: &'static str,
    pub(super) text: String,
    /// The program's file name: its error lines may start with it before it says hello.
    pub(super) program: String,
    pub(super) child: Child,
    pub(super) to: File,
    pub(super) from: File,
    pub(super) buf: Vec<u8>,
    pub(super) eof: bool,
    /// Its standard output and errors, in one unnamed file cut back to its tail as it grows.
    pub(super) output: File,
    /// The tool it runs, once it said hello.
    pub(super) tool: Option<String>,
    /// The figures it announced it will measure, in order, if it did.
    pub(super) plan: Option<Vec<String>>,
    pub(super) exit: Option<std::process::ExitStatus>,
    /// Bytes its stack was moved by ([`super::layout`]), the same for both sides of a pair.
    pub(super) stack_offset: usize,
    /// When it was started.
    pub(super) started: Instant,
    /// How long it took from its start to its first measurement's Ready (its buffers mapped
    /// and touched: what a renewal does again).
    pub(super) ready_after: Option<Duration>,
}

/// What listening to a worker gave.
#[derive(Debug)]
pub(super) enum Heard {
    /// One message (boxed: a Ready is a few hundred bytes, the other variants none).
    Message(Box<ToDriver>),
    /// It closed its pipe and exited.
    Ended,
    /// Nothing within the time given.
    Silent,
}

impl Worker {
    /// Starts a command as a worker in its own process group, its program run through
    /// `opened` where it is ([`super::layout::Program`]: every side's exec path and `argv[0]`
    /// alike), with exactly the environment `env`; its standard output and errors kept in an
    /// unnamed file (its tail read for the error line when it fails).
    pub(super) fn spawn(
        p: &Prepared,
        opened: Option<&super::layout::Program>,
        arg0: &std::ffi::OsStr,
        env: &std::collections::BTreeMap<std::ffi::OsString, std::ffi::OsString>,
        aslr: bool,
    ) -> Result<Worker> {
        use nix::fcntl::OFlag;
        // What the driver cannot make for a worker is a failure here (exit 1), never bad input.
        let failed = |e: std::io::Error| match start_error(p, &e).downcast::<Usage>() {
            Ok(_) => anyhow::anyhow!("{} '{}': cannot start: {e}", p.name, p.text),
            Err(limit) => limit,
        };
        let pipe = || nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| failed(e.into()));
        let (to_r, to_w) = pipe()?;
        let (from_r, from_w) = pipe()?;
        let output = benchmp::sys::unnamed::unnamed_file(&format!("benchmp-ab-{}", p.name))
            .map_err(failed)?;
        let mut cmd = match opened {
            Some(_) => Command::new(super::layout::EXEC_PATH),
            None => Command::new(&p.program),
        };
        std::os::unix::process::CommandExt::arg0(&mut cmd, arg0);
        cmd.args(&p.args)
            .env_clear()
            .envs(env)
            .stdin(Stdio::null())
            .stdout(output.try_clone().map_err(failed)?)
            .stderr(output.try_clone().map_err(failed)?);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        // A driver killed outright (SIGKILL, or a suite's entry killed with it) takes its
        // workers along: SIGTERM, so each still kills and reaps its own children.
        ftrace::die_with_parent(&mut cmd, nix::sys::signal::Signal::SIGTERM);
        benchmp::sys::process::pass_fds_and_program(
            &mut cmd,
            to_r.as_raw_fd(),
            from_w.as_raw_fd(),
            opened.map(super::layout::Program::fd),
            !aslr,
        );
        let child = cmd.spawn().map_err(|e| start_error(p, &e))?;
        drop(to_r);
        drop(from_w);
        let from = File::from(from_r);
        set_nonblocking(&from);
        Ok(Worker {
            name: p.name,
            text: p.text.clone(),
            program: p
                .program
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            child,
            to: File::from(to_w),
            from,
            buf: Vec::new(),
            eof: false,
            output,
            tool: None,
            plan: None,
            exit: None,
            stack_offset: 0,
            started: Instant::now(),
            ready_after: None,
        })
    }

    /// Waits for the tool's hello and returns its name. A command that ends first, stays
    /// silent for [`HELLO_TIMEOUT`] or says something else is not a socbench tool (or failed
    /// on its arguments): exit 2 in every case. The time the command waited for a CPU is
    /// added to the timeout (up to [`HELLO_TIMEOUT_MAX`]), so a busy machine that keeps a
    /// tool from starting does not make it a non-tool, while a silent one that sleeps is
    /// refused after the timeout.
    pub(super) fn hello(&mut self) -> Result<String> {
        let not_a_tool = |w: &Worker, why: String| -> anyhow::Error {
            Usage(format!("{} '{}': {why}", w.name, w.text)).into()
        };
        let pid = self.child.id();
        let start = Instant::now();
        let waited = || benchmp::sys::process::run_queue_wait_ns(pid).unwrap_or(0);
        let waited_before = waited();
        let heard = loop {
            match self.listen(Duration::from_millis(250))? {
                Heard::Silent => {
                    let starved = Duration::from_nanos(waited().saturating_sub(waited_before));
                    let limit = (HELLO_TIMEOUT + starved).min(HELLO_TIMEOUT_MAX);
                    if start.elapsed() >= limit {
                        break Heard::Silent;
                    }
                }
                other => break other,
            }
        };
        match heard {
            Heard::Message(m) => match *m {
                ToDriver::Hello { tool, .. } => {
                    let tool = bounded(&tool);
                    self.tool = Some(tool.clone());
                    Ok(tool)
                }
                other => Err(not_a_tool(
                    self,
                    format!(
                        "sent a {} message before its hello: not a socbench tool",
                        kind(&other)
                    ),
                )),
            },
            Heard::Silent => Err(not_a_tool(
                self,
                format!(
                    "said nothing of benchmp's worker protocol within {} s of its start: not a socbench tool; stopped",
                    start.elapsed().as_secs()
                ),
            )),
            Heard::Ended => {
                let why = match (self.exit.and_then(|e| e.code()), self.error_line()) {
                    (Some(2), Some(line)) => line,
                    (_, Some(line)) => format!(
                        "it ended ({}) before speaking benchmp's worker protocol: not a socbench tool? ({line})",
                        self.status_text()
                    ),
                    _ => format!(
                        "it ended ({}) without speaking benchmp's worker protocol: not a socbench tool",
                        self.status_text()
                    ),
                };
                Err(not_a_tool(self, why))
            }
        }
    }

    /// The next measurement it is ready for (repeated hellos of tools that restart their
    /// session are passed over, a plan is kept); `None` when it ended ([`Worker::failed`]
    /// tells how).
    pub(super) fn next_ready(&mut self) -> Result<Option<Ready>> {
        loop {
            match self.recv(READY_TIMEOUT)? {
                Some(ToDriver::Hello { .. }) => {}
                Some(ToDriver::Plan { measurements }) => {
                    self.plan = Some(
                        measurements
                            .iter()
                            .map(|m| figure_label(&m.measurement, m.sizing.as_ref(), &m.params))
                            .collect(),
                    );
                }
                Some(ToDriver::Ready {
                    measurement,
                    metric,
                    params,
                    sizing,
                    cpus,
                    renews,
                    sequential,
                }) => {
                    self.ready_after.get_or_insert(self.started.elapsed());
                    return Ok(Some(Ready {
                        measurement: bounded(&measurement),
                        metric: self.checked_metric(metric)?,
                        params_b: params.clone(),
                        params,
                        sizing,
                        cpus,
                        renews,
                        sequential,
                    }));
                }
                Some(ToDriver::Refused { message }) => {
                    return Err(Usage(format!("{}: {}", self.name, bounded(&message))).into());
                }
                Some(other) => {
                    anyhow::bail!("{}: sent a {} nobody asked for", self.name, kind(&other))
                }
                None => return Ok(None),
            }
        }
    }

    /// A metric a figure can be made of (a positive, finite amount per iteration), its unit
    /// made printable; anything else is not a worker message.
    pub(super) fn checked_metric(&self, metric: Metric) -> Result<Metric> {
        let (per, unit) = match &metric {
            Metric::Rate {
                per_iteration,
                unit,
            }
            | Metric::Latency {
                per_iteration,
                unit,
            } => (*per_iteration, bounded(unit)),
        };
        if !(per.is_finite() && per > 0.0) {
            return Err(Usage(format!(
                "{} '{}': not a worker message: a measurement of {per} per iteration",
                self.name, self.text
            ))
            .into());
        }
        Ok(match metric {
            Metric::Rate { per_iteration, .. } => Metric::Rate {
                per_iteration,
                unit,
            },
            Metric::Latency { per_iteration, .. } => Metric::Latency {
                per_iteration,
                unit,
            },
        })
    }

    /// Sizes the side's count to the repetition length (the other side waits meanwhile).
    pub(super) fn size(&mut self) -> Result<Vec<u64>> {
        self.send(ToWorker::Size)?;
        match self.recv(READY_TIMEOUT)? {
            Some(ToDriver::Sized { counts }) if !counts.is_empty() => Ok(counts),
            Some(other) => anyhow::bail!(
                "{}: answered a size request with a {} message",
                self.name,
                kind(&other)
            ),
            None => Err(self.failed_while("while sizing its count")),
        }
    }

    /// Runs one repetition in every child of the side.
    pub(super) fn step(&mut self, iterations: u64, timeout: Duration) -> Result<Vec<StepSample>> {
        self.send(ToWorker::Step { iterations })?;
        match self.recv(timeout)? {
            Some(ToDriver::Rep { samples })
                if !samples.is_empty() && samples.iter().all(|s| s.iterations > 0) =>
            {
                Ok(samples)
            }
            Some(ToDriver::Rep { .. }) => Err(Usage(format!(
                "{} '{}': not a worker message: a repetition without iterations",
                self.name, self.text
            ))
            .into()),
            Some(other) => anyhow::bail!(
                "{}: answered a step with a {} message",
                self.name,
                kind(&other)
            ),
            None => Err(self.failed_while("during a repetition")),
        }
    }

    /// The error of a side that ended while it was `doing` something asked of it: its exit
    /// status and its own error line.
    fn failed_while(&self, doing: &str) -> anyhow::Error {
        anyhow::anyhow!(
            "{} ({}) failed {doing}: {}",
            self.name,
            self.status_text(),
            self.error_line().unwrap_or_else(|| "(no message)".into())
        )
    }

    /// Gives every child of the side fresh buffers, warmed by one untimed repetition; true
    /// when every child renewed.
    /// How long a renewal may take: four times what getting its first measurement ready did
    /// (mapping and touching its buffers, which a renewal does again) or the last renewal
    /// did, and 5 s; at most [`READY_TIMEOUT`].
    pub(super) fn renew_timeout(&self, last_cost: Option<f64>) -> Duration {
        let ready = self.ready_after.unwrap_or(READY_TIMEOUT);
        let last = Duration::from_secs_f64(last_cost.unwrap_or(0.0).clamp(0.0, 1e6));
        (4 * ready.max(last) + Duration::from_secs(5)).min(READY_TIMEOUT)
    }

    pub(super) fn renew(&mut self, timeout: Duration) -> Result<bool> {
        self.send(ToWorker::Renew)?;
        match self.recv(timeout)? {
            Some(ToDriver::Renewed { renewed }) => Ok(renewed),
            Some(other) => anyhow::bail!(
                "{}: answered a renewal with a {} message",
                self.name,
                kind(&other)
            ),
            None => Err(self.failed_while("while renewing its buffers")),
        }
    }

    pub(super) fn send(&mut self, cmd: ToWorker) -> Result<()> {
        let mut line = serde_json::to_vec(&cmd)?;
        line.push(b'\n');
        self.to
            .write_all(&line)
            .with_context(|| format!("{}: cannot send it a command (did it end?)", self.name))
    }

    pub(super) fn ended(&self) -> bool {
        self.eof && self.exit.is_some()
    }

    /// Notes its exit if it has ended (without reading its pipe).
    pub(super) fn poll_exit(&mut self) {
        if self.exit.is_none()
            && let Ok(Some(status)) = self.child.try_wait()
        {
            self.exit = Some(status);
        }
    }

    /// True once it ended with a failure (an exit status other than 0, or a signal).
    pub(super) fn failed(&self) -> bool {
        self.exit.is_some_and(|e| !e.success())
    }

    /// Its exit status and error line as the report gives them; a worker still running is
    /// stopped (by the drop that follows) because the other side failed.
    pub(super) fn end_now(&self) -> End {
        match self.exit {
            Some(status) => End {
                exit: status.code(),
                signal: self.signal_name(),
                error: (!status.success())
                    .then(|| {
                        self.error_line().or_else(|| {
                            self.signal_name()
                                .map(|s| format!("killed by {s} with no message of its own"))
                        })
                    })
                    .flatten(),
                stopped: false,
            },
            None => End::stopped(),
        }
    }

    /// The signal that ended it (`SIGSEGV`), when one did.
    pub(super) fn signal_name(&self) -> Option<String> {
        use std::os::unix::process::ExitStatusExt;
        let raw = self.exit?.signal()?;
        Some(
            nix::sys::signal::Signal::try_from(raw)
                .map_or_else(|_| format!("signal {raw}"), |s| s.as_str().to_string()),
        )
    }

    /// The next message, or `None` once the worker closed its pipe and exited. Interrupts
    /// and the timeout are errors (the worker is killed with the rest on drop).
    pub(super) fn recv(&mut self, timeout: Duration) -> Result<Option<ToDriver>> {
        match self.listen(timeout)? {
            Heard::Message(m) => Ok(Some(*m)),
            Heard::Ended => Ok(None),
            Heard::Silent => anyhow::bail!(
                "{} '{}' said nothing for {} s; killed",
                self.name,
                self.text,
                timeout.as_secs()
            ),
        }
    }

    /// Waits up to `timeout` for the next message, or for the worker's end. A line that is
    /// no message, or longer than [`MAX_LINE`], is exit 2.
    pub(super) fn listen(&mut self, timeout: Duration) -> Result<Heard> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(sig) = benchmp::sys::process::interrupted() {
                return Err(benchmp::Error::Interrupted(sig).into());
            }
            if let Some(pos) = self.buf.iter().position(|&c| c == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                return match serde_json::from_slice(&line) {
                    Ok(msg) => Ok(Heard::Message(Box::new(msg))),
                    Err(_) => Err(self.not_a_message(&line, "")),
                };
            }
            if self.buf.len() > MAX_LINE {
                let why = format!(" (a line of over {} MiB)", MAX_LINE >> 20);
                return Err(self.not_a_message(&self.buf.clone(), &why));
            }
            if self.eof {
                self.exit = Some(self.child.wait().context("waitpid")?);
                self.end_group();
                return Ok(Heard::Ended);
            }
            // The worker itself ended, though its pipe is still open: a process it left
            // behind holds the pipe's end (descriptor 4). What it wrote is read, then
            // everything left of its group is killed, which closes the pipe.
            if let Some(status) = self.child.try_wait().context("waitpid")? {
                self.exit = Some(status);
                self.fill()?;
                if !self.buf.contains(&b'\n') {
                    self.end_group();
                    self.eof = true;
                    return Ok(Heard::Ended);
                }
                continue;
            }
            if Instant::now() >= deadline {
                return Ok(Heard::Silent);
            }
            self.fill()?;
        }
    }

    /// Kills what is left of the worker's process group once the worker has ended (a
    /// command's background processes, which must not outlive it, nor hold its pipes).
    fn end_group(&self) {
        let pg = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGKILL);
    }

    /// Exit 2 for what a worker sent that is not a message, with a short excerpt of it.
    pub(super) fn not_a_message(&self, line: &[u8], why: &str) -> anyhow::Error {
        let what = if self.tool.is_some() {
            "not a worker message"
        } else {
            "not a socbench tool: not a worker message"
        };
        Usage(format!(
            "{} '{}': {what}{why}: {}",
            self.name,
            self.text,
            foundation::error::excerpt(line.trim_ascii_end(), 60)
        ))
        .into()
    }

    /// Reads what is there (up to a little over [`MAX_LINE`] unread), waiting up to 100 ms
    /// for it, and cuts the worker's output file back to its tail when it grew long.
    pub(super) fn fill(&mut self) -> Result<()> {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        use std::os::fd::AsFd;
        let mut fds = [PollFd::new(self.from.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(100u16)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(e).context("poll"),
        }
        let _ = benchmp::sys::unnamed::keep_tail(&self.output, OUTPUT_LIMIT, OUTPUT_TAIL);
        let mut chunk = vec![0u8; 65536];
        while self.buf.len() <= MAX_LINE {
            match self.from.read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(()),
                Err(e) => return Err(e).context("reading a worker's pipe"),
            }
        }
        Ok(())
    }

    /// Waits for it to end; its exit status and error line.
    pub(super) fn finish(&mut self) -> Result<End> {
        let deadline = Instant::now() + READY_TIMEOUT;
        while self
            .recv(deadline.saturating_duration_since(Instant::now()))?
            .is_some()
        {}
        Ok(self.end_now())
    }

    pub(super) fn status_text(&self) -> String {
        match self.exit {
            Some(e) if e.code().is_some() => format!("exit status {}", e.code().unwrap_or(0)),
            Some(_) => self.signal_name().unwrap_or_else(|| "a signal".into()),
            None => "still running".into(),
        }
    }

    /// Why it failed, from the tail of its output: its last error line (one starting with
    /// its tool's or program's name, not a note or warning), else its noise verdict (a run
    /// refused as noisy, `--fail-on-noise`), else its last line; shortened and printable.
    pub(super) fn error_line(&self) -> Option<String> {
        let tail = benchmp::sys::unnamed::tail(&self.output, OUTPUT_TAIL).ok()?;
        let text = String::from_utf8_lossy(&tail);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .collect();
        let prefixes: Vec<String> = self
            .tool
            .iter()
            .chain(std::iter::once(&self.program))
            .filter(|p| !p.is_empty())
            .map(|p| format!("{p}: "))
            .collect();
        let own = |l: &&&str| prefixes.iter().any(|p| l.starts_with(p.as_str()));
        let after = |l: &str| {
            let p = prefixes.iter().find(|p| l.starts_with(p.as_str()));
            l[p.map_or(0, |p| p.len())..].to_string()
        };
        let is = |l: &str, what: &str| after(l).starts_with(what);
        let error = lines
            .iter()
            .rev()
            .filter(own)
            .find(|l| !is(l, "note:") && !is(l, "warning:") && !is(l, "noisy:"));
        let noisy = lines.iter().filter(own).find(|l| is(l, "noisy:"));
        let line = match (error, noisy) {
            (Some(l), _) => l.to_string(),
            (None, Some(l)) => format!("its run was judged noisy and refused ({l})"),
            // A socbench tool's own lines are data or notes, never its error: only a command
            // that never said hello gets its last line quoted.
            (None, None) if self.tool.is_none() => lines.last()?.to_string(),
            (None, None) => return None,
        };
        Some(bounded(&line))
    }
}

impl Drop for Worker {
    /// A worker still running when the driver gives up is killed with its children (its
    /// process group: SIGTERM, so it reaps them, then SIGKILL) and reaped.
    fn drop(&mut self) {
        if self.exit.is_none() {
            let pg = nix::unistd::Pid::from_raw(self.child.id() as i32);
            let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                match self.child.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() >= deadline => {
                        let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGKILL);
                        let _ = self.child.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            // Its children die with it (they are tied to its life), but the group may hold
            // stragglers: make sure.
            let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// A message's kind, for an error about it (its content may be anything a worker sent).
pub(super) fn kind(m: &ToDriver) -> &'static str {
    match m {
        ToDriver::Hello { .. } => "hello",
        ToDriver::Ready { .. } => "ready",
        ToDriver::Sized { .. } => "sized",
        ToDriver::Rep { .. } => "repetition",
        ToDriver::Refused { .. } => "refused",
        ToDriver::Plan { .. } => "plan",
        ToDriver::Renewed { .. } => "renewed",
    }
}

/// A worker's text as a message or the table shows it: control characters escaped, at most
/// [`SHOWN`] characters.
pub(super) fn bounded(text: &str) -> String {
    let shown = foundation::error::printable(text);
    let mut chars = shown.chars();
    let mut out: String = chars.by_ref().take(SHOWN).collect();
    if chars.next().is_some() {
        out.push_str("...");
    }
    out
}

pub(super) fn set_nonblocking(f: &File) {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    if let Ok(flags) = fcntl(f, FcntlArg::F_GETFL) {
        let _ = fcntl(
            f,
            FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK),
        );
    }
}

/// A small deterministic generator for the order within pairs (xorshift64*).
#[derive(Debug)]
pub(super) struct XorShift(pub(super) u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub(super) fn coin(&mut self) -> bool {
        (self.next() >> 63) == 1
    }

    /// A number below `n` (> 0).
    pub(super) fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 32) as usize) % n.max(1)
    }
}
