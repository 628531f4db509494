//! The foundation's unsafe calls: the signal disposition for SIGXFSZ, and the constructor
//! that notes, before `main`, which standard descriptors were closed.
#![allow(unsafe_code)]

use std::sync::atomic::Ordering;

use nix::sys::signal::{self, SigHandler, Signal};

/// Ignores SIGXFSZ, so a write past the file-size limit (`ulimit -f`) fails with EFBIG, an
/// error the writer reports, instead of killing the process without a word. Programs this
/// process starts inherit it.
pub(crate) fn ignore_file_size_signal() {
    // SAFETY: SIG_IGN installs no handler code.
    let _ = unsafe { signal::signal(Signal::SIGXFSZ, SigHandler::SigIgn) };
}

/// Bit `fd` set: standard descriptor `fd` (0, 1 or 2) was closed when the process started.
static CLOSED_AT_START: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Runs before `main` (and before the standard library puts `/dev/null` on a closed standard
/// descriptor, which would hide that it was closed) and notes which of 0, 1 and 2 were closed.
extern "C" fn note_closed_streams() {
    for fd in 0..3 {
        // SAFETY: F_GETFD only asks whether the descriptor exists; it changes nothing.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            CLOSED_AT_START.fetch_or(1 << fd, Ordering::SeqCst);
        }
    }
}

/// The loader runs the functions of `.init_array` before `main`.
#[used]
// SAFETY: the section holds pointers to functions taking no argument, as this one is; it
// only makes one system call per descriptor and stores an atomic.
#[unsafe(link_section = ".init_array")]
static NOTE_CLOSED_STREAMS: extern "C" fn() = note_closed_streams;

/// Whether standard descriptor `fd` was closed when the process started.
pub(crate) fn closed_at_start(fd: u8) -> bool {
    // Referenced here so the constructor is linked into every program that asks.
    let _ = std::hint::black_box(&NOTE_CLOSED_STREAMS);
    CLOSED_AT_START.load(Ordering::SeqCst) & (1 << fd) != 0
}
