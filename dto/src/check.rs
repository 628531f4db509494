//! Functional checks of one implementation, as the DTO suite's functional tests: memcpy,
//! memmove (overlapping both ways), memset and memcmp (sign of the result) over sizes below and
//! above typical offload thresholds, unaligned source and destination offsets, and several
//! threads at once. Guard bytes around every destination catch writes out of bounds.
#![allow(unsafe_code)]

use serde::{Deserialize, Serialize};

use crate::kernels::MemFns;

/// Every size from 0 to this is checked with all 64 × 64 source/destination offsets.
pub const SMALL_MAX: usize = 64;
/// Larger sizes (odd ones and both sides of 4 KiB, 8 KiB, 16 KiB and 64 KiB thresholds).
pub const LARGE_SIZES: &[usize] = &[
    65,
    100,
    127,
    128,
    129,
    255,
    256,
    257,
    511,
    1000,
    1023,
    1024,
    1025,
    4095,
    4096,
    4097,
    8191,
    8192,
    8193,
    16383,
    16384,
    16385,
    65535,
    65536,
    65537,
    131_079,
    262_144,
    1 << 20,
    (1 << 20) + 13,
    (2 << 20) - 1,
    4 << 20,
];
/// Source/destination offset pairs used for the larger sizes.
pub const LARGE_OFFSETS: &[(usize, usize)] =
    &[(0, 0), (1, 0), (0, 1), (7, 13), (63, 1), (33, 63), (63, 63)];
/// memmove distances between the overlapping ranges (plus half the size).
pub const OVERLAP_SHIFTS: &[usize] = &[1, 3, 8, 15, 31, 32, 33, 64, 100];
/// Guard bytes on each side of a destination.
const GUARD: usize = 64;
/// Byte the destination and guards are set to before each call.
const CANARY: u8 = 0xEE;

/// One of the four functions a check covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Func {
    /// memcpy(dst, src, n).
    Memcpy,
    /// memset(dst, c, n).
    Memset,
    /// memmove(dst, src, n) with overlapping ranges.
    Memmove,
    /// memcmp(a, b, n).
    Memcmp,
}

impl Func {
    /// The four, in the order `dto check` runs them.
    pub const ALL: [Func; 4] = [Func::Memcpy, Func::Memset, Func::Memmove, Func::Memcmp];

    /// The C name.
    pub fn name(self) -> &'static str {
        match self {
            Func::Memcpy => "memcpy",
            Func::Memset => "memset",
            Func::Memmove => "memmove",
            Func::Memcmp => "memcmp",
        }
    }

    /// The sizes its check covers, in the order it checks them: every size up to
    /// [`SMALL_MAX`], then [`LARGE_SIZES`] (memmove: those up to 1 MiB).
    pub fn sizes(self) -> Vec<usize> {
        let small = 0..=SMALL_MAX;
        match self {
            Func::Memmove => small
                .chain(LARGE_SIZES.iter().copied().filter(|&s| s <= 1 << 20))
                .collect(),
            _ => small.chain(LARGE_SIZES.iter().copied()).collect(),
        }
    }
}

impl std::fmt::Display for Func {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One wrong result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    /// Operation.
    pub op: String,
    /// Length argument.
    pub size: usize,
    /// Source offset from a 64-byte aligned base (memmove: the source position).
    pub src_offset: usize,
    /// Destination offset from a 64-byte aligned base.
    pub dst_offset: usize,
    /// Thread that saw it.
    pub thread: usize,
    /// What was wrong.
    pub detail: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: size {}, src offset {}, dst offset {} (thread {}): {}",
            self.op, self.size, self.src_offset, self.dst_offset, self.thread, self.detail
        )
    }
}

/// Outcome of a check run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// Calls checked, over all threads.
    pub cases: u64,
    /// Wrong results, over all threads.
    pub failures: u64,
    /// The first wrong results (at most [`KEEP`] per thread and function).
    pub mismatches: Vec<Mismatch>,
}

impl CheckReport {
    /// Adds another run's counts and mismatches to this one.
    pub fn merge(&mut self, other: CheckReport) {
        self.cases += other.cases;
        self.failures += other.failures;
        self.mismatches.extend(other.mismatches);
    }
}

