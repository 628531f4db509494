//! Where a run's children go and the conditions they run under, settled when its session
//! starts: the placement the options, LMBENCH_SCHED or the tool's default CPU ask for, and
//! the counters, thermal zones and frequency pin checked and applied before anything runs.

use crate::cli::PlacementArgs;
use crate::run::Error;
use crate::sched::{
    ChosenBy, LMBENCH_SCHED_ENV, Placement, PlacementError, Policy, ToolDefault, parse_policy,
    place_by_policy, place_on_list, wrap_into_allowed, wrap_warnings,
};
use crate::topology::Topology;

/// The placement `p` asks for, in [`PlacementArgs::chosen_by`]'s precedence (`lmbench_sched`:
/// the variable's value), else the tool's default CPU, else UNIQUE; with the note of a
/// default CPU wrapped into the allowed set.
pub(super) fn resolve(
    p: &PlacementArgs,
    lmbench_sched: Option<&str>,
    default: Option<&ToolDefault>,
    online: &[usize],
    allowed: Vec<usize>,
) -> Result<(Placement, Option<String>), PlacementError> {
    let on_list = |list: &[usize], source: &str, allowed: Vec<usize>| {
        let n = p.parallel.unwrap_or(list.len());
        Ok::<_, PlacementError>(Placement {
            cpus: place_on_list(list, n, online, &allowed)?,
            policy: format!("cpus {}", crate::cpulist::format_cpu_list(list)),
            source: source.to_string(),
            allowed,
            warnings: Vec::new(),
        })
    };
    let chosen = p.chosen_by_with(lmbench_sched);
    if let (Some(ChosenBy::Cpus), Some(list)) = (chosen, &p.cpus) {
        return Ok((on_list(&list.0, "--cpus", allowed)?, None));
    }
    if let (None, Some(d)) = (chosen, default) {
        let (cpu, note) = wrap_into_allowed(&d.asked_by, d.cpu, &allowed);
        return Ok((on_list(&[cpu], &d.source, allowed)?, note));
    }
    let (policy, source) = match (&p.sched, lmbench_sched) {
        (Some(s), _) => (parse_policy(s)?, "--sched"),
        (None, Some(s)) => (parse_policy(s)?, LMBENCH_SCHED_ENV),
        (None, None) => (Policy::Unique, "default"),
    };
    let n = p.parallel.unwrap_or(1);
    // More children than CPUs time each other's work; only a policy that names its CPUs
    // (SINGLE, CUSTOM) shares them on purpose.
    let shares = matches!(
        policy,
        Policy::Single | Policy::Custom(_) | Policy::CustomUnique(_)
    );
    if n > allowed.len() && !shares {
        return Err(PlacementError::TooManyChildren {
            parallel: n,
            allowed: crate::cpulist::format_cpu_list(&allowed),
            count: allowed.len(),
        });
    }
    let placement = Placement {
        cpus: place_by_policy(&policy, n, online, &allowed)?,
        policy: policy.to_string(),
        source: source.to_string(),
        warnings: wrap_warnings(&policy, n, online, &allowed),
        allowed,
    };
    Ok((placement, None))
}

