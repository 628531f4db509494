#!/usr/bin/env bash
# Checks the suite runner: bad options, binary folders, baselines and results folders are
# refused before anything runs (exit 2, one line); a second suite into the same folder is
# refused; a signal stops the running entry and everything it forked, then the suite exits
# 128+n. Then runs the suite once (quick mode) and checks its results folder: a JSON result
# per tool, the PNG plots, and a summary table that lists every tool. Correctness only: no
# figure is judged. SOCBENCH_BIN names a folder of release binaries to use instead of
# building them (default: build, then target/release).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/socbench-suite.XXXXXX")
r=$(mktemp -d "${TMPDIR:-/tmp}/socbench-suite-checks.XXXXXX")
started=()
cleanup() {
  # Whatever a failed check left running (only the processes this test started).
  local p
  for p in "${started[@]}" $(pgrep -f "^$r/bin/" || true); do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$out" "$r"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ -n "${SOCBENCH_BIN:-}" ]; then
  bin=$(cd "$SOCBENCH_BIN" && pwd)
else
  bin=${CARGO_TARGET_DIR:-$top/target}/release
  (cd "$top" && cargo build --release --workspace --quiet) || fail "release build failed"
fi
# The folder and option checks below need no quiet machine (the whole suite's run waits).
nb=(--no-build --bin-dir "$bin" --no-plots --quick --quiet-wait 0)

echo "== refusals before anything runs: exit 2 and one line"
# refused WHAT ARGS...: suite.sh ARGS exits 2 with one line on stderr, from suite.sh or from
# the benchmp suite it calls ("suite.sh: ..." or "benchmp: ...").
refused() {
  local what=$1 rc=0 err
  shift
  err=$("$top/scripts/suite.sh" "$@" 2>&1 >/dev/null) || rc=$?
  [ "$rc" -eq 2 ] || fail "$what: exit $rc, not 2: $err"
  if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] || ! [[ $err == "suite.sh: "* || $err == "benchmp: "* ]]; then
    fail "$what: not one line from suite.sh or benchmp: $err"
  fi
}
mkdir -p "$r/empty" "$r/noexec" "$r/other"
cp "$bin/dhry" "$bin/benchmp" "$r/noexec/" && chmod 644 "$r/noexec/dhry"
echo '{}' > "$r/other/coremark-P1.json"
refused "--ab with an empty folder" "${nb[@]}" --only dhry --ab "$r/empty" --out "$r/o1"
refused "--ab with a binary that is not executable" "${nb[@]}" --only dhry --ab "$r/noexec" --out "$r/o1"
refused "--bin-dir that does not exist" --no-build --bin-dir "$r/nonexistent" --quick --only dhry --out "$r/o1"
refused "--bin-dir with a binary that is not executable" --no-build --bin-dir "$r/noexec" --quick --only dhry --out "$r/o1"
refused "--baseline with an empty folder" "${nb[@]}" --only dhry --baseline "$r/empty" --out "$r/o1"
refused "--baseline with no entry in common" "${nb[@]}" --only dhry --baseline "$r/other" --out "$r/o1"
# The power options reach benchmp suite, which checks them as every tool would.
refused "--power-hz out of range" "${nb[@]}" --only dhry --power-hz 0 --out "$r/o1"
refused "--power-baseline without a value" "${nb[@]}" --only dhry --out "$r/o1" --power-baseline
[ ! -e "$r/o1" ] || fail "a refused run left its results folder: $(ls -A "$r/o1")"
: > "$r/file"
refused "--out naming a file" "${nb[@]}" --only dhry --out "$r/file"
refused "--out under a file" "${nb[@]}" --only dhry --out "$r/file/x"
refused "--out where nothing can be created" "${nb[@]}" --only dhry --out "/proc/socbench-$$/x"
[ ! -s "$r/file" ] || fail "--out naming a file changed the file"
if [ "$(id -u)" -ne 0 ]; then  # root writes into a mode 555 folder anyway
  mkdir -p "$r/ro" && chmod 555 "$r/ro"
  refused "--out in a read-only folder" "${nb[@]}" --only dhry --out "$r/ro"
