#!/usr/bin/env bash
# CoreMark-compatible workload, one core and all cores: socbench's coremark against the C
# reference, measured side by side.
#
# Builds the release coremark binary. When COREMARK_SRC points at a checkout of
# eembc/coremark, it also copies that source to a temporary folder and builds the C
# reference there with gcc -O2 (the linux port, `make compile PORT_DIR=linux`), never
# inside the checkout or this repository: once single-context, and once with one context
# per CPU (MULTITHREAD=$(nproc), USE_PTHREAD, the reference's own unpinned threads). Each
# round then runs, in turn: ours on one pinned CPU, the C reference pinned to that CPU,
# ours with -P $(nproc) (one pinned process per CPU), the multi-context C reference. All use
# the 2K performance seeds (0,0,0x66). The script prints every run's iterations per second,
# the medians, the ratios ours / C, and the build settings. Our figures are read from
# coremark's JSON; the reference only prints text.
#
# For all-core runs two figures are shown: the reference's (contexts × iterations / the
# longest context's time) and socbench's sum of per-core iterations/s (each context over its
# own time). They differ when the contexts do not finish together.
#
# Environment:
#   COREMARK_SRC         checkout of eembc/coremark; unset: socbench's coremark only
#   COREMARK_CPU         CPU for the single-core runs (default: the last online CPU)
#   COREMARK_ROUNDS      rounds of alternation (default 2, at least 2)
#   COREMARK_ITERATIONS  iterations for every context (default: automatic, as the reference
#                        chooses them, so each timed run lasts at least 10 s); runs under
#                        10 s are not valid and make the script exit 1
#   CC                   C compiler for the reference (default gcc)
#   SOCBENCH_LOCK        lock file held around the builds and each timed run
#                        (default /tmp/socbench-cpu.lock, shared with other heavy jobs)
#
# Exit status: 0 ok, 1 a run failed or did not validate, 2 bad settings, 3 missing tools.
set -euo pipefail
# shellcheck source=scripts/lib/bench.sh
. "$(dirname "$0")/lib/bench.sh"
cd "$(dirname "$0")/.."

die() {
    echo "bench_coremark: $1" >&2
    exit "${2:-1}"
}

for tool in cargo taskset python3; do
    command -v "$tool" >/dev/null || die "$tool is required" 3
done


ncpu=$(nproc)
cpu=${COREMARK_CPU:-$((ncpu - 1))}
rounds=${COREMARK_ROUNDS:-2}
iterations=${COREMARK_ITERATIONS:-0}
cc=${CC:-gcc}
[[ $cpu =~ ^[0-9]+$ ]] || die "COREMARK_CPU must be a CPU number, not '$cpu'" 2
if ! [[ $rounds =~ ^[0-9]+$ ]] || ((rounds < 2)); then
    die "COREMARK_ROUNDS must be 2 or more" 2
fi
[[ $iterations =~ ^[0-9]+$ ]] || die "COREMARK_ITERATIONS must be a whole number" 2
taskset -c "$cpu" true 2>/dev/null || die "cannot pin to cpu $cpu" 2

ours=$(build_release coremark) || die "cannot build coremark"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench_coremark.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Builds the C reference from the copy in $work/src into $work/$1 with extra XCFLAGS $2
# (and XLFLAGS $3); prints the executable's path.
build_reference() {
    local out="$work/$1"
    mkdir -p "$out"
    locked make --no-print-directory -s -C "$work/src" compile PORT_DIR=linux \
        CC="$cc" OPATH="$out/" XCFLAGS="-DPERFORMANCE_RUN=1 $2" XLFLAGS="${3:-}" \
        >"$out/build.log" 2>&1 ||
        {
            cat "$out/build.log" >&2
            die "the C reference ($1) did not build"
        }
    [[ -x $out/coremark.exe ]] || die "the C reference build left no $out/coremark.exe"
    echo "$out/coremark.exe"
}

reference=""
reference_all=""
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
    reference=$(build_reference one "")
    if ((ncpu > 1)); then
        reference_all=$(build_reference all "-DMULTITHREAD=$ncpu -DUSE_PTHREAD=1" -lpthread)
    fi
fi

failed=0

# One run of ours with the given placement options: prints "<iterations/s> <verdict>
# <sum of per-core iterations/s>" from the JSON report.
run_ours() {
    local args=(--json "$@")
    if ((iterations > 0)); then
        args+=(--iterations "$iterations")
    fi
    local json
    # Exit status 1 means "not valid" (e.g. too short); the JSON says why.
    json=$(locked "$ours" "${args[@]}" 2>"$work/ours.err") || true
    python3 -c '
import json, sys
r = json.loads(sys.argv[1])
x = r["extra"]
ips = x["iterations_per_s"]
total = r["measurements"][0]["aggregate"]["cluster"]
print("%.3f %s %.3f" % (ips if ips is not None else 0.0, x["verdict"], total))
' "$json" || {
        cat "$work/ours.err" >&2
        die "coremark produced no JSON report"
    }
}

