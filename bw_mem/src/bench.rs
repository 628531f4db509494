//! One child's benchmark state: its buffers ([`Buffers`], lmbench's layout, allocated and
//! first-touched on its own CPU after pinning), and the kernel that walks them once per
//! iteration.

use std::hint::black_box;
use std::time::Instant;

use benchmp::sys::mem::MemError;
use benchmp::{Benchmark, Pages};

use crate::kernels::{Buffers, Kernel};
use crate::report::{ChildDetail, ChildPages, PeerTime};

/// Intervals of the subset operation a child times for the shape check.
pub const PEER_INTERVALS: usize = 3;

/// A child's benchmark: `run(n)` makes `n` passes over the buffers.
#[derive(Debug)]
pub struct BwBench {
    kernel: Kernel,
    bufs: Buffers,
    /// The subset operation to time once the intervals are done, if any.
    peer: Option<Kernel>,
    /// The count of the last timed interval.
    last: u64,
    /// What the buffers were made with, to renew them alike.
    made: (usize, bool, Pages),
    /// Children of the run, each renewing its buffers at the same time as this one.
    children: usize,
}

impl BwBench {
    /// Allocates and first-touches the buffers the kernel's operation needs.
    pub fn new(
        kernel: Kernel,
        nbytes: usize,
        conflict: bool,
        pages: Pages,
    ) -> Result<BwBench, MemError> {
        let bufs = Buffers::new(nbytes, kernel.op().uses_second_buffer(), conflict, pages)?;
        let peer =
            crate::shape::subset_of(kernel.op()).and_then(|(op, _)| Kernel::select(op, None).ok());
        Ok(BwBench {
            kernel,
            bufs,
            peer,
            last: 0,
            made: (nbytes, conflict, pages),
            children: 1,
        })
    }

    /// The same benchmark in a run of `children` children, which renew their buffers together
    /// (a renewal makes room for all of theirs).
    pub fn among(mut self, children: usize) -> BwBench {
        self.children = children.max(1);
        self
    }

    /// Times [`PEER_INTERVALS`] intervals of the subset operation at the last interval's count,
    /// after one untimed.
    fn time_peer(&mut self) -> Option<PeerTime> {
        let peer = self.peer?;
        if self.last == 0 {
            return None;
        }
        // One untimed interval first: the lines and TLB entries come to the subset warm.
        black_box(peer.passes(self.bufs.io(), self.last));
        let mut ns: Vec<u64> = (0..PEER_INTERVALS)
            .map(|_| {
                let t = Instant::now();
                black_box(peer.passes(self.bufs.io(), self.last));
                u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
            })
            .collect();
        ns.sort_unstable();
        Some(PeerTime {
            op: peer.op(),
            passes: self.last,
            ns: benchmp::stats::middle(&ns).copied().unwrap_or(0),
        })
    }

    /// The buffers.
    pub fn buffers(&self) -> &Buffers {
        &self.bufs
    }

    /// The buffers, writable.
    pub fn buffers_mut(&mut self) -> &mut Buffers {
        &mut self.bufs
    }
}

impl Benchmark for BwBench {
    type Sample = ();
    type Child = ChildDetail;

    fn run(&mut self, iterations: u64) -> u64 {
        self.last = iterations;
        // The kernel loops over the passes itself (see `Kernel::passes`).
        self.kernel.passes(self.bufs.io(), iterations)
    }

    fn keep_busy(&mut self, iterations: u64) -> u64 {
        self.kernel.passes(self.bufs.io(), iterations)
    }

    const RENEWS: bool = true;

    /// New buffers mapped and first-touched before the old are let go, so they take other
    /// physical pages.
    fn renew(&mut self) -> bool {
        let (nbytes, conflict, pages) = self.made;
        let second = self.kernel.op().uses_second_buffer();
        let bytes = nbytes as u64 * if second { 2 } else { 1 } * self.children as u64;
        if !benchmp::sys::mem::room_beside(bytes, pages) {
            return false;
        }
        match Buffers::new(nbytes, second, conflict, pages) {
            Ok(b) => {
                self.bufs = b;
                true
            }
            Err(_) => false,
        }
    }

    /// The pages the kernel gave this child's buffers (read from its /proc/self/smaps), so
    /// the report says what was measured rather than what was asked; and for a superset
    /// operation the subset's time on the same lines, timed now that every child is done.
    fn child_detail(&mut self) -> Option<ChildDetail> {
        let (buf, buf2) = self.bufs.pages_obtained();
        Some(ChildDetail {
            pages: ChildPages { buf, buf2 },
            peer: self.time_peer(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Op;

    #[test]
    fn copies_get_a_second_buffer_with_lmbench_layout() {
        let k = Kernel::select(Op::Fcp, None).unwrap();
        let b = BwBench::new(k, 4096, true, Pages::Small).unwrap();
        assert_eq!(b.buffers().destination_offset(), 1920);
        assert_eq!(b.buffers().destination().unwrap().len(), 4096);
        let b = BwBench::new(k, 4096, false, Pages::Small).unwrap();
        assert_eq!(b.buffers().destination_offset(), 0);
        let k = Kernel::select(Op::Rd, None).unwrap();
        let b = BwBench::new(k, 4096, true, Pages::Small).unwrap();
        assert!(b.buffers().destination().is_none(), "conflict ignored");
    }

    #[test]
    fn run_makes_n_passes() {
        let k = Kernel::select(Op::Rdwr, None).unwrap();
        let mut b = BwBench::new(k, 1024, false, Pages::Small).unwrap();
        for w in crate::kernels::portable::words_mut(b.buffers_mut().source_mut()) {
            *w = 2;
        }
        // First pass reads 2 × 64 targeted ints and stores 1s; the next two read 1s.
        assert_eq!(b.run(3), 2 * 64 + 64 + 64);
    }
}
