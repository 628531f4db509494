#!/usr/bin/env bash
# Runs the suite once (quick mode) and checks its results folder: a JSON result per tool, the
# PNG plots, and a summary table that lists every tool. Correctness only: no figure is judged.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/socbench-suite.XXXXXX")
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! summary=$("$top/scripts/suite.sh" --quick --out "$out"); then
  echo "$summary" >&2
  for f in "$out"/*.err; do
    [ -s "$f" ] && { echo "--- $(basename "$f")" >&2; tail -n 20 "$f" >&2; }
  done
  fail "the suite reported failures: $(cat "$out/status.tsv")"
fi
echo "$summary" | tail -n 20

# shellcheck source=scripts/lib/plan.sh
. "$top/scripts/lib/plan.sh"
for tool in $SUITE_TOOLS; do
  found=0
  for f in "$out"/*.json; do
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if r.get("tool") == sys.argv[2] else 1)' "$f" "$tool" && found=1 && break
  done
  [ "$found" = 1 ] || fail "no JSON result from $tool"
  grep -qE "^[^ ]+ +$tool " <<< "$summary" || fail "the summary table does not list $tool"
done
ls "$out"/*.png >/dev/null 2>&1 || fail "no plots next to the results"
[ -f "$out/lat_mem_rd-t.png" ] || fail "no latency curve plot"
[ -f "$out/bw_mem.png" ] || fail "no bandwidth plot"
if [ "$(nproc)" -gt 1 ]; then
  [ -f "$out/lat_mem_rd-c2c.png" ] || fail "no core-to-core heat map"
  [ -f "$out/lat_mem_rd-loaded.png" ] || fail "no loaded-latency plot"
fi
ls "$out"/dto-speedup/*.png >/dev/null 2>&1 || fail "no dto distribution plots"

# The comparison machinery on a run against itself (whether two separate runs agree is a
# measurement of this machine, shown by scripts/bench_compare.sh, not a test): every
# figure of every entry passes, and the summary gains its verdict column.
bin=${CARGO_TARGET_DIR:-$top/target}/release
"$bin/benchmp" compare "$out" "$out" --json="$out/compare.json" > "$out/compare.txt" \
  || fail "benchmp compare of a run with itself: exit $? ($(tail -n 1 "$out/compare.txt"))"
grep -q " 0 FAIL" "$out/compare.txt" || fail "a run compared with itself has failures: $(tail -n 1 "$out/compare.txt")"
again=$(python3 "$top/scripts/summary.py" "$out")
grep -qE "^entry +tool +figure +unit +s +verdict" <<< "$again" || fail "no verdict column after a comparison"
grep -qE "^bw_mem-rd-P1 .* PASS" <<< "$again" || fail "bw_mem-rd-P1 is not PASS against itself"

# --ab: each entry with a second build's binaries too, into OUT/base, then compared. Both
# sides are this build here, so only the machinery is checked, not the verdict (A/A drift on
# a shared host is bench_compare.sh's measurement): dhry and dto, run from both folders. The
# results folder has a space in its name: every {json}, {csv} and {dir} must stay one argument.
ab="$out/a b"
rc=0
"$top/scripts/suite.sh" --quick --no-build --no-plots --only dhry --only dto --ab "$bin" --out "$ab" > "$out/ab.txt" 2>&1 || rc=$?
[ "$rc" -le 1 ] || fail "suite.sh --ab: exit $rc ($(tail -n 3 "$out/ab.txt"))"
for side in "$ab" "$ab/base"; do
  [ -s "$side/dhry-P1.json" ] || fail "suite.sh --ab left no $side/dhry-P1.json"
  grep -qP "^dhry-P1\tdhry\t0\t" "$side/status.tsv" || fail "suite.sh --ab: dhry-P1 did not succeed in $side"
  [ -s "$side/dto-speedup/distributions.csv" ] || fail "suite.sh --ab left no $side/dto-speedup/distributions.csv"
done
python3 - "$ab/compare.json" <<'PY' || fail "suite.sh --ab: no verdict for dhry-P1 in compare.json"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["entry"] == "dhry-P1"]
sys.exit(0 if rows and all(r["base"] and r["current"] and r["verdict"] != "MISSING" for r in rows) else 1)
PY
grep -qE "^dhry-P1 .* (PASS|FAIL|IMPROVED|NOISY)" "$ab/compare.txt" || fail "suite.sh --ab: compare.txt has no dhry-P1 row"
rc=0
"$top/scripts/suite.sh" --no-build --ab "$bin" --baseline "$out" > "$out/both.txt" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "suite.sh with both --ab and --baseline: exit $rc, not 2"
echo "PASS test_suite.sh"
