//! The measurements of one run: every size of the plan in one session, lmbench's figure (the
//! size argument per pass, MB = 10^6) per second, each size's calibration starting from the
//! count the size before it ended with.

use benchmp::progress::Progress;
use benchmp::size::HumanSize;
use benchmp::{ChildInfo, Iterations, Pages, Session, Spec, ToolData};

use crate::Error;
use crate::bench::BwBench;
use crate::kernels::Kernel;
use crate::plan::Plan;
use crate::report::{BwMem, ChildDetail, Extra, Params, Report};

impl ToolData for BwMem {
    type Params = Params;
    type Sample = ();
    type Child = ChildDetail;
    type Extra = Extra;

    /// The size, and the copies' conflict layout ([`Params::sizing`]): each measurement's
    /// figures are named `rd 64M`, `cp 8M conflict`.
    fn sizing(params: &Params) -> benchmp::schema::Sizing {
        params.sizing()
    }

    /// A note for every child whose figure is a shape artifact ([`crate::shape::notes`]).
    fn notes(report: &Report) -> Vec<String> {
        report
            .extra
            .as_ref()
            .map(|e| crate::shape::notes(report, e.op))
            .unwrap_or_default()
    }
}

/// The measurement spec of `plan`'s operation at `size`: lmbench's figure and the parameters
/// the report records; `hint` is the previous size of a sweep and its count.
pub fn spec(
    plan: &Plan,
    k: Kernel,
    size: u64,
    pages: Pages,
    hint: Option<(u64, u64)>,
) -> Spec<Params> {
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

/// Measures every size of `plan` with `kernel` on `pages` buffers in `s`, one measurement
/// each, showing progress over a sweep.
pub fn measure(
    s: &mut Session<BwMem>,
    plan: &Plan,
    kernel: Kernel,
    pages: Pages,
) -> Result<(), Error> {
    let mut progress = Progress::new("bw_mem", plan.sizes.len());
    let mut hint: Option<(u64, u64)> = None;
    for &size in &plan.sizes {
        if plan.sweep {
            progress.step(&HumanSize(size).to_string());
        }
        let nbytes = usize::try_from(size).map_err(|_| Error::TooLarge(size))?;
        let spec = spec(plan, kernel, size, pages, hint);
        let m = s.measure(spec, |c: &ChildInfo| {
            Ok(BwBench::new(kernel, nbytes, plan.conflict, pages)?.among(c.parallel))
        })?;
        hint = m.children.first().map(|c| (size, c.iterations));
    }
    progress.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Op;

    fn plan(op: Op) -> Plan {
        Plan {
            op,
            sizes: vec![4096],
            conflict: false,
            sweep: false,
        }
    }

    #[test]
    fn the_figure_counts_the_size_argument_in_decimal_megabytes() {
        let k = Kernel::select(Op::Fcp, None).unwrap();
        let s = spec(&plan(Op::Fcp), k, 4096, Pages::Small, None);
        assert_eq!(s.name, "fcp");
        assert_eq!(
            s.metric,
            benchmp::Metric::Rate {
                per_iteration: 0.004096,
                unit: "MB/s".into()
            }
        );
        assert_eq!(s.iterations, Iterations::Calibrate { hint: None });
    }

    #[test]
    fn a_sweep_starts_each_count_from_the_previous_size() {
        let k = Kernel::select(Op::Rd, None).unwrap();
        let s = spec(&plan(Op::Rd), k, 8192, Pages::Small, Some((4096, 1000)));
        assert_eq!(s.iterations, Iterations::Calibrate { hint: Some(500) });
        let s = spec(&plan(Op::Rd), k, 1 << 30, Pages::Small, Some((4096, 10)));
        assert_eq!(s.iterations, Iterations::Calibrate { hint: Some(1) });
    }
}
