#!/usr/bin/env bash
# Detection power of dto's A/B test on this machine.
#
# Runs `dto ab` repeatedly on one benchmark (default memcpy_64k, 4 KiB pages, the guide's
# default settings: 3 forked rounds of 10 000 iterations, cold cache, 2 % minimum effect):
#   A/A   libc against itself: every run should PASS (false-alarm rate; an alarm shows NOISY);
#   slow  libc against a fixture library whose memcpy forwards to libc's and then spins for
#         DTO_POWER_SLOW_PCT percent (default 10) of the time its own copy took: every run
#         should FAIL (detection rate).
# The fixture (dto/tests/fixtures/memlib.c) is compiled into a temporary folder. Each run
# holds the shared CPU lock only while it measures, and the script prints each run's trimmed
# means, change and verdict, then the counts against the goal (at least 19 of 20 each).
#
# Environment:
#   DTO_POWER_RUNS      runs of each kind (default 20)
#   DTO_POWER_BENCH     benchmark name (default memcpy_64k)
#   DTO_POWER_SLOW_PCT  extra time of the slow fixture, percent (default 10)
#   CC                  C compiler for the fixture (default cc)
#   SOCBENCH_LOCK       lock file (default /tmp/socbench-cpu.lock)
#   PERF_*              passed through to dto (see dto/README.md)
#
# Exit status: 0 goal met, 1 goal missed or a run failed, 2 bad settings, 3 missing tools.
set -euo pipefail
# shellcheck source=scripts/lib/bench.sh
. "$(dirname "$0")/lib/bench.sh"
cd "$(dirname "$0")/.."

die() { echo "dto_power: $1" >&2; exit "${2:-1}"; }
for tool in cargo python3; do
    command -v "$tool" >/dev/null || die "$tool is required" 3
done
cc=${CC:-cc}
command -v "$cc" >/dev/null || die "$cc is required to build the fixture library" 3

runs=${DTO_POWER_RUNS:-20}
bench=${DTO_POWER_BENCH:-memcpy_64k}
slow=${DTO_POWER_SLOW_PCT:-10}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "DTO_POWER_RUNS must be a whole number of at least 1" 2
[[ $slow =~ ^[0-9]+$ ]] || die "DTO_POWER_SLOW_PCT must be a whole percentage" 2

dto=$(build_release dto) || die "cannot build dto"

work=$(mktemp -d "${TMPDIR:-/tmp}/dto_power.XXXXXX")
trap 'rm -rf "$work"' EXIT
lib="$work/libslowmemcpy.so"
"$cc" -shared -fPIC -O2 -o "$lib" dto/tests/fixtures/memlib.c -ldl
export RESULTS_DIR="$work/results"

run_kind() { # kind i args...
    local kind=$1 i=$2
    shift 2
    local rc=0
    locked "$dto" ab --only "$bench" --pages 4k --json="$work/$kind-$i.json" "$@" >/dev/null 2>"$work/$kind-$i.err" || rc=$?
    if ((rc > 1)); then
        cat "$work/$kind-$i.err" >&2
        die "dto exited with status $rc"
    fi
}

echo "benchmark $bench, 4 KiB pages, $runs runs of each kind; slow fixture: +$slow % per memcpy"
for ((i = 1; i <= runs; i++)); do
    run_kind aa "$i" --baseline cpu --current cpu
    run_kind slow "$i" --baseline cpu --current "lib:$lib" --label slow --no-cpu \
        --env "DTO_FIXTURE_SLOW_PCT=$slow"
done

python3 - "$work" "$runs" "$bench" <<'PY'
import json, statistics, sys
work, runs, bench = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(kind, i):
    with open(f"{work}/{kind}-{i}.json") as f:
        r = json.load(f)
    c = [c for c in r["extra"]["cells"] if c["test"] == bench][0]
    return r, c
first, _ = load("aa", 1)
s = first["extra"]["setup"]
print(f"CPU {s['cpus'][0]} ({first['host']['cpu_model']}), timer {s['timer']} at {s['timer_hz']/1e9:.3f} GHz, "
      f"{s['rounds']} rounds x {s['iterations']} iterations, cold cache: {s['cold_cache']}, "
      f"min effect {s['min_effect_pct']} %")
print(f"{'run':>3}  {'A/A base':>9} {'A/A cur':>9} {'change':>7} {'KS p':>8} {'verdict':<7}   "
      f"{'slow base':>9} {'slow cur':>9} {'change':>7} {'KS p':>8} {'verdict':<7}")
counts = {"aa": 0, "slow": 0}
changes = {"aa": [], "slow": []}
for i in range(1, runs + 1):
    row = [f"{i:>3}"]
    for kind, want in (("aa", "PASS"), ("slow", "FAIL")):
        _, c = load(kind, i)
        counts[kind] += c["verdict"] == want
        changes[kind].append(c["change_pct"])
        row.append(f"{c['baseline_trimmed_mean_ns']:>9.0f} {c['current_trimmed_mean_ns']:>9.0f} "
                   f"{c['change_pct']:>+6.2f}% {c['ks_p']:>8.2g} {c['verdict']:<7}")
    print("  ".join(row))
print()
print(f"A/A (cpu vs cpu):         {counts['aa']}/{runs} PASS   change median {statistics.median(changes['aa']):+.2f} %, "
      f"range {min(changes['aa']):+.2f} .. {max(changes['aa']):+.2f} %")
print(f"slow fixture vs cpu:      {counts['slow']}/{runs} FAIL   change median {statistics.median(changes['slow']):+.2f} %, "
      f"range {min(changes['slow']):+.2f} .. {max(changes['slow']):+.2f} %")
goal = -(-19 * runs // 20)
ok = counts["aa"] >= goal and counts["slow"] >= goal
print(f"goal: at least {goal}/{runs} of each: {'met' if ok else 'MISSED'}")
sys.exit(0 if ok else 1)
PY
