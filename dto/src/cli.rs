//! dto's command line: its subcommands and the options `ab` and `speedup` share.

use clap::{Args, Parser, Subcommand};

use benchmp::cli::{OutputArgs, PlacementArgs};

use crate::bench::PageKind;
use crate::env::parse_key_value;
use crate::impls::ImplSpec;

/// Functional checks and A/B latency comparison of memory-operation implementations.
///
/// Implementations: `cpu` (libc's functions via dlopen/dlsym), `lib:PATH` (memcpy, memmove,
/// memset and memcmp from a shared library, e.g. Intel's libdto) and the built-in kernels
/// listed by `dto list`. Exit status: 0 ok, 1 a check failed or an A/B cell regressed,
/// 2 bad usage or input, 3 unsupported here (CPU feature, huge pages). An A/A cell (one
/// implementation against itself, as every `speedup` row is) that moves is NOISY, not a failure.
#[derive(Debug, Parser)]
#[command(name = "dto", version)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// List the implementations and whether this CPU can run them.
    List {
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Check one implementation's results (all sizes, offsets, overlaps; several threads).
    ///
    /// Each function is checked in a child process that loads the implementation itself; a
    /// child that crashes or hangs is narrowed down, one child per size, to the first size that
    /// does so alone, and the check fails (exit 1) naming the function and that size.
    Check {
        /// Implementation to check: cpu, lib:PATH or a kernel name.
        #[arg(long = "impl", value_name = "IMPL", value_parser = ImplSpec::parse)]
        imp: ImplSpec,
        /// Threads running the checks at once, each with its own buffers.
        #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
        threads: u32,
        /// Set KEY=VALUE in the environment before loading the implementation (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_key_value)]
        env: Vec<(String, String)>,
        /// Seconds one function's check may stay silent before its child is called hung.
        #[arg(long, value_name = "S", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        timeout: u64,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A/B latency comparison of a baseline and a current implementation (the DTO perf test).
    ///
    /// The cpu configuration (libc against itself) is measured too, for the speedup summary,
    /// unless --no-cpu is given or both sides are cpu. Settings come from PERF_* variables
    /// (see README.md). Each round runs in a pinned child per CPU (--cpus, -P, --sched or
    /// LMBENCH_SCHED; else PERF_CPU, default 1), the CPUs one after another. Exit status 1
    /// when an A/B cell's trimmed mean grew by more than PERF_MIN_EFFECT percent; the cpu row
    /// is A/A and shows NOISY instead of FAIL.
    Ab {
        /// The baseline implementation (A).
        #[arg(long, value_name = "IMPL", value_parser = ImplSpec::parse)]
        baseline: ImplSpec,
        /// The current implementation (B), judged against the baseline.
        #[arg(long, value_name = "IMPL", value_parser = ImplSpec::parse)]
        current: ImplSpec,
        /// Label of this configuration in the tables (default: the current implementation's).
        #[arg(long, value_name = "NAME")]
        label: Option<String>,
        /// Do not measure the cpu configuration (no speedup summary).
        #[arg(long)]
        no_cpu: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Speedup of implementations over cpu: each measured A/A (against itself) next to cpu.
    Speedup {
        /// Implementations to measure (repeatable); default: every built-in kernel available.
        #[arg(long = "impl", value_name = "IMPL", value_parser = ImplSpec::parse)]
        imps: Vec<ImplSpec>,
        #[command(flatten)]
        common: Common,
    },
}

/// Options shared by `ab` and `speedup`.
#[derive(Debug, Args)]
pub struct Common {
    /// Run only these benchmarks (repeatable or comma-separated), e.g. memcpy_64k.
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Page sizes to measure (repeatable); 2m is skipped with a note when no huge pages are
    /// reserved.
    #[arg(long, value_enum, default_values_t = [PageKind::Small, PageKind::Huge])]
    pub pages: Vec<PageKind>,
    /// Set KEY=VALUE in the environment of every round's children (repeatable), e.g.
    /// DTO_MIN_BYTES=4096.
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    pub env: Vec<(String, String)>,
    /// Where the rounds run. Without --cpus, -P, --sched and LMBENCH_SCHED: on PERF_CPU
    /// (default 1, wrapped into the allowed CPUs). Children always run one after another;
    /// --timeout is raised to the longest round's generous expected time.
    #[command(flatten)]
    pub placement: PlacementArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
