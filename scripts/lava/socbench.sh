#!/bin/sh
# The run step of socbench's LAVA test definitions (socbench.yaml on a Linux device,
# socbench-android.yaml on the host of an Android device): runs the suite from binaries
# already built, then reports it to LAVA with report.sh (a test set per tool, a test case per
# suite entry, the comparison with a baseline, the results archive). Every parameter may be
# empty, which means its default, as LAVA passes unset parameters.
#
# POSIX sh: it runs where LAVA's test shell runs, busybox ash or Android's mksh included, with
# no bash and no Python on the device (the suite is `benchmp suite`, the report `benchmp
# summary --lava`).

usage() {
  sed "s/@TOOLS@/$SUITE_TOOLS/" <<'USAGE'
Usage: scripts/lava/socbench.sh [options]

Runs socbench's suite from binaries already built (benchmp suite on this machine, or
scripts/android.sh on an Android device with --android), then reports the results folder with
scripts/lava/report.sh: LAVA test cases when LAVA's helpers are on PATH, plain lines otherwise.

Options (an empty value means the default):
  --plan PLAN          quick, default or full (default: default)
  --tools LIST         tools to run, separated by spaces or commas, from: @TOOLS@
                       (default: all of them)
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
  --benchmp PATH       a benchmp that runs here, for the report and the comparison (default:
                       the one in --bin-dir when it runs here, else benchmp on PATH)
  --out DIR            results folder, which must not exist yet (default
                       output/socbench-<timestamp> in the current folder)
  --upload-url URL     post the results archive there and record its address in LAVA (the
                       token, if the server needs one, from SOCBENCH_UPLOAD_TOKEN or the LAVA
                       job's secrets)
  --quiet-wait S       before each entry, wait up to S seconds for a quiet machine (default:
                       the suite's, 10 s before the first entry and 2 s before the others;
                       0: not at all)
  --rerun WHEN         no: measure each entry once (a noisy one stays noisy, a parallel one
                       whose children ran apart stays failed); yes or empty: run such an
                       entry again once (default)
  --archive-to-log WHEN
                       yes: also print the results archive into the log (base64 between
                       socbench-archive-begin and -end lines), for a device whose files cannot
                       be fetched otherwise; no or empty: not (default)
  --android            run on an Android device over adb (scripts/android.sh)
  --serial SERIAL      that device (default $ANDROID_SERIAL, which LAVA's docker test sets)
  --device-dir DIR     folder on the device (default /data/local/tmp/socbench)
  -h, --help           this text

Needs a POSIX shell, benchmp among the binaries (it runs the suite and the report), tar for
an archive, taskset for --cpus; --android needs bash and adb on this host.

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

# In a LAVA test shell, a test error (its signal on stderr, which the LAVA log holds as well,
# so that it is seen from inside command substitutions too).
raise() {
  if command -v lava-test-raise >/dev/null 2>&1; then
    lava-test-raise "socbench.sh: $*" >&2 || true
  fi
}
scratch=""
# One line and status 2, and a LAVA test error.
die() {
  echo "socbench.sh: $*" >&2
  raise "$*"
  [ -z "$scratch" ] || rm -rf "$scratch"
  exit 2
}
# The value of an option that needs one.
need_value() { [ "$1" -ge 2 ] || die "$2 needs a value (see --help)"; }

plan="" tools="" cpus="" sched="" bin="" baseline="" benchmp="" out="" upload="" android=0 device_dir="" to_log=""
quiet="" rerun=""
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
    --archive-to-log) need_value $# "$1"; to_log=$2; shift ;;
    --quiet-wait) need_value $# "$1"; quiet=$2; shift ;;
    --rerun) need_value $# "$1"; rerun=$2; shift ;;
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
tool_list=$(echo "$tools" | tr ',' ' ' | tr -s ' ' | sed 's/^ //; s/ $//')
[ -n "$tool_list" ] || tool_list=$SUITE_TOOLS
for t in $tool_list; do
  case " $SUITE_TOOLS " in *" $t "*) ;; *) die "unknown tool '$t' (tools: $SUITE_TOOLS)" ;; esac
done
first_tool=${tool_list%% *}
if [ -n "$cpus" ] && ! cpus_valid "$cpus"; then
  die "--cpus '$cpus' is not a CPU list like 0-3,7"
fi
# LMBENCH_SCHED's policies, as the tools parse them (benchmp's sched.rs): the keyword in any
# case, a CPU list after CUSTOM and CUSTOM_UNIQUE only.
sched_word=${sched%% *}
sched_rest=""
[ "$sched_word" = "$sched" ] || sched_rest=${sched#* }
sched_ok=0
case "$(echo "$sched_word" | tr '[:lower:]' '[:upper:]')" in
  ""|DEFAULT|SINGLE|BALANCED|BALANCED_SPREAD|UNIQUE|UNIQUE_SPREAD) [ -n "$(echo "$sched_rest" | tr -d ' ')" ] || sched_ok=1 ;;
  CUSTOM|CUSTOM_UNIQUE) case "$sched_rest" in *[0-9]*) sched_ok=1 ;; esac ;;
