#!/usr/bin/env bash
# socbench's bw_mem and lat_mem_rd dropped into lmbench's harness: runs them the way lmbench's
# `scripts/lmbench` does (the result stream appended to one results file, stdout left to the
# terminal, section headers and blank lines written by the harness), then reads the file the
# way lmbench's getsummary does and checks that every memory section has its data and that
# nothing but data lines stands inside a block. With SYNC_MAX=2 every run also has notes to
# print (the per-child breakdown), which must not reach the results file.
#
# Usage: scripts/tests/test_lmbench_harness.sh [BIN_DIR]   (default: target/debug)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin_dir=${1:-${CARGO_TARGET_DIR:-$top/target}/debug}
for t in bw_mem lat_mem_rd; do
  [ -x "$bin_dir/$t" ] || { echo "FAIL: no $t in $bin_dir (run cargo build first)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/socbench-lmbench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The harness finds the tools on PATH. These stand-ins only shorten the run (one repetition,
# no 100 ms interval floor): the arguments the harness gives pass through unchanged. The
# children of a -P 2 run whose millisecond windows did not overlap on a busy machine are
# refused (exit 1, one line): the run is made again, as a user would, and after three such
# refusals its children are timed one by one (--sequential), so every block still gets its
# line and the notes their stream.
mkdir "$work/bin"
for t in bw_mem lat_mem_rd; do
  case $t in
    bw_mem) short="-N 1" ;;
    *) short="-N 1 --enough-floor 0" ;;
  esac
  cat >"$work/bin/$t" <<EOF
#!/bin/sh
err=\$(mktemp "$work/err.XXXXXX")
for try in 1 2 3; do
  rc=0
  "$bin_dir/$t" $short "\$@" 2>"\$err" || rc=\$?
  grep -q 'the children did not run together' "\$err" || break
done
if [ "\$rc" = 1 ] && grep -q 'the children did not run together' "\$err"; then
  rc=0
  "$bin_dir/$t" $short --sequential "\$@" 2>"\$err" || rc=\$?
fi
cat "\$err" >&2
rm -f "\$err"
exit "\$rc"
EOF
done
chmod +x "$work/bin/bw_mem" "$work/bin/lat_mem_rd"
export PATH="$work/bin:$PATH" ENOUGH=1000 TIMING_O=0 LOOP_O=0 BENCHMP_CALIBRATION=off

# The memory part of lmbench's scripts/lmbench, with its size lists for MB=8.
MB=8 SYNC_MAX=2
[ "$(nproc)" -ge 2 ] || SYNC_MAX=1
HALF="512 1k 2k 4k 8k 16k 32k 64k 128k 256k 512k 1m"
ALL="$HALF 2m"
i=4
while [ "$i" -le "$MB" ]; do ALL="$ALL ${i}m"; HALF="$HALF $((i / 2))m"; i=$((i * 2)); done
results="$work/results"
terminal="$work/terminal"
{
  echo "[lmbench3.0 results for $(uname -a)]" 1>&2
  echo "" 1>&2
  echo \"libc bcopy unaligned 1>&2
  for i in $HALF; do bw_mem -P $SYNC_MAX "$i" bcopy; done; echo "" 1>&2
  echo \"libc bcopy aligned 1>&2
  for i in $HALF; do bw_mem -P $SYNC_MAX "$i" bcopy conflict; done; echo "" 1>&2
  echo "Memory bzero bandwidth" 1>&2
  for i in $ALL; do bw_mem -P $SYNC_MAX "$i" bzero; done; echo "" 1>&2
  echo \"unrolled bcopy unaligned 1>&2
  for i in $HALF; do bw_mem -P $SYNC_MAX "$i" fcp; done; echo "" 1>&2
  echo \"unrolled partial bcopy unaligned 1>&2
  for i in $HALF; do bw_mem -P $SYNC_MAX "$i" cp; done; echo "" 1>&2
  echo "Memory read bandwidth" 1>&2
  for i in $ALL; do bw_mem -P $SYNC_MAX "$i" frd; done; echo "" 1>&2
  echo "Memory partial read bandwidth" 1>&2
  for i in $ALL; do bw_mem -P $SYNC_MAX "$i" rd; done; echo "" 1>&2
  echo "Memory write bandwidth" 1>&2
  for i in $ALL; do bw_mem -P $SYNC_MAX "$i" fwr; done; echo "" 1>&2
  echo "Memory partial write bandwidth" 1>&2
  for i in $ALL; do bw_mem -P $SYNC_MAX "$i" wr; done; echo "" 1>&2
  echo "Memory partial read/write bandwidth" 1>&2
  for i in $ALL; do bw_mem -P $SYNC_MAX "$i" rdwr; done; echo "" 1>&2
  echo "" 1>&2
  echo "Memory load latency" 1>&2
  lat_mem_rd -P $SYNC_MAX $MB 16 32 64 128 256 512 1024
  echo "" 1>&2
  echo "Random load latency" 1>&2
  lat_mem_rd -t -P $SYNC_MAX $MB 16
  echo "" 1>&2
} 2>"$results" >"$terminal"

