//! System state changed for a run (a cpufreq policy's limits and governor, tracefs settings),
//! owned across processes. Two socbench processes that change one setting at once (the two
//! workers of `benchmp ab`, two captures) would otherwise save each other's value as "old"
//! and leave it behind. Every change is recorded in a small registry file per setting, under
//! an advisory lock (`flock`) that every socbench process takes:
//!
//! - a [`Claim`] writes a value and remembers the value it replaced; a second process asking
//!   for the same value shares the claim without writing, one asking for another value is
//!   refused ([`ClaimError::Held`]); whichever holder ends last writes the old value back;
//! - a holder that died without releasing (SIGKILL) is noticed by the next process that looks
//!   ([`recover_stale`], which every socbench binary runs as it starts through
//!   [`crate::restore::left_behind`], or any claim of the setting), which writes the old value
//!   back first;
//! - a [`Lock`] is one process's alone for its life (a capture owns tracefs).
//!
//! The registry lives in `$SOCBENCH_STATE_DIR`, else `/run/socbench`, else a folder of this
//! user's in the temporary folder; each folder is made private and checked to be no symlink.
//! A record that holds nothing is removed while still locked, by whoever emptied it or, for one
//! a killed process left, by [`recover_stale`]; a process that had it open and was waiting for
//! its lock sees that the file it locked is no longer the one at that path and opens it anew.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::ops::{Deref, DerefMut};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

/// Where the registry is kept instead of the default (tests, or a device's writable folder).
pub const STATE_DIR_ENV: &str = "SOCBENCH_STATE_DIR";

/// Why a claim could not be made or released.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// Another live process holds the setting at another value.
    #[error("{} is held at {value} by another socbench process (pid {pid}) until it ends", crate::error::shown(.path))]
    Held {
        /// The setting's file.
        path: PathBuf,
        /// The value it holds.
        value: String,
        /// The holder.
        pid: u32,
    },
    /// Another live process holds the lock of a facility ([`Lock`]).
    #[error("{} is in use by {what} (one at a time)", crate::error::shown(.path))]
    Locked {
        /// The facility.
        path: PathBuf,
        /// What uses it ("another capture").
        what: String,
    },
    /// The setting, or the registry, cannot be read or written.
    #[error("{}: {source}", crate::error::shown(.path))]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> ClaimError + '_ {
    move |source| ClaimError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A process, told apart from a later one with the same pid by its start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Holder {
    pid: u32,
    start: u64,
}

impl Holder {
    fn me() -> Holder {
        let pid = std::process::id();
        Holder {
            pid,
            start: start_time(pid).unwrap_or(0),
        }
    }

    /// Still running: the same process (by its start time), not a zombie that can no longer
    /// write anything back.
    fn alive(self) -> bool {
        stat(self.pid).is_some_and(|(state, s)| {
            !matches!(state, 'Z' | 'X' | 'x') && (s == self.start || self.start == 0)
        })
    }
}

/// A process's state letter and start time in clock ticks since boot (`/proc/PID/stat` fields
/// 3 and 22).
fn stat(pid: u32) -> Option<(char, u64)> {
    let stat = crate::input::read_small(Path::new(&format!("/proc/{pid}/stat")), 4096).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.nth(18)?.parse().ok()?))
}

/// A process's start time in clock ticks since boot.
fn start_time(pid: u32) -> Option<u64> {
    stat(pid).map(|(_, s)| s)
}

/// The registry's record of one setting.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Record {
    /// The setting's file.
    path: PathBuf,
    /// The value before the first holder wrote.
    original: String,
    /// The value the holders share.
    value: String,
    /// The processes holding it.
    holders: Vec<Holder>,
}

/// The registry folder, made private on first use.
fn state_dir() -> io::Result<PathBuf> {
    state_dir_made(true)
}

