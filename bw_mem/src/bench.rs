//! One child's benchmark state: its buffers, allocated and first-touched on its own CPU after
//! pinning, and the kernel that walks them once per iteration.
//!
//! lmbench allocates `buf` (page-aligned, zero-filled, which faults every page in) and, for the
//! copies, `buf2` of `nbytes + 2048` bytes whose destination starts at its page-aligned start,
//! or 1920 bytes in with the `conflict` argument. lmbench leaves `buf2` untouched, so its page
//! faults land in the first timed intervals; here every page of both is faulted in before the
//! first interval.

use std::hint::black_box;
use std::time::Instant;

use benchmp::sys::mem::{MemError, PagesObtained};
use benchmp::{Benchmark, Buffer, Pages};

use crate::kernels::{Io, Kernel};
use crate::ops::{CONFLICT_OFFSET, SECOND_BUFFER_SLACK};
use crate::report::{ChildDetail, ChildPages, PeerTime};

/// The buffers of one child.
#[derive(Debug)]
pub struct Buffers {
    buf: Buffer,
    buf2: Option<Buffer>,
    nbytes: usize,
    dst_offset: usize,
}

impl Buffers {
    /// Maps `buf` (zero-filled) and, when `second` is set, `buf2` (every page touched), with
    /// the asked page policy; `conflict` puts the copy destination 1920 bytes into `buf2`.
    pub fn new(
        nbytes: usize,
        second: bool,
        conflict: bool,
        pages: Pages,
    ) -> Result<Buffers, MemError> {
        let mut buf = Buffer::new(nbytes, pages)?;
        buf.as_mut_slice().fill(0);
        let buf2 = if second {
            let mut b = Buffer::new(nbytes + SECOND_BUFFER_SLACK, pages)?;
            b.touch();
            Some(b)
        } else {
            None
        };
        Ok(Buffers {
            buf,
            buf2,
            nbytes,
            dst_offset: if conflict { CONFLICT_OFFSET } else { 0 },
        })
    }

    /// The buffers as a kernel takes them (source, and destination for copies).
    pub fn io(&mut self) -> Io<'_> {
        let n = self.nbytes;
        match &mut self.buf2 {
            Some(b2) => Io::Two(
                &self.buf.as_slice()[..n],
                &mut b2.as_mut_slice()[self.dst_offset..self.dst_offset + n],
            ),
            None => Io::One(&mut self.buf.as_mut_slice()[..n]),
        }
    }

    /// The source buffer (`nbytes` bytes).
    pub fn source(&self) -> &[u8] {
        &self.buf.as_slice()[..self.nbytes]
    }

    /// The source buffer, writable (to set up test patterns).
    pub fn source_mut(&mut self) -> &mut [u8] {
        &mut self.buf.as_mut_slice()[..self.nbytes]
    }

    /// The copy destination (`nbytes` bytes of `buf2` from the destination offset), if any.
    pub fn destination(&self) -> Option<&[u8]> {
        self.buf2
            .as_ref()
            .map(|b| &b.as_slice()[self.dst_offset..self.dst_offset + self.nbytes])
    }

    /// The whole second buffer, if any (to check what a copy left outside its destination).
    pub fn second_buffer_mut(&mut self) -> Option<&mut [u8]> {
        self.buf2.as_mut().map(|b| b.as_mut_slice())
    }

    /// Offset of the copy destination inside `buf2`.
    pub fn destination_offset(&self) -> usize {
        self.dst_offset
    }

    /// What the kernel backed `buf` and `buf2` with.
    pub fn pages_obtained(&self) -> (PagesObtained, Option<PagesObtained>) {
        (
            self.buf.pages_obtained(),
            self.buf2.as_ref().map(Buffer::pages_obtained),
        )
    }
}

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
        })
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
            ns: ns[ns.len() / 2],
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
