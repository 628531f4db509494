#!/usr/bin/env bash
# Power of `benchmp compare` on this machine: its false alarms between runs of one build, and
# how often it catches a real slowdown.
#
#   A/A   RUNS + 1 quick suite runs of the same build, each compared with the one before it
#         (RUNS pairs): a pair with any FAIL is a false alarm. Goal: at most 1 in 20.
#   slow  RUNS more quick suite runs in which one entry is slowed by a competing busy process
#         on its CPU for part of its run (coremark-P1 by default: a busy loop on its CPU for
#         SLOW_SECONDS of its ~10 s timed run, about 10 % of its throughput), each compared
#         with the clean run before it: the slowed entry's figure must be a FAIL. Goal: at
#         least 19 in 20.
# Every suite run holds the shared CPU lock. Prints each pair's verdict counts, then the two
# rates against the goal.
#
# Environment:
#   COMPARE_RUNS       pairs of each kind (default 20)
#   COMPARE_SLOW       entry to slow down (default coremark-P1)
#   SLOW_SECONDS       seconds the competing loop runs (default 2)
#   SLOW_AFTER         seconds into the entry it starts (default 3, after the count is sized)
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
slow_s=${SLOW_SECONDS:-2}
slow_after=${SLOW_AFTER:-3}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "COMPARE_RUNS must be a whole number of at least 1" 2
[[ $slow_s =~ ^[0-9]+$ && $slow_after =~ ^[0-9]+$ ]] || die "SLOW_SECONDS and SLOW_AFTER are whole seconds" 2
slow_tool=${slow_entry%%-*}

echo "building the release binaries (cargo build --release --workspace)" >&2
locked cargo build --quiet --release --workspace || die "build failed"
bin=${CARGO_TARGET_DIR:-$PWD/target}/release
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

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

suite() { # suite OUT [BIN_DIR]
  locked scripts/suite.sh --quick --no-build --no-plots --bin-dir "${2:-$bin}" --out "$1" >/dev/null 2>&1 || true
}
verdicts() { # verdicts BASE CUR -> "fail improved noisy missing pass" and the slowed entry's verdict
  "$bin/benchmp" compare "$1" "$2" --json="$work/cmp.json" >/dev/null 2>&1 || true
  python3 - "$work/cmp.json" "$slow_entry" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
k = c["counts"]
slowed = [r["verdict"] for r in c["rows"] if r["entry"] == sys.argv[2]]
print(k["fail"], k["improved"], k["noisy"], k["missing"], k["pass"], ",".join(slowed) or "-")
PY
}

echo "== A/A: $((runs + 1)) quick suite runs, each compared with the one before"
suite "$work/aa0"
false_alarms=0
for i in $(seq 1 "$runs"); do
  suite "$work/aa$i"
  read -r fail improved noisy missing pass _ < <(verdicts "$work/aa$((i - 1))" "$work/aa$i")
  printf 'pair %2d: %s FAIL, %s IMPROVED, %s NOISY, %s MISSING, %s PASS\n' "$i" "$fail" "$improved" "$noisy" "$missing" "$pass"
  [ "$fail" -gt 0 ] && false_alarms=$((false_alarms + 1))
done

echo "== slowed: $runs pairs, $slow_entry with a busy loop on CPU $cpu for $slow_s s from $slow_after s"
detected=0
for i in $(seq 1 "$runs"); do
  suite "$work/clean$i"
  suite "$work/slow$i" "$work/slowbin"
  read -r fail _ _ _ _ slowed < <(verdicts "$work/clean$i" "$work/slow$i")
  printf 'pair %2d: %s on %s (%s FAIL in all)\n' "$i" "$slowed" "$slow_entry" "$fail"
  case ",$slowed," in *,FAIL,*) detected=$((detected + 1)) ;; esac
done

echo
echo "false alarms: $false_alarms of $runs A/A pairs (goal: at most 1 in 20)"
echo "detected:     $detected of $runs slowed pairs (goal: at least 19 in 20)"
[ $((false_alarms * 20)) -le "$runs" ] && [ $((detected * 20)) -ge $((runs * 19)) ]
