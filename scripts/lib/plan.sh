#!/usr/bin/env bash
# The suite's plan, shared by scripts/suite.sh (this machine) and scripts/android.sh (phones).
#
# suite_plan MODE NCPUS LLC_BYTES prints one entry per line:
#   LABEL|ENV|TOOL|ARGS
# LABEL names the result files, ENV holds space-separated VAR=VALUE assignments, ARGS the
# tool's arguments separated by single spaces (plan arguments never contain spaces). In ARGS,
# {json} and {csv} stand for the result files of the entry and {dir} for a folder of its own.
# MODE is quick, default or full. bw_mem and lat_mem_rd write their lmbench lines to stderr by
# default, as lmbench does; the plan asks for stdout so LABEL.txt holds the text.

# shellcheck disable=SC2034  # variables are used by the scripts that source this file
SUITE_TOOLS="bw_mem lat_mem_rd dhry coremark dto"

# llc_bytes: the largest cache of CPU 0 in bytes (0 when sysfs does not say).
llc_bytes() {
  local llc=0 f v
  for f in /sys/devices/system/cpu/cpu0/cache/index*/size; do
    [ -r "$f" ] || continue
    v=$(cat "$f"); case "$v" in *K) v=$(( ${v%K} * 1024 )) ;; *M) v=$(( ${v%M} * 1048576 )) ;; esac
    [ "$v" -gt "$llc" ] && llc=$v
  done
  echo "$llc"
}

suite_plan() {
  local mode=$1 ncpus=$2 llc=$3
  local n=5 ops="rd wr rdwr cp bcopy bzero rdvec cpnt" size=64m
  local lat_n=3 lat_len lat_strides="64" dhry_time=2 dto_env="PERF_SHORT=1" all="$ncpus" lat_c2c_n=11
  # --loaded: at least three intervals per row, so a short preemption of a load is a small
  # share of the window it must cover.
  local loaded_delays="0,200,1000,5000,20000" loaded_len=256m loaded_n=5
  # lat_mem_rd: to four times the last-level cache (at least 8 MiB), in MiB.
  lat_len=$(( (llc * 4 + 1048575) / 1048576 ))
  [ "$lat_len" -lt 8 ] && lat_len=8
  case "$mode" in
    quick) n=3; ops="rd wr cp bzero"; lat_n=1; dhry_time=0.5; all=1; lat_c2c_n=5
           loaded_delays="0,5000"; loaded_len=64m; loaded_n=3 ;;
    full) n=11; ops="rd wr rdwr cp fwr frd fcp bzero bcopy rdvec wrnt cpnt memcpy memset"; size=256m; lat_c2c_n=51
          loaded_delays="0,50,200,500,1000,2000,5000,20000"; loaded_n=11
          lat_n=11; lat_strides="16 64 256"; dhry_time=5; dto_env="" ;;
  esac
  local op p
  for p in 1 "$ncpus"; do
    for op in $ops; do
      echo "bw_mem-$op-P$p||bw_mem|-P $p -N $n $size $op --stdout --json={json} --csv={csv}"
    done
    [ "$ncpus" -eq 1 ] && break
  done
  echo "lat_mem_rd-t||lat_mem_rd|-N $lat_n -t $lat_len $lat_strides --stdout --json={json} --csv={csv}"
  if [ "$mode" = full ]; then
    echo "lat_mem_rd-seq||lat_mem_rd|-N $lat_n $lat_len $lat_strides --stdout --json={json} --csv={csv}"
  fi
  # Core-to-core latency: every ordered pair of CPUs (a few seconds on a phone's eight).
  if [ "$ncpus" -gt 1 ]; then
    echo "lat_mem_rd-c2c||lat_mem_rd|--c2c -N $lat_c2c_n --json={json}"
    # Latency under load: the first CPU chases while every other one streams reads.
    echo "lat_mem_rd-loaded||lat_mem_rd|--loaded $loaded_len -N $loaded_n --delays $loaded_delays --json={json}"
  fi
  # CoreMark-compatible runs need at least 10 s each to validate; quick mode runs one core only.
  for p in 1 "$all"; do
    echo "dhry-P$p||dhry|-P $p --time $dhry_time --json={json} --csv={csv}"
    echo "coremark-P$p||coremark|-P $p --json={json} --csv={csv}"
    [ "$all" -eq 1 ] && break
  done
  echo "dto-speedup|$dto_env RESULTS_DIR={dir}|dto|speedup --json={json}"
}
