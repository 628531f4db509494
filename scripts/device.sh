#!/usr/bin/env bash
# The device test: an emulated arm64 SoC (QEMU's virt board under TCG, 4 little + 2 big CPUs
# in two clusters of unequal capacity) with Debian's arm64 kernel, a busybox initramfs and
# socbench's static aarch64 binaries, booted and tested by LAVA's own dispatcher (lava-run,
# no server) with the project's LAVA test definitions; then LAVA's results are printed and
# checked here, and what came back from the guest is read on this host (benchmp summary,
# benchmp compare, the trace converted by ftrace convert).
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/device.sh [--bin-dir DIR] [--out DIR] [--profile scripts|release]
       scripts/device.sh --setup

Builds the emulated SoC (cached in ${XDG_CACHE_HOME:-~/.cache}/socbench/device), runs
scripts/lava/jobs/qemu-soc.yaml on it with lava-run and prints LAVA's results: every test
case with its measurement and units. Then checks them: every case passes, the topology shows
two clusters of different sizes and capacities, the trace of the run over both clusters
(converted here with ftrace convert) holds begin and end slices of every child, and each
results folder from the guest is summarised (benchmp summary) and the two suite runs are
compared (benchmp compare). No figure is judged: an emulated CPU's are not the hardware's.

  --bin-dir DIR   static aarch64 binaries already built (benchmp bw_mem lat_mem_rd dhry
                  coremark dto ftrace); default: build them (cargo, aarch64-unknown-linux-musl,
                  linked with rust-lld) with --profile
  --profile P     the cargo profile of that build: scripts (default: no LTO, quicker to
                  build) or release
  --out DIR       where the run goes: lava-run's log and output, the guest's results
                  (default results/device-<timestamp>)
  --setup         only install and fetch what the test needs (below) and exit: the test
                  command's set-up, so the test itself is timed without it
  -h, --help      this text

Installs what it needs (Debian's qemu-system-arm, device-tree-compiler, lava-dispatcher,
kmod, cpio; the arm64 architecture for apt-get download of linux-image-arm64 and
busybox-static; the amd64 kernel package for libguestfs's appliance; the Rust target), as
root or with sudo, or stops with one line saying what is missing (SOCBENCH_NO_INSTALL=1 only
checks). Holds /tmp/socbench-cpu.lock while the guest runs and while it builds.

Exit status: 0 every LAVA test case passed and every check held; 1 a case did not pass, a
check failed, or lava-run failed; 2 bad options; 3 this host cannot run it (not amd64:
libguestfs's appliance kernel is the amd64 kernel package; or a package cannot be had).
USAGE
}

die() { echo "device.sh: $*" >&2; exit 2; }
cannot() { echo "device.sh: $*" >&2; exit 3; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=scripts/lib/setup.sh
. "$here/lib/setup.sh"
# shellcheck source=scripts/lib/bench.sh
. "$here/lib/bench.sh"

bin_dir="" out="" profile=scripts setup_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --setup) setup_only=1 ;;
    --bin-dir) [ $# -ge 2 ] || die "--bin-dir needs a folder"; bin_dir=$2; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift ;;
    --profile) [ $# -ge 2 ] || die "--profile needs scripts or release"; profile=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
case "$profile" in scripts|release) ;; *) die "--profile '$profile' is not scripts or release" ;; esac
if [ -n "$bin_dir" ]; then
  [ -d "$bin_dir" ] || die "--bin-dir $bin_dir is not a folder"
  bin_dir=$(cd "$bin_dir" && pwd)
fi
if [ "$setup_only" = 1 ]; then
  [ -z "$out$bin_dir" ] || die "--setup takes no --out or --bin-dir (it runs nothing)"
else
  [ -n "$out" ] || out="$top/results/device-$(date +%Y%m%d-%H%M%S)"
  [ ! -e "$out" ] || die "--out $out already exists (give a new folder)"
  mkdir -p "$out" || die "cannot make --out $out"
  out=$(cd "$out" && pwd)
fi
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] \
  || cannot "this host is not Debian amd64: libguestfs's appliance (LAVA's overlay step) boots the amd64 kernel package here"

dictionary="$top/scripts/lava/devices/qemu-soc.yaml"
job_template="$top/scripts/lava/jobs/qemu-soc.yaml"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/socbench/device"
TOOLS=$ALL_BINARIES
# The SoC: CLUSTERS[i] CPUs in cluster i with capacity-dmips-mhz CAPACITY[i] (the little
# cluster first, as on phones).
CLUSTERS=(4 2) CAPACITY=(512 1024)
started=$(date +%s)
say() { echo "== device: $* ($(($(date +%s) - started)) s)"; }

