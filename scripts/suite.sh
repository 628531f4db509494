#!/usr/bin/env bash
# socbench suite runner: builds the release binaries and runs every tool with defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace
host=$(hostname -s 2>/dev/null || hostname)
out="results/${host}-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
echo "results: $out"
