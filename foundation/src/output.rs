//! Output files written whole or not at all.
//!
//! A trace, a report or a table is written to an unnamed file in its destination's folder
//! (`O_TMPFILE`) and given its name only once complete (linked as a hidden `.NAME.PID.tmp`
//! and renamed over the destination in the same step), so a write that fails (a full disk, a
//! file-size limit), a capture that fails, or a process killed outright leaves an earlier file
//! exactly as it was and no partial copy. Where the file system has no unnamed files, the
//! hidden name is used from the start (and removed on failure). Devices and FIFOs
//! (`/dev/null`, a pipe) cannot be renamed over: they are written directly, and a FIFO without
//! a reader is refused instead of waited on.

use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A file being written; [`OutputFile::commit`] puts it in place, and dropping it uncommitted
/// removes the partial copy.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    /// Where the content ends up: the file itself, not a symlink to it.
    dest: PathBuf,
    /// How the content reaches `dest`.
    stage: Stage,
}

/// Where an output's content is while it is written.
#[derive(Debug)]
enum Stage {
    /// In `dest` itself (a device or FIFO), or already committed.
    Direct,
    /// In an unnamed file of `dest`'s folder, named `hidden` only at commit.
    Unnamed { hidden: PathBuf },
    /// In the hidden file itself (no unnamed files on this file system).
    Named { hidden: PathBuf },
}

impl OutputFile {
    /// Starts writing `path`. Creating the copy is a real write attempt in the destination's
    /// folder, so an output that cannot be written fails here, before any work.
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

    /// Starts writing `path` as a regular file in its own place: where a symlink, FIFO, device
    /// or folder stands, nothing is written (the error says what stands there), so a link
    /// planted at a file this process keeps for itself (a cache) never sends the content
    /// elsewhere. The copy is unnamed until [`OutputFile::commit`], as with
    /// [`OutputFile::create`].
    pub fn create_regular(path: &Path) -> io::Result<OutputFile> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a symbolic link; nothing is written through one",
            )),
            Ok(meta) if meta.is_dir() => {
                Err(io::Error::new(io::ErrorKind::IsADirectory, "is a folder"))
            }
            Ok(meta) if !meta.is_file() => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "is {}, not a regular file",
                    crate::input::special_kind(meta.file_type()).unwrap_or("a special file")
                ),
            )),
            Ok(meta) => staged(path, Some(&meta)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => staged(path, None),
            Err(err) => Err(err),
        }
    }

    /// Puts the complete content in place (a rename over the destination).
    pub fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        match std::mem::replace(&mut self.stage, Stage::Direct) {
            Stage::Direct => Ok(()),
            Stage::Unnamed { hidden } => {
                let proc_path = format!("/proc/self/fd/{}", self.file.as_raw_fd());
                // The hidden name may be left by a process with this pid that died.
                let _ = std::fs::remove_file(&hidden);
                nix::unistd::linkat(
                    nix::fcntl::AT_FDCWD,
                    proc_path.as_str(),
                    nix::fcntl::AT_FDCWD,
                    &hidden,
                    nix::fcntl::AtFlags::AT_SYMLINK_FOLLOW,
                )
                .map_err(io::Error::from)?;
                rename_or_remove(&hidden, &self.dest)
            }
            Stage::Named { hidden } => rename_or_remove(&hidden, &self.dest),
        }
    }
}

/// Writes `text` into an existing regular file in place: a sysfs or tracefs attribute, a
/// setting being written back. Opened without creating and without blocking, and refused
/// unless it is a regular file, so a FIFO planted where a setting was never blocks the
/// writer (the next socbench command writes back what a killed run left).
pub fn write_attribute(path: &Path, text: &str) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "is {}, not a regular file",
                crate::input::special_kind(meta.file_type()).unwrap_or("a folder")
            ),
        ));
    }
    f.write_all(text.as_bytes())
}

