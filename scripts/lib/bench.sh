#!/usr/bin/env bash
# Shared by the benchmark scripts: the machine-wide lock every timed run (and every build)
# holds, so no two benchmarks or heavy jobs run at once, and the release build of one tool.

lock_file=${SOCBENCH_LOCK:-/tmp/socbench-cpu.lock}
# shellcheck source=scripts/lib/tools.sh
. "$(dirname "${BASH_SOURCE[0]}")/tools.sh"

# Runs a command holding the lock (or plainly where flock is missing).
locked() {
  if command -v flock >/dev/null; then
    flock "$lock_file" "$@"
  else
    "$@"
  fi
}

# Builds the release binary $1 (of its package, tool_package) under the lock and prints its path.
build_release() {
  local bin="${CARGO_TARGET_DIR:-target}/release/$1" package
  package=$(tool_package "$1")
  echo "building socbench $1 (cargo build --release -p $package)" >&2
  locked cargo build --quiet --release -p "$package" || return 1
  [[ -x $bin ]] || { echo "no binary at $bin" >&2; return 1; }
  printf '%s\n' "$bin"
}
