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
       scripts/android.sh [options] suite [--quick | --full] [--only TOOL]... [--power SRC[,SRC...]]
                          [--power-cmd CMD] [--power-hz HZ] [--power-baseline S] [--quiet-wait S]
                          [--no-rerun]

Builds aarch64-unknown-linux-musl binaries (static, linked with rust-lld), pushes them to the
device, runs TOOL with ARGS (or the whole suite: `benchmp suite` on the device, the same plan
and executor as on a computer, one adb call), and pulls the results into
results/android-<serial>-<timestamp>/. Without -s, every connected device is run in turn.
The suite's power options go to `benchmp suite`, which gives them to every tool on the device
(a --power-cmd runs there); a single TOOL takes them among its own ARGS.

Options:
  -s SERIAL          device serial (repeatable; default: every device 'adb devices' lists)
  --device-dir DIR   folder on the device (default /data/local/tmp/socbench)
  --cpus LIST        passed to the tool as --cpus LIST (to dto as PERF_CPU, the list's first
                     CPU); checked against the CPUs the device shell's cpuset allows. The
                     suite gets --cpus LIST: its all-CPU entries run one child per CPU of it
  --sched POLICY     exported as LMBENCH_SCHED on the device (e.g. UNIQUE, "CUSTOM 4 5 6 7")
  --trace            capture a trace around the run: 'ftrace record' on the device when adb
                     is root, else the device's perfetto (or atrace) with ftrace print events
  --results DIR      local results root (default results)
  --tools LIST       comma-separated binaries to build and push (default: all tools)
  --no-build         push binaries already built
  --bin-dir DIR      push the binaries in DIR, built for aarch64 elsewhere (implies --no-build;
                     default target/aarch64-unknown-linux-musl/release)
  -h, --help         this text

Needs adb and timeout (coreutils) on PATH (adb: or ADB), and cargo and rustup unless
--no-build or --bin-dir: a missing one stops the script before anything is built or pushed.

Every adb call has a time limit, and one that runs out is one line naming the call: a device
that does not answer is skipped (exit 1), an 'adb devices' that does not answer is no device
found (exit 2). A device that does not answer the first probe leaves no results folder.

Environment: ADB (adb program, default adb); ADB_TIMEOUT (seconds for each adb call but the
runs of the tools: the probes, pushes, pulls and trace control; default 60); ADB_RUN_TIMEOUT
(seconds for each tool run, a suite entry (benchmp suite --entry-timeout) or the one TOOL;
default 0, no limit);
CARGO_TARGET_DIR.

Exit status: 0 every run succeeded on every device; 1 a run failed, or a device could not be
reached, pushed to or pulled from; 2 nothing could start: bad arguments, a missing tool (adb,
timeout, cargo, rustup) or binary, a results folder that cannot be written, a failed
cross-build, or no device found; 128+n interrupted by signal n (the running adb call is
stopped first).
USAGE
}

die() { echo "android.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=scripts/lib/tools.sh
. "$here/lib/tools.sh"
# shellcheck source=scripts/lib/cpus.sh
. "$here/lib/cpus.sh"
# shellcheck source=scripts/lib/outdir.sh
. "$here/lib/outdir.sh"
# shellcheck source=scripts/lib/child.sh
. "$here/lib/child.sh"
child_default_int "$0" "$@"

ADB=${ADB:-adb} adb_timeout=${ADB_TIMEOUT:-60} run_timeout=${ADB_RUN_TIMEOUT:-0}
TARGET=aarch64-unknown-linux-musl
serials=() device_dir=/data/local/tmp/socbench cpus="" sched="" trace=0 entry_env=()
results_root=results tools=${ALL_BINARIES// /,} build=1 bin_dir=""

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
if [ -n "$cpus" ] && ! cpus_valid "$cpus"; then
  die "--cpus '$cpus' is not a CPU list like 0-3,7"
fi
if ! [[ $adb_timeout =~ ^[0-9]+$ ]] || [ "$adb_timeout" -eq 0 ]; then
  die "ADB_TIMEOUT '$adb_timeout' is not a number of seconds above 0"
fi
[[ $run_timeout =~ ^[0-9]+$ ]] || die "ADB_RUN_TIMEOUT '$run_timeout' is not a number of seconds (0: no limit)"
suite_args=()
if [ "$tool" = suite ]; then
  while [ $# -gt 0 ]; do
    case "$1" in
      --quick|--full|--no-rerun) suite_args+=("$1") ;;
      --only) [ $# -ge 2 ] || die "suite: --only needs a tool name"
              case " $SUITE_TOOLS " in *" $2 "*) ;; *) die "suite: unknown tool '$2' (tools: $SUITE_TOOLS)" ;; esac
              suite_args+=(--only "$2"); shift ;;
      # As one word, so a value starting with '-' stays a value.
      --power|--power-cmd|--power-hz|--power-baseline|--quiet-wait)
        [ $# -ge 2 ] || die "suite: $1 needs a value"; suite_args+=("$1=$2"); shift ;;
      *) die "suite takes --quick or --full, --only TOOL, --quiet-wait S, --no-rerun and the power options (--power, --power-cmd, --power-hz, --power-baseline)" ;;
    esac
    shift
  done
