#!/bin/sh
# The suite's tools, in the order the suite runs them: the one place a tool joins the suite.
# `benchmp suite` compiles each one's entries (TOOL/src/suite.rs) into its plan from this
# line (benchmp-cli/build.rs), and the scripts check names against it before any binary exists.

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
