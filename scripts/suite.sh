#!/usr/bin/env bash
# socbench suite runner: builds the release binaries and runs `benchmp suite` (the plan and
# its executor, in Rust: the same one phones run after adb push), which runs every tool with
# defaults that finish in a few minutes on a 2-core machine. Results (JSON, CSV,
# lmbench-compatible text, plots) go to results/<host>-<timestamp>/; a failure in one tool
# is reported and the rest still run. Then it plots and prints `benchmp summary`. With --baseline DIR the run is compared with an earlier one (benchmp compare);
# with --ab BIN_DIR every entry is also paired with another build's binaries by benchmp ab:
# both builds run as workers on the same CPUs and their repetitions are interleaved, so the
# host's drift falls on both sides alike (benchmp suite gathers their verdicts into
# compare.txt/.json/.csv and the summary itself).
# Exit status: 0 when every entry measured (some perhaps on a busy machine: noisy, listed in
# the summary) and nothing regressed, 1 otherwise, 2 for bad options (refused before anything
# runs, one line on stderr), 128+n interrupted by signal n (SIGINT, SIGTERM, SIGHUP: the
# running entry and everything it forked is stopped first and recorded as interrupted;
# --resume DIR runs what is left).
set -uo pipefail

usage() {
  sed "s/@TOOLS@/$SUITE_TOOLS/" <<'USAGE'
Usage: scripts/suite.sh [--quick | --full] [--only TOOL]... [--out DIR [--force] | --resume DIR] [--baseline DIR | --ab BIN_DIR [--ab-time S] [--ab-processes N]] [--power SRC[,SRC...]] [--power-cmd CMD] [--power-hz HZ] [--power-baseline S] [--quiet-wait S] [--no-rerun] [--no-build] [--bin-dir DIR] [--no-plots]

  --quick        fewer operations and repetitions (about a minute)
  --full         every operation, lmbench's 11 repetitions, more strides (tens of minutes)
  --only TOOL    run only this tool (repeatable): @TOOLS@
  --out DIR      results folder (default results/<host>-<timestamp>); it must be empty or
                 new, and no other suite may be writing into it
  --force        run into a --out folder an earlier suite made, after removing what it
                 recorded there (.socbench-suite.json: every entry's files and folder,
                 status.tsv, summary.json, compare.*, ab/, the plots); other files stay.
                 Refused for a folder without that record (unless it is empty), when a
                 removal would remove an input (--bin-dir, --ab, --baseline, benchmp), and
                 when a file the suite writes is there and was not recorded
  --resume DIR   go on with a stopped suite's folder: run only the entries it did not
                 finish (no row in status.tsv, or one marked interrupted), keep the rest;
                 give the options it was made with (same plan, same binaries)
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
  --power SRC[,SRC...], --power-cmd CMD, --power-hz HZ, --power-baseline S
                 given to every tool (benchmp suite passes them on): the power sources
                 (or none), an external meter printing '<unix seconds> <watts>' lines,
                 the sampling rate, the idle baseline's seconds; where a report has a
                 power record the summary gains an energy column
  --quiet-wait S  before each entry, wait up to S seconds (default 10; 0: not at all) for
                 the CPUs it runs on to be quiet (none more than 10 % busy), saying so; after
                 a wait that ran out the next ones wait 2 s at most. A noisy entry is run
                 once more at the end, and the suite says which stayed noisy and why
  --no-rerun     measure each entry once: a noisy entry stays noisy, a parallel entry whose
                 children ran apart stays failed (a bounded run time on a busy machine)
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
# shellcheck source=scripts/lib/tools.sh
. "$here/lib/tools.sh"
# shellcheck source=scripts/lib/setup.sh
. "$here/lib/setup.sh"
# shellcheck source=scripts/lib/child.sh
. "$here/lib/child.sh"
child_default_int "$0" "$@"

# A refusal: one line, status 2.
die() {
  echo "suite.sh: $*" >&2
  exit 2
}
# An absolute path for a path given relative to where the suite was started.
absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s' "$PWD/$1" ;; esac; }

# What benchmp suite gets: every option but the build, plot and binary-folder ones, which are
# this script's.
pass=() out="" build=1 bin_dir="" plots=1 resume=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick|--full|--force|--no-rerun) pass+=("$1") ;;
    --only) [ $# -ge 2 ] || die "--only needs a tool name"; pass+=(--only "$2"); shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; [ -n "$2" ] || die "--out needs a folder"
           [ "$resume" = 0 ] || die "--out and --resume cannot be used together"
           out=$(absolute "$2"); shift ;;
    --resume) [ $# -ge 2 ] || die "--resume needs a results folder"; [ -n "$2" ] || die "--resume needs a results folder"
              [ -z "$out" ] || die "--out and --resume cannot be used together"
              out=$(absolute "$2"); resume=1; shift ;;
    --baseline) [ $# -ge 2 ] || die "--baseline needs a results folder"
                [ -d "$2" ] || die "--baseline $2 is not a folder"
                pass+=(--baseline "$(cd "$2" && pwd)"); shift ;;
    --ab) [ $# -ge 2 ] || die "--ab needs the baseline build's binary folder"
          [ -d "$2" ] || die "--ab $2 is not a folder"
          pass+=(--ab "$(cd "$2" && pwd)"); shift ;;
    --ab-time|--ab-processes|--quiet-wait) [ $# -ge 2 ] || die "$1 needs a value"; pass+=("$1" "$2"); shift ;;
    # As one word, so a value starting with '-' (a meter's own options) stays a value.
    --power|--power-cmd|--power-hz|--power-baseline)
      [ $# -ge 2 ] || die "$1 needs a value"; pass+=("$1=$2"); shift ;;
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

cd "$top" || exit 1
[ -n "$bin_dir" ] || bin_dir="${CARGO_TARGET_DIR:-$top/target}/release"
host=$(hostname -s 2>/dev/null || hostname)
[ -n "$out" ] || out="$top/results/${host}-$(date +%Y%m%d-%H%M%S)"

child_traps suite.sh
if [ "$build" = 1 ]; then
  echo "== building release binaries"
  child_run cargo build --release --workspace --quiet || { echo "suite.sh: build failed" >&2; exit 1; }
fi
if [ ! -f "$bin_dir/benchmp" ] || [ ! -x "$bin_dir/benchmp" ]; then
  die "the binary folder $bin_dir has no executable benchmp"
fi

# benchmp suite checks everything else (tools, folders, baselines) before it runs anything.
where=(--out "$out")
[ "$resume" = 0 ] || where=(--resume "$out")
child_run "$bin_dir/benchmp" suite --bin-dir "$bin_dir" "${where[@]}" --no-summary "${pass[@]}"
rc=$?
# Refused (nothing ran), or stopped by a signal sent to benchmp itself.
if [ "$rc" -eq 2 ] || [ "$rc" -ge 128 ] || [ ! -d "$out" ]; then exit "$rc"; fi

if [ "$plots" = 1 ]; then
  if setup_python_packages; then
    child_run python3 "$here/plot.py" "$out" || echo "suite.sh: plotting failed" >&2
  else
    echo "suite.sh: skipping plots (see the set-up line above)" >&2
  fi
fi
child_run "$bin_dir/benchmp" summary "$out"
exit "$rc"
