//! `lat_mem_rd --c2c`: how long a cache line takes to travel from one core to another, for
//! every ordered pair of CPUs, as a matrix with a summary per pair of clusters.
//!
//! Two pinned children share one cache line (benchmp's [`SharedPage`], mapped before they
//! are forked): the measuring child (the pinger, on the row's CPU) and a load child (the
//! ponger, on the column's CPU), started before the pinger's first timed interval and stopped
//! after its last. The handshake is compare-and-swap on a sequence number: the pinger swaps
//! the even number it expects for the next odd one, the ponger the odd one for the next even
//! one, each retrying its swap until the other's has landed, so every attempt asks for the
//! line in exclusive state (as nviennot's core-to-core-latency's CAS benchmark does). One
//! round trip moves the line twice, so the figure is the round trip's time over two: ns per
//! one-way transfer, the median of the intervals (each a fixed count of round trips).

use std::hint::spin_loop;
use std::sync::atomic::{AtomicU64, Ordering};

use benchmp::cli::{OutputArgs, PlacementArgs, TimingArgs};
use benchmp::schema::Better;
use benchmp::schema::Figure;
use benchmp::sys::mem::SharedPage;
use benchmp::{Benchmark, Iterations, Rule, Session, Spec, ToolData, Usage};
use serde::{Deserialize, Serialize};

/// How the line is bounced, in words (recorded in the report).
pub const HANDSHAKE: &str = "compare-and-swap on one cache line: the pinger swaps the even sequence number it expects for the next odd one, the ponger the odd one for the next even one, each retrying until the other's swap has landed (acquire-release)";

/// Round trips in one timed interval.
pub const ROUND_TRIPS: u64 = 2000;

/// Spins a ponger waits for a ping before it returns to check on its parent.
const IDLE_SPINS: u32 = 1 << 14;

/// The report data of a `--c2c` run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct C2c;

impl ToolData for C2c {
    type Params = Pair;
    type Sample = ();
    type Child = ();
    type Extra = Matrix;

    /// One figure per ordered pair ([`figures`]).
    fn figures(report: &Report) -> Vec<Figure> {
        report.extra.as_ref().map(figures).unwrap_or_default()
    }
}

/// The report of a `--c2c` run.
pub type Report = benchmp::Report<C2c>;

/// One ordered pair: the line travels from `from_cpu`'s cache to `to_cpu`'s and back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pair {
    /// CPU of the pinger (the row).
    pub from_cpu: usize,
    /// CPU of the ponger (the column).
    pub to_cpu: usize,
    /// Round trips per timed interval.
    pub round_trips: u64,
}

/// The pinger: times `n` round trips.
#[derive(Debug)]
struct Pinger<'a> {
    line: &'a AtomicU64,
    seq: u64,
}

impl Benchmark for Pinger<'_> {
    type Sample = ();
    type Child = ();

    fn run(&mut self, iterations: u64) -> u64 {
        for _ in 0..iterations {
            // Lands once the ponger has answered the previous ping (the line holds `seq`).
            while self
                .line
                .compare_exchange(self.seq, self.seq + 1, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {}
            self.seq += 2;
        }
        self.seq
    }

    /// Nothing between intervals: a ping then would only disturb the ponger's cache.
    fn keep_busy(&mut self, _iterations: u64) -> u64 {
        spin_loop();
        0
    }
}

/// The ponger: answers pings until `n` are answered or none comes for a while.
#[derive(Debug)]
struct Ponger<'a> {
    line: &'a AtomicU64,
    /// The odd number the next ping stores.
    next: u64,
}

impl Benchmark for Ponger<'_> {
    type Sample = ();
    type Child = ();

    fn run(&mut self, iterations: u64) -> u64 {
        let mut answered = 0;
        let mut idle = 0u32;
        while answered < iterations && idle < IDLE_SPINS {
            let swapped = self.line.compare_exchange(
                self.next,
                self.next + 1,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
            if swapped.is_ok() {
                self.next += 2;
                answered += 1;
                idle = 0;
            } else {
                idle += 1;
            }
        }
        answered
    }
}

/// One measured pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairFigure {
    /// Pinger's CPU.
    pub from_cpu: usize,
    /// Ponger's CPU.
    pub to_cpu: usize,
    /// Cluster of `from_cpu`.
    pub from_cluster: usize,
    /// Cluster of `to_cpu`.
    pub to_cluster: usize,
    /// Median one-way transfer, ns.
    pub ns: f64,
    /// One-way ns of every accepted interval.
    pub samples: Vec<f64>,
}

