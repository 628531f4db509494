//! A results folder of a benchmp command that runs tools into one (`benchmp suite`, `benchmp
//! efficiency`): checked before any time is spent (made, written to for real, since root
//! passes every permission check, and locked against a second command writing into it), and
//! its own record of what was made in it ([`Kind::record`]), kept up to date before each file
//! is made. `--force` and `--resume` remove only what that record names, never an input, and
//! never follow a symbolic link out of the folder; a folder without a record is no command's.
//! A refusal leaves nothing behind.

use std::fs::File;
use std::io::Write as _;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use anyhow::Context as _;

/// Which command's folder: the name of its record and the key its layout is kept under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// The record's file name in the folder (`.socbench-suite.json`).
    pub record: &'static str,
    /// The key holding the record's layout (`socbench_suite`).
    pub key: &'static str,
    /// What a refusal calls the command (`suite`).
    pub what: &'static str,
}

/// `benchmp suite`'s folder.
pub const SUITE: Kind = Kind {
    record: ".socbench-suite.json",
    key: "socbench_suite",
    what: "suite",
};

/// `benchmp efficiency`'s folder.
pub const EFFICIENCY: Kind = Kind {
    record: ".socbench-efficiency.json",
    key: "socbench_efficiency",
    what: "sweep",
};

/// The record's layout.
const FORMAT: u64 = 1;
/// The most a record may hold (a full plan's names take a few KiB).
const RECORD_LIMIT: u64 = 16 << 20;

/// The first way a recipe `now` differs from the recorded `was` (both JSON objects), in
/// words; `None` when they are the same.
pub fn differs(was: &serde_json::Value, now: &serde_json::Value) -> Option<String> {
    let (serde_json::Value::Object(was_map), serde_json::Value::Object(now_map)) = (was, now)
    else {
        return (was != now).then(|| "its recipe".to_string());
    };
    let missing = serde_json::Value::Null;
    was_map
        .iter()
        .map(|(k, v)| (k, v, now_map.get(k).unwrap_or(&missing)))
        .chain(
            now_map
                .iter()
                .filter(|(k, _)| !was_map.contains_key(*k))
                .map(|(k, v)| (k, &missing, v)),
        )
        .find_map(|(k, v, n)| {
            (n != v).then(|| match k.as_str() {
                "entries" => "its plan's entries differ (another mode, --only or machine)".into(),
                _ => format!("{k} {v}, not {n}"),
            })
        })
}

/// The record as stored: `{KEY: FORMAT, "recipe": ..., "made": [...]}`.
#[derive(Debug, Clone)]
struct Record {
    /// What the command was run with.
    recipe: serde_json::Value,
    /// Every file and folder the command (and the scripts that add to its folder) made,
    /// relative to it; folders end in `/`.
    made: Vec<String>,
}

impl Record {
    fn to_json(&self, kind: Kind) -> serde_json::Value {
        serde_json::json!({ kind.key: FORMAT, "recipe": self.recipe, "made": self.made })
    }

    fn from_json(kind: Kind, v: &serde_json::Value) -> Result<Record, String> {
        match v.get(kind.key).and_then(serde_json::Value::as_u64) {
            Some(FORMAT) => {}
            Some(other) => {
                return Err(format!("layout {other}, not {FORMAT} (another socbench's)"));
            }
            None => return Err(format!("it has no {}", kind.key)),
        }
        let made = v
            .get("made")
            .and_then(serde_json::Value::as_array)
            .ok_or("it has no list of what was made")?
            .iter()
            .map(|m| {
                m.as_str()
                    .map(str::to_string)
                    .ok_or("a name that is not text")
            })
            .collect::<Result<Vec<String>, _>>()?;
        Ok(Record {
            recipe: v.get("recipe").cloned().unwrap_or_default(),
            made,
        })
    }
}

/// How a command takes its folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// It must be new or empty.
    New,
    /// `--force`: what an earlier run recorded goes; anything else stays.
    Force,
    /// `--resume`: an earlier run's folder, made with the same recipe.
    Resume,
}

impl Take {
    /// The option that asked for it, in a refusal.
    fn option(self) -> &'static str {
        match self {
            Take::New => "--out",
            Take::Force => "--force",
            Take::Resume => "--resume",
        }
    }
}

