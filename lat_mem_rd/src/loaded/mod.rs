//! `lat_mem_rd --loaded LEN`: memory latency while other cores stream through memory, as
//! Intel MLC's `--loaded_latency` and multichase's multiload report it.
//!
//! One measuring child chases lmbench's random chain (`-t`) over LEN on the first CPU of
//! `--cpus`. Load children (benchmp's, started before its first timed interval and judged over
//! exactly its window) run a bw_mem operation over their own buffers in chunks of
//! [`CHUNK_BYTES`], with an injection delay (iterations of an empty loop) after each chunk. One
//! row per delay, and an unloaded row first, each with the chaser's latency and the load
//! bandwidth the loads achieved over the chaser's window.

use std::hint::black_box;

use benchmp::cli::{OutputArgs, PlacementArgs, TimingArgs};
use benchmp::cpulist::format_cpu_list;
use benchmp::kernels::mem::{Buffers, Io, Kernel, Op};
use benchmp::run::Iterations;
use benchmp::size::HumanSize;
use benchmp::sys::mem::{MemError, MemoryNeed};
use benchmp::{Benchmark, ChildInfo, Pages, Session, Spec, Usage};

use crate::chain::{Geometry, Mode, Rings, lmbench_count};
use crate::kernels::LOADS_PER_PASS;
use crate::measure::build_child;

mod table;

use table::row;
pub use table::{
    ClusterLoad, LoadFigure, Loaded, Report, Row, RowParams, Table, coverage, figures, per_cluster,
    render,
};

/// Bytes a load child moves between two injection delays.
pub const CHUNK_BYTES: usize = 4096;

/// Default injection delays: from none (as fast as the load can go) to one at which the
/// load is a few per cent of its peak.
pub const DEFAULT_DELAYS: [u64; 8] = [0, 50, 200, 500, 1000, 2000, 5000, 20000];

/// Largest injection delay accepted (a billion empty loop iterations is seconds per chunk).
pub const MAX_DELAY: u64 = 100_000_000;

/// Measurements a loaded row may take while its load is starved (another task holds the load
/// CPU for part of the window, as on any busy 2-CPU machine) before it is kept as noisy.
pub const ATTEMPTS: usize = 3;

/// What a `--loaded` run is asked to do.
#[derive(Debug, Clone)]
pub struct Request {
    /// Chain size, bytes (the chase runs over all of it, lmbench's `-t` layout).
    pub len_bytes: u64,
    /// Chain stride, bytes.
    pub stride_bytes: u64,
    /// Size of each load child's buffer, bytes.
    pub load_bytes: u64,
    /// The load's operation.
    pub load: Op,
    /// Load CPUs given with `--load-cpus`.
    pub load_cpus: Option<Vec<usize>>,
    /// Injection delays, in the order given.
    pub delays: Vec<u64>,
    /// Page policy of every buffer.
    pub pages: Pages,
    /// Interval floor, µs.
    pub enough_floor_us: u64,
    /// Fixed seed of the chain's page shuffle.
    pub seed: Option<u64>,
}

/// The options of the load children of `--loaded` (each requires it).
#[derive(Debug, Clone, clap::Args)]
pub struct LoadArgs {
    /// The load's bw_mem operation (rd wr rdwr cp fwr frd fcp bzero bcopy rdvec wrnt cpnt
    /// memcpy memset mix3_1 mix2_1 mix1_1).
    #[arg(long, value_name = "OP", default_value = "rd", value_parser = parse_load, requires = "loaded")]
    pub load: Op,

    /// CPUs of the load children. Default: every allowed CPU but the chaser's.
    #[arg(long, value_name = "LIST", value_parser = benchmp::cli::cpu_list, requires = "loaded")]
    pub load_cpus: Option<benchmp::cli::CpuList>,

    /// Buffer of each load child (k, m, g suffixes). Default: LEN.
    #[arg(long, value_name = "SIZE", value_parser = crate::config::parse_nonzero_size, requires = "loaded")]
    pub load_size: Option<u64>,

