#!/usr/bin/env bash
# Power of `benchmp ab` on this machine: each session is one whole `benchmp ab` of one figure
# with its defaults except --time, and the script counts its verdicts over four figures (bw_mem
# rd and lat_mem_rd -t at a DRAM size, dhry, coremark), every side pinned to one CPU.
#
#   aa     A/A: the same source on both sides, every other session the same binary, the rest
#          against a second build of the same source from a copy of the tree at another
#          path. A FAIL or IMPROVED is a false alarm. Goals: at most 1 false FAIL and 1 false
#          IMPROVED in 40 sessions, PASS in at least 34 of 40.
#   paths  A/A of one binary copied to two paths of different lengths (3 to 60 characters,
#          relative to the session's folder; the shorter on A's side in every other
#          session): where a program sits must not be a change. Goals: PASS in at least 9 of
#          10 sessions, none FAIL or IMPROVED.
#   stopN  B's worker stopped (SIGSTOP, then SIGCONT) for a share of every 5 ms of wall time
#          by a helper on CPU 0: stopped time while it waits costs nothing, so its timed
#          repetitions lose a fixed share, as a uniformly slower build's would. stop2, stop3,
#          stop5 and stop10 aim at 2, 3, 5 and 10 % of time lost (AB_STOPS: the stops' µs,
#          less than the share, since each stop overshoots). Goals: at 2 % FAIL in at least
#          36 of 40 dhry and coremark sessions with a median session of at most 90 s; at 3 %
#          at least 32 of 40 bw_mem and lat_mem_rd sessions; at 5 % every session of every
#          figure with a median of at most 30 s.
# Each slowed session's real slowdown is measured independently of the figures, from the
# kernel's CPU-time accounting of the timed repetitions: B's wall time per CPU second over
# A's, minus 1 (a stopped process waits without running).
# Each line gives the session's verdict, estimate, interval, process pairs, repetition pairs,
# wall time (the whole benchmp ab: process starts, buffers and sizing too) and the variance
# components (within and between process pairs, sd of a pair's log ratio in %); the summary
# gives the counts per figure and kind and the median session time. Every session holds the
# machine-wide CPU lock (scripts/lib/bench.sh). 40 sessions of one kind and figure take
# 10-60 minutes: run the kinds and figures a question needs.
#
# Usage: scripts/bench_ab.sh [FIGURE...]     FIGURE: bw_mem lat_mem_rd dhry coremark (default all)
#
# Environment:
#   AB_SESSIONS   sessions per figure and kind (default 10)
#   AB_FIRST      the first session's number (default 1): a set cut short goes on from there
#                 into the same AB_KEEP folder, its summary over every session kept there
#   AB_TIME       benchmp ab's --time per session, s (default 60)
#   AB_REP_MS     benchmp ab's --rep-ms (default 50)
#   AB_SECOND     the second build's release folder (default: built from a copy of the tree
#                 in $TMPDIR/socbench-ab-copy, which takes a few minutes once)
#   AB_KEEP       keep every session's JSON in this folder (default: a temporary folder)
#   AB_CPU        the CPU both sides run on (default: the last one)
#   AB_KINDS      the kinds to run (default "aa stop2 stop3 stop5"; "paths" too)
#   AB_STOPS      the stops of stop2 stop3 stop5 stop10 in µs of every 5000 (default
#                 "30 80 180 420": what each takes is measured, see above)
#   AB_ARGS       more options for every benchmp ab (default none: its defaults)
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
first=${AB_FIRST:-1}
budget=${AB_TIME:-60}
rep=${AB_REP_MS:-50}
cpu=${AB_CPU:-$(( $(nproc) - 1 ))}
for v in "$sessions" "$first" "$cpu"; do
  [[ $v =~ ^[0-9]+$ ]] || die "AB_SESSIONS, AB_FIRST and AB_CPU take whole numbers" 2
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
bin=$(cd "${CARGO_TARGET_DIR:-target}/release" && pwd)
second=${AB_SECOND:-}
# Only the A/A kind runs a second build.
case " ${AB_KINDS:-aa} " in *" aa "*) ;; *) second=unused ;; esac
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

