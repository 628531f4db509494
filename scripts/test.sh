#!/usr/bin/env bash
# socbench's test command (README quick start): formatting, lints, every crate's unit and
# integration tests, the release-build kernel check, the aarch64 kernels under qemu, shell
# lint, and the script tests (android.sh with a stand-in adb, one quick suite run). Tests
# check correctness only; no test asserts a time.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace

# The release build's hot loops must not be optimised away (a lower bound on the time a
# 64 MiB read can take; not a performance test).
cargo test --release -p bw_mem --test not_optimised_away

# NEON kernels and the portable fallbacks, built for aarch64 and run under qemu-user.
if command -v qemu-aarch64-static >/dev/null && rustup target list --installed | grep -qx aarch64-unknown-linux-musl; then
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=rust-lld \
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUNNER=qemu-aarch64-static \
    cargo test -p bw_mem --target aarch64-unknown-linux-musl --lib --test kernels
else
  echo "SKIPPED aarch64 kernel tests: needs qemu-user-static and the aarch64-unknown-linux-musl target"
fi

shellcheck -x scripts/*.sh scripts/lib/*.sh scripts/tests/*.sh scripts/tests/fake-adb .ci/run
python3 -m py_compile scripts/*.py
scripts/tests/test_android.sh
scripts/tests/test_suite.sh
