#!/usr/bin/env bash
# socbench's test command (README quick start): formatting, lints, every crate's unit and
# integration tests, the release-build kernel check, the aarch64 kernels under qemu, shell
# lint, and the script tests (android.sh with a stand-in adb running the quick suite under
# qemu, one quick suite run here, the LAVA definitions). Tests check correctness only; no
# test asserts a time. After the set-up, every build first, then every test, then the device
# test; the last line gives the time of each.
#
#   scripts/test.sh           everything (what CI runs), installing what it needs first; last,
#                             as a stage of its own, the device test (scripts/device.sh: the
#                             emulated arm64 SoC under LAVA's dispatcher, about 10 minutes)
#   scripts/test.sh --no-device   everything but the device test
#   scripts/test.sh --quick   the edit-compile-test loop: fmt, clippy, cargo test --workspace
set -euo pipefail
cd "$(dirname "$0")/.."

device=1
case "${1:-}" in
  --no-device) device=0 ;;
  --quick)
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    cargo test --workspace
    exit 0 ;;
  "") ;;
  *) echo "test.sh: unknown option '$1' (--quick, --no-device, or nothing for every test)" >&2; exit 2 ;;
esac

# Set-up on a fresh machine: everything below needs these; each missing piece is installed,
# or the line that says why it cannot be ends the run (scripts/lib/setup.sh).
# shellcheck source=scripts/lib/setup.sh
. scripts/lib/setup.sh
ok=1
# Packages: shellcheck (script lint), qemu-user-static (aarch64 tests and the stand-in adb), util-linux
# (taskset, setpriv and flock for the placement, permission and lock tests).
setup_apt shellcheck shellcheck qemu-aarch64-static qemu-user-static taskset util-linux setpriv util-linux || ok=0
setup_rustup_component rustfmt clippy || ok=0
setup_rust_target aarch64-unknown-linux-musl || ok=0
setup_python_packages || ok=0
setup_tracefs || true
# The device test's own set-up (QEMU, LAVA's dispatcher, Debian's arm64 kernel and busybox):
# done here, so that the test's time is the test's.
if [ "$device" = 1 ]; then scripts/device.sh --setup || ok=0; fi
if [ "$ok" = 0 ]; then
  echo "test.sh: the set-up above is incomplete; nothing was tested" >&2
  exit 1
fi
# A first build (no target folder yet, as in CI's fresh clone) writes no incremental caches:
# nothing would read them, and writing them cost a quarter of the debug and clippy builds'
# CPU time (160 -> 116 and 59 -> 50 CPU-seconds on the 2-CPU guest). A later run keeps cargo's
# default, so an edit rebuilds incrementally. CARGO_INCREMENTAL, when set, is left alone.
if [ -z "${CARGO_INCREMENTAL:-}" ] && [ ! -d "${CARGO_TARGET_DIR:-target}/debug" ]; then
  export CARGO_INCREMENTAL=0
fi
# Times below count from here (after set-up): each stage's start and length.
SECONDS=0
# Nothing the tests write lands in the working tree: Python's bytecode (py_compile, the plot
# scripts the tests run) goes to a temporary folder, removed at the end.
PYTHONPYCACHEPREFIX=$(mktemp -d "${TMPDIR:-/tmp}/socbench-test-pycache.XXXXXX")
export PYTHONPYCACHEPREFIX

# Every stage runs, whatever failed before it; at the end each failed stage is named with
# the command that reruns it, and the test command fails.
failed=()
# stage NAME RERUN CMD...: runs CMD; a failure is remembered under NAME with RERUN.
stage() {
  local name=$1 rerun=$2
  shift 2
  local start=$SECONDS
  echo "== $name (at ${SECONDS} s)" >&2
  if ! "$@"; then
    echo "test.sh: stage '$name' failed" >&2
    failed+=("$name: $rerun")
  fi
  echo "   $name: $((SECONDS - start)) s" >&2
}

stage fmt "cargo fmt --all -- --check" cargo fmt --all -- --check

