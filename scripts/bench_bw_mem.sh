#!/usr/bin/env bash
# Memory bandwidth on one core: socbench bw_mem against mbw and sysbench memory, measured side
# by side, and (when LMBENCH_SRC points at an lmbench checkout) against lmbench's own bw_mem.
#
# Builds the release bw_mem, installs mbw and sysbench with apt-get when they are missing, then
# runs rounds in turn on one pinned core: every bw_mem operation, then mbw (MEMCPY, DUMB,
# MCBLOCK), then sysbench memory (read, write), then lmbench's bw_mem if built, at each size.
# Each round is one A B C ... pass, holding the shared lock, so the tools see the same machine.
# It prints each round's figures, then the medians over rounds and the ratios ours / peer for
# the same access pattern, and rdvec, cpnt and wrnt against the best figure any peer reports.
#
# All figures are MB/s with MB = 10^6 bytes of the buffer per second (mbw and sysbench print
# MiB/s; they are converted). Every tool counts the buffer size once per pass, copies included.
#
# Environment:
#   BW_CPU        core to pin to (default: the last online CPU)
#   BW_ROUNDS     rounds of alternation (default 3, at least 3)
#   BW_SIZES      buffer sizes in MiB (default "64 256")
#   BW_REPS       repetitions per measurement: bw_mem -N, mbw -n, lmbench -N (default 5)
#   BW_SYSBENCH_S seconds per sysbench run (default 2)
#   LMBENCH_SRC   checkout of intel/lmbench, built with gcc -$BW_LMBENCH_BUILD (optional)
#   BW_LMBENCH_BUILD  O2 (default: distributions' build) or O (lmbench's own Makefile): the
#                 level lmbench's bw_mem is built with, and our bw_mem's --lmbench-build
#   SOCBENCH_LOCK lock file held around the build and each round (default /tmp/socbench-cpu.lock)
#
# Exit status: 0 ok, 1 a run failed, 2 bad settings, 3 missing tools.
set -euo pipefail
# shellcheck source=scripts/lib/bench.sh
. "$(dirname "$0")/lib/bench.sh"
cd "$(dirname "$0")/.."

die() {
    echo "bench_bw_mem: $1" >&2
    exit "${2:-1}"
}