/// The registry folder; `make`: create it when it is missing (else a missing one is an
/// error, and nothing is made by a process that only looks).
fn state_dir_made(make: bool) -> io::Result<PathBuf> {
    let uid = nix::unistd::geteuid().as_raw();
    let candidates: Vec<PathBuf> = match std::env::var_os(STATE_DIR_ENV) {
        Some(d) => vec![PathBuf::from(d)],
        None => vec![
            PathBuf::from("/run/socbench"),
            std::env::temp_dir().join(format!("socbench-state-{uid}")),
        ],
    };
    let mut last = io::Error::other("no folder for the registry");
    for dir in candidates {
        if make {
            let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
        }
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() && m.uid() == uid => return Ok(dir),
            Ok(_) => {
                last = io::Error::other(format!("{} is not a folder of this user's", dir.display()))
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The registry file of a setting: a hash of its real path, and its file name to read.
fn record_file(setting: &Path) -> io::Result<PathBuf> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in setting.as_os_str().as_encoded_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    let name: String = setting
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    Ok(state_dir()?.join(format!("{h:016x}-{name}.json")))
}

/// A registry file, open and locked. Let go empty (no holder), it is removed before its lock
/// is: the registry keeps no file per setting ever claimed.
#[derive(Debug)]
struct Locked {
    file: Flock<File>,
    path: PathBuf,
    /// The process that locked it (a forked child shares the lock and must not remove it).
    owner: u32,
}

impl Deref for Locked {
    type Target = File;
    fn deref(&self) -> &File {
        &self.file
    }
}

impl DerefMut for Locked {
    fn deref_mut(&mut self) -> &mut File {
        &mut self.file
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        if std::process::id() == self.owner && self.file.metadata().is_ok_and(|m| m.len() == 0) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// How often a lock is taken again after the file it locked was removed meanwhile (each time
/// by a process that emptied it); more means something else keeps replacing the registry.
const RELOCKS: usize = 100;

/// The registry file of `setting`, open and locked (made when missing).
fn lock_record(setting: &Path, arg: FlockArg) -> Result<Locked, ClaimError> {
    let path = record_file(setting).map_err(io_err(setting))?;
    for _ in 0..RELOCKS {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path)
            .map_err(io_err(&path))?;
        if let Some(locked) = locked_at(file, &path, arg)? {
            return Ok(locked);
        }
    }
    Err(ClaimError::Io {
        path,
        source: io::Error::other("the registry file keeps being replaced"),
    })
}

/// `file` locked, when it is still the file at `path` once locked (`None`: it was removed or
/// replaced while this process waited for the lock).
fn locked_at(file: File, path: &Path, arg: FlockArg) -> Result<Option<Locked>, ClaimError> {
    let file = Flock::lock(file, arg).map_err(|(_, errno)| ClaimError::Io {
        path: path.to_path_buf(),
        source: errno.into(),
    })?;
    let same = match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    };
    Ok(same.then(|| Locked {
        file,
        path: path.to_path_buf(),
        owner: std::process::id(),
    }))
}

fn read_record(f: &mut File) -> Record {
    let mut text = String::new();
    let _ = f.rewind().and_then(|()| f.read_to_string(&mut text));
    serde_json::from_str(&text).unwrap_or_default()
}

fn write_record(f: &mut File, r: &Record) -> io::Result<()> {
    let text = if r.holders.is_empty() {
        String::new()
    } else {
        serde_json::to_string(r).map_err(io::Error::other)?
    };
    f.set_len(0)?;
    f.rewind()?;
    f.write_all(text.as_bytes())?;
    f.sync_data()
}

/// The most a setting's file may hold (a sysfs or tracefs attribute).
const MAX_SETTING_BYTES: u64 = 64 << 10;

fn read_setting(path: &Path) -> Result<String, ClaimError> {
    crate::input::read_small(path, MAX_SETTING_BYTES)
        .map(|s| s.trim().to_string())
        .map_err(io_err(path))
}

fn write_setting(path: &Path, value: &str) -> Result<(), ClaimError> {
    crate::output::write_attribute(path, &format!("{value}\n")).map_err(io_err(path))
}

/// A setting written back because every process that held it had died.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The setting's file.
    pub path: PathBuf,
    /// The value written back (what it held before the first holder wrote).
    pub original: String,
    /// The value the dead holders had left in it.
    pub left: String,
    /// The holders, all dead.
    pub holders: Vec<u32>,
    /// Whether the write succeeded (false: the file is gone or refuses it).
    pub written: bool,
}

/// Writes back a record's old value when none of its holders is alive any more; what it did.
/// A write that failed keeps the record for another try unless this is the `last` (a limit
/// that must come back before its pair can); after that it is dropped, said once. The caller
/// holds the record's lock.
fn recover(f: &mut File, r: &mut Record, last: bool) -> Option<Recovered> {
    if r.holders.is_empty() || r.holders.iter().any(|h| h.alive()) {
        return None;
    }
    let written = write_setting(&r.path, &r.original).is_ok();
    let done = Recovered {
        path: r.path.clone(),
        original: r.original.clone(),
        left: r.value.clone(),
        holders: r.holders.iter().map(|h| h.pid).collect(),
        written,
    };
    if written || last {
        *r = Record::default();
        let _ = write_record(f, r);
    }
    Some(done)
}

/// How a claim came to hold its setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    /// This process wrote the value; `was` is what the setting held before.
    Wrote {
        /// The value before.
        was: String,
    },
    /// Another live process already held it at this value; nothing was written.
    Shared {
        /// The value before the first holder wrote.
        was: String,
        /// The first live holder.
        with: u32,
    },
}

