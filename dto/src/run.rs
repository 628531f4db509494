//! A whole A/B run on benchmp: placement (`--cpus`, `-P`, `--sched`/`LMBENCH_SCHED`, else
//! PERF_CPU), checks, frequency pinning, every round of every cell as one `Session`
//! measurement (its children, one per CPU, timed one after another), the analysis of each
//! cell per CPU, the figures, and distributions.csv.

use std::path::{Path, PathBuf};
use std::time::Duration;

use benchmp::cli::{OutputArgs, PlacementArgs, TimingArgs};
use benchmp::files::StagedFile;
use benchmp::progress::Progress;
use benchmp::sched::{ChosenBy, ToolDefault};
use benchmp::schema::Figure;
use benchmp::{Iterations, Session, Spec};

use crate::Error;
use crate::bench::{self, Bench, Config, PageKind};
use crate::env::{DEFAULT_CPU, Settings};
use crate::freq::FreqPin;
use crate::impls::ImplSpec;
use crate::measure::{EnvGuard, Round, RoundPlan, WARMUP_ITERS};
pub use crate::plan::RunPlan;
use crate::report::{self, Cell, DtoData, Extra, PageStatus, Report, RoundParams, Setup};
use crate::{sys, text};
use benchmp::schema::Better;
use benchmp::stats::descriptive::{sort, summary};
use benchmp::stats::verdict::{self, Verdict};

/// `dto ab` and `dto speedup`: refuses report files that are measured libraries and bad
/// PERF_* settings, measures `configs` on `pages` (the `only` benchmarks, else the table),
/// writes the report as `output` asks, then its notes. Exit status 1 when an A/B cell
/// regressed (or for a noisy run under --fail-on-noise).
pub fn perf(
    mode: report::Mode,
    configs: Vec<Config>,
    only: Vec<String>,
    mut pages: Vec<PageKind>,
    placement: &PlacementArgs,
    output: &OutputArgs,
) -> Result<i32, Error> {
    output.check()?;
    refuse_outputs_on_inputs(&configs, output)?;
    let settings = Settings::from_process().map_err(benchmp::Usage)?;
    let notes = output.note_stream();
    if settings.iters_capped {
        let _ = notes.write(&text::iters_capped(crate::env::MAX_ITERS));
    }
    pages.dedup();
    let plan = RunPlan {
        mode,
        configs,
        only,
        pages,
        settings,
    };
    let r = run(&plan, placement, output)?;
    // Decided before the report is written, which it is either way.
    let e = r.extra.as_ref().ok_or(Error::NoResults)?;
    let code = emit(&r, output)?;
    let _ = notes.write(&text::verdict_notes(e));
    if e.regressions > 0 {
        return Ok(benchmp::EXIT_FAILED);
    }
    Ok(code)
}

/// Refuses a result file (`--json`, `--csv`, `--md`) that is one of the libraries measured (a
/// link or another spelling counts): the report would replace the input.
fn refuse_outputs_on_inputs(configs: &[Config], o: &OutputArgs) -> Result<(), Error> {
    let protected = configs
        .iter()
        .flat_map(|c| [&c.baseline, &c.current])
        .filter_map(|i| match i {
            ImplSpec::Lib(p) => Some(p),
            _ => None,
        })
        .fold(benchmp::cli::Protected::new(), |p, lib| {
            p.file(
                format!("the library lib:{} being measured", lib.display()),
                lib,
            )
        });
    Ok(o.files.check_besides(&protected)?)
}

/// Writes the report as asked through benchmp's exporter: the guide's text (or JSON, or the
/// per-cell CSV), the run-quality notes on the other stream, then the report files. Returns 1
/// for a noisy run under --fail-on-noise, else 0.
fn emit(r: &Report, o: &OutputArgs) -> Result<i32, Error> {
    let e = r.extra.as_ref().ok_or(Error::NoResults)?;
    let csv = report::render_csv(e)?;
    Ok(benchmp::export::emit_with(
        r,
        o,
        &report::render_text(e, &r.host.arch),
        Some(&csv),
    )?)
}

/// dto's own CPU for the rounds, used when no option and no LMBENCH_SCHED chose any: PERF_CPU
/// (default 1, the guide's), wrapped by benchmp into the allowed set.
pub fn perf_cpu_default(perf_cpu: Option<usize>) -> ToolDefault {
    ToolDefault {
        cpu: perf_cpu.unwrap_or(DEFAULT_CPU),
        asked_by: "PERF_CPU".into(),
        source: if perf_cpu.is_some() {
            "PERF_CPU"
        } else {
            "default"
        }
        .into(),
    }
}

