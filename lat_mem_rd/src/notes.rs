//! A side channel from the children to the parent for what benchmp's per-child result does not
//! carry: the pages the kernel actually gave each child's buffer (read from smaps inside the
//! child, where the buffer lives), the shuffle seed and how long the chain took to build.
//!
//! One pipe, created before any child is forked and inherited by all; each child writes one
//! JSON line shorter than PIPE_BUF, so lines from several children never interleave. Both ends
//! are non-blocking: a full pipe drops a note rather than stalling a child, and the parent reads
//! what is there after the measurement has reaped every child.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};

use benchmp::sys::mem::PagesObtained;
use nix::fcntl::OFlag;
use serde::{Deserialize, Serialize};

/// Longest note written (POSIX guarantees atomic pipe writes up to 512 bytes; Linux 4096).
const MAX_NOTE: usize = 4096;

/// What one child reports about its buffer and chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildNote {
    /// Child number.
    pub index: usize,
    /// CPU it was pinned to.
    pub cpu: Option<usize>,
    /// Seed of its page shuffle.
    pub seed: u64,
    /// Time to map the buffer and write the chain, ns.
    pub setup_ns: u64,
    /// What backs the buffer after the chain was written.
    pub pages: PagesObtained,
}

/// The pipe; the parent keeps both ends, children inherit them.
#[derive(Debug)]
pub struct Notes {
    read: File,
    write: File,
}

impl Notes {
    /// Creates the pipe (close-on-exec, non-blocking).
    pub fn open() -> nix::Result<Notes> {
        let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
        Ok(Notes {
            read: File::from(r),
            write: File::from(w),
        })
    }

    /// Writes one note in a single write (dropped if the pipe is full).
    pub fn send(&self, note: &ChildNote) {
        if let Ok(mut line) = serde_json::to_vec(note) {
            line.push(b'\n');
            if line.len() <= MAX_NOTE {
                let _ = (&self.write).write(&line);
            }
        }
    }

    /// Every complete note waiting in the pipe, sorted by child.
    pub fn drain(&self) -> Vec<ChildNote> {
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match (&self.read).read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => bytes.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let mut notes: Vec<ChildNote> = bytes
            .split(|&b| b == b'\n')
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect();
        notes.sort_by_key(|n| n.index);
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_round_trip_without_blocking() {
        let n = Notes::open().unwrap();
        assert!(n.drain().is_empty(), "an empty pipe must not block");
        for index in [1, 0] {
            n.send(&ChildNote {
                index,
                cpu: Some(index),
                seed: 42,
                setup_ns: 7,
                pages: PagesObtained {
                    page_size_bytes: 4096,
                    ..Default::default()
                },
            });
        }
        let got = n.drain();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].index, 0);
        assert_eq!(got[1].pages.page_size_bytes, 4096);
        assert!(n.drain().is_empty());
    }
}
