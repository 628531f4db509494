//! Kernels more than one tool runs. [`mem`]: lmbench's `bw_mem` operations and the
//! peak-bandwidth ones, which bw_mem measures and lat_mem_rd's load children run beside its
//! chaser. Each arch's implementations sit in their own file behind `cfg` and a run-time
//! check; `unsafe` is allowed only in those files.

pub mod mem;
