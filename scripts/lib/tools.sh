#!/bin/sh
# The suite's tools, for the scripts that check names before any binary exists. The plan
# itself (which tool runs with which arguments in each mode) is `benchmp suite`'s, in Rust
# (benchmp/src/cmd/suite/plan.rs); a test there checks that this list is its list.

# shellcheck disable=SC2034  # used by the scripts that source this file
SUITE_TOOLS="bw_mem lat_mem_rd dhry coremark dto"
