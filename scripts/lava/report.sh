#!/bin/sh
# Reports a socbench results folder as LAVA results: the folder's entries as benchmp's rule
# judges them (`benchmp summary --lava`: a test set per tool, a test case per suite entry
# with its headline figure, one case per reason it is not a pass), the comparison with a
# baseline (`benchmp compare`), then the results archive (uploaded and referenced with
# --upload-url). scripts/lava/README.md lists every result name and unit.
#
# Results go through LAVA's helpers (lava-test-set, lava-test-case, lava-test-reference) when
# they are on PATH, as in a LAVA test shell; elsewhere the same results are printed as lines
# of NAME RESULT [MEASUREMENT UNITS]. POSIX sh, no Python: it runs on the device.
#
# Usage: scripts/lava/report.sh RESULTS_DIR [--baseline DIR] [--benchmp PATH] [--upload-url URL]
#                                [--archive-to-log]
#
# --archive-to-log also prints the archive into the log, base64 between the lines
# `socbench-archive-begin NAME` and `socbench-archive-end NAME`, for a device whose files
# cannot be fetched otherwise (scripts/device.sh takes its guests' results from there).
#
# Exit status: 0 everything was reported (a failed entry is a fail result, not an error), 1 a
# LAVA helper failed or the folder could not be read, 2 bad arguments or no results folder.

die() { echo "report.sh: $*" >&2; exit 2; }
out="" baseline="" benchmp="" upload="" to_log=0
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) [ $# -ge 2 ] || die "--baseline needs a folder"; baseline=$2; shift ;;
    --benchmp) [ $# -ge 2 ] || die "--benchmp needs a program"; benchmp=$2; shift ;;
    --upload-url) [ $# -ge 2 ] || die "--upload-url needs a URL"; upload=$2; shift ;;
    --archive-to-log) to_log=1 ;;
    -h|--help) sed -n '2,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [ -z "$out" ] || die "one results folder only ('$out', then '$1')"; out=$1 ;;
  esac
  shift
done
[ -n "$out" ] || die "no results folder given (see --help)"
[ -f "$out/status.tsv" ] || die "$out/status.tsv not found (not a suite results folder)"
case "$upload" in ""|http://*|https://*) ;; *) die "--upload-url '$upload' is not an http(s) URL" ;; esac
out=$(cd "$out" && pwd)
[ -n "$benchmp" ] || benchmp=$(command -v benchmp || true)
if [ -z "$benchmp" ] || ! "$benchmp" --version >/dev/null 2>&1; then
  die "no benchmp that runs here (--benchmp): it reads the results folder for the report"
fi

helpers=0
command -v lava-test-case >/dev/null 2>&1 && helpers=1
failed=0 count_pass=0 count_fail=0 count_skip=0 count_unknown=0
# call HELPER ARGS...: a LAVA helper; its failure is counted and named.
call() {
  "$@" || { failed=$((failed + 1)); echo "report.sh: $1 exited with status $?: $*" >&2; }
}
set_start() { if [ "$helpers" = 1 ]; then call lava-test-set start "$1"; else echo "== $1"; fi; }
set_stop() { if [ "$helpers" = 1 ]; then call lava-test-set stop; fi; }
# case_line NAME RESULT [MEASUREMENT [UNITS]]
case_line() {
  case "$2" in
    pass) count_pass=$((count_pass + 1)) ;;
    fail) count_fail=$((count_fail + 1)) ;;
    skip) count_skip=$((count_skip + 1)) ;;
    *) count_unknown=$((count_unknown + 1)) ;;
  esac
  if [ "$helpers" = 1 ]; then
    if [ -n "${4:-}" ]; then
      call lava-test-case "$1" --result "$2" --measurement "$3" --units "$4"
    elif [ -n "${3:-}" ]; then
      call lava-test-case "$1" --result "$2" --measurement "$3"
    else
      call lava-test-case "$1" --result "$2"
    fi
  else
    echo "$*"
  fi
}

# The entries (and a comparison benchmp compare wrote as JSON), as benchmp summary --lava
# gives them: every name and unit one word, so a line splits on white space (no globbing).
lines=$(mktemp "${TMPDIR:-/tmp}/socbench-report.XXXXXX") || exit 1
trap 'rm -f "$lines"' EXIT
compare_rc=""
if [ -n "$baseline" ]; then
  mkdir -p "$out/compare"
  rm -f "$out/compare/compare.json"
  if ! "$benchmp" compare --help >/dev/null 2>&1; then
    compare_rc=unsupported
  else
    "$benchmp" compare "$baseline" "$out" "--json=$out/compare/compare.json" > "$out/compare/compare.txt" 2> "$out/compare/compare.err"
    compare_rc=$?
    cat "$out/compare/compare.txt"
  fi
fi
if ! "$benchmp" summary --lava "$out" > "$lines" 2> "$lines.err"; then
  echo "report.sh: benchmp summary --lava $out failed: $(tail -n 1 "$lines.err")" >&2
  rm -f "$lines.err"
  exit 1
