//! Options every tool shares (clap derive, flattened into each tool's own arguments), one-line
//! argument errors with exit status 2, and logging setup.

use std::path::PathBuf;

use clap::{Args, Parser};

use crate::aggregate::AggregateMode;
use crate::cpulist::parse_cpu_list;
use crate::error::{EXIT_OK, EXIT_USAGE};

/// A CPU list argument (`0-3,7`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

fn cpu_list(s: &str) -> Result<CpuList, String> {
    parse_cpu_list(s).map(CpuList).map_err(|e| e.to_string())
}

fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{s}' is not a whole number of at least 1")),
    }
}

fn micros(s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("'{s}' is not a whole number of microseconds"))
}

/// Where children run and how many there are.
#[derive(Debug, Clone, Default, Args)]
pub struct PlacementArgs {
    /// Number of child processes, each pinned to its own CPU (lmbench -P). Default: 1, or one
    /// per CPU given with --cpus.
    #[arg(short = 'P', long = "parallel", value_name = "N", value_parser = positive)]
    pub parallel: Option<usize>,
    /// CPUs to run the children on, e.g. 0-3,7 (child i on the i-th CPU, wrapping). Every CPU
    /// must be online and allowed for this process. Overrides LMBENCH_SCHED.
    #[arg(long, value_name = "LIST", value_parser = cpu_list)]
    pub cpus: Option<CpuList>,
    /// Placement policy as lmbench's LMBENCH_SCHED (DEFAULT, SINGLE, BALANCED, BALANCED_SPREAD,
    /// UNIQUE, UNIQUE_SPREAD, "CUSTOM 0 2", "CUSTOM_UNIQUE 0 2"); numbers index the allowed
    /// CPUs. Default: $LMBENCH_SCHED, else UNIQUE (one child per CPU).
    #[arg(long, value_name = "POLICY")]
    pub sched: Option<String>,
    /// Seconds a child may stay silent before it is called hung, killed and named.
    #[arg(long, value_name = "S", default_value_t = 120)]
    pub timeout: u64,
}

/// Interval calibration, warmup and repetitions.
#[derive(Debug, Clone, Default, Args)]
pub struct TimingArgs {
    /// Microseconds the children run before timing starts, after all are ready (lmbench -W).
    #[arg(short = 'W', long = "warmup", value_name = "US", default_value_t = 0, value_parser = micros)]
    pub warmup_us: u64,
    /// Accepted timed intervals per child (lmbench -N); the median of them is reported.
    #[arg(short = 'N', long = "repetitions", value_name = "N", default_value_t = 11, value_parser = positive)]
    pub repetitions: usize,
    /// Minimum length of a timed interval in microseconds (overrides $ENOUGH and the cache).
    #[arg(long, value_name = "US", value_parser = micros)]
    pub enough: Option<u64>,
    /// Calibration cache file, or "off" (default: $BENCHMP_CALIBRATION, else
    /// ~/.cache/socbench/calibration.json or /data/local/tmp/socbench/calibration.json).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<String>,
    /// Measure the interval and overheads again instead of using the cached calibration.
    #[arg(long)]
    pub recalibrate: bool,
}

impl TimingArgs {
    /// The calibration cache file to use, `None` when caching is off.
    pub fn cache_file(&self) -> Option<PathBuf> {
        let v = self
            .calibration
            .clone()
            .or_else(|| std::env::var("BENCHMP_CALIBRATION").ok());
        match v.as_deref() {
            Some("off") | Some("") => None,
            Some(p) => Some(PathBuf::from(p)),
            None => Some(crate::timing::default_cache_file()),
        }
    }
}

/// Output formats and run-quality policy.
#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// System figure on the text line: cluster (mean per cluster × its children, clusters
    /// added), sum (children added) or median (lmbench's own figure).
    #[arg(long, value_enum, default_value_t = AggregateMode::Cluster)]
    pub aggregate: AggregateMode,
    /// Write the full report as JSON: to stdout instead of the text (--json), or to a file
    /// besides the text (--json=FILE).
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub json: Option<String>,
    /// Write one CSV row per child per interval: to stdout instead of the text (--csv), or to
    /// a file besides the text (--csv=FILE).
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub csv: Option<String>,
    /// Write the lmbench-compatible text to stderr, as lmbench does (default: stdout).
    #[arg(long)]
    pub stderr: bool,
    /// Exit with status 1 when the run is flagged noisy.
    #[arg(long)]
    pub fail_on_noise: bool,
    /// Percentage of its timed run a child may lose to other tasks before the run is noisy.
    #[arg(long, value_name = "PCT", default_value_t = 2.0)]
    pub noise_lost: f64,
    /// Write trace_marker begin/end markers for every phase (also BENCHMP_TRACE=1).
    #[arg(long)]
    pub trace: bool,
}

