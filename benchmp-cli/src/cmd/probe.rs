//! `benchmp probe`: a trivial workload (a spin) run through the framework, optionally with a
//! failing child or load children; the tests drive it to check placement, sample counts and
//! failure handling from outside their own process.

use std::hint::black_box;
use std::time::Duration;

use anyhow::Result;
use benchmp::cli::{OutputArgs, PlacementArgs, TimingArgs};
use benchmp::run::Iterations;
use benchmp::{Benchmark, ChildInfo, NoData, Session, Spec};
use clap::ValueEnum;

/// `benchmp probe`'s options.
#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub placement: PlacementArgs,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Make this child fail.
    #[arg(long, value_name = "INDEX")]
    pub fail_child: Option<usize>,
    /// How the chosen child fails.
    #[arg(long, value_enum, default_value_t = Failure::Abort)]
    pub fail_how: Failure,
    /// Run exactly this many iterations per interval instead of calibrating.
    #[arg(long, value_name = "N")]
    pub iterations: Option<u64>,
    /// Spin steps per iteration: a known slowdown for the paired A/B tests (`--work 2` takes
    /// twice as long per iteration as the default 1).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub work: u64,
    /// Also run load children (the same spin, without pause) on these CPUs while the
    /// measuring children time their intervals.
    #[arg(long, value_name = "LIST", value_parser = benchmp::cli::cpu_list)]
    pub load_cpus: Option<benchmp::cli::CpuList>,
}

/// How `--fail-child` fails (`--fail-how`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Failure {
    /// abort() in the child: killed by SIGABRT.
    Abort,
    /// exit(5) in the middle of the timed run.
    Exit,
    /// Stop responding (sleep) during the timed run.
    Hang,
    /// Return an error from the child's setup.
    Error,
}

/// A dependent-add loop: cost per iteration is stable and it cannot be folded.
pub struct Spin {
    /// The running value, returned by every run so the loop cannot be dropped.
    pub acc: u64,
    /// How this child fails (after its third run), if it does.
    pub fail: Option<Failure>,
    /// Runs so far.
    pub runs: u64,
    /// Spin steps per iteration.
    pub work: u64,
}

impl Benchmark for Spin {
    type Sample = ();
    type Child = ();

    fn run(&mut self, iterations: u64) -> u64 {
        self.runs += 1;
        if let Some(f) = self.fail
            && self.runs > 3
        {
            match f {
                Failure::Abort => std::process::abort(),
                Failure::Exit => std::process::exit(5),
                Failure::Hang => std::thread::sleep(Duration::from_secs(3600)),
                Failure::Error => {}
            }
        }
        self.acc = spin(self.acc, iterations.saturating_mul(self.work));
        self.acc
    }
}

/// `n` steps of the dependent multiply-add, from `acc`.
#[inline(never)]
pub fn spin(mut acc: u64, n: u64) -> u64 {
    for i in 0..n {
        acc = black_box(acc.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    acc
}

/// Runs `benchmp probe`: the spin workload through the framework, optionally with a failing
/// child or load children; the exit status is the report's.
pub fn run(args: ProbeArgs) -> Result<i32> {
    let ProbeArgs {
        placement,
        timing,
        output,
        fail_child,
        fail_how,
        iterations,
        work,
        load_cpus,
    } = args;
    output.check()?;
    let mut s = Session::<NoData>::start("benchmp-probe", &placement, &timing, Some(&output))?;
    if let Some(i) = fail_child.filter(|&i| i >= s.parallel()) {
        return Err(benchmp::Usage(format!(
            "--fail-child {i}: the run has {} child(ren), numbered from 0",
            s.parallel()
        ))
        .into());
    }
    let mut spec = Spec::rate("spin", 1.0, "iterations/s", ());
    // A spin step costs a few cycles, about what lmbench's loop overhead method measures (more
    // under emulation on a busy host): subtracted, it could leave no time at all.
    spec.subtract_loop_overhead = false;
    if let Some(n) = iterations {
        spec.iterations = Iterations::Fixed(n);
    }
    let make = |info: &ChildInfo| {
        let fail = (fail_child == Some(info.index)).then_some(fail_how);
        if fail == Some(Failure::Error) {
            return Err("setup failed on purpose".into());
        }
        Ok(Spin {
            acc: info.index as u64,
            fail,
            runs: 0,
            work,
        })
    };
    let loads: Vec<Option<usize>> = load_cpus
        .map(|l| l.0.into_iter().map(Some).collect())
        .unwrap_or_default();
    let loads = benchmp::Loads {
        cpus: &loads,
        required: true,
    };
    s.measure_on(None, spec, make, loads, make)?;
    let report = s.finish(&output, None);
    let code = benchmp::emit(&report, &output, |r| {
        let m = &r.measurements[0];
        let mut out = format!("{:.2} {}\n", m.figure(output.aggregate), m.metric.unit());
        for l in benchmp::export::cluster_lines(r, m, output.aggregate) {
            out.push_str(&l);
            out.push('\n');
        }
        out
    })?;
    Ok(code)
}
