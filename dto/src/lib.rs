//! socbench `dto`: functional checks and A/B latency comparison of memory-operation
//! implementations (libc, a shared library such as Intel's libdto, built-in kernels), after the
//! functional and performance tests of Intel's DTO test suite. See README.md.

pub mod stats;