fi
# An earlier run's results are never overwritten; --force removes what an earlier suite
# recorded in its folder (.socbench-suite.json), and only that; a folder without that record
# is no suite's and is refused, whatever its files are called.
mkdir -p "$r/old"
for f in dhry-P1.json status.tsv compare.txt notes.md; do echo old > "$r/old/$f"; done
refused "--out naming a results folder" "${nb[@]}" --only dhry --out "$r/old"
refused "--force on a folder no suite recorded" "${nb[@]}" --only dhry --out "$r/old" --force
for f in dhry-P1.json status.tsv compare.txt notes.md; do
  [ "$(cat "$r/old/$f")" = old ] || fail "a refused run changed $f of the earlier results"
done
"$top/scripts/suite.sh" "${nb[@]}" --only dhry --out "$r/done" > "$r/first.txt" 2>&1 \
  || fail "suite.sh into a new folder: $(tail -n 3 "$r/first.txt")"
echo mine > "$r/done/notes.md"
echo mine > "$r/done/compare.c"
"$top/scripts/suite.sh" "${nb[@]}" --only dhry --out "$r/done" --force > "$r/force.txt" 2>&1 \
  || fail "suite.sh --force into an earlier suite's folder: $(tail -n 3 "$r/force.txt")"
for f in notes.md compare.c; do
  [ "$(cat "$r/done/$f")" = mine ] || fail "--force removed $f, which no suite wrote"
done
grep -qP '^dhry-P1\tdhry\t0\t' "$r/done/status.tsv" || fail "--force: no new dhry-P1 in status.tsv"

echo "== a second suite into the same folder is refused; a signal stops the running entry"
# Binaries under a path of this test's own, so that every process they start can be found.
mkdir -p "$r/bin"
for t in coremark dto dhry benchmp; do ln -s "$bin/$t" "$r/bin/$t"; done
# start_suite OUT -m|-bg N: a suite running coremark (at least 10 s), then dto, in the
# background (-m: in a process group of its own, as from a terminal; -bg: as a script's
# background job, which inherits SIGINT ignored); sets suite_pid once N coremark processes run
# (2: coremark with its child, which it stops and waits for on a signal before it exits 130).
start_suite() {
  [ "$2" = -m ] && set -m
  "$top/scripts/suite.sh" --no-build --bin-dir "$r/bin" --no-plots --quick --only coremark --only dto \
    --quiet-wait 0 --out "$1" > "$1.log" 2>&1 &
  suite_pid=$!
  set +m
  started+=("$suite_pid")
  for _ in $(seq 600); do
    [ "$(pgrep -fc "^$r/bin/coremark")" -ge "$3" ] && return 0
    kill -0 "$suite_pid" 2>/dev/null || fail "the suite ended before coremark ran: $(cat "$1.log")"
    sleep 0.1
  done
  fail "$3 coremark processes did not start within a minute: $(cat "$1.log")"
}
# stopped SIGNAL TARGET STATUS OUT: sends SIGNAL to TARGET (the suite, or -PGID for its
# group), waits for the suite, and checks its status and that nothing it started is left.
stopped() {
  local rc=0 left
  kill -s "$1" -- "$2"
  for _ in $(seq 600); do kill -0 "$suite_pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$suite_pid" 2>/dev/null && fail "SIG$1: the suite still runs a minute later"
  wait "$suite_pid" || rc=$?
  started=()
  [ "$rc" -eq "$3" ] || fail "SIG$1: the suite exited $rc, not $3: $(tail -n 3 "$4.log")"
  left=$(pgrep -af "^$r/bin/" || true)
  [ -z "$left" ] || fail "SIG$1: processes of the suite are left: $left"
  grep -qx "suite.sh: interrupted by SIG$1" "$4.log" || fail "SIG$1: no line says so: $(tail -n 3 "$4.log")"
}
start_suite "$r/sig" -m 1
rc=0; err=$("$top/scripts/suite.sh" "${nb[@]}" --only dhry --out "$r/sig" --force 2>&1 >/dev/null) || rc=$?
if [ "$rc" -ne 2 ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] || ! grep -qE '^(suite.sh|benchmp): .*another suite' <<< "$err"; then
  fail "a second suite into a folder in use: exit $rc, $err"
