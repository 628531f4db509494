//! The timed kernel: dependent loads through a ring of pointers written into a benchmark
//! buffer, 100 per pass, unrolled as lmbench's `benchmark_loads` (`p = *p` a hundred times).
//!
//! Each load's address is the value of the previous one, so loads cannot overlap and the time
//! per pass is 100 load-to-use latencies. The chase resumes where the previous call stopped
//! and returns the final pointer, which the harness keeps as a checksum: the loads produce the
//! result, so the optimiser cannot drop them (the release build's code for `chase` is 100
//! `mov rax, [rax]` in a counted loop on x86_64; see the README).
//!
//! This is the only module with `unsafe`: writing pointers into the mapping and following
//! them. The safe [`Ring`] keeps the invariant that makes the chase sound: every link was
//! written inside the buffer, and every link's target is itself a written link (a property of
//! every [`Plan`] layout, checked by the chain tests).
#![allow(unsafe_code)]

use benchmp::Buffer;
use benchmp::sys::mem::PagesObtained;

use crate::chain::{POINTER, Plan};

/// Loads in one pass of the kernel.
pub const LOADS_PER_PASS: u64 = 100;

/// A link that does not fit in the buffer (a bug in a layout, never expected).
#[derive(Debug, thiserror::Error)]
#[error("chain link {from} -> {to} lies outside the {len}-byte buffer")]
pub struct OutOfBounds {
    /// Offset of the word.
    pub from: usize,
    /// Offset it points to.
    pub to: usize,
    /// Buffer length.
    pub len: usize,
}

/// A pointer ring in its own buffer, and where the chase stands.
#[derive(Debug)]
pub struct Ring {
    buf: Buffer,
    cur: *const u8,
    start: usize,
}

impl Ring {
    /// Writes every link of `plan` into `buf` (only those words are touched, as lmbench) and
    /// places the chase at the plan's start.
    pub fn build(mut buf: Buffer, plan: &Plan) -> Result<Ring, OutOfBounds> {
        let len = buf.len();
        let base = buf.as_mut_ptr();
        let mut bad = None;
        plan.for_each_link(|from, to| {
            if from + POINTER > len || to + POINTER > len {
                bad.get_or_insert(OutOfBounds { from, to, len });
                return;
            }
            // SAFETY: `from + POINTER <= len`, so the word lies inside the writable mapping
            // that `buf` owns and this function borrows exclusively; `to` is inside it too, so
            // `base.add(to)` stays in the same allocation. Unaligned writes are allowed.
            unsafe {
                base.add(from)
                    .cast::<*const u8>()
                    .write_unaligned(base.add(to))
            }
        });
        if let Some(e) = bad {
            return Err(e);
        }
        let start = plan.start();
        if start + POINTER > len {
            return Err(OutOfBounds {
                from: start,
                to: start,
                len,
            });
        }
        // SAFETY: `start` is inside the mapping (checked above).
        let cur = unsafe { base.add(start) }.cast_const();
        Ok(Ring { buf, cur, start })
    }

    /// Runs `passes` passes of 100 dependent loads from where the last call stopped; returns
    /// the final address (the checksum).
    pub fn run(&mut self, passes: u64) -> u64 {
        // SAFETY: `cur` points at a linked word of this ring (the start, or where the last
        // chase stopped); every linked word holds a pointer to another linked word inside
        // `self.buf` (built by `build` from a plan whose link targets are all link sources),
        // and the buffer lives, unmodified, as long as `self`.
        self.cur = unsafe { chase(self.cur, passes) };
        self.cur as usize as u64
    }

    /// Offset of the chase's current position from the buffer start.
    pub fn position(&self) -> usize {
        self.cur as usize - self.buf.as_ptr() as usize
    }

    /// Offset of the first load.
    pub fn start(&self) -> usize {
        self.start
    }

    /// What the kernel backs the buffer with now (page sizes, THP, hugetlb, resident bytes).
    pub fn pages_obtained(&self) -> PagesObtained {
        self.buf.pages_obtained()
    }
}

