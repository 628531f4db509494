//! The curve summary of one stride and one cluster: plateaus and steps ([`crate::curve`]),
//! beside the caches sysfs reports for that cluster's CPUs and the clock that turns ns into
//! cycles ([`benchmp::freq`]).

use benchmp::freq::CoreClock;
use benchmp::size::HumanSize;
use benchmp::topology::Topology;
use serde::{Deserialize, Serialize};

use crate::curve::{CacheLevel, Params, Shape, detect};

/// What the summary says about one curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveSummary {
    /// Stride, bytes.
    pub stride_bytes: u64,
    /// `sequential`, `random` or `random, exact rings`.
    pub layout: String,
    /// Cluster index in the topology.
    pub cluster: usize,
    /// CPUs of the children in this cluster.
    pub cpus: Vec<usize>,
    /// Clock for cycles, when known.
    pub clock: Option<CoreClock>,
    /// Data caches of the cluster's first CPU (sysfs).
    pub caches: Vec<CacheLevel>,
    /// Detection settings.
    pub params: Params,
    /// Plateaus and steps.
    pub shape: Shape,
}

/// Data caches seen by `cpu` (or the first CPU), as named levels: `L1 Data 48K`, `L3 Unified
/// 32M shared by 0-1`.
pub fn caches_of(topo: &Topology, cpu: Option<usize>) -> Vec<CacheLevel> {
    topo.data_caches(cpu)
        .into_iter()
        .map(|c| {
            let shared = if c.shared_cpus.len() > 1 {
                format!(
                    " shared by {}",
                    benchmp::cpulist::format_cpu_list(&c.shared_cpus)
                )
            } else {
                String::new()
            };
            CacheLevel {
                level: c.level,
                size_bytes: c.size_bytes,
                name: format!(
                    "L{} {} {}{shared}",
                    c.level,
                    c.kind,
                    HumanSize(c.size_bytes)
                ),
            }
        })
        .collect()
}

/// Summarises one curve.
pub fn summarize(
    stride_bytes: u64,
    layout: &str,
    cluster: usize,
    cpus: Vec<usize>,
    points: &[(u64, f64)],
    caches: Vec<CacheLevel>,
    clock: Option<CoreClock>,
) -> CurveSummary {
    let params = Params::default();
    CurveSummary {
        stride_bytes,
        layout: layout.to_string(),
        cluster,
        cpus,
        clock,
        shape: detect(points, &caches, &params),
        caches,
        params,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_from_the_phone_fixture() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../benchmp/tests/fixtures/phone8/sys");
        let topo = Topology::from_root(&root).expect("benchmp's phone fixture");
        let little = caches_of(&topo, Some(0));
        let names: Vec<&str> = little.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names[0], "L1 Data 64K");
        assert!(
            names[1].starts_with("L2 Unified 512K shared by 0-1"),
            "{names:?}"
        );
        let prime = caches_of(&topo, Some(7));
        assert_eq!(prime[1].size_bytes, 2 << 20);
        // The prime core's curve is named against its own L2.
        let pts: Vec<(u64, f64)> = crate::sweep::sizes(512, 64 << 20)
            .into_iter()
            .map(|s| {
                let ns = if s <= 64 << 10 {
                    1.0
                } else if s <= 2 << 20 {
                    3.0
                } else if s <= 12 << 20 {
                    10.0
                } else {
                    80.0
                };
                (s, ns)
            })
            .collect();
        let s = summarize(64, "random", 3, vec![7], &pts, prime, None);
        let labels: Vec<&str> = s.shape.plateaus.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["L1", "L2", "L3", "DRAM"]);
    }
}
