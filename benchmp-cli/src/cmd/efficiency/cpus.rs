//! Which CPUs the sweep takes and how they group into clusters, each with its policy and the
//! frequencies to sweep.

use anyhow::Result;

use super::plan::{self, FreqSource, SweepCluster};
use super::{refuse, shown};

/// The clusters of the sweep: the chosen CPUs grouped by the topology's clusters, each with
/// its policy and the frequencies to sweep. No cpufreq, or a policy listing no frequencies
/// without --freqs, is exit 3; a --freqs value no cluster offers is exit 2.
pub(super) fn clusters(
    topology: &benchmp::topology::Topology,
    cpus: &[usize],
    freqs: Option<&[f64]>,
) -> Result<Vec<SweepCluster>> {
    let mut out: Vec<SweepCluster> = Vec::new();
    for &cpu in cpus {
        let index = topology.cluster_of(cpu);
        if let Some(c) = out.iter_mut().find(|c| c.index == index) {
            c.cpus.push(cpu);
            continue;
        }
        out.push(cluster_of(topology, index, cpu, freqs)?);
    }
    out.sort_by_key(|c| c.index);
    let Some(given) = freqs else {
        return Ok(out);
    };
    for c in out.iter_mut().filter(|c| c.from != FreqSource::Given) {
        c.swept_khz = nearest_offered(c, given)?;
    }
    for &m in given {
        refuse_unswept(&out, m)?;
    }
    Ok(out)
}

/// Cluster `index` as its first chosen CPU, `cpu`, shows it: its policy, the frequencies it
/// offers, and those to sweep (what it offers; --freqs, checked against its range, when it
/// lists none).
fn cluster_of(
    topology: &benchmp::topology::Topology,
    index: usize,
    cpu: usize,
    freqs: Option<&[f64]>,
) -> Result<SweepCluster> {
    let link = benchmp::freq::pin::cpufreq_dir(&topology.root, cpu);
    let max = link.join("scaling_max_freq");
    if benchmp::sysfs::read_attr(&max).is_err() {
        return Err(benchmp::Unsupported(format!(
            "CPU {cpu} has no cpufreq ({} cannot be read): there is no clock to sweep",
            shown(&max)
        ))
        .into());
    }
    let dir = std::fs::canonicalize(&link).unwrap_or(link);
    let policy = match dir.file_name().map(|n| n.to_string_lossy().into_owned()) {
        Some(n) if n != "cpufreq" => n,
        _ => format!("cpu{cpu}"),
    };
    let num = |f: &str| {
        benchmp::sysfs::read_attr(&dir.join(f))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    let (offered, from) = plan::offered(&dir).unwrap_or((Vec::new(), FreqSource::Given));
    let max_khz = offered
        .last()
        .copied()
        .or_else(|| num("cpuinfo_max_freq"))
        .unwrap_or(0);
    let range = (num("cpuinfo_min_freq"), num("cpuinfo_max_freq"));
    let mut c = SweepCluster {
        index,
        cpus: vec![cpu],
        policy,
        dir,
        from,
        swept_khz: offered.clone(),
        offered_khz: offered,
        max_khz,
    };
    if c.offered_khz.is_empty() {
        let Some(given) = freqs else {
            return Err(benchmp::Unsupported(format!(
                "cluster {} (CPU {cpu}, {}) lists no frequencies (no scaling_available_frequencies or stats/time_in_state in {}): give them with --freqs MHZ,...",
                c.index,
                c.policy,
                shown(&c.dir)
            ))
            .into());
        };
        let swept = given_in_range(&c.policy, given, range)?;
        c.max_khz = c.max_khz.max(swept.last().copied().unwrap_or(0));
        c.swept_khz = swept;
    }
    Ok(c)
}

/// --freqs for a policy that lists no frequencies: each within its range (`lo`, `hi`, kHz,
/// when known), in kHz, sorted, each once.
fn given_in_range(
    policy: &str,
    given: &[f64],
    (lo, hi): (Option<u64>, Option<u64>),
) -> Result<Vec<u64>> {
    let mut swept = Vec::new();
    for &mhz in given {
        let khz = (mhz * 1000.0).round() as u64;
        if lo.is_some_and(|l| khz < l) || hi.is_some_and(|h| khz > h) {
            return Err(refuse(format!(
                "--freqs {mhz}: {policy} runs from {} to {} MHz",
                plan::mhz_arg(lo.unwrap_or(0)),
                plan::mhz_arg(hi.unwrap_or(0))
            )));
        }
        swept.push(khz);
    }
    swept.sort_unstable();
    swept.dedup();
    Ok(swept)
}

/// The frequencies cluster `c` offers nearest to each of --freqs (`given`, MHz); exit 2 when
/// it offers none of them.
fn nearest_offered(c: &SweepCluster, given: &[f64]) -> Result<Vec<u64>> {
    let mut swept: Vec<u64> = given
        .iter()
        .filter_map(|&m| plan::nearest(&c.offered_khz, m))
        .collect();
    swept.sort_unstable();
    swept.dedup();
    if swept.is_empty() {
        return Err(refuse(format!(
            "--freqs: cluster {} (CPUs {}, {}) offers none of them: it offers {}; leave its CPUs out with --cpus",
            c.index,
            benchmp::cpulist::format_cpu_list(&c.cpus),
            c.policy,
            plan::describe(&c.offered_khz)
        )));
    }
    Ok(swept)
}

/// Refuses (exit 2) a --freqs value `m` (MHz) that no cluster of `out` sweeps.
fn refuse_unswept(out: &[SweepCluster], m: f64) -> Result<()> {
    let khz = (m * 1000.0).round() as u64;
    let found = out.iter().any(|c| match c.from {
        FreqSource::Given => c.swept_khz.contains(&khz),
        _ => plan::nearest(&c.offered_khz, m).is_some(),
    });
    if found {
        return Ok(());
    }
    let offers: Vec<String> = out
        .iter()
        .map(|c| format!("{}: {}", c.policy, plan::describe(&c.offered_khz)))
        .collect();
    Err(refuse(format!(
        "--freqs {m}: no cluster swept offers it ({})",
        offers.join("; ")
    )))
}

/// The CPUs to sweep: --cpus (each online; on this machine, each one this process may use)
/// or every online one (allowed here).
pub(super) fn chosen_cpus(
    topology: &benchmp::topology::Topology,
    given: Option<&[usize]>,
) -> Result<Vec<usize>> {
    let online = topology.online();
    // A captured tree's CPUs are not this machine's: the tools decide which they may use.
    let captured = std::env::var_os(benchmp::topology::SYSFS_ROOT_ENV).is_some();
    let allowed = if captured {
        online.clone()
    } else {
        benchmp::sys::affinity::allowed_cpus().unwrap_or_else(|_| online.clone())
    };
    let mut list = match given {
        Some(c) => {
            benchmp::sched::check_cpu_list(c, &online, &allowed).map_err(|e| {
                refuse(format!(
                    "--cpus {}: {e}",
                    benchmp::cpulist::format_cpu_list(c)
                ))
            })?;
            c.to_vec()
        }
        None => online
            .iter()
            .copied()
            .filter(|c| allowed.contains(c))
            .collect(),
    };
    list.sort_unstable();
    list.dedup();
    if list.is_empty() {
        return Err(refuse("no CPU to sweep".into()));
    }
    Ok(list)
}