/// Mismatches kept per thread and function.
pub const KEEP: usize = 20;

/// Checks `func` at each of `sizes` (in order) in `threads` threads at once, each with its
/// own buffers and data; an error when a thread or its buffers cannot be had ([`Pool`]).
pub fn run(
    fns: MemFns,
    threads: usize,
    func: Func,
    sizes: &[usize],
) -> Result<CheckReport, crate::Error> {
    Ok(Pool::start(fns, threads, func, sizes)?.run(sizes))
}

/// The threads of a check, started and given their buffers before any check runs, so that a
/// thread or a buffer the process cannot have (`ulimit -u`, `ulimit -v`) is an error of the
/// harness, said as such, instead of a panic or an abort blamed on the implementation.
pub struct Pool {
    func: Func,
    workers: Vec<Worker>,
}

/// One thread of a [`Pool`]: where its work goes and its report comes from.
struct Worker {
    work: Option<std::sync::mpsc::Sender<std::sync::Arc<[usize]>>>,
    done: std::sync::mpsc::Receiver<CheckReport>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("func", &self.func)
            .field("threads", &self.workers.len())
            .finish()
    }
}

impl Pool {
    /// `threads` threads (at least one) checking `func`, each with buffers for the largest of
    /// `sizes`.
    pub fn start(
        fns: MemFns,
        threads: usize,
        func: Func,
        sizes: &[usize],
    ) -> Result<Pool, crate::Error> {
        let largest = sizes.iter().map(|&n| room(func, n)).max().unwrap_or(0);
        let threads = threads.max(1);
        let mut workers = Vec::with_capacity(threads);
        for t in 0..threads {
            let mut c = Checker::new(fns, t, largest).map_err(|_| crate::Error::CheckBuffers {
                thread: t,
                threads,
                bytes: 2 * (largest + 2 * GUARD + 128),
                source: std::io::Error::from(std::io::ErrorKind::OutOfMemory),
            })?;
            let (work, jobs) = std::sync::mpsc::channel::<std::sync::Arc<[usize]>>();
            let (report, done) = std::sync::mpsc::channel();
            let thread = std::thread::Builder::new()
                .name(format!("check-{t}"))
                .spawn(move || {
                    for sizes in jobs {
                        for &size in sizes.iter() {
                            c.check_size(func, size);
                        }
                        if report.send(std::mem::take(&mut c.report)).is_err() {
                            return;
                        }
                    }
                })
                .map_err(|source| crate::Error::CheckThread {
                    thread: t,
                    threads,
                    source,
                })?;
            workers.push(Worker {
                work: Some(work),
                done,
                thread: Some(thread),
            });
        }
        Ok(Pool { func, workers })
    }

