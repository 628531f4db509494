//! Temporary folders for tests: a fresh folder or a copy of a captured sysfs tree, removed when
//! the test is done with it and kept when the test fails.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A test's temporary folder: used as the path it holds (`Deref` to [`Path`]), removed with
/// everything in it when dropped, and kept when the test is failing (a panic is unwinding), to
/// be looked at. Bind it to a name for as long as the test uses the folder: a temporary
/// (`temp_dir(..).join(..)`) is removed at the end of its statement.
#[derive(Debug)]
#[must_use = "the folder is removed when this is dropped"]
pub struct TempDir {
    /// The path the test uses.
    path: PathBuf,
    /// The folder removed on drop (the path itself, or a folder above it).
    owned: PathBuf,
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<OsStr> for TempDir {
    fn as_ref(&self) -> &OsStr {
        self.path.as_os_str()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.owned);
        }
    }
}

/// A fresh, empty temporary folder for one test (`<tmp>/<prefix>-<pid>-<name>`), removed when
/// the returned [`TempDir`] is dropped.
pub fn temp_dir(prefix: &str, name: &str) -> TempDir {
    let d = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temporary folder");
    TempDir {
        path: d.clone(),
        owned: d,
    }
}

/// A copy of benchmp's captured sysfs tree `name` (`tests/fixtures/NAME/sys`) in a fresh
/// folder for one test, to point `BENCHMP_SYSFS_ROOT` at: the copy's `sys`, removed with its
/// folder when dropped.
pub fn fixture_copy(name: &str, test: &str) -> TempDir {
    let mut dir = temp_dir("benchmp-fixture", &format!("{name}-{test}"));
    let root = dir.join("sys");
    let fixture = format!("{}/tests/fixtures/{name}/sys", env!("CARGO_MANIFEST_DIR"));
    let cp = Command::new("cp")
        .args(["-a", &fixture])
        .arg(&root)
        .status()
        .expect("cp");
    assert!(cp.success(), "cannot copy {fixture}");
    dir.path = root;
    dir
}
