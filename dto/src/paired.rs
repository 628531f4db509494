//! dto as a `benchmp ab` worker. The driver times repetitions of what a tool measures and
//! pairs them, so a repetition must be the operation dto reports on, not a whole round (its
//! warm-up, both implementations' calls and the flushes: about a thousand times longer, a
//! regression diluted as much). Each cell on each CPU is one measurement of [`Calls`]: the
//! current implementation called `n` times, each call prepared and timed as a round times
//! it, its figure ns per call. The driver keeps the repetitions, so there are no rounds and
//! no distributions.csv.

use benchmp::{ChildInfo, Iterations, Loads, Session, Spec};

use crate::Error;
use crate::bench::{Bench, PageKind};
use crate::measure::{Calls, RoundPlan};
use crate::plan::RunPlan;
use crate::report::{DtoData, RoundParams};

/// A worker's measurement of one cell on one CPU: its name (the cell's figure name, and its
/// CPU when there are several) and what it measures.
fn cells(
    plan: &RunPlan,
    (benches, pages, cpus): (&[&'static Bench], &[PageKind], &[usize]),
) -> Vec<(String, RoundPlan, usize)> {
    let mut out = Vec::new();
    for &p in pages {
        for &b in benches {
            for config in &plan.configs {
                for &cpu in cpus {
                    let mut name = format!("{} {} {}", b.name, p.short(), config.label);
                    if cpus.len() > 1 {
                        name = format!("{name} on CPU {cpu}");
                    }
                    let rp = RoundPlan {
                        bench: b,
                        pages: p,
                        config: config.clone(),
                        iters: plan.settings.iters,
                        cold: plan.settings.cold_cache,
                    };
                    out.push((name, rp, cpu));
                }
            }
        }
    }
    out
}

/// What a worker's measurement records as its parameters (no round: the driver's
/// repetitions take their place).
fn params(rp: &RoundPlan) -> RoundParams {
    RoundParams {
        test: rp.bench.name.into(),
        op: rp.bench.op.name().into(),
        size_bytes: rp.bench.size,
        pf_pct: rp.bench.pf_pct,
        pages: rp.pages,
        config: rp.config.label.clone(),
        round: 0,
        iterations: 0,
    }
}

/// Measures every cell on every CPU as the driver paces it, after announcing them all.
pub fn measure(
    session: &mut Session<DtoData>,
    plan: &RunPlan,
    selected: (&[&'static Bench], &[PageKind], &[usize]),
    timer_hz: f64,
) -> Result<(), Error> {
    let cells = cells(plan, selected);
    session.plan(cells.iter().map(|(name, rp, _)| (name.clone(), params(rp))))?;
    for (name, rp, cpu) in &cells {
        let mut spec = Spec::latency(name, 1.0, params(rp));
        // The driver sizes the count; a call needs no loop overhead taken off.
        spec.iterations = Iterations::Fixed(1);
        spec.subtract_loop_overhead = false;
        let env = crate::measure::EnvGuard::set(&rp.config.env);
        let measured = session.measure_on(
            Some(&[*cpu]),
            spec,
            |_: &ChildInfo| Calls::new(rp, timer_hz),
            Loads::NONE,
            |_: &ChildInfo| Ok(benchmp::run::Idle),
        );
        drop(env);
        let m = measured.map_err(|e| Error::at(format!("{name} on CPU {cpu}"), e))?;
        for child in &m.children {
            let failed = |why: &str| Error::Child {
                what: name.clone(),
                child: child.who(),
                why: why.into(),
            };
            for s in &child.samples {
                if let Some(f) = s.detail.as_ref().and_then(|t| t.failure.as_ref()) {
                    return Err(failed(f));
                }
            }
            if child.samples.is_empty() {
                return Err(failed("no repetitions"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{self, Config};
    use crate::impls::ImplSpec;

    #[test]
    fn each_cell_on_each_cpu_is_one_measurement_named_as_its_figure() {
        let plan = RunPlan {
            mode: crate::report::Mode::Speedup,
            configs: vec![Config {
                label: "cpu".into(),
                baseline: ImplSpec::Cpu,
                current: ImplSpec::Cpu,
                env: vec![],
            }],
            only: vec![],
            pages: vec![PageKind::Small],
            settings: crate::env::Settings::from_process().unwrap(),
        };
        let benches = [bench::find("memcpy_64k").unwrap()];
        let one = cells(&plan, (&benches, &[PageKind::Small], &[1]));
        let names: Vec<&str> = one.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, ["memcpy_64k 4k cpu"]);
        let two = cells(&plan, (&benches, &[PageKind::Small], &[0, 2]));
        let names: Vec<&str> = two.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["memcpy_64k 4k cpu on CPU 0", "memcpy_64k 4k cpu on CPU 2"]
        );
        assert_eq!(params(&two[1].1).size_bytes, 64 << 10);
    }
}