/// A file or folder the command reads and must never remove: by path (a folder holding it,
/// or a file inside it when `whole`) and by inode.
#[derive(Debug, Clone)]
pub struct Input {
    /// How a refusal names it (`--bin-dir /x`).
    pub what: String,
    /// Where it is.
    pub path: PathBuf,
    /// True when every file inside it is an input as well (a baseline folder).
    pub whole: bool,
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
    /// Another command holds its lock.
    #[error(
        "another {what} is writing into it (it, or a process it started, holds the folder's lock)", what = .0.what
    )]
    Locked(Kind),
    /// It holds files and `--force` was not given.
    #[error(
        "is not empty: its results would be overwritten (give a new folder, or --force for one a {what} made)", what = .0.what
    )]
    NotEmpty(Kind),
    /// It holds files and no record.
    #[error(
        "holds files and no record of a {what} ({record}): {option} acts only on what a {what} recorded there; give a new or empty folder", what = .1.what, record = .1.record, option = .0
    )]
    NoRecord(&'static str, Kind),
    /// `--resume` on nothing.
    #[error("does not exist: nothing to resume")]
    Missing,
    /// `--resume` on a folder without a record.
    #[error("holds no record of a {what} ({record}): nothing to resume", what = .0.what, record = .0.record)]
    NothingToResume(Kind),
    /// The record cannot be read or names something outside the folder.
    #[error("has a record {record} that cannot be used: {why}", record = .0.record, why = .1)]
    BadRecord(Kind, String),
    /// `--resume` with another recipe.
    #[error("was made with another plan: {0}; give the options it was made with")]
    OtherPlan(String),
    /// Removing a recorded path would remove an input.
    #[error("{what} is inside {made}, which {option} would remove")]
    Input {
        /// The input.
        what: String,
        /// The recorded path.
        made: String,
        /// `--force` or `--resume`.
        option: &'static str,
    },
    /// A recorded path holds an input.
    #[error("{made} is inside {what}, which {option} would remove it from")]
    InsideInput {
        /// The input.
        what: String,
        /// The recorded path.
        made: String,
        /// `--force` or `--resume`.
        option: &'static str,
    },
    /// Something is where the command writes, and no run of it recorded it.
    #[error("{name} is there and no {what} recorded it: the {what} would write over it", name = .1, what = .0.what)]
    NotOurs(Kind, String),
    /// A symbolic link where the command's files go.
    #[error("{name} is a symbolic link: the {what} writes only into folders of its own", name = .1, what = .0.what)]
    Link(Kind, String),
}

/// A results folder this command holds.
#[derive(Debug)]
pub struct OutDir {
    /// Its absolute path.
    pub path: PathBuf,
    /// Whose folder it is.
    kind: Kind,
    /// How it was taken.
    take: Take,
    /// The folders this command made for it, deepest first (removed on [`OutDir::undo`]).
    made_dirs: Vec<PathBuf>,
    /// The earlier run's record (`None`: none).
    earlier: Option<Record>,
    /// The record this run keeps.
    record: Record,
    /// The folder itself, open and `flock`ed while the command (or anything it started) runs.
    lock: nix::fcntl::Flock<File>,
}