# One run of a reference build ($1), with the given command prefix (e.g. taskset): prints
# "<iterations/s> <verdict>" from its text report.
run_reference() {
    local exe=$1 out
    shift
    out=$(locked "$@" "$exe" 0x0 0x0 0x66 "$iterations") ||
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
echo "single core: cpu $cpu${cpu_model:+ ($cpu_model)}; all cores: -P $ncpu;" \
    "seeds 0,0,0x66, 2000 bytes per context;" \
    "iterations: $( ((iterations > 0)) && echo "$iterations" || echo automatic)"
echo

for f in ours ref ours_all ours_all_sum ref_all; do
    : >"$work/$f.txt"
done
label_ours="socbench coremark (Rust), 1 core"
label_ref="C reference (gcc -O2), 1 core"
label_ours_all="socbench coremark (Rust), $ncpu cores"
label_ref_all="C reference (gcc -O2), $ncpu pthreads"

# show WHEN LABEL FIGURE [NOTE]: one aligned result line.
show() {
    printf '%-8s %-38s %12s iterations/s%s\n' "$1" "$2" "$3" "${4:+  $4}"
}

for ((round = 1; round <= rounds; round++)); do
    read -r ips verdict _ <<<"$(run_ours --cpus "$cpu")"
    show "round $round" "$label_ours" "$ips" "$verdict"
    [[ $verdict == validated ]] || failed=1
    echo "$ips" >>"$work/ours.txt"
    if [[ -n $reference ]]; then
        read -r ips verdict <<<"$(run_reference "$reference" taskset -c "$cpu")"
        show "round $round" "$label_ref" "$ips" "$verdict"
        [[ $verdict == validated ]] || failed=1
        echo "$ips" >>"$work/ref.txt"
    fi
    if ((ncpu > 1)); then
        read -r ips verdict sum <<<"$(run_ours -P "$ncpu")"
        show "round $round" "$label_ours_all" "$ips" "$verdict (sum of per-core $sum)"
        [[ $verdict == validated ]] || failed=1
        echo "$ips" >>"$work/ours_all.txt"
        echo "$sum" >>"$work/ours_all_sum.txt"
        if [[ -n $reference_all ]]; then
            read -r ips verdict <<<"$(run_reference "$reference_all" env)"
            show "round $round" "$label_ref_all" "$ips" "$verdict"
            [[ $verdict == validated ]] || failed=1
            echo "$ips" >>"$work/ref_all.txt"
        fi
    fi
done

ratio() {
    awk -v a="$1" -v b="$2" -v what="$3" \
        'BEGIN { if (b > 0) printf "ratio    %s = %.3f\n", what, a / b }'
}

echo
ours_median=$(median <"$work/ours.txt")
show median "$label_ours" "$ours_median"
if [[ -n $reference ]]; then
    ref_median=$(median <"$work/ref.txt")
    show median "$label_ref" "$ref_median"
    ratio "$ours_median" "$ref_median" "ours / C, 1 core"
fi
if ((ncpu > 1)); then
    all_median=$(median <"$work/ours_all.txt")
    sum_median=$(median <"$work/ours_all_sum.txt")
    show median "$label_ours_all" "$all_median" "(sum of per-core $sum_median)"
    if [[ -n $reference_all ]]; then
        ref_all_median=$(median <"$work/ref_all.txt")
        show median "$label_ref_all" "$ref_all_median"
        ratio "$all_median" "$ref_all_median" "ours / C, all cores"
    fi
    ratio "$all_median" "$ours_median" "ours all cores / ours 1 core"
fi

echo
python3 -c '
import json, sys
x = json.loads(sys.argv[1])["extra"]
print("ours:      %s %s" % (x["compiler_version"], x["compiler_flags"]))
' "$("$ours" --cpus "$cpu" --iterations 1 --json 2>/dev/null || true)"
if [[ -n $reference ]]; then
    flags=$("$reference" 0x0 0x0 0x66 1 | awk -F': ' '/^Compiler flags/ { print $2 }')
    echo "reference: $("$cc" --version | head -n 1) $flags"
    if [[ -n $reference_all ]]; then
        flags=$("$reference_all" 0x0 0x0 0x66 1 | awk -F': ' '/^Compiler flags/ { print $2 }')
        echo "reference, all cores: $flags"
    fi
    echo "(our contexts are pinned processes, one per CPU; the reference's threads are not pinned)"
fi
echo "(figures are CoreMark-compatible iterations/s, not CoreMark scores)"

if ((failed)); then
    echo "bench_coremark: some runs did not validate (see above)" >&2
    exit 1
fi
