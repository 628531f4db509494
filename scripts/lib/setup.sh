#!/usr/bin/env bash
# Set-up shared by the README's two commands (scripts/test.sh, scripts/suite.sh): each installs
# what it needs on a fresh Linux machine with a Rust toolchain, or says exactly why it cannot.
# SOCBENCH_NO_INSTALL=1 only checks and names what is missing.
#
# Every function returns 0 when the thing is present (or was installed) and 1 otherwise,
# after printing one line that starts with "setup:" and says why.

# Runs a command as root: directly when we are root, through sudo -n when that works.
setup_as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    return 126
  fi
}

# setup_backports_suite: prints the backports suite (bookworm-backports) when a package is
# installed from it, after adding that suite to apt's sources if it was not there (a file of its
# own, at apt's default low priority: nothing else is taken from it unless asked); fails
# otherwise.
setup_backports_suite() {
  local codename suite
  dpkg-query -W -f '${Version}\n' 2>/dev/null | grep -q '~bpo' || return 1
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || return 1
  suite="$codename-backports"
  if ! apt-cache policy 2>/dev/null | grep -q " $suite/"; then
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$suite" |
      setup_as_root tee "/etc/apt/sources.list.d/socbench-$suite.sources" >/dev/null || return 1
    setup_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || return 1
  fi
  echo "$suite"
}

# setup_apt CMD PACKAGE [CMD PACKAGE ...]: installs each PACKAGE whose CMD is not on PATH.
setup_apt() {
  local missing=() cmds=()
  while [ $# -ge 2 ]; do
    command -v "$1" >/dev/null || { missing+=("$2"); cmds+=("$1"); }
    shift 2
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "${SOCBENCH_NO_INSTALL:-0}" = 1 ]; then
    echo "setup: missing ${cmds[*]} (Debian packages: ${missing[*]}); SOCBENCH_NO_INSTALL=1 forbids installing" >&2
    return 1
  fi
  if ! command -v apt-get >/dev/null; then
    echo "setup: missing ${cmds[*]} and no apt-get here: install ${missing[*]} with this system's package manager" >&2
    return 1
  fi
  echo "setup: installing ${missing[*]} (apt-get)" >&2
  local log
  log=$(mktemp "${TMPDIR:-/tmp}/socbench-apt.XXXXXX")
  local rc=0
  { setup_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    setup_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1 || rc=$?
  # A package installed from the release's backports (a machine image with qemu-utils 10 from
  # bookworm-backports, say) can break the release's own versions of its kin (qemu-system-arm
  # 7.2): then the same packages are taken from backports too, as the installed one was.
  local bpo
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 126 ] && bpo=$(setup_backports_suite); then
    echo "setup: the release's packages conflict with ones installed from $bpo; installing ${missing[*]} from $bpo" >&2
    rc=0
    setup_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      -t "$bpo" "${missing[@]}" >"$log" 2>&1 || rc=$?
  fi
  if [ "$rc" -ne 0 ]; then
    if [ "$rc" -eq 126 ]; then
      echo "setup: missing ${cmds[*]}: installing ${missing[*]} needs root or password-less sudo" >&2
    else
      echo "setup: apt-get could not install ${missing[*]}: $(tail -n 1 "$log")" >&2
    fi
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
  local c
  for c in "${cmds[@]}"; do
    command -v "$c" >/dev/null || { echo "setup: $c is still missing after installing its package" >&2; return 1; }
  done
}

# setup_rustup_component NAME...: rustfmt, clippy.
setup_rustup_component() {
  local c
  for c in "$@"; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" && continue
    if [ "${SOCBENCH_NO_INSTALL:-0}" = 1 ]; then
      echo "setup: missing rustup component $c; SOCBENCH_NO_INSTALL=1 forbids installing" >&2
      return 1
    fi
    rustup component add "$c" >/dev/null 2>&1 || { echo "setup: rustup could not add the component $c" >&2; return 1; }
  done
}

# setup_rust_target TRIPLE: a Rust standard library for cross-building.
setup_rust_target() {
  rustup target list --installed 2>/dev/null | grep -qx "$1" && return 0
  if [ "${SOCBENCH_NO_INSTALL:-0}" = 1 ]; then
    echo "setup: missing Rust target $1; SOCBENCH_NO_INSTALL=1 forbids installing" >&2
    return 1
  fi
  command -v rustup >/dev/null || { echo "setup: missing Rust target $1 and no rustup to add it" >&2; return 1; }
  echo "setup: adding Rust target $1 (rustup)" >&2
  rustup target add "$1" >/dev/null 2>&1 || { echo "setup: rustup could not add the target $1" >&2; return 1; }
}

