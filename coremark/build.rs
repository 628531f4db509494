//! Records how the crate is compiled, for the report's "Compiler version" and "Compiler
//! flags" lines: the rustc version, the cargo profile and its opt-level, lto and
//! codegen-units, the target CPU and any RUSTFLAGS.
//!
//! Cargo tells build scripts the profile and opt-level but not lto or codegen-units, so
//! those come from the workspace manifest's `[profile.<name>]` section, overridden by
//! `CARGO_PROFILE_<NAME>_LTO` / `_CODEGEN_UNITS` when set (overrides given with
//! `cargo --config` are not visible here).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");

    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "rustc (unknown version)".into());

    let profile = profile_name();
    let env_name = profile.to_uppercase().replace('-', "_");
    for key in ["LTO", "CODEGEN_UNITS"] {
        println!("cargo:rerun-if-env-changed=CARGO_PROFILE_{env_name}_{key}");
    }
    let manifest = workspace_manifest();
    if let Some(path) = &manifest {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let text = manifest
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let from_manifest = |key: &str| profile_key(&text, &profile, key);
    let setting = |env_key: &str, key: &str, default: &str| {
        env::var(format!("CARGO_PROFILE_{env_name}_{env_key}"))
            .ok()
            .or_else(|| from_manifest(key))
            .unwrap_or_else(|| default.to_owned())
    };
    let opt_level = env::var("OPT_LEVEL").unwrap_or_else(|_| "?".into());
    let release_like = profile != "dev" && profile != "test";
    let lto = setting("LTO", "lto", "false");
    let codegen_units = setting(
        "CODEGEN_UNITS",
        "codegen-units",
        if release_like { "16" } else { "256" },
    );

    let rustflags: Vec<String> = env::var("CARGO_ENCODED_RUSTFLAGS")
        .map(|s| {
            s.split('\x1f')
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let target_cpu = target_cpu(&rustflags).unwrap_or_else(|| "default".into());

    let mut flags = format!(
        "profile={profile} opt-level={opt_level} lto={lto} codegen-units={codegen_units} target-cpu={target_cpu}"
    );
    if env::var_os("CARGO_CFG_DEBUG_ASSERTIONS").is_some() {
        flags.push_str(" debug-assertions=on");
    }
    if !rustflags.is_empty() {
        flags.push_str(&format!(" RUSTFLAGS=\"{}\"", rustflags.join(" ")));
    }
    println!("cargo:rustc-env=COREMARK_RUSTC_VERSION={version}");
    println!("cargo:rustc-env=COREMARK_BUILD_FLAGS={flags}");
}

/// The cargo profile name, read from OUT_DIR (`<target>/<profile dir>/build/<pkg>/out`),
/// since PROFILE only says "debug" or "release".
fn profile_name() -> String {
    let fallback = match env::var("PROFILE").as_deref() {
        Ok("release") => "release",
        _ => "dev",
    };
    let out_dir = env::var_os("OUT_DIR").map(PathBuf::from);
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

/// The nearest Cargo.toml above this crate that declares `[workspace]`.
fn workspace_manifest() -> Option<PathBuf> {
    let dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR")?);
    let mut cur: Option<&Path> = dir.parent();
    while let Some(d) = cur {
        let candidate = d.join("Cargo.toml");
        let is_workspace = std::fs::read_to_string(&candidate)
            .map(|text| text.lines().any(|l| l.trim() == "[workspace]"))
            .unwrap_or(false);
        if is_workspace {
            return Some(candidate);
        }
        cur = d.parent();
    }
    None
}

/// Value of `key` in the manifest's `[profile.<profile>]` section, quotes removed.
fn profile_key(manifest: &str, profile: &str, key: &str) -> Option<String> {
    let header = format!("[profile.{profile}]");
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.starts_with('[') {
            inside = line == header;
            continue;
        }
        if !inside {
            continue;
        }
        match line.split_once('=') {
            Some((k, v)) if k.trim() == key => return Some(v.trim().trim_matches('"').to_owned()),
            _ => {}
        }
    }
    None
}

/// `target-cpu` from the rustc flags (`-C target-cpu=X` or `-Ctarget-cpu=X`).
fn target_cpu(flags: &[String]) -> Option<String> {
    flags
        .iter()
        .filter_map(|f| {
            f.strip_prefix("-C")
                .unwrap_or(f)
                .trim_start()
                .strip_prefix("target-cpu=")
        })
        .next_back()
        .map(str::to_owned)
}
