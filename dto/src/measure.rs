//! One round of an A/B cell as the DTO guide measures it, run by benchmp in a pinned child.
//!
//! The child builds a [`Round`] after benchmp has pinned it: it loads both implementations
//! itself (so a library initialises from the variables the parent set before the fork, as the
//! guide's children re-initialise DTO after `fork`), then maps and fills its buffers. Its one
//! timed interval (`run(1)`) warms both implementations up and then times both on every
//! iteration, in an order drawn by xorshift32, with optional cache flushing and page-fault
//! injection. The ticks go back to the parent as the interval's typed record
//! ([`RoundTicks`]).
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::atomic::{Ordering, compiler_fence};

use benchmp::BuildError;
use benchmp::error::Refused;
use serde::{Deserialize, Serialize};

use crate::bench::{Bench, Config, Op, PageKind};
use crate::impls::{self, ImplSpec, LoadError, Loaded};
use crate::kernels::MemFns;
use crate::sys;

/// Untimed iterations of both implementations before measuring.
pub const WARMUP_ITERS: u32 = 100;
/// Byte written by memset.
pub const MEMSET_BYTE: i32 = 0xA5;

/// What one round measures.
#[derive(Debug, Clone)]
pub struct RoundPlan {
    /// Benchmark row.
    pub bench: &'static Bench,
    /// Page size of the buffers.
    pub pages: PageKind,
    /// The two implementations.
    pub config: Config,
    /// Timed iterations (each times both implementations once).
    pub iters: u32,
    /// Flush src and dst before every timed operation (else once before the loop).
    pub cold: bool,
}

/// Raw timer ticks of one round, in iteration order: what a child records about its timed
/// interval.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundTicks {
    /// Baseline (A) ticks.
    pub baseline: Vec<u64>,
    /// Current (B) ticks.
    pub current: Vec<u64>,
    /// Why the round stopped early (the page-fault injection failed), if it did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub failure: Option<String>,
}

impl RoundTicks {
    /// Room for `n` iterations, every slot written now so the timed loop takes no page fault
    /// on its own sample arrays.
    fn filled(n: usize) -> RoundTicks {
        RoundTicks {
            baseline: vec![u64::MAX; n],
            current: vec![u64::MAX; n],
            failure: None,
        }
    }
}

/// Where a child's two implementations came from (what it records about itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sources {
    /// The baseline's source, e.g. `libc.so.6 via dlopen/dlsym`.
    pub baseline: String,
    /// The current implementation's source.
    pub current: String,
}

/// Loads an implementation in the calling process, its failure marked with the exit status
/// it calls for (2: a library that cannot be used, 3: a kernel this CPU lacks).
pub fn load(spec: &ImplSpec) -> Result<Loaded, Refused> {
    impls::load(spec).map_err(|e: LoadError| match e.exit_code() {
        benchmp::EXIT_UNSUPPORTED => benchmp::Unsupported(e.to_string()).into(),
        _ => benchmp::Usage(e.to_string()).into(),
    })
}

/// The operands of the timed calls.
#[derive(Debug)]
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

/// One round's state in its child: both implementations, the buffers, the sample arrays.
#[derive(Debug)]
pub struct Round {
    fa: MemFns,
    fb: MemFns,
    ctx: Ctx,
    iters: usize,
    ticks: RoundTicks,
    sources: Sources,
    // Kept alive while `fa`/`fb` point into the libraries and `ctx` into the buffers.
    _libs: (Loaded, Option<Loaded>),
    _src: benchmp::Buffer,
    _dst: benchmp::Buffer,
}

impl Round {
    /// Loads both implementations and maps and fills the buffers (in the child, after it was
    /// pinned).
    pub fn new(plan: &RoundPlan) -> Result<Round, BuildError> {
        let a = load(&plan.config.baseline)?;
        let b = if plan.config.current == plan.config.baseline {
            None
        } else {
            Some(load(&plan.config.current)?)
        };
        let (fa, fb) = (a.fns, b.as_ref().map_or(a.fns, |b| b.fns));
        let sources = Sources {
            baseline: a.source.clone(),
            current: b.as_ref().map_or(&a.source, |b| &b.source).clone(),
        };
        let size = plan.bench.size;
        let map = |what: &'static str| {
            benchmp::Buffer::new(size, plan.pages.pages())
                .map_err(|source| crate::Error::Buffer { what, source })
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
        let iters = plan.iters as usize;
        Ok(Round {
            fa,
            fb,
            ctx,
            iters,
            ticks: RoundTicks::filled(iters),
            sources,
            _libs: (a, b),
            _src: src,
            _dst: dst,
        })
    }

