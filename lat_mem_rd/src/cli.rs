//! lat_mem_rd's command line: lmbench's arguments, socbench's options, and the request they
//! make of the sweep.

use benchmp::Pages;
use benchmp::cli::{OutputArgs, PlacementArgs, TimingArgs};
use clap::Parser;

use crate::config::{self, Request};
use crate::loaded;

/// Measures memory load latency with lmbench's pointer chase: for each stride, for array sizes
/// from 512 bytes up to LEN (lmbench's grid), nanoseconds per dependent load.
///
/// Output is lmbench's: a `"stride=N` header per stride and one `MiB ns` line per size, on
/// stderr as lmbench writes them (--stdout for stdout), an empty line after each block when
/// strides are given. A summary of the plateaus (L1, L2, L3, DRAM) and steps follows on the
/// other stream when it is a terminal, or always with --summary, so nothing but data is ever
/// inside a block; --json has everything, including each child's curve. Exit status: 0 ok, 1 measurement failed (or noisy with --fail-on-noise), 2 bad
/// usage or input, 3 not supported here (e.g. no huge pages reserved).
#[derive(Debug, Parser)]
#[command(
    name = "lat_mem_rd",
    version,
    override_usage = "lat_mem_rd [OPTIONS] <LEN> [STRIDE]...\n       lat_mem_rd [OPTIONS] --c2c\n       lat_mem_rd [OPTIONS] --loaded <LEN> [STRIDE]"
)]
pub struct Cli {
    #[command(flatten)]
    pub placement: PlacementArgs,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub output: OutputArgs,

    /// Random chains (lmbench's -t "thrash" mode): cache lines in bit-reversed order within
    /// pages, pages shuffled over the whole buffer, so prefetchers are defeated and TLB misses
    /// show. Default: a sequential forward ring.
    #[arg(short = 't', long = "random")]
    pub random: bool,

    /// With -t, build one ring through every element at sizes that are not page multiples;
    /// lmbench's layout repeats elements there and walks a shorter ring (e.g. 16 of 48 at 3K).
    /// Default: lmbench's rings, so figures compare.
    #[arg(long)]
    pub exact_rings: bool,

    /// First array size (k, m, g suffixes). Default: 512, lmbench's. An off-grid start follows
    /// lmbench's step rule from there.
    #[arg(long, value_name = "SIZE", value_parser = config::parse_nonzero_size)]
    pub min: Option<u64>,

    /// Last array size at most (k, m, g suffixes), not above LEN. Default: LEN.
    #[arg(long, value_name = "SIZE", value_parser = config::parse_nonzero_size)]
    pub max: Option<u64>,

    /// Page size of the buffers: system (no advice, the kernel's THP policy decides, as for
    /// lmbench's malloc), 4k (transparent huge pages refused with MADV_NOHUGEPAGE), thp (asked
    /// with MADV_HUGEPAGE) or huge (reserved 2 MiB hugetlb pages, see
    /// /proc/sys/vm/nr_hugepages). The pages obtained are in the JSON. Default: system, or
    /// under benchmp ab what its --pages asks of both sides.
    #[arg(long, value_enum, value_name = "PAGES")]
    pub pages: Option<Pages>,

    /// Print the curve summary on the stream the results do not use (stdout by default)
    /// even when it is not a terminal.
    #[arg(long)]
    pub summary: bool,

    /// Core clock in MHz for cycles in the summary. Default: the median clock the children
    /// measured before and after their timed intervals (three instruction chains that must
    /// agree, labelled an estimate); where they cannot, cpufreq's cpuinfo_max_freq; with
    /// neither, cycles are unavailable.
    #[arg(long, value_name = "MHZ", value_parser = benchmp::freq::parse_mhz)]
    pub mhz: Option<f64>,

    /// Calibrate from scratch at every size (new framework calibration, counts from 1), as a
    /// reference for the default, which predicts each size's count from the size before.
    #[arg(long)]
    pub recalibrate_each_size: bool,

    /// Shortest timed interval in µs whatever the calibration says. Default 100000, the 100 ms
    /// lmbench's lat_mem_rd imposes; 0 keeps the calibrated ENOUGH alone (a much faster sweep
    /// with nanosecond clocks, at the price of comparability with lmbench's intervals).
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(0..=60_000_000))]
    pub enough_floor: Option<u64>,

    /// Seed for the page shuffle of random chains. Default: from the process id and the
    /// clock, as lmbench seeds from its pid.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Core-to-core latency instead of a sweep: for every ordered pair of the CPUs of --cpus
    /// (default: every allowed CPU), two pinned children bounce one cache line; prints the
    /// matrix of ns per one-way transfer and a summary per pair of clusters. No LEN.
    #[arg(long, conflicts_with_all = ["random", "exact_rings", "min", "max", "summary", "recalibrate_each_size", "enough_floor", "seed", "strides", "len"])]
    pub c2c: bool,

    /// Latency under load instead of a sweep: one child chases lmbench's random chain (-t)
    /// over LEN on the first CPU of --cpus while load children run a bw_mem operation on
    /// --load-cpus, throttled by each of --delays in turn; prints one row per delay (and an
    /// unloaded row) with the latency and the load bandwidth, as MLC's loaded-latency table.
    #[arg(long, conflicts_with_all = ["c2c", "exact_rings", "min", "max", "summary", "recalibrate_each_size"])]
    pub loaded: bool,

    #[command(flatten)]
    pub load: loaded::LoadArgs,

    /// Largest array size: a whole number of MiB as lmbench's (64 = 64 MiB), or a size with a
    /// k, m or g suffix (512k, 8m, 1g). Each child allocates it (plus two pages) at every size.
    #[arg(value_name = "LEN", value_parser = config::parse_len, required_unless_present = "c2c")]
    pub len: Option<u64>,

    /// Strides in bytes (k, m suffixes), at least a pointer's size. Default: 64 (512 / pointer
    /// size, lmbench's).
    #[arg(value_name = "STRIDE", value_parser = config::parse_nonzero_size)]
    pub strides: Vec<u64>,
}

impl Cli {
    /// The pages asked: --pages, else what a benchmp ab driver asks of both sides, else system.
    pub fn pages(&self) -> Pages {
        self.placement.pages(self.pages)
    }

    /// What the sweep options ask for (checked by [`config::check`]).
    pub fn request(&self) -> Request {
        Request {
            len_bytes: self.len.unwrap_or(0),
            strides: self.strides.clone(),
            min: self.min,
            max: self.max,
            random: self.random,
            exact_rings: self.exact_rings,
            pages: Some(self.pages()),
            recalibrate_each_size: self.recalibrate_each_size,
            seed: self.seed,
            enough_floor_us: self.enough_floor,
        }
    }
}
