//! Options every tool shares (clap derive, flattened into each tool's own arguments), one-line
//! argument errors with exit status 2, and logging setup.

use std::path::PathBuf;

use clap::{Args, FromArgMatches, Parser};

use crate::cpulist::parse_cpu_list_once;
use crate::error::{EXIT_OK, EXIT_USAGE};
use crate::sched::ChosenBy;

/// A CPU list argument (`0-3,7`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// The value parser of CPU-list options (`0-3,7`; a CPU named twice is refused).
pub fn cpu_list(s: &str) -> Result<CpuList, String> {
    parse_cpu_list_once(s)
        .map(CpuList)
        .map_err(|e| e.to_string())
}

/// Most children one run may fork.
pub const MAX_PARALLEL: usize = 4096;
/// Most accepted intervals per child.
pub const MAX_REPETITIONS: usize = 1_000_000;
pub use crate::timing::MAX_MICROS;

fn whole_in(s: &str, lo: usize, hi: usize) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a whole number from {lo} to {hi}")),
    }
}

fn children(s: &str) -> Result<usize, String> {
    whole_in(s, 1, MAX_PARALLEL)
}

fn repetitions(s: &str) -> Result<usize, String> {
    whole_in(s, 1, MAX_REPETITIONS)
}

fn micros(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n <= MAX_MICROS => Ok(n),
        _ => Err(format!(
            "'{s}' is not a whole number of microseconds up to {MAX_MICROS}"
        )),
    }
}

/// Value parser of an interval option (`--enough`): microseconds from 1 up to an hour.
pub fn interval(s: &str) -> Result<u64, String> {
    match micros(s)? {
        0 => Err("an interval of 0 µs cannot be timed: give at least 1".into()),
        n => Ok(n),
    }
}

/// Where children run and how many there are.
#[derive(Debug, Clone, Args)]
pub struct PlacementArgs {
    /// Number of child processes, each pinned to its own CPU (lmbench -P). Default: 1, or one
    /// per CPU given with --cpus.
    #[arg(short = 'P', long = "parallel", value_name = "N", value_parser = children)]
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
    #[arg(long, value_name = "S", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
    /// Time the children one after another instead of together: each child's figure is then
    /// its CPU's alone (per-core figures, nothing added). Without it, children whose timed
    /// windows did not overlap fail the run.
    #[arg(long)]
    pub sequential: bool,
    #[command(flatten)]
    pub conditions: ConditionsArgs,
    /// Set when this process runs as a `benchmp ab` worker: read from the driver's
    /// environment once, when the arguments are parsed. Not an option.
    #[arg(skip = crate::run::worker::WorkerMode::from_env())]
    pub worker: Option<crate::run::worker::WorkerMode>,
}

impl PlacementArgs {
    /// The pages a tool's buffers take: its command's `--pages` (`given`), else what a
    /// `benchmp ab` driver asked of both sides, else system.
    pub fn pages(&self, given: Option<crate::Pages>) -> crate::Pages {
        given
            .or(self.worker.and_then(|w| w.pages))
            .unwrap_or(crate::Pages::System)
    }

    /// What chooses the children's CPUs: --cpus, else --sched, else LMBENCH_SCHED, else -P;
    /// `None` when nothing does (benchmp's UNIQUE default, or a tool's own default CPU).
    pub fn chosen_by(&self) -> Option<ChosenBy> {
        self.chosen_by_with(crate::sched::lmbench_sched().as_deref())
    }

    /// [`PlacementArgs::chosen_by`] with `LMBENCH_SCHED` given, not read.
    pub(crate) fn chosen_by_with(&self, lmbench_sched: Option<&str>) -> Option<ChosenBy> {
        if self.cpus.is_some() {
            Some(ChosenBy::Cpus)
        } else if self.sched.is_some() {
            Some(ChosenBy::Sched)
        } else if lmbench_sched.is_some() {
            Some(ChosenBy::LmbenchSched)
        } else if self.parallel.is_some() {
            Some(ChosenBy::Parallel)
        } else {
            None
        }
    }
}