as_root() {
    if [[ $(id -u) -eq 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        "$@"
    fi
}

for tool in cargo taskset python3; do
    command -v "$tool" >/dev/null || die "$tool is required" 3
done
missing=()
command -v mbw >/dev/null || missing+=(mbw)
command -v sysbench >/dev/null || missing+=(sysbench)
if ((${#missing[@]} > 0)); then
    echo "installing ${missing[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
        { as_root apt-get update -qq && as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
        die "cannot install ${missing[*]}" 3
fi


cpu=${BW_CPU:-$(($(nproc) - 1))}
rounds=${BW_ROUNDS:-3}
sizes=${BW_SIZES:-"64 256"}
reps=${BW_REPS:-5}
sysbench_s=${BW_SYSBENCH_S:-2}
[[ $cpu =~ ^[0-9]+$ ]] || die "BW_CPU must be a CPU number, not '$cpu'" 2
# A whole number of at least $2?
at_least() { [[ $1 =~ ^[0-9]+$ ]] && (($1 >= $2)); }
at_least "$rounds" 3 || die "BW_ROUNDS must be 3 or more" 2
at_least "$reps" 1 || die "BW_REPS must be 1 or more" 2
at_least "$sysbench_s" 1 || die "BW_SYSBENCH_S must be whole seconds" 2
for s in $sizes; do
    at_least "$s" 1 || die "BW_SIZES must be MiB counts, not '$s'" 2
done
taskset -c "$cpu" true 2>/dev/null || die "cannot pin to cpu $cpu" 2

ours=$(build_release bw_mem) || die "cannot build bw_mem"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench_bw_mem.XXXXXX")
trap 'rm -rf "$work"' EXIT

lmbench_build=${BW_LMBENCH_BUILD:-O2}
[[ $lmbench_build == O || $lmbench_build == O2 ]] || die "BW_LMBENCH_BUILD takes O or O2" 2
ref=""
ref_ops=(rd frd wr fwr rdwr cp fcp bzero bcopy)
if [[ -n ${LMBENCH_SRC:-} ]]; then
    src=$LMBENCH_SRC/src
    [[ -f $src/bw_mem.c ]] || die "LMBENCH_SRC: no src/bw_mem.c in $LMBENCH_SRC" 2
    command -v gcc >/dev/null || die "gcc is required to build lmbench's bw_mem" 3
    ref="$work/bw_mem_lmbench"
    rpc=()
    [[ -d /usr/include/tirpc ]] && rpc=(-I/usr/include/tirpc -ltirpc)
    echo "building lmbench's bw_mem with gcc -$lmbench_build"
    locked gcc "-$lmbench_build" -w -o "$ref" "$src/bw_mem.c" "$src/lib_timing.c" "$src/lib_mem.c" \
        "$src/lib_sched.c" "$src/lib_stats.c" "$src/getopt.c" "$src/lib_debug.c" -lm "${rpc[@]}" ||
        die "cannot build lmbench's bw_mem (it needs rpc headers: apt-get install libtirpc-dev)" 3
fi

# Our operations: lmbench's, libc's, and the peak kernels.
our_ops=(rd frd wr fwr rdwr cp fcp bcopy memcpy bzero memset rdvec wrnt cpnt mix3_1 mix2_1 mix1_1)
# One interval length for us and for lmbench's reference, so neither calibrates in the loop.
enough=20000

results="$work/results.tsv"
: >"$results"
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$results"; }

# MiB/s of a peer to MB/s.
mib() { python3 -c "import sys; print(float(sys.argv[1]) * 1.048576)" "$1"; }

one_round() {
    local round=$1 size op v line method
    for size in $sizes; do
        for op in "${our_ops[@]}"; do
            v=$(ENOUGH=$enough "$ours" --json --cpus "$cpu" -N "$reps" --lmbench-build "$lmbench_build" "${size}m" "$op" |
                python3 -c 'import json,sys; print(json.load(sys.stdin)["measurements"][0]["aggregate"]["cluster"])') ||
                die "bw_mem ${size}m $op failed"
            record "$round" "$size" bw_mem "$op" "$v"
        done
        # mbw prints one line per run and an AVG line per test; keep the runs.
        while read -r method v; do
            record "$round" "$size" mbw "$method" "$(mib "$v")"
        done < <(taskset -c "$cpu" mbw -q -n "$reps" -t0 -t1 -t2 "$size" |
            awk '$1 != "AVG" && $2 == "Method:" { for (i = 1; i < NF; i++) if ($(i+1) == "MiB/s") print $3, $i }')
        for op in read write; do
            line=$(taskset -c "$cpu" sysbench memory --threads=1 --time="$sysbench_s" \
                --memory-block-size="${size}M" --memory-total-size=1000T --memory-oper="$op" run |
                sed -n 's/.*transferred (\([0-9.]*\) MiB\/sec).*/\1/p')
            [[ -n $line ]] || die "sysbench memory $op printed no figure"
            record "$round" "$size" sysbench "$op" "$(mib "$line")"
        done
        if [[ -n $ref ]]; then
            for op in "${ref_ops[@]}"; do
                # lmbench prints "<MB> <MB/s>" on stderr.
                v=$(ENOUGH=$enough TIMING_O=0 LOOP_O=0 taskset -c "$cpu" "$ref" -N "$reps" "${size}m" "$op" 2>&1 >/dev/null |
                    awk 'NF == 2 { print $2 }')
                [[ -n $v ]] || die "lmbench bw_mem ${size}m $op printed nothing"
                record "$round" "$size" lmbench "$op" "$v"
            done
        fi
    done
}

echo
echo "one core (cpu $cpu), sizes ${sizes// /m, }m, $rounds rounds taking turns (bw_mem, mbw, sysbench${ref:+, lmbench})"
echo "bw_mem: $("$ours" --list-ops | awk '$1 == "rdvec" { sub(/,$/, "", $3); print "rdvec/wrnt/cpnt run " $3 }'), ENOUGH=$enough us, -N $reps; mbw -n $reps; sysbench ${sysbench_s} s per run"
# Each round holds the shared lock, so no other heavy job runs between A and B.
exec 9>>"$lock_file"
for ((round = 1; round <= rounds; round++)); do
    if command -v flock >/dev/null; then flock 9; fi
    one_round "$round"
    if command -v flock >/dev/null; then flock -u 9; fi
    echo "round $round done"
done
exec 9>&-

echo
LMBENCH_BUILD=$lmbench_build python3 - "$results" "$sizes" <<'EOF'
import os
import statistics
import sys
from collections import defaultdict

path, sizes = sys.argv[1], sys.argv[2].split()
runs = defaultdict(list)  # (size, tool, test) -> per-round values (a tool's runs within a round: median)
per_round = defaultdict(list)
with open(path) as f:
    for line in f:
        rnd, size, tool, test, value = line.rstrip("\n").split("\t")
        per_round[(size, tool, test, rnd)].append(float(value))
for (size, tool, test, rnd), vals in per_round.items():
    runs[(size, tool, test)].append(statistics.median(vals))
med = {k: statistics.median(v) for k, v in runs.items()}

def fig(size, tool, test):
    return med.get((size, tool, test))

# Same access pattern: ours -> (peer tool, peer test, what differs).
pairs = [
    ("rd", "sysbench", "read", "every line read; rd 4-byte loads 1 per 16 B, sysbench 8-byte loads of every word"),
    ("frd", "sysbench", "read", "every word read; frd 4-byte loads, twice sysbench's 8-byte load count"),
    ("wr", "sysbench", "write", "every line written (write-allocate); wr 4-byte stores 1 per 16 B, sysbench 8-byte"),
    ("fwr", "sysbench", "write", "every word written; under --lmbench-build O each 512 B chunk last to first, 4 bytes a store"),
    ("bcopy", "mbw", "MEMCPY", "glibc memmove vs glibc memcpy, whole buffer, copied bytes counted"),
    ("memcpy", "mbw", "MEMCPY", "the same glibc memcpy call"),
    ("fcp", "mbw", "DUMB", "element loop copy: fcp 4-byte ints, mbw 8-byte longs (as Debian's gcc built it)"),
    ("cp", "mbw", "DUMB", "cp copies one int in four (every line) but counts all bytes, as lmbench"),
    ("memset", "sysbench", "write", "whole buffer written with a non-zero value"),
    ("bzero", "sysbench", "write", "bzero writes zeros, sysbench non-zero words (zero lines are faster here)"),
]
print("medians over rounds, MB/s (10^6 bytes of buffer per second); ratio = ours / peer")
print(f"{'size':>5}  {'ours':<7} {'MB/s':>9}   {'peer':<16} {'MB/s':>9}  {'ratio':>6}  {'goal >= 1':<9}  same pattern, what differs")
for size in sizes:
    for ours, tool, test, note in pairs:
        a, b = fig(size, "bw_mem", ours), fig(size, tool, test)
        if a is None or b is None:
            continue
        r = a / b
        print(f"{size + 'm':>5}  {ours:<7} {a:9.0f}   {tool + ' ' + test:<16} {b:9.0f}  {r:6.2f}  {'met' if r >= 1.0 else 'NOT met':<9}  {note}")
print()
print("peak kernels against the best figure any peer reports (goal: at least 0.95)")
print(f"{'size':>5}  {'ours':<7} {'MB/s':>9}   {'best peer':<16} {'MB/s':>9}  {'ratio':>6}  {'goal':<9}  note")
peak = [
    ("rdvec", [("sysbench", "read")], "widest vector loads vs the best peer read"),
    ("cpnt", [("mbw", "MEMCPY"), ("mbw", "DUMB"), ("mbw", "MCBLOCK")],
     "best peer copy; MCBLOCK re-reads one 256 KiB block from cache, so it is a write stream"),
    ("cpnt", [("mbw", "MEMCPY"), ("mbw", "DUMB")], "best peer memory-to-memory copy"),
    ("wrnt", [("sysbench", "write"), ("mbw", "MCBLOCK")], "best peer write stream (non-zero data)"),
]
for size in sizes:
    for ours, cands, note in peak:
        a = fig(size, "bw_mem", ours)
        got = [(fig(size, t, x), f"{t} {x}") for t, x in cands if fig(size, t, x) is not None]
        if a is None or not got:
            continue
        b, name = max(got)
        r = a / b
        print(f"{size + 'm':>5}  {ours:<7} {a:9.0f}   {name:<16} {b:9.0f}  {r:6.2f}  {'met' if r >= 0.95 else 'NOT met':<9}  {note}")
print()
print("every figure (medians over rounds):")
for size in sizes:
    row = [f"{t}:{x} {v:.0f}" for (s, t, x), v in sorted(med.items()) if s == size]
    print(f"  {size}m: " + ", ".join(row))
lm = [(s, x) for (s, t, x) in med if t == "lmbench"]
if lm:
    print()
    print(f"lmbench-compatible operations against lmbench's own bw_mem (gcc -{os.environ['LMBENCH_BUILD']}), ratio ours / lmbench")
    for size in sizes:
        cells = []
        for op in ["rd", "frd", "wr", "fwr", "rdwr", "cp", "fcp", "bzero", "bcopy"]:
            a, b = fig(size, "bw_mem", op), fig(size, "lmbench", op)
            if b is not None and a is not None:
                cells.append(f"{op} {a / b:.2f}")
            elif b is not None:
                cells.append(f"{op} (lmbench {b:.0f})")
        print(f"  {size}m: " + ", ".join(cells))
EOF
