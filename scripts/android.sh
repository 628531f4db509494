#!/usr/bin/env bash
# Runs socbench on Android phones over adb: builds static aarch64 binaries, pushes them, runs a
# tool or the suite on each device, and pulls the results back into results/.
#
# Every argument that reaches the device shell is single-quoted here, so serials and arguments
# with spaces, quotes or ';' arrive intact and can never run anything else.
set -uo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/android.sh [options] TOOL [ARGS...]
       scripts/android.sh [options] suite [--quick | --full]

Builds aarch64-unknown-linux-musl binaries (static, linked with rust-lld), pushes them to the
device, runs TOOL with ARGS (or the whole suite), and pulls the results into
results/android-<serial>-<timestamp>/. Without -s, every connected device is run in turn.

Options:
  -s SERIAL          device serial (repeatable; default: every device 'adb devices' lists)
  --device-dir DIR   folder on the device (default /data/local/tmp/socbench)
  --cpus LIST        passed to the tool as --cpus LIST (to dto as PERF_CPU, the list's first
                     CPU); checked against the CPUs the device shell's cpuset allows. The
                     suite's all-CPU entries run one child per CPU of the list
  --sched POLICY     exported as LMBENCH_SCHED on the device (e.g. UNIQUE, "CUSTOM 4 5 6 7")
  --trace            capture a trace around the run: 'ftrace record' on the device when adb
                     is root, else the device's perfetto (or atrace) with ftrace print events
  --results DIR      local results root (default results)
  --tools LIST       comma-separated binaries to build and push (default: all tools)
  --no-build         push binaries already built
  --bin-dir DIR      push the binaries in DIR, built for aarch64 elsewhere (implies --no-build;
                     default target/aarch64-unknown-linux-musl/release)
  -h, --help         this text

Needs adb on PATH (or ADB), and cargo and rustup unless --no-build or --bin-dir: a missing
one stops the script before anything is built or pushed.

Environment: ADB (adb program, default adb), CARGO_TARGET_DIR.

Exit status: 0 every run succeeded on every device; 1 a run failed, or a device could not be
reached, pushed to or pulled from; 2 nothing could start: bad arguments, a missing tool (adb,
cargo, rustup) or binary, a failed cross-build, or no device found.
USAGE
}

