//! The buffers of a memory kernel: a child's source, and for the copies a destination in a
//! second buffer, allocated and first-touched on its own CPU after pinning.
//!
//! lmbench allocates `buf` (page-aligned, zero-filled, which faults every page in) and, for the
//! copies, `buf2` of `nbytes + 2048` bytes whose destination starts at its page-aligned start,
//! or 1920 bytes in with the `conflict` argument. lmbench leaves `buf2` untouched, so its page
//! faults land in the first timed intervals; here every page of both is faulted in before the
//! first interval.

use super::Io;
use super::ops::{CONFLICT_OFFSET, SECOND_BUFFER_SLACK};
use crate::sys::mem::{Buffer, MemError, Pages, PagesObtained};

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
