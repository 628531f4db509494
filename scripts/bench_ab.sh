#!/usr/bin/env bash
# Power of `benchmp ab` on this machine: each session is one whole `benchmp ab` of one figure,
# and the script counts its verdicts over four figures (bw_mem rd and lat_mem_rd -t at a DRAM
# size, dhry, coremark), every side pinned to one CPU.
#
#   A/A    AB_SESSIONS sessions per figure with the same source on both sides: every other
#          one the same binary, the rest against a second build of the same source from a
#          copy of the tree at another path (a layout the code-placement flag may not fully
#          pin). A FAIL is a false alarm. Goal: at most 1 in all A/A sessions.
#   slow5  AB_SESSIONS sessions per figure with B's worker stopped (SIGSTOP, then SIGCONT)
#          for 150 µs of every 5 ms of wall time (AB_STOP): stopped time while it waits
#          costs nothing, so its timed repetitions lose a fixed share, about 5 % with the
#          stops' overshoot. (A 95 % CPU quota here took 2-8 %, switching between sessions
#          with the phase of the 4 ms scheduler tick; AB_SLOW5_BY=quota still uses one.)
#          Goal: FAIL in at least 95 %.
#   slow10 the same at 90 % (about 10 %). Goal: FAIL in all.
#   slow2  AB_SLOW2 sessions per figure at 98 % (about 2 %): the detection rate, no goal.
# What a quota takes varies with the workload and the phase of the periods, so each slowed
# session's real slowdown is measured independently of the figures, from the kernel's CPU-time
# accounting of the timed repetitions: B's wall time per CPU second over A's, minus 1 (a
# throttled process waits without running).
# Each line gives the session's verdict, estimate, interval, process pairs, repetition pairs and
# wall time (the whole benchmp ab: process starts, buffers and sizing too); the summary
# gives the counts per figure and kind and the median session time. Every session holds the
# machine-wide CPU lock (scripts/lib/bench.sh).
#
# Usage: scripts/bench_ab.sh [FIGURE...]     FIGURE: bw_mem lat_mem_rd dhry coremark (default all)
#
# Environment:
#   AB_SESSIONS   sessions per figure and kind (default 10)
#   AB_SLOW2      sessions per figure at 2 % (default 5; 0 skips)
#   AB_TIME       benchmp ab's --time per session, s (default 15)
#   AB_REP_MS     benchmp ab's --rep-ms (default 50: a CPU quota slows a process only once it
#                 runs past its 9.x ms of a 10 ms period, so repetitions must span periods)
#   AB_SECOND     the second build's release folder (default: built from a copy of the tree
#                 in $TMPDIR/socbench-ab-copy, which takes a few minutes once)
#   AB_KEEP       keep every session's JSON in this folder (default: a temporary folder)
#   AB_CPU        the CPU both sides run on (default: the last one)
#   AB_KINDS      the kinds to run (default "aa slow10 slow5 slow2")
#   AB_QUOTAS     the slowed kinds' quotas in µs of 10 000 (default "9000 9500 9800" for
#                 slow10, slow5 and slow2: what each takes is measured, see above)
#   AB_SLOW5_BY   how slow5 slows B: stop (default) or quota
#   AB_STOP       slow5's stops: "STOPPED_US PERIOD_US" (default "150 5000")
#
# Exit status: 0 every goal met, 1 a goal missed or a session failed, 2 bad settings,
# 3 missing tools or no cgroup v1 CPU controller.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib/bench.sh
. "$here/lib/bench.sh"
top=$(cd "$here/.." && pwd)
cd "$top"

die() { echo "bench_ab: $1" >&2; exit "${2:-1}"; }
for tool in cargo python3 flock; do
  command -v "$tool" >/dev/null || die "$tool is required" 3
done
sessions=${AB_SESSIONS:-10}
slow2=${AB_SLOW2:-5}
budget=${AB_TIME:-15}
rep=${AB_REP_MS:-50}
cpu=${AB_CPU:-$(( $(nproc) - 1 ))}
for v in "$sessions" "$slow2" "$cpu"; do
  [[ $v =~ ^[0-9]+$ ]] || die "AB_SESSIONS, AB_SLOW2 and AB_CPU take whole numbers" 2