# Jobs that run beside the stages, each in its own process group (job control) so that an early
# end stops it with everything it started, its output kept until it is awaited. Every test
# holds on a busy machine (scripts/tests/*, the crates' tests), so they may share the CPUs.
declare -A job_pid job_log job_rerun
# beside NAME RERUN CMD...: starts CMD in the background.
beside() {
  local name=$1
  job_rerun[$name]=$2
  shift 2
  job_log[$name]=$(mktemp "${TMPDIR:-/tmp}/socbench-test-$name.XXXXXX")
  set -m
  ( set -e; "$@" ) > "${job_log[$name]}" 2>&1 &
  job_pid[$name]=$!
  set +m
}
# await NAME: waits for it and prints its output; a failure is remembered as a stage's.
await() {
  local rc=0
  echo "== $1 (run beside; awaited at ${SECONDS} s)" >&2
  wait "${job_pid[$1]}" || rc=$?
  cat "${job_log[$1]}"
  rm -f "${job_log[$1]}"
  if [ "$rc" -ne 0 ]; then
    echo "test.sh: stage '$1' failed (exit $rc; output above)" >&2
    failed+=("$1: ${job_rerun[$1]}")
  fi
  unset "job_pid[$1]" "job_log[$1]" "job_rerun[$1]"
}
stop_jobs() {
  local p
  for p in "${job_pid[@]}"; do kill -- "-$p" 2>/dev/null || true; done
  rm -f "${job_log[@]}"
  rm -rf "$PYTHONPYCACHEPREFIX"
}
trap stop_jobs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- The builds: the compiler's passes, side by side, before any test runs (so the tests'
# time below is the tests'). Each cargo has a target folder of its own, so none waits for
# another's lock: clippy's (a check build: nothing it makes serves the others), the debug
# build of every test, and beside_dir's release and aarch64 builds:
#  - the release build's hot loops must not be optimised away (a lower bound on the time a
#    64 MiB read can take; not a performance test): bw_mem built here with fat LTO, checked
#    by a test built with the rest (stage release_kernels);
#  - NEON kernels and the portable fallbacks (bw_mem's and dto's), built for aarch64 to run
#    under qemu-user, and the stand-in phone's binaries for the android.sh test: one aarch64
#    build with the scripts profile (no LTO, parallel codegen), its dependencies shared. The
#    binaries are built with benchmp's `testing` feature, which the kernel tests turn on: one
#    benchmp and one library per tool serve both (without it benchmp and every crate above it
#    compiled twice: 109 -> 56 CPU-seconds for the binaries on the 2-CPU guest). The feature
#    only adds benchmp::testing, which no binary calls.
target_dir="${CARGO_TARGET_DIR:-target}"
beside_dir="$target_dir/beside"
aarch64() {
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=rust-lld \
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUNNER=qemu-aarch64-static \
    cargo "$1" --profile scripts --target aarch64-unknown-linux-musl "${@:2}"
}
# The device test's other tools, built here with the rest when it runs (given to device.sh).
device_packages=()
if [ "$device" = 1 ]; then device_packages=(-p lat_mem_rd -p coremark -p ftrace); fi
# (Chained with &&: called after `||` below, where `set -e` does not stop at a failure.)
builds() (
  export CARGO_TARGET_DIR="$beside_dir"
  cargo build --release -p bw_mem --bin bw_mem &&
    aarch64 test -p bw_mem -p dto --test kernels --no-run &&
    aarch64 build -p benchmp-cli -p bw_mem -p dhry -p dto "${device_packages[@]}" --bins --features benchmp/testing
)
beside builds "CARGO_TARGET_DIR=$beside_dir: cargo build --release -p bw_mem --bin bw_mem; the aarch64 builds in scripts/test.sh's builds()" builds
beside clippy "CARGO_TARGET_DIR=$target_dir/clippy cargo clippy --workspace --all-targets -- -D warnings" \
  env CARGO_TARGET_DIR="$target_dir/clippy" cargo clippy --workspace --all-targets -- -D warnings
stage build "cargo test --workspace --no-run" cargo test --workspace --no-run
await clippy
await builds
builds_s=$SECONDS

# --- The tests, side by side. Every test must run here: a test that cannot (a missing tool,
# no tracefs) fails instead of skipping (benchmp::testing::skip).
export SOCBENCH_REQUIRE_ALL=1
# The script tests check structure, not figures: this machine's side runs the debug binaries
# cargo test built above, the stand-in phone the aarch64 ones of builds().
export SOCBENCH_BIN="$target_dir/debug"
export SOCBENCH_DEVICE_BIN="$beside_dir/aarch64-unknown-linux-musl/scripts"
# The aarch64 kernels under qemu-user, then the stand-in phone's test (android.sh with a
# stand-in adb, its quick suite under qemu-user).
aarch64_tests() {
  local start=$SECONDS
  echo "-- kernels under qemu-user (at ${SECONDS} s)"
  CARGO_TARGET_DIR="$beside_dir" aarch64 test -p bw_mem -p dto --test kernels ||
    { echo "test.sh: the aarch64 kernel tests failed"; return 1; }
  echo "   kernels: $((SECONDS - start)) s"
  start=$SECONDS
  echo "-- android (at ${SECONDS} s)"
  scripts/tests/test_android.sh || { echo "test.sh: script test 'android' failed"; return 1; }
  echo "   android: $((SECONDS - start)) s"
}
beside aarch64 "CARGO_TARGET_DIR=$beside_dir cargo test --profile scripts --target aarch64-unknown-linux-musl -p bw_mem -p dto --test kernels (with the runner of scripts/test.sh's aarch64()); SOCBENCH_BIN=$SOCBENCH_BIN SOCBENCH_DEVICE_BIN=$SOCBENCH_DEVICE_BIN scripts/tests/test_android.sh (the one that failed is named above)" aarch64_tests