fi
outdir_creatable "$results_root" || die "--results $results_root $outdir_why"

# Quotes one word for the device's POSIX shell: 'it'\''s' style.
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
# Quotes every argument and joins them with spaces.
qall() { local a out=""; for a in "$@"; do out+="$(q "$a") "; done; printf '%s' "${out% }"; }

# The host tools, before anything is built or pushed.
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found on PATH ($2)"; }
need "$ADB" "install Android's platform-tools, or set ADB to the adb program"
need timeout "coreutils: every adb call has a time limit"
if [ "$build" = 1 ]; then
  need cargo "install a Rust toolchain, or push binaries already built with --no-build or --bin-dir"
  need rustup "needed to add the Rust target $TARGET; or push binaries already built with --no-build or --bin-dir"
fi

IFS=',' read -r -a tool_list <<< "$tools"
for t in "${tool_list[@]}"; do
  case " $ALL_BINARIES " in *" $t "*) ;; *) die "--tools: unknown tool '$t' (tools: $ALL_BINARIES)" ;; esac
done
if [ "$tool" != suite ]; then
  case ",$tools," in *",$tool,"*) ;; *) die "unknown tool '$tool' (tools: $tools, or suite)" ;; esac
else
  case ",$tools," in *",benchmp,"*) ;; *) die "suite runs benchmp suite on the device: --tools must include benchmp" ;; esac
fi

[ -n "$bin_dir" ] || bin_dir="${CARGO_TARGET_DIR:-$top/target}/$TARGET/release"
if [ "$build" = 1 ]; then
  if ! rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
    echo "== installing the rustup target $TARGET"
    rustup target add "$TARGET" || die "cannot install the rustup target $TARGET"
  fi
  pkgs=()
  for t in "${tool_list[@]}"; do pkgs+=(-p "$(tool_package "$t")"); done
  echo "== building ${tool_list[*]} for $TARGET"
  child_traps android.sh
  here_was=$PWD
  cd "$top" || exit 1
  child_run env CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=rust-lld \
    cargo build --release --target "$TARGET" "${pkgs[@]}" || die "cross-build failed"
  cd "$here_was" || exit 1
fi
for t in "${tool_list[@]}"; do
  [ -x "$bin_dir/$t" ] || die "$bin_dir/$t is missing (build it, or drop it from --tools)"
done

# Scratch files for what adb prints, and the traps that stop a running adb call.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/socbench-android.XXXXXX") || die "cannot make a scratch folder"
trap 'rm -rf "$scratch"' EXIT
child_traps android.sh

