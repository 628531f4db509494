#!/usr/bin/env bash
# Benchmark (not a test): what tracing costs. Prints the cost of one trace_marker write (with
# tracing on and off), then bw_mem 64m rd with and without --trace while a capture is running,
# alternating A B A B, with the medians and their ratio (goal: --trace changes the figure by
# less than 1 %, since markers sit only at phase boundaries, outside the timed intervals).
# Needs root and tracefs. Usage: scripts/bench_trace.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-7}
lock=/tmp/socbench-cpu.lock

cargo build --release -q -p bw_mem -p ftrace
bin=${CARGO_TARGET_DIR:-target}/release

echo "== marker write cost"
flock "$lock" cargo bench -q -p ftrace --bench marker_cost 2>/dev/null | grep -E 'marker|getppid|variant' || true

echo "== bw_mem 64m rd under 'ftrace record', with and without --trace ($rounds rounds, A B A B)"
plain=() traced=()
for i in $(seq 1 "$rounds"); do
  for mode in plain traced; do
    extra=()
    [ "$mode" = traced ] && extra=(--trace)
    v=$(flock "$lock" "$bin/ftrace" record -o /dev/null -- "$bin/bw_mem" --stdout "${extra[@]}" 64m rd 2>/dev/null | awk '{print $2}')
    printf '  round %d %-7s %s MB/s\n' "$i" "$mode" "$v"
    if [ "$mode" = plain ]; then plain+=("$v"); else traced+=("$v"); fi
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
mp=$(median "${plain[@]}") mt=$(median "${traced[@]}")
awk -v p="$mp" -v t="$mt" 'BEGIN { printf "median without --trace %.2f MB/s, with --trace %.2f MB/s, ratio %.4f (%+.2f %%)\n", p, t, t / p, (t / p - 1) * 100 }'