/// The header's note when PERF_CPU is set but `chosen_by` (an option or LMBENCH_SCHED) places
/// the rounds instead.
pub fn unused_perf_cpu(perf_cpu: Option<usize>, chosen_by: Option<ChosenBy>) -> Option<String> {
    let (cpu, by) = (perf_cpu?, chosen_by?);
    Some(format!("PERF_CPU={cpu} not used: {by} places the rounds"))
}

/// The CPUs of the children, each pinned and each once (a cell per CPU).
fn pinned_cpus(placement: &benchmp::sched::Placement) -> Result<Vec<usize>, Error> {
    let mut cpus = Vec::new();
    for (i, c) in placement.cpus.iter().enumerate() {
        let Some(c) = *c else {
            return Err(benchmp::Usage(format!(
                "placement {} (from {}) leaves child {i} unpinned, and dto pins every round: give --cpus LIST or a pinning policy",
                placement.policy, placement.source
            ))
            .into());
        };
        if cpus.contains(&c) {
            return Err(benchmp::Usage(format!(
                "placement {} (from {}) puts two children on CPU {c}; dto measures each CPU once: name each CPU once with --cpus, without a larger -P",
                placement.policy, placement.source
            ))
            .into());
        }
        cpus.push(c);
    }
    Ok(cpus)
}

/// A generous bound on one round's duration, so a long round is not taken for a hung child:
/// every warmup and timed call moving its bytes three times (the call and the flushes of both
/// buffers) plus a faulted page at the benchmark's fault probability, at 100 MB/s, far below
/// any core's copy rate. memcpy_1m at the default 10 000 iterations: about 10 minutes.
pub fn round_deadline(b: &Bench, pages: PageKind, iters: u32) -> Duration {
    let calls = 2 * (u64::from(iters) + u64::from(WARMUP_ITERS));
    let bytes = 3 * b.size as u64 + u64::from(b.pf_pct) * pages.bytes() as u64 / 100;
    Duration::from_secs((calls * bytes).div_ceil(100_000_000))
}

/// Runs every cell and returns the report (measurement only; printing is the caller's).
pub fn run(plan: &RunPlan, given: &PlacementArgs, output: &OutputArgs) -> Result<Report, Error> {
    let st = &plan.settings;
    let benches = bench::select(&plan.only, st.short).map_err(benchmp::Usage)?;
    preflight(plan)?;
    // Each CPU's round runs alone.
    let args = PlacementArgs {
        sequential: true,
        ..given.clone()
    };
    let mut session = Session::<DtoData>::start_with_default(
        "dto",
        &args,
        &TimingArgs::default(),
        Some(output),
        Some(&perf_cpu_default(st.cpu)),
    )?;
    let cpu_note = unused_perf_cpu(st.cpu, given.chosen_by())
        .or_else(|| session.placement_note().map(String::from));
    session.set_repetitions(1);
    let cpus = pinned_cpus(&session.placement)?;
    let page_sizes = page_sizes(plan, &benches, cpus.len())?;
    let measured: Vec<PageKind> = page_sizes
        .iter()
        .filter(|(_, s)| s.is_none())
        .map(|(p, _)| *p)
        .collect();
    let deadline = benches
        .iter()
        .flat_map(|b| measured.iter().map(|&p| round_deadline(b, p, st.iters)))
        .max()
        .unwrap_or_default();
    session.set_min_timeout(deadline);
    // From here on SIGINT/SIGTERM only set a flag between rounds too, so the frequency limits
    // are restored and the unfinished distributions.csv removed before the error ends the run
    // (benchmp handles them during a round).
    let _guard = benchmp::sys::process::InterruptGuard::install();
    // Under benchmp ab a repetition is one call of the operation and the driver keeps them
    // all (crate::paired): no rounds, no distributions.csv.
    let paired = session.paced();
    let csv_path = st.results_dir.join("distributions.csv");
    let mut dist = if paired {
        None
    } else {
        Some(Distributions::create(&st.results_dir, &csv_path)?)
    };
    // --pin-freq / --governor (benchmp's, in force since the session started) take the core
    // clock over from PERF_CORE_FREQ_MHZ.
    let by_option = benchmp::freq::pin::active();
    let core_mhz = if by_option { None } else { st.core_freq_mhz };
    let mut pin = FreqPin::apply(&session.topology.root, &cpus, core_mhz, st.uncore_freq_mhz);
    if by_option {
        pin.core = "set with --pin-freq/--governor (the report's pinned record)".into();
    }
    let hz = sys::timer_hz();
    let selected = (&benches[..], &measured[..], &cpus[..]);
    let (cells, figures) = match dist.as_mut() {
        Some(dist) => measure_cells(&mut session, plan, selected, dist, hz)?,
        None => {
            crate::paired::measure(&mut session, plan, selected, hz)?;
            (Vec::new(), Vec::new())
        }
    };
    if let Some(dist) = dist {
        dist.finish()?;
    }
    let setup = Setup {
        cpus,
        cpu_note,
        timer: sys::TIMER.into(),
        timer_hz: hz,
        core_freq: pin.core.clone(),
        uncore_freq: pin.uncore.clone(),
        rounds: st.rounds,
        iterations: st.iters,
        warmup_iterations: WARMUP_ITERS,
        min_effect_pct: st.min_effect_pct,
        cold_cache: st.cold_cache,
        flush: sys::flush_method().into(),
        short: st.short,
        round_timeout_s: given.timeout.max(deadline.as_secs()),
        distributions_csv: if paired {
            "none: benchmp ab keeps the repetitions".into()
        } else {
            csv_path.display().to_string()
        },
    };
    drop(pin);
    let extra = extra(plan, setup, &page_sizes, cells);
    if !paired {
        // Paired, each measurement is a figure, as benchmp makes them.
        session.set_figures(figures);
    }
    Ok(session.finish(output, Some(extra)))
}