fn rename_or_remove(hidden: &Path, dest: &Path) -> io::Result<()> {
    std::fs::rename(hidden, dest).inspect_err(|_| {
        let _ = std::fs::remove_file(hidden);
    })
}

/// Writes `path` itself; a FIFO is opened without waiting, so one nobody reads is an error.
fn direct(path: &Path, options: &mut OpenOptions) -> io::Result<OutputFile> {
    let file = options
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ENXIO) {
                io::Error::other("a FIFO that nobody reads")
            } else {
                e
            }
        })?;
    // Writes block again, as they would on any other output.
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = fcntl(&file, FcntlArg::F_GETFL).map_err(io::Error::from)?;
    fcntl(
        &file,
        FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) - OFlag::O_NONBLOCK),
    )
    .map_err(io::Error::from)?;
    Ok(OutputFile {
        file,
        dest: path.to_path_buf(),
        stage: Stage::Direct,
    })
}

/// Writes an unnamed (or else hidden) copy beside `dest`, with the mode and owner of the file
/// it will replace.
fn staged(dest: &Path, old: Option<&Metadata>) -> io::Result<OutputFile> {
    let name = dest
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "names no file"))?;
    let mut hidden = OsString::from(".");
    hidden.push(name);
    hidden.push(format!(".{}.tmp", std::process::id()));
    let hidden = dest.with_file_name(hidden);
    let folder = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let unnamed = OpenOptions::new()
        .write(true)
        .mode(0o666)
        .custom_flags(libc::O_TMPFILE)
        .open(&folder);
    let (file, stage) = match unnamed {
        Ok(file) if Path::new("/proc/self/fd").is_dir() => (file, Stage::Unnamed { hidden }),
        Err(err) if !folder.is_dir() => return Err(err),
        // No unnamed files here (an older kernel, a file system without them, no /proc).
        _ => {
            let open = || {
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&hidden)
            };
            let file = match open() {
                // Left by a process that had this pid and died: no live process writes it.
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                    std::fs::remove_file(&hidden)?;
                    open()?
                }
                other => other?,
            };
            (file, Stage::Named { hidden })
        }
    };
    if let Some(meta) = old {
        let _ = file.set_permissions(meta.permissions());
        // As root, a user's trace stays the user's; anyone else can only keep their own.
        let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
    }
    Ok(OutputFile {
        file,
        dest: dest.to_path_buf(),
        stage,
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
    /// An uncommitted unnamed copy vanishes with its descriptor; a hidden one is removed.
    fn drop(&mut self) {
        if let Stage::Named { hidden } = &self.stage {
            let _ = std::fs::remove_file(hidden);
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

    #[test]
    fn a_file_kept_in_place_is_never_written_through_a_link() {
        let dir = scratch("regular");
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = dir.join("cache.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let err = OutputFile::create_regular(&link).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let fifo = dir.join("fifo.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let err = OutputFile::create_regular(&fifo).unwrap_err();
        assert!(err.to_string().contains("a FIFO"), "{err}");
        // The hidden name a staged copy takes at commit, planted as a link: removed, not
        // followed.
        let path = dir.join("own.json");
        let hidden = dir.join(format!(".own.json.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &hidden).unwrap();
        let mut out = OutputFile::create_regular(&path).unwrap();
        out.write_all(b"{}").unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_attribute_is_written_in_place_and_a_fifo_refused() {
        let dir = scratch("attribute");
        let p = dir.join("scaling_max_freq");
        std::fs::write(&p, "2265600\n").unwrap();
        write_attribute(&p, "300000\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "300000\n");
        let fifo = dir.join("scaling_min_freq");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert!(write_attribute(&fifo, "1\n").is_err());
        assert!(write_attribute(&dir.join("none"), "1\n").is_err());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_fifo_nobody_reads_is_refused_not_waited_on() {
        let dir = scratch("fifo");
        let fifo = dir.join("out.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let err = OutputFile::create(&fifo).unwrap_err();
        assert!(err.to_string().contains("nobody reads"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
