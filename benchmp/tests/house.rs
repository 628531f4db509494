//! The house's size rules, kept by a test: no Rust source file of a crate's `src/` over 800
//! lines, kernels aside (a `kernels` folder holds code whose length follows the reference it
//! reproduces), and no `main.rs` over 150 (a binary's `main` parses, dispatches and exits;
//! the commands live in modules). Integration tests (`tests/`) are not held to it.

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;
const MAX_MAIN_LINES: usize = 150;

/// Every `.rs` file below `dir`, folders named `kernels` left out.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "kernels") {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The workspace's crates: the folders beside benchmp with a Cargo.toml and a `src/` (the
/// framework itself, benchmp, is a library: its `benchmp` binary is benchmp-cli's).
fn crate_sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
            sources(&dir.join("src"), &mut files);
        }
    }
    files.sort();
    files
}

#[test]
fn no_source_file_passes_800_lines_and_no_main_passes_150() {
    let files = crate_sources();
    // The walk found the crates (a walk that finds nothing would pass anything).
    for member in [
        "benchmp-cli",
        "bw_mem",
        "lat_mem_rd",
        "dhry",
        "coremark",
        "dto",
        "ftrace",
    ] {
        assert!(
            files
                .iter()
                .any(|f| f.ends_with(format!("{member}/src/main.rs"))),
            "no {member}/src/main.rs among {} files",
            files.len()
        );
    }
    let mut over = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let lines = text.lines().count();
        let limit = if file.ends_with("main.rs") {
            MAX_MAIN_LINES
        } else {
            MAX_LINES
        };
        if lines > limit {
            over.push(format!(
                "{}: {lines} lines (at most {limit})",
                file.display()
            ));
        }
    }
    assert!(
        over.is_empty(),
        "over the house's size:\n{}",
        over.join("\n")
    );
}
