//! The figures a report offers for comparison: each with a stable name, the CPU or cluster it
//! describes, its unit and direction, its value, and the samples it comes from.
//!
//! Every report carries them (`figures`), so `benchmp compare` judges any tool's run without
//! knowing the tool. By default they are each measurement's per-cluster figures (its
//! children's samples added interval by interval for throughputs, pooled for latencies) and,
//! with several clusters, the system figure; a tool whose meaningful figures are elsewhere
//! (lat_mem_rd's plateaus, dto's cells) gives its own.

use crate::report::{Measurement, ToolData};
pub use crate::schema::Figure;
use crate::schema::Pair;

/// The default figures of measurements: each cluster's (the sum of its children's figures for
/// a throughput, their mean for a latency; the child's own CPU when it has one child), and
/// with several clusters the system's. Single children of a parallel run are not judged on
/// their own: how a cluster's bandwidth splits between its cores moves from run to run, its
/// total does not. `label` names each measurement (a tool's own naming, e.g. with its size).
pub fn default_figures<T: ToolData>(
    measurements: &[Measurement<T>],
    label: impl Fn(&Measurement<T>) -> String,
) -> Vec<Figure> {
    let mut out = Vec::new();
    for m in measurements {
        let name = label(m);
        let unit = m.metric.unit().to_string();
        let better = m.metric.better();
        let additive = m.metric.is_rate() && !m.overlap.sequential;
        let per_child: Vec<Vec<f64>> = m
            .children
            .iter()
            .map(|c| c.pairs().map(|p: Pair| m.metric.value(p)).collect())
            .collect();
        for k in &m.aggregate.per_cluster {
            let members: Vec<usize> = (0..m.figures.len())
                .filter(|&i| m.figures[i].cluster == k.cluster)
                .collect();
            let samples: Vec<Vec<f64>> = members.iter().map(|&i| per_child[i].clone()).collect();
            out.push(Figure {
                name: name.clone(),
                cpu: match members.as_slice() {
                    [one] => m.figures[*one].cpu,
                    _ => None,
                },
                cluster: Some(k.cluster),
                unit: unit.clone(),
                better,
                value: k.total,
                samples: system_samples(&samples, additive),
            });
        }
        if m.aggregate.per_cluster.len() > 1 {
            out.push(Figure {
                name,
                cpu: None,
                cluster: None,
                unit,
                better,
                value: m.aggregate.cluster,
                samples: system_samples(&per_child, additive),
            });
        }
    }
    out
}

/// Samples of the system figure: for an additive figure the children's i-th samples added
/// (as many as the child with the fewest), else every child's samples pooled.
fn system_samples(per_child: &[Vec<f64>], additive: bool) -> Vec<f64> {
    if !additive {
        return per_child.iter().flatten().copied().collect();
    }
    let n = per_child.iter().map(Vec::len).min().unwrap_or(0);
    (0..n)
        .map(|i| per_child.iter().map(|s| s[i]).sum())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Better;

    #[test]
    fn system_samples_add_or_pool() {
        let kids = vec![vec![1.0, 2.0, 3.0], vec![10.0, 20.0]];
        assert_eq!(system_samples(&kids, true), vec![11.0, 22.0]);
        assert_eq!(system_samples(&kids, false).len(), 5);
    }

    #[test]
    fn figures_describe_their_cpu_or_cluster() {
        let f = Figure {
            name: "rd 64M".into(),
            cpu: Some(3),
            cluster: Some(1),
            unit: "MB/s".into(),
            better: Better::Higher,
            value: 1.0,
            samples: vec![1.0],
        };
        assert_eq!(f.describe(), "rd 64M cpu3");
        let sys = Figure {
            cpu: None,
            cluster: None,
            ..f
        };
        assert_eq!(sys.describe(), "rd 64M");
    }
}
