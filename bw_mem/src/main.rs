//! socbench `bw_mem`: memory bandwidth with lmbench's interface and result line. See README.md.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use benchmp::cli::{OutputArgs, PlacementArgs, Stream, TimingArgs};
use benchmp::progress::Progress;
use benchmp::{ChildInfo, EXIT_FAILED, Iterations, Pages, Session, Spec};
use bw_mem::bench::BwBench;
use bw_mem::kernels::{Isa, Kernel, LmbenchBuild};
use bw_mem::ops::Stores;
use bw_mem::plan::{Plan, plan};
use bw_mem::report::{BwMem, Extra, PagesRow, Params, Report};
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
    /// (reserved 2 MiB hugetlb pages; needs /proc/sys/vm/nr_hugepages).
    #[arg(long, value_enum, default_value = "system")]
    pages: Pages,

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

fn main() {
    let mut cli: Cli = benchmp::cli::parse();
    // lmbench's stream, so lmbench's own harness (which keeps only stderr) finds every line.
    cli.output = cli.output.results_on(Stream::Stderr);
    benchmp::cli::init_logging(cli.output.trace);
    match run(cli) {
        Ok(code) => benchmp::cli::exit(code),
        Err(e) => benchmp::cli::exit(benchmp::cli::report_error("bw_mem", &e)),
    }
}

fn run(cli: Cli) -> Result<i32> {
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
    let mut s = Session::start("bw_mem", &cli.placement, &cli.timing)?;
    let parallel = s.parallel();
    let largest = plan.sizes.iter().copied().max().unwrap_or(0);
    // Reserved huge pages are not part of MemAvailable: for `huge` the reservation is the limit.
    limits::need(plan.op, largest, parallel, cli.pages).check()?;
    let notes = cli.output.note_stream();
    let verbose_text = cli.verbose && text_mode(&cli.output);
    if verbose_text && plan.sweep {
        let _ = notes.write(&format!("{}\n", cache_header(&s)));
    }

    let mut progress = Progress::new("bw_mem", plan.sizes.len());
    let mut hint: Option<(u64, u64)> = None;
    for &size in &plan.sizes {
        if plan.sweep {
            progress.step(&benchmp::size::HumanSize(size).to_string());
        }
        let nbytes = usize::try_from(size).context("size does not fit in this address space")?;
        let spec = spec(&plan, kernel, size, cli.pages, hint);
        let m = s.measure(spec, |_: &ChildInfo| {
            Ok(BwBench::new(kernel, nbytes, plan.conflict, cli.pages)?)
        })?;
        hint = m.children.first().map(|c| (size, c.iterations));
    }
    progress.finish();

    let mode = cli.output.aggregate;
    let extra = Extra::new(&plan, kernel, cli.pages, s.measurements(), mode);
    let mut report = s.finish(&cli.output, Some(extra));
    report.quality.notes = bw_mem::shape::checks(&report, plan.op)
        .iter()
        .filter(|c| c.is_artifact())
        .map(|c| c.note())
        .collect();
    report.figures = benchmp::figure::default_figures(&report.measurements, |m| {
        let p = &m.params;
        let size = benchmp::size::HumanSize(p.size_bytes);
        if p.conflict {
            format!("{} {size} conflict", p.op)
        } else {
            format!("{} {size}", p.op)
        }
    });
    let code = benchmp::emit(&report, &cli.output, |r| {
        r.measurements
            .iter()
            .filter(|m| m.figure(mode) > 0.0)
            .map(|m| text::lmbench_line(m.params.size_bytes, m.figure(mode)))
            .collect()
    })?;
    if text_mode(&cli.output) && (parallel > 1 || cli.verbose) {
        let _ = notes.write(&breakdown(&report, &plan, kernel, cli.verbose, mode));
    }
    if let Some(m) = report.measurements.iter().find(|m| m.figure(mode) <= 0.0) {
        let _ = notes.write(&format!(
            "bw_mem: nothing was measured at {} bytes (every interval took 0 ns)\n",
            m.params.size_bytes
        ));
        return Ok(EXIT_FAILED);
    }
    Ok(code)
}

/// True when the text (not JSON or CSV) goes to the terminal stream.
fn text_mode(o: &OutputArgs) -> bool {
    o.text_mode()
}