impl OutputArgs {
    /// Refuses output requests that cannot all be honoured, before anything is measured.
    pub fn check(&self) -> Result<(), crate::error::Usage> {
        if self.json.as_deref() == Some("-") && self.csv.as_deref() == Some("-") {
            return Err(crate::error::Usage(
                "--json and --csv cannot both write to stdout; give one a file (--csv=FILE)".into(),
            ));
        }
        Ok(())
    }
}

/// Parses the command line; help and version print and exit 0, any other error prints one
/// line (`tool: error: ...`) and exits with status 2.
pub fn parse<T: Parser>() -> T {
    parse_from(std::env::args_os())
}

/// [`parse`] over given arguments.
pub fn parse_from<T, I, S>(args: I) -> T
where
    T: Parser,
    I: IntoIterator<Item = S>,
    S: Into<std::ffi::OsString> + Clone,
{
    crate::sys::process::note_baseline_threads();
    match T::try_parse_from(args) {
        Ok(t) => t,
        Err(e) => {
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let name = T::command().get_name().to_string();
                    eprintln!("{name}: a subcommand or argument is missing (see --help)");
                    std::process::exit(EXIT_USAGE);
                }
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = e.print();
                    std::process::exit(EXIT_OK);
                }
                _ => {
                    let name = T::command().get_name().to_string();
                    let text = e.to_string();
                    // clap's first line, joined with the next when it ends in a colon
                    // ("the following required arguments were not provided: <size>").
                    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
                    let mut first = lines.next().unwrap_or("invalid arguments").to_string();
                    if first.ends_with(':')
                        && let Some(next) = lines.next()
                        && !next.starts_with("Usage:")
                    {
                        first.push(' ');
                        first.push_str(next);
                    }
                    let hint = if first.contains("--help") {
                        ""
                    } else {
                        " (see --help)"
                    };
                    eprintln!("{name}: {first}{hint}");
                    std::process::exit(EXIT_USAGE);
                }
            }
        }
    }
}

/// Prints `tool: message` for an error and returns its exit status.
pub fn report_error(tool: &str, e: &anyhow::Error) -> i32 {
    let msg = format!("{e:#}").replace('\n', " ");
    eprintln!("{tool}: {msg}");
    crate::error::exit_code_of(e)
}

/// Logs to stderr (RUST_LOG, default warnings only); with `trace` or BENCHMP_TRACE=1, phases
/// also become trace_marker slices.
pub fn init_logging(trace: bool) {
    use tracing_subscriber::Layer;
    use tracing_subscriber::filter::LevelFilter;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .with_filter(filter);
    let trace = trace || std::env::var("BENCHMP_TRACE").is_ok_and(|v| v == "1");
    // Open trace_marker now, before any child is forked, so children share the descriptor.
    let markers =
        (trace && ftrace::init()).then(|| ftrace::layer().with_filter(LevelFilter::TRACE));
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(markers)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Parser)]
    #[command(name = "t")]
    struct T {
        #[command(flatten)]
        p: PlacementArgs,
        #[command(flatten)]
        t: TimingArgs,
        #[command(flatten)]
        o: OutputArgs,
        rest: Vec<String>,
    }

    #[test]
    fn lmbench_style_options() {
        let t = T::try_parse_from(["t", "-P4", "-W", "1000", "-N", "3", "64m", "rd"]).unwrap();
        assert_eq!(t.p.parallel, Some(4));
        assert_eq!(t.t.warmup_us, 1000);
        assert_eq!(t.t.repetitions, 3);
        assert_eq!(t.rest, vec!["64m", "rd"]);
    }

    #[test]
    fn json_takes_a_file_only_with_equals() {
        let t = T::try_parse_from(["t", "--json", "8m", "rd"]).unwrap();
        assert_eq!(t.o.json.as_deref(), Some("-"));
        assert_eq!(t.rest, vec!["8m", "rd"]);
        let t = T::try_parse_from(["t", "--json=out.json", "8m"]).unwrap();
        assert_eq!(t.o.json.as_deref(), Some("out.json"));
    }

    #[test]
    fn bad_values_are_rejected() {
        assert!(T::try_parse_from(["t", "-P", "0"]).is_err());
        assert!(T::try_parse_from(["t", "-N", "0"]).is_err());
        assert!(T::try_parse_from(["t", "--cpus", "3-1"]).is_err());
        assert!(T::try_parse_from(["t", "-W", "-5"]).is_err());
        let t = T::try_parse_from(["t", "--cpus", "0-1,3"]).unwrap();
        assert_eq!(t.p.cpus, Some(CpuList(vec![0, 1, 3])));
    }
}