    /// The warmup and the timed loop; the ticks stay in `self.ticks`.
    fn round(&mut self) -> u64 {
        if self.ticks.baseline.len() != self.iters {
            self.ticks = RoundTicks::filled(self.iters);
        }
        let (fa, fb, c) = (&self.fa, &self.fb, &self.ctx);
        for _ in 0..WARMUP_ITERS {
            std::hint::black_box(exec(fa, c.op, c.dst, c.src, c.size));
            std::hint::black_box(exec(fb, c.op, c.dst, c.src, c.size));
        }
        if !c.cold {
            sys::flush_range(c.src, c.size);
            sys::flush_range(c.dst, c.size);
        }
        let mut rng = (sys::timer_start() as u32) | 1;
        let (bl, cur) = (&mut self.ticks.baseline, &mut self.ticks.current);
        let mut failed = None;
        for i in 0..bl.len() {
            let a_first = xorshift32(&mut rng) & 1 == 1;
            let (first, second) = if a_first { (fa, fb) } else { (fb, fa) };
            let t1 = match c.timed(first, &mut rng) {
                Ok(t) => t,
                Err(e) => {
                    failed = Some((i, e));
                    break;
                }
            };
            if c.op == Op::Memcmp {
                // Keep the buffers equal so every compare runs the full length.
                // SAFETY: src and dst are distinct buffers of `size` bytes.
                unsafe { std::ptr::copy_nonoverlapping(c.src, c.dst, c.size) };
            }
            let t2 = match c.timed(second, &mut rng) {
                Ok(t) => t,
                Err(e) => {
                    failed = Some((i, e));
                    break;
                }
            };
            let (ta, tb) = if a_first { (t1, t2) } else { (t2, t1) };
            bl[i] = ta;
            cur[i] = tb;
        }
        let mut done = bl.len();
        if let Some((i, e)) = failed {
            done = i;
            bl.truncate(i);
            cur.truncate(i);
            self.ticks.failure = Some(format!(
                "page fault injection failed after {i} iterations: {e}"
            ));
        }
        u64::from(rng) ^ done as u64
    }
}

impl benchmp::Benchmark for Round {
    type Sample = RoundTicks;
    type Child = Sources;

    /// One round per iteration (a round is one fixed-count interval of 1).
    fn run(&mut self, iterations: u64) -> u64 {
        let mut ck = 0;
        for _ in 0..iterations {
            ck ^= self.round();
        }
        ck
    }

    fn sample_detail(&mut self) -> Option<RoundTicks> {
        Some(std::mem::take(&mut self.ticks))
    }

    fn child_detail(&mut self) -> Option<Sources> {
        Some(self.sources.clone())
    }

    /// Nothing: the children run one after another and wait asleep, and a round must never
    /// run outside its timed interval.
    fn keep_busy(&mut self, _iterations: u64) -> u64 {
        0
    }
}

/// dto under `benchmp ab`: the current implementation's operation, one call per iteration,
/// each prepared and timed as a round times it (fault injection and cache flushes before
/// each call, untimed), so a paired repetition is the operation dto names and its figure
/// dto's per-operation latency, not a whole round's.
#[derive(Debug)]
pub struct Calls {
    round: Round,
    rng: u32,
    ns_per_tick: f64,
    timed_ns: u64,
    failure: Option<String>,
}

impl Calls {
    /// Loads the implementations and maps the buffers as a round does (in the child, after
    /// it was pinned); `timer_hz` converts the ticks to ns, as dto's analysis does.
    pub fn new(plan: &RoundPlan, timer_hz: f64) -> Result<Calls, BuildError> {
        Ok(Calls {
            round: Round::new(plan)?,
            rng: (sys::timer_start() as u32) | 1,
            ns_per_tick: 1e9 / timer_hz,
            timed_ns: 0,
            failure: None,
        })
    }
}

impl benchmp::Benchmark for Calls {
    type Sample = RoundTicks;
    type Child = Sources;

    /// `iterations` calls of the current implementation, their own time summed.
    fn run(&mut self, iterations: u64) -> u64 {
        let (f, c) = (&self.round.fb, &self.round.ctx);
        let mut ticks = 0u64;
        for _ in 0..iterations {
            if let Err(e) = c.prepare(&mut self.rng) {
                self.failure
                    .get_or_insert_with(|| format!("page fault injection failed: {e}"));
            }
            ticks = ticks.wrapping_add(c.time(f));
            if c.op == Op::Memcmp {
                // As between a round's two calls: equal buffers, so every compare runs the
                // full length.
                // SAFETY: src and dst are distinct buffers of `size` bytes.
                unsafe { std::ptr::copy_nonoverlapping(c.src, c.dst, c.size) };
            }
        }
        self.timed_ns = (ticks as f64 * self.ns_per_tick) as u64;
        u64::from(self.rng) ^ ticks
    }

    fn timed_ns(&mut self) -> Option<u64> {
        Some(self.timed_ns)
    }

    /// Nothing, unless a fault could not be injected (the run then fails at its end).
    fn sample_detail(&mut self) -> Option<RoundTicks> {
        self.failure.take().map(|f| RoundTicks {
            failure: Some(f),
            ..RoundTicks::default()
        })
    }

    fn child_detail(&mut self) -> Option<Sources> {
        Some(self.round.sources.clone())
    }

    /// Nothing: a call outside a repetition would only disturb the caches.
    fn keep_busy(&mut self, _iterations: u64) -> u64 {
        0
    }
}

