//! The results folder: checked before any time is spent (made, written to for real, since
//! root passes every permission check, and locked against a second suite writing into it),
//! and a refusal leaves nothing behind.

use std::fs::File;
use std::io::Write as _;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// A results folder this suite holds.
#[derive(Debug)]
pub struct OutDir {
    /// Its absolute path.
    pub path: PathBuf,
    /// The folders this suite made for it, deepest first (removed on [`OutDir::undo`]).
    made: Vec<PathBuf>,
    /// The folder itself, open and `flock`ed while the suite (or anything it started) runs.
    lock: nix::fcntl::Flock<File>,
}

/// Why a results folder cannot be used (`--out DIR` + this).
#[derive(Debug, thiserror::Error)]
pub enum OutError {
    /// A file, not a folder.
    #[error("is not a folder")]
    NotAFolder,
    /// mkdir failed.
    #[error("cannot be created ({0})")]
    Create(String),
    /// A file cannot be made in it.
    #[error("cannot be written")]
    Write,
    /// Another suite holds its lock.
    #[error("another suite is writing into it (it holds the folder's lock)")]
    Locked,
    /// It holds files and `--force` was not given.
    #[error("is not empty: its results would be overwritten (give a new folder, or --force)")]
    NotEmpty,
}

impl OutDir {
    /// Makes `path` (and missing parents), checks that a file can be made in it, takes its
    /// lock; without `force` it must be empty.
    pub fn open(path: &Path, force: bool) -> Result<OutDir, OutError> {
        if path.exists() && !path.is_dir() {
            return Err(OutError::NotAFolder);
        }
        let mut made = Vec::new();
        let mut p = path.to_path_buf();
        while !p.exists() && p.symlink_metadata().is_err() {
            made.push(p.clone());
            match p.parent() {
                Some(q) if !q.as_os_str().is_empty() => p = q.to_path_buf(),
                _ => break,
            }
        }
        let undo = |made: &[PathBuf]| {
            for d in made {
                if std::fs::remove_dir(d).is_err() {
                    break;
                }
            }
        };
        if let Err(e) = std::fs::create_dir_all(path) {
            undo(&made);
            let why = match e.raw_os_error() {
                Some(n) => nix::errno::Errno::from_raw(n).desc().to_string(),
                None => e.to_string(),
            };
            return Err(OutError::Create(why));
        }
        let probe = path.join(format!(".socbench-write-test.{}", std::process::id()));
        if File::create(&probe).is_err() {
            undo(&made);
            return Err(OutError::Write);
        }
        let _ = std::fs::remove_file(&probe);
        let dir = File::open(path).map_err(|_| OutError::Write)?;
        // Another suite's folder when locked, even if this one made it: nothing is removed.
        let lock = nix::fcntl::Flock::lock(dir, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map_err(|_| OutError::Locked)?;
        let empty = std::fs::read_dir(path)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        if !empty && !force {
            undo(&made);
            return Err(OutError::NotEmpty);
        }
        Ok(OutDir {
            path: std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            made,
            lock,
        })
    }

    /// The descriptor holding the folder's lock: a process that inherits it holds the lock
    /// for as long as it lives.
    pub fn lock_fd(&self) -> RawFd {
        self.lock.as_raw_fd()
    }

    /// Removes the folders [`OutDir::open`] made, as long as they are empty (a refusal after
    /// the folder was taken).
    pub fn undo(self) {
        for d in &self.made {
            if std::fs::remove_dir(d).is_err() {
                break;
            }
        }
    }

    /// Removes what an earlier suite wrote there (`--force`): its status, summary, comparison, plots
    /// and every entry's files and folder (every label starts with its tool's name); other
    /// files stay.
    pub fn clear_earlier_results(&self) {
        let Ok(entries) = std::fs::read_dir(&self.path) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours = name == "status.tsv"
                || name == "summary.json"
                || name == "base"
                || name == "ab"
                || name.starts_with("compare.")
                || (name.starts_with("compare-") && name.ends_with(".png"))
                || super::plan::TOOLS
                    .iter()
                    .any(|t| name == format!("{t}.png") || name.starts_with(&format!("{t}-")));
            if ours {
                let p = e.path();
                let _ = if p.is_dir() && !p.is_symlink() {
                    std::fs::remove_dir_all(&p)
                } else {
                    std::fs::remove_file(&p)
                };
            }
        }
    }
}

fn shown(p: &Path) -> String {
    ftrace::error::shown(p)
}

/// Writes a file of the folder whole or not at all ([`benchmp::files::StagedFile`]); an error
/// names the file.
pub fn write_whole(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut f = benchmp::files::StagedFile::create(path)
        .with_context(|| format!("cannot write {}", shown(path)))?;
    f.write_all(bytes)
        .and_then(|()| f.commit())
        .with_context(|| format!("cannot write {}", shown(path)))
}