fi
if [ ! -s "$r/sig/status.tsv" ] || [ -e "$r/sig/dhry-P1.json" ]; then fail "the second suite touched the first one's folder"; fi
stopped TERM "$suite_pid" 143 "$r/sig"
start_suite "$r/sig2" -m 2
stopped INT "-$suite_pid" 130 "$r/sig2"
start_suite "$r/sig3" -bg 1
stopped INT "$suite_pid" 130 "$r/sig3"
# The running entry is recorded as interrupted (benchmp suite --resume runs it again); the
# next one never started.
for f in "$r/sig2" "$r/sig3"; do
  grep -qP '^coremark-P1\tcoremark\t130\t[^\t]*\tinterrupted$' "$f/status.tsv" \
    || fail "SIGINT: the running entry is not recorded as interrupted: $(cat "$f/status.tsv")"
  if grep -q '^dto-speedup' "$f/status.tsv"; then fail "SIGINT: the suite went on: $(cat "$f/status.tsv")"; fi
done

echo "== the whole quick suite"
# A short wait for a quiet machine, and each entry measured once (--no-rerun): the tests beside
# this one keep the machine busy, so nearly every entry would be noisy and run twice. (Running
# noisy entries again is checked with stand-in tools in benchmp-cli/tests/suite.rs.)
rc=0; summary=$("$top/scripts/suite.sh" --quick --quiet-wait 1 --no-rerun --out "$out" --no-build --bin-dir "$bin") || rc=$?
# An entry that measured on a busy host is noisy (status.tsv says so), not failed (lat_mem_rd
# --loaded too: a row whose load stayed starved is kept as noisy). A parallel entry whose
# children ran apart in every attempt is refused by its tool: on a busy host that is the
# documented outcome. Every other entry must measure.
bad=""
while IFS=$'\t' read -r label _ code _ status; do
  [ "$code" = 0 ] && continue
  if [ "$status" = noisy ]; then
    echo "   $label measured on a busy host (noisy, exit $code)"
    continue
  fi
  if [ "$code" = 1 ] && grep -q 'the children did not run together' "$out/$label.err" 2>/dev/null; then
    echo "   $label: its children ran apart on a busy host (refused, exit 1)"
    continue
  fi
  bad+=" $label"
