//! Records how this build was made so every report can say: the compiler, the target, the
//! cargo profile with its opt-level, lto and codegen-units, debug assertions, the target
//! features and RUSTFLAGS (read back by `benchmp::host::Build`).
//!
//! Cargo tells build scripts the opt-level but not lto or codegen-units, so those come from
//! the workspace manifest's `[profile.<name>]` table, following `inherits`, overridden by
//! `CARGO_PROFILE_<NAME>_LTO` / `_CODEGEN_UNITS` when set, else Cargo's defaults. Overrides
//! given with `cargo --config` are not visible here.
#![allow(clippy::disallowed_macros)] // a build script, test or bench prints to its runner

use std::path::{Path, PathBuf};
use std::process::Command;

use toml::Table;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc)
        .arg("-V")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "rustc (unknown version)".into());
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let rustflags = env("CARGO_ENCODED_RUSTFLAGS").replace('\u{1f}', " ");

    let profile = profile_name();
    let manifest = workspace_manifest();
    if let Some((path, _)) = &manifest {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let profiles = manifest
        .as_ref()
        .and_then(|(_, m)| m.get("profile")?.as_table().cloned())
        .unwrap_or_default();
    let lto = setting(&profiles, &profile, "lto").unwrap_or_else(|| "false".into());
    let codegen_units = setting(&profiles, &profile, "codegen-units")
        .unwrap_or_else(|| default_codegen_units(&profiles, &profile).into());
    let debug_assertions = std::env::var_os("CARGO_CFG_DEBUG_ASSERTIONS").is_some();

    println!("cargo:rustc-env=BENCHMP_RUSTC={version}");
    println!("cargo:rustc-env=BENCHMP_TARGET={}", env("TARGET"));
    println!("cargo:rustc-env=BENCHMP_PROFILE={}", env("PROFILE"));
    println!("cargo:rustc-env=BENCHMP_CARGO_PROFILE={profile}");
    println!("cargo:rustc-env=BENCHMP_OPT_LEVEL={}", env("OPT_LEVEL"));
    println!("cargo:rustc-env=BENCHMP_LTO={lto}");
    println!("cargo:rustc-env=BENCHMP_CODEGEN_UNITS={codegen_units}");
    println!("cargo:rustc-env=BENCHMP_DEBUG_ASSERTIONS={debug_assertions}");
    println!("cargo:rustc-env=BENCHMP_RUSTFLAGS={rustflags}");
    println!(
        "cargo:rustc-env=BENCHMP_TARGET_FEATURES={}",
        env("CARGO_CFG_TARGET_FEATURE")
    );
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo:rerun-if-changed=build.rs");
}

/// The cargo profile by name (dev, release, bench or a custom one). PROFILE only says
/// "debug" or "release", so it is read from OUT_DIR (`<target>/<profile dir>/build/<pkg>/out`),
/// where dev builds go to `debug`.
fn profile_name() -> String {
    let fallback = match std::env::var("PROFILE").as_deref() {
        Ok("release") => "release",
        _ => "dev",
    };
    let out_dir = std::env::var_os("OUT_DIR").map(PathBuf::from);
    let dir = out_dir.as_deref().and_then(|p| {
        let parts: Vec<_> = p.components().collect();
        let build = parts.iter().rposition(|c| c.as_os_str() == "build")?;
        parts
            .get(build.checked_sub(1)?)
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
    });
    match dir.as_deref() {
        Some("debug") => "dev".into(),
        Some(name) if !name.is_empty() => name.into(),
        _ => fallback.into(),
    }
}

/// The nearest manifest above this crate with a `[workspace]` table, and its contents.
fn workspace_manifest() -> Option<(PathBuf, Table)> {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let mut cur: Option<&Path> = dir.parent();
    while let Some(d) = cur {
        let path = d.join("Cargo.toml");
        let table = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| text.parse::<Table>().ok());
        if let Some(table) = table.filter(|t| t.contains_key("workspace")) {
            return Some((path, table));
        }
        cur = d.parent();
    }
    None
}

/// The profile Cargo makes `profile` inherit from when the manifest does not say.
fn parent(profiles: &Table, profile: &str) -> Option<String> {
    let declared = profiles
        .get(profile)
        .and_then(|p| p.get("inherits"))
        .and_then(|v| v.as_str());
    match (declared, profile) {
        (Some(p), _) => Some(p.to_string()),
        (None, "test") => Some("dev".into()),
        (None, "bench") => Some("release".into()),
        _ => None,
    }
}

/// `key` of `profile`: its environment override, its manifest entry, else its parent's.
fn setting(profiles: &Table, profile: &str, key: &str) -> Option<String> {
    let mut name = profile.to_string();
    // A chain longer than the profiles declared is a loop Cargo would refuse.
    for _ in 0..=profiles.len() + 2 {
        let var = format!(
            "CARGO_PROFILE_{}_{}",
            name.to_uppercase().replace('-', "_"),
            key.to_uppercase().replace('-', "_")
        );
        println!("cargo:rerun-if-env-changed={var}");
        if let Ok(v) = std::env::var(&var) {
            return Some(v);
        }
        match profiles.get(&name).and_then(|p| p.get(key)) {
            Some(toml::Value::String(s)) => return Some(s.clone()),
            Some(toml::Value::Integer(n)) => return Some(n.to_string()),
            Some(toml::Value::Boolean(b)) => return Some(b.to_string()),
            Some(other) => return Some(format!("{other:?}")),
            None => name = parent(profiles, &name)?,
        }
    }
    None
}

/// Cargo's codegen-units when no profile sets it: 256 for the incremental dev family, 16
/// for release and its descendants.
fn default_codegen_units(profiles: &Table, profile: &str) -> &'static str {
    let mut name = profile.to_string();
    for _ in 0..=profiles.len() + 2 {
        match parent(profiles, &name) {
            Some(p) => name = p,
            None => break,
        }
    }
    if name == "dev" { "256" } else { "16" }
}
