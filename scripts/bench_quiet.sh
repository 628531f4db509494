#!/usr/bin/env bash
# The suite beside a hog that comes and goes: how many entries end noisy (and why), how many
# fail, and how long the suite takes, for this build and, with a second binary folder, for
# another (say the build before the suite waited for a quiet machine), run one after the
# other under the same hog. The hog is a busy loop pinned to one CPU, on for HOG_ON seconds
# and off for HOG_OFF, as another tenant's bursts are.
#
# Usage: scripts/bench_quiet.sh [OTHER_BIN_DIR]
#
# Environment:
#   QUIET_ARGS   more options for both suites (default --quick)
#   HOG_CPU      the CPU the hog runs on (default: the last one)
#   HOG_ON       seconds on (default 3)
#   HOG_OFF      seconds off (default 5)
#   QUIET_KEEP   keep both results folders here (default: a temporary folder)
#
# Exit status: 0 both suites ran, 1 one could not run, 2 bad settings.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib/bench.sh
. "$here/lib/bench.sh"
top=$(cd "$here/.." && pwd)
cd "$top"

die() { echo "bench_quiet: $1" >&2; exit "${2:-1}"; }
other=${1:-}
[ -z "$other" ] || [ -x "$other/benchmp" ] || die "$other holds no benchmp" 2
cpu=${HOG_CPU:-$(( $(nproc) - 1 ))}
on=${HOG_ON:-3}
off=${HOG_OFF:-5}
for v in "$cpu" "$on" "$off"; do
  [[ $v =~ ^[0-9]+$ ]] || die "HOG_CPU, HOG_ON and HOG_OFF take whole numbers" 2
done
read -r -a extra <<< "${QUIET_ARGS:---quick}"
for p in $SUITE_TOOLS benchmp; do
  build_release "$p" >/dev/null || die "cannot build $p"
done
bin=$(cd "${CARGO_TARGET_DIR:-target}/release" && pwd)
keep=${QUIET_KEEP:-}
if [ -z "$keep" ]; then
  keep=$(mktemp -d "${TMPDIR:-/tmp}/socbench-quiet.XXXXXX")
  trap 'end_hog; rm -rf "$keep"' EXIT
else
  mkdir -p "$keep"
  trap 'end_hog' EXIT
fi

# The hog: a busy loop on $cpu for $on s, then nothing for $off s, until ended.
hog_pid=""
start_hog() {
  taskset -c "$cpu" sh -c "while :; do end=\$((\$(date +%s) + $on)); while [ \$(date +%s) -lt \$end ]; do :; done; sleep $off; done" &
  hog_pid=$!
}
end_hog() {
  [ -n "$hog_pid" ] || return 0
  kill "$hog_pid" 2>/dev/null || true
  wait "$hog_pid" 2>/dev/null || true
  hog_pid=""
}

# suite NAME BIN_DIR: one suite beside the hog; prints its counts.
suite() {
  local name=$1 dir=$2 out="$keep/$1" rc=0 t0 t1
  start_hog
  t0=$(date +%s)
  locked "$dir/benchmp" suite --bin-dir "$dir" --out "$out" --no-summary "${extra[@]}" > "$keep/$name.log" 2>&1 || rc=$?
  t1=$(date +%s)
  end_hog
  python3 - "$out" "$name" "$rc" "$((t1 - t0))" <<'PY'
import sys
from pathlib import Path
out, name, rc, secs = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
rows = [l.split("\t") for l in (out / "status.tsv").read_text().splitlines()[1:]]
count = {s: sum(1 for r in rows if r[4] == s) for s in ("ok", "noisy", "failed")}
print(f"{name:<8} exit {rc}, {secs} s: {len(rows)} entries, {count['ok']} ok, "
      f"{count['noisy']} noisy, {count['failed']} failed")
PY
  grep -E "NOISY|stayed noisy|went on after|FAILED" "$keep/$name.log" | sed 's/^/    /' || true
}

echo "== the suite beside a hog on CPU $cpu ($on s on, $off s off): ${extra[*]}"
suite this "$bin"
[ -z "$other" ] || suite other "$other"
