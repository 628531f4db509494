//! What bw_mem keeps in its report, as types: each measurement's parameters (the operation,
//! the bytes one pass counts, touches, loads and stores, the implementation), each child's
//! pages, and the tool section (the bus-traffic figures, the pages obtained). The report is
//! `benchmp::Report<BwMem>`, so reading it back is a compile-time fact.

use benchmp::sys::mem::{Pages, PagesObtained};
use benchmp::{AggregateMode, Measurement};
use serde::{Deserialize, Serialize};

use crate::kernels::{Kernel, LmbenchBuild};
use crate::ops::{Op, Stores};
use crate::plan::Plan;

/// bw_mem's report data (its [`ToolData`](benchmp::ToolData) hooks are in [`crate::run`]:
/// they read the shape checks, which read the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BwMem;

/// bw_mem's report.
pub type Report = benchmp::Report<BwMem>;

/// Parameters of one measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// The operation (`rd`, `fcp`, …).
    pub op: Op,
    /// The size argument, bytes.
    pub size_bytes: u64,
    /// lmbench's conflict layout (destination 1920 bytes into its buffer), for copies.
    pub conflict: bool,
    /// Implementation label.
    pub implementation: String,
    /// Instruction set of the implementation.
    pub isa: String,
    /// Bytes one vector register holds in that instruction set.
    pub vector_bytes: u32,
    /// Access pattern in words.
    pub access: String,
    /// Bytes counted for the figure per pass (lmbench's accounting).
    pub bytes_counted_per_iteration: u64,
    /// Bytes of the source buffer a pass walks.
    pub bytes_touched_per_iteration: u64,
    /// Bytes a pass loads.
    pub load_bytes_per_iteration: u64,
    /// Bytes a pass stores.
    pub store_bytes_per_iteration: u64,
    /// Bytes a pass moves between the caches and memory (the bus model).
    pub bus_bytes_per_iteration: u64,
    /// How the stores reach memory.
    pub stores: Stores,
    /// Page size asked for.
    pub pages: Pages,
    /// The lmbench build whose instruction shapes lmbench's operations follow (absent in
    /// reports made before it was kept, whose `fwr` had `-O`'s shape).
    #[serde(default)]
    pub lmbench_build: Option<LmbenchBuild>,
}

impl Params {
    /// The parameters of `plan`'s operation at `size` with `kernel` on `pages`.
    pub fn new(plan: &Plan, kernel: Kernel, size: u64, pages: Pages) -> Params {
        let t = plan.op.traffic(size);
        Params {
            op: plan.op,
            size_bytes: size,
            conflict: plan.conflict && plan.op.uses_second_buffer(),
            implementation: kernel.label(),
            isa: kernel.isa().name().to_string(),
            vector_bytes: kernel.isa().vector_bytes(),
            access: kernel.access().to_string(),
            bytes_counted_per_iteration: t.counted_bytes,
            bytes_touched_per_iteration: t.touched_bytes,
            load_bytes_per_iteration: t.load_bytes,
            store_bytes_per_iteration: t.store_bytes,
            bus_bytes_per_iteration: t.bus_bytes,
            stores: t.stores,
            pages,
            lmbench_build: (plan.op.is_lmbench() && !plan.op.is_libc()).then(|| kernel.build()),
        }
    }

    /// What makes its figure what it is besides the operation ([`BwMem`]'s
    /// `ToolData::sizing`): the size, and the copies' `conflict` layout. Its figure is
    /// `fcp 4K`, `cp 8M conflict`, the same in every run of the same command.
    pub fn sizing(&self) -> benchmp::schema::Sizing {
        benchmp::schema::Sizing {
            size_bytes: Some(self.size_bytes),
            layout: self.conflict.then(|| "conflict".to_string()),
            ..Default::default()
        }
    }
}

/// The bus-traffic figures of one measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bus {
    /// The size argument, bytes.
    pub size_bytes: u64,
    /// Bytes a pass moves between the caches and memory.
    pub bus_bytes_per_iteration: u64,
    /// How the stores reach memory.
    pub stores: Stores,
    /// The system figures scaled from counted bytes to bus bytes, MB/s.
    pub bus_mb_per_s: BusFigures,
}

/// The system figures in bus bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusFigures {
    /// From the cluster figure.
    pub cluster: f64,
    /// From lmbench's median figure.
    pub median: f64,
    /// From the figure shown on the text line.
    pub shown: f64,
}

