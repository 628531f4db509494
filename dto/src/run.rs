//! A whole A/B run: checks, CPU and frequency pinning, every cell over every page size, the
//! analysis of each cell and distributions.csv.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};

use crate::bench::{self, Config, PageKind};
use crate::env::Settings;
use crate::freq::FreqPin;
use crate::measure::{self, CellPlan, WARMUP_ITERS};
use crate::report::{self, Cell, PageStatus, Report, Setup};
use crate::sys;
use benchmp::ab::{self as stats, Verdict};

/// What to run.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// "ab" or "speedup".
    pub mode: String,
    /// Configurations, in table order (cpu first when present).
    pub configs: Vec<Config>,
    /// `--only` names (empty: the table, or the PERF_SHORT subset).
    pub only: Vec<String>,
    /// Page sizes asked for.
    pub pages: Vec<PageKind>,
    /// Longest a round may take.
    pub timeout: Duration,
    /// Validated environment.
    pub settings: Settings,
}

/// Picks the CPU: PERF_CPU when allowed, else wrapped into the allowed set.
pub fn choose_cpu(requested: usize, allowed: &[usize]) -> (usize, Option<String>) {
    if allowed.is_empty() || allowed.contains(&requested) {
        return (requested, None);
    }
    let cpu = allowed[requested % allowed.len()];
    let note = format!(
        "PERF_CPU={requested} is not in the allowed set {}; wrapped to CPU {cpu}",
        benchmp::cpulist::format_cpu_list(allowed)
    );
    (cpu, Some(note))
}

/// Runs every cell and returns the report (measurement only; printing is the caller's).
pub fn run(plan: &RunPlan) -> Result<Report> {
    // From here on SIGINT/SIGTERM only set a flag: a round's child is killed and reaped, and
    // the frequency limits are restored, before the error ends the run.
    let _guard = benchmp::sys::process::InterruptGuard::install();
    let st = &plan.settings;
    let benches = bench::select(&plan.only, st.short).map_err(benchmp::Usage)?;
    sys::timer_check().map_err(benchmp::Unsupported)?;
    for c in &plan.configs {
        for spec in [&c.baseline, &c.current] {
            if let Err((code, msg)) = spec.preflight() {
                return Err(if code == benchmp::EXIT_UNSUPPORTED {
                    benchmp::Unsupported(msg).into()
                } else {
                    benchmp::Usage(msg).into()
                });
            }
        }
    }
    let allowed = benchmp::sys::affinity::allowed_cpus().context("reading the CPU affinity")?;
    let (cpu, cpu_note) = choose_cpu(st.cpu, &allowed);

    // Page sizes: 2 MiB needs two buffers' worth of reserved huge pages.
    let largest = benches.iter().map(|b| b.size).max().unwrap_or(0);
    let mut page_sizes = Vec::new();
    for &p in &plan.pages {
        let status = if p == PageKind::Huge {
            let per_buffer = largest.div_ceil(p.bytes()) * p.bytes();
            match benchmp::sys::mem::check_huge_pages(2 * per_buffer as u64) {
                Ok(()) => None,
                Err(e) => Some(e.to_string()),
            }
        } else {
            None
        };
        page_sizes.push((p, status));
    }
    if page_sizes.iter().all(|(_, s)| s.is_some()) {
        let why = page_sizes
            .iter()
            .filter_map(|(_, s)| s.clone())
            .collect::<Vec<_>>()
            .join("; ");
        return Err(benchmp::Unsupported(format!("no page size can be measured: {why}")).into());
    }

    std::fs::create_dir_all(&st.results_dir)
        .with_context(|| format!("creating RESULTS_DIR {}", st.results_dir.display()))?;
    let csv_path = st.results_dir.join("distributions.csv");
    let _ = std::fs::remove_file(&csv_path);
    let mut dist = Distributions::create(&csv_path)?;

    let pin = FreqPin::apply(
        Path::new("/sys"),
        &[cpu],
        st.core_freq_mhz,
        st.uncore_freq_mhz,
    );
    let hz = sys::timer_hz();
    let to_ns = |t: u64| t as f64 * 1e9 / hz;

    let total =
        page_sizes.iter().filter(|(_, s)| s.is_none()).count() * benches.len() * plan.configs.len();
    let tty = std::io::stderr().is_terminal();
    let mut done = 0;
    let mut cells = Vec::new();
    for (pages, skip) in &page_sizes {
        if skip.is_some() {
            continue;
        }
        for b in &benches {
            for config in &plan.configs {
                done += 1;
                if tty {
                    eprint!(
                        "\r\x1b[K[{done}/{total}] {} {} {}",
                        b.name,
                        pages.short(),
                        config.label
                    );
                    let _ = std::io::stderr().flush();
                }
                let cell_plan = CellPlan {
                    bench: b,
                    pages: *pages,
                    config,
                    iters: st.iters,
                    rounds: st.rounds,
                    cold: st.cold_cache,
                    cpu,
                    timeout: plan.timeout,
                };
                let ticks = measure::run_cell(&cell_plan)?;
                dist.write(b, *pages, &config.label, &ticks, &to_ns)?;
                let mut bl: Vec<f64> = ticks.baseline.iter().flatten().map(|&t| to_ns(t)).collect();
                let mut cu: Vec<f64> = ticks.current.iter().flatten().map(|&t| to_ns(t)).collect();
                stats::sort(&mut bl);
                stats::sort(&mut cu);
                if bl.is_empty() || cu.is_empty() {
                    return Err(anyhow!("{} {}: no samples", b.name, pages.short()));
                }
                let mut cmp = stats::compare(&bl, &cu, st.min_effect_pct, b.reference_only);
                if cmp.verdict == Verdict::Fail && config.is_a_a() {
                    cmp.verdict = Verdict::Noisy;
                }
                cells.push(Cell {
                    test: b.name,
                    op: b.op.name(),
                    size_bytes: b.size,
                    pf_pct: b.pf_pct,
                    reference_only: b.reference_only,
                    config: config.label.clone(),
                    pages: pages.short(),
                    rounds: st.rounds,
                    baseline: stats::summary(&bl),
                    current: stats::summary(&cu),
                    baseline_trimmed_mean_ns: cmp.baseline_mean,
                    current_trimmed_mean_ns: cmp.current_mean,
                    change_pct: cmp.change_pct,
                    ks_d: cmp.ks.d,
                    ks_p: cmp.ks.p,
                    ks_method: cmp.ks.method,
                    outlier_threshold_ns: cmp.outliers.threshold,
                    outliers_baseline: cmp.outliers.baseline,
                    outliers_current: cmp.outliers.current,
                    verdict: cmp.verdict,
                });
            }
        }
    }
    if tty {
        eprint!("\r\x1b[K");
    }
    dist.finish()?;
    let regressions = cells.iter().filter(|c| c.verdict == Verdict::Fail).count();
    let noisy = cells.iter().filter(|c| c.verdict == Verdict::Noisy).count();
    let speedup = report::speedups(&cells);
    let setup = Setup {
        pinned_cpu: cpu,
        cpu_note,
        timer: sys::TIMER,
        timer_hz: hz,
        core_freq: pin.core.clone(),
        uncore_freq: pin.uncore.clone(),
        rounds: st.rounds,
        iterations: st.iters,
        warmup_iterations: WARMUP_ITERS,
        min_effect_pct: st.min_effect_pct,
        cold_cache: st.cold_cache,
        flush: sys::flush_method(),
        short: st.short,
        distributions_csv: csv_path.display().to_string(),
    };
    drop(pin);
    Ok(Report {
        tool: "dto",
        version: env!("CARGO_PKG_VERSION"),
        mode: plan.mode.clone(),
        host: benchmp::host::Host::current(),
        build: benchmp::host::Build::current(),
        setup,
        configs: plan.configs.clone(),
        page_sizes: page_sizes
            .iter()
            .map(|(p, s)| PageStatus {
                pages: p.short(),
                measured: s.is_none(),
                note: s.clone(),
            })
            .collect(),
        cells,
        speedup,
        regressions,
        noisy,
        result: if regressions == 0 { "PASS" } else { "FAIL" },
    })
}

