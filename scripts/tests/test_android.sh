#!/usr/bin/env bash
# Tests scripts/android.sh end to end with a stand-in adb (scripts/tests/fake-adb): cross-build,
# push, run under qemu-aarch64-static, pull, valid JSON back; and that serials and arguments
# with spaces, quotes and ';' pass through intact and run nothing else.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

if ! command -v qemu-aarch64-static >/dev/null; then
  echo "SKIPPED test_android.sh: qemu-aarch64-static is not installed (apt-get install qemu-user-static)"
  exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/socbench android.XXXXXX")  # a space in every path
trap 'rm -rf "$tmp"' EXIT
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

echo "== cross-build and run on one device (serial with spaces, quotes and ;)"
cal="$tmp/cal it's;touch $tmp/INJ2.json"
"$top/scripts/android.sh" --tools benchmp --device-dir "$tmp/dev ice/socbench" \
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
out=$("$top/scripts/android.sh" --no-build --tools benchmp --device-dir "$tmp/dev ice/socbench" \
  --results "$tmp/results2" --cpus 0,4095 benchmp probe -N 1 --enough 2000 --calibration off 2>&1) && \
  fail "a CPU outside the device's set must make the run fail"
grep -q 'CPU 4095 is not in the shell' <<< "$out" || fail "no warning about CPU 4095: $out"
count=$(find "$tmp/results2" -maxdepth 1 -type d -name 'android-*' | wc -l)
[ "$count" -eq 2 ] || fail "expected one results folder per device, got $count"
[ "$(grep -ac 'probe' "$tmp/argv.log")" -eq 2 ] || fail "expected one run per device"

echo "== bad input is refused before anything runs"
if "$top/scripts/android.sh" --no-build --cpus 'x;y' benchmp probe 2>/dev/null; then fail "--cpus 'x;y' accepted"; fi
if "$top/scripts/android.sh" --no-build nosuchtool 2>/dev/null; then fail "unknown tool accepted"; fi

echo "== a missing adb, cargo or rustup stops the script before anything is built or pushed"
# A PATH with the commands the script itself uses, stand-ins for cargo and rustup that record
# being called, and no adb.
mkdir -p "$tmp/path"
for c in bash env dirname cat sed awk tr seq date mkdir grep head tail rm id od; do
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