/// One child's pages, with the measurement and child they belong to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PagesRow {
    /// The size argument of the measurement, bytes.
    pub size_bytes: u64,
    /// Child number.
    pub child: usize,
    /// Its CPU.
    pub cpu: Option<usize>,
    /// What backs its buffers.
    #[serde(flatten)]
    pub pages: ChildPages,
}

/// bw_mem's section of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extra {
    /// The operation.
    pub op: Op,
    /// What it does, in words.
    pub description: String,
    /// Implementation label.
    pub implementation: String,
    /// Instruction set.
    pub isa: String,
    /// Page size asked for.
    pub pages_requested: Pages,
    /// lmbench's conflict layout, for copies.
    pub conflict: bool,
    /// What the figure counts, in words.
    pub figure: String,
    /// Bus-traffic figures, per measurement.
    pub bus: Vec<Bus>,
    /// Pages each child of each measurement obtained.
    pub pages_obtained: Vec<PagesRow>,
}

impl Extra {
    /// The tool section for the measurements made.
    pub fn new(
        plan: &Plan,
        kernel: Kernel,
        pages: Pages,
        measurements: &[Measurement<BwMem>],
        mode: AggregateMode,
    ) -> Extra {
        let bus = measurements
            .iter()
            .map(|m| {
                let p = &m.params;
                let f =
                    p.bus_bytes_per_iteration as f64 / p.bytes_counted_per_iteration.max(1) as f64;
                Bus {
                    size_bytes: p.size_bytes,
                    bus_bytes_per_iteration: p.bus_bytes_per_iteration,
                    stores: p.stores,
                    bus_mb_per_s: BusFigures {
                        cluster: m.aggregate.cluster * f,
                        median: m.aggregate.median * f,
                        shown: m.figure(mode) * f,
                    },
                }
            })
            .collect();
        Extra {
            op: plan.op,
            description: plan.op.description().to_string(),
            implementation: kernel.label(),
            isa: kernel.isa().name().to_string(),
            pages_requested: pages,
            conflict: plan.conflict && plan.op.uses_second_buffer(),
            figure: "bytes counted as lmbench (the size argument per pass) per second, MB = 10^6"
                .to_string(),
            bus,
            pages_obtained: pages_obtained(measurements),
        }
    }
}

/// The pages every child of every measurement reported.
pub fn pages_obtained(measurements: &[Measurement<BwMem>]) -> Vec<PagesRow> {
    measurements
        .iter()
        .flat_map(|m| {
            m.children.iter().filter_map(move |c| {
                Some(PagesRow {
                    size_bytes: m.params.size_bytes,
                    child: c.index,
                    cpu: c.cpu,
                    pages: c.detail.as_ref()?.pages,
                })
            })
        })
        .collect()
}

/// What backed one child's buffers, as it reports them to the parent (each buffer is its own
/// kernel mapping: benchmp's buffers end in a guard page, so they never merge).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildPages {
    /// The mapping holding the source buffer.
    pub buf: PagesObtained,
    /// The mapping holding the copy destination, for copies.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub buf2: Option<PagesObtained>,
}

/// The subset operation timed after a superset one's intervals ([`crate::shape`]): `passes`
/// passes over the same buffers took `ns` (the median of [`crate::bench::PEER_INTERVALS`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerTime {
    /// The subset operation (`wr` for `fwr`).
    pub op: Op,
    /// Passes per interval: the count of the child's last timed interval.
    pub passes: u64,
    /// Median interval, ns.
    pub ns: u64,
}

/// What one child reports once it is done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildDetail {
    /// What backed its buffers.
    #[serde(flatten)]
    pub pages: ChildPages,
    /// The subset operation's time on the same buffers, for `fwr`, `frd` and `fcp`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub peer: Option<PeerTime>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_names_say_the_op_the_size_and_the_layout() {
        let plan = |op, conflict| Plan {
            op,
            sizes: vec![8 << 20],
            conflict,
            sweep: false,
        };
        let k = Kernel::select(Op::Cp, None).unwrap();
        let p = Params::new(&plan(Op::Cp, true), k, 8 << 20, Pages::Small);
        assert_eq!(p.sizing().label(p.op.name()), "cp 8M conflict");
        // The conflict layout is only kept for the copies.
        let k = Kernel::select(Op::Rd, None).unwrap();
        let p = Params::new(&plan(Op::Rd, true), k, 4096, Pages::Small);
        assert_eq!(p.sizing().label(p.op.name()), "rd 4K");
    }
}
