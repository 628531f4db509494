//! Reading the runs of each side: report files, result folders, and the command line's
//! split into BASE and CUR.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{CompareError, Comparison, Entry, MAX_REPORT_BYTES, Run};
use benchmp::report::{AnyTool, Report};

/// Reads a report file, or every report of a result folder. In a folder every `*.json` must
/// be a report, except a comparison written there earlier (suite.sh keeps `compare.json`
/// beside its reports) and the suite's summary (`summary.json`), which are passed over.
pub fn load(path: &Path) -> Result<Vec<Entry>, CompareError> {
    let meta = std::fs::metadata(path).map_err(|e| CompareError::Read(path.to_path_buf(), e))?;
    if !meta.is_dir() {
        let report = read_report(path, &meta)?;
        return Ok(vec![Entry {
            label: report.tool.clone(),
            report,
        }]);
    }
    let mut entries = Vec::new();
    for (f, meta) in report_files(path)? {
        let text = read_bounded(&f, &meta)?;
        match serde_json::from_slice::<Report<AnyTool>>(&text) {
            Ok(report) => entries.push(Entry {
                label: f
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                report: with_figures(report),
            }),
            Err(_) if serde_json::from_slice::<Comparison>(&text).is_ok() => {}
            Err(_) if serde_json::from_slice::<SuiteSummary>(&text).is_ok() => {}
            Err(e) => return Err(CompareError::NotReport(f, e)),
        }
    }
    if entries.is_empty() {
        return Err(CompareError::Empty(path.to_path_buf()));
    }
    Ok(entries)
}

/// The shape of a suite's `summary.json` (`benchmp summary --json`), enough to know one.
#[derive(Deserialize)]
struct SuiteSummary {
    #[serde(rename = "folder")]
    _folder: PathBuf,
    #[serde(rename = "entries")]
    _entries: Vec<serde_json::Value>,
}

/// The `*.json` files of a result folder, sorted, with their metadata (through symlinks).
/// Hidden files are passed over: the suite's own record of the folder
/// (`.socbench-suite.json`) and staging copies are no reports.
pub fn report_files(dir: &Path) -> Result<Vec<(PathBuf, std::fs::Metadata)>, CompareError> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| CompareError::Read(dir.to_path_buf(), e))? {
        let p = e
            .map_err(|e| CompareError::Read(dir.to_path_buf(), e))?
            .path();
        let hidden = p
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."));
        if p.extension().is_some_and(|x| x == "json") && !hidden {
            let meta = std::fs::metadata(&p).map_err(|e| CompareError::Read(p.clone(), e))?;
            files.push((p, meta));
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// Every file a run's path stands for: the report itself, or each `*.json` of a folder.
pub fn input_files(path: &Path) -> Vec<PathBuf> {
    if path.is_dir() {
        report_files(path)
            .map(|v| v.into_iter().map(|(p, _)| p).collect())
            .unwrap_or_default()
    } else {
        vec![path.to_path_buf()]
    }
}

fn read_report(path: &Path, meta: &std::fs::Metadata) -> Result<Report<AnyTool>, CompareError> {
    let text = read_bounded(path, meta)?;
    let report: Report<AnyTool> = serde_json::from_slice(&text)
        .map_err(|e| CompareError::NotReport(path.to_path_buf(), e))?;
    Ok(with_figures(report))
}

/// A regular file's bytes, refusing what cannot be a report file before reading it (a
/// device, a FIFO, a folder, a file over [`MAX_REPORT_BYTES`]) and reading at most that much
/// in case the file grows meanwhile.
fn read_bounded(path: &Path, meta: &std::fs::Metadata) -> Result<Vec<u8>, CompareError> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let kind = if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a folder")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else {
        Some("a special file")
    };
    if let Some(kind) = kind {
        return Err(CompareError::NotAFile(path.to_path_buf(), kind));
    }
    if meta.len() > MAX_REPORT_BYTES {
        return Err(CompareError::TooLarge(path.to_path_buf(), meta.len()));
    }
    let read = |e| CompareError::Read(path.to_path_buf(), e);
    let mut text = Vec::new();
    // Opened without blocking and checked again on the descriptor: the file may have been
    // replaced since it was looked at.
    foundation::input::open_regular(path)
        .map_err(|e| match e {
            foundation::input::OpenError::Special(kind) => {
                CompareError::NotAFile(path.to_path_buf(), kind)
            }
            other => read(other.into()),
        })?
        .take(MAX_REPORT_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(read)?;
    if text.len() as u64 > MAX_REPORT_BYTES {
        return Err(CompareError::TooLarge(
            path.to_path_buf(),
            text.len() as u64,
        ));
    }
    Ok(text)
}

/// A report from before figures were kept gets its measurements' default figures.
fn with_figures(mut report: Report<AnyTool>) -> Report<AnyTool> {
    if report.figures.is_empty() {
        report.figures =
            benchmp::report::default_figures(&report.measurements, benchmp::Measurement::label);
    }
    report
}

/// Refuses an output file that is one of the inputs (by inode, so `./a.json`, a symlink or a
/// hard link to it count), before anything is read: writing it would destroy the input.
pub fn refuse_overwrite(inputs: &[&Path], outputs: &[(String, &str)]) -> Result<(), CompareError> {
    for (option, out) in outputs {
        let out = Path::new(out);
        for input in inputs.iter().flat_map(|p| input_files(p)) {
            if benchmp::files::same_file(&input, out) {
                return Err(CompareError::OutputIsInput {
                    option: option.clone(),
                    output: out.to_path_buf(),
                    input,
                });
            }
        }
    }
    Ok(())
}

impl Run {
    /// Reads a run (see [`load`]).
    pub fn load(path: &Path) -> Result<Run, CompareError> {
        Ok(Run {
            path: path.to_path_buf(),
            entries: load(path)?,
        })
    }
}

/// The runs of each side from the command line: `BASE CUR` (exactly two paths without `--`),
/// or `BASE... -- CUR...` (every path after `--` a run of CUR). A run given twice on one side
/// (by inode) is refused, since it would count as two units; the same run on both sides is an
/// A/A comparison and allowed.
pub fn sides(
    before: Vec<PathBuf>,
    after: Vec<PathBuf>,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), CompareError> {
    if let Some(o) = after
        .iter()
        .find(|p| p.to_string_lossy().starts_with('-') && !p.exists())
    {
        return Err(CompareError::OptionAfterSeparator(o.display().to_string()));
    }
    let (base, cur) = match (before.len(), after.is_empty()) {
        (2, true) => (before[..1].to_vec(), before[1..].to_vec()),
        (n, true) | (n @ 0, false) => return Err(CompareError::Sides(n)),
        _ => (before, after),
    };
    for (name, side) in [("BASE", &base), ("CUR", &cur)] {
        for (i, p) in side.iter().enumerate() {
            if side[..i].iter().any(|q| benchmp::files::same_file(p, q)) {
                return Err(CompareError::GivenTwice {
                    side: name,
                    path: p.clone(),
                });
            }
        }
    }
    Ok((base, cur))
}