/// Sets variables in this process (before a library is loaded in it or in its children).
/// Must be called while the process is single-threaded.
pub fn set_process_env(vars: &[(String, String)]) -> Result<(), crate::Error> {
    if benchmp::sys::process::thread_count() != 1 {
        return Err(crate::Error::Threaded);
    }
    for (k, v) in vars {
        // SAFETY: the process has one thread (checked above), so nothing reads the
        // environment concurrently.
        unsafe { std::env::set_var(k, v) };
    }
    Ok(())
}

/// Sets variables for the next children and removes (or restores) them when dropped.
#[derive(Debug)]
pub struct EnvGuard {
    old: Vec<(String, Option<String>)>,
}

impl EnvGuard {
    /// Sets `vars`; call only while the process is single-threaded (as it must be to fork).
    pub fn set(vars: &[(String, String)]) -> EnvGuard {
        let mut old = Vec::new();
        for (k, v) in vars {
            old.push((k.clone(), std::env::var(k).ok()));
            // SAFETY: dto's parent is single-threaded (benchmp refuses to fork otherwise), so
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

fn xorshift32(x: &mut u32) -> u32 {
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    *x
}

/// Calls the operation once.
#[inline(always)]
fn exec(f: &MemFns, op: Op, dst: *mut u8, src: *const u8, size: usize) -> i32 {
    // SAFETY: dst and src are distinct live buffers of at least `size` bytes (mapped in
    // `Round::new`), and the functions follow the C library contracts.
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

impl Ctx {
    /// Injects a fault if drawn, flushes if cold, then times one operation in ticks. `Err`
    /// when the fault could not be injected.
    #[inline(always)]
    fn timed(&self, f: &MemFns, rng: &mut u32) -> Result<u64, String> {
        self.prepare(rng)?;
        Ok(self.time(f))
    }

    /// What precedes a timed operation, untimed: the fault injection if drawn (`Err` when it
    /// failed), then the cache flushes if cold.
    #[inline(always)]
    fn prepare(&self, rng: &mut u32) -> Result<(), String> {
        let mut injected = Ok(());
        if self.pf_pct > 0 && xorshift32(rng) % 100 < self.pf_pct {
            let p = xorshift32(rng) as usize % self.pages;
            // SAFETY: page p lies inside the private anonymous dst buffer (pages × page bytes
            // are mapped), and its contents are rewritten by the next copy.
            injected = unsafe { sys::drop_page(self.dst.add(p * self.page), self.page) };
        }
        if self.cold {
            sys::flush_range(self.src, self.size);
            sys::flush_range(self.dst, self.size);
        }
        injected
    }

    /// Times one operation, in ticks.
    #[inline(always)]
    fn time(&self, f: &MemFns) -> u64 {
        let t0 = sys::timer_start();
        let r = exec(f, self.op, self.dst, self.src, self.size);
        compiler_fence(Ordering::SeqCst);
        let t1 = sys::timer_end();
        std::hint::black_box(r);
        t1.wrapping_sub(t0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench;
    use crate::kernels::Kernel;
    use benchmp::Benchmark;

    #[test]
    fn xorshift32_visits_both_orders() {
        let mut x = 12345u32 | 1;
        let firsts = (0..1000).filter(|_| xorshift32(&mut x) & 1 == 1).count();
        assert!((400..600).contains(&firsts), "{firsts}");
        assert_ne!(x, 0);
    }

    /// 20 cold iterations of the portable kernel against cpu, on a 1 MiB copy with faults.
    fn portable_plan() -> RoundPlan {
        RoundPlan {
            bench: bench::find("memcpy_1m_pf50").unwrap(),
            pages: PageKind::Small,
            config: Config {
                label: "portable".into(),
                baseline: ImplSpec::Cpu,
                current: ImplSpec::Kernel(Kernel::Portable),
                env: vec![],
            },
            iters: 20,
            cold: true,
        }
    }

    #[test]
    fn a_round_records_every_iteration_of_both_sides() {
        let plan = portable_plan();
        let mut r = Round::new(&plan).unwrap();
        r.run(1);
        let t = r.sample_detail().unwrap();
        assert_eq!((t.baseline.len(), t.current.len()), (20, 20));
        assert!(t.failure.is_none());
        assert!(t.baseline.iter().chain(&t.current).all(|&x| x != u64::MAX));
        let s = r.child_detail().unwrap();
        assert!(s.current.contains("portable"), "{s:?}");
        // A second round refills the arrays it handed over.
        r.run(1);
        assert_eq!(r.sample_detail().unwrap().current.len(), 20);
    }

    #[test]
    fn a_call_is_timed_without_its_flushes() {
        let plan = portable_plan();
        let mut c = Calls::new(&plan, sys::timer_hz()).unwrap();
        assert_eq!(c.timed_ns(), Some(0));
        let t0 = benchmp::sys::clock::now_ns();
        c.run(4);
        let wall = benchmp::sys::clock::now_ns() - t0;
        // The calls' own time lies inside the loop's, which holds the flushes too.
        let own = c.timed_ns().unwrap();
        assert!(
            own > 0 && own as f64 <= wall as f64 * 1.05,
            "{own} of {wall} ns"
        );
        assert!(c.sample_detail().is_none());
        assert!(c.child_detail().unwrap().current.contains("portable"));
    }
}