    /// Injection delays, iterations of an empty loop after each 4 KiB chunk of load, one row
    /// each. Default: 0,50,200,500,1000,2000,5000,20000.
    #[arg(long, value_name = "LIST", value_parser = parse_delays, requires = "loaded")]
    pub delays: Option<Delays>,
}

impl LoadArgs {
    /// The request of a chase over `len_bytes` at `stride_bytes` under this load, every buffer
    /// on `pages` (the load's buffers default to `len_bytes`, the delays to [`DEFAULT_DELAYS`]).
    pub fn request(
        self,
        len_bytes: u64,
        stride_bytes: u64,
        pages: Pages,
        enough_floor_us: u64,
        seed: Option<u64>,
    ) -> Request {
        Request {
            len_bytes,
            stride_bytes,
            load_bytes: self.load_size.unwrap_or(len_bytes),
            load: self.load,
            load_cpus: self.load_cpus.map(|l| l.0),
            delays: self.delays.map_or_else(|| DEFAULT_DELAYS.to_vec(), |d| d.0),
            pages,
            enough_floor_us,
            seed,
        }
    }
}

/// `--delays`: injection delays in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delays(pub Vec<u64>);

/// Parses `--delays`: a comma-separated list of whole numbers of empty loop iterations.
pub fn parse_delays(s: &str) -> Result<Delays, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let d: u64 = part.parse().map_err(|_| {
            format!(
                "'{part}' is not a delay: give whole numbers of loop iterations, e.g. 0,200,5000"
            )
        })?;
        if d > MAX_DELAY {
            return Err(format!(
                "delay {d} is above the largest accepted, {MAX_DELAY}"
            ));
        }
        if out.contains(&d) {
            return Err(format!("delay {d} is given twice"));
        }
        out.push(d);
    }
    Ok(Delays(out))
}

/// Parses `--load`: any bw_mem operation.
pub fn parse_load(s: &str) -> Result<Op, String> {
    Op::parse(s).ok_or_else(|| format!("'{s}' is not a bw_mem operation; one of: {}", Op::names()))
}

/// The CPUs the loads run on: those given, checked by benchmp as --cpus is (online, allowed,
/// each once), or every allowed CPU but the chaser's. Refuses the chaser's own CPU and an
/// empty set.
pub fn load_cpus(
    given: Option<&[usize]>,
    online: &[usize],
    allowed: &[usize],
    chaser: usize,
) -> Result<Vec<usize>, Usage> {
    let cpus: Vec<usize> = match given {
        Some(list) => {
            benchmp::sched::check_cpu_list(list, online, allowed)
                .map_err(|e| Usage(format!("--load-cpus: {e}")))?;
            list.to_vec()
        }
        None => allowed.iter().copied().filter(|&c| c != chaser).collect(),
    };
    if cpus.is_empty() {
        return Err(Usage(format!(
            "--loaded needs a CPU for the load besides the chaser's (CPU {chaser}); this process may use {}",
            format_cpu_list(allowed)
        )));
    }
    if cpus.contains(&chaser) {
        return Err(Usage(format!(
            "--load-cpus: CPU {chaser} is the chaser's; the load needs other CPUs"
        )));
    }
    Ok(cpus)
}

/// A load child: passes of `kernel` over its buffers chunk by chunk, each chunk followed by
/// the injection delay.
#[derive(Debug)]
struct Loader {
    kernel: Kernel,
    bufs: Buffers,
    len: usize,
    at: usize,
    delay: u64,
}

impl Loader {
    /// In the load child: the framework's own errors (a kernel refused, memory it cannot map),
    /// which it reports with their exit status.
    fn new(op: Op, len: usize, pages: Pages) -> Result<Loader, benchmp::BuildError> {
        let kernel = Kernel::select(op, None)?;
        let bufs = Buffers::new(len, op.uses_second_buffer(), false, pages)?;
        Ok(Loader {
            kernel,
            bufs,
            len: len - len % CHUNK_BYTES,
            at: 0,
            delay: 0,
        })
    }
}

