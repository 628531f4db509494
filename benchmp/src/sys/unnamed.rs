//! Unnamed files: a child's output kept where nobody can name, replace or leave it behind.
//!
//! `benchmp ab` keeps each worker's output in one: a name in a shared folder could be
//! predicted and planted as a symlink, would need that folder to exist, and would stay after a
//! SIGKILL. An unnamed file goes with its last descriptor.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

/// A new unnamed read-write file, closed on exec and in append mode for every descriptor of
/// it (so [`keep_tail`] can cut it while a child writes): `memfd_create`, else an `O_TMPFILE`
/// file in the temporary folder.
pub fn unnamed_file(what: &str) -> io::Result<File> {
    use nix::sys::memfd::{MFdFlags, memfd_create};
    let f = match memfd_create(what, MFdFlags::MFD_CLOEXEC) {
        Ok(fd) => File::from(fd),
        Err(_) => {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .mode(0o600)
                .custom_flags(libc::O_TMPFILE)
                .open(std::env::temp_dir())?
        }
    };
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = fcntl(&f, FcntlArg::F_GETFL).map_err(io::Error::from)?;
    fcntl(
        &f,
        FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) | OFlag::O_APPEND),
    )
    .map_err(io::Error::from)?;
    Ok(f)
}

/// The last `max` bytes of a file (all of it when shorter).
pub fn tail(f: &File, max: u64) -> io::Result<Vec<u8>> {
    let len = f.metadata()?.len();
    let start = len.saturating_sub(max);
    let mut buf = vec![0u8; (len - start) as usize];
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], start + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(got);
    Ok(buf)
}

/// Cuts an append-mode file that grew past `limit` bytes back to its last `keep` bytes, so a
/// child that writes without end cannot fill memory (a memfd) or the disk.
pub fn keep_tail(f: &File, limit: u64, keep: u64) -> io::Result<()> {
    if f.metadata()?.len() <= limit {
        return Ok(());
    }
    let last = tail(f, keep)?;
    f.set_len(0)?;
    (&*f).write_all(&last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unnamed_file_keeps_its_tail_only_when_asked() {
        let f = unnamed_file("benchmp-test").unwrap();
        (&f).write_all(b"first line\nsecond line\n").unwrap();
        assert_eq!(tail(&f, 12).unwrap(), b"second line\n");
        assert_eq!(tail(&f, 1000).unwrap().len(), 23);
        keep_tail(&f, 100, 5).unwrap();
        assert_eq!(
            f.metadata().unwrap().len(),
            23,
            "under the limit: untouched"
        );
        keep_tail(&f, 10, 5).unwrap();
        assert_eq!(tail(&f, 1000).unwrap(), b"line\n");
        // Appends go after what was kept, whoever writes.
        let other = f.try_clone().unwrap();
        (&other).write_all(b"x\n").unwrap();
        assert_eq!(tail(&f, 1000).unwrap(), b"line\nx\n");
    }
}