# The lmbench harness, suite and LAVA tests one after another (each holds on a busy machine,
# and the crates' tests spend much of their time waiting on child processes).
# script_tests: each script test in turn, its time and a line for each one that failed.
script_tests() {
  local rc=0 t start
  for t in lmbench_harness suite lava; do
    start=$SECONDS
    echo "-- $t (at ${SECONDS} s)"
    if [ "$t" = lmbench_harness ]; then
      scripts/tests/test_lmbench_harness.sh "$SOCBENCH_BIN" || { echo "test.sh: script test '$t' failed"; rc=1; }
    else
      "scripts/tests/test_$t.sh" || { echo "test.sh: script test '$t' failed"; rc=1; }
    fi
    echo "   $t: $((SECONDS - start)) s"
  done
  return "$rc"
}
beside script_tests "SOCBENCH_BIN=$SOCBENCH_BIN scripts/tests/test_lmbench_harness.sh $SOCBENCH_BIN; SOCBENCH_BIN=$SOCBENCH_BIN scripts/tests/test_suite.sh; SOCBENCH_BIN=$SOCBENCH_BIN scripts/tests/test_lava.sh (the one that failed is named above)" script_tests

# Shell lint and Python's compile check (one CPU, half a minute).
lint() {
  shellcheck -x scripts/*.sh scripts/lib/*.sh scripts/lava/*.sh scripts/tests/*.sh scripts/tests/fake-adb .ci/run &&
    python3 -m py_compile scripts/*.py
}
beside lint "shellcheck -x scripts/*.sh scripts/lib/*.sh scripts/lava/*.sh scripts/tests/*.sh scripts/tests/fake-adb .ci/run; python3 -m py_compile scripts/*.py" lint

# The exit-contract test (benchmp-cli/tests/contract.rs: every binary, command and option, about
# 2,000 short runs that mostly wait on process start-up) runs beside everything after it;
# every other test runs here first.
stage tests "cargo test --workspace -- --skip every_command_keeps_the_exit_contract" \
  cargo test --workspace --no-fail-fast -- --skip every_command_keeps_the_exit_contract
beside contract "cargo test --workspace --test contract" cargo test --workspace --test contract
# The trace tests need root and a mounted tracefs (set up above); plain `cargo test` lists
# them as ignored. With --workspace, as above, so nothing is built again for another feature
# set.
stage traces "cargo test --workspace --test record --test power -- --ignored" \
  cargo test --workspace --no-fail-fast --test record --test power -- --ignored
# (An absolute path: the test runs in bw_mem's folder.)
release_bw_mem=$(realpath -m "$beside_dir/release/bw_mem")
stage release_kernels "BW_MEM_RELEASE=$release_bw_mem cargo test --workspace --test not_optimised_away" \
  env BW_MEM_RELEASE="$release_bw_mem" cargo test --workspace --test not_optimised_away

await lint
await script_tests
await contract
await aarch64
tests_s=$((SECONDS - builds_s))

# The device test, a stage of its own after everything else (its guest keeps both CPUs busy):
# the emulated SoC made with the aarch64 binaries of builds() above (its other tools built
# there too), booted and tested by lava-run; LAVA's results printed and checked.
# Its folder (about 70 MB: the guest's image, LAVA's log and output) is a temporary one, kept
# and named when the test fails, removed when it passes.
device_test() {
  local out
  out=$(mktemp -d "${TMPDIR:-/tmp}/socbench-device.XXXXXX")
  if scripts/device.sh --bin-dir "$SOCBENCH_DEVICE_BIN" --out "$out/run"; then
    rm -rf "$out"
  else
    echo "test.sh: the device test's folder is kept: $out/run" >&2
    return 1
  fi
}
if [ "$device" = 1 ]; then
  stage device "scripts/device.sh --bin-dir $SOCBENCH_DEVICE_BIN (scripts/test.sh --no-device leaves it out)" \
    device_test
  device_s=$((SECONDS - builds_s - tests_s))
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "test.sh: ${#failed[@]} stage(s) failed; rerun each with:" >&2
  for f in "${failed[@]}"; do echo "  $f" >&2; done
  exit 1
fi
echo "test.sh: every stage passed (${SECONDS} s after set-up: the builds ${builds_s} s, then the tests ${tests_s} s${device_s:+, then the device test ${device_s} s})" >&2
