#!/usr/bin/env bash
# CoreMark-compatible workload on one core: socbench's coremark against the C reference,
# measured side by side.
#
# Builds the release coremark binary. When COREMARK_SRC points at a checkout of
# eembc/coremark, it also copies that source to a temporary folder and builds the C
# reference there with gcc -O2 (the linux port, `make compile PORT_DIR=linux`), never
# inside the checkout or this repository. The two then take turns, A B A B ..., each run
# pinned to the same CPU with the 2K performance seeds (0,0,0x66), and the script prints
# every run's iterations per second, the median of each, the ratio ours / C, and the build
# settings. Our figures are read from coremark's JSON; the reference only prints text.
#
# Environment:
#   COREMARK_SRC         checkout of eembc/coremark; unset: socbench's coremark only
#   COREMARK_CPU         CPU to pin to (default: the last online CPU)
#   COREMARK_ROUNDS      rounds of alternation (default 2, at least 2)
#   COREMARK_ITERATIONS  iterations for every run (default: automatic, as the reference
#                        chooses them, so each timed run lasts at least 10 s); runs under
#                        10 s are not valid and make the script exit 1
#   CC                   C compiler for the reference (default gcc)
#   SOCBENCH_LOCK        lock file held around the build and each timed run
#                        (default /tmp/socbench-cpu.lock, shared with other heavy jobs)
#
# Only one core is measured here. All-core totals (one pinned context per CPU, per-cluster
# and system sums) come later with coremark's multi-context mode through benchmp.
#
# Exit status: 0 ok, 1 a run failed or did not validate, 2 bad settings, 3 missing tools.
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
    echo "bench_coremark: $1" >&2
    exit "${2:-1}"
}

for tool in cargo taskset python3; do
    command -v "$tool" >/dev/null || die "$tool is required" 3
done

lock_file=${SOCBENCH_LOCK:-/tmp/socbench-cpu.lock}
locked() {
    if command -v flock >/dev/null; then
        flock "$lock_file" "$@"
    else
        "$@"
    fi
}

cpu=${COREMARK_CPU:-$(($(nproc) - 1))}
rounds=${COREMARK_ROUNDS:-2}
iterations=${COREMARK_ITERATIONS:-0}
cc=${CC:-gcc}
[[ $cpu =~ ^[0-9]+$ ]] || die "COREMARK_CPU must be a CPU number, not '$cpu'" 2
if ! [[ $rounds =~ ^[0-9]+$ ]] || ((rounds < 2)); then
    die "COREMARK_ROUNDS must be 2 or more" 2
fi
[[ $iterations =~ ^[0-9]+$ ]] || die "COREMARK_ITERATIONS must be a whole number" 2
taskset -c "$cpu" true 2>/dev/null || die "cannot pin to cpu $cpu" 2

target_dir=${CARGO_TARGET_DIR:-target}
ours="$target_dir/release/coremark"
echo "building socbench coremark (cargo build --release -p coremark)"
locked cargo build --quiet --release -p coremark
[[ -x $ours ]] || die "no binary at $ours"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench_coremark.XXXXXX")
trap 'rm -rf "$work"' EXIT

reference=""
if [[ -n ${COREMARK_SRC:-} ]]; then
    command -v "$cc" >/dev/null || die "$cc is required to build the C reference" 3
    command -v make >/dev/null || die "make is required to build the C reference" 3
    for f in Makefile core_main.c core_list_join.c core_matrix.c core_state.c core_util.c \
        coremark.h linux/core_portme.mak posix/core_portme.c posix/core_portme.h; do
        [[ -f $COREMARK_SRC/$f ]] || die "COREMARK_SRC: no $f in $COREMARK_SRC" 2
    done
    # Build from a copy so nothing is written into the checkout.
    mkdir "$work/src"
    tar -C "$COREMARK_SRC" --exclude=.git -cf - . | tar -C "$work/src" -xf -
    echo "building the C reference ($cc -O2, linux port) in $work"
    locked make --no-print-directory -s -C "$work/src" compile PORT_DIR=linux \
        CC="$cc" OPATH="$work/" XCFLAGS="-DPERFORMANCE_RUN=1" >"$work/build.log" 2>&1 ||
        {
            cat "$work/build.log" >&2
            die "the C reference did not build"
        }
    reference="$work/coremark.exe"
    [[ -x $reference ]] || die "the C reference build left no $reference"