/// `n` iterations of an empty loop the optimiser cannot remove.
#[inline(never)]
fn inject_delay(n: u64) {
    for i in 0..n {
        black_box(i);
    }
}

impl Benchmark for Loader {
    type Sample = ();
    type Child = ();

    fn run(&mut self, iterations: u64) -> u64 {
        let mut sum = 0u64;
        for _ in 0..iterations {
            let r = self.at..self.at + CHUNK_BYTES;
            let io = match self.bufs.io() {
                Io::One(b) => Io::One(&mut b[r]),
                Io::Two(s, d) => Io::Two(&s[r.clone()], &mut d[r]),
            };
            sum = sum.wrapping_add(self.kernel.passes(black_box(io), 1));
            self.at += CHUNK_BYTES;
            if self.at >= self.len {
                self.at = 0;
            }
            inject_delay(self.delay);
        }
        sum
    }
}

/// The refusal of a loaded run whose memory does not fit, naming each part: the chaser's chain
/// and the load children's buffers, one or two each as the load's operation uses.
fn too_big(req: &Request, chain_bytes: u64, loads: usize, need: u128, have: u64) -> String {
    let buffers = if req.load.uses_second_buffer() {
        "a source and a destination buffer"
    } else {
        "one buffer"
    };
    format!(
        "--loaded {}: the chaser's chain ({} bytes) and {loads} load {} of {} with {buffers} of {} each (--load-size, default LEN) need {need} bytes of memory but only {have} bytes are available (MemAvailable in /proc/meminfo)",
        HumanSize(req.len_bytes),
        chain_bytes,
        if loads == 1 { "child" } else { "children" },
        req.load.name(),
        HumanSize(req.load_bytes),
    )
}

/// The one stride of a `--loaded` run over `len_bytes` (default lmbench's), checked as the
/// random chain it will be.
pub fn stride(len_bytes: u64, strides: &[u64]) -> Result<u64, Usage> {
    let stride = match strides {
        [] => crate::chain::DEFAULT_STRIDE as u64,
        [s] => *s,
        _ => return Err(Usage("--loaded takes one stride at most".into())),
    };
    crate::config::check(
        &crate::config::Request {
            len_bytes,
            strides: vec![stride],
            random: true,
            ..crate::config::Request::default()
        },
        crate::config::system_page_size(),
    )?;
    Ok(stride)
}

/// `--loaded`: measures the table `req` asks for and writes it as `output` asks. Returns the
/// exit status.
pub fn run(
    req: &Request,
    placement: &PlacementArgs,
    timing: &TimingArgs,
    output: &OutputArgs,
) -> Result<i32, crate::Error> {
    let mut session =
        Session::<Loaded>::start(crate::measure::TOOL, placement, timing, Some(output))?;
    let table = measure(&mut session, req)?;
    let report = session.finish(output, Some(table));
    Ok(benchmp::emit(&report, output, |r| {
        r.extra.as_ref().map(render).unwrap_or_default()
    })?)
}

