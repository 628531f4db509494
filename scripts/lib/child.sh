#!/usr/bin/env bash
# Shared by suite.sh, android.sh and lava/socbench.sh: the long-running children (a tool, an adb
# call, a whole suite) run in a process group of their own and are waited for with `wait`, so a
# signal to the script is handled at once (bash runs a trap only after a foreground child ends)
# and stops the child together with everything it forked, before the script exits 128+n, as
# the tools themselves do (README, "Exit status").
#
# Call child_run from the script's own shell, never inside $(...) or a pipeline: the trap that
# stops the child runs in the main shell and only knows the children it started.

child_pid="" child_name=""
# Seconds a stopped child has before SIGTERM, and as much again before SIGKILL. A script whose
# child stops children of its own (socbench.sh running suite.sh) gives it longer than theirs.
child_grace=5

# child_run [--out FILE [--err FILE]] CMD...: runs CMD in a new process group, standard input
# from /dev/null (its output into FILE with --out, its errors with --err), and waits for it;
# returns its status. Give the files here, never as redirections of child_run itself: those
# would hold during a trap too, and the trap's own line would end up in them.
child_run() {
  local rc out="" err=""
  [ "${1:-}" = --out ] && { out=$2; shift 2; }
  [ "${1:-}" = --err ] && { err=$2; shift 2; }
  # Job control for this one start: the job gets a process group of its own, and SIGINT is
  # not ignored in it as it is in a plain background job.
  set -m
  if [ -n "$err" ]; then
    "$@" < /dev/null > "$out" 2> "$err" &
  elif [ -n "$out" ]; then
    "$@" < /dev/null > "$out" &
  else
    "$@" < /dev/null &
  fi
  child_pid=$!
  set +m
  wait "$child_pid"
  rc=$?
  child_pid=""
  return "$rc"
}

# child_default_int SCRIPT ARGS...: a script started in the background by another one (a
# plain `&`, nohup, LAVA's shell) inherits SIGINT ignored, and bash can neither trap nor reset
# a signal ignored on entry; so SCRIPT starts again with SIGINT at its default (env
# --default-signal, coreutils 8.31 and later), once. Call it first, before any trap is set.
child_default_int() {
  if [ -n "$(trap -p INT)" ] && [ -z "${SOCBENCH_INT_RESET:-}" ] && env --default-signal=INT true 2>/dev/null; then
    SOCBENCH_INT_RESET=1 exec env --default-signal=INT "$BASH" "$@"
  fi
  unset SOCBENCH_INT_RESET
}

# child_stop SIGNAL: SIGNAL to the running child's process group, SIGTERM to what is left of it
# after child_grace seconds, SIGKILL after as long again; then reaps the child.
child_stop() {
  [ -n "$child_pid" ] || return 0
  local sig
  kill -s "$1" -- "-$child_pid" 2>/dev/null
  for sig in TERM KILL; do
    for _ in $(seq $((child_grace * 10))); do
      kill -0 -- "-$child_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 -- "-$child_pid" 2>/dev/null || break
    kill -s "$sig" -- "-$child_pid" 2>/dev/null
  done
  wait "$child_pid" 2>/dev/null
  child_pid=""
}

# child_traps NAME: SIGINT, SIGTERM and SIGHUP stop the running child (child_stop with the
# same signal), print "NAME: interrupted by SIGX" and exit 128+n (the EXIT trap still runs).
child_traps() {
  child_name=$1
  trap 'child_on_signal INT 2' INT
  trap 'child_on_signal TERM 15' TERM
  trap 'child_on_signal HUP 1' HUP
}

child_on_signal() {
  trap '' INT TERM HUP
  child_stop "$1"
  echo "$child_name: interrupted by SIG$1" >&2
  exit $((128 + $2))
}