# adb_do LIMIT ARGS...: $ADB ARGS with a time limit of LIMIT seconds (0: none), in a process
# group of its own so that a signal stops it at once; its output in $scratch/out, its errors
# in $scratch/err. Returns adb's status; when the limit ran out sets adb_why to say so (else
# to adb's last error line).
adb_do() {
  local limit=$1 rc
  shift
  child_run --out "$scratch/out" --err "$scratch/err" timeout -k 5 "$limit" "$ADB" "$@"
  rc=$?
  case "$rc" in
    0) adb_why="" ;;
    124|137) adb_why="did not answer within $limit s ($( [ "$limit" = "$adb_timeout" ] && echo ADB_TIMEOUT || echo ADB_RUN_TIMEOUT))" ;;
    *) adb_why="failed (exit $rc$(tail -n 1 "$scratch/err" | tr -d '\r' | sed 's/^/: /'))" ;;
  esac
  return "$rc"
}
# The call as a person would type it, for messages (a long shell command cut short).
adb_words() { local w="adb $*"; [ ${#w} -le 100 ] || w="${w:0:97}..."; printf '%s' "$w"; }

if [ ${#serials[@]} -eq 0 ]; then
  adb_do "$adb_timeout" devices || die "'$(adb_words devices)' $adb_why"
  # `adb devices` separates serial and state with a tab; serials may hold spaces.
  while IFS=$'\t' read -r s state; do
    [ "$state" = device ] && serials+=("$s")
  done < <(tail -n +2 "$scratch/out")
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

# dsh CMD: runs a command string in the device shell (time limit ADB_TIMEOUT); its output,
# carriage returns dropped, in dsh_out. A call that does not answer in time is one line; the
# device is then skipped (dsh_lost).
dsh() {
  local rc=0
  adb_do "$adb_timeout" -s "$serial" shell "$1" || rc=$?
  dsh_out=$(tr -d '\r' < "$scratch/out")
  case "$rc" in 124|137) dsh_lost "$(adb_words -s "$serial" shell "$1")" ;; esac
  return "$rc"
}
# dsh_lost CALL: the line for a device that stopped answering.
dsh_lost() {
  echo "android.sh: device $serial: '$1' $adb_why; skipped" >&2
  lost=1
}

# Builds the device command for one tool run: cd, environment, binary, quoted arguments,
# output redirected into the run folder (LABEL.txt and .err; to $out_base.txt and .err instead
# when out_base is set).
device_cmd() {
  local label=$1 t=$2; shift 2
  local envs="" cmd kv base=${out_base:-$run_dir/$label}
  [ -n "$sched" ] && envs="LMBENCH_SCHED=$(q "$sched") "
  for kv in "${entry_env[@]}"; do
    [[ "$kv" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || continue
    envs+="${kv%%=*}=$(q "${kv#*=}") "
  done
  cmd="cd $(q "$device_dir") && ${envs}$(q "./$t") $(qall "$@")"
  cmd+=" > $(q "$base.txt") 2> $(q "$base.err")"
  printf '%s' "$cmd"
}

# start_trace LABEL: starts a trace capture on the device for one run; sets how to what
# stop_trace needs. Returns 1 when there is no way to trace here (or the device was lost).
start_trace() {
  local label=$1
  how=""
  if [ "$root" = 1 ]; then
    how=ftrace
  elif dsh 'command -v perfetto >/dev/null 2>&1'; then
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
    dsh "perfetto --background --txt -c $(q "$cfg") -o $(q "$out")" || return 1
    local pid=${dsh_out//[!0-9]/}
    [ -n "$pid" ] || return 1
    how="perfetto $pid $out"
  elif [ "$lost" = 0 ] && dsh 'command -v atrace >/dev/null 2>&1'; then
    dsh 'atrace --async_start -b 16384 sched freq >/dev/null' || return 1
    how=atrace
  else
    return 1
  fi
}

stop_trace() {
  local label=$1 how=$2 pid=${3:-} file=${4:-}
  case "$how" in
    perfetto)
      dsh "kill -TERM $(q "$pid"); while kill -0 $(q "$pid") 2>/dev/null; do sleep 0.2; done" || return 0
      adb_do "$adb_timeout" -s "$serial" pull "$file" "$local_dir/$label.pftrace" \
        || echo "android.sh: device $serial: '$(adb_words -s "$serial" pull "$file")' $adb_why" >&2 ;;
    atrace)
      dsh "atrace --async_stop > $(q "$run_dir/$label.atrace.txt")" ;;
  esac
}

# Runs one tool on the device (with its trace when asked) and records its exit status (124
# when ADB_RUN_TIMEOUT ran out: the device's remaining runs are then skipped). Returns 1 when
# the device was lost.
run_one() {
  local label=$1 t=$2; shift 2
  local args=("$@") cmd rc="" arc=0 how=""
  if [ "$trace" = 1 ]; then
    args+=(--trace)
    if ! start_trace "$label"; then
      [ "$lost" = 0 ] || return 1
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
  adb_do "$run_timeout" -s "$serial" shell "$cmd; echo \"rc=\$?\"" || arc=$?
  case "$arc" in
    124|137) rc=124; dsh_lost "$(adb_words -s "$serial" shell "./$t" "${args[@]}")" ;;
    *) rc=$(tr -d '\r' < "$scratch/out" | sed -n 's/^rc=//p' | tail -n 1) ;;
  esac
  # shellcheck disable=SC2086  # how holds up to three words by design
  [ "$lost" = 0 ] && [ -n "$how" ] && [ "${how%% *}" != ftrace ] && stop_trace "$label" $how
  printf '%s\t%s\t%s\t-\n' "$label" "$t" "${rc:-255}" >> "$local_dir/status.tsv"
  [ "${rc:-255}" = 0 ] || echo "   FAILED (exit ${rc:-?}); see $label.err"
  [ "$lost" = 0 ]
}

# run_suite: the whole plan in one adb call, `benchmp suite` on the device with the pushed
# binaries beside it (a trace, when asked, around all of it), then its summary. Its
# status.tsv comes back with the results. Returns 1 when the device was lost.
run_suite() {
  local args=(suite --bin-dir "$device_dir" --out "$run_dir" --no-summary "${suite_args[@]}") cmd arc=0 rc how=""
  [ -z "$cpus" ] || args+=(--cpus "$cpus")
  [ "$run_timeout" = 0 ] || args+=(--entry-timeout "$run_timeout")
  if [ "$trace" = 1 ]; then
    args+=(--trace)
    if ! start_trace suite; then
      [ "$lost" = 0 ] || return 1
      echo "   warning: no way to trace on this device (not root, no perfetto or atrace)" >&2
      how=""
    fi
  fi
  # The suite's own output goes beside its results folder, which it makes itself.
  local log="$run_dir.suite"
  if [ "${how%% *}" = ftrace ]; then
    cmd=$(out_base=$log device_cmd suite ftrace record -o "$run_dir.trace.txt" \
      --event sched/sched_switch --event power/cpu_frequency -- ./benchmp "${args[@]}")
  else
    cmd=$(out_base=$log device_cmd suite benchmp "${args[@]}")
  fi
  echo "   suite: ./benchmp ${args[*]}"
  adb_do 0 -s "$serial" shell "$cmd; echo \"rc=\$?\"" || arc=$?
  rc=$(tr -d '\r' < "$scratch/out" | sed -n 's/^rc=//p' | tail -n 1)
  # shellcheck disable=SC2086  # how holds up to three words by design
  [ "$lost" = 0 ] && [ -n "$how" ] && [ "${how%% *}" != ftrace ] && stop_trace suite $how
  for f in "$log.txt" "$log.err"; do
    adb_do "$adb_timeout" -s "$serial" pull "$f" "$local_dir/suite.${f##*.}" >/dev/null 2>&1 || true
  done
  [ -f "$local_dir/suite.txt" ] && sed 's/^/   /' "$local_dir/suite.txt"
  case "${rc:-255}" in
    0|1) dsh "cd $(q "$device_dir") && ./benchmp summary $(q "$run_dir")" && printf '%s\n' "$dsh_out" ;;
    *) echo "   FAILED: benchmp suite exit ${rc:-?} (adb $arc): $(tail -n 2 "$local_dir/suite.err" 2>/dev/null | tr '\n' ' ')" ;;
  esac
  [ "${rc:-255}" = 0 ] || suite_failed=1
  [ "$lost" = 0 ]
}

# probe VAR CMD: VAR gets what CMD prints in the device shell (empty when it fails); returns 1
# only when the device stopped answering.
probe() {
  dsh "$2"
  printf -v "$1" '%s' "$dsh_out"
  [ "$lost" = 0 ]
}

# run_device: everything on one device ($serial). Returns 1 when something failed; a device
# that does not answer the first probe leaves no results folder.
run_device() {
  local safe model allowed freqs id c t label envs args dir
  lost=0 suite_failed=0
  safe=$(printf '%s' "$serial" | tr -c 'A-Za-z0-9._-' '_')
  local_dir="$results_root/android-$safe-$stamp"
  run_dir="$device_dir/results/$stamp-$$"
  echo "== device $serial"
  if ! dsh 'true'; then
    [ "$lost" = 1 ] || echo "android.sh: device $serial: '$(adb_words -s "$serial" shell true)' $adb_why; skipped" >&2
    return 1
  fi
  probe model 'getprop ro.product.model' || return 1
  probe allowed 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status' || return 1
  # shellcheck disable=SC2016  # expanded by the device shell
  probe freqs 'for c in /sys/devices/system/cpu/cpu[0-9]*; do printf "%s:%s " "${c##*/cpu}" "$(cat "$c/cpufreq/cpuinfo_max_freq" 2>/dev/null || echo -)"; done' || return 1
  probe id 'id -u' || return 1
  root=0; [ "$id" = 0 ] && root=1
  # A folder of this run's own: never one an earlier (or a simultaneous) run wrote.
  if ! mkdir -p -- "$results_root" || ! mkdir -- "$local_dir"; then
    echo "android.sh: device $serial: cannot create $local_dir (or it exists already); skipped" >&2
    return 1
  fi
  printf 'label\ttool\texit\tseconds\n' > "$local_dir/status.tsv"
  echo "   model: ${model:-unknown}; allowed CPUs: ${allowed:-unknown}; max kHz by CPU: $freqs; root: $root"
  {
    echo "serial: $serial"; echo "model: $model"; echo "allowed_cpus: $allowed"
    echo "max_freq_khz: $freqs"; echo "root: $root"
  } > "$local_dir/device.txt"
  if [ -n "$cpus" ] && cpus_valid "$allowed"; then
    for c in $(cpus_expand "$cpus"); do
      cpus_missing "$c" "$allowed" >/dev/null && echo "   warning: CPU $c is not in the shell's allowed CPUs ($allowed); the tool will refuse it" >&2
    done
  fi
  local made=$run_dir
  [ "$tool" = suite ] && made=${run_dir%/*}
  if ! dsh "mkdir -p $(q "$made")"; then
    [ "$lost" = 1 ] || echo "android.sh: device $serial: cannot create $run_dir ($adb_why)" >&2
    return 1
  fi
  for t in "${tool_list[@]}"; do
    if ! adb_do "$adb_timeout" -s "$serial" push "$bin_dir/$t" "$device_dir/$t"; then
      echo "android.sh: device $serial: '$(adb_words -s "$serial" push "$bin_dir/$t" "$device_dir/$t")' $adb_why" >&2
      return 1
    fi
  done
  dsh "chmod 755 $(qall "${tool_list[@]/#/$device_dir/}")"
  [ "$lost" = 0 ] || return 1

  if [ "$tool" = suite ]; then
    run_suite || return 1
  else
    entry_env=()
    cpu_args "$tool"
    run_one "$tool" "$tool" "$@" "${extra[@]}" --json="$run_dir/$tool.json" --csv="$run_dir/$tool.csv"
  fi
  local ok=0
  if ! adb_do "$adb_timeout" -s "$serial" pull "$run_dir/." "$local_dir/"; then
    echo "android.sh: device $serial: '$(adb_words -s "$serial" pull "$run_dir/." "$local_dir/")' $adb_why" >&2
    ok=1
  fi
  # An entry failed: its status column says so (a noisy entry measured), or, in a row
  # without one, its exit status.
  awk -F'\t' 'NR > 1 && ($5 == "" ? $3 != 0 : $5 != "ok" && $5 != "noisy") { bad = 1 } END { exit !bad }' "$local_dir/status.tsv" && ok=1
  [ "$suite_failed" = 0 ] || ok=1
  [ "$lost" = 0 ] || ok=1
  echo "   results: $local_dir"
  return "$ok"
}

overall=0 lost=0 root=0 suite_failed=0
stamp=$(date +%Y%m%d-%H%M%S)
for serial in "${serials[@]}"; do
  run_device "$@" || overall=1
done
exit "$overall"