/// The conditions a run's CPUs measure under: their clock, their temperature at each
/// measurement's start, what perf counts while they are timed, and the power and energy
/// sampled beside them.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Run conditions")]
pub struct ConditionsArgs {
    /// Count perf events per child over exactly its timed intervals (default list: cycles,
    /// instructions, cache-references, cache-misses, branch-misses; or a comma list of perf's
    /// names, e.g. task-clock,page-faults,context-switches, and raw events r<hex>). Where the
    /// kernel refuses them: exit status 3. Write --counters=LIST, or a bare --counters last.
    #[arg(long, value_name = "LIST", num_args = 0..=1, default_missing_value = "default", value_parser = crate::counters::parse_list)]
    pub counters: Option<crate::counters::CounterList>,
    /// Set the run's CPUs' cpufreq scaling_min_freq and scaling_max_freq to this clock for the
    /// run, and write the old values back after it (also on Ctrl-C or a crashed child).
    /// Without cpufreq or permission: exit status 3.
    #[arg(long, value_name = "MHZ", value_parser = crate::freq::parse_mhz)]
    pub pin_freq: Option<f64>,
    /// Set the run's CPUs' cpufreq governor for the run (e.g. performance), restored after it.
    #[arg(long, value_name = "NAME")]
    pub governor: Option<String>,
    /// Before each measurement, wait until the thermal zones of the run's CPUs read at most
    /// this many degrees C; the report records where each measurement started. Without
    /// thermal zones: exit status 3.
    #[arg(long, value_name = "C", value_parser = celsius, allow_negative_numbers = true)]
    pub cool_down: Option<f64>,
    /// Seconds --cool-down waits at most before a measurement; then the run fails (exit 1).
    #[arg(long, value_name = "S", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub cool_down_timeout: u64,
    /// Power sources to read beside every measurement: a comma list of the names `benchmp
    /// power` lists (powercap:package-0, hwmon:ina3221:VDD_CPU, battery:battery,
    /// odpm:S4M_VDD_CPUCL0, cmd), or none. Default: every source found under the sysfs root,
    /// nothing where there is none. A named source that is missing or cannot be read (a
    /// root-only counter, a charging battery): exit status 3.
    #[arg(long, value_name = "SRC,...", value_parser = crate::power::parse_choice)]
    pub power: Option<crate::power::Choice>,
    /// An external power meter: a command (split into words as a shell would, run without
    /// one) whose stdout lines are `<unix seconds> <watts>`; its readings are the source cmd.
    #[arg(long, value_name = "CMD")]
    pub power_cmd: Option<String>,
    /// Samples per second of power, every thermal zone and each cpufreq policy's
    /// scaling_cur_freq while a measurement runs (0.1 to 1000).
    #[arg(long, value_name = "HZ", default_value_t = 10.0, value_parser = crate::power::parse_hz)]
    pub power_hz: f64,
    /// Seconds of idle measured before the run; each source's mean power then is subtracted
    /// from its power during every measurement (default 0: none). Without a power source:
    /// exit status 3.
    #[arg(long, value_name = "S", default_value_t = 0.0, value_parser = crate::power::parse_baseline)]
    pub power_baseline: f64,
}