macro_rules! ten {
    ($($body:tt)*) => {
        $($body)* $($body)* $($body)* $($body)* $($body)*
        $($body)* $($body)* $($body)* $($body)* $($body)*
    };
}

/// One load: the pointer stored at `p`.
///
/// # Safety
/// `p` must point to `POINTER` readable bytes holding a pointer.
#[inline(always)]
unsafe fn load(p: *const u8) -> *const u8 {
    // SAFETY: the caller guarantees `p` addresses a readable pointer-sized word.
    unsafe { p.cast::<*const u8>().read_unaligned() }
}

/// `passes` × 100 dependent loads starting at `p`; returns where the chase ends.
///
/// # Safety
/// `p` must point to a readable pointer-sized word holding a pointer to another such word,
/// and so on for every load asked (a ring of pointers inside live memory).
#[inline(never)]
unsafe fn chase(mut p: *const u8, passes: u64) -> *const u8 {
    for _ in 0..passes {
        // SAFETY: by the function's contract every word reached holds a pointer to the next.
        unsafe {
            ten!(ten!(p = load(p);););
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Geometry, Mode, Rings};
    use benchmp::Pages;

    fn ring_for(g: &Geometry, seed: u64) -> (Ring, Plan) {
        let plan = Plan::new(g, Some(seed));
        let buf = Buffer::new(g.alloc_bytes(), Pages::Small).unwrap();
        (Ring::build(buf, &plan).unwrap(), plan)
    }

    /// The chase loop sits at the same offset within its cache lines in every build.
    #[test]
    fn chase_starts_on_a_cache_line() {
        benchmp::testing::assert_code_aligned(&[("chase", chase as *const ())]);
    }

    #[test]
    fn chase_follows_the_planned_ring() {
        for (mode, range, stride) in [
            (Mode::Sequential, 512, 64),
            (Mode::Sequential, 4000, 24),
            (Mode::Random, 3072, 64),
            (Mode::Random, 16384, 64),
            (Mode::Random, 8192, 100),
            (Mode::Sequential, 1000, 12),
        ] {
            for rings in [Rings::Lmbench, Rings::Exact] {
                let g = Geometry {
                    range,
                    stride,
                    maxlen: 64 * 1024,
                    pagesize: 4096,
                    mode,
                    rings,
                };
                let (mut ring, plan) = ring_for(&g, 11);
                let order = plan.walk().order;
                assert_eq!(ring.position(), order[0]);
                let mut loads = 0usize;
                for passes in [1u64, 3, 7] {
                    ring.run(passes);
                    loads += passes as usize * LOADS_PER_PASS as usize;
                    assert_eq!(
                        ring.position(),
                        order[loads % order.len()],
                        "{mode:?} {rings:?} {range}/{stride} after {loads} loads"
                    );
                }
            }
        }
    }

    #[test]
    fn checksum_is_the_final_address() {
        let g = Geometry {
            range: 4096,
            stride: 64,
            maxlen: 4096,
            pagesize: 4096,
            mode: Mode::Sequential,
            rings: Rings::Lmbench,
        };
        let (mut ring, _) = ring_for(&g, 1);
        let base = ring.buf.as_ptr() as u64;
        // 64 elements: 100 loads end 36 elements in.
        assert_eq!(ring.run(1), base + 36 * 64);
        assert_eq!(ring.run(0), base + 36 * 64);
        assert_eq!(ring.start(), 0);
    }

    #[test]
    fn out_of_bounds_links_are_refused() {
        let g = Geometry {
            range: 8192,
            stride: 64,
            maxlen: 8192,
            pagesize: 4096,
            mode: Mode::Sequential,
            rings: Rings::Lmbench,
        };
        let plan = Plan::new(&g, None);
        let small = Buffer::new(4096, Pages::Small).unwrap();
        let e = Ring::build(small, &plan).unwrap_err();
        assert!(e.to_string().contains("outside"), "{e}");
    }
}
