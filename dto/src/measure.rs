//! One A/B cell measured as the DTO guide describes: PERF_AB_ROUNDS forked children, each
//! pinned, loading both implementations itself (so a library initialises from the variables
//! the parent set before the fork), warming up both, then timing both on every iteration in an
//! order drawn by xorshift32, with optional cache flushing and page-fault injection. Samples
//! come back through a MAP_SHARED mapping the parent reads after reaping the child.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::atomic::{Ordering, compiler_fence};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use benchmp::sys::process::{self, Exit, Forked};

use crate::bench::{Bench, Config, Op, PageKind};
use crate::impls;
use crate::kernels::MemFns;
use crate::sys::{self, Shared};

/// Untimed iterations of both implementations before measuring.
pub const WARMUP_ITERS: u32 = 100;
/// Byte written by memset.
pub const MEMSET_BYTE: i32 = 0xA5;

/// Words of the shared header: status, sample count, exit code, message length, message.
const HEADER: usize = 4 + MSG_WORDS;
const MSG_WORDS: usize = 128;
const STATUS_OK: u64 = 1;
const STATUS_ERR: u64 = 2;

/// What one cell measures.
#[derive(Debug, Clone)]
pub struct CellPlan<'a> {
    /// Benchmark row.
    pub bench: &'static Bench,
    /// Page size of the buffers.
    pub pages: PageKind,
    /// The two implementations and their environment.
    pub config: &'a Config,
    /// Iterations per round.
    pub iters: u32,
    /// Forked rounds.
    pub rounds: u32,
    /// Flush src and dst before every timed operation (else once before the loop).
    pub cold: bool,
    /// CPU the children are pinned to.
    pub cpu: usize,
    /// How long one round may take before its child is killed.
    pub timeout: Duration,
}

/// Raw timer ticks of one cell, per round, in iteration order.
#[derive(Debug, Clone, Default)]
pub struct CellTicks {
    /// Baseline (A) ticks per round.
    pub baseline: Vec<Vec<u64>>,
    /// Current (B) ticks per round.
    pub current: Vec<Vec<u64>>,
}

/// Runs all rounds of a cell. The process must be single-threaded (it forks).
pub fn run_cell(plan: &CellPlan<'_>) -> Result<CellTicks> {
    let iters = plan.iters as usize;
    let mut shared = Shared::new(HEADER + 2 * iters).map_err(|e| anyhow!(e))?;
    let mut out = CellTicks::default();
    for round in 0..plan.rounds {
        shared.words()[..HEADER].fill(0);
        let env = EnvGuard::set(&plan.config.env);
        let parent = nix::unistd::getpid();
        let who = benchmp::run::Who {
            index: round as usize,
            cpu: Some(plan.cpu),
        };
        let pid = match process::fork_process()
            .map_err(|source| benchmp::Error::Fork { child: who, source })?
        {
            Forked::Child => {
                process::child_setup(parent);
                child_main(plan, &mut shared)
            }
            Forked::Parent(pid) => pid,
        };
        let exit = wait(pid, plan.timeout, round, plan.cpu);
        drop(env);
        let exit = exit?;
        let w = shared.words();
        let who = format!(
            "{} {} round {} (child on CPU {})",
            plan.bench.name,
            plan.pages.short(),
            round + 1,
            plan.cpu
        );
        match w[0] {
            STATUS_OK if exit == Exit::Code(0) => {
                let n = (w[1] as usize).min(iters);
                let (bl, cur) = w[HEADER..HEADER + 2 * iters].split_at(iters);
                out.baseline.push(bl[..n].to_vec());
                out.current.push(cur[..n].to_vec());
            }
            STATUS_ERR => {
                let len = (w[3] as usize).min(MSG_WORDS * 8);
                let bytes: Vec<u8> = w[4..4 + MSG_WORDS]
                    .iter()
                    .flat_map(|x| x.to_ne_bytes())
                    .take(len)
                    .collect();
                let msg = format!("{who}: {}", String::from_utf8_lossy(&bytes));
                return Err(match w[2] as i32 {
                    benchmp::EXIT_UNSUPPORTED => benchmp::Unsupported(msg).into(),
                    benchmp::EXIT_USAGE => benchmp::Usage(msg).into(),
                    _ => anyhow!(msg),
                });
            }
            _ => bail!("{who} {exit} without a result"),
        }
    }
    Ok(out)
}

