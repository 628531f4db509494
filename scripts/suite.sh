#!/usr/bin/env bash
# socbench suite runner: builds the release binaries and runs every tool with defaults that
# finish in a few minutes on a 2-core machine. Results (JSON, CSV, lmbench-compatible text,
# plots) go to results/<host>-<timestamp>/; a failure in one tool is reported and the rest
# still run. With --baseline DIR the run is compared with an earlier one (benchmp compare);
# with --ab BIN_DIR every entry is also paired with another build's binaries by benchmp ab:
# both builds run as workers on the same CPUs and their repetitions are interleaved, so the
# host's drift falls on both sides alike.
# Exit status: 0 when every entry succeeded (and nothing regressed), 1 otherwise, 2 for bad
# options (refused before anything runs, one line on stderr), 128+n interrupted by signal n
# (SIGINT, SIGTERM, SIGHUP: the running entry and everything it forked is stopped first).
set -uo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/suite.sh [--quick | --full] [--only TOOL]... [--out DIR [--force]] [--baseline DIR | --ab BIN_DIR [--ab-time S] [--ab-processes N]] [--no-build] [--bin-dir DIR] [--no-plots]

  --quick        fewer operations and repetitions (about a minute)
  --full         every operation, lmbench's 11 repetitions, more strides (tens of minutes)
  --only TOOL    run only this tool (repeatable): bw_mem lat_mem_rd dhry coremark dto
  --out DIR      results folder (default results/<host>-<timestamp>); it must be empty or
                 new, and no other suite may be writing into it
  --force        run into a --out folder that is not empty, after removing the files an
                 earlier suite wrote there (status.tsv, compare.*, ab/, every entry's
                 files and folder, the plots); other files stay
  --baseline DIR compare with an earlier results folder (benchmp compare): a verdict per
                 entry in the summary, compare.txt/.json/.csv and a plot of each regression
  --ab BIN_DIR   also pair every entry with the binaries in BIN_DIR (the baseline build)
                 through benchmp ab: both builds run as workers on the same CPUs, their
                 repetitions interleaved pair by pair (OUT/ab/ENTRY.json and .txt); the
                 verdicts go into the summary, compare.txt/.json/.csv and a plot of each
                 FAIL. The false-alarm rate, 0.05, is held over the whole suite (split
                 over its entries, and by benchmp ab over each entry's figures). Load
                 children (--c2c's pongers, --loaded's loads) run only during their own
                 side's repetitions
  --ab-time S    benchmp ab's budget per figure with --ab, seconds (default 3)
  --ab-processes N
                 benchmp ab's process pairs per figure at most (default 16)
  --no-build     use the binaries already built
  --bin-dir DIR  where the binaries are (default target/release)
  --no-plots     skip the PNG plots

Every tool the selected entries need must be an executable file in the binary folder (and
in BIN_DIR with --ab), and a --baseline folder must hold the JSON report of at least one
selected entry; otherwise the suite refuses before anything runs (exit 2).
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=scripts/lib/plan.sh
. "$here/lib/plan.sh"
# shellcheck source=scripts/lib/setup.sh
. "$here/lib/setup.sh"
# shellcheck source=scripts/lib/child.sh
. "$here/lib/child.sh"
child_default_int "$0" "$@"
# shellcheck source=scripts/lib/outdir.sh
. "$here/lib/outdir.sh"

# A refusal: one line, status 2, and no folder this run made is left behind.
die() {
  echo "suite.sh: $*" >&2
  outdir_undo
  exit 2
}
# An absolute path for a path given relative to where the suite was started.
absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s' "$PWD/$1" ;; esac; }

mode=default only=() out="" build=1 bin_dir="" plots=1 baseline="" ab_bin="" force=0 ab_time=3 ab_processes=16
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) mode=quick ;;
    --full) mode=full ;;
    --only) [ $# -ge 2 ] || die "--only needs a tool name"
            case " $SUITE_TOOLS " in *" $2 "*) ;; *) die "unknown tool '$2' (tools: $SUITE_TOOLS)" ;; esac
            only+=("$2"); shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; [ -n "$2" ] || die "--out needs a folder"
           out=$(absolute "$2"); shift ;;
    --force) force=1 ;;
    --baseline) [ $# -ge 2 ] || die "--baseline needs a results folder"
                [ -d "$2" ] || die "--baseline $2 is not a folder"
                baseline=$(cd "$2" && pwd); shift ;;
    --ab) [ $# -ge 2 ] || die "--ab needs the baseline build's binary folder"
          [ -d "$2" ] || die "--ab $2 is not a folder"
          ab_bin=$(cd "$2" && pwd); shift ;;
    --ab-time) [ $# -ge 2 ] || die "--ab-time needs seconds"
               if ! [[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || [ "$2" = 0 ]; then die "--ab-time $2 is not a number of seconds above 0"; fi
               ab_time=$2; shift ;;
    --ab-processes) [ $# -ge 2 ] || die "--ab-processes needs a count"
               if ! [[ $2 =~ ^[0-9]+$ ]] || [ "$2" -lt 1 ] || [ "$2" -gt 1000 ]; then die "--ab-processes $2 is not a count from 1 to 1000"; fi
               ab_processes=$2; shift ;;
    --no-build) build=0 ;;
    --bin-dir) [ $# -ge 2 ] || die "--bin-dir needs a folder"
               [ -d "$2" ] || die "--bin-dir $2 is not a folder"
               bin_dir=$(cd "$2" && pwd); shift ;;
    --no-plots) plots=0 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done

if [ -n "$baseline" ] && [ -n "$ab_bin" ]; then
  die "--baseline and --ab are two ways to name the baseline: give one"
fi

cd "$top" || exit 1
if [ -z "$bin_dir" ]; then
  bin_dir="${CARGO_TARGET_DIR:-$top/target}/release"
fi
host=$(hostname -s 2>/dev/null || hostname)
[ -n "$out" ] || out="$top/results/${host}-$(date +%Y%m%d-%H%M%S)"
ncpus=$(nproc)
llc=$(llc_bytes)

# The selected entries, and the tools they need.
plan=() needed=()
while IFS= read -r line; do
  IFS='|' read -r label _ tool _ <<< "$line"
  if [ ${#only[@]} -gt 0 ]; then
    case " ${only[*]} " in *" $tool "*) ;; *) continue ;; esac
  fi
  plan+=("$line")
  case " ${needed[*]} " in *" $tool "*) ;; *) needed+=("$tool") ;; esac
