//! The pipes between the parent and a child: lmbench's ready/go/done/result/exit signals.
//!
//! A child talks up with length-prefixed JSON frames ([`Up`]); the parent talks down with
//! single bytes ([`GO`], [`RESULT`], [`EXIT`]), and a closed pipe counts as EXIT so a child
//! never outlives a parent that stopped caring.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use serde::{Deserialize, Serialize};

use super::{ChildRun, Data, LoadRun};

/// Messages from a child to the parent (its benchmark's sample and child records typed).
#[derive(Debug, Serialize, Deserialize)]
#[serde(bound = "S: Data, C: Data")]
pub(super) enum Up<S, C> {
    /// Built, pinned and sized; waiting for GO.
    Ready,
    /// Took its readings before the timed intervals (clock probe, counters) after GO; waiting
    /// for START without running anything, so that every child of a parallel run starts
    /// within microseconds of the others.
    Armed,
    /// One timed interval ended after this many ns (the parent's hang deadline grows with it).
    Progress { elapsed_ns: u64 },
    /// Every timed interval is done; keeping busy until RESULT.
    Done,
    /// The child's measurements.
    Result(Box<ChildRun<S, C>>),
    /// A load child has started loading.
    Loading,
    /// A load child is still loading (a heartbeat).
    Alive,
    /// A load child's result over the window it was sent.
    Load(Box<LoadRun>),
    /// The child failed; its exit status and the one-line reason.
    Failed { code: i32, message: String },
    /// Worker mode: the count the child sized for one repetition (after SIZE).
    Sized { count: u64 },
    /// Worker mode: the repetition a STEP asked for.
    Stepped(super::worker::StepSample),
    /// Worker mode: a load child stopped loading after PAUSE.
    Paused,
    /// Worker mode: the child's answer to RENEW (true: its buffers are fresh).
    Renewed { renewed: bool },
}

/// Parent to child: start the timed intervals.
pub(super) const GO: u8 = b'G';
/// Parent to child of a parallel run: the first timed interval now (after [`Up::Armed`]).
pub(super) const START: u8 = b'B';
/// Parent to child: send the result now.
pub(super) const RESULT: u8 = b'R';
/// Parent to child: leave.
pub(super) const EXIT: u8 = b'X';
/// Parent to load child: start loading.
pub(super) const LOAD: u8 = b'L';
/// Parent to load child: stop; the measuring window follows (two little-endian u64: start
/// and end, CLOCK_MONOTONIC ns).
pub(super) const WINDOW: u8 = b'W';

/// Worker mode, parent to child: time one repetition of the count that follows (a
/// little-endian u64, written with it in one write).
pub(super) const STEP: u8 = b'S';
/// Worker mode, parent to child: no more steps; report as after the last interval.
pub(super) const STOP: u8 = b'T';
/// Worker mode, parent to load child: stop loading until the next LOAD (or WINDOW), and say
/// so with [`Up::Paused`]; a load runs only while its own side's repetitions do.
pub(super) const PAUSE: u8 = b'P';
/// Worker mode, parent to child: size the count to the repetition length now (only one
/// side of a pair sizes, alone on its CPUs; the other uses its count).
pub(super) const SIZE: u8 = b'Z';
/// Worker mode, parent to child: renew the benchmark's buffers ([`super::Benchmark::renew`]),
/// run one untimed repetition over them, and say so with [`Up::Renewed`].
pub(super) const RENEW: u8 = b'N';

/// Reads the 16 bytes of a window after [`WINDOW`] (written with it in one write, so they
/// are there or about to be); `None` when the pipe closes first.
pub(super) fn read_window(down: &mut File) -> Option<(u64, u64)> {
    let mut buf = [0u8; 16];
    read_exact(down, &mut buf)?;
    let (a, b) = buf.split_at(8);
    Some((
        u64::from_le_bytes(a.try_into().ok()?),
        u64::from_le_bytes(b.try_into().ok()?),
    ))
}

