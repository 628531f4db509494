//! Report files: written whole or not at all, and never onto a file the run reads.
//!
//! A report is first written to a hidden file beside its destination and renamed over it only
//! when complete, so an interrupted or failed run leaves the earlier file untouched (a file is
//! either complete or as it was). Devices and FIFOs (`/dev/stdout`, a pipe) are written
//! directly: they cannot be renamed over, and a partial stream to them is all a stream can be.

use std::io::{BufWriter, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use foundation::output::OutputFile;

/// A report file being written through a buffer ([`OutputFile`], ftrace's, which traces use
/// too); [`StagedFile::commit`] puts it in place, dropping it without a commit removes the
/// partial copy.
#[derive(Debug)]
pub struct StagedFile {
    w: BufWriter<OutputFile>,
}

impl StagedFile {
    /// Starts writing `path`: a hidden `.NAME.PID.tmp` beside the file a symlink points to, or
    /// the path itself when it is a device or FIFO. Creating the hidden copy is a real write
    /// attempt, so a folder that cannot be written fails here.
    pub fn create(path: &Path) -> std::io::Result<StagedFile> {
        Ok(StagedFile {
            w: BufWriter::new(OutputFile::create(path)?),
        })
    }

    /// The buffered writer of the file's contents.
    pub fn writer(&mut self) -> &mut BufWriter<OutputFile> {
        &mut self.w
    }

    /// Flushes the contents and puts the file in place.
    pub fn commit(self) -> std::io::Result<()> {
        self.w.into_inner().map_err(|e| e.into_error())?.commit()
    }
}

impl Write for StagedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

/// Writes one report file whole or not at all ([`StagedFile`]); a failure (a full disk) is an
/// error naming the path, and the earlier file, if any, is left as it was.
pub fn write_file(
    path: &str,
    write: impl FnOnce(&mut BufWriter<OutputFile>) -> std::io::Result<()>,
) -> Result<(), crate::output::OutputError> {
    StagedFile::create(Path::new(path))
        .and_then(|mut f| write(f.writer()).and_then(|()| f.commit()))
        .map_err(|source| crate::output::OutputError::File {
            path: path.to_string(),
            source,
        })
}

/// The device and inode of a path's file (through symlinks), if it exists.
pub fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// True when two paths name one file: the same inode (a symlink or hard link to it counts), or,
/// for files not there yet, the same absolute path once `.` and `..` are resolved.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (file_id(a), file_id(b)) {
        (Some(x), Some(y)) => x == y,
        (None, None) => absolute(a) == absolute(b),
        _ => false,
    }
}

/// The path made absolute, its folder resolved when it exists (the name itself may not).
fn absolute(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or(abs.clone()),
        _ => abs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("benchmp-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn an_uncommitted_file_leaves_the_old_one_and_no_trace() {
        let d = scratch("drop");
        let p = d.join("r.json");
        std::fs::write(&p, "old").unwrap();
        {
            let mut f = StagedFile::create(&p).unwrap();
            f.write_all(b"half a rep").unwrap();
            f.flush().unwrap();
            assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(names(&d), ["r.json"]);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_committed_file_replaces_the_target_behind_a_symlink() {
        let d = scratch("link");
        let real = d.join("real.json");
        let link = d.join("link.json");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut f = StagedFile::create(&link).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert!(link.is_symlink(), "the link is kept");
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(names(&d), ["link.json", "real.json"]);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_failed_writer_keeps_the_old_file() {
        let d = scratch("fail");
        let p = d.join("r.csv");
        std::fs::write(&p, "old").unwrap();
        let e = write_file(p.to_str().unwrap(), |w| {
            w.write_all(b"part")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(
            crate::error::chain_of(&e),
            format!("cannot write {}: disk full", p.display())
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(names(&d), ["r.csv"]);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn devices_are_written_directly() {
        let mut f = StagedFile::create(Path::new("/dev/null")).unwrap();
        f.write_all(b"x").unwrap();
        f.commit().unwrap();
        assert!(Path::new("/dev/null").exists());
    }

    #[test]
    fn links_and_spellings_of_one_file_are_the_same_file() {
        let d = scratch("same");
        let a = d.join("a.json");
        std::fs::write(&a, "{}").unwrap();
        std::fs::hard_link(&a, d.join("hard.json")).unwrap();
        std::os::unix::fs::symlink(&a, d.join("soft.json")).unwrap();
        assert!(same_file(&a, &d.join("hard.json")));
        assert!(same_file(&a, &d.join("soft.json")));
        assert!(same_file(&a, &d.join(".").join("a.json")));
        assert!(!same_file(&a, &d.join("b.json")));
        assert!(same_file(&d.join("new.csv"), &d.join(".").join("new.csv")));
        let _ = std::fs::remove_dir_all(d);
    }
}
