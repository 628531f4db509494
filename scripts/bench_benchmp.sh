#!/usr/bin/env bash
# Benchmark (not a test): the framework's own costs on this machine — calibration time, timing
# overhead (ns per clock read), loop overhead (ns per iteration), fork + handshake + reap time per
# child, and the error of known-duration spins (1, 10, 100 us) measured through benchmp.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p benchmp-cli
flock /tmp/socbench-cpu.lock "${CARGO_TARGET_DIR:-target}/release/benchmp" overhead "$@"