/// Checks the request, measures the unloaded row and one row per delay, and returns the table.
pub fn measure(session: &mut Session<Loaded>, req: &Request) -> Result<Table, crate::Error> {
    let chaser = match session.placement.cpus.first() {
        Some(&Some(c)) => c,
        _ => *session
            .placement
            .allowed
            .first()
            .ok_or_else(|| Usage("no CPU is allowed for the chaser".into()))?,
    };
    let cpus = load_cpus(
        req.load_cpus.as_deref(),
        &session.topology.online(),
        &session.placement.allowed,
        chaser,
    )?;
    if req.load_bytes < CHUNK_BYTES as u64 {
        return Err(Usage(format!(
            "each load's buffer (--load-size, default LEN) must be at least {}, one chunk",
            HumanSize(CHUNK_BYTES as u64)
        ))
        .into());
    }
    let page = crate::config::system_page_size() as usize;
    let g = Geometry {
        range: req.len_bytes as usize,
        stride: req.stride_bytes as usize,
        maxlen: req.len_bytes as usize,
        pagesize: page,
        mode: Mode::Random,
        rings: Rings::Lmbench,
    };
    // The chaser's chain and every load child's buffers, counted as one child's for the check.
    let per_load = req.load_bytes * if req.load.uses_second_buffer() { 2 } else { 1 };
    MemoryNeed {
        size_bytes: req.len_bytes,
        buffers: vec![
            g.alloc_bytes() as u64,
            per_load.saturating_mul(cpus.len() as u64),
        ],
        children: 1,
        pages: req.pages,
    }
    .check()
    .map_err(|e| match e {
        MemError::TooBig {
            need_bytes,
            have_bytes,
            ..
        } => crate::Error::Usage(Usage(too_big(
            req,
            g.alloc_bytes() as u64,
            cpus.len(),
            need_bytes,
            have_bytes,
        ))),
        other => crate::Error::Memory(other),
    })?;
    let kernel = Kernel::select(req.load, None)?;
    let traffic = req.load.traffic(CHUNK_BYTES as u64);
    let load_cpus: Vec<Option<usize>> = cpus.iter().map(|&c| Some(c)).collect();
    let topology = session.topology.clone();
    let mut rows = Vec::new();
    for delay in std::iter::once(None).chain(req.delays.iter().copied().map(Some)) {
        let mut spec = Spec::latency(
            &match delay {
                None => "unloaded".to_string(),
                Some(d) => format!("delay {d}"),
            },
            LOADS_PER_PASS as f64,
            RowParams {
                size_bytes: req.len_bytes,
                stride_bytes: req.stride_bytes,
                delay,
                load: req.load.name().into(),
            },
        );
        spec.enough_floor_us = req.enough_floor_us;
        spec.loop_overhead_share = LOADS_PER_PASS as f64 / lmbench_count(g.range, g.stride) as f64;
        spec.iterations = Iterations::Calibrate { hint: None };
        // One chaser, on the placement's first CPU. A row whose load did not run through the
        // whole window (starved by another task) is measured again, up to ATTEMPTS times; then
        // it is kept with its measured load share and a noise reason, and the table goes on.
        let mut attempt = 0;
        let r = loop {
            attempt += 1;
            let m = session.measure_on(
                Some(&[chaser]),
                spec.clone(),
                |child: &ChildInfo| Ok(build_child(&g, req.pages, req.seed, child)?),
                benchmp::Loads {
                    cpus: if delay.is_some() { &load_cpus } else { &[] },
                    required: false,
                },
                |_: &ChildInfo| {
                    let mut l = Loader::new(req.load, req.load_bytes as usize, req.pages)?;
                    l.delay = delay.unwrap_or(0);
                    Ok(l)
                },
            )?;
            let mut r = row(
                m,
                delay,
                &topology,
                traffic.counted_bytes as f64,
                traffic.bus_bytes as f64,
            );
            r.attempts = attempt;
            let starved: Vec<&LoadFigure> = r.loads.iter().filter(|l| !l.ran_through).collect();
            if starved.is_empty() {
                break r;
            }
            if attempt == ATTEMPTS {
                r.noise = Some(format!(
                    "delay {}: the load was starved in all {ATTEMPTS} attempts (another task took {}); its last attempt is kept, the load running {:.0} % of the window",
                    delay.unwrap_or(0),
                    starved
                        .iter()
                        .map(|l| format!("CPU {} for {:.3} s", l.cpu, l.stalled_ns as f64 / 1e9))
                        .collect::<Vec<_>>()
                        .join(", "),
                    r.overlap * 100.0
                ));
                break r;
            }
        };
        rows.push(r);
    }
    Ok(Table {
        size_bytes: req.len_bytes,
        stride_bytes: req.stride_bytes,
        layout: "random".into(),
        chase_cpu: chaser,
        load: req.load.name().into(),
        load_kernel: kernel.label(),
        load_cpus: cpus,
        load_bytes: req.load_bytes,
        chunk_bytes: CHUNK_BYTES as u64,
        delay_unit: "iterations of an empty loop after each chunk".into(),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchmp::run::LoadRun;
    use benchmp::topology::Topology;

    #[test]
    fn one_stride_at_most_checked_as_a_random_chain() {
        assert_eq!(stride(8 << 20, &[]).unwrap(), 64);
        assert_eq!(stride(8 << 20, &[128]).unwrap(), 128);
        let many = stride(8 << 20, &[64, 128]).unwrap_err();
        assert!(many.0.contains("one stride at most"), "{many}");
        assert!(stride(8 << 20, &[3]).is_err(), "smaller than a pointer");
    }

    #[test]
    fn the_load_defaults_to_the_chain_size_and_the_default_delays() {
        let args = LoadArgs {
            load: Op::Rd,
            load_cpus: None,
            load_size: None,
            delays: None,
        };
        let r = args.request(1 << 20, 64, Pages::Small, 100, Some(7));
        assert_eq!(
            (r.len_bytes, r.load_bytes, r.stride_bytes),
            (1 << 20, 1 << 20, 64)
        );
        assert_eq!(r.delays, DEFAULT_DELAYS);
        assert_eq!((r.enough_floor_us, r.seed), (100, Some(7)));
    }

    #[test]
    fn delays_parse_and_refuse() {
        assert_eq!(parse_delays("0,200, 5000").unwrap().0, vec![0, 200, 5000]);
        for bad in ["", "1,,2", "-1", "x", "1.5", "3,3", "100000001"] {
            assert!(parse_delays(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn load_ops_parse() {
        assert_eq!(parse_load("cp").unwrap(), Op::Cp);
        assert_eq!(parse_load("mix2_1").unwrap(), Op::Mix2_1);
        assert!(parse_load("read").unwrap_err().contains("rd"));
    }

    #[test]
    fn load_cpus_default_to_the_others_and_refuse_mistakes() {
        let all = [0, 1, 2, 3];
        assert_eq!(load_cpus(None, &all, &all, 2).unwrap(), vec![0, 1, 3]);
        assert_eq!(load_cpus(Some(&[3]), &all, &all, 0).unwrap(), vec![3]);
        let e = |given: &[usize], allowed: &[usize]| {
            load_cpus(Some(given), &all, allowed, 0).unwrap_err().0
        };
        assert!(
            load_cpus(None, &all, &[0], 0)
                .unwrap_err()
                .0
                .contains("besides")
        );
        assert!(e(&[0], &[0, 1]).contains("chaser"));
        let not_allowed = e(&[3], &[0, 1]);
        assert!(
            not_allowed.starts_with("--load-cpus: CPU 3 is not in this process's allowed CPU set"),
            "{not_allowed}"
        );
        assert!(e(&[5], &[0, 1]).contains("not online"));
        assert_eq!(e(&[1, 1], &[0, 1]), "--load-cpus: CPU 1 is given twice");
    }

    /// On the phone fixture (clusters 0-1, 2-4, 5-6, 7), the default loads of a chaser on
    /// CPU 4 are the seven other CPUs, over all four clusters, summed per cluster.
    #[test]
    fn phone8_loads_sum_per_cluster() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../benchmp/tests/fixtures/phone8/sys");
        let topo = Topology::from_root(&root).unwrap();
        let allowed: Vec<usize> = (0..8).collect();
        let cpus = load_cpus(None, &allowed, &allowed, 4).unwrap();
        assert_eq!(cpus, vec![0, 1, 2, 3, 5, 6, 7]);
        let loads: Vec<LoadFigure> = cpus
            .iter()
            .map(|&cpu| LoadFigure {
                cpu,
                cluster: topo.cluster_of(cpu),
                mb_s: 1000.0 * (cpu as f64 + 1.0),
                coverage: 1.0,
                stalled_ns: 0,
                ran_through: true,
            })
            .collect();
        let c = per_cluster(&loads);
        let summary: Vec<(usize, Vec<usize>, f64)> = c
            .iter()
            .map(|k| (k.cluster, k.cpus.clone(), k.mb_s))
            .collect();
        assert_eq!(
            summary,
            vec![
                (0, vec![0, 1], 3_000.0),
                (1, vec![2, 3], 7_000.0),
                (2, vec![5, 6], 13_000.0),
                (3, vec![7], 8_000.0)
            ]
        );
        let t = Table {
            size_bytes: 1 << 20,
            stride_bytes: 64,
            layout: "random".into(),
            chase_cpu: 4,
            load: "rd".into(),
            load_kernel: "x".into(),
            load_cpus: cpus,
            load_bytes: 1 << 20,
            chunk_bytes: 4096,
            delay_unit: String::new(),
            rows: vec![Row {
                delay: Some(0),
                latency_ns: 100.0,
                samples: vec![100.0],
                load_mb_s: 31_000.0,
                load_bus_mb_s: 31_000.0,
                loads,
                clusters: c,
                overlap: 1.0,
                attempts: 1,
                noise: None,
            }],
        };
        let text = render(&t);
        assert!(text.contains("cluster 3"), "{text}");
        assert!(
            text.lines().last().unwrap().trim_end().ends_with("8000"),
            "{text}"
        );
    }

    /// A load that does not fit is worded by its operation's buffers: rd has one, cp two.
    #[test]
    fn a_refusal_names_the_buffers_of_the_load() {
        let req = |load| Request {
            len_bytes: 8 << 20,
            stride_bytes: 64,
            load_bytes: 100 << 30,
            load,
            load_cpus: None,
            delays: vec![0],
            pages: Pages::System,
            enough_floor_us: 0,
            seed: None,
        };
        let rd = too_big(&req(Op::Rd), 8 << 20, 1, 1 << 40, 1 << 30);
        assert!(
            rd.contains("1 load child of rd with one buffer of 100G each"),
            "{rd}"
        );
        assert!(!rd.contains("destination"), "{rd}");
        let cp = too_big(&req(Op::Cp), 8 << 20, 3, 1 << 40, 1 << 30);
        assert!(
            cp.contains("3 load children of cp with a source and a destination buffer of 100G"),
            "{cp}"
        );
        assert!(cp.contains("memory") && !cp.contains('\n'), "{cp}");
    }

    /// Coverage counts only the part of the window the load ran without stalling.
    #[test]
    fn coverage_of_a_window() {
        let mut l = LoadRun {
            index: 1,
            pid: 1,
            cpu: Some(1),
            started_ns: 0,
            stopped_ns: 1000,
            window_start_ns: 100,
            window_end_ns: 900,
            iterations: 1.0,
            batches: 1,
            median_batch_ns: 1,
            longest_batch_ns: 1,
            stalled_ns: 0,
            ran_through: true,
            checksum: 0,
        };
        assert_eq!(coverage(&l), 1.0);
        l.stalled_ns = 200;
        assert_eq!(coverage(&l), 0.75);
        l.stalled_ns = 0;
        l.stopped_ns = 500;
        assert_eq!(coverage(&l), 0.5);
    }

    /// Every operation runs chunk by chunk over its buffers, wrapping at the end.
    #[test]
    fn a_loader_runs_every_operation() {
        for op in Op::ALL {
            let Ok(mut l) = Loader::new(op, 3 * CHUNK_BYTES + 100, Pages::Small) else {
                continue; // no kernel on this CPU (non-temporal stores without SIMD)
            };
            l.delay = 3;
            l.run(7);
            assert_eq!(
                l.at, CHUNK_BYTES,
                "{op}: 7 chunks over 3 wrap to the second"
            );
        }
    }
}
