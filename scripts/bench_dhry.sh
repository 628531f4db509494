#!/usr/bin/env bash
# Dhrystone on one core and on all cores: socbench's dhry, both build variants, against the C
# reference built with gcc, measured side by side.
#
# Builds the release dhry binary. When DHRY_SRC points at a checkout of
# Keith-S-Thompson/dhrystone (or at its v2.1 folder), it also builds the C v2.1 reference from
# dhry_1.c and dhry_2.c, compiled separately, in a temporary folder, twice:
#   C -O2              the usual published setting; gcc inlines Proc_2/4/5 into main, Proc_3
#                      into Proc_1, Func_1 into Func_2 and Func_3 into Proc_6 (each file on
#                      its own), which is what dhry --variant pack-inline reproduces
#   C -O2 -fno-inline  no procedure merging, as the Dhrystone ground rules require and as
#                      dhry --variant strict (the default) is built
# Pairs are compared: dhry strict / C -O2 -fno-inline and dhry pack-inline / C -O2.
#
# Every build runs the same number of runs per copy. One core: each build pinned to DHRY_CPU.
# All cores: dhry -P <allowed CPUs> (one pinned child per CPU, all starting together), and the
# same number of C copies started together, each pinned with taskset to its own CPU; the
# all-core figure is the sum of the copies. The builds take turns, round after round, and
# the script prints every run, the medians and the ratios ours / C.
#
# With DHRY_DIAG=1, two diagnostic C builds join in: the same two settings with the one
# strcmp call of dhry_2.c replaced by a word-at-a-time compare like dhry's inline one
# (defined below). They are not the reference; they show how much of a ratio comes from
# glibc's strcmp rather than from the procedures.
#
# Environment:
#   DHRY_SRC     checkout of Keith-S-Thompson/dhrystone; unset: socbench's dhry only
#   DHRY_CPU     core for the one-core runs (default: the last allowed CPU)
#   DHRY_ROUNDS  rounds of alternation (default 3, at least 2)
#   DHRY_TIME    seconds the fastest dhry loop should last (default 2.5; the reference
#                needs 2); slower builds run longer
#   DHRY_ALL     0 to skip the all-core runs (default 1)
#   DHRY_DIAG    1 to add the diagnostic C builds described above (default 0)
#   CC           C compiler (default gcc)
#   SOCBENCH_LOCK  lock file held around the build and each timed run
#                (default /tmp/socbench-cpu.lock, shared with other heavy jobs)
#
# Exit status: 0 ok, 1 a run failed or did not verify, 2 bad settings, 3 missing tools.
set -euo pipefail
# shellcheck source=scripts/lib/bench.sh
. "$(dirname "$0")/lib/bench.sh"
cd "$(dirname "$0")/.."

die() { echo "bench_dhry: $1" >&2; exit "${2:-1}"; }

for tool in cargo taskset python3; do
    command -v "$tool" >/dev/null || die "$tool is required" 3
done


