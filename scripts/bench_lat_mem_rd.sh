#!/usr/bin/env bash
# lat_mem_rd on this machine: L1 latency, DRAM random latency with and without huge pages,
# and the wall time of a full random sweep with predicted counts against the same sweep
# recalibrated from scratch at every size.
#
# Builds the release lat_mem_rd and runs, one at a time, each under the shared CPU lock:
#   1. L1: a random sweep from 4K to 32K (stride 64, -N 5); the summary's L1 plateau in ns
#      and in cycles (cpufreq's maximum clock, else /proc/cpuinfo "cpu MHz", an estimate).
#   2. DRAM: random chains at 256M and 1G (stride 64, default -N 11) with 4 KiB pages, with
#      transparent huge pages asked (thp) and with reserved 2 MiB hugetlb pages (huge); the
#      pages the kernel actually gave are read from the JSON. As root the script reserves
#      the hugetlb pages itself (echo N > /proc/sys/vm/nr_hugepages) and puts the old value
#      back right after (and on any exit); otherwise the huge rows are skipped with a note.
#   3. Time to result: 'lat_mem_rd -t 256m 64' (123 sizes) with predicted counts, then the
#      same with --recalibrate-each-size, back to back, for each -N in LMR_REPS and each
#      interval floor in LMR_FLOORS; the ratio of their wall times (goal: at most 0.2). Both
#      measure the framework calibration (--recalibrate, no ENOUGH/TIMING_O/LOOP_O): once for
#      the first, at every size for the second.
#
# Environment:
#   LMR_CPU       CPU list for the child (default: the last online CPU)
#   LMR_REPS      -N values of the sweep comparison (default "11", lmbench's; "" skips it)
#   LMR_FLOORS    --enough-floor values in µs (default "100000 0": lmbench's 100 ms floor,
#                 then the calibrated ENOUGH alone)
#   SOCBENCH_LOCK lock file held around the build and each run (default /tmp/socbench-cpu.lock)
#
# Exit status: 0 ok, 1 a run failed, 2 bad settings, 3 missing tools.
set -euo pipefail
# shellcheck source=scripts/lib/bench.sh
. "$(dirname "$0")/lib/bench.sh"
cd "$(dirname "$0")/.."

die() {
    echo "bench_lat_mem_rd: $1" >&2
    exit "${2:-1}"
}

for tool in cargo python3 flock; do
    command -v "$tool" >/dev/null || die "$tool is required" 3
done

cpu=${LMR_CPU:-$(($(nproc) - 1))}
reps_list=${LMR_REPS-11}
for n in $reps_list; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || die "LMR_REPS must hold whole numbers, not '$n'" 2
done
floors_list=${LMR_FLOORS-100000 0}
for f in $floors_list; do
    [[ $f =~ ^(0|[1-9][0-9]{0,7})$ ]] || die "LMR_FLOORS must hold whole numbers of µs, not '$f'" 2
done

# Calibration is part of what is compared: nothing may skip it.
unset ENOUGH TIMING_O LOOP_O BENCHMP_CALIBRATION LMBENCH_SCHED

