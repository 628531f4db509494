//! Records the compiler version and flags so every report can say how it was built.

use std::process::Command;

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
    println!("cargo:rustc-env=BENCHMP_RUSTC={version}");
    println!("cargo:rustc-env=BENCHMP_TARGET={}", env("TARGET"));
    println!("cargo:rustc-env=BENCHMP_PROFILE={}", env("PROFILE"));
    println!("cargo:rustc-env=BENCHMP_OPT_LEVEL={}", env("OPT_LEVEL"));
    println!("cargo:rustc-env=BENCHMP_RUSTFLAGS={rustflags}");
    println!(
        "cargo:rustc-env=BENCHMP_TARGET_FEATURES={}",
        env("CARGO_CFG_TARGET_FEATURE")
    );
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo:rerun-if-changed=build.rs");
}
