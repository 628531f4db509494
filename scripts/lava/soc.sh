#!/bin/sh
# The run step of socbench-soc.yaml: what an SoC's kernel gives socbench, checked on the device
# itself with its static binaries, each check a tool run with its JSON report in a results
# folder that report.sh reports as socbench.sh's are (a test set `topology` with every
# cluster's size and capacity, a case per check with its headline figure and per-cluster
# figures):
#   - xc-bw_mem-rd: bw_mem with one child on the first CPU and one on the last (two clusters
#     of a big.LITTLE SoC), traced: its
#     trace_marker slices captured by `ftrace record` into xc-trace.txt in the folder;
#   - dhry-all, coremark-all: Dhrystone and the CoreMark-compatible workload on every CPU, a
#     figure per cluster;
#   - bw_mem-neon-rdvec, -wrnt, -cpnt: the NEON memory kernels (`--isa neon`; a skip, exit 3,
#     where the CPU has none);
#   - counters: bw_mem --counters with the events the CPU's PMU lists (cycles, instructions);
#     a skip naming why when the kernel lets no process open one.
# POSIX sh, no bash and no Python: it runs on busybox or mksh as socbench.sh does.

usage() {
  cat <<'USAGE'
Usage: scripts/lava/soc.sh [--bin-dir DIR] [--out DIR] [--archive-to-log yes|no] [--upload-url URL]

Runs socbench's SoC checks (a run over every cluster with its trace, Dhrystone and the
CoreMark-compatible workload per cluster, the NEON memory kernels, the PMU's counters) from
binaries already built, into a results folder, then reports it with report.sh.

  --bin-dir DIR        the static binaries (benchmp, bw_mem, dhry, coremark, ftrace; default
                       target/release of this checkout)
  --out DIR            results folder, which must not exist yet (default
                       output/soc-<timestamp> in the current folder)
  --archive-to-log W   yes: also print the results archive into the log (base64)
  --upload-url URL     post the results archive there (see socbench.sh)
  -h, --help           this text

Exit status: 0 every check ran and was reported (a failed check is a failed test case); 1 a
LAVA helper failed; 2 bad options or a missing binary (nothing ran); 128+n interrupted by
signal n.
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/lib/cpus.sh
. "$top/scripts/lib/cpus.sh"

raise() {
  if command -v lava-test-raise >/dev/null 2>&1; then
    lava-test-raise "soc.sh: $*" >&2 || true
  fi
}
die() {
  echo "soc.sh: $*" >&2
  raise "$*"
  exit 2
}
need_value() { [ "$1" -ge 2 ] || die "$2 needs a value (see --help)"; }

bin="" out="" to_log="" upload=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin-dir) need_value $# "$1"; bin=$2; shift ;;
    --out) need_value $# "$1"; out=$2; shift ;;
    --archive-to-log) need_value $# "$1"; to_log=$2; shift ;;
    --upload-url) need_value $# "$1"; upload=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
case "$to_log" in ""|no|yes) ;; *) die "--archive-to-log '$to_log' is not yes or no" ;; esac
case "$upload" in ""|http://*|https://*) ;; *) die "--upload-url '$upload' is not an http(s) URL" ;; esac
[ -n "$bin" ] || bin="${CARGO_TARGET_DIR:-$top/target}/release"
[ -d "$bin" ] || die "$bin is not a folder"
bin=$(cd "$bin" && pwd)
for t in benchmp bw_mem dhry coremark ftrace; do
  [ -x "$bin/$t" ] || die "$bin/$t is missing or not executable"
  "$bin/$t" --version >/dev/null 2>&1 || die "$bin/$t does not run here (built for another machine?)"
done
[ -n "$out" ] || out="output/soc-$(date +%Y%m%d-%H%M%S)"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
[ ! -e "$out" ] || die "--out $out already exists (give a new folder)"
mkdir -p "$out" || die "cannot make --out $out"

# Every CPU this test may use: one child on each, so every cluster takes part.
allowed=$(cpus_allowed)
if [ -n "$allowed" ] && cpus_valid "$allowed"; then
  n=$(cpus_expand "$allowed" | wc -l | tr -d ' ')
else
  n=$(grep -c '^processor' /proc/cpuinfo)
fi
[ "$n" -ge 1 ] || n=1
if [ -n "$allowed" ] && cpus_valid "$allowed"; then
  first_cpu=$(cpus_expand "$allowed" | head -n 1)
  last_cpu=$(cpus_expand "$allowed" | tail -n 1)
