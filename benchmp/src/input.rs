//! The one way a socbench command opens an input file or folder: a regular file (or folder)
//! only, read up to a bound. A FIFO would hang the reader, a device (`/dev/zero`) fill memory,
//! and a file of another kind or encoding give a message about something else; each is
//! refused here in one line naming the path (exit status 2), before anything is parsed.

use std::fs::File;
use std::path::{Path, PathBuf};

use foundation::input::OpenError;

use crate::error::{EXIT_USAGE, ExitStatus};

/// The most a report, table or comparison a command reads may hold: far above any socbench
/// writes (a full lat_mem_rd sweep's JSON is a few MiB).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Why an input cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Nothing at the path.
    #[error("{}: no such file or folder", shown(.0))]
    Missing(PathBuf),
    /// A folder where a file was wanted.
    #[error("{}: is a folder, not a file", shown(.0))]
    Folder(PathBuf),
    /// A file where a folder was wanted.
    #[error("{}: is not a folder", shown(.0))]
    NotFolder(PathBuf),
    /// A FIFO, device or socket.
    #[error("{}: is {kind}, not a regular file", shown(.path))]
    Special {
        /// The path.
        path: PathBuf,
        /// What it is ("a FIFO").
        kind: &'static str,
    },
    /// Not readable by this process.
    #[error("{}: cannot be read (permission denied)", shown(.0))]
    Denied(PathBuf),
    /// Above the bound.
    #[error("{}: holds more than {} MiB; refused as an input", shown(.path), .limit >> 20)]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// The bound, bytes.
        limit: u64,
    },
    /// Not UTF-8 text.
    #[error("{}: is not UTF-8 text (byte {offset})", shown(.path))]
    NotText {
        /// The path.
        path: PathBuf,
        /// Where the first invalid byte is.
        offset: usize,
    },
    /// Any other failure to read.
    #[error("{}: cannot be read: {source}", shown(.path))]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl ExitStatus for InputError {
    fn exit_status(&self) -> i32 {
        EXIT_USAGE
    }
}

fn shown(p: &Path) -> String {
    foundation::error::shown(p)
}

fn io_error(path: &Path, e: std::io::Error) -> InputError {
    match e.kind() {
        std::io::ErrorKind::NotFound => InputError::Missing(path.to_path_buf()),
        std::io::ErrorKind::PermissionDenied => InputError::Denied(path.to_path_buf()),
        std::io::ErrorKind::IsADirectory => InputError::Folder(path.to_path_buf()),
        _ => InputError::Io {
            path: path.to_path_buf(),
            source: e,
        },
    }
}

/// Opens a regular file for reading (through symlinks). It is opened without blocking and
/// checked on the open descriptor ([`foundation::input::open_regular`]), so a FIFO neither hangs
/// the open nor slips in after a check.
pub fn open_file(path: &Path) -> Result<File, InputError> {
    foundation::input::open_regular(path).map_err(|e| match e {
        OpenError::Io(e) => io_error(path, e),
        OpenError::Folder => InputError::Folder(path.to_path_buf()),
        OpenError::Special(kind) => InputError::Special {
            path: path.to_path_buf(),
            kind,
        },
    })
}

/// The bytes of a regular file of at most `limit` bytes.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let f = open_file(path)?;
    foundation::input::read_bounded(f, limit)
        .map_err(|e| io_error(path, e))?
        .ok_or_else(|| InputError::TooLarge {
            path: path.to_path_buf(),
            limit,
        })
}

/// The text of a regular UTF-8 file of at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    String::from_utf8(read_bytes(path, limit)?).map_err(|e| InputError::NotText {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// [`read_text`], with `None` when nothing is at the path (an optional input); every other
/// failure is still an error.
pub fn read_text_if_there(path: &Path, limit: u64) -> Result<Option<String>, InputError> {
    match read_text(path, limit) {
        Err(InputError::Missing(_)) => Ok(None),
        other => other.map(Some),
    }
}

/// Checks that `path` is a folder this process can list.
pub fn check_folder(path: &Path) -> Result<(), InputError> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
    if !meta.is_dir() {
        return Err(InputError::NotFolder(path.to_path_buf()));
    }
    std::fs::read_dir(path).map_err(|e| io_error(path, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("benchmp-input-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let d = scratch("fifo");
        let p = d.join("status.tsv");
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let e = read_text(&p, 1024).unwrap_err();
        assert!(
            e.to_string().ends_with("is a FIFO, not a regular file"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn devices_folders_and_missing_files_are_named() {
        let zero = read_text(Path::new("/dev/zero"), 1024).unwrap_err();
        assert!(zero.to_string().contains("a character device"), "{zero}");
        let d = scratch("kinds");
        let link = d.join("x.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(matches!(
            read_text(&link, 1024),
            Err(InputError::Special { .. })
        ));
        assert!(matches!(read_text(&d, 1024), Err(InputError::Folder(_))));
        let missing = d.join("none");
        assert!(matches!(
            read_text(&missing, 1),
            Err(InputError::Missing(_))
        ));
        assert_eq!(read_text_if_there(&missing, 1).unwrap(), None);
        assert!(matches!(check_folder(&link), Err(InputError::NotFolder(_))));
        check_folder(&d).unwrap();
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn size_and_encoding_are_bounded_and_named() {
        let d = scratch("bound");
        let p = d.join("big.json");
        std::fs::write(&p, vec![b'x'; 2048]).unwrap();
        let e = read_text(&p, 1024).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: 1024, .. }), "{e}");
        assert_eq!(read_text(&p, 2048).unwrap().len(), 2048);
        std::fs::write(&p, b"ok\xff").unwrap();
        let e = read_text(&p, 1024).unwrap_err();
        assert!(e.to_string().contains("not UTF-8 text (byte 2)"), "{e}");
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn an_input_error_is_bad_input() {
        let e = InputError::Missing("x".into());
        assert_eq!(
            crate::error::exit_code_by(&e, &[crate::error::probe::<InputError>]),
            EXIT_USAGE
        );
    }
}
