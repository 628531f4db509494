#!/usr/bin/env bash
# socbench's test command (README quick start): formatting, lints, then every crate's
# unit and integration tests. Tests check correctness only; no test asserts a time.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