/// Sets variables in this process (before a library is loaded in it, for `dto check`).
/// Must be called while the process is single-threaded.
pub fn set_process_env(vars: &[(String, String)]) -> Result<()> {
    if process::thread_count() != 1 {
        bail!("environment variables can only be set while single-threaded");
    }
    for (k, v) in vars {
        // SAFETY: the process has one thread (checked above), so nothing reads the
        // environment concurrently.
        unsafe { std::env::set_var(k, v) };
    }
    Ok(())
}

/// Sets variables for the next child and removes (or restores) them when dropped.
struct EnvGuard {
    old: Vec<(String, Option<String>)>,
}

impl EnvGuard {
    fn set(vars: &[(String, String)]) -> EnvGuard {
        let mut old = Vec::new();
        for (k, v) in vars {
            old.push((k.clone(), std::env::var(k).ok()));
            // SAFETY: the process is single-threaded here (fork_process refuses otherwise), so
            // no other thread reads the environment concurrently.
            unsafe { std::env::set_var(k, v) };
        }
        EnvGuard { old }
    }
}

impl Drop for EnvGuard {
    fn drop(&mut self) {
        for (k, v) in self.old.drain(..).rev() {
            // SAFETY: as in `set`, single-threaded.
            unsafe {
                match v {
                    Some(v) => std::env::set_var(&k, v),
                    None => std::env::remove_var(&k),
                }
            }
        }
    }
}

