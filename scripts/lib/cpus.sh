#!/usr/bin/env bash
# Shared by android.sh and lava/socbench.sh: CPU lists as the kernel and taskset write them
# (0-3,7), checked before anything runs.

# cpus_valid LIST: true when LIST is a CPU list like 0-3,7 with no range running backwards.
cpus_valid() {
  local part parts
  [[ $1 =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] || return 1
  IFS=',' read -r -a parts <<< "$1"
  for part in "${parts[@]}"; do
    [ $((10#${part%-*})) -le $((10#${part#*-})) ] || return 1
  done
}

# cpus_expand LIST: one CPU number per line.
cpus_expand() {
  local part parts
  IFS=',' read -r -a parts <<< "$1"
  for part in "${parts[@]}"; do
    seq "$((10#${part%-*}))" "$((10#${part#*-}))"
  done
}

# cpus_allowed: the CPUs this process may run on (its affinity: taskset, cgroup cpuset), as a
# list; empty where /proc does not say.
cpus_allowed() {
  sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status 2>/dev/null
}

# cpus_missing LIST ALLOWED: the first CPU of LIST that is not in ALLOWED (nothing, status 1,
# when every one is).
cpus_missing() {
  local c have
  have=" $(cpus_expand "$2" | tr '\n' ' ')"
  for c in $(cpus_expand "$1"); do
    case "$have" in *" $c "*) ;; *) echo "$c"; return 0 ;; esac
  done
  return 1
}
