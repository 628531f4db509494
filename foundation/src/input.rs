//! The one way a socbench process opens a file to read it: without blocking, checked on the
//! open descriptor to be a regular file, and read up to a bound. A FIFO where a file was
//! expected would hang the open (and a stop signal only sets a flag while a run holds them),
//! a device (`/dev/zero`, or a link to it) would fill memory, and a check made by path before
//! the open could be raced. sysfs, procfs and tracefs attributes are regular files, so they
//! pass; `benchmp::input` builds its refusals on this, and every reader of a setting, a cache
//! or an attribute uses it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Why a path cannot be read as a file.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The open or the check on the descriptor failed (missing, denied, a resource limit).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A folder.
    #[error("is a folder, not a file")]
    Folder,
    /// A FIFO, device or socket.
    #[error("is {0}, not a regular file")]
    Special(&'static str),
}

impl From<OpenError> for io::Error {
    fn from(e: OpenError) -> io::Error {
        match e {
            OpenError::Io(e) => e,
            OpenError::Folder => io::Error::new(io::ErrorKind::IsADirectory, e.to_string()),
            OpenError::Special(_) => io::Error::new(io::ErrorKind::InvalidInput, e.to_string()),
        }
    }
}

/// What a file type is, in words, when it is neither a regular file nor a folder.
pub fn special_kind(t: std::fs::FileType) -> Option<&'static str> {
    if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

/// Opens `path` (through symlinks) for reading without waiting for anything: a FIFO neither
/// hangs the open nor slips in after a check, since the check is made on the open descriptor.
pub fn open_regular(path: &Path) -> Result<File, OpenError> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = f.metadata()?;
    if meta.is_dir() {
        return Err(OpenError::Folder);
    }
    if let Some(kind) = special_kind(meta.file_type()) {
        return Err(OpenError::Special(kind));
    }
    Ok(f)
}

/// Reads an open file to its end, or to `limit` bytes: `None` when it holds more.
pub fn read_bounded(f: File, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    f.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// The text of a small regular file (a sysfs, procfs or tracefs attribute, a setting), at
/// most `limit` bytes, invalid UTF-8 replaced; every failure an [`io::Error`] saying why
/// (a FIFO, a device, more than the bound).
pub fn read_small(path: &Path, limit: u64) -> io::Result<String> {
    let f = open_regular(path)?;
    match read_bounded(f, limit)? {
        Some(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        None => Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("holds more than {limit} bytes"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("ftrace-input-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn fifos_devices_and_folders_are_refused_without_waiting() {
        let d = scratch("kinds");
        let fifo = d.join("temp");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let e = read_small(&fifo, 64).unwrap_err();
        assert!(e.to_string().contains("is a FIFO"), "{e}");
        let zero = d.join("energy_uj");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = read_small(&zero, 64).unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
        assert!(matches!(open_regular(&d), Err(OpenError::Folder)));
        let e = read_small(&d.join("none"), 64).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_file_is_read_up_to_its_bound() {
        let d = scratch("bound");
        let p = d.join("f");
        std::fs::write(&p, "12345\n").unwrap();
        assert_eq!(read_small(&p, 6).unwrap(), "12345\n");
        let e = read_small(&p, 5).unwrap_err();
        assert!(e.to_string().contains("more than 5 bytes"), "{e}");
        // procfs reports a size of 0 and is read to its end all the same.
        assert!(read_small(Path::new("/proc/self/stat"), 4096).is_ok());
        let _ = std::fs::remove_dir_all(d);
    }
}