done < <(suite_plan "$mode" "$ncpus" "$llc")

# check_bins DIR WHAT TOOL...: every TOOL is an executable file in DIR (WHAT names DIR).
check_bins() {
  local dir=$1 what=$2 t
  shift 2
  for t in "$@"; do
    if [ ! -f "$dir/$t" ] || [ ! -x "$dir/$t" ]; then die "$what $dir has no executable $t"; fi
  done
}
compare_tools=()
[ -n "$baseline$ab_bin" ] && compare_tools=(benchmp)
[ "$build" = 1 ] || check_bins "$bin_dir" "the binary folder" "${needed[@]}" "${compare_tools[@]}"
[ -z "$ab_bin" ] || check_bins "$ab_bin" "--ab" "${needed[@]}"
if [ -n "$baseline" ]; then
  found=0
  for line in "${plan[@]}"; do
    [ -f "$baseline/${line%%|*}.json" ] && { found=1; break; }
  done
  [ "$found" = 1 ] || die "--baseline $baseline holds no JSON report of a selected entry (such as ${plan[0]%%|*}.json): nothing to compare"
fi

# The results folder: new or empty (or --force), writable, and this run's alone.
outdir_create "$out" || die "--out $out $outdir_why"
out=$(cd "$out" && pwd)
# The folder is the other suite's now, even if this one made it: nothing of it is removed.
outdir_lock "$out" || { outdir_made=(); die "--out $out: another suite is writing into it (it holds the folder's lock)"; }
[ -z "$outdir_why" ] || echo "suite.sh: $outdir_why" >&2
if ! outdir_empty "$out"; then
  [ "$force" = 1 ] || die "--out $out is not empty: its results would be overwritten (give a new folder, or --force)"
  case "$baseline/" in "$out"/*) die "--baseline $baseline is inside --out $out, which --force clears" ;; esac
fi

child_traps suite.sh
if [ "$build" = 1 ]; then
  echo "== building release binaries"
  child_run cargo build --release --workspace --quiet || { echo "suite.sh: build failed" >&2; outdir_undo; exit 1; }
  check_bins "$bin_dir" "the binary folder" "${needed[@]}" "${compare_tools[@]}"
fi
outdir_made=()
if [ "$force" = 1 ]; then
  # An earlier suite's files only: every entry's label starts with its tool's name.
  shopt -s nullglob
  old=("$out/status.tsv" "$out"/compare.* "$out"/compare-*.png "$out/base" "$out/ab")
  for t in $SUITE_TOOLS; do old+=("$out/$t".png "$out/$t"-*); done
  shopt -u nullglob
  rm -rf -- "${old[@]}"
fi

echo "== socbench suite ($mode) on $host: $ncpus CPUs, results in $out"

printf 'label\ttool\texit\tseconds\n' > "$out/status.tsv"
failures=0 regressed=0

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
  # In a process group of its own: a signal to the suite stops the tool and its children.
  child_run --out "$dest/$label.txt" --err "$dest/$label.err" env "${envv[@]}" "$bin/$tool" "${argv[@]}"
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  printf '%s\t%s\t%s\t%s\n' "$label" "$tool" "$rc" "$secs" >> "$dest/status.tsv"
  if [ "$rc" -ne 0 ]; then
    failures=$((failures + 1))
    echo "   FAILED$side (exit $rc, ${secs} s): $(head -c 300 "$dest/$label.err" | tr '\n' ' ')"
  fi
}

# ab_command SIDE BIN ENVS TOOL ARGS: one side's command for benchmp ab, as words a shell
# would split (its result files dropped: the driver keeps the figures; {dir} a folder of the
# side's own).
ab_command() {
  local side=$1 bin=$2 envs=$3 tool=$4 args=$5 w argv envv words=()
  local dir="$out/ab/$label-$side"
  read -r -a argv <<< "$args"
  read -r -a envv <<< "$envs"
  case "$args $envs" in *"{dir}"*) mkdir -p "$dir" ;; esac
  for w in "${envv[@]}"; do words+=("${w//\{dir\}/$dir}"); done
  words+=("$bin/$tool")
  for w in "${argv[@]}"; do
    case $w in *"{json}"*|*"{csv}"*) ;; *) words+=("${w//\{dir\}/$dir}") ;; esac
  done
  printf '%q ' "${words[@]}"
}

# run_ab LABEL ENVS TOOL ARGS: the entry paired by benchmp ab, the baseline build (A) against
# this one (B); its report in OUT/ab.
run_ab() {
  local label=$1 envs=$2 tool=$3 args=$4 rc a b
  mkdir -p "$out/ab"
  a=$(ab_command base "$ab_bin" "$envs" "$tool" "$args")
  b=$(ab_command current "$bin_dir" "$envs" "$tool" "$args")
  printf '%-22s benchmp ab --time %s --processes %s --alpha %s (base against this build)\n' "$label (ab)" "$ab_time" "$ab_processes" "$ab_alpha"
  child_run --out "$out/ab/$label.txt" --err "$out/ab/$label.err" \
    "$bin_dir/benchmp" ab --time "$ab_time" --processes "$ab_processes" --alpha "$ab_alpha" \
    --json="$out/ab/$label.json" "$a" "$b"
  rc=$?
  case $rc in
    0) ;;
    1) regressed=1
       grep -E ' FAIL' "$out/ab/$label.txt" | sed 's/^/   /' ;;
    *) failures=$((failures + 1))
       echo "   FAILED (ab, exit $rc): $(head -c 300 "$out/ab/$label.err" | tr '\n' ' ')" ;;
  esac
}

# The suite's false-alarm rate, 0.05, held over all its entries (each benchmp ab holds its
# share over its own figures).
ab_alpha=$(awk -v n="${#plan[@]}" 'BEGIN { printf "%.6g", 0.05 / (n > 0 ? n : 1) }')
for line in "${plan[@]}"; do
  IFS='|' read -r label envs tool args <<< "$line"
  run_entry "$bin_dir" "$out" "" "$label" "$envs" "$tool" "$args"
  [ -z "$ab_bin" ] || run_ab "$label" "$envs" "$tool" "$args"
done

if [ -n "$ab_bin" ]; then
  echo "== paired with $ab_bin"
  child_run python3 "$here/ab_compare.py" "$out" || { echo "suite.sh: gathering the paired verdicts failed" >&2; regressed=1; }
  [ -s "$out/compare.txt" ] && tail -n 1 "$out/compare.txt"
elif [ -n "$baseline" ]; then
  echo "== comparing with $baseline"
  child_run --out "$out/compare.txt" "$bin_dir/benchmp" compare "$baseline" "$out" --json="$out/compare.json" --csv="$out/compare.csv"
  case $? in
    0) ;;
    1) regressed=1 ;;
    *) echo "suite.sh: the comparison with $baseline failed (see above)" >&2; regressed=1 ;;
  esac
  [ -s "$out/compare.txt" ] && tail -n 1 "$out/compare.txt"
fi

if [ "$plots" = 1 ]; then
  if setup_python_packages; then
    child_run python3 "$here/plot.py" "$out" || echo "suite.sh: plotting failed" >&2
  else
    echo "suite.sh: skipping plots (see the set-up line above)" >&2
  fi
fi
child_run python3 "$here/summary.py" "$out"
[ "$failures" -eq 0 ] && [ "$regressed" -eq 0 ]