    /// Runs the checks of `sizes` (in order) on every thread at once; their reports merged.
    pub fn run(&self, sizes: &[usize]) -> CheckReport {
        let sizes: std::sync::Arc<[usize]> = sizes.into();
        for w in &self.workers {
            if let Some(tx) = &w.work {
                let _ = tx.send(sizes.clone());
            }
        }
        let mut out = CheckReport::default();
        for w in &self.workers {
            out.merge(w.done.recv().unwrap_or_default());
        }
        out
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for w in &mut self.workers {
            w.work.take();
            if let Some(t) = w.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// Bytes past the guard a check of `func` at `size` reaches (offsets up to 63; memmove's
/// ranges up to half the size, or 100 bytes, plus 5 apart).
fn room(func: Func, size: usize) -> usize {
    match func {
        Func::Memmove => size + (size / 2).max(OVERLAP_SHIFTS[OVERLAP_SHIFTS.len() - 1]) + 5,
        _ => size + 63,
    }
}

/// A 64-byte aligned byte buffer.
struct Aligned {
    v: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    /// A zeroed buffer, or the allocator's refusal (an address-space limit) as an error.
    fn new(len: usize) -> Result<Aligned, std::collections::TryReserveError> {
        let mut v = Vec::new();
        v.try_reserve_exact(len + 64)?;
        v.resize(len + 64, 0);
        let start = v.as_ptr().align_offset(64);
        Ok(Aligned { v, start, len })
    }
    fn bytes(&mut self) -> &mut [u8] {
        &mut self.v[self.start..self.start + self.len]
    }
}

struct Checker {
    fns: MemFns,
    thread: usize,
    src: Aligned,
    dst: Aligned,
    report: CheckReport,
}

fn xorshift(x: &mut u32) -> u32 {
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    *x
}

impl Checker {
    /// A checker whose buffers hold `max` bytes past the guard, and a guard after them.
    fn new(
        fns: MemFns,
        thread: usize,
        max: usize,
    ) -> Result<Checker, std::collections::TryReserveError> {
        let total = max + 2 * GUARD + 64;
        let mut src = Aligned::new(total)?;
        let mut seed = 0x9E37_79B9u32 ^ (thread as u32 + 1).wrapping_mul(0x85EB_CA6B);
        for b in src.bytes() {
            // Never the canary, so a missing write is always visible.
            let mut x = xorshift(&mut seed) as u8;
            if x == CANARY {
                x = 0x11;
            }
            *b = x;
        }
        Ok(Checker {
            fns,
            thread,
            src,
            dst: Aligned::new(total)?,
            report: CheckReport::default(),
        })
    }

    fn fail(&mut self, op: &str, size: usize, so: usize, d_o: usize, detail: String) {
        self.report.failures += 1;
        if self.report.mismatches.len() < KEEP {
            self.report.mismatches.push(Mismatch {
                op: op.to_string(),
                size,
                src_offset: so,
                dst_offset: d_o,
                thread: self.thread,
                detail,
            });
        }
    }

    /// Every case of `func` at one size.
    fn check_size(&mut self, func: Func, size: usize) {
        match func {
            Func::Memcpy => {
                if size <= SMALL_MAX {
                    for so in 0..64 {
                        for d_o in 0..64 {
                            self.memcpy(size, so, d_o);
                        }
                    }
                } else {
                    for &(so, d_o) in LARGE_OFFSETS {
                        self.memcpy(size, so, d_o);
                    }
                }
            }
            Func::Memset => {
                if size <= SMALL_MAX {
                    for d_o in 0..64 {
                        for value in [0x00, 0xA5, 0x1FF, -1] {
                            self.memset(size, d_o, value);
                        }
                    }
                } else {
                    for &(_, d_o) in LARGE_OFFSETS {
                        self.memset(size, d_o, 0x5A);
                    }
                }
            }
            Func::Memmove => {
                // Every shift and two alignments for small sizes; a few shifts for large ones.
                let (mut shifts, bases): (Vec<usize>, &[usize]) = if size <= 256 {
                    (OVERLAP_SHIFTS.to_vec(), &[0, 5])
                } else {
                    (vec![1, 31, 64], &[0])
                };
                shifts.push(size / 2);
                for shift in shifts.into_iter().filter(|&k| k > 0) {
                    for &base in bases {
                        self.memmove(size, base, base + shift);
                        self.memmove(size, base + shift, base);
                    }
                }
                self.memmove(size, 3, 3);
            }
            Func::Memcmp => {
                let offsets: &[(usize, usize)] = if size <= SMALL_MAX {
                    &[(0, 0), (1, 2), (63, 0), (0, 63), (17, 17)]
                } else {
                    LARGE_OFFSETS
                };
                for &(so, d_o) in offsets {
                    self.memcmp(size, so, d_o);
                }
            }
        }
    }

    /// Prepares dst: canary over [dst_off - GUARD, dst_off + size + GUARD) around base GUARD.
    fn reset_dst(&mut self, d_o: usize, size: usize) {
        let region = &mut self.dst.bytes()[..GUARD + d_o + size + GUARD];
        region.fill(CANARY);
    }

    /// Checks the guards and the destination against `want`; the first problem, if any.
    fn verify(&mut self, d_o: usize, want: &[u8]) -> Option<String> {
        let (base, size) = (GUARD + d_o, want.len());
        let dst = self.dst.bytes();
        if let Some(i) = dst[..base].iter().rposition(|&b| b != CANARY) {
            return Some(format!(
                "wrote before the destination ({} bytes before it)",
                base - i
            ));
        }
        let after = &dst[base + size..base + size + GUARD];
        if let Some(i) = after.iter().position(|&b| b != CANARY) {
            return Some(format!("wrote past the end ({} bytes after it)", i + 1));
        }
        let got = &dst[base..base + size];
        if got == want {
            return None;
        }
        let i = (0..size).find(|&i| got[i] != want[i]).unwrap_or(0);
        Some(format!(
            "byte {i} is {:#04x}, expected {:#04x}",
            got[i], want[i]
        ))
    }

    fn memcpy(&mut self, size: usize, so: usize, d_o: usize) {
        self.report.cases += 1;
        self.reset_dst(d_o, size);
        let s = self.src.bytes()[GUARD + so..].as_ptr();
        let d = self.dst.bytes()[GUARD + d_o..].as_mut_ptr();
        // SAFETY: src has size bytes after GUARD + so and dst has size + GUARD bytes after
        // GUARD + d_o (buffers are sized for the largest case); they are separate buffers.
        let ret = unsafe { (self.fns.memcpy)(d.cast(), s.cast(), size) };
        let src = self.src.bytes()[GUARD + so..GUARD + so + size].to_vec();
        if let Some(e) = self.verify(d_o, &src) {
            self.fail("memcpy", size, so, d_o, e);
        } else if ret != d.cast() {
            self.fail("memcpy", size, so, d_o, "did not return dst".into());
        }
    }

    fn memset(&mut self, size: usize, d_o: usize, value: i32) {
        self.report.cases += 1;
        self.reset_dst(d_o, size);
        let d = self.dst.bytes()[GUARD + d_o..].as_mut_ptr();
        // SAFETY: dst has size + GUARD bytes after GUARD + d_o.
        let ret = unsafe { (self.fns.memset)(d.cast(), value, size) };
        let want = vec![value as u8; size];
        if let Some(e) = self.verify(d_o, &want) {
            self.fail("memset", size, 0, d_o, format!("value {value:#x}: {e}"));
        } else if ret != d.cast() {
            self.fail("memset", size, 0, d_o, "did not return dst".into());
        }
    }

    /// memmove within one buffer from position `from` to position `to` (both past the guard).
    fn memmove(&mut self, size: usize, from: usize, to: usize) {
        self.report.cases += 1;
        let span = GUARD + from.max(to) + size + GUARD;
        // Buffer content: the source pattern; expected: the same after a correct move.
        let pattern = self.src.bytes()[..span].to_vec();
        let mut want = pattern.clone();
        want.copy_within(GUARD + from..GUARD + from + size, GUARD + to);
        let buf = &mut self.dst.bytes()[..span];
        buf.copy_from_slice(&pattern);
        let base = buf.as_mut_ptr();
        // SAFETY: both ranges lie inside `buf` (span covers the larger offset plus size).
        let ret = unsafe {
            (self.fns.memmove)(
                base.add(GUARD + to).cast(),
                base.add(GUARD + from).cast(),
                size,
            )
        };
        // SAFETY: same pointer arithmetic as above, for comparison only.
        let expect_ret = unsafe { base.add(GUARD + to) };
        let got = &self.dst.bytes()[..span];
        if let Some(i) = (0..span).find(|&i| got[i] != want[i]) {
            let dir = if to > from {
                "forward overlap"
            } else {
                "backward overlap"
            };
            let detail = format!(
                "{dir}: byte {} (relative to dst) is {:#04x}, expected {:#04x}",
                i as isize - (GUARD + to) as isize,
                got[i],
                want[i]
            );
            self.fail("memmove", size, from, to, detail);
        } else if ret != expect_ret.cast() {
            self.fail("memmove", size, from, to, "did not return dst".into());
        }
    }

    fn memcmp(&mut self, size: usize, so: usize, d_o: usize) {
        // b is a copy of a at another offset; then one byte differs at first, middle, last.
        let a_range = GUARD + so..GUARD + so + size;
        let a = self.src.bytes()[a_range.clone()].to_vec();
        let b_start = GUARD + d_o;
        self.dst.bytes()[b_start..b_start + size].copy_from_slice(&a);
        let pa = self.src.bytes()[GUARD + so..].as_ptr();
        let pb = self.dst.bytes()[b_start..].as_ptr();
        let call = |fns: &MemFns| -> i32 {
            // SAFETY: both ranges hold `size` readable bytes.
            unsafe { (fns.memcmp)(pa.cast(), pb.cast(), size) }
        };
        self.report.cases += 1;
        let r = call(&self.fns);
        if r != 0 {
            self.fail("memcmp", size, so, d_o, format!("equal buffers gave {r}"));
        }
        if size == 0 {
            return;
        }
        let mut positions = vec![0, size / 2, size - 1];
        positions.dedup();
        for pos in positions {
            for (av, bv, sign) in [(0x10u8, 0x90u8, -1), (0x90, 0x10, 1)] {
                self.report.cases += 1;
                let saved = self.src.bytes()[GUARD + so + pos];
                self.src.bytes()[GUARD + so + pos] = av;
                self.dst.bytes()[b_start + pos] = bv;
                let r = call(&self.fns);
                self.src.bytes()[GUARD + so + pos] = saved;
                self.dst.bytes()[b_start + pos] = saved;
                if r.signum() != sign {
                    let detail = format!(
                        "differing at byte {pos} ({av:#04x} vs {bv:#04x}) gave {r}, expected {}",
                        if sign < 0 { "< 0" } else { "> 0" }
                    );
                    self.fail("memcmp", size, so, d_o, detail);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{Kernel, portable};

    fn all(fns: MemFns, threads: usize) -> CheckReport {
        let mut r = CheckReport::default();
        for f in Func::ALL {
            r.merge(run(fns, threads, f, &f.sizes()).unwrap());
        }
        r
    }

    #[test]
    fn every_available_kernel_passes() {
        for k in Kernel::ALL {
            let Ok(fns) = k.fns() else {
                benchmp::errln!("skipped {}: not available here", k.name());
                continue;
            };
            let r = all(fns, 1);
            assert_eq!(r.failures, 0, "{}: {:?}", k.name(), r.mismatches);
            assert!(r.cases > 100_000);
        }
    }

    #[test]
    fn sizes_run_small_to_large_and_memmove_stops_at_a_mebibyte() {
        let copy = Func::Memcpy.sizes();
        assert_eq!(copy.len(), SMALL_MAX + 1 + LARGE_SIZES.len());
        assert_eq!((copy[0], copy[SMALL_MAX + 1]), (0, 65));
        assert_eq!(*copy.last().unwrap(), 4 << 20);
        assert!(Func::Memmove.sizes().iter().all(|&s| s <= 1 << 20));
        let one = run(Kernel::Portable.fns().unwrap(), 1, Func::Memset, &[3]).unwrap();
        assert_eq!(one.cases, 64 * 4);
        // Each size alone fits its buffers (memmove's ranges reach one and a half sizes).
        for f in Func::ALL {
            for n in [0, 64, 65, 257, 1 << 20, f.sizes()[f.sizes().len() - 1]] {
                let r = run(Kernel::Portable.fns().unwrap(), 1, f, &[n]).unwrap();
                assert_eq!(r.failures, 0, "{f} {n}");
            }
        }
    }

    unsafe extern "C" fn broken_memcpy(
        d: *mut std::ffi::c_void,
        s: *const std::ffi::c_void,
        n: usize,
    ) -> *mut std::ffi::c_void {
        // SAFETY: forwarded contract; the extra write stays inside the destination.
        unsafe {
            portable::memcpy(d, s, n);
            if n == 4097 {
                *d.cast::<u8>().add(100) ^= 1;
            }
        }
        d
    }

    #[test]
    fn a_corrupting_memcpy_is_named_with_size_and_offsets() {
        let mut fns = Kernel::Portable.fns().unwrap();
        fns.memcpy = broken_memcpy;
        let r = all(fns, 2);
        assert_eq!(r.failures, 2 * LARGE_OFFSETS.len() as u64);
        let m = &r.mismatches[0];
        assert_eq!((m.op.as_str(), m.size), ("memcpy", 4097));
        assert!(m.to_string().contains("byte 100 is"), "{m}");
    }
}