fi
rm -f "$lines.err"
entries=$(($(wc -l < "$out/status.tsv") - 1))
set -f
while read -r kind rest; do
  # shellcheck disable=SC2086  # a case's words are split on purpose
  case "$kind" in
    set) set_start "$rest" ;;
    stop) set_stop ;;
    log) echo "socbench: $rest" ;;
    case) case_line $rest ;;
  esac
done < "$lines"
set +f

# The comparison when it wrote no JSON: it could not run, refused its input, or failed.
if [ -n "$compare_rc" ] && [ ! -s "$out/compare/compare.json" ]; then
  err=$(tail -n 1 "$out/compare/compare.err" 2>/dev/null)
  set_start compare
  case "$compare_rc" in
    unsupported)
      echo "socbench: compare: comparison skipped: $benchmp has no compare subcommand"
      case_line compare skip
      case_line compare-reason-unsupported skip ;;
    2)
      echo "socbench: compare: benchmp compare refused its input: $err"
      case_line compare fail
      case_line compare-reason-input fail 2 status ;;
    0|1)
      echo "socbench: compare: benchmp compare wrote no readable JSON: $err"
      case_line compare fail
      case_line compare-reason-report fail ;;
    *)
      echo "socbench: compare: benchmp compare failed (exit $compare_rc): $err"
      case_line compare fail
      case_line compare-reason-exit fail "$compare_rc" status ;;
  esac
  set_stop
fi

# The archive: the results folder packed beside it, posted with --upload-url.
archive="$(dirname "$out")/$(basename "$out").tar.gz"
tar -czf "$archive" -C "$(dirname "$out")" "$(basename "$out")" || { echo "report.sh: cannot pack $archive" >&2; failed=$((failed + 1)); }
echo "socbench: results archive $archive"
in_log=0
if [ "$to_log" = 1 ]; then
  if command -v base64 >/dev/null 2>&1; then
    echo "socbench-archive-begin $(basename "$archive")"
    base64 < "$archive"
    echo "socbench-archive-end $(basename "$archive")"
    in_log=1
  else
    echo "report.sh: --archive-to-log needs base64, which is not on PATH" >&2
    failed=$((failed + 1))
  fi
fi
# The token: SOCBENCH_UPLOAD_TOKEN, or the key of that name in the `secrets` file LAVA writes
# into the test overlay (a job's `secrets:`), found above the test's result folder.
token=${SOCBENCH_UPLOAD_TOKEN:-}
if [ -z "$token" ] && [ -n "${LAVA_RESULT_DIR:-}" ]; then
  d=$LAVA_RESULT_DIR
  while [ "$d" != / ] && [ -n "$d" ]; do
    d=$(dirname "$d")
    if [ -f "$d/secrets" ]; then
      token=$(sed -n "s/^[[:space:]]*SOCBENCH_UPLOAD_TOKEN[[:space:]]*=[[:space:]]*//p" "$d/secrets" | head -n 1 | sed "s/^[\"']//; s/[\"']\$//")
      break
    fi
  done
fi
set_start results
link=""
if [ -z "$upload" ] && [ "$in_log" = 1 ]; then
  echo "socbench: archive: in the log above (socbench-archive-begin $(basename "$archive")); it stays at $archive"
  case_line archive pass
elif [ -z "$upload" ]; then
  echo "socbench: archive: no upload URL given: the archive stays at $archive"
  case_line archive skip
  case_line archive-reason-no-url skip
elif ! command -v curl >/dev/null 2>&1; then
  echo "socbench: archive: uploading $(basename "$archive") to $upload needs curl, which is not on PATH"
  case_line archive fail
  case_line archive-reason-upload fail
else
  # A multipart form, the file in `path` and the token in `token`, as LAVA's documentation
  # describes a lab's artifact server; the answer is the stored file's address.
  set -- -sS -f --max-time 300 -F "path=@$archive"
  [ -z "$token" ] || set -- "$@" -F "token=$token"
  if ! answer=$(curl "$@" "$upload" 2>&1); then
    echo "socbench: archive: uploading $(basename "$archive") to $upload failed: $(echo "$answer" | tail -n 1)"
    case_line archive fail
    case_line archive-reason-upload fail
  else
    answer=$(echo "$answer" | tr -d '\r' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
    case "$answer" in
      http://*[!\ ]|https://*[!\ ]) case "$answer" in *' '*|*'<'*|*'>'*) link="" ;; *) link=$answer ;; esac ;;
    esac
    [ -n "$link" ] || link="${upload%/}/$(basename "$archive")"
    count_pass=$((count_pass + 1))
    if [ "$helpers" = 1 ]; then
      call lava-test-reference archive --result pass --reference "$link"
    else
      echo "archive pass $link"
    fi
  fi
fi
set_stop

total=$((count_pass + count_fail + count_skip + count_unknown))
counts=""
for r in fail pass skip unknown; do
  eval "n=\$count_$r"
  # shellcheck disable=SC2154  # n is set by the eval above
  [ "$n" -gt 0 ] && counts="${counts:+$counts, }$n $r"
done
echo "socbench: $entries suite entries reported in $total results ($counts)"
[ "$failed" -eq 0 ] || exit 1
exit 0