/// Whether trace_marker slices were asked for and tracefs takes them ([`init_logging`]).
static MARKERS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process writes trace_marker records (`--trace` or BENCHMP_TRACE=1, and
/// tracefs found): the power sampler's counters go with the slices.
pub fn markers_on() -> bool {
    MARKERS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Value parser for `--cool-down`: a temperature from -50 to 150 C.
pub fn celsius(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(c) if (-50.0..=150.0).contains(&c) => Ok(c),
        _ => Err(format!("'{s}' is not a temperature in C from -50 to 150")),
    }
}

impl ConditionsArgs {
    /// What these options ask of power, for a run that is (`worker`) or is not a paired
    /// repetition.
    pub fn power_request(&self, worker: bool) -> crate::power::Request {
        crate::power::Request {
            power: self.power.clone(),
            power_cmd: self.power_cmd.clone(),
            power_hz: self.power_hz,
            power_baseline: self.power_baseline,
            trace: markers_on(),
            worker,
        }
    }
}

impl Default for ConditionsArgs {
    fn default() -> Self {
        clap_defaults()
    }
}

/// The values a clap argument struct takes when no option is given: the one source of the
/// defaults, so a library user's `Default::default()` matches the command line's.
fn clap_defaults<T: Args + FromArgMatches>() -> T {
    let cmd = T::augment_args(clap::Command::new("defaults"));
    let matches = cmd
        .try_get_matches_from(["defaults"])
        .expect("every option has a default");
    T::from_arg_matches(&matches).expect("defaults are valid")
}

impl Default for PlacementArgs {
    fn default() -> Self {
        clap_defaults()
    }
}

impl Default for TimingArgs {
    fn default() -> Self {
        clap_defaults()
    }
}

impl Default for OutputArgs {
    fn default() -> Self {
        clap_defaults()
    }
}

/// Interval calibration, warmup and repetitions.
#[derive(Debug, Clone, Args)]
pub struct TimingArgs {
    /// Microseconds the children run before timing starts, after all are ready (lmbench -W).
    #[arg(short = 'W', long = "warmup", value_name = "US", default_value_t = 0, value_parser = micros)]
    pub warmup_us: u64,
    /// Accepted timed intervals per child (lmbench -N); the median of them is reported.
    #[arg(short = 'N', long = "repetitions", value_name = "N", default_value_t = 11, value_parser = repetitions)]
    pub repetitions: usize,
    /// Minimum length of a timed interval in microseconds, at least 1 (overrides $ENOUGH and
    /// the cache).
    #[arg(long, value_name = "US", value_parser = interval)]
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
    /// The calibration cache file to use, `None` when caching is off. A file given with
    /// --calibration or $BENCHMP_CALIBRATION must be one the cache may write: not a folder,
    /// not a file of something else (it would be overwritten), in a folder that exists or can
    /// be made.
    pub fn cache_file(&self) -> Result<Option<PathBuf>, crate::timing::CalibrationError> {
        let (v, from) = match (&self.calibration, std::env::var("BENCHMP_CALIBRATION")) {
            (Some(v), _) => (v.clone(), "--calibration"),
            (None, Ok(v)) => (v, "BENCHMP_CALIBRATION"),
            (None, Err(_)) => return Ok(Some(crate::timing::default_cache_file())),
        };
        match v.as_str() {
            "off" | "" => Ok(None),
            p => crate::timing::check_cache_file(std::path::Path::new(p), from).map(Some),
        }
    }
}
pub use crate::output::{
    OutputArgs, Protected, ResultFiles, Stream, check_output_file, write_stdout,
};

pub use foundation::contract::Example;

/// Parses the command line; help and version print and exit 0, any other error prints one
/// line (`tool: error: ...`) and exits with status 2. `examples` say how to run each command
/// quickly and at length: with `SOCBENCH_CLI_SPEC` set the binary prints its commands,
/// options and examples for the contract test and exits 0 ([`foundation::contract`]).
pub fn parse<T: Parser>(examples: &[Example]) -> T {
    foundation::startup::prepare(T::command().get_name());
    foundation::contract::print_spec_if_asked(&T::command(), examples);
    let parsed = parse_from(std::env::args_os());
    // A setting a killed socbench run left changed is written back (and said) before this
    // command reads or changes anything.
    foundation::restore::left_behind(T::command().get_name());
    parsed
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
                    foundation::errln!("{name}: a subcommand or argument is missing (see --help)");
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
                    foundation::errln!("{name}: {first}{hint}");
                    std::process::exit(EXIT_USAGE);
                }
            }
        }
    }
}

