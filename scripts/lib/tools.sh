#!/bin/sh
# The suite's tools, for the scripts that check names before any binary exists. The plan
# itself (which tool runs with which arguments in each mode) is `benchmp suite`'s, in Rust
# (benchmp-cli/src/cmd/suite/plan.rs); a test there checks that this list is its list.

# shellcheck disable=SC2034  # used by the scripts that source this file
SUITE_TOOLS="bw_mem lat_mem_rd dhry coremark dto"
# Every binary socbench builds: the front door, the suite's tools and the trace writer.
# shellcheck disable=SC2034  # used by the scripts that source this file
ALL_BINARIES="benchmp $SUITE_TOOLS ftrace"

# tool_package NAME: the cargo package that builds the binary NAME (benchmp, the front door,
# is benchmp-cli's; every tool is its own package).
tool_package() {
  case $1 in
    benchmp) echo benchmp-cli ;;
    *) echo "$1" ;;
  esac
}
