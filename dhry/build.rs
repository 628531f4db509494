//! Records the compiler and optimisation settings in the binary, so every report says how
//! the figures were compiled (the Dhrystone rules ask for the optimisation level).

use std::env;
use std::process::Command;

fn main() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "rustc (version unknown)".to_string());
    let get = |k: &str| env::var(k).unwrap_or_else(|_| "unknown".to_string());
    let rustflags = env::var("CARGO_ENCODED_RUSTFLAGS")
        .unwrap_or_default()
        .split('\x1f')
        .filter(|f| !f.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    println!("cargo:rustc-env=DHRY_RUSTC_VERSION={version}");
    println!("cargo:rustc-env=DHRY_TARGET={}", get("TARGET"));
    println!("cargo:rustc-env=DHRY_PROFILE={}", get("PROFILE"));
    println!("cargo:rustc-env=DHRY_OPT_LEVEL={}", get("OPT_LEVEL"));
    println!("cargo:rustc-env=DHRY_RUSTFLAGS={rustflags}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
}
