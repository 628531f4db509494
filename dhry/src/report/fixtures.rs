//! Summaries for the model's and the text's tests: children with fixed figures and final
//! values, so snapshots do not depend on the machine.

use benchmp::AggregateMode;
use benchmp::freq::{ClockSource, CoreClock};
use benchmp::host::Build;
use benchmp::run::Sample;

use super::model::{ChildResult, ClusterResult, Summary, Verification};
use crate::parallel::RunPlan;
use crate::{Mismatch, Variant};

pub(super) fn build() -> Build {
    Build {
        rustc: "rustc 1.0.0".to_string(),
        target: "x86_64-unknown-linux-gnu".to_string(),
        profile: "release".to_string(),
        opt_level: "3".to_string(),
        lto: "fat".to_string(),
        codegen_units: "1".to_string(),
        rustflags: String::new(),
        target_features: String::new(),
        cargo_profile: "release".to_string(),
        debug_assertions: false,
    }
}

/// A child whose state ran 20 times but shows the figures of a 200,000,000-run loop of
/// 3.51 s on `cpu`.
pub(super) fn child(index: usize, cpu: usize, clock: Option<CoreClock>) -> ChildResult {
    let mut b = crate::parallel::LoopBench::new(Variant::Strict, 20);
    benchmp::Benchmark::run(&mut b, 20);
    let mut detail = b.detail();
    detail.thread_cpu_ns = Some(3_500_000_000);
    detail.allowed_cpus = Some(1);
    // Addresses differ between runs; pin them for the snapshot.
    detail.final_values.ptr_glob.ptr_comp = 1234;
    detail.final_values.next_ptr_glob.ptr_comp = 1234;
    detail.final_values.arr_2_glob_8_7 = 200_000_010;
    let timed = Sample {
        iterations: 200_000_000,
        elapsed_ns: 3_510_000_000,
        net_ns: 3_510_000_000,
        start_ns: 0,
        accepted: true,
        cpu_start: Some(cpu),
        cpu_end: Some(cpu),
        detail: None,
    };
    let dmips = crate::dmips(crate::dhrystones_per_second(200_000_000, 3_510_000_000));
    ChildResult::new(index, Some(cpu), 0, &timed, &detail, dmips, clock, None)
}

pub(super) fn summary(children: Vec<ChildResult>) -> Summary {
    let total: f64 = children.iter().map(|c| c.dmips).sum();
    let n = children.len();
    Summary {
        benchmark: "dhrystone".to_string(),
        version: "2.1".to_string(),
        variant: Variant::Strict,
        calls_per_run: 15,
        compilation_model: "one unit".to_string(),
        plan: RunPlan::AtLeastSeconds(2.0),
        runs: 200_000_000,
        attempts: 1,
        probes: Vec::new(),
        reference_min_time_met: children.iter().all(|c| c.reference_min_time_met),
        verification_passed: children.iter().all(|c| c.verification.passed),
        clusters: vec![ClusterResult {
            cluster: 0,
            cpus: (0..n).collect(),
            children: n,
            dmips_mean: total / n as f64,
            dmips_total: total,
            dhrystones_per_s_total: total * 1757.0,
        }],
        children,
        aggregate: AggregateMode::Cluster,
        total_dmips: total,
        total_dhrystones_per_s: total * 1757.0,
        sum_dmips: total,
        lmbench_median_dmips: total,
        build: build(),
    }
}

pub(super) fn estimate(cpu: usize) -> Option<CoreClock> {
    Some(CoreClock {
        mhz: 2200.0,
        source: ClockSource::CpuinfoEstimate,
        cpu: Some(cpu),
    })
}

/// A check that failed on one variable: `Int_Glob` was 4 where 5 was expected.
pub(super) fn failed_int_glob() -> Verification {
    Verification {
        passed: false,
        mismatches: vec![Mismatch {
            name: "Int_Glob".to_string(),
            actual: "4".to_string(),
            expected: "5".to_string(),
        }],
    }
}