/// What [`Claim::release`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// This process was the last holder and wrote the old value back (`false`: the write
    /// failed).
    Restored(bool),
    /// Another live process still holds it and will write it back.
    LeftTo(u32),
}

/// One setting held at a value by this process until [`Claim::release`] (or drop).
#[derive(Debug)]
pub struct Claim {
    path: PathBuf,
    /// How it was taken.
    pub taken: Taken,
    owner: u32,
    released: Option<Released>,
}

impl Claim {
    /// Holds `path` (a sysfs or tracefs file) at `value`: writes it unless another live
    /// socbench process already holds it at this value, refuses when one holds it at another.
    pub fn take(path: &Path, value: &str) -> Result<Claim, ClaimError> {
        let real = std::fs::canonicalize(path).map_err(io_err(path))?;
        let mut f = lock_record(&real, FlockArg::LockExclusive)?;
        let mut r = read_record(&mut f);
        recover(&mut f, &mut r, true);
        let me = Holder::me();
        r.holders.retain(|h| h.alive() && h.pid != me.pid);
        let taken = if let Some(first) = r.holders.first() {
            if r.value != value {
                return Err(ClaimError::Held {
                    path: real,
                    value: r.value,
                    pid: first.pid,
                });
            }
            Taken::Shared {
                was: r.original.clone(),
                with: first.pid,
            }
        } else {
            let was = read_setting(&real)?;
            r = Record {
                path: real.clone(),
                original: was.clone(),
                value: value.to_string(),
                holders: Vec::new(),
            };
            // Recorded before the write, so a death in between still has its old value kept.
            r.holders.push(me);
            write_record(&mut f, &r).map_err(io_err(&real))?;
            if let Err(e) = write_setting(&real, value) {
                r.holders.clear();
                let _ = write_record(&mut f, &r);
                return Err(e);
            }
            Taken::Wrote { was }
        };
        if !r.holders.contains(&me) {
            r.holders.push(me);
            write_record(&mut f, &r).map_err(io_err(&real))?;
        }
        Ok(Claim {
            path: real,
            taken,
            owner: me.pid,
            released: None,
        })
    }