python3 - "$results" "$terminal" "$SYNC_MAX" <<'PY'
import re, sys

results, terminal, sync_max = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(results).read().split("\n")
data = re.compile(r"^\d+\.\d+ \d+\.\d+$")
problems = []

def block(header):
    """The lines after `header` up to its closing blank line, as getsummary reads them."""
    try:
        i = next(k for k, l in enumerate(lines) if l.startswith(header))
    except StopIteration:
        problems.append(f"no section {header!r}")
        return []
    out = []
    for l in lines[i + 1:]:
        if l.strip() == "":
            break
        out.append(l)
    return out

def biggest(header, want_size):
    """getsummary's getbiggest: lines up to the first blank or non-numeric line; the last one
    with a decimal point holds the figure of the largest size."""
    got = block(header)
    for l in got:
        if not data.match(l):
            problems.append(f"{header!r}: a line that is not data inside the block: {l!r}")
    kept = []
    for l in got:
        if not re.match(r"^\d+", l):
            break
        if re.match(r"^\d+\.", l):
            kept.append(l)
    if not kept:
        problems.append(f"{header!r}: no data (getsummary: 'no data for ...')")
        return
    size, value = kept[-1].split()
    if abs(float(size) - want_size) > 0.006 or float(value) <= 0:
        problems.append(f"{header!r}: getsummary would take {kept[-1]!r}, not the {want_size} MB line")

mb = lambda n: n * 1048576 / 1e6
biggest('"libc bcopy unaligned', mb(4))
biggest('"libc bcopy aligned', mb(4))
biggest("Memory bzero bandwidth", mb(8))
biggest('"unrolled bcopy unaligned', mb(4))
biggest('"unrolled partial bcopy unaligned', mb(4))
biggest("Memory read bandwidth", mb(8))
biggest("Memory partial read bandwidth", mb(8))
biggest("Memory write bandwidth", mb(8))
biggest("Memory partial write bandwidth", mb(8))
biggest("Memory partial read/write bandwidth", mb(8))

lat = re.compile(r"^\d+\.\d{5} \d+\.\d{3}$")
for stride in (16, 32, 64, 128, 256, 512, 1024):
    got = block(f'"stride={stride}')
    if not got:
        problems.append(f"stride {stride}: no data")
    for l in got:
        if not lat.match(l):
            problems.append(f"stride {stride}: a line that is not data inside the block: {l!r}")
    if got and float(got[-1].split()[0]) < 7.99:
        problems.append(f"stride {stride}: the block ends at {got[-1]!r}, before 8 MB")
# The random block: the second "stride=16 header, after "Random load latency".
rand = lines.index("Random load latency")
rest = lines[rand + 1:]
if not rest or rest[0] != '"stride=16':
    problems.append(f"the random block does not start with its header: {rest[:2]}")
else:
    blk = []
    for l in rest[1:]:
        if l.strip() == "":
            break
        blk.append(l)
    bad = [l for l in blk if not lat.match(l)]
    if not blk or bad:
        problems.append(f"random block: {len(blk)} lines, not data: {bad[:3]}")

# The notes went to the other stream (the terminal), not into the results file.
notes = open(terminal).read()
if sync_max > 1 and "child 1" not in notes:
    problems.append("the per-child notes of -P 2 reached neither stream")
for l in lines:
    if l.startswith(("bw_mem:", "lat_mem_rd:", "#", "  child")):
        problems.append(f"a note in the results file: {l!r}")

if problems:
    print("FAIL test_lmbench_harness.sh:", *problems, sep="\n  ", file=sys.stderr)
    sys.exit(1)
print(f"PASS test_lmbench_harness.sh: {sum(1 for l in lines if data.match(l) or lat.match(l))} data lines in 17 blocks, no note inside a block")
PY