die() { echo "android.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=scripts/lib/plan.sh
. "$here/lib/plan.sh"

ADB=${ADB:-adb}
TARGET=aarch64-unknown-linux-musl
serials=() device_dir=/data/local/tmp/socbench cpus="" sched="" trace=0 entry_env=()
results_root=results tools="bw_mem,lat_mem_rd,dhry,coremark,dto,ftrace,benchmp" build=1 bin_dir=""

while [ $# -gt 0 ]; do
  case "$1" in
    -s) [ $# -ge 2 ] || die "-s needs a serial"; serials+=("$2"); shift ;;
    --device-dir) [ $# -ge 2 ] || die "--device-dir needs a folder"; device_dir=$2; shift ;;
    --cpus) [ $# -ge 2 ] || die "--cpus needs a CPU list"; cpus=$2; shift ;;
    --sched) [ $# -ge 2 ] || die "--sched needs a policy"; sched=$2; shift ;;
    --trace) trace=1 ;;
    --results) [ $# -ge 2 ] || die "--results needs a folder"; results_root=$2; shift ;;
    --tools) [ $# -ge 2 ] || die "--tools needs a list"; tools=$2; shift ;;
    --no-build) build=0 ;;
    --bin-dir) [ $# -ge 2 ] || die "--bin-dir needs a folder"; bin_dir=$2; build=0; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) break ;;
  esac
  shift
done
[ $# -ge 1 ] || { usage >&2; exit 2; }
tool=$1; shift
case "$device_dir" in /*) ;; *) die "--device-dir must be an absolute path" ;; esac
if [ -n "$cpus" ] && ! [[ "$cpus" =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]]; then
  die "--cpus '$cpus' is not a CPU list like 0-3,7"
fi

# Quotes one word for the device's POSIX shell: 'it'\''s' style.
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
# Quotes every argument and joins them with spaces.
qall() { local a out=""; for a in "$@"; do out+="$(q "$a") "; done; printf '%s' "${out% }"; }

# Expands a CPU list (0-3,7) into one number per line.
expand_cpus() {
  local part lo hi
  IFS=',' read -r -a parts <<< "$1"
  for part in "${parts[@]}"; do
    lo=${part%-*}; hi=${part#*-}
    seq "$lo" "$hi"
  done
}

# The host tools, before anything is built or pushed.
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found on PATH ($2)"; }
need "$ADB" "install Android's platform-tools, or set ADB to the adb program"
if [ "$build" = 1 ]; then
  need cargo "install a Rust toolchain, or push binaries already built with --no-build or --bin-dir"
  need rustup "needed to add the Rust target $TARGET; or push binaries already built with --no-build or --bin-dir"
fi

IFS=',' read -r -a tool_list <<< "$tools"
if [ "$tool" != suite ]; then
  case ",$tools," in *",$tool,"*) ;; *) die "unknown tool '$tool' (tools: $tools, or suite)" ;; esac
fi

[ -n "$bin_dir" ] || bin_dir="${CARGO_TARGET_DIR:-$top/target}/$TARGET/release"
if [ "$build" = 1 ]; then
  if ! rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
    echo "== installing the rustup target $TARGET"
    rustup target add "$TARGET" || die "cannot install the rustup target $TARGET"
  fi
  pkgs=()
  for t in "${tool_list[@]}"; do pkgs+=(-p "$t"); done
  echo "== building ${tool_list[*]} for $TARGET"
  (cd "$top" && CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=rust-lld \
    cargo build --release --target "$TARGET" "${pkgs[@]}") || die "cross-build failed"
fi
for t in "${tool_list[@]}"; do
  [ -x "$bin_dir/$t" ] || die "$bin_dir/$t is missing (build it, or drop it from --tools)"
done

if [ ${#serials[@]} -eq 0 ]; then
  # `adb devices` separates serial and state with a tab; serials may hold spaces.
  while IFS=$'\t' read -r s state; do
    [ "$state" = device ] && serials+=("$s")
  done < <("$ADB" devices 2>/dev/null | tail -n +2)
  [ ${#serials[@]} -gt 0 ] || die "no device found ('$ADB devices' lists none in the 'device' state)"
fi

# How a tool gets the CPUs of --cpus: benchmp's tools take --cpus LIST, dto pins to one CPU
# given as PERF_CPU (the list's first). Sets extra (arguments) and adds to entry_env.
cpu_args() {
  extra=()
  [ -n "$cpus" ] || return 0
  if [ "$1" = dto ]; then
    entry_env+=("PERF_CPU=${cpus%%[-,]*}")
  else
    extra=(--cpus "$cpus")
  fi
}

# Runs a command string in the device shell.
dsh() { "$ADB" -s "$serial" shell "$1"; }

# Builds the device command for one tool run: cd, environment, binary, quoted arguments,
# output redirected into the run folder.
device_cmd() {
  local label=$1 t=$2; shift 2
  local envs="" cmd kv
  [ -n "$sched" ] && envs="LMBENCH_SCHED=$(q "$sched") "
  for kv in "${entry_env[@]}"; do
    [[ "$kv" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || continue
    envs+="${kv%%=*}=$(q "${kv#*=}") "
  done
  cmd="cd $(q "$device_dir") && ${envs}$(q "./$t") $(qall "$@")"
  cmd+=" > $(q "$run_dir/$label.txt") 2> $(q "$run_dir/$label.err")"
  printf '%s' "$cmd"
}

# Starts a trace capture on the device for one run; prints what stop_trace needs.
start_trace() {
  local label=$1
  if [ "$root" = 1 ]; then
    echo "ftrace"
  elif dsh 'command -v perfetto >/dev/null 2>&1' ; then
    local cfg="$device_dir/trace.cfg"
    dsh "cat > $(q "$cfg") <<'CFG'
buffers { size_kb: 65536 fill_policy: RING_BUFFER }
data_sources { config { name: \"linux.ftrace\" ftrace_config {
  ftrace_events: \"ftrace/print\"
  ftrace_events: \"sched/sched_switch\"
  ftrace_events: \"power/cpu_frequency\"
} } }
duration_ms: 3600000
CFG" || return 1
    local out="/data/misc/perfetto-traces/socbench-$label.pftrace"
    local pid
    pid=$(dsh "perfetto --background --txt -c $(q "$cfg") -o $(q "$out")" | tr -dc '0-9')
    [ -n "$pid" ] || return 1
    echo "perfetto $pid $out"
  elif dsh 'command -v atrace >/dev/null 2>&1'; then
    dsh 'atrace --async_start -b 16384 sched freq >/dev/null' || return 1
    echo "atrace"
  else
    return 1
  fi
}

stop_trace() {
  local label=$1 how=$2 pid=${3:-} file=${4:-}
  case "$how" in
    perfetto)
      dsh "kill -TERM $(q "$pid"); while kill -0 $(q "$pid") 2>/dev/null; do sleep 0.2; done"
      "$ADB" -s "$serial" pull "$file" "$local_dir/$label.pftrace" >/dev/null ;;
    atrace)
      dsh "atrace --async_stop > $(q "$run_dir/$label.atrace.txt")" ;;
  esac
}

# Runs one tool on the device (with its trace when asked) and records its exit status.
run_one() {
  local label=$1 t=$2; shift 2
  local args=("$@") cmd rc how=""
  if [ "$trace" = 1 ]; then
    args+=(--trace)
    if ! how=$(start_trace "$label"); then
      echo "   warning: no way to trace on this device (not root, no perfetto or atrace)" >&2
      how=""
    fi
  fi
  if [ "${how%% *}" = ftrace ]; then
    cmd=$(device_cmd "$label" ftrace record -o "$run_dir/$label.trace.txt" \
      --event sched/sched_switch --event power/cpu_frequency -- "./$t" "${args[@]}")
  else
    cmd=$(device_cmd "$label" "$t" "${args[@]}")
  fi
  echo "   $label: ./$t ${args[*]}"
  dsh "$cmd; echo \"rc=\$?\"" | tr -d '\r' > "$local_dir/.rc"
  rc=$(sed -n 's/^rc=//p' "$local_dir/.rc" | tail -n 1)
  rm -f "$local_dir/.rc"
  # shellcheck disable=SC2086  # how holds up to three words by design
  [ -n "$how" ] && [ "${how%% *}" != ftrace ] && stop_trace "$label" $how
  printf '%s\t%s\t%s\t-\n' "$label" "$t" "${rc:-255}" >> "$local_dir/status.tsv"
  [ "${rc:-255}" = 0 ] || echo "   FAILED (exit ${rc:-?}); see $label.err"
}

overall=0
stamp=$(date +%Y%m%d-%H%M%S)
for serial in "${serials[@]}"; do
  safe=$(printf '%s' "$serial" | tr -c 'A-Za-z0-9._-' '_')
  local_dir="$results_root/android-$safe-$stamp"
  run_dir="$device_dir/results/$stamp"
  mkdir -p "$local_dir" || die "cannot create $local_dir"
  printf 'label\ttool\texit\tseconds\n' > "$local_dir/status.tsv"
  echo "== device $serial"
  if ! dsh 'true' >/dev/null 2>&1; then
    echo "   cannot reach the device; skipped" >&2
    overall=1; continue
  fi
  model=$(dsh 'getprop ro.product.model' | tr -d '\r')
  allowed=$(dsh 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status' | tr -d '\r')
  # shellcheck disable=SC2016  # expanded by the device shell
  freqs=$(dsh 'for c in /sys/devices/system/cpu/cpu[0-9]*; do printf "%s:%s " "${c##*/cpu}" "$(cat "$c/cpufreq/cpuinfo_max_freq" 2>/dev/null || echo -)"; done' | tr -d '\r')
  root=0; [ "$(dsh 'id -u' | tr -d '\r')" = 0 ] && root=1
  echo "   model: ${model:-unknown}; allowed CPUs: ${allowed:-unknown}; max kHz by CPU: $freqs; root: $root"
  {
    echo "serial: $serial"; echo "model: $model"; echo "allowed_cpus: $allowed"
    echo "max_freq_khz: $freqs"; echo "root: $root"
  } > "$local_dir/device.txt"
  if [ -n "$cpus" ] && [ -n "$allowed" ]; then
    mapfile -t want < <(expand_cpus "$cpus")
    mapfile -t have < <(expand_cpus "$allowed")
    for c in "${want[@]}"; do
      case " ${have[*]} " in *" $c "*) ;; *) echo "   warning: CPU $c is not in the shell's allowed CPUs ($allowed); the tool will refuse it" >&2 ;; esac
    done
  fi
  dsh "mkdir -p $(q "$run_dir")" || { echo "   cannot create $run_dir" >&2; overall=1; continue; }
  for t in "${tool_list[@]}"; do
    "$ADB" -s "$serial" push "$bin_dir/$t" "$device_dir/$t" >/dev/null || { echo "   push of $t failed" >&2; overall=1; continue 2; }
  done
  dsh "chmod 755 $(qall "${tool_list[@]/#/$device_dir/}")"

  if [ "$tool" = suite ]; then
    mode=default
    case "${1:-}" in --quick) mode=quick ;; --full) mode=full ;; "") ;; *) die "suite takes --quick or --full" ;; esac
    ncpus=$(dsh 'nproc 2>/dev/null || getconf _NPROCESSORS_ONLN' | tr -d '\r')
    # With --cpus, the all-CPU entries run one child on each CPU of the list.
    [ -n "$cpus" ] && ncpus=$(expand_cpus "$cpus" | sort -un | wc -l)
    # shellcheck disable=SC2016  # expanded by the device shell
    llc=$(dsh 'm=0; for f in /sys/devices/system/cpu/cpu0/cache/index*/size; do v=$(cat "$f"); case "$v" in *K) v=$((${v%K}*1024));; *M) v=$((${v%M}*1048576));; esac; [ "$v" -gt "$m" ] && m=$v; done; echo $m' | tr -d '\r')
    while IFS='|' read -r label envs t args; do
      case ",$tools," in *",$t,"*) ;; *) continue ;; esac
      dir="$run_dir/$label"
      case "$args $envs" in *"{dir}"*) dsh "mkdir -p $(q "$dir")" ;; esac
      # Split first, then fill in the placeholders word by word: a device folder with spaces
      # stays one argument.
      read -r -a argv <<< "$args"
      read -r -a entry_env <<< "$envs"
      argv=("${argv[@]//\{json\}/$run_dir/$label.json}")
      argv=("${argv[@]//\{csv\}/$run_dir/$label.csv}")
      argv=("${argv[@]//\{dir\}/$dir}")
      entry_env=("${entry_env[@]//\{dir\}/$dir}")
      cpu_args "$t"
      run_one "$label" "$t" "${argv[@]}" "${extra[@]}" || overall=1
    done < <(suite_plan "$mode" "${ncpus:-1}" "${llc:-0}")
    entry_env=()
  else
    entry_env=()
    cpu_args "$tool"
    run_one "$tool" "$tool" "$@" "${extra[@]}" --json="$run_dir/$tool.json" --csv="$run_dir/$tool.csv" || overall=1
  fi
  "$ADB" -s "$serial" pull "$run_dir/." "$local_dir/" >/dev/null || { echo "   pull failed" >&2; overall=1; }
  awk -F'\t' 'NR > 1 && $3 != 0 { bad = 1 } END { exit !bad }' "$local_dir/status.tsv" && overall=1
  echo "   results: $local_dir"
done
exit "$overall"
