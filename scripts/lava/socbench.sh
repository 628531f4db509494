#!/usr/bin/env bash
# The run step of socbench's LAVA test definitions (socbench.yaml on a Linux device,
# socbench-android.yaml on the host of an Android device): runs the suite from binaries
# already built, then reports it to LAVA with report.py (a test set per tool, a test case per
# suite entry, the comparison with a baseline, the results archive). Every parameter may be
# empty, which means its default, as LAVA passes unset parameters.
set -uo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/lava/socbench.sh [options]

Runs socbench's suite from binaries already built (scripts/suite.sh on this machine, or
scripts/android.sh on an Android device with --android), then reports the results folder with
scripts/lava/report.py: LAVA test cases when LAVA's helpers are on PATH, plain lines otherwise.

Options (an empty value means the default):
  --plan PLAN          quick, default or full (default: default)
  --tools LIST         tools to run, separated by spaces or commas, from: bw_mem lat_mem_rd dhry
                       coremark dto (default: all of them)
  --cpus LIST          run on these CPUs only, e.g. 4-7 or 0,2: on this machine the suite runs
                       under taskset (every tool places its children within the allowed CPUs,
                       one per CPU), and each must be one this process may use; on Android,
                       android.sh passes them as --cpus (dto: PERF_CPU)
  --sched POLICY       LMBENCH_SCHED for every tool: DEFAULT, SINGLE, BALANCED,
                       BALANCED_SPREAD, UNIQUE, UNIQUE_SPREAD, "CUSTOM 4 5 6 7" or
                       "CUSTOM_UNIQUE 4 5 6 7"
  --bin-dir PATH       the binaries: a folder, or a .tar, .tar.gz or .tar.xz archive of one
                       (default target/release, or target/aarch64-unknown-linux-musl/release
                       with --android)
  --baseline PATH      results folder (or its archive) of an earlier run to compare with:
                       benchmp compare BASELINE RESULTS
  --benchmp PATH       benchmp for the comparison (default: the one in --bin-dir when it runs
                       here, else benchmp on PATH)
  --out DIR            results folder, which must not exist yet (default
                       output/socbench-<timestamp> in the current folder)
  --upload-url URL     post the results archive there and record its address in LAVA (the
                       token, if the server needs one, from SOCBENCH_UPLOAD_TOKEN or the LAVA
                       job's secrets)
  --android            run on an Android device over adb (scripts/android.sh)
  --serial SERIAL      that device (default $ANDROID_SERIAL, which LAVA's docker test sets)
  --device-dir DIR     folder on the device (default /data/local/tmp/socbench)
  -h, --help           this text

Exit status: 0 the suite ran and every entry was reported (an entry that failed is a failed
LAVA test case, not an error); 1 the run left no results to report, or a LAVA helper failed;
2 bad options, or a missing tool, binary or baseline, or the runner refused the run (nothing
ran, and nothing is left behind); 128+n interrupted by signal n (the run is stopped first).
In a LAVA test shell an exit 2, or a run that left no results, also raises a LAVA test error
naming the problem.
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/lib/tools.sh
. "$top/scripts/lib/tools.sh"
# shellcheck source=scripts/lib/cpus.sh
. "$top/scripts/lib/cpus.sh"
# shellcheck source=scripts/lib/outdir.sh
. "$top/scripts/lib/outdir.sh"
# shellcheck source=scripts/lib/child.sh
. "$top/scripts/lib/child.sh"
child_default_int "$0" "$@"

# In a LAVA test shell, a test error (its signal on stderr, which the LAVA log holds as well,
# so that it is seen from inside command substitutions too).
raise() {
  if command -v lava-test-raise >/dev/null 2>&1; then
    lava-test-raise "socbench.sh: $*" >&2 || true
  fi
}
# One line and status 2, and a LAVA test error.
die() {
  echo "socbench.sh: $*" >&2
  raise "$*"
  exit 2
}
# The value of an option that needs one.
need_value() { [ "$1" -ge 2 ] || die "$2 needs a value (see --help)"; }

plan="" tools="" cpus="" sched="" bin="" baseline="" benchmp="" out="" upload="" android=0 device_dir=""
serial=${ANDROID_SERIAL:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --plan) need_value $# "$1"; plan=$2; shift ;;
    --tools) need_value $# "$1"; tools=$2; shift ;;
    --cpus) need_value $# "$1"; cpus=$2; shift ;;
    --sched) need_value $# "$1"; sched=$2; shift ;;
    --bin-dir) need_value $# "$1"; bin=$2; shift ;;
    --baseline) need_value $# "$1"; baseline=$2; shift ;;
    --benchmp) need_value $# "$1"; benchmp=$2; shift ;;
    --out) need_value $# "$1"; out=$2; shift ;;
    --upload-url) need_value $# "$1"; upload=$2; shift ;;
    --android) android=1 ;;
    --serial) need_value $# "$1"; [ -n "$2" ] && serial=$2; shift ;;
    --device-dir) need_value $# "$1"; device_dir=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done