fn wait(pid: nix::unistd::Pid, timeout: Duration, round: u32, cpu: usize) -> Result<Exit> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(e) = process::try_reap(pid) {
            return Ok(e);
        }
        if let Some(sig) = process::interrupted() {
            process::kill(pid, nix::sys::signal::Signal::SIGKILL);
            process::reap(pid, Duration::from_secs(5));
            return Err(benchmp::Error::Interrupted(sig).into());
        }
        if Instant::now() >= deadline {
            process::kill(pid, nix::sys::signal::Signal::SIGKILL);
            process::reap(pid, Duration::from_secs(5));
            return Err(benchmp::Error::ChildHung {
                child: benchmp::run::Who {
                    index: round as usize,
                    cpu: Some(cpu),
                },
                secs: timeout.as_secs(),
            }
            .into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The child: measure, leave the result in the shared header, and `_exit`.
fn child_main(plan: &CellPlan<'_>, shared: &mut Shared) -> ! {
    let iters = plan.iters as usize;
    let words = shared.words();
    let (header, rest) = words.split_at_mut(HEADER);
    let (bl, cur) = rest[..2 * iters].split_at_mut(iters);
    match child_measure(plan, bl, cur) {
        Ok(()) => {
            header[1] = iters as u64;
            header[0] = STATUS_OK;
            process::exit_now(0)
        }
        Err((code, msg)) => {
            let bytes = msg.as_bytes();
            let len = bytes.len().min(MSG_WORDS * 8);
            for (i, chunk) in bytes[..len].chunks(8).enumerate() {
                let mut w = [0u8; 8];
                w[..chunk.len()].copy_from_slice(chunk);
                header[4 + i] = u64::from_ne_bytes(w);
            }
            header[3] = len as u64;
            header[2] = code as u64;
            header[0] = STATUS_ERR;
            process::exit_now(code)
        }
    }
}

fn xorshift32(x: &mut u32) -> u32 {
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    *x
}

/// Calls the operation once.
#[inline(always)]
fn exec(f: &MemFns, op: Op, dst: *mut u8, src: *const u8, size: usize) -> i32 {
    // SAFETY: dst and src are distinct live buffers of at least `size` bytes (allocated in
    // `child_measure`), and the functions follow the C library contracts.
    unsafe {
        match op {
            Op::Memcpy => {
                (f.memcpy)(dst.cast::<c_void>(), src.cast::<c_void>(), size);
                0
            }
            Op::Memset => {
                (f.memset)(dst.cast::<c_void>(), MEMSET_BYTE, size);
                0
            }
            Op::Memcmp => (f.memcmp)(dst.cast::<c_void>(), src.cast::<c_void>(), size),
        }
    }
}

struct Ctx {
    op: Op,
    dst: *mut u8,
    src: *const u8,
    size: usize,
    cold: bool,
    pf_pct: u32,
    page: usize,
    pages: usize,
}

impl Ctx {
    /// Injects a fault if drawn, flushes if cold, then times one operation in ticks.
    #[inline(always)]
    fn timed(&self, f: &MemFns, rng: &mut u32) -> Result<u64, (i32, String)> {
        if self.pf_pct > 0 && xorshift32(rng) % 100 < self.pf_pct {
            let p = xorshift32(rng) as usize % self.pages;
            // SAFETY: page p lies inside the private anonymous dst buffer (pages × page bytes
            // are mapped), and its contents are rewritten by the next copy.
            unsafe { sys::drop_page(self.dst.add(p * self.page), self.page) }
                .map_err(|e| (benchmp::EXIT_FAILED, format!("page fault injection: {e}")))?;
        }
        if self.cold {
            sys::flush_range(self.src, self.size);
            sys::flush_range(self.dst, self.size);
        }
        let t0 = sys::timer_start();
        let r = exec(f, self.op, self.dst, self.src, self.size);
        compiler_fence(Ordering::SeqCst);
        let t1 = sys::timer_end();
        std::hint::black_box(r);
        Ok(t1.wrapping_sub(t0))
    }
}

fn child_measure(
    plan: &CellPlan<'_>,
    bl: &mut [u64],
    cur: &mut [u64],
) -> Result<(), (i32, String)> {
    benchmp::sys::affinity::pin_and_verify(plan.cpu)
        .map_err(|e| (benchmp::EXIT_FAILED, format!("{:#}", anyhow::Error::new(e))))?;
    let load = |s| impls::load(s).map_err(|e| (e.exit_code(), e.to_string()));
    let a = load(&plan.config.baseline)?;
    let b = if plan.config.current == plan.config.baseline {
        None
    } else {
        Some(load(&plan.config.current)?)
    };
    let (fa, fb) = (a.fns, b.as_ref().map_or(a.fns, |b| b.fns));
    let size = plan.bench.size;
    let map = |what: &str| {
        benchmp::Buffer::new(size, plan.pages.pages()).map_err(|e| {
            let code = if e.is_unsupported() {
                benchmp::EXIT_UNSUPPORTED
            } else {
                benchmp::EXIT_FAILED
            };
            (code, format!("{what} buffer: {e}"))
        })
    };
    let mut src = map("source")?;
    let mut dst = map("destination")?;
    for (i, x) in src.as_mut_slice().iter_mut().enumerate() {
        *x = i as u8;
    }
    dst.as_mut_slice().copy_from_slice(src.as_slice());
    let ctx = Ctx {
        op: plan.bench.op,
        dst: dst.as_mut_ptr(),
        src: src.as_ptr(),
        size,
        cold: plan.cold,
        pf_pct: plan.bench.pf_pct,
        page: plan.pages.bytes(),
        pages: size.div_ceil(plan.pages.bytes()),
    };
    for _ in 0..WARMUP_ITERS {
        std::hint::black_box(exec(&fa, ctx.op, ctx.dst, ctx.src, size));
        std::hint::black_box(exec(&fb, ctx.op, ctx.dst, ctx.src, size));
    }
    if !plan.cold {
        sys::flush_range(ctx.src, size);
        sys::flush_range(ctx.dst, size);
    }
    let mut rng = (sys::timer_start() as u32) | 1;
    for i in 0..bl.len() {
        let a_first = xorshift32(&mut rng) & 1 == 1;
        let (first, second) = if a_first { (&fa, &fb) } else { (&fb, &fa) };
        let t1 = ctx.timed(first, &mut rng)?;
        if ctx.op == Op::Memcmp {
            // Keep the buffers equal so every compare runs the full length.
            // SAFETY: src and dst are distinct buffers of `size` bytes.
            unsafe { std::ptr::copy_nonoverlapping(ctx.src, ctx.dst, size) };
        }
        let t2 = ctx.timed(second, &mut rng)?;
        let (ta, tb) = if a_first { (t1, t2) } else { (t2, t1) };
        bl[i] = ta;
        cur[i] = tb;
    }
    drop((src, dst));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift32_visits_both_orders() {
        let mut x = 12345u32 | 1;
        let firsts = (0..1000).filter(|_| xorshift32(&mut x) & 1 == 1).count();
        assert!((400..600).contains(&firsts), "{firsts}");
        assert_ne!(x, 0);
    }
}