say "set-up: QEMU, dtc, LAVA's dispatcher, kmod, cpio, the Rust target"
ok=1
setup_apt qemu-system-aarch64 qemu-system-arm fdtput device-tree-compiler lava-run lava-dispatcher \
  depmod kmod cpio cpio git git || ok=0
if [ -z "$bin_dir" ]; then setup_rust_target aarch64-unknown-linux-musl || ok=0; fi
[ "$ok" = 1 ] || cannot "the set-up above is incomplete"
# lava-run and libguestfs's bindings are Debian's Python's, whatever python3 is first on PATH.
py=/usr/bin/python3
"$py" -c 'import guestfs, yaml' 2>/dev/null || cannot "Debian's python3 lacks guestfs or yaml (python3-guestfs, python3-yaml: lava-dispatcher's dependencies)"

# --- The packages: Debian's arm64 kernel and busybox, and the amd64 kernel for libguestfs.
mkdir -p "$cache/pkgs"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  [ "${SOCBENCH_NO_INSTALL:-0}" != 1 ] || cannot "apt lacks the arm64 architecture (dpkg --add-architecture arm64); SOCBENCH_NO_INSTALL=1 forbids adding it"
  say "adding the arm64 architecture to apt (dpkg --add-architecture arm64)"
  setup_as_root dpkg --add-architecture arm64 || cannot "dpkg --add-architecture arm64 needs root or password-less sudo"
  setup_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 \
    || cannot "apt-get update failed after adding arm64"
