//! socbench `bw_mem`: memory bandwidth with lmbench's interface and result line. See README.md.

use anyhow::Result;
use benchmp::cli::{OutputArgs, PlacementArgs, Stream, TimingArgs};
use benchmp::{EXIT_FAILED, Pages, Session};
use bw_mem::kernels::{Isa, Kernel, LmbenchBuild};
use bw_mem::plan::plan;
use bw_mem::report::Extra;
use bw_mem::{limits, text};
use clap::Parser;

/// Memory bandwidth, lmbench-compatible: prints `<size in MB> <MB/s>` (MB = 10^6 bytes; the
/// size suffixes k, m, g are powers of 1024) on stderr, lmbench's stream (--stdout for
/// stdout); notes and warnings go to the other stream, never between the result lines.
///
/// WHAT is one of lmbench's rd wr rdwr cp fwr frd fcp bzero bcopy (same access pattern,
/// unrolling and byte counting), or rdvec (widest vector loads), wrnt (non-temporal stores),
/// cpnt (copy with non-temporal stores), memcpy, memset (libc), mix3_1, mix2_1, mix1_1 (reads to
/// writes, as Intel MLC's peak report); --list-ops describes them. Any third word selects
/// lmbench's "conflict" layout for copies (destination 1920 bytes into its buffer).
///
/// With -P N, N children each map their own buffers on their own CPU; the figure is the sum
/// per cluster (--aggregate). Exit status: 0 ok, 1 measurement failed, 2 bad usage or input,
/// 3 unsupported here (missing CPU feature, no huge pages).
#[derive(Debug, Parser)]
#[command(
    name = "bw_mem",
    version,
    override_usage = "bw_mem [OPTIONS] <size> <what> [conflict]\n       bw_mem [OPTIONS] --sweep FROM..TO <what> [conflict]\n       bw_mem --list-ops"
)]
struct Cli {
    #[command(flatten)]
    placement: PlacementArgs,
    #[command(flatten)]
    timing: TimingArgs,
    #[command(flatten)]
    output: OutputArgs,

    /// Page size of the buffers: system (no advice, the kernel's THP policy decides, as for
    /// lmbench's valloc), 4k (transparent huge pages refused), thp (asked with madvise) or huge
    /// (reserved 2 MiB hugetlb pages; needs /proc/sys/vm/nr_hugepages). Default: system, or
    /// under benchmp ab what its --pages asks of both sides.
    #[arg(long, value_enum)]
    pages: Option<Pages>,

    /// Implementation of rdvec, wrnt, cpnt and the mixes. Default: the widest this CPU has.
    #[arg(long, value_enum)]
    isa: Option<Isa>,

    /// Measure over sizes FROM..TO (e.g. 4k..512m), one line per size; then give only
    /// <what> [conflict].
    #[arg(long, value_name = "FROM..TO")]
    sweep: Option<String>,

    /// Factor between consecutive sizes of --sweep. Default: 2 (powers of two from a power of
    /// two).
    #[arg(long, value_name = "FACTOR", value_parser = bw_mem::sweep::parse_step)]
    step: Option<f64>,

    /// The GCC build of lmbench whose instruction shapes lmbench's unrolled operations
    /// follow: O2 (distributions', the NDK's and most published figures) or O (lmbench's own
    /// Makefile, for comparison with a default lmbench build). Only fwr differs: 16-byte
    /// stores under O2, 4-byte stores from each chunk's last int under O, which some cores run
    /// many times slower.
    #[arg(long, value_enum, default_value = "O2", value_name = "O|O2")]
    lmbench_build: LmbenchBuild,

    /// List every operation, what it does, and whether and how this CPU runs it.
    #[arg(long)]
    list_ops: bool,

    /// Also print (on the stream the results do not use) the per-child and per-cluster
    /// figures, the implementation, the pages obtained and the bus-traffic figure.
    #[arg(short = 'v', long)]
    verbose: bool,

    /// <size> <what> [conflict] (lmbench's arguments); with --sweep, <what> [conflict].
    #[arg(value_name = "ARGS", num_args = 0..=3)]
    args: Vec<String>,
}

/// How the contract test runs bw_mem (benchmp::cli::Example).
const EXAMPLES: &[benchmp::cli::Example] = &[benchmp::cli::Example {
    command: "",
    quick: "-N 1 64k rd",
    long: "-N 1000000 --json={tmp}/out.json --md={tmp}/out.md 64m rd",
}];

fn main() {
    benchmp::tool::main(
        "bw_mem",
        EXAMPLES,
        &[benchmp::error::probe::<bw_mem::Error>],
        |c: &Cli| c.output.trace,
        run,
    )
}

fn run(mut cli: Cli) -> Result<i32> {
    // lmbench's stream, so lmbench's own harness (which keeps only stderr) finds every line.
    cli.output = cli.output.results_on(Stream::Stderr);
    if cli.list_ops {
        benchmp::cli::write_stdout(&text::list_ops())?;
        return Ok(0);
    }
    if cli.step.is_some() && cli.sweep.is_none() {
        return Err(benchmp::Usage("--step goes with --sweep FROM..TO".into()).into());
    }
    cli.output.check()?;
    let plan = plan(&cli.args, cli.sweep.as_deref(), cli.step.unwrap_or(2.0))?;
    let kernel = Kernel::select(plan.op, cli.isa)?.with_build(cli.lmbench_build);
    let pages = cli.placement.pages(cli.pages);
    let mut s = Session::start("bw_mem", &cli.placement, &cli.timing, Some(&cli.output))?;
    let parallel = s.parallel();
    let largest = plan.sizes.iter().copied().max().unwrap_or(0);
    // Reserved huge pages are not part of MemAvailable: for `huge` the reservation is the limit.
    limits::need(plan.op, largest, parallel, pages).check()?;
    let notes = cli.output.note_stream();
    let text_mode = cli.output.text_mode();
    if cli.verbose && text_mode && plan.sweep {
        let cpu = s.placement.cpus.first().copied().flatten();
        let _ = notes.write(&text::cache_header(&s.topology, cpu));
    }
    bw_mem::run::measure(&mut s, &plan, kernel, pages)?;

    let mode = cli.output.aggregate;
    let extra = Extra::new(&plan, kernel, pages, s.measurements(), mode);
    let report = s.finish(&cli.output, Some(extra));
    // Decided before the report is written, which it is either way.
    let unmeasured = report.measurements.iter().find(|m| m.figure(mode) <= 0.0);
    let code = benchmp::emit(&report, &cli.output, |r| text::lmbench_lines(r, mode))?;
    if text_mode && (parallel > 1 || cli.verbose) {
        let _ = notes.write(&text::breakdown(&report, cli.verbose, mode));
    }
    if let Some(m) = unmeasured {
        let _ = notes.write(&format!(
            "bw_mem: nothing was measured at {} bytes (every interval took 0 ns)\n",
            m.params.size_bytes
        ));
        return Ok(EXIT_FAILED);
    }
    Ok(code)
}