else
  first_cpu=0 last_cpu=$((n - 1))
fi
# The run across clusters: two children where there are two CPUs.
if [ "$n" -ge 2 ]; then xc_p=2 xc_cpus="$first_cpu,$last_cpu"; else xc_p=1 xc_cpus=$first_cpu; fi

# The events of --counters: those the PMU lists under the kernel's generic names (a PMU that
# lists none gets the default list, refused in one line with the reason, a skip).
events=""
for dir in /sys/bus/event_source/devices/*/events; do
  [ -d "$dir" ] || continue
  if [ -e "$dir/cpu_cycles" ] || [ -e "$dir/cpu-cycles" ]; then
    case ",$events," in *,cycles,*) ;; *) events="${events:+$events,}cycles" ;; esac
  fi
  if [ -e "$dir/inst_retired" ] || [ -e "$dir/instructions" ]; then
    case ",$events," in *,instructions,*) ;; *) events="${events:+$events,}instructions" ;; esac
  fi
done

child=""
# shellcheck disable=SC2317  # reached through the traps below
on_signal() {
  trap '' INT TERM HUP
  if [ -n "$child" ]; then
    kill -TERM "$child" 2>/dev/null
    wait "$child" 2>/dev/null
  fi
  echo "soc.sh: interrupted by SIG$1" >&2
  exit "$2"
}
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP

printf 'label\ttool\texit\tseconds\n' > "$out/status.tsv"
# check LABEL TOOL CMD...: runs CMD (its report in LABEL.json and .csv, its output in
# LABEL.txt and .err) and records it in status.tsv under TOOL. A parallel run its tool refused
# because the children ran apart (another task, or on an emulated SoC another vCPU, held a
# child's CPU) is made again, three times in all, as a user would.
check() {
  label=$1 tool=$2
  shift 2
  echo "== $label: $*"
  start=$(date +%s)
  tries=0
  while :; do
    tries=$((tries + 1))
    "$@" "--json=$out/$label.json" "--csv=$out/$label.csv" < /dev/null > "$out/$label.txt" 2> "$out/$label.err" &
    child=$!
    wait "$child"
    rc=$?
    child=""
    if [ "$rc" -ne 1 ] || [ "$tries" -ge 3 ] || ! grep -q 'the children did not run together' "$out/$label.err"; then
      break
    fi
    echo "   its children ran apart (try $tries of 3): again"
  done
  printf '%s\t%s\t%s\t%s\n' "$label" "$tool" "$rc" "$(($(date +%s) - start))" >> "$out/status.tsv"
  [ "$rc" -eq 0 ] || echo "   exit $rc: $(tail -n 1 "$out/$label.err")"
}

echo "== socbench SoC checks on $n CPUs (${allowed:-all}); binaries $bin; results $out"
echo "== the PMU lists: ${events:-no cycles or instructions event (the default list is asked, and refused)}"
# The run across clusters, traced: ftrace record owns tracefs for it and restores it. One
# child on the first CPU and one on the last (a little and a big core on a big.LITTLE SoC):
# an emulated SoC's vCPUs outnumber the CPUs of the host that runs them, and children that
# cannot all run at once are refused, where two can.
check xc-bw_mem-rd bw_mem "$bin/ftrace" record -o "$out/xc-trace.txt" --buffer-kb 4096 -- \
  "$bin/bw_mem" -P "$xc_p" --cpus "$xc_cpus" -N 3 --trace --stdout 8m rd
check dhry-all dhry "$bin/dhry" -P "$n"
check coremark-all coremark "$bin/coremark" -P "$n"
for op in rdvec wrnt cpnt; do
  check "bw_mem-neon-$op" bw_mem "$bin/bw_mem" --isa neon -N 3 --stdout 8m "$op"
done
if [ -n "$events" ]; then
  check counters bw_mem "$bin/bw_mem" "--counters=$events" -N 3 --stdout 8m rd
else
  check counters bw_mem "$bin/bw_mem" --counters -N 3 --stdout 8m rd
fi

set -- "$out" --benchmp "$bin/benchmp"
[ -n "$upload" ] && set -- "$@" --upload-url "$upload"
[ "$to_log" = yes ] && set -- "$@" --archive-to-log
sh "$here/report.sh" "$@"