# Options and tools, before anything runs.
case "${plan:-default}" in
  quick|default|full) plan=${plan:-default} ;;
  *) die "--plan '$plan' is not quick, default or full" ;;
esac
read -r -a tool_list <<< "${tools//,/ }"
[ ${#tool_list[@]} -gt 0 ] || read -r -a tool_list <<< "$SUITE_TOOLS"
for t in "${tool_list[@]}"; do
  case " $SUITE_TOOLS " in *" $t "*) ;; *) die "unknown tool '$t' (tools: $SUITE_TOOLS)" ;; esac
done
if [ -n "$cpus" ] && ! cpus_valid "$cpus"; then
  die "--cpus '$cpus' is not a CPU list like 0-3,7"
fi
# LMBENCH_SCHED's policies, as the tools parse them (benchmp's sched.rs): the keyword in any
# case, a CPU list after CUSTOM and CUSTOM_UNIQUE only.
read -r sched_word sched_rest <<< "$sched"
case "${sched_word^^}" in
  ""|DEFAULT|SINGLE|BALANCED|BALANCED_SPREAD|UNIQUE|UNIQUE_SPREAD) [ -z "$sched_rest" ] ;;
  CUSTOM|CUSTOM_UNIQUE) [[ $sched_rest =~ [0-9] ]] ;;
  *) false ;;
esac || die "--sched '$sched' is not an LMBENCH_SCHED policy (DEFAULT, SINGLE, BALANCED, BALANCED_SPREAD, UNIQUE, UNIQUE_SPREAD, 'CUSTOM <cpus>' or 'CUSTOM_UNIQUE <cpus>')"
case "$upload" in ""|http://*|https://*) ;; *) die "--upload-url '$upload' is not an http(s) URL" ;; esac
command -v python3 >/dev/null 2>&1 || die "python3 not found on PATH (report.py reads the JSON reports with it)"
if [ "$android" = 1 ]; then
  [ -n "$serial" ] || die "--android needs --serial or ANDROID_SERIAL"
  command -v "${ADB:-adb}" >/dev/null 2>&1 || die "${ADB:-adb} not found on PATH (--android runs the device over adb)"
elif [ -n "$cpus" ]; then
  command -v taskset >/dev/null 2>&1 || die "taskset not found on PATH (--cpus runs the suite under it; util-linux)"
  allowed=$(cpus_allowed)
  if [ -n "$allowed" ] && missing=$(cpus_missing "$cpus" "$allowed"); then
    die "--cpus $cpus: CPU $missing is not one this test may run on (allowed: $allowed)"
  fi
fi

[ -n "$out" ] || out="output/socbench-$(date +%Y%m%d-%H%M%S)"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
[ ! -e "$out" ] || die "--out $out already exists (give a new folder)"
# Every folder made from here on goes again when the run leaves no results (a refusal
# included): the scratch folder, and the parents of --out this run created.
outdir_create "$(dirname "$out")" || die "the folder of --out $out $outdir_why"
work="$out.work"
mkdir -- "$work" 2>/dev/null || { outdir_undo; die "$work exists: another run is writing into --out $out (or remove it)"; }
trap 'rm -rf "$work"; [ -e "$out" ] || outdir_undo' EXIT
child_traps socbench.sh
# suite.sh and android.sh stop their own child within 10 s of a signal.
child_grace=15

