//! socbench `bw_mem`: lmbench-compatible memory bandwidth, per core and per cluster, plus the
//! kernels that show a machine's peak (widest vector loads, non-temporal stores, libc copies,
//! read/write mixes as Intel MLC reports them).
//!
//! It reproduces lmbench's `bw_mem` (spec bw_mem.md): the nine operations with their access
//! pattern, 512-byte unrolling, 16-byte stride and byte accounting, per-child buffers with the
//! `conflict` layout, the size rules and the exact result line. Timing, children, placement and
//! aggregation come from benchmp. The binary is `src/main.rs`; this library holds what the
//! tests check: operations, kernels, buffers and output.

pub mod bench;
pub mod error;
pub mod limits;
pub mod plan;
pub mod report;
pub mod run;
pub mod shape;
pub mod suite;
pub mod sweep;
pub mod text;

// The memory kernels, their operations and buffers are benchmp's (lat_mem_rd's load children
// run them too); bw_mem names them as it always has.
pub use benchmp::kernels::mem as kernels;
pub use benchmp::kernels::mem::ops;
pub use error::Error;