fi
# fetch PACKAGE: the .deb of PACKAGE (name:arch) in the cache, downloaded once.
fetch() {
  local name=${1%%:*} arch=${1#*:} found
  found=$(find "$cache/pkgs" -maxdepth 1 -name "${name}_*_${arch}.deb" | head -n 1)
  if [ -z "$found" ]; then
    (cd "$cache/pkgs" && apt-get download -qq "$1" >/dev/null 2>"$cache/pkgs/apt.err") \
      || { setup_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || true
           (cd "$cache/pkgs" && apt-get download -qq "$1" >/dev/null 2>"$cache/pkgs/apt.err"); } \
      || cannot "apt-get download $1 failed: $(tail -n 1 "$cache/pkgs/apt.err")"
    found=$(find "$cache/pkgs" -maxdepth 1 -name "${name}_*_${arch}.deb" | head -n 1)
  fi
  [ -n "$found" ] || cannot "no ${name} package for ${arch} after apt-get download"
  printf '%s\n' "$found"
}
# The kernel a linux-image-ARCH metapackage stands for, by its Depends (as apt lists it now;
# from the cache when apt cannot say).
kernel_package() {
  local dep
  dep=$(apt-cache depends "linux-image-$1:$1" 2>/dev/null | sed -n "s/^ *Depends: \(linux-image-[0-9][^:]*\).*/\1/p" | head -n 1)
  if [ -z "$dep" ]; then
    dep=$(find "$cache/pkgs" -maxdepth 1 -name "linux-image-[0-9]*-$1_*_$1.deb" -printf '%f\n' | sed 's/_.*//' | sort | tail -n 1)
  fi
  [ -n "$dep" ] || cannot "apt knows no linux-image-$1 (run apt-get update)"
  printf '%s\n' "$dep"
}
say "packages: linux-image-arm64, busybox-static:arm64, linux-image-amd64 (cache $cache/pkgs)"
arm_kernel=$(kernel_package arm64)
amd_kernel=$(kernel_package amd64)
arm_deb=$(fetch "$arm_kernel:arm64")
busybox_deb=$(fetch busybox-static:arm64)
amd_deb=$(fetch "$amd_kernel:amd64")

# unpack DEB DIR: the package's files in DIR, once.
unpack() {
  if [ ! -e "$2/.unpacked" ]; then
    rm -rf "$2"
    dpkg-deb -x "$1" "$2" || cannot "dpkg-deb cannot unpack $1"
    touch "$2/.unpacked"
  fi
}
unpack "$arm_deb" "$cache/arm64-kernel"
unpack "$busybox_deb" "$cache/busybox"
unpack "$amd_deb" "$cache/amd64-kernel"
arm_version=${arm_kernel#linux-image-}
amd_version=${amd_kernel#linux-image-}
arm_modules="$cache/arm64-kernel/lib/modules/$arm_version"
amd_modules="$cache/amd64-kernel/lib/modules/$amd_version"
kernel_image="$cache/arm64-kernel/boot/vmlinuz-$arm_version"
{ [ -f "$kernel_image" ] && [ -d "$arm_modules" ]; } || cannot "$arm_deb holds no vmlinuz-$arm_version and modules"
# supermin (libguestfs's appliance) reads modules.dep, which the package leaves to depmod.
[ -f "$amd_modules/modules.dep" ] || depmod -b "$cache/amd64-kernel" "$amd_version"
[ -f "$arm_modules/modules.dep" ] || depmod -b "$cache/arm64-kernel" "$arm_version"
if [ "$setup_only" = 1 ]; then
  say "set-up done: the packages are in $cache"
  exit 0
fi

# --- The device tree: QEMU's own for the dictionary's board, its CPUs regrouped into the
# clusters above, each CPU with its capacity-dmips-mhz (the kernel's cpu_capacity).
mapfile -t qemu_options < <("$py" - "$dictionary" <<'PY'
import shlex, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
for option in d["actions"]["boot"]["methods"]["qemu"]["parameters"]["options"]:
    print("\n".join(shlex.split(option)))
PY
)
board="$cache/board-$arm_version"
mkdir -p "$board"
dtb="$board/soc.dtb"
say "device tree: QEMU's (${qemu_options[*]}), clusters of ${CLUSTERS[*]} CPUs, capacities ${CAPACITY[*]}"
qemu-system-aarch64 "${qemu_options[@]}" -machine "dumpdtb=$board/qemu.dtb" >"$board/dumpdtb.log" 2>&1 \
  || cannot "qemu-system-aarch64 could not dump its device tree: $(tail -n 1 "$board/dumpdtb.log")"
cp "$board/qemu.dtb" "$dtb.new"
cpus=$(fdtget -l "$dtb.new" /cpus | grep -c '^cpu@')
want=0
for n in "${CLUSTERS[@]}"; do want=$((want + n)); done
[ "$cpus" -eq "$want" ] || die "the dictionary's board has $cpus CPUs, the clusters ${CLUSTERS[*]} need $want (-smp in $dictionary)"
for node in $(fdtget -l "$dtb.new" /cpus/cpu-map 2>/dev/null); do fdtput -r "$dtb.new" "/cpus/cpu-map/$node"; done
cpu=0
for i in "${!CLUSTERS[@]}"; do
  for ((core = 0; core < CLUSTERS[i]; core++)); do
    phandle=$(fdtget -t i "$dtb.new" "/cpus/cpu@$cpu" phandle)
    fdtput -p -c "$dtb.new" "/cpus/cpu-map/cluster$i/core$core"
    fdtput -t i "$dtb.new" "/cpus/cpu-map/cluster$i/core$core" cpu "$phandle"
    fdtput -t i "$dtb.new" "/cpus/cpu@$cpu" capacity-dmips-mhz "${CAPACITY[i]}"
    cpu=$((cpu + 1))
  done
done
mv "$dtb.new" "$dtb"

# --- The binaries: static aarch64, linked with rust-lld.
if [ -z "$bin_dir" ]; then
  say "building $TOOLS for aarch64-unknown-linux-musl (profile $profile, under the CPU lock)"
  pkgs=()
  for t in $TOOLS; do pkgs+=(-p "$(tool_package "$t")"); done
  (cd "$top" && CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=rust-lld \
    locked cargo build --quiet --profile "$profile" --target aarch64-unknown-linux-musl "${pkgs[@]}" --bins) \
    || { echo "device.sh: the aarch64 build failed (above)" >&2; exit 1; }
  target_dir=${CARGO_TARGET_DIR:-target}
  case "$target_dir" in /*) ;; *) target_dir="$top/$target_dir" ;; esac
  bin_dir="$target_dir/aarch64-unknown-linux-musl/$profile"
fi
for t in $TOOLS; do
  [ -x "$bin_dir/$t" ] || die "$bin_dir/$t is missing (build it, or give --bin-dir a folder that has it)"
done

# --- The initramfs: busybox, /init, the modules LAVA's overlay disk needs, the binaries.
say "initramfs: busybox, the virtio and ext4 modules, the binaries of $bin_dir"
root="$out/initramfs"
mkdir -p "$root/bin" "$root/lib/modules" "$root/opt/socbench" "$root/etc"
cp "$cache/busybox/bin/busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$top/scripts/lava/devices/qemu-soc-init" "$root/init"
chmod 755 "$root/init"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\n' > "$root/etc/group"
: > "$root/lib/modules/load.order"
# Each wanted module after the ones it depends on (modules.dep lists them, nearest last).
loaded=" "
add_module() {
  local path dep
  path=$(awk -F: -v m="/$1.ko" 'index($1, m) && substr($1, length($1) - length(m) + 1) == m { print $1; exit }' "$arm_modules/modules.dep")
  [ -n "$path" ] || cannot "the arm64 kernel has no module $1"
  case "$loaded" in *" $path "*) return 0 ;; esac
  for dep in $(awk -F: -v p="$path" '$1 == p { print $2 }' "$arm_modules/modules.dep" | tr ' ' '\n' | tac); do
    add_module "$(basename "$dep" .ko)"
  done
  case "$loaded" in *" $path "*) return 0 ;; esac
  cp "$arm_modules/$path" "$root/lib/modules/"
  basename "$path" >> "$root/lib/modules/load.order"
  loaded="$loaded$path "
}
for m in crc32c_generic ext4 virtio_pci virtio_blk; do add_module "$m"; done
for t in $TOOLS; do cp "$bin_dir/$t" "$root/opt/socbench/"; done
initrd="$out/initrd.gz"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$initrd"

# --- The test definitions: a git repository of this checkout's scripts/ as they are now
# (LAVA clones definitions from git; uncommitted edits included).
defs="$out/definitions"
mkdir -p "$defs"
cp -r "$top/scripts" "$defs/"
rm -rf "$defs/scripts/lava/output"
git -C "$defs" init -q
git -C "$defs" add -A
git -C "$defs" -c user.name=socbench -c user.email=socbench@localhost commit -q -m "socbench test definitions"

sed -e "s|@KERNEL@|$kernel_image|" -e "s|@RAMDISK@|$initrd|" -e "s|@DTB@|$dtb|" \
  -e "s|@DEFINITIONS@|$defs|" "$job_template" > "$out/job.yaml"
cp "$dictionary" "$out/device.yaml"

# --- lava-run. Its overlay step makes an ext2 disk with libguestfs, whose appliance boots the
# amd64 kernel package (this host may have no kernel of its own in /boot) under TCG (under
# KVM it can hang in a nested guest).
say "lava-run: $out/job.yaml on $out/device.yaml (the guest runs under the CPU lock)"
export SUPERMIN_KERNEL="$cache/amd64-kernel/boot/vmlinuz-$amd_version"
export SUPERMIN_MODULES="$amd_modules"
export LIBGUESTFS_BACKEND=direct LIBGUESTFS_BACKEND_SETTINGS=force_tcg
export LIBGUESTFS_CACHEDIR="$cache/guestfs"
mkdir -p "$LIBGUESTFS_CACHEDIR"
rc=0
locked lava-run --job-id socbench-device --output-dir "$out/lava" --device "$out/device.yaml" "$out/job.yaml" \
  > "$out/lava.log" 2>&1 || rc=$?
say "lava-run exited with status $rc; its log: $out/lava.log"
# The one thing this host may lack that nothing above checks: libguestfs's appliance.
if [ "$rc" -ne 0 ] && grep -q 'Unable to start libguestfs\|guestfs_launch failed\|supermin exited with error' "$out/lava.log"; then
  cannot "lava-run's overlay step could not start libguestfs's appliance (supermin with $SUPERMIN_KERNEL, under TCG); it needs supermin, qemu-system-x86 and a writable ${TMPDIR:-/tmp} (see $out/lava.log)"
fi

# --- LAVA's results, the archives from the guest's log, and the checks on this host.
host_bin="${SOCBENCH_BIN:-}"
if [ -z "$host_bin" ]; then
  (cd "$top" && cargo build --quiet -p benchmp-cli -p ftrace --bins) || { echo "device.sh: the host build of benchmp and ftrace failed" >&2; exit 1; }
  host_bin=${CARGO_TARGET_DIR:-target}
  case "$host_bin" in /*) ;; *) host_bin="$top/$host_bin" ;; esac
  host_bin="$host_bin/debug"
fi
for t in benchmp ftrace; do
  [ -x "$host_bin/$t" ] || die "$host_bin/$t is missing (SOCBENCH_BIN names a folder of this host's binaries)"
done
check=0
"$py" "$here/lib/device_results.py" "$out" "$host_bin" "${CLUSTERS[*]}" "${CAPACITY[*]}" || check=$?
if [ "$rc" -ne 0 ] || [ "$check" -ne 0 ]; then
  echo "device.sh: FAIL (lava-run status $rc, checks status $check; see $out/lava.log)" >&2
  exit 1
fi
say "PASS: every LAVA test case passed and every check held; results in $out"
