#!/usr/bin/env bash
# The efficiency sweep's example in benchmp-cli/README.md: `benchmp efficiency` on a copy of the
# phone8 fixture (CPUs 0-1 with scaling_available_frequencies, CPU 7 with stats/time_in_state),
# its tools stand-ins (benchmp-cli/tests/fixtures/efficiency/standin.sh) whose figures and power
# are known functions of the clock, since this machine has no cpufreq and no power source;
# then its plot. Usage: scripts/efficiency_phone8.sh OUT [BENCHMP] (OUT must not exist).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
[ $# -ge 1 ] || { echo "usage: scripts/efficiency_phone8.sh OUT [BENCHMP]" >&2; exit 2; }
out=$1
benchmp=${2:-$top/target/release/benchmp}
work=$(mktemp -d "${TMPDIR:-/tmp}/socbench-efficiency.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -a "$top/benchmp/tests/fixtures/phone8/sys" "$work/sys"
policies=$work/sys/devices/system/cpu/cpufreq
echo "307200 1017600 1804800 2265600 " > "$policies/policy0/scaling_available_frequencies"
mkdir -p "$policies/policy7/stats"
printf '480000 0\n1171200 10\n2054400 20\n3302400 30\n' > "$policies/policy7/stats/time_in_state"
mkdir -p "$work/bin"
for t in dhry coremark; do
  cp "$top/benchmp-cli/tests/fixtures/efficiency/standin.sh" "$work/bin/$t"
  chmod +x "$work/bin/$t"
done
BENCHMP_SYSFS_ROOT=$work/sys SOCBENCH_STATE_DIR=$work/state \
  "$benchmp" efficiency --cpus 0-1,7 --bin-dir "$work/bin" --out "$out"
python3 "$here/plot_efficiency.py" "$out"