/// Min and median over the pairs between two clusters (the same one twice: within it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterPair {
    /// One cluster.
    pub a: usize,
    /// The other (equal to `a`: pairs within the cluster).
    pub b: usize,
    /// Ordered pairs measured.
    pub pairs: usize,
    /// Fastest pair, ns.
    pub min_ns: f64,
    /// Median pair, ns.
    pub median_ns: f64,
}

/// The matrix and its summaries (the report's tool section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    /// CPUs, in row and column order.
    pub cpus: Vec<usize>,
    /// How the line is bounced.
    pub handshake: String,
    /// Round trips per timed interval.
    pub round_trips: u64,
    /// ns per one-way transfer, `ns[row][column]` (`None` on the diagonal).
    pub ns: Vec<Vec<Option<f64>>>,
    /// Every pair with its samples.
    pub pairs: Vec<PairFigure>,
    /// Per pair of clusters.
    pub clusters: Vec<ClusterPair>,
}

/// `--c2c`: measures the matrix over the CPUs of --cpus (default every allowed CPU) and
/// writes it as `output` asks. Returns the exit status.
pub fn run(
    placement: &PlacementArgs,
    timing: &TimingArgs,
    output: &OutputArgs,
) -> Result<i32, crate::Error> {
    let mut session = Session::<C2c>::start(crate::measure::TOOL, placement, timing, Some(output))?;
    let cpus = session.cpu_set();
    if cpus.len() < 2 {
        let which = match &placement.cpus {
            Some(_) => format!(
                "--cpus {} names one",
                benchmp::cpulist::format_cpu_list(&cpus)
            ),
            None => format!(
                "this process may use only CPU {}",
                benchmp::cpulist::format_cpu_list(&cpus)
            ),
        };
        return Err(Usage(format!("--c2c needs at least two CPUs; {which}")).into());
    }
    let repetitions = session.repetitions();
    let matrix = measure(&mut session, &cpus)?;
    let report = session.finish(output, Some(matrix));
    Ok(benchmp::emit(&report, output, |r| {
        r.extra
            .as_ref()
            .map(|m| render(m, repetitions))
            .unwrap_or_default()
    })?)
}

/// Measures every ordered pair of `cpus` (at least two, each allowed), each in a measurement
/// of `session` on the pair's CPUs, and returns the matrix.
pub fn measure(session: &mut Session<C2c>, cpus: &[usize]) -> Result<Matrix, crate::Error> {
    let page = SharedPage::new()?;
    let line = page.word(0);
    let mut pairs = Vec::new();
    for &from in cpus {
        for &to in cpus.iter().filter(|&&c| c != from) {
            line.store(0, Ordering::SeqCst);
            let (from_cluster, to_cluster) = (
                session.topology.cluster_of(from),
                session.topology.cluster_of(to),
            );
            let mut spec = Spec::latency(
                &format!("c2c {from}->{to}"),
                2.0,
                Pair {
                    from_cpu: from,
                    to_cpu: to,
                    round_trips: ROUND_TRIPS,
                },
            );
            spec.rule = Rule::Median;
            spec.iterations = Iterations::Fixed(ROUND_TRIPS);
            spec.subtract_loop_overhead = false;
            let m = session.measure_on(
                Some(&[from]),
                spec,
                |_| Ok(Pinger { line, seq: 0 }),
                // The ponger is the pinger's partner, not a load: a stall of it shows in the
                // pinger's interval, which the median already weighs.
                benchmp::Loads {
                    cpus: &[Some(to)],
                    required: false,
                },
                |_| Ok(Ponger { line, next: 1 }),
            )?;
            let samples: Vec<f64> = m.children[0].pairs().map(|p| m.metric.value(p)).collect();
            pairs.push(PairFigure {
                from_cpu: from,
                to_cpu: to,
                from_cluster,
                to_cluster,
                ns: m.aggregate.cluster,
                samples,
            });
        }
    }
    Ok(matrix(cpus, pairs))
}

