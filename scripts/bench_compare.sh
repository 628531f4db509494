#!/usr/bin/env bash
# Power of `benchmp compare` on this machine: its false alarms between two runs of one build,
# and how often it catches a real slowdown. Every pair is run interleaved (`suite.sh --ab`):
# each suite entry runs with the baseline's binaries and the current ones back to back, in
# alternating order, so host drift between runs minutes apart falls on both sides alike.
#
#   A/A   RUNS quick suite runs, baseline and current the same build: a pair with any FAIL
#         is a false alarm. Goal: at most 1 in 20.
#   slow  RUNS pairs of the slowed tool's entries only (the verdict asked for is that tool's),
#         the current side slowed by a competing busy process on its CPU for part of its run
#         (coremark-P1 by default: a busy loop shares its CPU for SLOW_SECONDS of its ~12 s
#         timed run, which starts after ~4.5 s of sizing the count here; sharing the CPU for
#         2.5 s costs it about 1.2 s, 10 %): that entry's figure must be a FAIL. Goal: at
#         least 19 in 20.
# Then, per entry, the largest change any A/A pair showed: what a change must exceed on this
# host to be told from its drift. Every suite run holds the shared CPU lock.
#
# Environment:
#   COMPARE_RUNS       pairs of each kind (default 20)
#   COMPARE_SLOW       entry to slow down (default coremark-P1)
#   SLOW_SECONDS       seconds the competing loop runs (default 2.5)
#   SLOW_AFTER         seconds into the entry it starts (default 6, inside the timed run)
#   COMPARE_KEEP       keep every run's results and comparison in this folder (default: a
#                      temporary folder, removed at the end)
#   SOCBENCH_LOCK      lock file (default /tmp/socbench-cpu.lock)
#
# Exit status: 0 goal met, 1 goal missed or a run failed, 2 bad settings, 3 missing tools.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib/bench.sh
. "$here/lib/bench.sh"
cd "$here/.."

die() { echo "bench_compare: $1" >&2; exit "${2:-1}"; }
for tool in cargo python3 taskset timeout; do
  command -v "$tool" >/dev/null || die "$tool is required" 3
done
runs=${COMPARE_RUNS:-20}
slow_entry=${COMPARE_SLOW:-coremark-P1}
slow_s=${SLOW_SECONDS:-2.5}
slow_after=${SLOW_AFTER:-6}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "COMPARE_RUNS must be a whole number of at least 1" 2
num='^[0-9]+([.][0-9]+)?$'
[[ $slow_s =~ $num && $slow_after =~ $num ]] || die "SLOW_SECONDS and SLOW_AFTER are seconds (for example 2.5)" 2
slow_tool=${slow_entry%%-*}

echo "building the release binaries (cargo build --release --workspace)" >&2
locked cargo build --quiet --release --workspace || die "build failed"
bin=${CARGO_TARGET_DIR:-$PWD/target}/release
if [ -n "${COMPARE_KEEP:-}" ]; then
  mkdir -p "$COMPARE_KEEP" || die "cannot make COMPARE_KEEP=$COMPARE_KEEP" 2
  work=$(cd "$COMPARE_KEEP" && pwd)
  rm -rf "$work/slowbin"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/bench_compare.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi

# The slowed tool runs through a stand-in that starts a busy loop on the CPU its first child
# is pinned to (the first allowed CPU: the default placement) partway into the run.
mkdir "$work/slowbin"
for t in bw_mem lat_mem_rd dhry coremark dto benchmp; do ln -s "$bin/$t" "$work/slowbin/$t"; done
rm "$work/slowbin/$slow_tool"
cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
cat >"$work/slowbin/$slow_tool" <<EOF
#!/bin/sh
( sleep $slow_after; exec timeout $slow_s taskset -c $cpu sh -c 'while :; do :; done' ) &
exec "$bin/$slow_tool" "\$@"
EOF
chmod +x "$work/slowbin/$slow_tool"

suite() { # suite OUT CURRENT_BIN_DIR [suite.sh options]: baseline is always the clean build
  local dest=$1 cur=$2
  shift 2
  rm -rf "$dest"
  locked scripts/suite.sh --quick --no-build --no-plots --bin-dir "$cur" --ab "$bin" --out "$dest" "$@" >/dev/null 2>&1 || true
}
verdicts() { # verdicts DIR -> "fail improved noisy missing pass", the slowed entry's verdict and change
  python3 - "$1/compare.json" "$slow_entry" <<'PY'
import json, sys
try:
    c = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("- - - - - - -")
    sys.exit()
k = c["counts"]
slowed = [r for r in c["rows"] if r["entry"] == sys.argv[2]]
verdict = ",".join(r["verdict"] for r in slowed) or "-"
change = " ".join("%+.1f%%" % r["change_pct"] for r in slowed if r["change_pct"] is not None) or "-"
print(k["fail"], k["improved"], k["noisy"], k["missing"], k["pass"], verdict, change)
PY
}

echo "== A/A: $runs interleaved quick suite runs of one build"
false_alarms=0 failed_runs=0
for i in $(seq 1 "$runs"); do
  suite "$work/aa$i" "$bin"
  read -r fail improved noisy missing pass _ < <(verdicts "$work/aa$i")
  printf 'pair %2d: %s FAIL, %s IMPROVED, %s NOISY, %s MISSING, %s PASS\n' "$i" "$fail" "$improved" "$noisy" "$missing" "$pass"
  if [ "$fail" = - ]; then failed_runs=$((failed_runs + 1)); elif [ "$fail" -gt 0 ]; then false_alarms=$((false_alarms + 1)); fi
done

echo "== slowed: $runs interleaved pairs of $slow_tool, $slow_entry with a busy loop on CPU $cpu for $slow_s s from $slow_after s"
detected=0
for i in $(seq 1 "$runs"); do
  suite "$work/slow$i" "$work/slowbin" --only "$slow_tool"
  read -r fail _ _ _ _ slowed change < <(verdicts "$work/slow$i")
  printf 'pair %2d: %s on %s, change %s (%s FAIL in all)\n' "$i" "$slowed" "$slow_entry" "$change" "$fail"
  [ "$fail" = - ] && failed_runs=$((failed_runs + 1))
  case ",$slowed," in *,FAIL,*) detected=$((detected + 1)) ;; esac
done

echo
echo "== A/A drift per entry: the largest |change| of its figures in each pair, median and max over pairs"
python3 - "$work" "$runs" <<'PY'
import json, statistics, sys
from pathlib import Path
worst = {}
for i in range(1, int(sys.argv[2]) + 1):
    try:
        rows = json.load(open(Path(sys.argv[1]) / f"aa{i}" / "compare.json"))["rows"]
    except (OSError, ValueError):
        continue
    pair = {}
    for r in rows:
        if r["change_pct"] is not None:
            pair[r["entry"]] = max(pair.get(r["entry"], 0.0), abs(r["change_pct"]))
    for e, v in pair.items():
        worst.setdefault(e, []).append(v)
for e in sorted(worst):
    v = worst[e]
    print(f"{e:<22} median {statistics.median(v):5.1f} %   max {max(v):5.1f} %   ({len(v)} pairs)")
PY

echo
echo "false alarms: $false_alarms of $runs A/A pairs (goal: at most 1 in 20)"
echo "detected:     $detected of $runs slowed pairs (goal: at least 19 in 20)"
[ "$failed_runs" -eq 0 ] || echo "$failed_runs pairs gave no comparison (a run failed)"
[ "$failed_runs" -eq 0 ] && [ $((false_alarms * 20)) -le "$runs" ] && [ $((detected * 20)) -ge $((runs * 19)) ]