/// Checks and applies the run conditions before the machine state is captured: counters
/// under `benchmp ab` (`worker`) and those the kernel refuses and a missing thermal zone are exit status 3 before anything runs, and a
/// frequency pin is in force from here until [`Session::finish`] or the tool's exit.
pub(super) fn apply_conditions(
    c: &crate::cli::ConditionsArgs,
    topology: &Topology,
    cpus: &[Option<usize>],
    worker: bool,
) -> Result<(), Error> {
    if c.counters.is_some() && worker {
        // A paired repetition carries no counter readings to the driver: refused rather
        // than silently counted nowhere.
        return Err(crate::error::Usage(
            "--counters: not under benchmp ab, whose repetitions carry no counter readings; count them in a run of the tool alone".into(),
        )
        .into());
    }
    if let Some(list) = c.counters.as_ref() {
        crate::counters::preflight(list)?;
    }
    if c.cool_down.is_some() && crate::quality::thermal_zones(&topology.root).is_empty() {
        return Err(crate::quality::no_thermal_zones(&topology.root).into());
    }
    if (c.pin_freq.is_some() || c.governor.is_some()) && !crate::freq::pin::active() {
        let mut run_cpus: Vec<usize> = cpus.iter().flatten().copied().collect();
        run_cpus.sort_unstable();
        run_cpus.dedup();
        if run_cpus.is_empty() {
            run_cpus = topology.online();
        }
        let pin = crate::freq::pin::FreqPin::apply(
            &topology.root,
            &run_cpus,
            c.pin_freq,
            c.governor.as_deref(),
        )?;
        crate::freq::pin::activate(pin);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::CpuList;

    fn dto_default(cpu: usize) -> ToolDefault {
        ToolDefault {
            cpu,
            asked_by: "PERF_CPU".into(),
            source: "PERF_CPU".into(),
        }
    }

    #[test]
    fn a_tool_default_places_only_when_nothing_else_does() {
        let (online, allowed) = ([0, 1], vec![0, 1]);
        let none = PlacementArgs::default();
        let d = dto_default(5);
        let (p, note) = resolve(&none, None, Some(&d), &online, allowed.clone()).unwrap();
        assert_eq!(
            (p.cpus, p.policy, p.source),
            (vec![Some(1)], "cpus 1".into(), "PERF_CPU".into())
        );
        assert!(
            note.unwrap()
                .contains("PERF_CPU=5 is not in the allowed set 0-1")
        );
        let (p, note) = resolve(&none, Some("SINGLE"), Some(&d), &online, allowed.clone()).unwrap();
        assert_eq!(
            (p.policy.as_str(), p.source.as_str(), note),
            ("SINGLE", "LMBENCH_SCHED", None)
        );
        let two = PlacementArgs {
            parallel: Some(2),
            ..PlacementArgs::default()
        };
        let (p, _) = resolve(&two, None, Some(&d), &online, allowed.clone()).unwrap();
        assert_eq!(
            (p.cpus, p.source.as_str()),
            (vec![Some(0), Some(1)], "default")
        );
        let cpus = PlacementArgs {
            cpus: Some(CpuList(vec![0])),
            ..PlacementArgs::default()
        };
        let (p, _) = resolve(&cpus, Some("SINGLE"), Some(&d), &online, allowed).unwrap();
        assert_eq!((p.cpus, p.source.as_str()), (vec![Some(0)], "--cpus"));
    }

    #[test]
    fn without_a_tool_default_nothing_chosen_is_unique() {
        let (online, allowed) = ([0, 1, 2, 3], vec![2, 3]);
        let (p, note) = resolve(&PlacementArgs::default(), None, None, &online, allowed).unwrap();
        assert_eq!(
            (p.cpus, p.policy.as_str(), p.source.as_str()),
            (vec![Some(2)], "UNIQUE", "default")
        );
        assert_eq!(note, None);
        let three = PlacementArgs {
            parallel: Some(3),
            ..PlacementArgs::default()
        };
        let e = resolve(&three, None, None, &online, vec![2, 3]).unwrap_err();
        assert!(
            matches!(e, PlacementError::TooManyChildren { count: 2, .. }),
            "{e}"
        );
    }

    #[test]
    fn a_workers_counters_are_refused_by_the_mode_it_was_given() {
        let topology = Topology::detect().expect("topology");
        let conditions = crate::cli::ConditionsArgs {
            counters: Some(crate::counters::parse_list("default").expect("the default list")),
            ..PlacementArgs::default().conditions
        };
        // Told it is a worker, whatever this process's environment says.
        let e = apply_conditions(&conditions, &topology, &[], true).unwrap_err();
        assert!(e.to_string().contains("not under benchmp ab"), "{e}");
    }
}
