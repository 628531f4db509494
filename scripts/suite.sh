#!/usr/bin/env bash
# socbench suite runner: builds the release binaries and runs every tool with defaults that
# finish in a few minutes on a 2-core machine. Results (JSON, CSV, lmbench-compatible text,
# plots) go to results/<host>-<timestamp>/; a failure in one tool is reported and the rest
# still run. With --baseline DIR the run is compared with an earlier one (benchmp compare);
# with --ab BIN_DIR every entry also runs with another build's binaries, right before or after
# this build's, and the two are compared (drift of the host then falls on both sides alike).
# Exit status: 0 when every entry succeeded (and nothing regressed), 1 otherwise, 2 for bad
# options.
set -uo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/suite.sh [--quick | --full] [--only TOOL]... [--out DIR] [--baseline DIR | --ab BIN_DIR] [--no-build] [--bin-dir DIR] [--no-plots]

  --quick        fewer operations and repetitions (about a minute)
  --full         every operation, lmbench's 11 repetitions, more strides (tens of minutes)
  --only TOOL    run only this tool (repeatable): bw_mem lat_mem_rd dhry coremark dto
  --out DIR      results folder (default results/<host>-<timestamp>)
  --baseline DIR compare with an earlier results folder (benchmp compare): a verdict per
                 entry in the summary, compare.txt/.json/.csv and a plot of each regression
  --ab BIN_DIR   also run every entry with the binaries in BIN_DIR (the baseline build),
                 alternately before and after this build's run of it, into OUT/base, then
                 compare as --baseline does: an A/B verdict that host drift between runs
                 minutes apart cannot fake
  --no-build     use the binaries already built
  --bin-dir DIR  where the binaries are (default target/release)
  --no-plots     skip the PNG plots
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=scripts/lib/plan.sh
. "$here/lib/plan.sh"
# shellcheck source=scripts/lib/setup.sh
. "$here/lib/setup.sh"

mode=default only=() out="" build=1 bin_dir="" plots=1 baseline="" ab_bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) mode=quick ;;
    --full) mode=full ;;
    --only) [ $# -ge 2 ] || { echo "suite.sh: --only needs a tool name" >&2; exit 2; }
            case " $SUITE_TOOLS " in *" $2 "*) ;; *) echo "suite.sh: unknown tool '$2' (tools: $SUITE_TOOLS)" >&2; exit 2 ;; esac
            only+=("$2"); shift ;;
    --out) [ $# -ge 2 ] || { echo "suite.sh: --out needs a folder" >&2; exit 2; }; out=$2; shift ;;
    --baseline) [ $# -ge 2 ] || { echo "suite.sh: --baseline needs a results folder" >&2; exit 2; }
                [ -d "$2" ] || { echo "suite.sh: --baseline $2 is not a folder" >&2; exit 2; }
                baseline=$(cd "$2" && pwd); shift ;;
    --ab) [ $# -ge 2 ] || { echo "suite.sh: --ab needs the baseline build's binary folder" >&2; exit 2; }
          [ -d "$2" ] || { echo "suite.sh: --ab $2 is not a folder" >&2; exit 2; }
          ab_bin=$(cd "$2" && pwd); shift ;;
    --no-build) build=0 ;;
    --bin-dir) [ $# -ge 2 ] || { echo "suite.sh: --bin-dir needs a folder" >&2; exit 2; }; bin_dir=$2; shift ;;
    --no-plots) plots=0 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "suite.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ -n "$baseline" ] && [ -n "$ab_bin" ]; then
  echo "suite.sh: --baseline and --ab are two ways to name the baseline: give one" >&2
  exit 2
fi

cd "$top" || exit 1
if [ -z "$bin_dir" ]; then
  bin_dir="${CARGO_TARGET_DIR:-$top/target}/release"
fi
if [ "$build" = 1 ]; then
  echo "== building release binaries"
  cargo build --release --workspace --quiet || { echo "suite.sh: build failed" >&2; exit 1; }
fi