done
[[ $budget =~ ^[0-9]+([.][0-9]+)?$ ]] || die "AB_TIME takes seconds" 2
[[ $rep =~ ^[0-9]+([.][0-9]+)?$ ]] || die "AB_REP_MS takes milliseconds" 2
figures=("$@")
[ ${#figures[@]} -gt 0 ] || figures=(bw_mem lat_mem_rd dhry coremark)
for f in "${figures[@]}"; do
  case $f in bw_mem|lat_mem_rd|dhry|coremark) ;; *) die "unknown figure '$f' (bw_mem lat_mem_rd dhry coremark)" 2 ;; esac
done
cg=/sys/fs/cgroup/cpu
[ -w "$cg/cgroup.procs" ] || die "no writable cgroup v1 CPU controller at $cg (root needed)" 3

for p in bw_mem lat_mem_rd dhry coremark benchmp; do
  build_release "$p" >/dev/null || die "cannot build $p"
done
bin="$top/${CARGO_TARGET_DIR:-target}/release"
second=${AB_SECOND:-}
if [ -z "$second" ]; then
  copy="${TMPDIR:-/tmp}/socbench-ab-copy"
  echo "== a second build of the same source, from a copy of the tree in $copy" >&2
  mkdir -p "$copy"
  git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$copy"
  (cd "$copy" && locked cargo build --quiet --release \
     -p bw_mem -p lat_mem_rd -p dhry -p coremark) || die "the second build failed"
  second="$copy/target/release"
fi
keep=${AB_KEEP:-}
if [ -z "$keep" ]; then
  keep=$(mktemp -d "${TMPDIR:-/tmp}/socbench-ab.XXXXXX")
  trap 'end_stopper; rm -rf "$keep"' EXIT
fi
mkdir -p "$keep"
[ -n "${AB_KEEP:-}" ] && trap 'end_stopper' EXIT

# The cgroups of the slowed sides: quota of 10 ms periods.
slowed() {
  local name="$cg/socbench-ab-$1"
  mkdir -p "$name"
  echo 10000 > "$name/cpu.cfs_period_us"
  echo "$2" > "$name/cpu.cfs_quota_us"
  printf '%s\n' "$name"
}
read -r q10 q5 q2 <<< "${AB_QUOTAS:-9000 9500 9800}"
for q in "$q10" "$q5" "$q2"; do
  if ! [[ $q =~ ^[0-9]+$ ]] || [ "$q" -lt 1000 ] || [ "$q" -gt 10000 ]; then
    die "AB_QUOTAS takes three quotas from 1000 to 10000 µs" 2
  fi
done
kinds=${AB_KINDS:-aa slow10 slow5 slow2}
for k in $kinds; do
  case $k in aa|slow10|slow5|slow2) ;; *) die "unknown kind '$k' in AB_KINDS (aa slow10 slow5 slow2)" 2 ;; esac
done
slow5_by=${AB_SLOW5_BY:-stop}
case $slow5_by in stop|quota) ;; *) die "AB_SLOW5_BY takes stop or quota" 2 ;; esac
read -r stop_us stop_period_us <<< "${AB_STOP:-150 5000}"
if ! [[ $stop_us =~ ^[0-9]+$ && $stop_period_us =~ ^[0-9]+$ ]] || [ "$stop_us" -lt 1 ] ||
   [ "$stop_us" -ge "$stop_period_us" ]; then
  die "AB_STOP takes two whole numbers of µs, the first below the second" 2
fi
cg2=$(slowed 2 "$q2")
cg5=$(slowed 5 "$q5")
cg10=$(slowed 10 "$q10")
# slow5 by stops: a cgroup without a quota, only to find B's processes.
cgs=$(slowed stop -1)