    /// Records that this process is about to write `value` to `path` itself (as `ftrace
    /// record` does, with tracefs's own errors), with `original` the value to write back if
    /// it dies before it does: the record is on disk before the write, and the next socbench
    /// command writes `original` back once this process is dead ([`recover_stale`]). Refused
    /// as [`Claim::take`] is while another live process holds the setting. Let go with
    /// [`Claim::forget`] once written back; dropped instead, the claim writes `original`.
    pub fn note(path: &Path, original: &str, value: &str) -> Result<Claim, ClaimError> {
        let real = std::fs::canonicalize(path).map_err(io_err(path))?;
        let mut f = lock_record(&real, FlockArg::LockExclusive)?;
        let mut r = read_record(&mut f);
        recover(&mut f, &mut r, true);
        let me = Holder::me();
        if let Some(other) = r.holders.iter().find(|h| h.alive() && h.pid != me.pid) {
            return Err(ClaimError::Held {
                path: real,
                value: r.value,
                pid: other.pid,
            });
        }
        let r = Record {
            path: real.clone(),
            original: original.to_string(),
            value: value.to_string(),
            holders: vec![me],
        };
        write_record(&mut f, &r).map_err(io_err(&real))?;
        Ok(Claim {
            path: real,
            taken: Taken::Wrote {
                was: original.to_string(),
            },
            owner: me.pid,
            released: None,
        })
    }

    /// Lets go of a setting this process wrote back itself (or never changed): its record is
    /// cleared and nothing is written.
    pub fn forget(mut self) {
        if std::process::id() == self.owner
            && let Ok(mut f) = lock_record(&self.path, FlockArg::LockExclusive)
        {
            let mut r = read_record(&mut f);
            r.holders.retain(|h| h.pid != self.owner && h.alive());
            let _ = write_record(&mut f, &r);
        }
        self.released = Some(Released::Restored(true));
    }

    /// The setting's real path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The value the setting held before any holder wrote.
    pub fn was(&self) -> &str {
        match &self.taken {
            Taken::Wrote { was } | Taken::Shared { was, .. } => was,
        }
    }

    /// Lets go of the setting (once): the last live holder writes the old value back.
    /// In a forked child, which never owned the claim, this does nothing.
    pub fn release(&mut self) -> Option<Released> {
        if self.released.is_some() || std::process::id() != self.owner {
            return self.released;
        }
        let done = (|| {
            let mut f = lock_record(&self.path, FlockArg::LockExclusive).ok()?;
            let mut r = read_record(&mut f);
            r.holders.retain(|h| h.pid != self.owner && h.alive());
            if let Some(other) = r.holders.first() {
                let pid = other.pid;
                let _ = write_record(&mut f, &r);
                return Some(Released::LeftTo(pid));
            }
            let original = if r.path.as_os_str().is_empty() {
                self.was().to_string()
            } else {
                r.original.clone()
            };
            let ok = write_setting(&self.path, &original).is_ok();
            let _ = write_record(&mut f, &Record::default());
            Some(Released::Restored(ok))
        })();
        // Without the registry (it vanished), still put the old value back.
        let done = done
            .unwrap_or_else(|| Released::Restored(write_setting(&self.path, self.was()).is_ok()));
        self.released = Some(done);
        self.released
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.release();
    }
}

/// The live socbench process holding `setting` through a [`Claim`], if any: a command that
/// finds the setting changed leaves it alone while one does.
pub fn held_by(setting: &Path) -> Option<u32> {
    let real = std::fs::canonicalize(setting).ok()?;
    let mut f = lock_record(&real, FlockArg::LockExclusive).ok()?;
    let r = read_record(&mut f);
    r.holders.iter().find(|h| h.alive()).map(|h| h.pid)
}

/// Writes back every recorded setting whose holders have all died (a run killed with SIGKILL);
/// what was written back. Cheap when there is nothing to do: one folder listing (none when
/// the registry was never made).
pub fn recover_stale() -> Vec<Recovered> {
    let Ok(dir) = state_dir_made(false) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    let mut done: Vec<Recovered> = Vec::new();
    // A write the kernel refuses now may pass once the other files are back (a minimum
    // above the maximum it would leave): a second pass retries those.
    for pass in 0..2 {
        let mut retry = Vec::new();
        for path in files {
            let Some(r) = recover_file(&path, pass == 1) else {
                continue;
            };
            done.retain(|d| d.path != r.path);
            if !r.written {
                retry.push(path);
            }
            done.push(r);
        }
        if retry.is_empty() {
            break;
        }
        files = retry;
    }
    done
}