# The cgroup of the stopped sides: no quota, only to find B's processes.
cgs="$cg/socbench-ab-stop"
mkdir -p "$cgs"
echo -1 > "$cgs/cpu.cfs_quota_us"
kinds=${AB_KINDS:-aa stop2 stop3 stop5}
for k in $kinds; do
  case $k in aa|paths|stop2|stop3|stop5|stop10) ;; *) die "unknown kind '$k' in AB_KINDS (aa paths stop2 stop3 stop5 stop10)" 2 ;; esac
done
read -r -a stops <<< "${AB_STOPS:-30 80 180 420}"
[ ${#stops[@]} -eq 4 ] || die "AB_STOPS takes four stops in µs of 5000" 2
for v in "${stops[@]}"; do
  if ! [[ $v =~ ^[0-9]+$ ]] || [ "$v" -lt 1 ] || [ "$v" -ge 5000 ]; then
    die "AB_STOPS takes four whole numbers of µs from 1 to 4999" 2
  fi
done
stop_period_us=5000
read -r -a extra <<< "${AB_ARGS:-}"

# stopper PROCS_FILE STOP_US: until SIGTERM, stops every process listed in PROCS_FILE for
# STOP_US µs of every $stop_period_us µs, on CPU 0 (away from the measured CPU); it lets
# every process run again before it exits.
stopper() {
  taskset -c 0 python3 - "$1" "$2" "$stop_period_us" > /dev/null <<'PY' &
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

# The command of one figure run by the program at $2.
command_at() {
  case $1 in
    bw_mem) echo "$2 --cpus $cpu ${dram}m rd" ;;
    lat_mem_rd) echo "$2 --cpus $cpu --seed 1 -t --min ${dram}m ${dram}m 64" ;;
    dhry) echo "$2 --cpus $cpu" ;;
    coremark) echo "$2 --cpus $cpu" ;;
  esac
}

# The command of one figure with binary folder $2.
command_of() {
  command_at "$1" "$2/$1"
}

# path_of FIGURE LEN: a copy of FIGURE's binary at a path of LEN characters (at least 3)
# relative to $keep/paths; prints the path.
path_of() {
  local dir p
  dir=$(printf 'p%.0s' $(seq 1 $(( $2 - 2 ))))
  p="$dir/d"
  mkdir -p "$keep/paths/$dir"
  cp "$bin/$1" "$keep/paths/$p"
  printf '%s' "$p"
}

# session FIGURE KIND N: one benchmp ab, its JSON kept; prints the line of it.
session() {
  local fig=$1 kind=$2 n=$3 a b out rc=0 stop=""
  a=$(command_of "$fig" "$bin")
  local where=$PWD
  case $kind in
    aa) if [ $((n % 2)) -eq 0 ]; then b=$(command_of "$fig" "$bin"); else b=$(command_of "$fig" "$second"); fi ;;
    paths)
      # Lengths 3 and 60 at the ends, the others spread between, the short one on A's
      # side in odd sessions.
      local short=3 long=$(( 3 + (57 * n + sessions - 1) / sessions ))
      [ $((n % 2)) -eq 1 ] || { short=$long; long=3; }
      rm -rf "$keep/paths"
      a=$(command_at "$fig" "$(path_of "$fig" "$short")")
      b=$(command_at "$fig" "$(path_of "$fig" "$long")")
      where="$keep/paths" ;;
    stop2) stop=${stops[0]} ;;
    stop3) stop=${stops[1]} ;;
    stop5) stop=${stops[2]} ;;
    stop10) stop=${stops[3]} ;;
  esac
  [ -z "$stop" ] || b="sh -c 'echo \$\$ > $cgs/cgroup.procs && exec $(command_of "$fig" "$bin")'"
  out="$keep/$fig-$kind-$n.json"
  local t0 t1
  t0=$(date +%s.%N)
  [ -z "$stop" ] || stopper "$cgs/cgroup.procs" "$stop"
  (cd "$where" && locked "$bin/benchmp" ab --time "$budget" --rep-ms "$rep" "${extra[@]}" --json="$out" "$a" "$b") > /dev/null 2> "$keep/$fig-$kind-$n.err" || rc=$?
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
if kind == "paths":
    sides = (r["ab"]["base"]["command"].split()[0], r["ab"]["current"]["command"].split()[0])
    note = f"paths of {len(sides[0])} and {len(sides[1])} characters"