done < <(tail -n +2 "$out/status.tsv")
if [ "$rc" -gt 1 ] || [ -n "$bad" ]; then
  echo "$summary" >&2
  for f in "$out"/*.err; do
    [ -s "$f" ] && { echo "--- $(basename "$f")" >&2; tail -n 20 "$f" >&2; }
  done
  fail "the suite reported failures: $(cat "$out/status.tsv")"
fi
echo "$summary" | tail -n 20

# shellcheck source=scripts/lib/tools.sh
. "$top/scripts/lib/tools.sh"
for tool in $SUITE_TOOLS; do
  found=0
  for f in "$out"/*.json; do
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if r.get("tool") == sys.argv[2] else 1)' "$f" "$tool" && found=1 && break
  done
  [ "$found" = 1 ] || fail "no JSON result from $tool"
  grep -qE "^[^ ]+ +$tool " <<< "$summary" || fail "the summary table does not list $tool"
done
ls "$out"/plots/*.png >/dev/null 2>&1 || fail "no plots in the results' plots/ folder"
[ -f "$out/plots/lat_mem_rd-t.png" ] || fail "no latency curve plot"
[ -f "$out/plots/bw_mem.png" ] || fail "no bandwidth plot"
if [ "$(nproc)" -gt 1 ]; then
  [ -f "$out/plots/lat_mem_rd-c2c.png" ] || fail "no core-to-core heat map"
  if grep -qP '^lat_mem_rd-loaded\tlat_mem_rd\t0\t' "$out/status.tsv"; then
    [ -f "$out/plots/lat_mem_rd-loaded.png" ] || fail "no loaded-latency plot"
  fi
fi
ls "$out"/dto-speedup/*.png >/dev/null 2>&1 || fail "no dto distribution plots"
# The plots are the suite's own files, recorded by benchmp suite itself (no script writes the
# record): --force would remove them with the rest.
python3 - "$out/.socbench-suite.json" <<'PY' || fail "the suite's record does not hold plots/"
import json, sys
made = json.load(open(sys.argv[1]))["made"]
sys.exit(0 if "plots/" in made else 1)
PY

# The comparison machinery on a run against itself (whether two separate runs agree is a
# measurement of this machine, shown by scripts/bench_ab.sh for paired builds, not a test): every
# figure of every entry passes, and the summary gains its verdict column.
"$bin/benchmp" compare "$out" "$out" --json="$out/compare.json" > "$out/compare.txt" \
  || fail "benchmp compare of a run with itself: exit $? ($(tail -n 1 "$out/compare.txt"))"
grep -q " 0 FAIL" "$out/compare.txt" || fail "a run compared with itself has failures: $(tail -n 1 "$out/compare.txt")"
again=$("$bin/benchmp" summary "$out")
grep -qE "^entry +tool +figure +unit +s +verdict" <<< "$again" || fail "no verdict column after a comparison"
grep -qE "^bw_mem-rd-P1 .* PASS" <<< "$again" || fail "bw_mem-rd-P1 is not PASS against itself"

# --ab: each entry paired with a second build's binaries by benchmp ab (both sides are this
# build here, so only the machinery is checked, not the verdict: the method's power on this
# host is bench_ab.sh's measurement): dhry. The results folder has a space in its name: every
# {json} and {csv} must stay one argument, also inside ab's commands. (dto's {dir}, a folder
# per side, is benchmp's unit test each_ab_side_gets_a_folder_of_its_own: dto's ab takes a
# minute here.)
ab="$out/a b"
rc=0
"$top/scripts/suite.sh" "${nb[@]}" --only dhry --ab "$bin" --ab-time 0.5 --ab-processes 2 --out "$ab" > "$out/ab.txt" 2>&1 || rc=$?
[ "$rc" -le 1 ] || fail "suite.sh --ab: exit $rc ($(tail -n 3 "$out/ab.txt"))"
[ -s "$ab/dhry-P1.json" ] || fail "suite.sh --ab left no $ab/dhry-P1.json"
grep -qP "^dhry-P1\tdhry\t0\t" "$ab/status.tsv" || fail "suite.sh --ab: dhry-P1 did not succeed"
python3 - "$ab/ab/dhry-P1.json" "$ab/compare.json" <<'PY' || fail "suite.sh --ab: no paired verdict for dhry-P1 ($(tail -n 3 "$out/ab.txt"))"
import json, sys
r = json.load(open(sys.argv[1]))
f = r["rows"]
assert r["paired"] and len(f) == 1 and f[0]["paired"]["judgement"]["pairs"] >= 1 and f[0]["verdict"] in ("PASS", "FAIL", "IMPROVED", "NOISY"), f
# Both process pairs, unless the budget (--ab-time) ran out first on a busy machine, as ab says.
assert len(f[0]["paired"]["processes"]) == 2 or r["ab"]["rule"].get("budget_spent_after") == 1, (f, r["ab"]["rule"])
c = json.load(open(sys.argv[2]))
rows = [x for x in c["rows"] if x["entry"] == "dhry-P1"]
sys.exit(0 if c["paired"] and rows and all(x["base"] and x["current"] and x["paired"]["differences"] for x in rows) else 1)
PY
grep -q "^== dhry-P1" "$ab/compare.txt" || fail "suite.sh --ab: compare.txt has no dhry-P1 table"
grep -qE "^dhrystone .* (PASS|FAIL|IMPROVED|NOISY)" "$ab/compare.txt" || fail "suite.sh --ab: compare.txt has no dhrystone row"
grep -qE "^dhry-P1 .* (PASS|FAIL|IMPROVED|NOISY)" <<< "$("$bin/benchmp" summary "$ab")" || fail "suite.sh --ab: the summary has no verdict for dhry-P1"
# The gathered comparison is one benchmp compare reads back as a comparison (and passes over).
"$bin/benchmp" compare "$ab" "$ab" > /dev/null || fail "benchmp compare of a folder holding a paired compare.json: exit $?"
rc=0
"$top/scripts/suite.sh" "${nb[@]}" --ab "$bin" --baseline "$out" > "$out/both.txt" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "suite.sh with both --ab and --baseline: exit $rc, not 2"
echo "PASS test_suite.sh"