# stopper PROCS_FILE: until SIGTERM, stops every process listed in PROCS_FILE for
# $stop_us µs of every $stop_period_us µs, on CPU 0 (away from the measured CPU); it lets
# every process run again before it exits.
stopper() {
  taskset -c 0 python3 - "$1" "$stop_us" "$stop_period_us" > /dev/null <<'PY' &
import os, signal, sys, time
procs, stop, period = sys.argv[1], int(sys.argv[2]) / 1e6, int(sys.argv[3]) / 1e6
done = False
def finish(*_):
    global done
    done = True
signal.signal(signal.SIGTERM, finish)
def send(pids, sig):
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass
pids, refresh, t = [], 0.0, time.monotonic()
while not done:
    now = time.monotonic()
    if now >= refresh:  # new workers join every process pair
        pids = [int(x) for x in open(procs).read().split()]
        refresh = now + 0.05
    send(pids, signal.SIGSTOP)
    try:
        time.sleep(stop)
    finally:
        send(pids, signal.SIGCONT)
    t += period
    time.sleep(max(0.0, t - time.monotonic()))
PY
  stopper_pid=$!
}

# Ends the stopper, which resumes every process it stopped, and waits until it has.
end_stopper() {
  [ -n "${stopper_pid:-}" ] || return 0
  kill "$stopper_pid" 2>/dev/null || true
  while kill -0 "$stopper_pid" 2>/dev/null; do sleep 0.02; done
  stopper_pid=""
}
stopper_pid=""

# A DRAM size: four times the last-level cache, at least 64 MiB.
llc=$("$bin/benchmp" topology --json | python3 -c 'import json, sys; t = json.load(sys.stdin); first = t["cpus"][0]["id"]; print(max([c["size_bytes"] for c in t["caches"] if first in c["shared_cpus"]] or [0]))')
dram=$(( (llc * 4 + 1048575) / 1048576 )); [ "$dram" -lt 64 ] && dram=64

# The command of one figure with binary folder $2.
command_of() {
  case $1 in
    bw_mem) echo "$2/bw_mem --cpus $cpu ${dram}m rd" ;;
    lat_mem_rd) echo "$2/lat_mem_rd --cpus $cpu --seed 1 -t --min ${dram}m ${dram}m 64" ;;
    dhry) echo "$2/dhry --cpus $cpu" ;;
    coremark) echo "$2/coremark --cpus $cpu" ;;
  esac
}

# session FIGURE KIND N: one benchmp ab, its JSON kept; prints the line of it.
session() {
  local fig=$1 kind=$2 n=$3 a b out rc=0 group=""
  a=$(command_of "$fig" "$bin")
  case $kind in
    aa) if [ $((n % 2)) -eq 0 ]; then b=$(command_of "$fig" "$bin"); else b=$(command_of "$fig" "$second"); fi ;;
    slow2) group=$cg2 ;;
    slow5) if [ "$slow5_by" = stop ]; then group=$cgs; else group=$cg5; fi ;;
    slow10) group=$cg10 ;;
  esac
  [ -z "$group" ] || b="sh -c 'echo \$\$ > $group/cgroup.procs && exec $(command_of "$fig" "$bin")'"
  out="$keep/$fig-$kind-$n.json"
  local t0 t1
  t0=$(date +%s.%N)
  [ "$group" != "$cgs" ] || stopper "$cgs/cgroup.procs"
  locked "$bin/benchmp" ab --time "$budget" --rep-ms "$rep" --json="$out" "$a" "$b" > /dev/null 2> "$keep/$fig-$kind-$n.err" || rc=$?
  end_stopper
  t1=$(date +%s.%N)
  if [ "$rc" -gt 1 ] || [ ! -s "$out" ]; then
    echo "$fig $kind $n: benchmp ab failed (exit $rc): $(tail -n 1 "$keep/$fig-$kind-$n.err")"
    return 1
  fi
  python3 - "$out" "$fig" "$kind" "$n" "$t0" "$t1" <<'PY'