/// [`recover`] on one registry file, when no live process holds its lock; an empty one is
/// removed. Anything else in the folder (a FIFO would block the read) is left alone.
fn recover_file(path: &Path, last: bool) -> Option<Recovered> {
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let mut f = locked_at(file, path, FlockArg::LockExclusiveNonblock).ok()??;
    let mut r = read_record(&mut f);
    recover(&mut f, &mut r, last)
}

/// A setting (or a whole facility, such as tracefs) this process alone may change while it
/// lives; the lock goes with the process, however it ends.
#[derive(Debug)]
pub struct Lock {
    _file: Locked,
}

impl Lock {
    /// Takes the lock of `path` without waiting; [`ClaimError::Locked`], saying it is used by
    /// `what`, when another process has it.
    pub fn take(path: &Path, what: &str) -> Result<Lock, ClaimError> {
        let real = std::fs::canonicalize(path).map_err(io_err(path))?;
        let mut key = real.clone().into_os_string();
        key.push("#lock");
        let file =
            lock_record(Path::new(&key), FlockArg::LockExclusiveNonblock).map_err(|e| match e {
                ClaimError::Io { source, .. }
                    if source.raw_os_error() == Some(nix::libc::EWOULDBLOCK) =>
                {
                    ClaimError::Locked {
                        path: real.clone(),
                        what: what.to_string(),
                    }
                }
                other => other,
            })?;
        Ok(Lock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A setting file in a scratch tree, with the registry in a folder of its own.
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ftrace-claim-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("state")).unwrap();
        std::fs::write(d.join("scaling_max_freq"), "2000000\n").unwrap();
        d
    }

    fn value(d: &Path) -> String {
        std::fs::read_to_string(d.join("scaling_max_freq"))
            .unwrap()
            .trim()
            .to_string()
    }