impl OutDir {
    /// Makes `path` (and missing parents), checks that a file can be made in it, takes its
    /// lock and reads its record: new or empty for [`Take::New`], recorded (or empty) for
    /// [`Take::Force`], recorded with `recipe` for [`Take::Resume`].
    pub fn open(
        kind: Kind,
        path: &Path,
        take: Take,
        recipe: &serde_json::Value,
    ) -> Result<OutDir, OutError> {
        if path.exists() && !path.is_dir() {
            return Err(OutError::NotAFolder);
        }
        if take == Take::Resume && path.symlink_metadata().is_err() {
            return Err(OutError::Missing);
        }
        let mut made_dirs = Vec::new();
        let mut p = path.to_path_buf();
        while !p.exists() && p.symlink_metadata().is_err() {
            made_dirs.push(p.clone());
            match p.parent() {
                Some(q) if !q.as_os_str().is_empty() => p = q.to_path_buf(),
                _ => break,
            }
        }
        let fail = |made: &[PathBuf], e: OutError| {
            remove_empty(made);
            Err(e)
        };
        if let Err(e) = std::fs::create_dir_all(path) {
            let why = match e.raw_os_error() {
                Some(n) => nix::errno::Errno::from_raw(n).desc().to_string(),
                None => e.to_string(),
            };
            return fail(&made_dirs, OutError::Create(why));
        }
        let probe = path.join(format!(".socbench-write-test.{}", std::process::id()));
        if File::create(&probe).is_err() {
            return fail(&made_dirs, OutError::Write);
        }
        let _ = std::fs::remove_file(&probe);
        let Ok(dir) = File::open(path) else {
            return fail(&made_dirs, OutError::Write);
        };
        // Another suite's folder when locked, even if this one made it: nothing is removed.
        let lock = nix::fcntl::Flock::lock(dir, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map_err(|_| OutError::Locked(kind))?;
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let out = OutDir {
            earlier: None,
            record: Record {
                recipe: recipe.clone(),
                made: Vec::new(),
            },
            path,
            kind,
            take,
            made_dirs,
            lock,
        };
        match out.read_earlier() {
            Ok(earlier) => out.taken(earlier, recipe),
            Err(e) => {
                out.undo();
                Err(e)
            }
        }
    }

    /// The folder with the earlier record, if the way it is taken allows it.
    fn taken(
        mut self,
        earlier: Option<Record>,
        recipe: &serde_json::Value,
    ) -> Result<OutDir, OutError> {
        let empty = std::fs::read_dir(&self.path)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        let refusal = match (self.take, &earlier) {
            (Take::New, _) if !empty => Some(OutError::NotEmpty(self.kind)),
            (Take::Force, None) if !empty => Some(OutError::NoRecord("--force", self.kind)),
            (Take::Resume, None) => Some(OutError::NothingToResume(self.kind)),
            (Take::Resume, Some(r)) => differs(&r.recipe, recipe).map(OutError::OtherPlan),
            _ => None,
        };
        if let Some(e) = refusal {
            self.undo();
            return Err(e);
        }
        if self.take == Take::Resume
            && let Some(r) = &earlier
        {
            self.record.made = r.made.clone();
        }
        self.earlier = earlier;
        Ok(self)
    }

    /// The earlier run's record, every path in it checked to be a plain path inside the
    /// folder.
    fn read_earlier(&self) -> Result<Option<Record>, OutError> {
        let file = self.path.join(self.kind.record);
        let bad = |why: String| OutError::BadRecord(self.kind, why);
        let Some(text) = benchmp::input::read_text_if_there(&file, RECORD_LIMIT)
            .map_err(|e| bad(e.to_string()))?
        else {
            return Ok(None);
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let record = Record::from_json(self.kind, &value).map_err(bad)?;
        if let Some(p) = record.made.iter().find(|p| !plain(p, self.kind)) {
            return Err(bad(format!(
                "it names '{}', which is not a path inside the folder",
                foundation::error::printable(p)
            )));
        }
        Ok(Some(record))
    }

    /// Everything the earlier run recorded (what `--force` removes).
    pub fn recorded(&self) -> Vec<String> {
        self.earlier
            .as_ref()
            .map(|r| r.made.clone())
            .unwrap_or_default()
    }

    /// True when the earlier record names `rel` or a folder holding it.
    fn was_recorded(&self, rel: &str) -> bool {
        let Some(r) = &self.earlier else { return false };
        let rel = rel.trim_end_matches('/');
        r.made.iter().any(|m| {
            let m = m.trim_end_matches('/');
            rel == m
                || rel
                    .strip_prefix(m)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }

    /// Checks, before anything is removed or written: removing `doomed` removes no input, no
    /// path this run writes (`planned`) holds anything no suite recorded, and no link leads
    /// out of the folder.
    pub fn check(
        &self,
        doomed: &[String],
        planned: &[String],
        inputs: &[Input],
    ) -> Result<(), OutError> {
        let option = self.take.option();
        for rel in doomed.iter().chain(planned) {
            self.no_link(rel)?;
        }
        for rel in doomed {
            let p = self.path.join(rel.trim_end_matches('/'));
            let Ok(meta) = p.symlink_metadata() else {
                continue;
            };
            for input in inputs {
                let real = std::fs::canonicalize(&input.path)
                    .unwrap_or_else(|_| std::path::absolute(&input.path).unwrap_or_default());
                let shown = rel.trim_end_matches('/').to_string();
                if real.starts_with(&p)
                    || (meta.is_file()
                        && benchmp::files::file_id(&input.path) == Some((meta.dev(), meta.ino())))
                {
                    return Err(OutError::Input {
                        what: input.what.clone(),
                        made: shown,
                        option,
                    });
                }
                if input.whole && p.starts_with(&real) {
                    return Err(OutError::InsideInput {
                        what: input.what.clone(),
                        made: shown,
                        option,
                    });
                }
            }
        }
        for rel in planned {
            let p = self.path.join(rel.trim_end_matches('/'));
            if p.symlink_metadata().is_ok() && !self.was_recorded(rel) {
                return Err(OutError::NotOurs(
                    self.kind,
                    rel.trim_end_matches('/').to_string(),
                ));
            }
        }
        Ok(())
    }

    /// Refuses a path whose folders inside this one include a symbolic link (a removal or a
    /// write through it would land elsewhere).
    fn no_link(&self, rel: &str) -> Result<(), OutError> {
        let mut p = self.path.clone();
        let parts: Vec<&str> = rel.trim_end_matches('/').split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            p.push(part);
            match p.symlink_metadata() {
                Ok(m) if m.file_type().is_symlink() && i + 1 < parts.len() => {
                    return Err(OutError::Link(self.kind, parts[..=i].join("/")));
                }
                Ok(_) => {}
                Err(_) => return Ok(()),
            }
        }
        Ok(())
    }

    /// Removes `doomed` (a link itself, never what it points to; a folder with all it holds),
    /// and starts this run's record. An error names what could not be removed.
    pub fn clear(&mut self, doomed: &[String]) -> anyhow::Result<()> {
        let mut doomed: Vec<&String> = doomed.iter().collect();
        doomed.sort_by_key(|r| r.trim_end_matches('/').matches('/').count());
        for rel in doomed {
            let rel = rel.trim_end_matches('/');
            // Gone with a folder removed before it, or never made.
            if self.no_link(rel).is_err() {
                continue;
            }
            let p = self.path.join(rel);
            let removed = match p.symlink_metadata() {
                Err(_) => Ok(()),
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&p),
                Ok(_) => std::fs::remove_file(&p),
            };
            removed.with_context(|| format!("cannot remove {}", shown(&p)))?;
        }
        self.write_record()
    }

    /// Adds `rels` (files and folders this run is about to make) to the record, before they
    /// are made, so a run stopped at any point has recorded everything it left.
    pub fn record(&mut self, rels: &[String]) -> anyhow::Result<()> {
        let before = self.record.made.len();
        for r in rels {
            if !self.record.made.contains(r) {
                self.record.made.push(r.clone());
            }
        }
        if self.record.made.len() == before {
            return Ok(());
        }
        self.write_record()
    }

    fn write_record(&self) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(&self.record.to_json(self.kind))? + "\n";
        write_whole(&self.path.join(self.kind.record), text.as_bytes())
    }

    /// The descriptor holding the folder's lock: a process that inherits it holds the lock
    /// for as long as it lives.
    pub fn lock_fd(&self) -> RawFd {
        self.lock.as_raw_fd()
    }

    /// Removes the folders [`OutDir::open`] made, as long as they are empty (a refusal after
    /// the folder was taken).
    pub fn undo(self) {
        remove_empty(&self.made_dirs);
    }
}

/// Removes empty folders, deepest first, up to the first that is not empty.
fn remove_empty(made: &[PathBuf]) {
    for d in made {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
    }
}

/// True when `rel` is a relative path of plain names (no `..`, `.`, root or empty part), and
/// not the record itself.
fn plain(rel: &str, kind: Kind) -> bool {
    let t = rel.trim_end_matches('/');
    !t.is_empty()
        && !t.split('/').any(str::is_empty)
        && Path::new(t)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        && t != kind.record
}

fn shown(p: &Path) -> String {
    foundation::error::shown(p)
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

/// `results/<prefix><host>-<YYYYmmdd-HHMMSS>` (UTC) under the current folder: where a command
/// writes when no `--out` is given.
pub fn default_out(prefix: &str) -> PathBuf {
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .map(|h| h.split('.').next().unwrap_or("host").to_string())
        .unwrap_or_else(|| "host".into());
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    PathBuf::from("results").join(format!("{prefix}{host}-{}", utc_stamp(secs)))
}

/// `YYYYmmdd-HHMMSS` of a Unix time, UTC (the civil calendar from days since 1970).
fn utc_stamp(secs: u64) -> String {
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        // 2026-12-02 12:34:43 UTC.
        assert_eq!(utc_stamp(1_796_214_883), "20261202-123443");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
    }

    fn recipe(mode: &str) -> serde_json::Value {
        serde_json::json!({
            "mode": mode,
            "entries": ["dhry-P1||dhry|-P 1"],
            "cpus": null,
            "bin_dir": "/b",
        })
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("benchmp-outdir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_recipe_names_what_differs() {
        assert_eq!(differs(&recipe("quick"), &recipe("quick")), None);
        assert_eq!(
            differs(&recipe("quick"), &recipe("full")).as_deref(),
            Some(r#"mode "quick", not "full""#)
        );
        let mut more = recipe("quick");
        more["entries"]
            .as_array_mut()
            .unwrap()
            .push("coremark-P1||coremark|".into());
        assert!(
            differs(&recipe("quick"), &more)
                .unwrap()
                .contains("entries")
        );
        // A setting the earlier run did not have is a difference too.
        let mut power = recipe("quick");
        power["power"] = "battery:battery".into();
        assert_eq!(
            differs(&recipe("quick"), &power).as_deref(),
            Some(r#"power null, not "battery:battery""#)
        );
    }

    #[test]
    fn only_plain_paths_inside_the_folder_are_recorded_ones() {
        for ok in ["dhry-P1.json", "ab/dhry-P1.json", "dto-speedup/"] {
            assert!(plain(ok, SUITE), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "./x",
            "a//b",
            SUITE.record,
        ] {
            assert!(!plain(bad, SUITE), "{bad}");
        }
        assert!(!plain(EFFICIENCY.record, EFFICIENCY));
    }

    #[test]
    fn a_record_naming_a_path_outside_is_refused_and_nothing_is_removed() {
        let d = scratch("outside");
        std::fs::create_dir_all(&d).unwrap();
        let victim = d.with_extension("victim");
        std::fs::write(&victim, "keep").unwrap();
        let record = Record {
            recipe: recipe("quick"),
            made: vec![format!(
                "../{}",
                victim.file_name().unwrap().to_str().unwrap()
            )],
        };
        std::fs::write(
            d.join(SUITE.record),
            serde_json::to_string(&record.to_json(SUITE)).unwrap(),
        )
        .unwrap();
        let e = OutDir::open(SUITE, &d, Take::Force, &recipe("quick")).unwrap_err();
        assert!(matches!(e, OutError::BadRecord(..)), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let _ = std::fs::remove_file(victim);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn one_commands_record_is_not_anothers() {
        let d = scratch("kinds");
        let o = OutDir::open(EFFICIENCY, &d, Take::New, &recipe("quick")).unwrap();
        o.write_record().unwrap();
        drop(o);
        assert!(d.join(EFFICIENCY.record).is_file());
        // A suite finds files and no record of its own: refused, nothing removed.
        let e = OutDir::open(SUITE, &d, Take::Force, &recipe("quick")).unwrap_err();
        assert!(matches!(e, OutError::NoRecord(..)), "{e}");
        assert!(e.to_string().contains("no record of a suite"), "{e}");
        // Its own kind reads it back.
        let o = OutDir::open(EFFICIENCY, &d, Take::Force, &recipe("quick")).unwrap();
        assert!(o.recorded().is_empty());
        drop(o);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_removal_never_follows_a_link_out_of_the_folder() {
        let d = scratch("link");
        let elsewhere = d.with_extension("elsewhere");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("dhry-P1.json"), "keep").unwrap();
        let mut o = OutDir::open(SUITE, &d, Take::New, &recipe("quick")).unwrap();
        o.record(&["ab/".into(), "ab/dhry-P1.json".into()]).unwrap();
        drop(o);
        std::os::unix::fs::symlink(&elsewhere, d.join("ab")).unwrap();
        let mut o = OutDir::open(SUITE, &d, Take::Force, &recipe("quick")).unwrap();
        let doomed = o.recorded();
        let e = o.check(&doomed, &[], &[]).unwrap_err();
        assert!(matches!(e, OutError::Link(_, ref l) if l == "ab"), "{e}");
        // Removed as what it is, a link: its target keeps its file.
        o.clear(&["ab/".into()]).unwrap();
        assert!(!d.join("ab").exists());
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("dhry-P1.json")).unwrap(),
            "keep"
        );
        let _ = std::fs::remove_dir_all(&elsewhere);
        let _ = std::fs::remove_dir_all(&d);
    }
}
