//! `benchmp power`: the power and energy sources this machine offers (the names `--power`
//! takes), each with its kind, unit, what it covers, the files it reads and its update period
//! as measured by reading it every millisecond for up to two seconds; the sources that are
//! there but cannot be used say why; and the thermal zones and cpufreq policies every
//! measurement samples beside them.

use std::time::{Duration, Instant};

use anyhow::Result;
use benchmp::power::discover;
use benchmp::power::sources::{self, Value};
use serde::Serialize;

/// How long the update periods are watched at most.
const WATCH: Duration = Duration::from_secs(2);
/// Changes seen before a source's period counts as measured.
const CHANGES: usize = 4;

/// One source as listed.
#[derive(Debug, Serialize)]
struct Listed {
    name: String,
    kind: &'static str,
    unit: String,
    covers: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<usize>,
    paths: Vec<String>,
    /// Mean interval between the changes seen, ms; `null` when it changed less than twice.
    period_ms: Option<f64>,
}

/// The whole listing (`--json`).
#[derive(Debug, Serialize)]
struct Listing {
    root: String,
    sources: Vec<Listed>,
    unusable: Vec<benchmp::power::Unusable>,
    thermal_zones: Vec<String>,
    cpufreq_policies: Vec<String>,
    watched_ms: u64,
}

/// The update period of each source: read every millisecond until each has changed
/// [`CHANGES`] times or [`WATCH`] is over.
fn periods(found: &[benchmp::power::Source]) -> (Vec<Option<f64>>, Duration) {
    let start = Instant::now();
    let mut last: Vec<Option<(u64, Option<u64>, u64)>> = vec![None; found.len()];
    let mut changes: Vec<Vec<f64>> = vec![Vec::new(); found.len()];
    while !found.is_empty() && start.elapsed() < WATCH {
        let t = start.elapsed().as_secs_f64() * 1e3;
        for (i, v) in sources::read_all(found).into_iter().enumerate() {
            // A value and the meter's own time, as comparable bits.
            let key = match v {
                Ok(Value::Energy { uj, at_ms }) => (uj, at_ms, 0),
                Ok(Value::Power(w)) => (w.to_bits(), None, 1),
                Err(_) => continue,
            };
            if let Some(prev) = last[i]
                && prev != key
            {
                changes[i].push(match key.1 {
                    Some(ms) => ms as f64,
                    None => t,
                });
            }
            last[i] = Some(key);
        }
        if changes.iter().all(|c| c.len() >= CHANGES) {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let p = changes
        .iter()
        .map(|c| match c.as_slice() {
            [first, .., last] => Some((last - first) / (c.len() - 1) as f64),
            _ => None,
        })
        .collect();
    (p, start.elapsed())
}

/// Runs `benchmp power`: lists the sources as text or JSON.
pub fn run(json: bool) -> Result<i32> {
    // As the tools read it: a BENCHMP_SYSFS_ROOT that is no sysfs tree is bad input (2).
    let t = benchmp::topology::Topology::detect().map_err(benchmp::Error::from)?;
    let found = discover::discover(&t.root, Some(&t));
    let (periods, watched) = periods(&found.usable);
    let listing = Listing {
        root: t.root.display().to_string(),
        sources: found
            .usable
            .iter()
            .zip(periods)
            .map(|(s, period_ms)| Listed {
                name: s.name.clone(),
                kind: s.kind,
                unit: s.unit.to_string(),
                covers: s.covers.clone(),
                cluster: s.cluster,
                paths: s.paths.iter().map(|p| p.display().to_string()).collect(),
                period_ms,
            })
            .collect(),
        unusable: found.unusable,
        thermal_zones: sources::zones(&t.root)
            .into_iter()
            .map(|z| z.name)
            .collect(),
        cpufreq_policies: sources::policies(&t.root, &t.online())
            .into_iter()
            .map(|p| p.name)
            .collect(),
        watched_ms: watched.as_millis() as u64,
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&listing)?);
        return Ok(0);
    }
    let root = foundation::error::printable(&listing.root).into_owned();
    if listing.sources.is_empty() {
        outln!(
            "no power source under {root} (powercap, hwmon, power_supply, IIO energy meters): measurements run without power figures"
        );
    } else {
        outln!("power sources under {root}:");
        for s in &listing.sources {
            let period = match s.period_ms {
                Some(p) => format!("{p:.1} ms"),
                None => format!(">{} ms", listing.watched_ms),
            };
            outln!(
                "  {:<28} {:<12} {:<6} period {:<10} {}",
                foundation::error::printable(&s.name),
                s.kind.to_string(),
                s.unit,
                period,
                foundation::error::printable(&s.covers)
            );
            for p in &s.paths {
                outln!("  {:<28} {}", "", foundation::error::printable(p));
            }
        }
    }
    for u in &listing.unusable {
        outln!(
            "not usable: {}: {}",
            foundation::error::printable(&u.name),
            foundation::error::printable(&u.why)
        );
    }
    if !listing.sources.is_empty() {
        let named = |v: &[String]| match v {
            [] => "none".to_string(),
            v => foundation::error::printable(&v.join(", ")).into_owned(),
        };
        outln!(
            "sampled beside them: thermal zones {}; cpufreq policies {}",
            named(&listing.thermal_zones),
            named(&listing.cpufreq_policies)
        );
    }
    Ok(0)
}
