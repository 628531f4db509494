#!/usr/bin/env bash
# socbench's test command (README quick start): formatting, lints, every crate's unit and
# integration tests, shell lint, and the script tests. Tests check correctness only; no test
# asserts a time.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace

shellcheck -x scripts/*.sh scripts/lib/*.sh scripts/tests/*.sh scripts/tests/fake-adb .ci/run
python3 -m py_compile scripts/*.py
scripts/tests/test_android.sh
