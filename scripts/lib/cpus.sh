#!/bin/sh
# Shared by android.sh and lava/socbench.sh: CPU lists as the kernel and taskset write them
# (0-3,7), checked before anything runs. POSIX sh (busybox ash, mksh, dash, bash), since
# lava/socbench.sh runs on devices without bash; no `local`, so every name starts with cpus_.

# cpus_num N: N without leading zeros (0 for zeros only).
cpus_num() {
  cpus_n=$1
  while [ "${cpus_n#0}" != "$cpus_n" ] && [ -n "${cpus_n#0}" ]; do cpus_n=${cpus_n#0}; done
  printf '%s\n' "$cpus_n"
}

# cpus_valid LIST: true when LIST is a CPU list like 0-3,7 with no range running backwards.
cpus_valid() {
  case $1 in '' | *[!0-9,-]* | ,* | *, | *,,*) return 1 ;; esac
  cpus_rest=$1,
  while [ -n "$cpus_rest" ]; do
    cpus_part=${cpus_rest%%,*}
    cpus_rest=${cpus_rest#*,}
    case $cpus_part in '' | -* | *- | *-*-*) return 1 ;; esac
    [ "$(cpus_num "${cpus_part%-*}")" -le "$(cpus_num "${cpus_part#*-}")" ] || return 1
  done
}

# cpus_expand LIST: one CPU number per line.
cpus_expand() {
  cpus_rest=$1,
  while [ -n "$cpus_rest" ]; do
    cpus_part=${cpus_rest%%,*}
    cpus_rest=${cpus_rest#*,}
    cpus_c=$(cpus_num "${cpus_part%-*}")
    cpus_hi=$(cpus_num "${cpus_part#*-}")
    while [ "$cpus_c" -le "$cpus_hi" ]; do
      echo "$cpus_c"
      cpus_c=$((cpus_c + 1))
    done
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
  cpus_have=" $(cpus_expand "$2" | tr '\n' ' ')"
  for cpus_c in $(cpus_expand "$1"); do
    case "$cpus_have" in *" $cpus_c "*) ;; *) echo "$cpus_c"; return 0 ;; esac
  done
  return 1
}
