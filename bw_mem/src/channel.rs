//! What each child learned while building its buffers (the pages the kernel gave it), sent
//! back to the parent on a pipe of its own.
//!
//! benchmp returns each child's samples but has no slot for tool data, and the pages actually
//! obtained can only be read from the child's own /proc/self/smaps. The pipe is created before
//! the fork; each child writes one short JSON line (below PIPE_BUF, so lines never interleave)
//! and the parent drains it after the measurement.

use std::os::fd::OwnedFd;

use benchmp::sys::mem::PagesObtained;
use nix::fcntl::OFlag;
use serde::{Deserialize, Serialize};

/// One child's buffers as the kernel backed them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildPages {
    /// Size argument of the measurement, bytes.
    pub size_bytes: u64,
    /// Child number.
    pub child: usize,
    /// CPU it was pinned to.
    pub cpu: Option<usize>,
    /// The source buffer.
    pub buf: PagesObtained,
    /// The copy destination buffer, for copies.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub buf2: Option<PagesObtained>,
}

/// A pipe from the children to the parent.
#[derive(Debug)]
pub struct Channel {
    read: OwnedFd,
    write: OwnedFd,
}

impl Channel {
    /// Opens the pipe (non-blocking at both ends: a full pipe drops a line rather than block
    /// a child, and draining never waits).
    pub fn open() -> nix::Result<Channel> {
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
        Ok(Channel { read, write })
    }

    /// Sends one record (from a child).
    pub fn send(&self, p: &ChildPages) {
        if let Ok(mut line) = serde_json::to_vec(p) {
            line.push(b'\n');
            let _ = nix::unistd::write(&self.write, &line);
        }
    }

    /// Everything sent so far (in the parent).
    pub fn drain(&self) -> Vec<ChildPages> {
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(n @ 1..) = nix::unistd::read(&self.read, &mut chunk) {
            bytes.extend_from_slice(&chunk[..n]);
        }
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let c = Channel::open().unwrap();
        assert!(c.drain().is_empty());
        let p = ChildPages {
            size_bytes: 4096,
            child: 1,
            cpu: Some(1),
            buf: PagesObtained {
                page_size_bytes: 4096,
                anon_huge_bytes: 0,
                hugetlb_bytes: 0,
                rss_bytes: 4096,
            },
            buf2: None,
        };
        c.send(&p);
        c.send(&p);
        assert_eq!(c.drain(), vec![p.clone(), p]);
        assert!(c.drain().is_empty());
    }
}