# setup_python_packages: the pinned packages of scripts/requirements.txt (plots, statistics,
# PyYAML for the LAVA definition's test).
setup_python_packages() {
  local req
  req="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/requirements.txt"
  command -v python3 >/dev/null || { echo "setup: python3 is missing (needed by the plot and summary scripts)" >&2; return 1; }
  python3 -c 'import matplotlib, numpy, pandas, scipy, yaml' 2>/dev/null && return 0
  if [ "${SOCBENCH_NO_INSTALL:-0}" = 1 ]; then
    echo "setup: missing Python packages of $req; SOCBENCH_NO_INSTALL=1 forbids installing" >&2
    return 1
  fi
  echo "setup: installing the Python packages of scripts/requirements.txt (pip)" >&2
  local log
  log=$(mktemp "${TMPDIR:-/tmp}/socbench-pip.XXXXXX")
  if ! python3 -m pip install --quiet --disable-pip-version-check -r "$req" >"$log" 2>&1; then
    echo "setup: pip could not install $req: $(grep -v '^\s*$' "$log" | tail -n 1)" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# setup_tracefs: mounts tracefs when it is not there (the trace tests need trace_marker).
# Not fatal: without it those tests say they are skipped.
setup_tracefs() {
  [ -e /sys/kernel/tracing/trace_marker ] && return 0
  setup_as_root mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null && return 0
  echo "setup: tracefs is not mounted and cannot be (needs root); the trace tests will be skipped" >&2
  return 1
}

# setup_lava_helpers DIR: LAVA's lava-test-shell helpers (lava-test-case, lava-test-set,
# lava-test-reference, ...) in DIR, taken from Debian's lava-dispatcher package and given the
# interpreter line LAVA adds when it copies them onto a device. For the LAVA test definition's
# tests (scripts/tests/test_lava.sh); nothing is installed system-wide.
setup_lava_helpers() {
  local dir=$1 tmp log shell_dir f
  [ -x "$dir/lava-test-case" ] && [ -x "$dir/lava-test-set" ] && [ -x "$dir/lava-test-reference" ] && return 0
  if [ "${SOCBENCH_NO_INSTALL:-0}" = 1 ]; then
    echo "setup: missing the LAVA test shell helpers in $dir; SOCBENCH_NO_INSTALL=1 forbids downloading lava-dispatcher" >&2
    return 1
  fi
  local c
  for c in apt-get dpkg-deb; do
    command -v "$c" >/dev/null || { echo "setup: the LAVA test shell helpers come from Debian's lava-dispatcher package, and $c is missing" >&2; return 1; }
  done
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/socbench-lava.XXXXXX") || return 1
  log="$tmp/log"
  # apt-get download needs no root, but a fresh machine may need its package lists first.
  if ! (cd "$tmp" && apt-get download -qq lava-dispatcher) >"$log" 2>&1; then
    setup_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$log" 2>&1 || true
    if ! (cd "$tmp" && apt-get download -qq lava-dispatcher) >>"$log" 2>&1; then
      echo "setup: apt-get could not download lava-dispatcher (for the LAVA test shell helpers): $(grep -v '^\s*$' "$log" | tail -n 1)" >&2
      rm -rf "$tmp"
      return 1
    fi
  fi
  if ! dpkg-deb -x "$tmp"/lava-dispatcher_*.deb "$tmp/x" >>"$log" 2>&1; then
    echo "setup: dpkg-deb could not unpack lava-dispatcher: $(tail -n 1 "$log")" >&2
    rm -rf "$tmp"
    return 1
  fi
  shell_dir=$(find "$tmp/x" -type d -path '*/lava_dispatcher/lava_test_shell' | head -n 1)
  if [ -z "$shell_dir" ] || [ ! -f "$shell_dir/lava-test-case" ]; then
    echo "setup: this lava-dispatcher package has no lava_test_shell/lava-test-case" >&2
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$dir" || { rm -rf "$tmp"; return 1; }
  for f in "$shell_dir"/lava-*; do
    [ -f "$f" ] || continue
    { printf '#!/bin/sh\n\n'; cat "$f"; } > "$dir/${f##*/}" && chmod 755 "$dir/${f##*/}"
  done
  rm -rf "$tmp"
}