bin=$(build_release lat_mem_rd) || die "cannot build lat_mem_rd"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench_lat_mem_rd.XXXXXX")
hp_file=/proc/sys/vm/nr_hugepages
hp_old=""
cleanup() {
    if [[ -n $hp_old ]]; then
        echo "$hp_old" >"$hp_file" || echo "bench_lat_mem_rd: could not restore $hp_file to $hp_old" >&2
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# run NAME ARGS...: one locked run with its JSON in $work/NAME.json; prints nothing.
run() {
    local name=$1
    shift
    if ! locked "$bin" --cpus "$cpu" --json="$work/$name.json" "$@" >"$work/$name.txt" 2>"$work/$name.err"; then
        cat "$work/$name.err" >&2
        die "lat_mem_rd $* failed"
    fi
}

py() { python3 - "$work" "$@"; }

echo
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs, child on CPU $cpu"

# 1. L1 latency.
run l1 -t -N 5 --min 4k --max 32k 1 64
py <<'EOF'
import json, sys
r = json.load(open(sys.argv[1] + "/l1.json"))
s = r["extra"]["summary"][0]
l1 = [p for p in s["shape"]["plateaus"] if p["label"] == "L1"]
pts = r["extra"]["curves"][0]["points"]
ns = l1[0]["ns"] if l1 else sorted(p["ns"] for p in pts)[len(pts) // 2]
how = "L1 plateau of the summary" if l1 else "median over 4K..32K (no plateau found)"
caches = ", ".join(c["name"] for c in s["caches"]) or "no sysfs caches"
clock = s["clock"]
if clock:
    src = {"cpufreq_max": "cpufreq cpuinfo_max_freq", "option": "--mhz",
           "cpuinfo_estimate": "/proc/cpuinfo cpu MHz, an estimate: no cpufreq here"}[clock["source"]]
    cyc = f"{ns * clock['mhz'] / 1000:.1f} cycles at {clock['mhz']:.0f} MHz ({src})"
else:
    cyc = "cycles unavailable (no cpufreq, no cpu MHz)"
print(f"L1 load latency (random, stride 64, 4K..32K, -N 5; {how}): {ns:.3f} ns = {cyc}")
print(f"  sysfs caches: {caches}")
EOF

# 2. DRAM random latency with and without huge pages.
huge_ok=0
need=$(((1024 * 1024 * 1024 + 2 * 4096 + 2 * 1024 * 1024 - 1) / (2 * 1024 * 1024)))
free_hp=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
if ((free_hp >= need)); then
    huge_ok=1
elif [[ $(id -u) -eq 0 && -w $hp_file ]]; then
    hp_old=$(cat "$hp_file")
    echo $((hp_old + need - free_hp)) >"$hp_file"
    free_hp=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
    if ((free_hp >= need)); then
        huge_ok=1
        echo "reserved $need hugetlb pages of 2 MiB (nr_hugepages $hp_old -> $(cat "$hp_file"))"
    else
        echo "note: asked for $need hugetlb pages but only $free_hp could be reserved: huge rows skipped"
    fi
else
    echo "note: huge rows skipped: $need free hugetlb pages are needed and only root can reserve them"
fi
rows=()
for size in 256m 1g; do
    len=$([[ $size == 1g ]] && echo 1024 || echo 256)
    for pages in 4k thp huge; do
        if [[ $pages == huge && $huge_ok -eq 0 ]]; then
            continue
        fi
        run "dram_${size}_$pages" -t --pages "$pages" --min "$size" "$len" 64
        rows+=("dram_${size}_$pages")
    done
done
py "${rows[@]}" <<'EOF'
import json, sys
work, names = sys.argv[1], sys.argv[2:]
print("DRAM random load latency (-t, stride 64, -N 11, one size each):")
print(f"  {'size':>5}  {'pages':<5}  {'ns/load':>8}  pages obtained (child's smaps)")
def h(b):
    for s, u in ((30, "G"), (20, "M"), (10, "K")):
        if b >= 1 << s and b % (1 << s) == 0:
            return f"{b >> s}{u}"
    return str(b)
for n in names:
    r = json.load(open(f"{work}/{n}.json"))
    p = r["extra"]["curves"][0]["points"][0]
    got = p["children"][0]["pages"] if p["children"] else {}
    obtained = (f"page size {h(got.get('page_size_bytes', 0))}, hugetlb {h(got.get('hugetlb_bytes', 0))}, "
                f"THP {h(got.get('anon_huge_bytes', 0))}, resident {h(got.get('rss_bytes', 0))}")
    size, pages = n.split("_")[1:]
    print(f"  {size.upper():>5}  {pages:<5}  {p['ns']:8.1f}  {obtained}")
EOF

# Give the reserved pages back before the long sweeps.
if [[ -n $hp_old ]]; then
    echo "$hp_old" >"$hp_file"
    echo "nr_hugepages restored to $hp_old"
    hp_old=""
fi

# 3. Time to result.
for n in $reps_list; do
    for floor in $floors_list; do
        run "sweep_predicted_N${n}_F$floor" -t -N "$n" --enough-floor "$floor" --recalibrate 256m 64
        run "sweep_recal_N${n}_F$floor" -t -N "$n" --enough-floor "$floor" --recalibrate-each-size 256m 64
    done
done
if [[ -n $reps_list && -n $floors_list ]]; then
    # shellcheck disable=SC2086 # the values are one word each
    py "$reps_list" $floors_list <<'EOF'
import json, sys
work, reps, floors = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
print("time to result, 'lat_mem_rd -t 256m 64' (123 sizes; an interval counts when >= 0.95 x ENOUGH,")
print("ENOUGH = max(calibrated, --enough-floor)):")
for n in reps:
    for f in floors:
        a = json.load(open(f"{work}/sweep_predicted_N{n}_F{f}.json"))
        b = json.load(open(f"{work}/sweep_recal_N{n}_F{f}.json"))
        def line(r, label):
            t = r["extra"]["timing"]
            enough = sorted({m["enough_us"] for m in r["measurements"]})
            en = "/".join(f"{e / 1000:g}" for e in enough)
            return (f"    {label:<28} {r['wall_ns'] / 1e9:7.1f} s  (ENOUGH {en} ms; framework calibration "
                    f"{t['framework_calibration_ns'] / 1e9:6.1f} s, count sizing {t['count_sizing_ns'] / 1e9:5.1f} s, "
                    f"{t['sizes_whose_prediction_was_confirmed']}/{t['sizes']} predictions confirmed by the first interval, "
                    f"shortest accepted {t['shortest_accepted_interval_ns'] / 1e6:.2f} ms)")
        floor = "lmbench's 100 ms" if f == "100000" else ("none, calibrated ENOUGH only" if f == "0" else f"{int(f) / 1000:g} ms")
        print(f"  -N {n}, --enough-floor {f} ({floor}):")
        print(line(a, "predicted counts:"))
        print(line(b, "recalibrated at every size:"))
        ratio = a["wall_ns"] / b["wall_ns"]
        verdict = "goal met" if ratio <= 0.2 else "goal not met"
        print(f"    ratio predicted / recalibrated: {ratio:.3f} (goal <= 0.2: {verdict})")
    # Do shorter intervals move the figures? The two predicted sweeps, size by size.
    if "100000" in floors and "0" in floors:
        def curve(f):
            r = json.load(open(f"{work}/sweep_predicted_N{n}_F{f}.json"))
            return {p["size_bytes"]: p["ns"] for p in r["extra"]["curves"][0]["points"]}
        lm, fast = curve("100000"), curve("0")
        def spread(lo, hi):
            q = sorted(fast[s] / lm[s] for s in lm if s in fast and lo <= s < hi)
            if not q:
                return "no sizes"
            return (f"median {q[len(q) // 2]:.3f}, 10th {q[len(q) // 10]:.3f}, "
                    f"90th {q[(9 * len(q)) // 10]:.3f} over {len(q)} sizes")
        print(f"  -N {n}, latency with the calibrated ENOUGH / with the 100 ms floor (predicted sweeps):")
        print(f"    below 32K:  {spread(0, 32 << 10)}")
        print(f"    32K..32M:   {spread(32 << 10, 32 << 20)}")
        print(f"    32M and up: {spread(32 << 20, 1 << 40)}")
EOF
fi
