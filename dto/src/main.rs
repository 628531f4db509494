//! socbench `dto`: functional checks and A/B latency comparison of memcpy, memmove, memset and
//! memcmp implementations. See README.md.

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, Result};
use benchmp::cli::{OutputArgs, PlacementArgs, write_stdout};
use clap::{Args, Parser, Subcommand};

use dto::bench::{Config, PageKind};
use dto::check;
use dto::env::{Settings, parse_key_value};
use dto::impls::{ImplSpec, Listing};
use dto::kernels::Kernel;
use dto::report::{self, Mode, PassFail, Report};
use dto::run::{self, RunPlan};

/// Functional checks and A/B latency comparison of memory-operation implementations.
///
/// Implementations: `cpu` (libc's functions via dlopen/dlsym), `lib:PATH` (memcpy, memmove,
/// memset and memcmp from a shared library, e.g. Intel's libdto) and the built-in kernels
/// listed by `dto list`. Exit status: 0 ok, 1 a check failed or an A/B cell regressed,
/// 2 bad usage or input, 3 unsupported here (CPU feature, huge pages). An A/A cell (one
/// implementation against itself, as every `speedup` row is) that moves is NOISY, not a failure.
#[derive(Debug, Parser)]
#[command(name = "dto", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// List the implementations and whether this CPU can run them.
    List {
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Check one implementation's results (all sizes, offsets, overlaps; several threads).
    ///
    /// Each function is checked in a child process that loads the implementation itself; a
    /// child that crashes or hangs is narrowed down, one child per size, to the first size that
    /// does so alone, and the check fails (exit 1) naming the function and that size.
    Check {
        /// Implementation to check: cpu, lib:PATH or a kernel name.
        #[arg(long = "impl", value_name = "IMPL", value_parser = ImplSpec::parse)]
        imp: ImplSpec,
        /// Threads running the checks at once, each with its own buffers.
        #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
        threads: u32,
        /// Set KEY=VALUE in the environment before loading the implementation (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_key_value)]
        env: Vec<(String, String)>,
        /// Seconds one function's check may stay silent before its child is called hung.
        #[arg(long, value_name = "S", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        timeout: u64,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A/B latency comparison of a baseline and a current implementation (the DTO perf test).
    ///
    /// The cpu configuration (libc against itself) is measured too, for the speedup summary,
    /// unless --no-cpu is given or both sides are cpu. Settings come from PERF_* variables
    /// (see README.md). Each round runs in a pinned child per CPU (--cpus, -P, --sched or
    /// LMBENCH_SCHED; else PERF_CPU, default 1), the CPUs one after another. Exit status 1
    /// when an A/B cell's trimmed mean grew by more than PERF_MIN_EFFECT percent; the cpu row
    /// is A/A and shows NOISY instead of FAIL.
    Ab {
        /// The baseline implementation (A).
        #[arg(long, value_name = "IMPL", value_parser = ImplSpec::parse)]
        baseline: ImplSpec,
        /// The current implementation (B), judged against the baseline.
        #[arg(long, value_name = "IMPL", value_parser = ImplSpec::parse)]
        current: ImplSpec,
        /// Label of this configuration in the tables (default: the current implementation's).
        #[arg(long, value_name = "NAME")]
        label: Option<String>,
        /// Do not measure the cpu configuration (no speedup summary).
        #[arg(long)]
        no_cpu: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Speedup of implementations over cpu: each measured A/A (against itself) next to cpu.
    Speedup {
        /// Implementations to measure (repeatable); default: every built-in kernel available.
        #[arg(long = "impl", value_name = "IMPL", value_parser = ImplSpec::parse)]
        imps: Vec<ImplSpec>,
        #[command(flatten)]
        common: Common,
    },
}

/// Options shared by `ab` and `speedup`.
#[derive(Debug, Args)]
struct Common {
    /// Run only these benchmarks (repeatable or comma-separated), e.g. memcpy_64k.
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,
    /// Page sizes to measure (repeatable); 2m is skipped with a note when no huge pages are
    /// reserved.
    #[arg(long, value_enum, default_values_t = [PageKind::Small, PageKind::Huge])]
    pages: Vec<PageKind>,
    /// Set KEY=VALUE in the environment of every round's children (repeatable), e.g.
    /// DTO_MIN_BYTES=4096.
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    env: Vec<(String, String)>,
    /// Where the rounds run. Without --cpus, -P, --sched and LMBENCH_SCHED: on PERF_CPU
    /// (default 1, wrapped into the allowed CPUs). Children always run one after another;
    /// --timeout is raised to the longest round's generous expected time.
    #[command(flatten)]
    placement: PlacementArgs,
    #[command(flatten)]
    output: OutputArgs,
}

fn main() {
    let cli: Cli = benchmp::cli::parse();
    let trace = match &cli.cmd {
        Cmd::Ab { common, .. } | Cmd::Speedup { common, .. } => common.output.trace,
        _ => false,
    };
    benchmp::cli::init_logging(trace);
    match run_cli(cli) {
        Ok(code) => benchmp::cli::exit(code),
        Err(e) => benchmp::cli::exit(benchmp::cli::report_error("dto", &e)),
    }
}

fn run_cli(cli: Cli) -> Result<i32> {
    match cli.cmd {
        Cmd::List { json } => list(json),
        Cmd::Check {
            imp,
            threads,
            env,
            timeout,
            json,
        } => check_impl(&imp, threads as usize, &env, timeout, json),
        Cmd::Ab {
            baseline,
            current,
            label,
            no_cpu,
            common,
        } => {
            let mut configs = Vec::new();
            let both_cpu = baseline == ImplSpec::Cpu && current == ImplSpec::Cpu;
            if !no_cpu || both_cpu {
                configs.push(Config {
                    label: "cpu".into(),
                    baseline: ImplSpec::Cpu,
                    current: ImplSpec::Cpu,
                    env: common.env.clone(),
                });
            }
            if !both_cpu {
                let mut label = label.unwrap_or_else(|| current.label());
                if label == "cpu" {
                    label = "ab".into();
                }
                configs.push(Config {
                    label,
                    baseline,
                    current,
                    env: common.env.clone(),
                });
            }
            perf(Mode::Ab, configs, common)
        }
        Cmd::Speedup { imps, common } => {
            let imps = if imps.is_empty() {
                Kernel::ALL
                    .into_iter()
                    .filter(|k| k.available().is_ok())
                    .map(ImplSpec::Kernel)
                    .collect()
            } else {
                imps
            };
            let mut configs = vec![Config {
                label: "cpu".into(),
                baseline: ImplSpec::Cpu,
                current: ImplSpec::Cpu,
                env: common.env.clone(),
            }];
            for i in imps.into_iter().filter(|i| *i != ImplSpec::Cpu) {
                configs.push(Config {
                    label: i.label(),
                    baseline: i.clone(),
                    current: i,
                    env: common.env.clone(),
                });
            }
            perf(Mode::Speedup, configs, common)
        }
    }
}

fn perf(mode: Mode, configs: Vec<Config>, common: Common) -> Result<i32> {
    common.output.check()?;
    refuse_outputs_on_inputs(&configs, &common.output)?;
    let settings = Settings::from_process().map_err(benchmp::Usage)?;
    let notes = common.output.note_stream();
    if settings.iters_capped {
        let _ = notes.write(&format!(
            "dto: PERF_ITERS capped at {}\n",
            dto::env::MAX_ITERS
        ));
    }
    let mut pages = common.pages.clone();
    pages.dedup();
    let plan = RunPlan {
        mode,
        configs,
        only: common.only.clone(),
        pages,
        settings,
    };
    let r = run::run(&plan, &common.placement, &common.output)?;
    let code = emit(&r, &common.output)?;
    let e = r.extra.as_ref().context("the report lacks dto's results")?;
    if e.noisy > 0 {
        let _ = notes.write(&format!(
            "dto: {} A/A cell(s) moved by more than {:.1}%: this run's noise (not a regression)\n",
            e.noisy, e.setup.min_effect_pct
        ));
    }
    if e.regressions > 0 {
        let _ = notes.write(&format!(
            "dto: {} A/B cell(s) regressed by more than {:.1}%\n",
            e.regressions, e.setup.min_effect_pct
        ));
        return Ok(benchmp::EXIT_FAILED);
    }
    Ok(code)
}

/// Refuses a --json or --csv file that is one of the libraries measured (a link or another
/// spelling counts): the report would replace the input.
fn refuse_outputs_on_inputs(configs: &[Config], o: &OutputArgs) -> Result<()> {
    let libs = configs.iter().flat_map(|c| [&c.baseline, &c.current]);
    for lib in libs.filter_map(|i| match i {
        ImplSpec::Lib(p) => Some(p),
        _ => None,
    }) {
        for (option, path) in [("--json", o.json.as_deref()), ("--csv", o.csv.as_deref())] {
            if let Some(path) = path.filter(|p| *p != "-")
                && benchmp::files::same_file(std::path::Path::new(path), lib)
            {
                return Err(benchmp::Usage(format!(
                    "{option}={path} is the library lib:{} being measured; choose another file",
                    lib.display()
                ))
                .into());
            }
        }
    }
    Ok(())
}

/// Writes the report as asked: the guide's text (or JSON, or the per-cell CSV, on stdout),
/// the run-quality notes on the other stream, then the report files. Returns 1 for a noisy
/// run under --fail-on-noise, else 0.
fn emit(r: &Report, o: &OutputArgs) -> Result<i32> {
    let e = r.extra.as_ref().context("the report lacks dto's results")?;
    let csv = report::render_csv(e)?;
    if o.json.as_deref() == Some("-") {
        benchmp::report::write_json(r, std::io::stdout().lock())
            .context("cannot write to stdout")?;
    } else if o.csv.as_deref() == Some("-") {
        write_stdout(&csv)?;
    } else {
        o.result_stream()
            .write(&report::render_text(e, &r.host.arch))
            .context("cannot write the result")?;
    }
    let _ = o
        .note_stream()
        .write(&noise_notes(&r.quality.verdict.reasons));
    if let Some(path) = o.json.as_deref().filter(|p| *p != "-") {
        benchmp::session::write_file(path, |w| benchmp::report::write_json(r, w))?;
    }
    if let Some(path) = o.csv.as_deref().filter(|p| *p != "-") {
        benchmp::session::write_file(path, |w| w.write_all(csv.as_bytes()))?;
    }
    Ok(if r.quality.verdict.noisy && o.fail_on_noise {
        benchmp::EXIT_FAILED
    } else {
        benchmp::EXIT_OK
    })
}

/// The run-quality notes: a run has a measurement per round, so a busy machine can give
/// hundreds of reasons; the first few are shown and the rest counted (the JSON keeps all).
fn noise_notes(reasons: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut out: String = reasons
        .iter()
        .take(SHOWN)
        .map(|why| format!("dto: noisy: {why}\n"))
        .collect();
    if reasons.len() > SHOWN {
        out.push_str(&format!(
            "dto: noisy: {} more reasons (all in the JSON report's quality.verdict)\n",
            reasons.len() - SHOWN
        ));
    }
    out
}

fn list(json: bool) -> Result<i32> {
    let listing = Listing::here();
    if json {
        write_stdout(&report::sorted_json(&listing)?)?;
        return Ok(0);
    }
    let mut o = format!("{:<10} {:<10} {}\n", "impl", "available", "description");
    for l in &listing.implementations {
        let (n, d) = (&l.name, &l.description);
        match &l.reason {
            None => o.push_str(&format!("{n:<10} {:<10} {d}\n", "yes")),
            Some(why) => o.push_str(&format!("{n:<10} {:<10} {d} ({why})\n", "no")),
        }
    }
    o.push_str(&format!(
        "\ntimer: {}; cache flush: {}; 2 MiB huge pages free: {}\n",
        listing.timer, listing.flush, listing.huge_pages_free
    ));
    write_stdout(&o)?;
    Ok(0)
}

fn check_impl(
    spec: &ImplSpec,
    threads: usize,
    env: &[(String, String)],
    timeout: u64,
    json: bool,
) -> Result<i32> {
    if let Err((code, msg)) = spec.preflight() {
        return Err(if code == benchmp::EXIT_UNSUPPORTED {
            benchmp::Unsupported(msg).into()
        } else {
            benchmp::Usage(msg).into()
        });
    }
    // Inherited by the children, which load the implementation (this process never does).
    dto::measure::set_process_env(env)?;
    let out = dto::checkrun::run(spec, threads, Duration::from_secs(timeout))?;
    let r = &out.report;
    if json {
        write_stdout(&report::sorted_json(&out.summary(spec, threads))?)?;
    } else {
        let mut o = format!(
            "dto check: {spec} ({}), {threads} threads\n\
             memcpy, memset: sizes 0-{} with every source/destination offset 0-63, {} larger sizes up to {} bytes\n\
             memmove: overlapping both ways; memcmp: equal, and differing at the first, middle and last byte\n",
            out.source,
            check::SMALL_MAX,
            check::LARGE_SIZES.len(),
            check::LARGE_SIZES.iter().max().unwrap_or(&0)
        );
        for m in &r.mismatches {
            o.push_str(&format!("MISMATCH {m}\n"));
        }
        o.push_str(&format!(
            "{} cases, {} wrong: {}\n",
            r.cases,
            r.failures,
            PassFail::of(r.failures)
        ));
        write_stdout(&o)?;
    }
    if r.failures > 0 {
        let first = r
            .mismatches
            .first()
            .map(|m| m.to_string())
            .unwrap_or_default();
        eprintln!(
            "dto: check failed: {} wrong result(s); first: {first}",
            r.failures
        );
        return Ok(benchmp::EXIT_FAILED);
    }
    Ok(benchmp::EXIT_OK)
}