esac
[ "$sched_ok" = 1 ] || die "--sched '$sched' is not an LMBENCH_SCHED policy (DEFAULT, SINGLE, BALANCED, BALANCED_SPREAD, UNIQUE, UNIQUE_SPREAD, 'CUSTOM <cpus>' or 'CUSTOM_UNIQUE <cpus>')"
case "$upload" in ""|http://*|https://*) ;; *) die "--upload-url '$upload' is not an http(s) URL" ;; esac
case "$to_log" in ""|no|yes) ;; *) die "--archive-to-log '$to_log' is not yes or no" ;; esac
case "$rerun" in ""|no|yes) ;; *) die "--rerun '$rerun' is not yes or no" ;; esac
# Seconds as the suite takes them: a whole or decimal number (the suite bounds it).
case "$quiet" in
  "") ;;
  *[!0-9.]*|.*|*.|*.*.*) die "--quiet-wait '$quiet' is not a number of seconds" ;;
esac
if [ "$android" = 1 ]; then
  [ -n "$serial" ] || die "--android needs --serial or ANDROID_SERIAL"
  command -v "${ADB:-adb}" >/dev/null 2>&1 || die "${ADB:-adb} not found on PATH (--android runs the device over adb)"
  command -v bash >/dev/null 2>&1 || die "bash not found on PATH (--android runs scripts/android.sh on this host)"
elif [ -n "$cpus" ]; then
  command -v taskset >/dev/null 2>&1 || die "taskset not found on PATH (--cpus runs the suite under it; util-linux or busybox)"
  allowed=$(cpus_allowed)
  if [ -n "$allowed" ] && missing=$(cpus_missing "$cpus" "$allowed"); then
    die "--cpus $cpus: CPU $missing is not one this test may run on (allowed: $allowed)"
  fi
fi

[ -n "$out" ] || out="output/socbench-$(date +%Y%m%d-%H%M%S)"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
[ ! -e "$out" ] || die "--out $out already exists (give a new folder)"

# A scratch folder (archives unpacked), away from --out so that a refusal leaves nothing there.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/socbench-lava.XXXXXX") || die "cannot make a scratch folder in ${TMPDIR:-/tmp}"

# A folder as given, or the folder an archive holds (unpacked into the scratch folder).
# unpack PATH NAME MARKER: MARKER is a file the folder must hold; prints the folder.
unpack() {
  case "$1" in
    *.tar|*.tar.gz|*.tgz|*.tar.xz)
      [ -f "$1" ] || die "$1 not found"
      command -v tar >/dev/null 2>&1 || die "tar not found on PATH (needed to unpack $1)"
      { mkdir -p "$scratch/$2" && tar -xf "$1" -C "$scratch/$2"; } || die "cannot unpack $1"
      unpack_found=$(find "$scratch/$2" -name "$3" -type f | head -n 1)
      [ -n "$unpack_found" ] || die "$1 holds no $3"
      dirname "$unpack_found" ;;
    *)
      [ -d "$1" ] || die "$1 is not a folder"
      (cd "$1" && pwd) ;;
  esac
}

if [ -z "$bin" ]; then
  if [ "$android" = 1 ]; then
    bin="${CARGO_TARGET_DIR:-$top/target}/aarch64-unknown-linux-musl/release"
  else
    bin="${CARGO_TARGET_DIR:-$top/target}/release"
  fi
fi
# die inside $(...) ends only the subshell: its line is printed there, the status tells.
bin=$(unpack "$bin" bin "$first_tool") || { rm -rf "$scratch"; exit 2; }
# benchmp runs the suite (on the device too) and writes its summary.
for t in $tool_list benchmp; do
  [ -x "$bin/$t" ] || die "$bin/$t is missing or not executable"
  if [ "$android" = 0 ]; then
    "$bin/$t" --version >/dev/null 2>&1 || die "$bin/$t does not run here (built for another machine?)"
  fi
done
if [ -z "$benchmp" ]; then
  if "$bin/benchmp" --version >/dev/null 2>&1; then
    benchmp="$bin/benchmp"
  else
    benchmp=$(command -v benchmp || true)
  fi
fi
if [ -n "$baseline" ]; then
  baseline=$(unpack "$baseline" baseline status.tsv) || { rm -rf "$scratch"; exit 2; }
  [ -f "$baseline/status.tsv" ] || die "--baseline $baseline holds no status.tsv (not a suite results folder)"
fi