/// Reads the count after [`STEP`]; `None` when the pipe closes first.
pub(super) fn read_count(down: &mut File) -> Option<u64> {
    let mut buf = [0u8; 8];
    read_exact(down, &mut buf)?;
    Some(u64::from_le_bytes(buf))
}

/// Fills `buf` from the non-blocking control pipe; `None` when it closes first.
fn read_exact(down: &mut File, buf: &mut [u8]) -> Option<()> {
    let mut got = 0;
    while got < buf.len() {
        match down.read(&mut buf[got..]) {
            Ok(0) => return None,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let mut fds = [PollFd::new(down.as_fd(), PollFlags::POLLIN)];
                let _ = poll(&mut fds, PollTimeout::from(100u16));
            }
            Err(_) => return None,
        }
    }
    Some(())
}

/// Writes one frame: a little-endian u32 length, then the JSON body.
pub(super) fn send<S: Data, C: Data>(up: &mut File, msg: &Up<S, C>) -> std::io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    let mut frame = Vec::with_capacity(body.len() + 4);
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(&body);
    up.write_all(&frame)
}

/// Takes every complete frame off the front of `buf`, leaving a partial one in place.
pub(super) fn decode<S: Data, C: Data>(
    buf: &mut Vec<u8>,
) -> Result<Vec<Up<S, C>>, serde_json::Error> {
    let mut out = Vec::new();
    while buf.len() >= 4 {
        let len = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
        if buf.len() < 4 + len {
            break;
        }
        let msg: Up<S, C> = serde_json::from_slice(&buf[4..4 + len])?;
        buf.drain(..4 + len);
        out.push(msg);
    }
    Ok(out)
}

/// Makes reads on `fd` return at once when nothing is waiting.
pub(super) fn set_nonblocking(fd: &OwnedFd) {
    if let Ok(flags) = fcntl(fd.as_fd(), FcntlArg::F_GETFL) {
        let _ = fcntl(
            fd.as_fd(),
            FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK),
        );
    }
}

/// A byte waiting on the (non-blocking) control pipe, if any; a closed pipe reads as EXIT.
pub(super) fn poll_byte(down: &mut File) -> Option<u8> {
    let mut b = [0u8; 1];
    match down.read(&mut b) {
        Ok(1) => Some(b[0]),
        Ok(_) => Some(EXIT),
        Err(_) => None,
    }
}

/// Reads the control pipe without pause until a byte arrives (EOF counts as EXIT): the
/// fastest a child can see it, for the moments a few microseconds matter.
pub(super) fn spin_byte(down: &mut File) -> u8 {
    loop {
        if let Some(b) = poll_byte(down) {
            return b;
        }
        std::hint::spin_loop();
    }
}

/// Blocks until a byte arrives on the control pipe (EOF counts as EXIT).
pub(super) fn wait_byte(down: &mut File) -> u8 {
    loop {
        if let Some(b) = poll_byte(down) {
            return b;
        }
        let mut fds = [PollFd::new(down.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::from(1000u16));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_across_partial_reads() {
        let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        let mut wf = File::from(w);
        send(&mut wf, &Up::<(), ()>::Ready).unwrap();
        send(&mut wf, &Up::<(), ()>::Progress { elapsed_ns: 42 }).unwrap();
        drop(wf);
        let mut buf = Vec::new();
        File::from(r).read_to_end(&mut buf).unwrap();
        // Feed the frames in two pieces to check partial frames are kept.
        let tail = buf.split_off(5);
        assert!(decode::<(), ()>(&mut buf).unwrap().is_empty());
        buf.extend_from_slice(&tail);
        let msgs = decode::<(), ()>(&mut buf).unwrap();
        assert_eq!(msgs.len(), 2);
        assert!(matches!(msgs[0], Up::Ready));
        assert!(matches!(msgs[1], Up::Progress { elapsed_ns: 42 }));
        assert!(buf.is_empty());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut buf = vec![3, 0, 0, 0, b'x', b'y', b'z'];
        assert!(decode::<(), ()>(&mut buf).is_err());
    }
}
