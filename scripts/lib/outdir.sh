#!/usr/bin/env bash
# Shared by suite.sh, android.sh and lava/socbench.sh: a results folder is checked before any time is spent
# (created, written to for real, since root passes every permission check, and locked against
# a second run writing into it at the same time), and a refusal leaves nothing behind.

# shellcheck disable=SC2034  # outdir_why is read by the scripts that source this file
outdir_made=() outdir_why=""

# outdir_create DIR: creates DIR and its missing parents and makes (then removes) a file in it.
# On failure sets outdir_why (a phrase: "is not a folder", "cannot be created (Not a
# directory)", "cannot be written"), removes what it made, and returns 1. outdir_made lists
# the folders it created, deepest first, for outdir_undo.
outdir_create() {
  local dir=$1 p err probe
  # shellcheck disable=SC2034  # outdir_why is read by the scripts that source this file
outdir_made=() outdir_why=""
  if [ -e "$dir" ] && [ ! -d "$dir" ]; then
    outdir_why="is not a folder"
    return 1
  fi
  p=$dir
  while [ ! -e "$p" ] && [ ! -L "$p" ] && [ "$p" != / ] && [ "$p" != . ]; do
    outdir_made+=("$p")
    p=$(dirname -- "$p")
  done
  if ! err=$(mkdir -p -- "$dir" 2>&1); then
    outdir_why="cannot be created (${err##*: })"
    outdir_undo
    return 1
  fi
  probe="$dir/.socbench-write-test.$$"
  if ! { : > "$probe"; } 2>/dev/null; then
    outdir_why="cannot be written"
    outdir_undo
    return 1
  fi
  rm -f -- "$probe"
}

# outdir_creatable DIR: true when DIR could be made and written to, checked without making it:
# the nearest folder that exists (DIR itself or a parent) is a folder a file can be made in.
# On failure sets outdir_why as outdir_create does.
outdir_creatable() {
  local p=$1 probe
  outdir_why=""
  while [ ! -e "$p" ] && [ "$p" != / ] && [ "$p" != . ]; do p=$(dirname -- "$p"); done
  if [ ! -d "$p" ]; then
    if [ "$p" = "$1" ]; then outdir_why="is not a folder"; else outdir_why="cannot be created ($p is not a folder)"; fi
    return 1
  fi
  probe="$p/.socbench-write-test.$$"
  if ! { : > "$probe"; } 2>/dev/null; then
    outdir_why="cannot be written ($p)"
    return 1
  fi
  rm -f -- "$probe"
}

# outdir_undo: removes the folders outdir_create made, as long as they are empty.
outdir_undo() {
  local d
  for d in "${outdir_made[@]}"; do
    rmdir -- "$d" 2>/dev/null || break
  done
  outdir_made=()
}

# outdir_empty DIR: true when DIR holds nothing (hidden files count).
outdir_empty() {
  [ -z "$(ls -A -- "$1")" ]
}

# outdir_lock DIR: takes an exclusive lock on the folder itself (flock on an open descriptor of
# it, kept until the script exits; the children inherit it), or returns 1 at once when another
# process holds it. Without flock on PATH there is no lock: returns 0 and sets outdir_why.
outdir_lock() {
  if ! command -v flock >/dev/null 2>&1; then
    outdir_why="no flock on PATH (util-linux): a second run into this folder is not refused"
    return 0
  fi
  exec {outdir_lock_fd}< "$1" || return 1
  flock -n "$outdir_lock_fd"
}