(wa, wb), (ca, cb) = f["timed_ns"], f["cpu_ns"]
if kind.startswith("stop") and min(wa, wb, ca, cb) > 0:
    r["measured_slowdown_pct"] = ((wb / cb) / (wa / ca) - 1) * 100
    json.dump(r, open(path, "w"))
    note = f"measured slowdown {r['measured_slowdown_pct']:+.2f} %"
v = f.get("variance") or {}
parts = f"w {v['within_sd_pct']:.2f} b {v['between_sd_pct']:.2f}" if v else "w - b -"
print(f"{fig:<10} {kind:<6} {n:>2} {row['verdict']:<8} {j['estimate_pct']:+6.2f} % "
      f"[{j['low_pct']:+6.2f}, {j['high_pct']:+6.2f}] {len(f.get('processes', [])):>2} procs "
      f"{len(f['differences']):>4} pairs {r['session_s']:6.1f} s {parts} {note}")
PY
}

echo "== benchmp ab power: ${figures[*]}; $sessions sessions of each of $kinds, --time $budget, CPU $cpu, DRAM size ${dram} MiB"
failed=0
for fig in "${figures[@]}"; do
  for kind in $kinds; do
    for n in $(seq "$first" "$sessions"); do
      session "$fig" "$kind" "$n" || failed=1
    done
  done
done

rc=0
python3 - "$keep" "$kinds" "${figures[@]}" <<'PY' || rc=$?
import json, statistics, sys
from pathlib import Path
keep, kinds, figures = Path(sys.argv[1]), sys.argv[2].split(), sys.argv[3:]
print("\n== summary: FAIL/IMPROVED/PASS/NOISY of the sessions, their median time, the median")
print("   time lost measured from the CPU accounting, the median variance components (sd, %)")
goal = True
def runs_of(fig, kind):
    return [json.load(open(p)) for p in sorted(keep.glob(f"{fig}-{kind}-*.json"))]
for kind in kinds:
    every = []
    for fig in figures:
        runs = runs_of(fig, kind)
        if not runs:
            continue
        every += runs
        v = [r["rows"][0]["verdict"] for r in runs]
        c = {x: v.count(x) for x in ["FAIL", "IMPROVED", "PASS", "NOISY"]}
        secs = statistics.median(r["session_s"] for r in runs)
        lost = [r["measured_slowdown_pct"] for r in runs if r.get("measured_slowdown_pct") is not None]
        comp = [r["rows"][0]["paired"].get("variance") for r in runs]
        comp = [x for x in comp if x]
        w = statistics.median(x["within_sd_pct"] for x in comp) if comp else float("nan")
        b = statistics.median(x["between_sd_pct"] for x in comp) if comp else float("nan")
        est = statistics.median(r["rows"][0]["paired"]["judgement"]["estimate_pct"] for r in runs)
        lost_s = f"lost {statistics.median(lost):4.1f} %" if lost else "             "
        print(f"{kind:<6} {fig:<10} {c['FAIL']:>2}/{c['IMPROVED']}/{c['PASS']:>2}/{c['NOISY']:>2} of {len(runs):>2}"
              f"  {secs:5.1f} s  {lost_s}  estimate {est:+5.2f} %  within {w:4.2f} between {b:4.2f}")
        n = len(runs)
        if kind == "stop5" and (c["FAIL"] < n or secs > 30):
            goal = False
        if kind == "stop2" and fig in ("dhry", "coremark") and (c["FAIL"] < 0.9 * n or secs > 90):
            goal = False
        if kind == "stop3" and fig in ("bw_mem", "lat_mem_rd") and c["FAIL"] < 0.8 * n:
            goal = False
        if kind == "stop10" and c["FAIL"] < n:
            goal = False
    if kind == "paths" and every:
        v = [r["rows"][0]["verdict"] for r in every]
        if v.count("FAIL") or v.count("IMPROVED") or v.count("PASS") < 0.9 * len(v):
            goal = False
    if kind == "aa" and every:
        v = [r["rows"][0]["verdict"] for r in every]
        n = len(v)
        if v.count("FAIL") > max(1, n // 40) or v.count("IMPROVED") > max(1, n // 40) or v.count("PASS") < 0.85 * n:
            goal = False
print("goal met" if goal else "goal missed")
sys.exit(0 if goal else 1)
PY
rmdir "$cgs" 2>/dev/null || true
[ "$failed" = 0 ] && exit "$rc"
exit 1