read -r -a allowed <<<"$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))')"
ncpus=${#allowed[@]}
cpu=${DHRY_CPU:-${allowed[$((ncpus - 1))]}}
rounds=${DHRY_ROUNDS:-3}
seconds=${DHRY_TIME:-2.5}
all=${DHRY_ALL:-1}
diag=${DHRY_DIAG:-0}
cc=${CC:-gcc}
[[ $cpu =~ ^[0-9]+$ ]] || die "DHRY_CPU must be a CPU number, not '$cpu'" 2
if ! [[ $rounds =~ ^[0-9]+$ ]] || ((rounds < 2)); then
    die "DHRY_ROUNDS must be 2 or more" 2
fi
[[ $seconds =~ ^[0-9]+([.][0-9]+)?$ ]] || die "DHRY_TIME must be a number of seconds" 2
[[ $all =~ ^[01]$ ]] || die "DHRY_ALL must be 0 or 1" 2
[[ $diag =~ ^[01]$ ]] || die "DHRY_DIAG must be 0 or 1" 2
taskset -c "$cpu" true 2>/dev/null || die "cannot pin to cpu $cpu" 2
((ncpus > 1)) || all=0

ours=$(build_release dhry) || die "cannot build dhry"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench_dhry.XXXXXX")
trap 'rm -rf "$work"' EXIT

# name|kind|program|description, one per build taking part; kind is dhry or c.
"$ours" --runs 1 --json >"$work/one.json" 2>/dev/null || die "$ours --runs 1 failed"
flags_of_ours=$(python3 - "$work/one.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["build"]
print(b["rustc"] + ", opt-level " + b["opt_level"] + ", lto " + b["lto"])
PY
)
builds=("dhry strict|dhry|strict|$flags_of_ours, every procedure a call")
pairs=()

if [[ -n ${DHRY_SRC:-} ]]; then
    command -v "$cc" >/dev/null || die "$cc is required to build the C reference" 3
    src=$DHRY_SRC
    [[ -f $src/v2.1/dhry_1.c ]] && src=$src/v2.1
    for f in dhry.h dhry_1.c dhry_2.c; do
        [[ -f $src/$f ]] || die "DHRY_SRC: no $f in $src" 2
    done
    hz=$(getconf CLK_TCK)
    # The 1988 sources declare 'extern int times ();', which clashes with glibc's
    # <sys/times.h>; drop that one line from the copy. -std=gnu89 keeps gcc 14 and later
    # from rejecting the K&R declarations; -w silences their warnings.
    cp "$src/dhry.h" "$src/dhry_1.c" "$src/dhry_2.c" "$work/"
    sed -i 's/^extern[[:space:]]*int[[:space:]]*times[[:space:]]*();//' "$work/dhry_1.c"
    if ((diag)); then
        # Diagnostic only: dhry_2.c with its strcmp replaced by a compare of 8-byte words
        # (stopping at the first difference or NUL), as dhry's inline strcmp works.
        {
            cat <<'EOF'
#include <stdint.h>
#include <string.h>
static inline __attribute__((always_inline)) int word_strcmp(const char *a, const char *b)
{
    static const int at[4] = {0, 8, 16, 23};
    int k;
    for (k = 0; k < 4; k++) {
        uint64_t x, y, stop;
        memcpy(&x, a + at[k], 8);
        memcpy(&y, b + at[k], 8);
        stop = (x ^ y) | ((x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL);
        if (stop) {
            int shift = __builtin_ctzll(stop) & ~7;
            return (int)((x >> shift) & 0xff) - (int)((y >> shift) & 0xff);
        }
    }
    return 0;
}
EOF
            sed 's/strcmp (Str_1_Par_Ref, Str_2_Par_Ref)/word_strcmp (Str_1_Par_Ref, Str_2_Par_Ref)/' \
                "$work/dhry_2.c"
        } >"$work/dhry_2w.c"
        grep -q word_strcmp\ \( "$work/dhry_2w.c" || die "DHRY_DIAG: no strcmp call found in dhry_2.c"
    fi
    c_build() { # name, dhry_2 source, flags...
        local name=$1 two=$2 exe
        shift 2
        exe="$work/c$((${#builds[@]}))"
        read -r -a flags <<<"$* -std=gnu89 -w -DTIMES -DHZ=$hz"
        echo "building $name: $cc ${flags[*]} (dhry_1.c and $two compiled separately)"
        locked "$cc" "${flags[@]}" -c "$work/dhry_1.c" -o "$work/one.o"
        locked "$cc" "${flags[@]}" -c "$work/$two" -o "$work/two.o"
        "$cc" "$work/one.o" "$work/two.o" -o "$exe"
        builds+=("$name|c|$exe|$("$cc" --version | head -n1) ${flags[*]}")
    }
    c_build "C -O2 -fno-inline" dhry_2.c -O2 -fno-inline
    builds+=("dhry pack-inline|dhry|pack-inline|$flags_of_ours, gcc -O2's inlining within each pack")
    c_build "C -O2" dhry_2.c -O2
    pairs+=("dhry strict|C -O2 -fno-inline|rules kept on both sides: every procedure a call")
    pairs+=("dhry pack-inline|C -O2|gcc -O2's inlining within each file on both sides")
    if ((diag)); then
        c_build "C -O2 -fno-inline, word strcmp" dhry_2w.c -O2 -fno-inline
        c_build "C -O2, word strcmp" dhry_2w.c -O2
        pairs+=("dhry strict|C -O2 -fno-inline, word strcmp|diagnostic: the same string compare on both sides")
        pairs+=("dhry pack-inline|C -O2, word strcmp|diagnostic: the same string compare on both sides")
    fi
else
    builds+=("dhry pack-inline|dhry|pack-inline|$flags_of_ours, gcc -O2's inlining within each pack")
    echo "DHRY_SRC is not set: measuring socbench dhry alone (point it at a checkout of"
    echo "Keith-S-Thompson/dhrystone to compare with the C reference)"
fi

# One run count per copy for every build and both core counts, so each loop does the same
# work: calibrated by dhry's faster variant to DHRY_TIME seconds on the one-core CPU, plus a
# tenth, so every build stays above the 2 s the C reference needs.
runs=$(locked "$ours" --cpus "$cpu" --variant pack-inline --time "$seconds" --json 2>/dev/null |
    python3 -c 'import json,sys; print(int(json.load(sys.stdin)["extra"]["runs"] * 1.1))')

# Runs one build on the given CPUs (one copy each) and prints its total Dhrystones/s.
measure() { # kind, program, cpu...
    local kind=$1 prog=$2
    shift 2
    local cpus
    cpus=$(IFS=,; echo "$*")
    if [[ $kind == dhry ]]; then
        # Its own verdict first (a failed or unsynchronised run writes no report to read).
        locked "$ours" --cpus "$cpus" --variant "$prog" --runs "$runs" --json \
            >"$work/run.json" 2>"$work/err" ||
            die "dhry --variant $prog on cpus $cpus failed: $(tail -n1 "$work/err")"
        python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["extra"]
if not e["verification_passed"]:
    sys.exit("dhry: verification failed")
print(sum(c["dhrystones_per_s"] for c in e["children"]))' "$work/run.json" ||
            die "dhry --variant $prog on cpus $cpus: no figure in its report"
    else
        # The reference reads the run count from stdin and prints its own figure; its K&R
        # main() returns no value, so its exit status means nothing: judge the output. All
        # copies start together, under one hold of the lock.
        # shellcheck disable=SC2016  # the positional parameters belong to the inner shell
        locked bash -c '
            prog=$1 runs=$2 dir=$3; shift 3
            for c in "$@"; do echo "$runs" | taskset -c "$c" "$prog" >"$dir/c.$c" 2>&1 & done
            wait' _ "$prog" "$runs" "$work" "$@"
        local total=0 c dps
        for c in "$@"; do
            dps=$(awk '/^Dhrystones per Second:/ {print $4}' "$work/c.$c")
            [[ -n $dps ]] || die "$prog on cpu $c printed no result (loop too short?)"
            grep -q "^Int_Glob: *5$" "$work/c.$c" || die "$prog on cpu $c: unexpected final values"
            total=$(python3 -c "print($total + $dps)")
        done
        echo "$total"
    fi
}

core_sets=("$cpu")
((all)) && core_sets+=("${allowed[*]}")
results="$work/results.tsv"
: >"$results"
echo
echo "$runs runs per copy; one core: cpu $cpu$( ((all)) && echo "; all cores: cpus ${allowed[*]// /,}, one copy each, started together"); $rounds rounds taking turns"
printf '%-5s  %-5s  %-32s  %14s  %10s\n' round cores build "Dhrystones/s" DMIPS
for ((round = 1; round <= rounds; round++)); do
    for set in "${core_sets[@]}"; do
        read -r -a cpus <<<"$set"
        for entry in "${builds[@]}"; do
            IFS='|' read -r name kind prog _ <<<"$entry"
            dps=$(measure "$kind" "$prog" "${cpus[@]}")
            printf '%s\t%s\t%s\n' "${#cpus[@]}" "$name" "$dps" >>"$results"
            printf '%-5s  %-5s  %-32s  %14.0f  %10.1f\n' "$round" "${#cpus[@]}" "$name" "$dps" \
                "$(python3 -c "print($dps / 1757)")"
        done
    done
done

echo
printf '%s\n' "${builds[@]}" >"$work/builds"
printf '%s\n' "${pairs[@]}" >"$work/pairs"
python3 - "$results" "$work/builds" "$work/pairs" <<'PY'
import statistics, sys

def rows(path):
    with open(path) as f:
        return [line.rstrip("\n").split("|") for line in f if line.strip()]

median = {}
with open(sys.argv[1]) as f:
    runs = {}
    for line in f:
        cores, name, dps = line.rstrip("\n").split("\t")
        runs.setdefault((int(cores), name), []).append(float(dps))
median = {k: statistics.median(v) for k, v in runs.items()}
print("medians (DMIPS = Dhrystones per second / 1757):")
print("  %-5s  %-32s  %14s  %10s" % ("cores", "build", "Dhrystones/s", "DMIPS"))
for (cores, name), m in median.items():
    print("  %-5d  %-32s  %14.0f  %10.1f" % (cores, name, m, m / 1757))
print("builds:")
for name, _, _, what in rows(sys.argv[2]):
    print("  %-32s  %s" % (name, what))
pairs = rows(sys.argv[3])
if pairs:
    print("ratios ours / C (medians):")
    for cores in sorted({c for c, _ in median}):
        for ours, theirs, note in pairs:
            if (cores, ours) in median and (cores, theirs) in median:
                r = median[(cores, ours)] / median[(cores, theirs)]
                label = "%d core%s: %s / %s" % (cores, "s" if cores > 1 else "", ours, theirs)
                print("  %-62s %6.3f  (%s)" % (label, r, note))
PY
if [[ -n ${DHRY_SRC:-} ]]; then
    echo "the C reference times user CPU time in 1/$(getconf CLK_TCK) s ticks; dhry uses the monotonic clock"
    ((diag)) || echo "C calls glibc's strcmp, dhry compares words inline (both allowed); DHRY_DIAG=1 adds C builds with dhry's compare"
fi