import json, sys
path, fig, kind, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
r = json.load(open(path))
# The whole session's wall time: process starts, buffers and sizing too, not only the pairs.
r["session_s"] = float(sys.argv[6]) - float(sys.argv[5])
json.dump(r, open(path, "w"))
row = r["rows"][0]
f = row["paired"]
j = f["judgement"]
note = "A/A'" if kind == "aa" and n % 2 else ""
(wa, wb), (ca, cb) = f["timed_ns"], f["cpu_ns"]
if kind != "aa" and min(wa, wb, ca, cb) > 0:
    r["measured_slowdown_pct"] = ((wb / cb) / (wa / ca) - 1) * 100
    json.dump(r, open(path, "w"))
    note = f"measured slowdown {r['measured_slowdown_pct']:+.2f} %"
print(f"{fig:<10} {kind:<6} {n:>2} {row['verdict']:<8} {j['estimate_pct']:+6.2f} % "
      f"[{j['low_pct']:+6.2f}, {j['high_pct']:+6.2f}] {len(f.get('processes', [])):>2} procs "
      f"{len(f['differences']):>4} pairs {r['session_s']:6.1f} s {note}")
PY
}

echo "== benchmp ab power: ${figures[*]}; $sessions sessions per kind, $slow2 at 2 %, --time $budget, CPU $cpu, DRAM size ${dram} MiB"
failed=0
for fig in "${figures[@]}"; do
  for kind in $kinds; do
    count=$sessions
    [ "$kind" = slow2 ] && count=$slow2
    for n in $(seq 1 "$count"); do
      session "$fig" "$kind" "$n" || failed=1
    done
  done
done

rc=0
python3 - "$keep" "$sessions" "${figures[@]}" <<'PY' || rc=$?
import json, statistics, sys
from pathlib import Path
keep, sessions, figures = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
goal = True
print("\n== summary (FAIL count of sessions; median seconds per session)")
print("(slowed arms: FAIL count, then the median slowdown measured from the CPU accounting)")
print(f"{'figure':<10} {'A/A FAIL':>9} {'~10% FAIL':>16} {'~5% FAIL':>16} {'~2% FAIL':>16} {'median s':>9}")
totals = {"aa": [0, 0], "slow10": [0, 0], "slow5": [0, 0], "slow2": [0, 0]}
for fig in figures:
    cells, secs = [], []
    for kind in ["aa", "slow10", "slow5", "slow2"]:
        runs = [json.load(open(p)) for p in sorted(keep.glob(f"{fig}-{kind}-*.json"))]
        fails = sum(r["rows"][0]["verdict"] == "FAIL" for r in runs)
        totals[kind][0] += fails
        totals[kind][1] += len(runs)
        secs += [r.get("session_s", r["rows"][0]["paired"]["seconds"]) for r in runs]
        sizes = [r["measured_slowdown_pct"] for r in runs if r.get("measured_slowdown_pct") is not None]
        size = f" ({statistics.median(sizes):.1f} %)" if sizes else ""
        cells.append(f"{fails}/{len(runs)}{size}")
    med = statistics.median(secs) if secs else float("nan")
    print(f"{fig:<10} {cells[0]:>9} {cells[1]:>16} {cells[2]:>16} {cells[3]:>16} {med:>9.1f}")
    if fig != "coremark" and med > 30:
        goal = False
aa, s10, s5 = totals["aa"], totals["slow10"], totals["slow5"]
print(f"all        {aa[0]}/{aa[1]:<7} {s10[0]}/{s10[1]:<7} {s5[0]}/{s5[1]:<7} {totals['slow2'][0]}/{totals['slow2'][1]}")
goal = goal and aa[0] <= max(1, aa[1] // 40) and s10[0] == s10[1] and s5[0] >= 0.95 * s5[1]
# The goals are for the sizes named: say when an arm's measured slowdown was another one.
print("goal met" if goal else "goal missed")
sys.exit(0 if goal else 1)
PY
for c in "$cg2" "$cg5" "$cg10" "$cgs"; do rmdir "$c" 2>/dev/null || true; done
[ "$failed" = 0 ] && exit "$rc"
exit 1