/// The measurement spec: lmbench's figure (size bytes per pass, in MB = 10^6), and the
/// parameters the report records.
fn spec(plan: &Plan, k: Kernel, size: u64, pages: Pages, hint: Option<(u64, u64)>) -> Spec<Params> {
    let params = Params::new(plan, k, size, pages);
    let mut spec = Spec::rate(
        plan.op.name(),
        params.bytes_counted_per_iteration as f64 / 1e6,
        "MB/s",
        params,
    );
    // Start the count where the previous size of a sweep ended, scaled by size.
    let start = hint.map(|(prev, n)| ((n as f64 * prev as f64 / size as f64) as u64).max(1));
    spec.iterations = Iterations::Calibrate { hint: start };
    spec
}

/// `# caches seen by CPU 0: L1 Data 48K, L2 Unified 1M, L3 Unified 32M`.
fn cache_header(s: &Session<BwMem>) -> String {
    let cpu = s.placement.cpus.first().copied().flatten();
    let caches: Vec<String> = s
        .topology
        .data_caches(cpu)
        .iter()
        .map(|c| {
            format!(
                "L{} {} {}",
                c.level,
                c.kind,
                benchmp::size::HumanSize(c.size_bytes)
            )
        })
        .collect();
    format!(
        "# caches seen by CPU {}: {}",
        cpu.map_or("-".to_string(), |c| c.to_string()),
        if caches.is_empty() {
            "unknown".to_string()
        } else {
            caches.join(", ")
        }
    )
}

/// What the stores of an operation do to the bus model, in words.
fn stores_text(s: Stores) -> &'static str {
    match s {
        Stores::None => "reads only",
        Stores::Normal => "ordinary stores: write-allocate read and write-back per line written",
        Stores::NonTemporal => "non-temporal stores: no write-allocate read",
        Stores::Libc => "libc's stores, modelled as ordinary (an upper bound: glibc may stream)",
    }
}

/// Per-child and per-cluster figures (with more than one child, or `verbose`) and, with
/// `verbose`, the implementation, bytes moved, bus figure and pages of every measurement, for
/// the note stream after the lmbench lines.
fn breakdown(
    r: &Report,
    plan: &Plan,
    k: Kernel,
    verbose: bool,
    mode: benchmp::AggregateMode,
) -> String {
    let pages: &[PagesRow] = r.extra.as_ref().map_or(&[], |e| &e.pages_obtained);
    let mut out = String::new();
    if verbose {
        let t = plan.op.traffic(plan.sizes[0]);
        let _ = writeln!(
            out,
            "# {}: {}; implementation {}; access {}; {}",
            plan.op,
            plan.op.description(),
            k.label(),
            k.access(),
            stores_text(t.stores)
        );
    }
    for m in &r.measurements {
        let size = m.params.size_bytes;
        if r.placement.cpus.len() > 1 || verbose {
            let _ = writeln!(out, "# {} {size} bytes:", plan.op);
            for l in benchmp::session::cluster_lines(r, m, mode) {
                let _ = writeln!(out, "#{l}");
            }
        }
        if verbose {
            let t = plan.op.traffic(size);
            let f = t.bus_bytes as f64 / t.counted_bytes.max(1) as f64;
            let mine: Vec<&PagesRow> = pages.iter().filter(|p| p.size_bytes == size).collect();
            let sum = |f: fn(&PagesRow) -> u64| mine.iter().map(|p| f(p)).sum::<u64>();
            let resident = sum(|p| p.pages.buf.rss_bytes + p.pages.buf2.map_or(0, |b| b.rss_bytes));
            let thp = sum(|p| {
                p.pages.buf.anon_huge_bytes + p.pages.buf2.map_or(0, |b| b.anon_huge_bytes)
            });
            let hugetlb =
                sum(|p| p.pages.buf.hugetlb_bytes + p.pages.buf2.map_or(0, |b| b.hugetlb_bytes));
            let _ = writeln!(
                out,
                "# {size} bytes: per pass {} touched, {} loaded, {} stored; bus (model, buffers beyond the caches) {:.2} MB/s = {f:.2} x the figure; pages: {resident} B resident, {thp} B THP, {hugetlb} B hugetlb",
                t.touched_bytes,
                t.load_bytes,
                t.store_bytes,
                m.figure(mode) * f,
            );
        }
    }
    if verbose {
        let _ = writeln!(
            out,
            "# wall {:.3} s, calibration {:.3} s ({:?} interval {} us)",
            r.wall_ns as f64 / 1e9,
            r.calibration_ns as f64 / 1e9,
            r.calibration.enough_source,
            r.calibration.enough_us
        );
    }
    out
}
