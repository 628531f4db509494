#!/usr/bin/env bash
# Dhrystone on one core: socbench's dhry against the C reference, measured side by side.
#
# Builds the release dhry binary and runs it pinned to one core. When DHRY_SRC points at a
# checkout of Keith-S-Thompson/dhrystone (or at its v2.1 folder), it also builds the C v2.1
# reference from dhry_1.c and dhry_2.c, in a temporary folder, twice: with gcc -O2, the usual
# published setting, which inlines Proc_2/4/5 into main, Proc_3 into Proc_1, Func_1 into
# Func_2 and Func_3 into Proc_6; and with gcc -O2 -fno-inline, which merges no procedures, as
# the Dhrystone ground rules require and as dhry is built. The builds then take turns,
# A B C A B C ..., every one on the same core with the same run count, and the script prints
# each run's Dhrystones per second and DMIPS, the medians, and the ratios ours / C.
#
# Environment:
#   DHRY_SRC     checkout of Keith-S-Thompson/dhrystone; unset: socbench's dhry only
#   DHRY_CPU     core to pin to (default: the last online CPU)
#   DHRY_ROUNDS  rounds of alternation (default 3, at least 2)
#   DHRY_TIME    seconds each timed loop should last (default 2.5; the reference needs 2)
#   CC           C compiler (default gcc)
#   SOCBENCH_LOCK  lock file held around the build and each timed run
#                (default /tmp/socbench-cpu.lock, shared with other heavy jobs)
#
# Only one core is measured here; the all-core figures (one pinned copy per core, per-cluster
# and total DMIPS) come with dhry's all-core mode through benchmp.
#
# Exit status: 0 ok, 1 a run failed or did not verify, 2 bad settings, 3 missing tools.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "bench_dhry: $1" >&2; exit "${2:-1}"; }

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

last_cpu=$(($(nproc) - 1))
cpu=${DHRY_CPU:-$last_cpu}
rounds=${DHRY_ROUNDS:-3}
seconds=${DHRY_TIME:-2.5}
cc=${CC:-gcc}
[[ $cpu =~ ^[0-9]+$ ]] || die "DHRY_CPU must be a CPU number, not '$cpu'" 2
if ! [[ $rounds =~ ^[0-9]+$ ]] || ((rounds < 2)); then
    die "DHRY_ROUNDS must be 2 or more" 2
fi
[[ $seconds =~ ^[0-9]+([.][0-9]+)?$ ]] || die "DHRY_TIME must be a number of seconds" 2
taskset -c "$cpu" true 2>/dev/null || die "cannot pin to cpu $cpu" 2

target_dir=${CARGO_TARGET_DIR:-target}
ours="$target_dir/release/dhry"
echo "building socbench dhry (cargo build --release -p dhry)"
locked cargo build --quiet --release -p dhry
[[ -x $ours ]] || die "no binary at $ours"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench_dhry.XXXXXX")
trap 'rm -rf "$work"' EXIT

# name|command|flags, one per build taking part.
builds=("socbench dhry (Rust)|$ours|$(
    "$ours" --runs 1 --json 2>/dev/null |
        python3 -c 'import json,sys; b=json.load(sys.stdin)["build"]; print(b["compiler"] + ", opt-level " + b["opt_level"])'
)")

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
    for variant in "-O2" "-O2 -fno-inline"; do
        name="C ${variant}"
        exe="$work/dhry_c${variant// /}"
        read -r -a flags <<<"$variant -std=gnu89 -w -DTIMES -DHZ=$hz"
        echo "building the C reference: $cc ${flags[*]} (dhry_1.c and dhry_2.c compiled separately)"
        locked "$cc" "${flags[@]}" -c "$work/dhry_1.c" -o "$work/dhry_1.o"
        locked "$cc" "${flags[@]}" -c "$work/dhry_2.c" -o "$work/dhry_2.o"
        "$cc" "$work/dhry_1.o" "$work/dhry_2.o" -o "$exe"
        builds+=("$name|$exe|$("$cc" --version | head -n1) ${flags[*]}")
    done
else
    echo "DHRY_SRC is not set: measuring socbench dhry alone (point it at a checkout of"
    echo "Keith-S-Thompson/dhrystone to compare with the C reference)"
fi

# One run count for every build, so each timed loop does the same work: calibrated by dhry to
# DHRY_TIME seconds, plus a quarter so a faster build still stays above the 2 s the C
# reference needs.
runs=$(locked taskset -c "$cpu" "$ours" --time "$seconds" --json 2>/dev/null |
    python3 -c 'import json,sys; print(int(json.load(sys.stdin)["runs"] * 1.25))')

results="$work/results.tsv"
: >"$results"
echo
echo "one core (cpu $cpu), $runs runs per timed loop, $rounds rounds taking turns"
printf '%-5s  %-24s  %14s  %10s\n' round build "Dhrystones/s" DMIPS
for ((round = 1; round <= rounds; round++)); do
    for entry in "${builds[@]}"; do
        IFS='|' read -r name exe _ <<<"$entry"
        if [[ $exe == "$ours" ]]; then
            dps=$(locked taskset -c "$cpu" "$ours" --runs "$runs" --json |
                python3 -c '
import json, sys
r = json.load(sys.stdin)
if not r["verification"]["passed"]:
    sys.exit("dhry: verification failed")
print(r["dhrystones_per_s"])')
        else
            # The reference reads the run count from stdin and prints its own figure. Its
            # K&R main() returns no value, so its exit status means nothing: judge the output.
            out=$(echo "$runs" | locked taskset -c "$cpu" "$exe" || true)
            dps=$(awk '/^Dhrystones per Second:/ {print $4}' <<<"$out")
            [[ -n $dps ]] || die "$name printed no result (loop too short?)"
            grep -q "^Int_Glob: *5$" <<<"$out" || die "$name: unexpected final values"
        fi
        printf '%s\t%s\n' "$name" "$dps" >>"$results"
        printf '%-5s  %-24s  %14.0f  %10.1f\n' "$round" "$name" "$dps" \
            "$(python3 -c "print($dps / 1757)")"
    done
done

echo
printf '%s\n' "${builds[@]}" | python3 -c '
import statistics, sys
from collections import OrderedDict

flags = OrderedDict(line.rstrip("\n").split("|")[0::2] for line in sys.stdin)
runs = OrderedDict((name, []) for name in flags)
with open(sys.argv[1]) as f:
    for line in f:
        name, dps = line.rstrip("\n").split("\t")
        runs[name].append(float(dps))
median = {name: statistics.median(v) for name, v in runs.items()}
print("medians (DMIPS = Dhrystones per second / 1757):")
for name, m in median.items():
    print(f"  {name:<24}  {m:14.0f} Dhrystones/s  {m / 1757:10.1f} DMIPS   [{flags[name]}]")
ours = next(iter(median))
notes = {
    "C -O2": "gcc inlines six procedures within their files, which the ground rules forbid",
    "C -O2 -fno-inline": "no procedure merging on either side, as the ground rules ask",
}
for name, m in median.items():
    if name != ours:
        note = notes.get(name, "")
        print(f"ratio ours / {name}: {median[ours] / m:.3f}  ({note})")
' "$results"
echo "the C reference times user CPU time in 1/$(getconf CLK_TCK) s ticks; dhry uses the monotonic clock"
echo "all-core figures: not measured here yet; they come with dhry's all-core mode through benchmp"
