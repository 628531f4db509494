//! Multi-context runs through benchmp: one context per forked, pinned child, as the
//! reference's multi-context builds run one `iterate` per context in parallel with
//! identical seeds and separate data.
//!
//! - [`ContextBench`] is what each child runs. benchmp calls it with the fixed count for the
//!   one timed interval, and with single iterations to keep the core busy before the common
//!   start and after the child has finished; those calls run on a spare context so they
//!   cannot change the data the timed interval starts from.
//! - [`sizing_cpu`] (with benchmp's `with_pinned`) lets the parent choose the iteration count, as the
//!   reference does on its main thread, pinned to the fastest CPU of the run so every
//!   context lasts at least 10 s.
//! - [`context_runs`] reads each child's timed interval and CRCs back from the measurement.

use benchmp::Benchmark;
use benchmp::topology::Topology;

use crate::report::ContextRun;
use crate::timing::Measurement;
use crate::{Context, Error, IterResult, Seeds};

/// One child's benchmark: a context for the timed interval and a spare one for the
/// keep-busy work benchmp does while the child waits for the common start and after it has
/// finished ([`Benchmark::keep_busy`]).
///
/// Every timed call starts from the data as built (a copy is restored if an earlier timed
/// call used it), so the timed interval's CRCs, crcfinal included, are those of a fresh
/// context running that count, even for seeds whose iterations do not restore the data
/// (seed1 ≠ seed2).
#[derive(Debug)]
pub struct ContextBench {
    timed: Context,
    as_built: Context,
    timed_used: bool,
    spare: Context,
    last: Option<IterResult>,
}

impl ContextBench {
    /// Builds the contexts (call it in the child, after pinning, so the data is first
    /// touched on the child's own core).
    pub fn new(seeds: Seeds, total_size: u32) -> Result<ContextBench, Error> {
        let timed = Context::new(seeds, total_size)?;
        Ok(ContextBench {
            as_built: timed.clone(),
            spare: timed.clone(),
            timed,
            timed_used: false,
            last: None,
        })
    }
}

impl Benchmark for ContextBench {
    type Sample = IterResult;
    type Child = ();

    fn run(&mut self, iterations: u64) -> u64 {
        let n = u32::try_from(iterations).unwrap_or(u32::MAX);
        if self.timed_used {
            self.timed.clone_from(&self.as_built);
        }
        self.timed_used = true;
        let r = self.timed.iterate(n);
        self.last = Some(r);
        u64::from(r.crc)
    }

    fn keep_busy(&mut self, iterations: u64) -> u64 {
        let n = u32::try_from(iterations).unwrap_or(u32::MAX);
        u64::from(self.spare.iterate(n).crc)
    }

    /// The CRCs of the interval just timed (none if none ran yet).
    fn sample_detail(&mut self) -> Option<IterResult> {
        self.last
    }
}

/// The CPU the parent should size the iteration count on: among the CPUs the children are
/// pinned to, the one with the highest capacity, then the highest maximum frequency (the
/// first on a tie), so the count makes even the fastest context last 10 s. `None` when the
/// children are not pinned (the count is then sized wherever the parent runs).
pub fn sizing_cpu(topology: &Topology, placement: &[Option<usize>]) -> Option<usize> {
    let pinned: Option<Vec<usize>> = placement.iter().copied().collect();
    let mut best: Option<(usize, (u32, u64))> = None;
    for cpu in pinned? {
        let speed = topology
            .cpu(cpu)
            .map(|c| (c.capacity.unwrap_or(0), c.max_freq_khz.unwrap_or(0)))
            .unwrap_or((0, 0));
        if best.is_none_or(|(_, s)| speed > s) {
            best = Some((cpu, speed));
        }
    }
    best.map(|(cpu, _)| cpu)
}

/// Each child's timed interval and CRCs (from [`ContextBench::sample_detail`]), by child
/// index; the CRCs are validated by [`crate::report::Report::new`].
pub fn context_runs(
    m: &benchmp::Measurement<crate::report::CoreMarkData>,
) -> Result<Vec<ContextRun>, crate::Error> {
    m.children
        .iter()
        .map(|c| {
            let (s, &result) = c.timed_detail()?;
            let iterations =
                u32::try_from(s.iterations).map_err(|_| crate::Error::TooManyIterations {
                    child: c.who(),
                    iterations: s.iterations,
                })?;
            Ok(ContextRun {
                cpu: c.cpu,
                run: Measurement {
                    iterations,
                    elapsed_ns: s.elapsed_ns,
                    result,
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// benchmp's order for a fixed count: keep-busy calls, the timed call, its detail, then
    /// more keep-busy calls.
    fn timed_result(seeds: Seeds, count: u32, busy_before: usize) -> IterResult {
        let mut b = ContextBench::new(seeds, 2000).unwrap();
        for _ in 0..busy_before {
            b.keep_busy(1);
        }
        b.run(u64::from(count));
        let detail = b.sample_detail();
        for _ in 0..3 {
            b.keep_busy(1);
        }
        detail.expect("a record of the timed interval")
    }

    fn fresh(seeds: Seeds, count: u32) -> IterResult {
        Context::new(seeds, 2000).unwrap().iterate(count)
    }

    #[test]
    fn keep_busy_calls_do_not_change_the_timed_run() {
        // seed1 ≠ seed2: iterations leave the state input changed, so a shared context
        // would give a different crcfinal after the keep-busy calls.
        let drifting = Seeds::new(5, 99, 0x66);
        let mut shared = Context::new(drifting, 2000).unwrap();
        shared.iterate(1);
        assert_ne!(shared.iterate(10), fresh(drifting, 10));
        for seeds in [Seeds::PERFORMANCE, Seeds::VALIDATION, drifting] {
            for count in [1u32, 2, 10] {
                for busy in [0, 1, 5] {
                    assert_eq!(
                        timed_result(seeds, count, busy),
                        fresh(seeds, count),
                        "{seeds:?} count {count} after {busy} keep-busy calls"
                    );
                }
            }
        }
    }

    #[test]
    fn detail_carries_the_known_crcs() {
        let mut b = ContextBench::new(Seeds::PERFORMANCE, 2000).unwrap();
        assert!(b.sample_detail().is_none());
        b.keep_busy(1);
        b.run(10);
        // The record crosses the pipe as JSON, with the reference's names and hex strings.
        let d = serde_json::to_value(b.sample_detail().unwrap()).unwrap();
        assert_eq!(d["crclist"], "0xe714");
        assert_eq!(d["crcmatrix"], "0x1fd7");
        assert_eq!(d["crcstate"], "0x8e3a");
        assert_eq!(d["crcfinal"], "0xfcaf");
    }

    #[test]
    fn sizing_picks_the_fastest_pinned_cpu() {
        // benchmp's captured phone tree: capacities 325 ×2, 830 ×3, 880 ×2, 1024.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../benchmp/tests/fixtures/phone8/sys");
        let t = Topology::from_root(&root).unwrap();
        assert_eq!(
            sizing_cpu(&t, &[Some(0), Some(5), Some(7), Some(2)]),
            Some(7)
        );
        assert_eq!(sizing_cpu(&t, &[Some(1), Some(3), Some(2)]), Some(3));
        assert_eq!(sizing_cpu(&t, &[Some(6), Some(5)]), Some(6));
        assert_eq!(sizing_cpu(&t, &[None, None]), None);
        assert_eq!(sizing_cpu(&t, &[]), None);
    }
}