host=$(hostname -s 2>/dev/null || hostname)
[ -n "$out" ] || out="results/${host}-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
ncpus=$(nproc)
llc=0
for f in /sys/devices/system/cpu/cpu0/cache/index*/size; do
  [ -r "$f" ] || continue
  v=$(cat "$f"); case "$v" in *K) v=$(( ${v%K} * 1024 )) ;; *M) v=$(( ${v%M} * 1048576 )) ;; esac
  [ "$v" -gt "$llc" ] && llc=$v
done
echo "== socbench suite ($mode) on $host: $ncpus CPUs, results in $out"

printf 'label\ttool\texit\tseconds\n' > "$out/status.tsv"
if [ -n "$ab_bin" ]; then
  baseline="$out/base"
  mkdir -p "$baseline" || exit 1
  printf 'label\ttool\texit\tseconds\n' > "$baseline/status.tsv"
fi
failures=0

# run_entry BIN_DIR OUT SIDE LABEL ENVS TOOL ARGS: one plan entry with one build, results in
# OUT; SIDE names the build in the progress lines ("" for this one).
run_entry() {
  local bin=$1 dest=$2 side=$3 label=$4 envs=$5 tool=$6 args=$7 rc start secs
  local dir="$dest/$label"
  case "$args $envs" in *"{dir}"*) mkdir -p "$dir" ;; esac
  # Split first, then fill in the placeholders word by word: a results folder with spaces
  # stays one argument.
  local argv envv
  read -r -a argv <<< "$args"
  read -r -a envv <<< "$envs"
  argv=("${argv[@]//\{json\}/$dest/$label.json}")
  argv=("${argv[@]//\{csv\}/$dest/$label.csv}")
  argv=("${argv[@]//\{dir\}/$dir}")
  envv=("${envv[@]//\{dir\}/$dir}")
  printf '%-22s %s %s\n' "$label$side" "$tool" "${argv[*]}"
  start=$(date +%s.%N)
  env "${envv[@]}" "$bin/$tool" "${argv[@]}" > "$dest/$label.txt" 2> "$dest/$label.err"
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  printf '%s\t%s\t%s\t%s\n' "$label" "$tool" "$rc" "$secs" >> "$dest/status.tsv"
  if [ "$rc" -ne 0 ]; then
    failures=$((failures + 1))
    echo "   FAILED$side (exit $rc, ${secs} s): $(head -c 300 "$dest/$label.err" | tr '\n' ' ')"
  fi
}

turn=0
while IFS='|' read -r label envs tool args; do
  if [ ${#only[@]} -gt 0 ]; then
    case " ${only[*]} " in *" $tool "*) ;; *) continue ;; esac
  fi
  if [ -z "$ab_bin" ]; then
    run_entry "$bin_dir" "$out" "" "$label" "$envs" "$tool" "$args"
    continue
  fi
  # A B, then B A for the next entry: neither build always runs first, warm or cold.
  if [ $((turn % 2)) -eq 0 ]; then
    run_entry "$ab_bin" "$baseline" " (base)" "$label" "$envs" "$tool" "$args"
    run_entry "$bin_dir" "$out" "" "$label" "$envs" "$tool" "$args"
  else
    run_entry "$bin_dir" "$out" "" "$label" "$envs" "$tool" "$args"
    run_entry "$ab_bin" "$baseline" " (base)" "$label" "$envs" "$tool" "$args"
  fi
  turn=$((turn + 1))
done < <(suite_plan "$mode" "$ncpus" "$llc")

regressed=0
if [ -n "$baseline" ]; then
  echo "== comparing with $baseline"
  "$bin_dir/benchmp" compare "$baseline" "$out" --json="$out/compare.json" --csv="$out/compare.csv" > "$out/compare.txt"
  case $? in
    0) ;;
    1) regressed=1 ;;
    *) echo "suite.sh: the comparison with $baseline failed (see above)" >&2; regressed=1 ;;
  esac
  [ -s "$out/compare.txt" ] && tail -n 1 "$out/compare.txt"
fi

if [ "$plots" = 1 ]; then
  if setup_python_packages; then
    python3 "$here/plot.py" "$out" || echo "suite.sh: plotting failed" >&2
  else
    echo "suite.sh: skipping plots (see the set-up line above)" >&2
  fi
fi
python3 "$here/summary.py" "$out"
[ "$failures" -eq 0 ] && [ "$regressed" -eq 0 ]
