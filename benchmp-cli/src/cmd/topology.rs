//! `benchmp topology`: the CPUs, clusters and caches as detected from sysfs, so a placement
//! can be checked against what the framework sees.

use anyhow::Result;
use benchmp::cpulist::format_cpu_list;

/// Runs `benchmp topology`: prints the detected topology as text or JSON.
pub fn run(json: bool) -> Result<i32> {
    // As the tools read it: a BENCHMP_SYSFS_ROOT that is no sysfs tree is bad input (2).
    let t = benchmp::topology::Topology::detect().map_err(benchmp::Error::from)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&t)?);
    } else {
        outln!("{}", t.describe());
        for c in &t.clusters {
            outln!(
                "cluster {}: CPUs {} capacity {} max {} kHz",
                c.index,
                format_cpu_list(&c.cpus),
                c.capacity.map_or("-".into(), |v| v.to_string()),
                c.max_freq_khz.map_or("-".into(), |v| v.to_string())
            );
        }
        for k in &t.caches {
            outln!(
                "L{} {:<11} {:>8} line {:>3} shared by {}",
                k.level,
                k.kind,
                benchmp::size::HumanSize(k.size_bytes).to_string(),
                k.line_bytes,
                format_cpu_list(&k.shared_cpus)
            );
        }
    }
    Ok(0)
}