/// distributions.csv: every raw sample, for the plotting script.
struct Distributions {
    w: csv::Writer<std::io::BufWriter<std::fs::File>>,
}

impl Distributions {
    fn create(path: &Path) -> Result<Distributions> {
        let f =
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut w = csv::Writer::from_writer(std::io::BufWriter::new(f));
        w.write_record([
            "pagesize",
            "optype",
            "test",
            "config",
            "version",
            "round",
            "iteration",
            "ns",
        ])?;
        Ok(Distributions { w })
    }

    fn write(
        &mut self,
        b: &bench::Bench,
        pages: PageKind,
        config: &str,
        ticks: &measure::CellTicks,
        to_ns: &dyn Fn(u64) -> f64,
    ) -> Result<()> {
        for (version, rounds) in [("baseline", &ticks.baseline), ("current", &ticks.current)] {
            for (r, samples) in rounds.iter().enumerate() {
                for (i, &t) in samples.iter().enumerate() {
                    self.w.write_record([
                        pages.short(),
                        b.op.name(),
                        b.name,
                        config,
                        version,
                        &r.to_string(),
                        &i.to_string(),
                        &format!("{:.1}", to_ns(t)),
                    ])?;
                }
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.w.flush().context("writing distributions.csv")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_choice_wraps_into_the_allowed_set() {
        assert_eq!(choose_cpu(1, &[0, 1]), (1, None));
        let (cpu, note) = choose_cpu(5, &[0, 2, 4]);
        assert_eq!(cpu, 4);
        assert!(note.unwrap().contains("wrapped to CPU 4"));
        assert_eq!(choose_cpu(1, &[0]).0, 0);
    }
}