# A folder as given, or the folder an archive holds (unpacked into $work/NAME).
# unpack PATH NAME MARKER: MARKER is a file the folder must hold.
unpack() {
  local path=$1 name=$2 marker=$3 found
  case "$path" in
    *.tar|*.tar.gz|*.tgz|*.tar.xz)
      [ -f "$path" ] || die "$path not found"
      command -v tar >/dev/null 2>&1 || die "tar not found on PATH (needed to unpack $path)"
      { mkdir -p "$work/$name" && tar -xf "$path" -C "$work/$name"; } || die "cannot unpack $path"
      found=$(find "$work/$name" -name "$marker" -type f | head -n 1)
      [ -n "$found" ] || die "$path holds no $marker"
      dirname "$found" ;;
    *)
      [ -d "$path" ] || die "$path is not a folder"
      (cd "$path" && pwd) ;;
  esac
}

if [ -z "$bin" ]; then
  if [ "$android" = 1 ]; then
    bin="${CARGO_TARGET_DIR:-$top/target}/aarch64-unknown-linux-musl/release"
  else
    bin="${CARGO_TARGET_DIR:-$top/target}/release"
  fi
fi
bin=$(unpack "$bin" bin "${tool_list[0]}") || exit 2
# benchmp runs the suite (on the device too) and writes its summary.
for t in "${tool_list[@]}" benchmp; do
  [ -x "$bin/$t" ] || die "$bin/$t is missing or not executable"
  if [ "$android" = 0 ]; then
    "$bin/$t" --version >/dev/null 2>&1 || die "$bin/$t does not run here (built for another machine?)"
  fi
done
if [ -n "$baseline" ]; then
  baseline=$(unpack "$baseline" baseline status.tsv) || exit 2
  [ -f "$baseline/status.tsv" ] || die "--baseline $baseline holds no status.tsv (not a suite results folder)"
  if [ -z "$benchmp" ]; then
    if [ -x "$bin/benchmp" ] && "$bin/benchmp" --version >/dev/null 2>&1; then
      benchmp="$bin/benchmp"
    else
      benchmp=$(command -v benchmp || true)
    fi
  fi
fi

echo "== socbench: plan $plan, tools ${tool_list[*]}${cpus:+, CPUs $cpus}${sched:+, LMBENCH_SCHED=$sched}; binaries $bin; results $out"
if [ "$android" = 1 ]; then
  aargs=(-s "$serial" --bin-dir "$bin" --results "$work/runs" --tools "$(IFS=,; echo "${tool_list[*]}"),benchmp")
  [ -n "$cpus" ] && aargs+=(--cpus "$cpus")
  [ -n "$sched" ] && aargs+=(--sched "$sched")
  [ -n "$device_dir" ] && aargs+=(--device-dir "$device_dir")
  sargs=()
  [ "$plan" = default ] || sargs=("--$plan")
  for t in "${tool_list[@]}"; do sargs+=(--only "$t"); done
  runner=("$top/scripts/android.sh" "${aargs[@]}" suite "${sargs[@]}") runner_name=scripts/android.sh
  child_run "${runner[@]}"
  rc=$?
  echo "== android.sh exited with status $rc"
  found=("$work/runs"/android-*)
  [ -d "${found[0]}" ] && mv "${found[0]}" "$out"
else
  sargs=(--no-build --bin-dir "$bin" --out "$out" --no-plots)
  [ "$plan" = default ] || sargs+=("--$plan")
  for t in "${tool_list[@]}"; do sargs+=(--only "$t"); done
  runner=("$top/scripts/suite.sh") runner_name=scripts/suite.sh
  [ -n "$cpus" ] && runner=(taskset -c "$cpus" "${runner[@]}")
  if [ -n "$sched" ]; then export LMBENCH_SCHED="$sched"; fi
  runner+=("${sargs[@]}")
  child_run "${runner[@]}"
  rc=$?
  echo "== suite.sh exited with status $rc"
fi
if [ ! -f "$out/status.tsv" ]; then
  rm -rf -- "$out"
  if [ "$rc" -eq 2 ]; then
    # The runner refused the run before anything ran, with its own line above.
    raise "$runner_name refused the run (exit 2): see its line above"
    exit 2
  fi
  echo "socbench.sh: the run left no results in $out (see above)" >&2
  raise "the run left no results (exit $rc)"
  exit 1
fi

rargs=("$out")
[ -n "$baseline" ] && rargs+=(--baseline "$baseline" --benchmp "$benchmp")
[ -n "$upload" ] && rargs+=(--upload-url "$upload")
python3 "$here/report.py" "${rargs[@]}"
