//! Lets static musl builds (the Android/aarch64 binaries) link: libloading asks for `-ldl`,
//! which musl folds into libc.a and Rust's self-contained musl does not ship. An empty
//! `libdl.a` satisfies the linker; `dlopen` then comes from libc.a and fails at run time in a
//! static binary, which `impls::load` already handles (the `cpu` implementation falls back to
//! the linked libc, `lib:PATH` reports that it cannot be loaded).
#![allow(clippy::disallowed_macros)] // a build script, test or bench prints to its runner

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_ENV").as_deref() != Ok("musl") {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // An ar archive with no members is its 8-byte magic alone.
    std::fs::write(out.join("libdl.a"), b"!<arch>\n").expect("OUT_DIR is writable");
    println!("cargo:rustc-link-search=native={}", out.display());
}
