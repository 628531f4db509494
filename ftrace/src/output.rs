//! Output files written whole or not at all.
//!
//! A trace or its JSON goes to a hidden `.NAME.PID.tmp` beside its destination and is renamed
//! over it once complete, so a write that fails (a full disk, a file-size limit) or a capture
//! that fails leaves an earlier file exactly as it was. Devices and FIFOs (`/dev/null`, a pipe)
//! cannot be renamed over: they are written directly.

use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A file being written; [`OutputFile::commit`] puts it in place, and dropping it uncommitted
/// removes the partial copy.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    /// Where the content ends up: the file itself, not a symlink to it.
    dest: PathBuf,
    /// The hidden copy being written, `None` when writing the destination directly.
    staged: Option<PathBuf>,
}

impl OutputFile {
    /// Starts writing `path`. Creating the hidden copy is a real write attempt in the
    /// destination's folder, so an output that cannot be written fails here, before any work.
    pub fn create(path: &Path) -> io::Result<OutputFile> {
        match std::fs::metadata(path) {
            // A device, a FIFO, or a folder (which fails to open, as it should).
            Ok(meta) if !meta.is_file() => direct(path, OpenOptions::new().write(true)),
            // An existing file, perhaps behind symlinks: replace the file, keep the links.
            Ok(meta) => staged(&std::fs::canonicalize(path)?, Some(&meta)),
            // A dangling symlink: create what it names, as File::create does.
            Err(_) if path.is_symlink() => direct(
                path,
                OpenOptions::new().write(true).create(true).truncate(true),
            ),
            Err(err) if err.kind() == io::ErrorKind::NotFound => staged(path, None),
            Err(err) => Err(err),
        }
    }

    /// Puts the complete content in place (a rename over the destination).
    pub fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        if let Some(staged) = self.staged.take()
            && let Err(err) = std::fs::rename(&staged, &self.dest)
        {
            let _ = std::fs::remove_file(&staged);
            return Err(err);
        }
        Ok(())
    }
}

/// Writes `path` itself.
fn direct(path: &Path, options: &OpenOptions) -> io::Result<OutputFile> {
    Ok(OutputFile {
        file: options.open(path)?,
        dest: path.to_path_buf(),
        staged: None,
    })
}

/// Writes a hidden copy beside `dest`, with the mode and owner of the file it will replace.
fn staged(dest: &Path, old: Option<&Metadata>) -> io::Result<OutputFile> {
    let name = dest
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "names no file"))?;
    let mut hidden = OsString::from(".");
    hidden.push(name);
    hidden.push(format!(".{}.tmp", std::process::id()));
    let copy = dest.with_file_name(hidden);
    let open = || OpenOptions::new().write(true).create_new(true).open(&copy);
    let file = match open() {
        // Left by a process that had this pid and died: no live process writes it.
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(&copy)?;
            open()?
        }
        other => other?,
    };
    if let Some(meta) = old {
        let _ = file.set_permissions(meta.permissions());
        // As root, a user's trace stays the user's; anyone else can only keep their own.
        let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
    }
    Ok(OutputFile {
        file,
        dest: dest.to_path_buf(),
        staged: Some(copy),
    })
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some(staged) = self.staged.take() {
            let _ = std::fs::remove_file(staged);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ftrace-output-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn an_uncommitted_file_leaves_the_earlier_one_and_no_copy() {
        let dir = scratch("drop");
        let path = dir.join("trace.txt");
        std::fs::write(&path, "earlier").unwrap();
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(b"half a trace").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "earlier");
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "earlier");
        assert_eq!(names(&dir), ["trace.txt"]);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_commit_replaces_the_file_keeping_its_mode_and_links() {
        let dir = scratch("commit");
        let real = dir.join("real.json");
        let link = dir.join("link.json");
        std::fs::write(&real, "earlier").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut out = OutputFile::create(&link).unwrap();
        out.write_all(b"new").unwrap();
        out.commit().unwrap();
        assert!(link.is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(names(&dir), ["link.json", "real.json"]);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_new_file_appears_only_on_commit() {
        let dir = scratch("new");
        let path = dir.join("out.json");
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(b"{}").unwrap();
        assert!(!path.exists());
        out.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
        assert_eq!(names(&dir), ["out.json"]);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn devices_are_written_directly_and_folders_refused() {
        let mut out = OutputFile::create(Path::new("/dev/null")).unwrap();
        out.write_all(b"x").unwrap();
        out.commit().unwrap();
        let err = OutputFile::create(&std::env::temp_dir()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
        let err = OutputFile::create(Path::new("/nonexistent/dir/x")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
