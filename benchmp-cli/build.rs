//! Reads the suite's tools, `SUITE_TOOLS` of `scripts/lib/tools.sh` (the one list, which the
//! scripts source too), into `suite_list.rs` (the library's `suite_tools()`), and gathers the
//! suite's plan from them: each tool's `src/suite.rs` becomes a module of `benchmp suite`'s plan
//! (`suite_tools.rs`), in the list's order. A tool joins the suite with its name in that list;
//! its entries stay in its own crate, which tests them (benchmp/src/suite.rs says what such a
//! file may use).
#![allow(clippy::disallowed_macros)] // a build script prints to cargo

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let top = crate_dir
        .parent()
        .expect("benchmp-cli sits in the workspace")
        .to_path_buf();
    let list = top.join("scripts/lib/tools.sh");
    println!("cargo:rerun-if-changed={}", list.display());
    let text = std::fs::read_to_string(&list)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", list.display()));
    let tools: Vec<&str> = text
        .lines()
        .find_map(|l| l.strip_prefix("SUITE_TOOLS=\""))
        .map(|l| l.trim_end_matches('"').split_whitespace().collect())
        .unwrap_or_else(|| panic!("{} has no SUITE_TOOLS=\"...\" line", list.display()));
    let mut code =
        String::from("// Made by benchmp-cli/build.rs from SUITE_TOOLS: one module per tool.\n");
    let mut table = String::new();
    for tool in &tools {
        let file = suite_file(&top, tool);
        println!("cargo:rerun-if-changed={}", file.display());
        let path = file.display().to_string();
        assert!(
            !path.contains('"') && !path.contains('\\'),
            "the workspace's path {path} cannot be named in a #[path] attribute"
        );
        writeln!(code, "#[path = \"{path}\"]\npub mod {tool};").unwrap();
        writeln!(table, "    (\"{tool}\", {tool}::plan),").unwrap();
    }
    writeln!(
        code,
        "/// Every suite tool with its plan, in `SUITE_TOOLS` order.\npub const TOOLS: &[(&str, benchmp::suite::Plan)] = &[\n{table}];"
    )
    .unwrap();
    let names: Vec<String> = tools.iter().map(|t| format!("{t:?}")).collect();
    write_out("suite_list.rs", &format!("&[{}]\n", names.join(", ")));
    write_out("suite_tools.rs", &code);
}

/// Writes `name` in cargo's output folder.
fn write_out(name: &str, text: &str) {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join(name);
    std::fs::write(&out, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}

/// `TOOL/src/suite.rs`, checked: the tool's name is a module name, and the file exists and
/// reaches nothing of its own crate (it is compiled here as well).
fn suite_file(top: &Path, tool: &str) -> PathBuf {
    let ident = tool.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && tool
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    assert!(
        ident,
        "SUITE_TOOLS: '{tool}' is not a Rust module name (lower case, digits, _)"
    );
    let file = top.join(tool).join("src/suite.rs");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
        panic!(
            "SUITE_TOOLS names {tool}, whose plan {} cannot be read ({e}): a suite tool declares its entries there",
            file.display()
        )
    });
    if let Some((n, _)) = text
        .lines()
        .enumerate()
        .find(|(_, l)| !l.trim_start().starts_with("//") && l.contains("crate::"))
    {
        panic!(
            "{}:{}: a suite plan uses only benchmp::suite and std (benchmp-cli compiles it too), not crate::",
            file.display(),
            n + 1
        );
    }
    file
}