/// Refuses, before anything runs, the timer and implementations this machine lacks (3) or
/// that cannot be loaded (2).
fn preflight(plan: &RunPlan) -> Result<(), Error> {
    sys::timer_check().map_err(benchmp::Unsupported)?;
    for c in &plan.configs {
        c.baseline.require()?;
        c.current.require()?;
    }
    Ok(())
}

/// Each page size asked for, with why it cannot be measured (2 MiB needs two buffers' worth
/// of reserved huge pages per CPU: every child maps its buffers before the first is timed);
/// exit 3 when none can be.
fn page_sizes(
    plan: &RunPlan,
    benches: &[&'static Bench],
    cpus: usize,
) -> Result<Vec<(PageKind, Option<String>)>, Error> {
    let largest = benches.iter().map(|b| b.size).max().unwrap_or(0);
    let mut page_sizes = Vec::new();
    for &p in &plan.pages {
        let status = if p == PageKind::Huge {
            let per_buffer = largest.div_ceil(p.bytes()) * p.bytes();
            let need = 2 * per_buffer as u64 * cpus as u64;
            match benchmp::sys::mem::check_huge_pages(need) {
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
    Ok(page_sizes)
}

/// Every cell (benchmark × configuration × page size) on every CPU: its rounds, its samples
/// in distributions.csv, its analysis and its figure.
fn measure_cells(
    session: &mut Session<DtoData>,
    plan: &RunPlan,
    (benches, measured, cpus): (&[&'static Bench], &[PageKind], &[usize]),
    dist: &mut Distributions,
    hz: f64,
) -> Result<(Vec<Cell>, Vec<Figure>), Error> {
    let st = &plan.settings;
    let to_ns = |t: u64| t as f64 * 1e9 / hz;
    let total = measured.len() * benches.len() * plan.configs.len() * st.rounds as usize;
    let mut progress = Progress::new("dto", total);
    let mut cells = Vec::new();
    let mut figures = Vec::new();
    for &pages in measured {
        for &b in benches {
            for config in &plan.configs {
                let rp = RoundPlan {
                    bench: b,
                    pages,
                    config: config.clone(),
                    iters: st.iters,
                    cold: st.cold_cache,
                };
                let ticks = rounds(session, &rp, st.rounds, cpus, &mut progress)?;
                for (&cpu, ticks) in cpus.iter().zip(&ticks) {
                    dist.write(b, pages, &config.label, cpu, ticks, &to_ns)?;
                    let (cell, samples) = analyse(&rp, cpu, ticks, st, &to_ns)?;
                    figures.push(Figure {
                        name: cell.figure_name(),
                        cpu: Some(cpu),
                        cluster: Some(session.topology.cluster_of(cpu)),
                        unit: "ns".into(),
                        better: Better::Lower,
                        value: cell.current_trimmed_mean_ns,
                        samples,
                        sizing: benchmp::schema::Sizing {
                            size_bytes: Some(b.size as u64),
                            ..Default::default()
                        },
                    });
                    cells.push(cell);
                }
            }
        }
    }
    progress.finish();
    Ok((cells, figures))
}

/// dto's section of the report.
fn extra(
    plan: &RunPlan,
    setup: Setup,
    page_sizes: &[(PageKind, Option<String>)],
    cells: Vec<Cell>,
) -> Extra {
    let regressions = cells.iter().filter(|c| c.verdict == Verdict::Fail).count();
    let noisy = cells.iter().filter(|c| c.verdict == Verdict::Noisy).count();
    Extra {
        mode: plan.mode,
        setup,
        configs: plan.configs.clone(),
        page_sizes: page_sizes
            .iter()
            .map(|(p, s)| PageStatus {
                pages: *p,
                measured: s.is_none(),
                note: s.clone(),
            })
            .collect(),
        speedup: report::speedups(&cells),
        cells,
        regressions,
        noisy,
        result: report::PassFail::of(regressions as u64),
    }
}

/// Per CPU, per round: the baseline and current ticks.
type CpuTicks = (Vec<Vec<u64>>, Vec<Vec<u64>>);

/// Runs the rounds of one cell, each one measurement with one child per CPU; returns each
/// CPU's ticks by round.
fn rounds(
    session: &mut Session<DtoData>,
    rp: &RoundPlan,
    n: u32,
    cpus: &[usize],
    progress: &mut Progress,
) -> Result<Vec<CpuTicks>, Error> {
    let b = rp.bench;
    let mut out: Vec<CpuTicks> = vec![(Vec::new(), Vec::new()); cpus.len()];
    for round in 1..=n {
        let what = || {
            format!(
                "{} ({} of {} bytes), {} pages, configuration {}, round {round} of {n}",
                b.name,
                b.op.name(),
                b.size,
                rp.pages.short(),
                rp.config.label
            )
        };
        progress.step(&format!(
            "{} {} {} round {round}/{n}",
            b.name,
            rp.pages.short(),
            rp.config.label
        ));
        if let Some(sig) = benchmp::sys::process::interrupted() {
            // The rounds that finished go to the report files, marked incomplete.
            return Err(Error::at(what(), session.interrupted_at(sig, None)));
        }
        let params = RoundParams {
            test: b.name.into(),
            op: b.op.name().into(),
            size_bytes: b.size,
            pf_pct: b.pf_pct,
            pages: rp.pages,
            config: rp.config.label.clone(),
            round,
            iterations: rp.iters,
        };
        let mut spec = Spec::latency(
            &format!(
                "{} {} {} round {round}",
                b.name,
                rp.pages.short(),
                rp.config.label
            ),
            1.0,
            params,
        );
        spec.iterations = Iterations::Fixed(1);
        spec.subtract_loop_overhead = false;
        // The library knobs are in the environment the children inherit, and only there.
        let env = EnvGuard::set(&rp.config.env);
        let measured = session.measure(spec, |_| Round::new(rp));
        drop(env);
        let m = measured.map_err(|e| Error::at(what(), e))?;
        for (i, child) in m.children.iter().enumerate() {
            let (_, ticks) = child.timed_detail().map_err(|e| Error::at(what(), e))?;
            let failed = |why: &str| Error::Child {
                what: what(),
                child: child.who(),
                why: why.into(),
            };
            if let Some(f) = &ticks.failure {
                return Err(failed(f));
            }
            if ticks.baseline.is_empty() || ticks.current.is_empty() {
                return Err(failed("no samples"));
            }
            out[i].0.push(ticks.baseline.clone());
            out[i].1.push(ticks.current.clone());
        }
    }
    Ok(out)
}

/// One CPU's cell from its pooled rounds, and the current side's samples in ns (to 0.1 ns,
/// as distributions.csv) for its figure.
fn analyse(
    rp: &RoundPlan,
    cpu: usize,
    ticks: &CpuTicks,
    st: &Settings,
    to_ns: &dyn Fn(u64) -> f64,
) -> Result<(Cell, Vec<f64>), Error> {
    let b = rp.bench;
    let mut bl: Vec<f64> = ticks.0.iter().flatten().map(|&t| to_ns(t)).collect();
    let mut cu: Vec<f64> = ticks.1.iter().flatten().map(|&t| to_ns(t)).collect();
    if bl.is_empty() || cu.is_empty() {
        return Err(Error::NoSamples(format!(
            "{} {} on CPU {cpu}",
            b.name,
            rp.pages.short()
        )));
    }
    sort(&mut bl);
    sort(&mut cu);
    let mut cmp = verdict::compare(&bl, &cu, st.min_effect_pct, b.reference_only);
    if cmp.verdict == Verdict::Fail && rp.config.is_a_a() {
        cmp.verdict = Verdict::Noisy;
    }
    let samples = cu.iter().map(|x| (x * 10.0).round() / 10.0).collect();
    let cell = Cell {
        test: b.name.into(),
        op: b.op.name().into(),
        size_bytes: b.size,
        pf_pct: b.pf_pct,
        reference_only: b.reference_only,
        config: rp.config.label.clone(),
        pages: rp.pages,
        cpu,
        rounds: ticks.0.len() as u32,
        baseline: summary(&bl),
        current: summary(&cu),
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
    };
    Ok((cell, samples))
}

/// distributions.csv: every raw sample, for the plotting script. It is written beside the
/// destination and put in place only when the run is complete, so an interrupted or failed run
/// leaves the earlier file as it was.
struct Distributions {
    w: csv::Writer<StagedFile>,
    path: PathBuf,
}

impl Distributions {
    /// Makes RESULTS_DIR and starts the file in it: creating the hidden copy is the write
    /// attempt that refuses (exit 2) a folder that cannot be written, before anything runs.
    fn create(dir: &Path, path: &Path) -> Result<Distributions, Error> {
        std::fs::create_dir_all(dir).map_err(|e| {
            benchmp::Usage(format!("RESULTS_DIR {} cannot be made: {e}", dir.display()))
        })?;
        let f = StagedFile::create(path).map_err(|e| {
            benchmp::Usage(format!(
                "RESULTS_DIR {}: cannot write {} there: {e}",
                dir.display(),
                path.file_name().unwrap_or_default().to_string_lossy()
            ))
        })?;
        let mut w = csv::Writer::from_writer(f);
        w.write_record(DIST_COLUMNS)
            .map_err(|e| Error::Distributions {
                path: path.to_path_buf(),
                source: e.into(),
            })?;
        Ok(Distributions {
            w,
            path: path.to_path_buf(),
        })
    }

    fn write(
        &mut self,
        b: &Bench,
        pages: PageKind,
        config: &str,
        cpu: usize,
        ticks: &CpuTicks,
        to_ns: &dyn Fn(u64) -> f64,
    ) -> Result<(), Error> {
        let cpu = cpu.to_string();
        for (version, rounds) in [("baseline", &ticks.0), ("current", &ticks.1)] {
            for (r, samples) in rounds.iter().enumerate() {
                for (i, &t) in samples.iter().enumerate() {
                    self.w
                        .write_record([
                            pages.short(),
                            b.op.name(),
                            b.name,
                            config,
                            version,
                            &r.to_string(),
                            &i.to_string(),
                            &format!("{:.1}", to_ns(t)),
                            &cpu,
                        ])
                        .map_err(|e| Error::Distributions {
                            path: self.path.clone(),
                            source: e.into(),
                        })?;
                }
            }
        }
        Ok(())
    }

    /// Puts the complete file in place.
    fn finish(self) -> Result<(), Error> {
        let path = self.path;
        let failed = |source| Error::Distributions {
            path: path.clone(),
            source,
        };
        let staged = self.w.into_inner().map_err(|e| failed(e.into_error()))?;
        staged.commit().map_err(failed)
    }
}

/// The columns of distributions.csv: the DTO guide's, then the CPU.
const DIST_COLUMNS: [&str; 9] = [
    "pagesize",
    "optype",
    "test",
    "config",
    "version",
    "round",
    "iteration",
    "ns",
    "cpu",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_cpu_is_the_default_and_named_when_unused() {
        let d = perf_cpu_default(None);
        assert_eq!((d.cpu, d.source.as_str()), (DEFAULT_CPU, "default"));
        let d = perf_cpu_default(Some(5));
        assert_eq!(
            (d.cpu, d.asked_by.as_str(), d.source.as_str()),
            (5, "PERF_CPU", "PERF_CPU")
        );
        assert_eq!(
            unused_perf_cpu(Some(0), Some(ChosenBy::Cpus)).as_deref(),
            Some("PERF_CPU=0 not used: --cpus places the rounds")
        );
        assert_eq!(unused_perf_cpu(None, Some(ChosenBy::LmbenchSched)), None);
        assert_eq!(unused_perf_cpu(Some(0), None), None);
    }

    #[test]
    fn round_deadline_grows_with_size_and_faults() {
        let small = round_deadline(bench::find("memcpy_4k").unwrap(), PageKind::Small, 10_000);
        let big = round_deadline(bench::find("memcpy_1m").unwrap(), PageKind::Small, 10_000);
        let pf = round_deadline(
            bench::find("memcpy_1m_pf50").unwrap(),
            PageKind::Huge,
            10_000,
        );
        assert!(small < Duration::from_secs(120), "{small:?}");
        assert!(big > Duration::from_secs(500) && pf > big, "{big:?} {pf:?}");
    }
}