/// Prints `tool: message` for an error and returns its exit status.
pub fn report_error(tool: &str, e: &(dyn std::error::Error + 'static)) -> i32 {
    report_error_by(tool, e, &[])
}

/// [`report_error`] for a command whose own errors carry their status too (`probes`: the
/// benchmp binary's comparison errors), so this module needs none of the modules above it.
pub fn report_error_by(
    tool: &str,
    e: &(dyn std::error::Error + 'static),
    probes: &[crate::error::ExitProbe],
) -> i32 {
    // One line, whatever the chain holds: line breaks become spaces, and any other control
    // character (a worker's escape sequence, a value typed with a newline) is shown escaped.
    let msg = crate::error::chain_line(e);
    foundation::errln!("{tool}: {}", foundation::error::printable(&msg));
    exit_code_by(e, probes)
}

/// The exit status of any error chain a tool can end with: the framework's errors
/// ([`crate::run::error::PROBES`]) and the usage and unsupported markers.
pub fn exit_code_of(e: &(dyn std::error::Error + 'static)) -> i32 {
    exit_code_by(e, &[])
}

/// [`exit_code_of`], with `probes` recognising a command's own errors as well.
pub fn exit_code_by(
    e: &(dyn std::error::Error + 'static),
    probes: &[crate::error::ExitProbe],
) -> i32 {
    let mut all = crate::run::error::PROBES.to_vec();
    all.extend_from_slice(probes);
    crate::error::exit_code_by(e, &all)
}

/// Ends the tool with `code`, first writing back a frequency pin still in force (a run that
/// failed or was interrupted); a stop signal that arrived under the pin decides the status.
pub fn exit(code: i32) -> ! {
    if crate::freq::pin::release().is_some()
        && let Some(sig) = crate::sys::process::interrupted()
    {
        std::process::exit(128 + sig as i32);
    }
    std::process::exit(code)
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
    let on = trace && ftrace::init();
    MARKERS.store(on, std::sync::atomic::Ordering::Relaxed);
    let markers = on.then(|| ftrace::layer().with_filter(LevelFilter::TRACE));
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(markers)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::AggregateMode;

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
        assert_eq!(t.o.files.get("json"), Some("-"));
        assert_eq!(t.rest, vec!["8m", "rd"]);
        let t = T::try_parse_from(["t", "--json=out.json", "8m"]).unwrap();
        assert_eq!(t.o.files.get("json"), Some("out.json"));
    }

    #[test]
    fn defaults_are_the_command_line_defaults() {
        let t = T::try_parse_from(["t"]).unwrap();
        let p = PlacementArgs::default();
        assert_eq!((p.timeout, p.parallel, p.sequential), (120, None, false));
        assert_eq!(p.timeout, t.p.timeout);
        let timing = TimingArgs::default();
        assert_eq!((timing.repetitions, timing.warmup_us), (11, 0));
        assert_eq!(timing.repetitions, t.t.repetitions);
        let o = OutputArgs::default();
        assert_eq!(o.noise_lost, 2.0);
        assert_eq!(o.aggregate, AggregateMode::Cluster);
        assert_eq!(o.files, ResultFiles::default());
    }

    #[test]
    fn the_first_source_in_precedence_chooses() {
        let t = |args: &[&str]| {
            let mut v = vec!["t"];
            v.extend(args);
            T::try_parse_from(v).unwrap().p
        };
        assert_eq!(t(&[]).chosen_by_with(None), None);
        assert_eq!(t(&["-P2"]).chosen_by_with(None), Some(ChosenBy::Parallel));
        let env = Some("UNIQUE");
        assert_eq!(
            t(&["-P2"]).chosen_by_with(env),
            Some(ChosenBy::LmbenchSched)
        );
        let sched = t(&["--sched", "SINGLE", "-P2"]);
        assert_eq!(sched.chosen_by_with(env), Some(ChosenBy::Sched));
        let cpus = t(&["--cpus", "0", "--sched", "SINGLE"]);
        assert_eq!(cpus.chosen_by_with(env), Some(ChosenBy::Cpus));
        assert_eq!(ChosenBy::LmbenchSched.to_string(), "LMBENCH_SCHED");
    }

    #[test]
    fn an_output_is_never_the_program_or_a_protected_input() {
        let me = std::env::current_exe().unwrap();
        let me = me.to_str().unwrap();
        let files = |json: Option<&str>, csv: Option<&str>, md: Option<&str>| {
            ResultFiles::of(
                [("json", json), ("csv", csv), ("md", md)]
                    .into_iter()
                    .filter_map(|(n, v)| Some((n, v?.to_string()))),
            )
        };
        let e = files(Some(me), None, None)
            .check_besides(&Protected::new())
            .unwrap_err();
        assert!(e.0.contains("is the program running"), "{}", e.0);
        let d = std::env::temp_dir().join(format!("benchmp-protect-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let input = d.join("base.json");
        std::fs::write(&input, "{}").unwrap();
        let link = d.join("link.json");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let p = Protected::new().file("an input", &input);
        let e = files(None, Some(link.to_str().unwrap()), None)
            .check_besides(&p)
            .unwrap_err();
        assert!(e.0.contains("is an input"), "{}", e.0);
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "{}");
        let e = files(None, None, Some(link.to_str().unwrap()))
            .check_besides(&p)
            .unwrap_err();
        assert!(e.0.starts_with("--md="), "{}", e.0);
        let new = d.join("new.json");
        files(Some(new.to_str().unwrap()), None, None)
            .check_besides(&p)
            .unwrap();
        // Two formats into one file, or three on stdout, are refused.
        let one = new.to_str().unwrap();
        let e = files(Some(one), None, Some(one))
            .check_besides(&p)
            .unwrap_err();
        assert!(e.0.contains("are one file"), "{}", e.0);
        let e = files(Some("-"), Some("-"), Some("-"))
            .check_besides(&p)
            .unwrap_err();
        assert!(
            e.0.starts_with("--json and --csv and --md cannot all write to stdout"),
            "{}",
            e.0
        );
        std::fs::remove_dir_all(&d).unwrap();
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