/// The matrix and per-cluster-pair summaries of measured pairs.
pub fn matrix(cpus: &[usize], pairs: Vec<PairFigure>) -> Matrix {
    let ns = cpus
        .iter()
        .map(|&r| {
            cpus.iter()
                .map(|&c| {
                    pairs
                        .iter()
                        .find(|p| p.from_cpu == r && p.to_cpu == c)
                        .map(|p| p.ns)
                })
                .collect()
        })
        .collect();
    let mut keys: Vec<(usize, usize)> = pairs
        .iter()
        .map(|p| {
            (
                p.from_cluster.min(p.to_cluster),
                p.from_cluster.max(p.to_cluster),
            )
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let clusters = keys
        .into_iter()
        .map(|(a, b)| {
            let mut v: Vec<f64> = pairs
                .iter()
                .filter(|p| {
                    (
                        p.from_cluster.min(p.to_cluster),
                        p.from_cluster.max(p.to_cluster),
                    ) == (a, b)
                })
                .map(|p| p.ns)
                .collect();
            v.sort_by(f64::total_cmp);
            ClusterPair {
                a,
                b,
                pairs: v.len(),
                min_ns: v[0],
                median_ns: benchmp::stats::median_of(&v),
            }
        })
        .collect();
    Matrix {
        cpus: cpus.to_vec(),
        handshake: HANDSHAKE.to_string(),
        round_trips: ROUND_TRIPS,
        ns,
        pairs,
        clusters,
    }
}

/// One figure per ordered pair, for comparisons.
pub fn figures(m: &Matrix) -> Vec<Figure> {
    m.pairs
        .iter()
        .map(|p| Figure {
            name: format!("c2c {}->{}", p.from_cpu, p.to_cpu),
            cpu: Some(p.from_cpu),
            cluster: Some(p.from_cluster),
            unit: "ns".into(),
            better: Better::Lower,
            value: p.ns,
            samples: p.samples.clone(),
            sizing: Default::default(),
        })
        .collect()
}

/// The matrix as text: rows are the pinger's CPU, columns the ponger's, then the summary per
/// pair of clusters.
pub fn render(m: &Matrix, repetitions: usize) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "core-to-core latency, ns per one-way transfer (median of {repetitions} intervals of {} round trips; {})\n",
        m.round_trips, m.handshake
    );
    let _ = write!(out, "{:>8}", "from\\to");
    for c in &m.cpus {
        let _ = write!(out, " {c:>8}");
    }
    out.push('\n');
    for (r, row) in m.cpus.iter().zip(&m.ns) {
        let _ = write!(out, "{r:>8}");
        for v in row {
            match v {
                Some(ns) => {
                    let _ = write!(out, " {ns:>8.1}");
                }
                None => {
                    let _ = write!(out, " {:>8}", "-");
                }
            }
        }
        out.push('\n');
    }
    for k in &m.clusters {
        let what = if k.a == k.b {
            format!("within cluster {}", k.a)
        } else {
            format!("between clusters {} and {}", k.a, k.b)
        };
        let _ = writeln!(
            out,
            "{what}: {} pairs, min {:.1} ns, median {:.1} ns",
            k.pairs, k.min_ns, k.median_ns
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(from: usize, to: usize, fc: usize, tc: usize, ns: f64) -> PairFigure {
        PairFigure {
            from_cpu: from,
            to_cpu: to,
            from_cluster: fc,
            to_cluster: tc,
            ns,
            samples: vec![ns],
        }
    }

    #[test]
    fn matrix_and_cluster_summaries() {
        // CPUs 0, 1 in cluster 0; CPU 4 in cluster 1.
        let pairs = vec![
            pair(0, 1, 0, 0, 40.0),
            pair(1, 0, 0, 0, 42.0),
            pair(0, 4, 0, 1, 100.0),
            pair(4, 0, 1, 0, 110.0),
            pair(1, 4, 0, 1, 90.0),
            pair(4, 1, 1, 0, 95.0),
        ];
        let m = matrix(&[0, 1, 4], pairs);
        assert_eq!(m.ns[0], vec![None, Some(40.0), Some(100.0)]);
        assert_eq!(m.ns[2], vec![Some(110.0), Some(95.0), None]);
        assert_eq!(m.clusters.len(), 2);
        let within = &m.clusters[0];
        assert_eq!((within.a, within.b, within.pairs), (0, 0, 2));
        assert_eq!((within.min_ns, within.median_ns), (40.0, 41.0));
        let between = &m.clusters[1];
        assert_eq!((between.a, between.b, between.pairs), (0, 1, 4));
        assert_eq!((between.min_ns, between.median_ns), (90.0, 97.5));
        let text = render(&m, 11);
        assert!(
            text.contains("between clusters 0 and 1: 4 pairs, min 90.0 ns"),
            "{text}"
        );
        assert_eq!(figures(&m).len(), 6);
    }

    #[test]
    fn a_ponger_answers_pings_and_gives_up_when_none_come() {
        let line = AtomicU64::new(0);
        let mut pong = Ponger {
            line: &line,
            next: 1,
        };
        assert_eq!(pong.run(5), 0, "no ping: back after its idle spins");
        let mut ping = Pinger {
            line: &line,
            seq: 0,
        };
        assert_eq!(ping.run(1), 2, "the first ping lands at once");
        assert_eq!(pong.run(1), 1);
        assert_eq!(line.load(Ordering::SeqCst), 2);
        line.store(7, Ordering::SeqCst);
        assert_eq!(pong.run(1), 0, "a number out of turn is not a ping");
    }
}
