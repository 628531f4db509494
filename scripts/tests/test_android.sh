#!/usr/bin/env bash
# Tests scripts/android.sh with a stand-in adb (scripts/tests/fake-adb): an adb that does not
# answer (one line naming the call, no results folder), a signal during a run (the adb call is
# stopped), bad input refused before adb is called; then end to end: cross-build, push, run
# under qemu-aarch64-static, pull, valid JSON back, and serials and arguments with spaces,
# quotes and ';' passing through intact and running nothing else. SOCBENCH_DEVICE_BIN names a
# folder of binaries the stand-in device can run (this machine's, or aarch64 ones) to use
# instead of the cross-build; without it and without qemu-aarch64-static the end-to-end part
# is skipped.
set -euo pipefail
# A run that hangs fails here in ten minutes, not at the limit of the CI job.
export ADB_RUN_TIMEOUT=${ADB_RUN_TIMEOUT:-600}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/socbench android.XXXXXX")  # a space in every path
cleanup() {
  # A stand-in adb call a failed check left hanging (only the one this test started).
  [ ! -s "$tmp/hang.pid" ] || kill -KILL "$(cat "$tmp/hang.pid")" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$tmp/bin" "$tmp/dev ice"
# shellcheck disable=SC2016  # the fake getprop expands $1 itself
printf '#!/bin/sh\n[ "$1" = ro.product.model ] && echo "Fake Phone 8"\n' > "$tmp/bin/getprop"
chmod +x "$tmp/bin/getprop"
good="emulator-5554"
evil="bad serial;touch '$tmp/INJ1' \$(touch $tmp/INJ3)"
printf '%s\n%s\n' "$good" "$evil" > "$tmp/devices"
export ADB="$here/fake-adb" FAKE_ADB_LOG="$tmp/adb.log" FAKE_ADB_DEVICES="$tmp/devices" \
  FAKE_ADB_ARGV_LOG="$tmp/argv.log" FAKE_ADB_BIN="$tmp/bin"
: > "$tmp/adb.log"; : > "$tmp/argv.log"

echo "== an adb that does not answer, or a device it does not know: one line, no results folder"
# Stand-in binaries: these checks stop before anything runs on the device.
mkdir -p "$tmp/stub"
printf '#!/bin/sh\nexit 0\n' > "$tmp/stub/benchmp"
chmod +x "$tmp/stub/benchmp"
# adb_fails WHAT HANG STATUS LINE ARGS...: android.sh with a 1 s ADB_TIMEOUT, the stand-in adb
# hanging at the calls HANG matches, exits STATUS with the one line LINE and no results folder.
adb_fails() {
  local what=$1 hang=$2 status=$3 line=$4 rc=0 err
  shift 4
  # The outer limit only keeps a hanging android.sh from hanging the test.
  err=$(ADB_TIMEOUT=1 FAKE_ADB_HANG=$hang timeout -k 5 120 "$top/scripts/android.sh" --no-build \
    --bin-dir "$tmp/stub" --tools benchmp --results "$tmp/r-hang" "$@" benchmp probe 2>&1 >/dev/null) || rc=$?
  [ "$rc" -eq "$status" ] || fail "$what: expected exit status $status, got $rc: $err"
  [ "$err" = "$line" ] || fail "$what: expected the one line '$line', got: $err"
  [ ! -e "$tmp/r-hang" ] || fail "$what: a results folder was left: $(ls -A "$tmp/r-hang")"
}
adb_fails "'adb devices' hangs" devices 2 "android.sh: 'adb devices' did not answer within 1 s (ADB_TIMEOUT)"
adb_fails "'adb shell true' hangs" "shell true" 1 \
  "android.sh: device $good: 'adb -s $good shell true' did not answer within 1 s (ADB_TIMEOUT); skipped" -s "$good"
adb_fails "an unknown serial" "" 1 \
  "android.sh: device nosuch: 'adb -s nosuch shell true' failed (exit 1: error: device 'nosuch' not found); skipped" -s nosuch

echo "== a signal during a run stops its adb call, then exit 128+n"
ADB_TIMEOUT=30 FAKE_ADB_HANG='shell *rc=*' FAKE_ADB_HANG_PID="$tmp/hang.pid" "$top/scripts/android.sh" --no-build \
  --bin-dir "$tmp/stub" --tools benchmp --results "$tmp/r-sig" --device-dir "$tmp/dev ice/sig" -s "$good" \
  benchmp probe > "$tmp/sig.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -s "$tmp/hang.pid" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
[ -s "$tmp/hang.pid" ] || fail "the run never reached the stand-in device: $(cat "$tmp/sig.log")"
kill -TERM "$pid"
for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
rc=0; wait "$pid" || rc=$?
[ "$rc" -eq 143 ] || fail "SIGTERM: expected exit status 143, got $rc: $(cat "$tmp/sig.log")"
if kill -0 "$(cat "$tmp/hang.pid")" 2>/dev/null; then fail "SIGTERM: the adb call of the run still runs"; fi
grep -qx 'android.sh: interrupted by SIGTERM' "$tmp/sig.log" || fail "SIGTERM: no line says so: $(cat "$tmp/sig.log")"

echo "== bad input is refused before adb is called"
: > "$tmp/adb.log"
# refused WHAT LINE ARGS...: android.sh ARGS exits 2 with the one line LINE, calling no adb.
refused() {
  local what=$1 line=$2 rc=0 err
  shift 2
  err=$("$top/scripts/android.sh" --no-build --bin-dir "$tmp/stub" --tools benchmp -s "$good" "$@" 2>&1 >/dev/null) || rc=$?
  [ "$rc" -eq 2 ] || fail "$what: expected exit status 2, got $rc: $err"
  [ "$err" = "$line" ] || fail "$what: expected the one line '$line', got: $err"
  [ ! -s "$tmp/adb.log" ] || fail "$what: adb was called: $(tr '\0' ' ' < "$tmp/adb.log")"
}
refused "a results folder under a file" "android.sh: --results $tmp/stub/benchmp/r cannot be created ($tmp/stub/benchmp is not a folder)" \
  --results "$tmp/stub/benchmp/r" benchmp probe
refused "a results folder where nothing can be written" "android.sh: --results /proc/socbench-$$ cannot be written (/proc)" \
  --results "/proc/socbench-$$" benchmp probe
refused "a suite option that is not --quick or --full" "android.sh: suite takes --quick or --full, --only TOOL, --quiet-wait S, --no-rerun and the power options (--power, --power-cmd, --power-hz, --power-baseline)" suite --fast
refused "a power option without its value" "android.sh: suite: --power-hz needs a value" suite --quick --power-hz
refused "an unknown tool in --tools" "android.sh: --tools: unknown tool 'nosuch' (tools: $(. "$top/scripts/lib/tools.sh"; echo "$ALL_BINARIES"))" \
  --tools benchmp,nosuch benchmp probe
[ ! -e "$tmp/results" ] || fail "a refused run made a results folder"

echo "== the suite's power options reach benchmp suite on the device, each one word"
# A stand-in benchmp that makes the folder a suite would and records nothing else.
mkdir -p "$tmp/stub-suite"
# shellcheck disable=SC2016  # the stand-in expands its own variables
printf '#!/bin/sh\nprev=""\nfor a in "$@"; do [ "$prev" = --out ] && mkdir -p "$a" && printf "label\\ttool\\texit\\tseconds\\n" > "$a/status.tsv"; prev=$a; done\nexit 0\n' \
  > "$tmp/stub-suite/benchmp"
chmod +x "$tmp/stub-suite/benchmp"
: > "$tmp/argv.log"
"$top/scripts/android.sh" --no-build --bin-dir "$tmp/stub-suite" --tools benchmp --device-dir "$tmp/dev ice/power" \
  --results "$tmp/r-power" -s "$good" suite --quick --power battery:battery --power-cmd "-m 'x y'" \
  --power-hz 50 --power-baseline 2 > "$tmp/power.log" 2>&1 || fail "android.sh suite with power options: $(tail -n 5 "$tmp/power.log")"
# The device shell's command, split as that shell splits it.
python3 - "$tmp/adb.log" <<'PY' || fail "the power options did not reach benchmp suite intact: $(tr '\0' '|' < "$tmp/adb.log" | grep suite)"
import shlex, sys
calls = [line.split("\0") for line in open(sys.argv[1]).read().split("\n") if line]
want = ["--power=battery:battery", "--power-cmd=-m 'x y'", "--power-hz=50", "--power-baseline=2"]
shells = [shlex.split(c[3]) for c in calls if c[2:3] == ["shell"] and "'suite'" in c[3]]
sys.exit(0 if any(w[w.index("./benchmp") + 1] == "suite" and all(x in w for x in want) for w in shells) else 1)
PY

if [ -n "${SOCBENCH_DEVICE_BIN:-}" ]; then
  device_bin=(--no-build --bin-dir "$(cd "$SOCBENCH_DEVICE_BIN" && pwd)")
  device_bin2=("${device_bin[@]}")
elif command -v qemu-aarch64-static >/dev/null; then
  device_bin=() device_bin2=(--no-build)
else
  echo "SKIPPED the end-to-end part of test_android.sh: qemu-aarch64-static is not installed (apt-get install qemu-user-static)"
  echo "PASS test_android.sh"
  exit 0
fi

echo "== cross-build and run on one device (serial with spaces, quotes and ;)"
cal="$tmp/cal it's;touch $tmp/INJ2.json"
"$top/scripts/android.sh" "${device_bin[@]}" --tools benchmp --device-dir "$tmp/dev ice/socbench" \
  --results "$tmp/results" --sched "CUSTOM 0" -s "$evil" \
  benchmp probe -N 2 --enough 2000 --calibration "$cal"

for f in INJ1 INJ2.json INJ3; do
  [ ! -e "$tmp/$f" ] || fail "an argument ran as a command ($f exists)"
done
# Contains LOG (NUL-separated argv per line) an invocation whose argv holds WORDS in a row?
has_argv() {
  python3 - "$@" <<'PY'
import sys
log, words = sys.argv[1], [w.encode() for w in sys.argv[2:]]
for line in open(log, "rb").read().split(b"\n"):
    argv = line.split(b"\0")
    for i in range(len(argv) - len(words) + 1):
        if argv[i:i + len(words)] == words:
            sys.exit(0)
sys.exit(1)
PY
}
has_argv "$tmp/adb.log" -s "$evil" || fail "the serial did not reach adb intact"
has_argv "$tmp/argv.log" probe -N 2 --enough 2000 --calibration "$cal" \
  || fail "the tool's arguments changed on the way: $(tr '\0' '|' < "$tmp/argv.log")"
dir=$(find "$tmp/results" -maxdepth 1 -type d -name 'android-bad_serial*' | head -n 1)
[ -n "$dir" ] || fail "no results folder for the device"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["tool"] == "benchmp-probe"; assert r["placement"]["policy"] == "CUSTOM 0", r["placement"]; assert len(r["measurements"][0]["children"]) == 1' "$dir/benchmp.json" \
  || fail "benchmp.json is not the expected report"
awk -F'\t' 'NR > 1 && $3 != 0 { exit 1 }' "$dir/status.tsv" || fail "the run reported a failure: $(cat "$dir/status.tsv")"
grep -q '^model: Fake Phone 8' "$dir/device.txt" || fail "device model not reported"
grep -q '^allowed_cpus: ' "$dir/device.txt" || fail "allowed CPUs not reported"

echo "== every connected device in turn, no rebuild; a CPU outside the allowed set warns"
: > "$tmp/argv.log"
out=$("$top/scripts/android.sh" "${device_bin2[@]}" --tools benchmp --device-dir "$tmp/dev ice/socbench" \
  --results "$tmp/results2" --cpus 0,4095 benchmp probe -N 1 --enough 2000 --calibration off 2>&1) && \
  fail "a CPU outside the device's set must make the run fail"
grep -q 'CPU 4095 is not in the shell' <<< "$out" || fail "no warning about CPU 4095: $out"
count=$(find "$tmp/results2" -maxdepth 1 -type d -name 'android-*' | wc -l)
[ "$count" -eq 2 ] || fail "expected one results folder per device, got $count"
[ "$(grep -ac 'probe' "$tmp/argv.log")" -eq 2 ] || fail "expected one run per device"

echo "== the quick suite on the device: benchmp suite runs the plan there, one adb call"
# The entries of three tools (every tool's under qemu takes a minute; that layout is the same).
only=(--only bw_mem --only dhry --only dto)
rc=0
"$top/scripts/android.sh" "${device_bin[@]}" --tools benchmp,bw_mem,dhry,dto --device-dir "$tmp/dev ice/socbench" \
  --results "$tmp/results4" -s "$good" suite --quick "${only[@]}" --quiet-wait 1 --no-rerun > "$tmp/suite.log" 2>&1 || rc=$?
dir=$(find "$tmp/results4" -maxdepth 1 -type d -name 'android-*' | head -n 1)
[ -n "$dir" ] || fail "the suite left no results folder: $(tail -n 20 "$tmp/suite.log")"
# The layout benchmp suite writes here: every entry of the plan (benchmp suite --list on this
# machine's CPUs) with its files, status.tsv and summary.json; each tool's JSON a report.
host_benchmp=${SOCBENCH_BIN:+$SOCBENCH_BIN/benchmp}
[ -n "$host_benchmp" ] || host_benchmp="${CARGO_TARGET_DIR:-$top/target}/release/benchmp"
[ -x "$host_benchmp" ] || (cd "$top" && cargo build --release --quiet -p benchmp-cli) || fail "cannot build benchmp for this machine"
"$host_benchmp" suite --quick --list "${only[@]}" > "$tmp/plan.txt" || fail "benchmp suite --list failed"
python3 - "$tmp/plan.txt" "$dir" "$tmp/suite.log" <<'PY' || fail "the device's results are not the plan's layout"
import csv, json, pathlib, sys
plan = [l.split("|") for l in open(sys.argv[1]).read().splitlines() if l]
out, log = pathlib.Path(sys.argv[2]), open(sys.argv[3]).read()
def need(ok, what):
    if not ok:
        sys.exit(f"FAIL: {what}\n--- log:\n{log[-3000:]}")
rows = {r["label"]: r for r in csv.DictReader(open(out / "status.tsv"), delimiter="\t")}
need([p[0] for p in plan] == list(rows), f"status.tsv lists {list(rows)}, the plan {[p[0] for p in plan]}")
summary = json.load(open(out / "summary.json"))
need([e["entry"] for e in summary["entries"]] == list(rows), "summary.json does not list every entry")
for label, env, tool, args in plan:
    ok = rows[label]["exit"] == "0"
    # A failed entry (a load child starved under qemu) leaves its text and errors only.
    for ext in ["txt", "err"] + ["json"] * ("{json}" in args and ok) + ["csv"] * ("{csv}" in args and ok):
        f = out / f"{label}.{ext}"
        need(f.is_file(), f"no {f.name}")
    if "{dir}" in args + env:
        need((out / label).is_dir(), f"no folder {label}/")
    if ok and "{json}" in args:
        need(json.load(open(out / f"{label}.json")).get("tool", "").startswith(tool), f"{label}.json is not {tool}'s report")
print(f"   {len(plan)} entries, {sum(r['exit'] == '0' for r in rows.values())} succeeded on the device")
PY
[ "$rc" -le 1 ] || fail "android.sh suite: exit $rc: $(tail -n 20 "$tmp/suite.log")"
grep -q "entries over" "$tmp/suite.log" || fail "no summary from the device: $(tail -n 5 "$tmp/suite.log")"

echo "== bad input is refused before anything runs"
if "$top/scripts/android.sh" --no-build --cpus 'x;y' benchmp probe 2>/dev/null; then fail "--cpus 'x;y' accepted"; fi
if "$top/scripts/android.sh" --no-build nosuchtool 2>/dev/null; then fail "unknown tool accepted"; fi

echo "== a missing adb, cargo or rustup stops the script before anything is built or pushed"
# A PATH with the commands the script itself uses, stand-ins for cargo and rustup that record
# being called, and no adb.
mkdir -p "$tmp/path"
for c in bash env dirname cat sed awk tr seq date mkdir grep head tail rm id od timeout mktemp sleep; do
  ln -s "$(command -v "$c")" "$tmp/path/$c"
done
for c in cargo rustup; do
  # shellcheck disable=SC2016  # the stand-in expands $0 and $* itself
  printf '#!/bin/sh\necho "$0 $*" >> "%s/called"\n' "$tmp" > "$tmp/path/$c"
  chmod +x "$tmp/path/$c"
done
# Runs android.sh with that PATH; prints stderr, returns its exit status.
run_bare() { { env -u ADB PATH="$tmp/path" "$top/scripts/android.sh" --results "$tmp/results3" "$@" >/dev/null; } 2>&1; }
rc=0; err=$(run_bare benchmp probe) || rc=$?
[ "$rc" -eq 2 ] || fail "no adb: expected exit status 2, got $rc ($err)"
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "no adb: expected one line, got: $err"
grep -q '^android.sh: adb not found on PATH' <<< "$err" || fail "no adb: the line does not name adb: $err"
[ ! -e "$tmp/called" ] || fail "no adb: cargo or rustup ran first: $(cat "$tmp/called")"
[ ! -e "$tmp/results3" ] || fail "no adb: a results folder was created"
ln -s "$here/fake-adb" "$tmp/path/adb"
rm "$tmp/path/cargo"
rc=0; err=$(run_bare benchmp probe) || rc=$?
if [ "$rc" -ne 2 ] || ! grep -q '^android.sh: cargo not found on PATH' <<< "$err"; then
  fail "no cargo: expected one line naming cargo and status 2, got $rc: $err"
fi
[ ! -e "$tmp/called" ] || fail "no cargo: rustup ran: $(cat "$tmp/called")"

echo "PASS test_android.sh"