fi

failed=0

# One run of ours: prints "<iterations/s> <verdict>" from the JSON report.
run_ours() {
    local args=(--json)
    if ((iterations > 0)); then
        args+=(--iterations "$iterations")
    fi
    local json
    # Exit status 1 means "not valid" (e.g. too short); the JSON says why.
    json=$(locked taskset -c "$cpu" "$ours" "${args[@]}" 2>"$work/ours.err") || true
    python3 -c '
import json, sys
r = json.loads(sys.argv[1])
ips = r["iterations_per_s"]
print("%.3f %s" % (ips if ips is not None else 0.0, r["verdict"]))
' "$json" || {
        cat "$work/ours.err" >&2
        die "coremark produced no JSON report"
    }
}

# One run of the reference: prints "<iterations/s> <verdict>" from its text report.
run_reference() {
    local out
    out=$(locked taskset -c "$cpu" "$reference" 0x0 0x0 0x66 "$iterations") ||
        die "the C reference failed"
    awk '
        /^Iterations\/Sec/ { ips = $3 }
        /^Correct operation validated/ { verdict = "validated" }
        /^Errors detected/ { verdict = "errors_detected" }
        END { printf "%.3f %s\n", ips + 0, (verdict == "" ? "unknown" : verdict) }
    ' <<<"$out"
}

median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo "cpu $cpu${cpu_model:+ ($cpu_model)}; seeds 0,0,0x66, 2000 bytes;" \
    "iterations: $( ((iterations > 0)) && echo "$iterations" || echo automatic)"
echo "single core only: all-core totals come later through benchmp"
echo

: >"$work/ours.txt"
: >"$work/ref.txt"
for ((round = 1; round <= rounds; round++)); do
    result=$(run_ours)
    read -r ips verdict <<<"$result"
    printf 'round %d  socbench coremark (Rust)  %12s iterations/s  %s\n' "$round" "$ips" "$verdict"
    [[ $verdict == validated ]] || failed=1
    echo "$ips" >>"$work/ours.txt"
    if [[ -n $reference ]]; then
        result=$(run_reference)
        read -r ips verdict <<<"$result"
        printf 'round %d  C reference (gcc -O2)     %12s iterations/s  %s\n' "$round" "$ips" "$verdict"
        [[ $verdict == validated ]] || failed=1
        echo "$ips" >>"$work/ref.txt"
    fi
done

echo
ours_median=$(median <"$work/ours.txt")
printf 'median   socbench coremark (Rust)  %12s iterations/s\n' "$ours_median"
if [[ -n $reference ]]; then
    ref_median=$(median <"$work/ref.txt")
    printf 'median   C reference (gcc -O2)     %12s iterations/s\n' "$ref_median"
    awk -v a="$ours_median" -v b="$ref_median" \
        'BEGIN { if (b > 0) printf "ratio    ours / C = %.3f\n", a / b }'
fi

echo
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print("ours:      %s %s" % (r["compiler_version"], r["compiler_flags"]))
' "$("$ours" --iterations 1 --json 2>/dev/null || true)"
if [[ -n $reference ]]; then
    flags=$("$reference" 0x0 0x0 0x66 1 | awk -F': ' '/^Compiler flags/ { print $2 }')
    echo "reference: $("$cc" --version | head -n 1) $flags"
fi
echo "(figures are CoreMark-compatible iterations/s, not CoreMark scores)"

if ((failed)); then
    echo "bench_coremark: some runs did not validate (see above)" >&2
    exit 1
fi