    // The registry folder comes from the environment: these tests run one at a time in a
    // child each, so the variable is never shared between threads.
    fn in_child(test: &str, d: &Path) {
        if std::env::var_os(STATE_DIR_ENV).is_some() {
            return;
        }
        let o = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", test, "--test-threads", "1"])
            .env(STATE_DIR_ENV, d.join("state"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
    }

    #[test]
    fn the_last_holder_writes_back_and_a_sharer_writes_nothing() {
        let d = scratch("share");
        in_child("claim::tests::share_body", &d);
        assert_eq!(value(&d), "2000000");
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn share_body() {
        let Some(state) = std::env::var_os(STATE_DIR_ENV) else {
            return;
        };
        let d = Path::new(&state).parent().unwrap().to_path_buf();
        let f = d.join("scaling_max_freq");
        let mut first = Claim::take(&f, "1000000").unwrap();
        assert_eq!(
            first.taken,
            Taken::Wrote {
                was: "2000000".into()
            }
        );
        assert_eq!(value(&d), "1000000");
        assert_eq!(held_by(&f), Some(std::process::id()));
        // A second holder in another process: simulated by a record holding a live other
        // process (the parent test runner) beside this one.
        let real = std::fs::canonicalize(&f).unwrap();
        {
            let mut lock = lock_record(&real, FlockArg::LockExclusive).unwrap();
            let mut r = read_record(&mut lock);
            let parent = nix::unistd::getppid().as_raw() as u32;
            r.holders.push(Holder {
                pid: parent,
                start: start_time(parent).unwrap(),
            });
            write_record(&mut lock, &r).unwrap();
        }
        let e = Claim::take(&f, "1200000").unwrap_err();
        assert!(
            matches!(e, ClaimError::Held { ref value, .. } if value == "1000000"),
            "{e}"
        );
        assert!(matches!(first.release(), Some(Released::LeftTo(_))));
        assert_eq!(held_by(&f), Some(nix::unistd::getppid().as_raw() as u32));
        assert_eq!(
            value(&d),
            "1000000",
            "the other holder still runs at the pin"
        );
        // The other holder died without releasing (its start time no longer matches): the
        // next look restores the old value.
        {
            let mut lock = lock_record(&real, FlockArg::LockExclusive).unwrap();
            let mut r = read_record(&mut lock);
            for h in &mut r.holders {
                h.start += 1;
            }
            write_record(&mut lock, &r).unwrap();
        }
        let back = recover_stale();
        assert_eq!(
            back.iter().map(|r| r.path.clone()).collect::<Vec<_>>(),
            vec![real]
        );
        assert_eq!(
            (back[0].original.as_str(), back[0].left.as_str()),
            ("2000000", "1000000")
        );
        assert!(back[0].written);
        assert_eq!(value(&d), "2000000");
        // Taken twice at the same value by one process: one holder, written back once.
        let mut a = Claim::take(&f, "1500000").unwrap();
        assert_eq!(a.release(), Some(Released::Restored(true)));
        assert_eq!(value(&d), "2000000");
        // Nothing held: nothing kept in the registry, and a look makes nothing.
        assert_eq!(held_by(&f), None);
        assert_eq!(std::fs::read_dir(&state).unwrap().count(), 0);
    }

    #[test]
    fn an_empty_record_is_removed_and_a_waiter_locks_the_new_one() {
        let d = scratch("empty");
        in_child("claim::tests::empty_body", &d);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn empty_body() {
        let Some(state) = std::env::var_os(STATE_DIR_ENV) else {
            return;
        };
        let d = Path::new(&state).parent().unwrap().to_path_buf();
        let f = std::fs::canonicalize(d.join("scaling_max_freq")).unwrap();
        // Empty records a killed process left (as every release did before they were removed):
        // the look every command takes as it starts removes them.
        let left = record_file(&f).unwrap();
        std::fs::write(&left, "").unwrap();
        std::fs::write(Path::new(&state).join("0-other.json"), "").unwrap();
        let fifo = Path::new(&state).join("1-fifo.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert!(recover_stale().is_empty());
        let kept: Vec<_> = std::fs::read_dir(&state).unwrap().flatten().collect();
        assert_eq!(kept.len(), 1, "only the FIFO, never read: {kept:?}");
        std::fs::remove_file(&fifo).unwrap();
        // One process waits for the lock on the file another one empties and removes: it
        // locks the file at the path instead of the removed one.
        let first = lock_record(&f, FlockArg::LockExclusive).unwrap();
        let opened = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&left)
            .unwrap();
        drop(first);
        assert!(!left.exists());
        assert!(
            locked_at(opened, &left, FlockArg::LockExclusive)
                .unwrap()
                .is_none()
        );
        let mut again = lock_record(&f, FlockArg::LockExclusive).unwrap();
        write_record(
            &mut again,
            &Record {
                path: f.clone(),
                original: "1".into(),
                value: "2".into(),
                holders: vec![Holder::me()],
            },
        )
        .unwrap();
        drop(again);
        assert!(left.exists(), "a record that holds someone stays");
        // A facility's lock file goes with its lock.
        let lock = Lock::take(&f, "a capture").unwrap();
        assert_eq!(std::fs::read_dir(&state).unwrap().count(), 2);
        drop(lock);
        assert_eq!(std::fs::read_dir(&state).unwrap().count(), 1);
    }

    #[test]
    fn a_lock_is_one_processs_alone() {
        let d = scratch("lock");
        in_child("claim::tests::lock_body", &d);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn lock_body() {
        let Some(state) = std::env::var_os(STATE_DIR_ENV) else {
            return;
        };
        let f = Path::new(&state).parent().unwrap().join("scaling_max_freq");
        let held = Lock::take(&f, "a capture").unwrap();
        // flock locks belong to the open file: a second open in this process conflicts as
        // another process's would.
        let e = Lock::take(&f, "another capture").unwrap_err();
        assert!(e.to_string().contains("in use by another capture"), "{e}");
        drop(held);
        Lock::take(&f, "a capture").unwrap();
    }
}