# The parents of --out this run makes, removed again when the run leaves no results.
made=""
p=$(dirname "$out")
while [ ! -e "$p" ] && [ "$p" != / ]; do made=$p; p=$(dirname "$p"); done
mkdir -p "$(dirname "$out")" || die "cannot make the folder of --out $out"
undo_out() {
  rm -rf -- "$out"
  if [ -n "$made" ]; then
    d=$(dirname "$out")
    while rmdir -- "$d" 2>/dev/null && [ "$d" != "$made" ]; do d=$(dirname "$d"); done
  fi
}

# The running suite (or android.sh) in the background, waited for, so that a signal to this
# script is handled at once: SIGTERM goes to the runner, which stops its running entry with
# everything it forked and records it as interrupted (a background job has SIGINT ignored, so
# SIGTERM stands for every signal), then this script exits 128+n.
runner_pid=""
# shellcheck disable=SC2317  # reached through the traps below
on_signal() {
  trap '' INT TERM HUP
  if [ -n "$runner_pid" ]; then
    kill -TERM "$runner_pid" 2>/dev/null
    waited=0
    while kill -0 "$runner_pid" 2>/dev/null && [ "$waited" -lt 150 ]; do sleep 0.1; waited=$((waited + 1)); done
    kill -KILL "$runner_pid" 2>/dev/null
    wait "$runner_pid" 2>/dev/null
  fi
  echo "socbench.sh: interrupted by SIG$1" >&2
  rm -rf "$scratch"
  [ -f "$out/status.tsv" ] || undo_out
  exit "$2"
}
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP
# run CMD...: CMD with standard input from /dev/null, waited for; sets rc.
run() {
  "$@" < /dev/null &
  runner_pid=$!
  wait "$runner_pid"
  rc=$?
  # A trap ran while waiting: wait returned early, and on_signal has exited the script.
  runner_pid=""
}

echo "== socbench: plan $plan, tools $tool_list${cpus:+, CPUs $cpus}${sched:+, LMBENCH_SCHED=$sched}${quiet:+, quiet wait $quiet s}${rerun:+, rerun $rerun}; binaries $bin; results $out"
if [ "$android" = 1 ]; then
  set -- -s "$serial" --bin-dir "$bin" --results "$scratch/runs" --tools "$(echo "$tool_list" | tr ' ' ','),benchmp"
  [ -n "$cpus" ] && set -- "$@" --cpus "$cpus"
  [ -n "$sched" ] && set -- "$@" --sched "$sched"
  [ -n "$device_dir" ] && set -- "$@" --device-dir "$device_dir"
  set -- "$@" suite
  [ "$plan" = default ] || set -- "$@" "--$plan"
  [ -n "$quiet" ] && set -- "$@" --quiet-wait "$quiet"
  [ "$rerun" = no ] && set -- "$@" --no-rerun
  for t in $tool_list; do set -- "$@" --only "$t"; done
  runner_name=scripts/android.sh
  run bash "$top/scripts/android.sh" "$@"
  echo "== android.sh exited with status $rc"
  for found in "$scratch/runs"/android-*; do
    [ -d "$found" ] && mv "$found" "$out"
    break
  done
else
  set -- suite --out "$out" --bin-dir "$bin"
  [ "$plan" = default ] || set -- "$@" "--$plan"
  [ -n "$quiet" ] && set -- "$@" --quiet-wait "$quiet"
  [ "$rerun" = no ] && set -- "$@" --no-rerun
  for t in $tool_list; do set -- "$@" --only "$t"; done
  runner_name="benchmp suite"
  if [ -n "$sched" ]; then LMBENCH_SCHED=$sched; export LMBENCH_SCHED; fi
  if [ -n "$cpus" ]; then
    run taskset -c "$cpus" "$bin/benchmp" "$@"
  else
    run "$bin/benchmp" "$@"
  fi
  echo "== benchmp suite exited with status $rc"
fi
if [ ! -f "$out/status.tsv" ]; then
  undo_out
  rm -rf "$scratch"
  if [ "$rc" -eq 2 ]; then
    # The runner refused the run before anything ran, with its own line above.
    raise "$runner_name refused the run (exit 2): see its line above"
    exit 2
  fi
  echo "socbench.sh: the run left no results in $out (see above)" >&2
  raise "the run left no results (exit $rc)"
  exit 1
fi

set -- "$out"
[ -n "$baseline" ] && set -- "$@" --baseline "$baseline"
[ -n "$benchmp" ] && set -- "$@" --benchmp "$benchmp"
[ -n "$upload" ] && set -- "$@" --upload-url "$upload"
[ "$to_log" = yes ] && set -- "$@" --archive-to-log
sh "$here/report.sh" "$@"
rc=$?
rm -rf "$scratch"
exit "$rc"
