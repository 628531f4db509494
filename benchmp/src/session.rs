//! A tool run: topology, placement, calibration and machine state gathered once, any number of
//! measurements, then one report and its output. This is the API the tools call.

use std::time::Duration;

use crate::aggregate::{Metric, Rule, aggregate, child_figures};
use crate::cli::{OutputArgs, PlacementArgs, TimingArgs};
use crate::host::{Build, Host};
use crate::quality::{MachineState, NoisePolicy, Overlap, judge};
use crate::report::{Measurement, Quality, Report, ToolData};
use crate::run::Error;
use crate::run::{Benchmark, ChildInfo, Iterations, Nothing, RunConfig, run_beside};
use crate::sched::{
    ChosenBy, LMBENCH_SCHED_ENV, Placement, PlacementError, Policy, ToolDefault, check_cpu,
    parse_policy, place_by_policy, place_on_list, wrap_into_allowed, wrap_warnings,
};
use crate::stats::Pair;
use crate::sys::clock::now_ns;
use crate::timing::{Calibration, CalibrationRequest, calibrate_traced};
use crate::topology::Topology;

/// What to measure and how to turn it into figures; `P` is the tool's parameter type.
#[derive(Debug, Clone)]
pub struct Spec<P> {
    /// Measurement name.
    pub name: String,
    /// Tool-specific parameters, recorded in the report.
    pub params: P,
    /// Sample to figure.
    pub metric: Metric,
    /// Representative sample rule.
    pub rule: Rule,
    /// The tool's own minimum interval, µs (lat_mem_rd: 100 000); the calibrated ENOUGH can
    /// only raise it.
    pub enough_floor_us: u64,
    /// Count sizing.
    pub iterations: Iterations,
    /// Subtract the calibrated loop overhead (lmbench does; fixed-work benchmarks may not).
    pub subtract_loop_overhead: bool,
    /// Share of the loop overhead subtracted per iteration: 1 when an iteration is lmbench's,
    /// less when it is a fraction of lmbench's (lat_mem_rd: 100 loads of lmbench's count).
    pub loop_overhead_share: f64,
    /// What one operation of a latency is, for its energy per operation (`load`: nJ/load);
    /// `op` unless the tool says.
    pub operation: &'static str,
}

impl<P> Spec<P> {
    /// A throughput measurement with lmbench's median rule and a calibrated count.
    pub fn rate(name: &str, per_iteration: f64, unit: &str, params: P) -> Spec<P> {
        Spec {
            name: name.to_string(),
            params,
            metric: Metric::Rate {
                per_iteration,
                unit: unit.to_string(),
            },
            rule: Rule::Median,
            enough_floor_us: 0,
            iterations: Iterations::Calibrate { hint: None },
            subtract_loop_overhead: true,
            loop_overhead_share: 1.0,
            operation: "op",
        }
    }

    /// A latency measurement (ns per operation) with lmbench's minimum rule.
    pub fn latency(name: &str, per_iteration: f64, params: P) -> Spec<P> {
        Spec {
            metric: Metric::Latency {
                per_iteration,
                unit: "ns".into(),
            },
            rule: Rule::Minimum,
            ..Spec::rate(name, 1.0, "ns", params)
        }
    }
}

/// The load children of a measurement ([`Session::measure_loaded`]).
#[derive(Debug, Clone, Copy)]
pub struct Loads<'a> {
    /// CPU of each load child (`None`: unpinned).
    pub cpus: &'a [Option<usize>],
    /// Fail the measurement when a load did not run through its whole window.
    pub required: bool,
}

impl Loads<'_> {
    /// No load children.
    pub const NONE: Loads<'static> = Loads {
        cpus: &[],
        required: false,
    };
}

/// State shared by all measurements of one tool run; `T` names the tool's report data.
#[derive(Debug)]
pub struct Session<T: ToolData> {
    tool: String,
    args: Vec<String>,
    /// Machine topology.
    pub topology: Topology,
    /// Child placement.
    pub placement: Placement,
    /// The CPUs --cpus named, in their order (checked at start).
    named: Option<Vec<usize>>,
    /// What happened to a tool's default CPU (wrapped into the allowed set).
    placement_note: Option<String>,
    calibration: Option<Calibration>,
    /// Clock-read cost when only fixed-count measurements ran (no full calibration needed).
    timing_only: Option<(f64, crate::timing::Source)>,
    calibration_request: CalibrationRequest,
    warmup_us: u64,
    repetitions: usize,
    timeout: Duration,
    sequential: bool,
    before: MachineState,
    conditions: crate::cli::ConditionsArgs,
    started_ns: u64,
    measurements: Vec<Measurement<T>>,
    phases: Vec<crate::report::ParentPhase>,
    /// The power sources sampled beside every measurement (`None`: there are none, and
    /// nothing is sampled).
    power: Option<crate::power::Power>,
    /// From start to finish a stop signal only sets a flag, between measurements too, so an
    /// interrupted run writes what it measured before it ends ([`Session::interrupted_at`]).
    _signals: crate::sys::process::InterruptGuard,
}

impl<T: ToolData> Session<T> {
    /// Reads topology, resolves placement (errors for offline or disallowed CPUs and unknown
    /// policies) and snapshots the machine state. Calibration happens on first need.
    pub fn start(
        tool: &str,
        placement: &PlacementArgs,
        timing: &TimingArgs,
    ) -> Result<Session<T>, Error> {
        Session::start_with_default(tool, placement, timing, None)
    }

    /// As [`Session::start`], with the tool's own CPU used when no option and no
    /// LMBENCH_SCHED chose any ([`PlacementArgs::chosen_by`]); a wrap of it into the allowed
    /// set is told by [`Session::placement_note`].
    pub fn start_with_default(
        tool: &str,
        placement: &PlacementArgs,
        timing: &TimingArgs,
        default: Option<&ToolDefault>,
    ) -> Result<Session<T>, Error> {
        let started_ns = now_ns();
        // ENOUGH, TIMING_O and LOOP_O are read when the calibration is first needed; refuse a
        // bad value now, before a tool has printed or measured anything.
        crate::timing::check_env()?;
        let topology = Topology::detect()?;
        let online = topology.online();
        let allowed = crate::sys::affinity::allowed_cpus().map_err(|source| Error::Sys {
            what: "sched_getaffinity",
            source,
        })?;
        let env = crate::sched::lmbench_sched();
        let (resolved, placement_note) =
            resolve(placement, env.as_deref(), default, &online, allowed)?;
        let conditions = placement.conditions.clone();
        // Installed before the conditions: a stop signal during the power baseline ends the
        // run through the tool's exit, which writes a frequency pin back.
        let signals = crate::sys::process::InterruptGuard::install();
        apply_conditions(&conditions, &topology, &resolved.cpus)?;
        let power = crate::power::Power::open(&conditions, &topology)?;
        let before = MachineState::capture(&topology.root, &online);
        if crate::run::worker::active() {
            crate::run::worker::send(&crate::run::worker::ToDriver::Hello {
                tool: tool.to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
                args: std::env::args().collect(),
            })
            .map_err(|e| match e {
                crate::run::worker::LinkError::Env(_) => Error::DriverEnv(e.to_string()),
                _ => Error::Driver(e.to_string()),
            })?;
        }
        Ok(Session {
            tool: tool.to_string(),
            args: std::env::args().collect(),
            topology,
            placement: resolved,
            named: placement.cpus.as_ref().map(|l| l.0.clone()),
            placement_note,
            calibration: None,
            timing_only: None,
            calibration_request: CalibrationRequest {
                enough_us: timing.enough,
                cache: timing.cache_file()?,
                recalibrate: timing.recalibrate,
            },
            warmup_us: timing.warmup_us,
            repetitions: timing.repetitions,
            timeout: Duration::from_secs(placement.timeout),
            sequential: placement.sequential,
            before,
            conditions,
            started_ns,
            measurements: Vec::new(),
            phases: Vec::new(),
            power,
            _signals: signals,
        })
    }

    /// The note of [`Session::start_with_default`]: the tool's default CPU was outside the
    /// allowed set and wrapped into it.
    pub fn placement_note(&self) -> Option<&str> {
        self.placement_note.as_deref()
    }

    /// The CPUs a tool that places each measurement itself ([`Session::measure_on`]) works
    /// over: those --cpus named, in their order, else every allowed CPU. A policy places
    /// children; it names no set, so it does not narrow this one.
    pub fn cpu_set(&self) -> Vec<usize> {
        self.named
            .clone()
            .unwrap_or_else(|| self.placement.allowed.clone())
    }

    /// Number of children per measurement.
    pub fn parallel(&self) -> usize {
        self.placement.cpus.len()
    }

    /// Repetitions per child.
    pub fn repetitions(&self) -> usize {
        self.repetitions
    }

    /// Changes the repetitions for the following measurements.
    pub fn set_repetitions(&mut self, n: usize) {
        self.repetitions = n.max(1);
    }

    /// Raises the hang deadline (for benchmarks whose single interval is long by design).
    pub fn set_min_timeout(&mut self, t: Duration) {
        self.timeout = self.timeout.max(t);
    }

    /// The calibration, measuring (or loading) it on first use.
    pub fn calibration(&mut self) -> Result<&Calibration, Error> {
        if self.calibration.is_none() {
            let (calibration, start_ns, end_ns) = calibrate_traced(&self.calibration_request)?;
            self.calibration = Some(calibration);
            self.phases.push(crate::report::ParentPhase {
                name: "calibrate".into(),
                label: None,
                start_ns,
                end_ns,
            });
        }
        Ok(self.calibration.as_ref().expect("set above"))
    }

    /// Worker mode: tells `benchmp ab` every measurement (name, parameters) this run will
    /// make, in order, so two commands whose figures differ are refused before any pair.
    pub fn plan(
        &self,
        measurements: impl IntoIterator<Item = (String, T::Params)>,
    ) -> Result<(), Error> {
        use crate::run::worker::{Planned, active, announce_plan};
        if !active() {
            return Ok(());
        }
        let list = measurements
            .into_iter()
            .map(|(measurement, p)| Planned {
                measurement,
                params: serde_json::to_value(&p).unwrap_or_default(),
            })
            .collect();
        announce_plan(list).map_err(|e| Error::Driver(e.to_string()))
    }

    /// Measurements so far.
    pub fn measurements(&self) -> &[Measurement<T>] {
        &self.measurements
    }

    /// Runs one measurement on all children and records it.
    pub fn measure<B, F>(
        &mut self,
        spec: Spec<T::Params>,
        make: F,
    ) -> Result<&Measurement<T>, Error>
    where
        B: Benchmark<Sample = T::Sample, Child = T::Child>,
        F: FnMut(&ChildInfo) -> anyhow::Result<B>,
    {
        self.measure_loaded(spec, make, Loads::NONE, |_: &ChildInfo| {
            Ok(crate::run::parent_idle())
        })
    }

    /// Runs one measurement as [`Session::measure_loaded`] with its measuring children pinned
    /// to `cpus` instead of the session's placement (one pair of CPUs after another, a chaser
    /// apart from its loads). Every CPU, the loads' too, must be online and allowed; the
    /// session's placement and its record in the report stay as resolved.
    pub fn measure_on<B, F, L, G>(
        &mut self,
        cpus: &[usize],
        spec: Spec<T::Params>,
        make: F,
        loads: Loads<'_>,
        make_load: G,
    ) -> Result<&Measurement<T>, Error>
    where
        B: Benchmark<Sample = T::Sample, Child = T::Child>,
        F: FnMut(&ChildInfo) -> anyhow::Result<B>,
        L: Benchmark,
        G: FnMut(&ChildInfo) -> anyhow::Result<L>,
    {
        let online = self.topology.online();
        for &c in cpus.iter().chain(loads.cpus.iter().flatten()) {
            check_cpu(c, &online, &self.placement.allowed)?;
        }
        let placed = cpus.iter().map(|&c| Some(c)).collect();
        self.measure_placed(placed, spec, make, loads, make_load)
    }

    /// Runs one measurement with load children on `load_cpus` besides the measuring ones:
    /// each builds its benchmark with `make_load` and runs it without pause from before the
    /// first timed interval until after the last; their results over the measuring window
    /// are recorded with the measurement. With `loads.required`, a load that did not run
    /// through the whole window (stopped, or starved) fails the measurement: a figure
    /// "under load" must have had its load.
    pub fn measure_loaded<B, F, L, G>(
        &mut self,
        spec: Spec<T::Params>,
        make: F,
        loads: Loads<'_>,
        make_load: G,
    ) -> Result<&Measurement<T>, Error>
    where
        B: Benchmark<Sample = T::Sample, Child = T::Child>,
        F: FnMut(&ChildInfo) -> anyhow::Result<B>,
        L: Benchmark,
        G: FnMut(&ChildInfo) -> anyhow::Result<L>,
    {
        let placed = self.placement.cpus.clone();
        self.measure_placed(placed, spec, make, loads, make_load)
    }

    /// [`Session::measure_loaded`] with the measuring children on `placed`.
    fn measure_placed<B, F, L, G>(
        &mut self,
        placed: Vec<Option<usize>>,
        spec: Spec<T::Params>,
        make: F,
        loads: Loads<'_>,
        make_load: G,
    ) -> Result<&Measurement<T>, Error>
    where
        B: Benchmark<Sample = T::Sample, Child = T::Child>,
        F: FnMut(&ChildInfo) -> anyhow::Result<B>,
        L: Benchmark,
        G: FnMut(&ChildInfo) -> anyhow::Result<L>,
    {
        if let Some(sig) = crate::sys::process::interrupted() {
            // Stopped between measurements: what finished is kept, this one never started.
            return Err(self.interrupted_at(sig, None));
        }
        let (enough_us, timing_overhead_ns, loop_overhead_ns) = self.interval_for(&spec)?;
        let mut cfg = RunConfig {
            label: spec.name.clone(),
            placement: placed,
            warmup_us: self.warmup_us,
            repetitions: self.repetitions,
            enough_ns: enough_us * 1000,
            timing_overhead_ns,
            loop_overhead_ns,
            iterations: spec.iterations,
            child_timeout: self.timeout,
            sequential: self.sequential,
            loads: loads.cpus.to_vec(),
            paced: None,
            counters: self
                .conditions
                .counters
                .as_ref()
                .map(|c| c.0.clone())
                .unwrap_or_default(),
            sysfs: self.topology.root.clone(),
        };
        if crate::run::worker::active() {
            let params = serde_json::to_value(&spec.params).unwrap_or_default();
            pace(&mut cfg, &spec.metric, params);
        }
        let cool_down = match self.conditions.cool_down {
            Some(limit) => Some(crate::quality::cool_down(
                &self.topology.root,
                limit,
                Duration::from_secs(self.conditions.cool_down_timeout),
            )?),
            None => None,
        };
        let measured: Vec<Option<usize>> =
            cfg.placement.iter().chain(&cfg.loads).copied().collect();
        let mut window = self.power.as_mut().map(|p| p.window(measured));
        let ran = match window.as_mut() {
            Some(w) => run_beside(&cfg, make, make_load, w),
            None => run_beside(&cfg, make, make_load, &mut Nothing),
        };
        let power = window.map(crate::power::sampler::Window::finish);
        let ran = match ran {
            Err(Error::Interrupted(sig)) => return Err(self.interrupted_at(sig, Some(&spec.name))),
            other => other?,
        };
        let power = power.transpose()?.flatten();
        // Under benchmp ab a load runs only during its side's repetitions, by design.
        let required = loads.required && cfg.paced.is_none();
        if let Some(l) = ran.loads.iter().find(|l| required && !l.ran_through) {
            return Err(Error::LoadNotRunning {
                measurement: spec.name,
                load: Box::new(l.clone()),
            });
        }
        self.phases.push(crate::report::ParentPhase {
            name: "run".into(),
            label: Some(spec.name.clone()),
            start_ns: ran.start_ns,
            end_ns: ran.end_ns,
        });
        let operation = spec.operation;
        let mut m = self.record(spec, enough_us, ran)?;
        m.cool_down = cool_down;
        if let Some(mut p) = power {
            let (system, clusters) = works(&m, operation);
            p.per_watt(system, &clusters, &self.topology);
            m.power = Some(p);
        }
        self.measurements.push(m);
        Ok(self.measurements.last().expect("pushed above"))
    }

    /// The interval floor (µs), clock-read cost and loop cost (ns) a measurement runs with.
    /// A fixed-count measurement without loop-overhead subtraction needs only the clock-read
    /// cost: it does not pay for (or depend on) the interval calibration.
    fn interval_for(&mut self, spec: &Spec<T::Params>) -> Result<(u64, f64, f64), Error> {
        let needs_interval = matches!(spec.iterations, Iterations::Calibrate { .. });
        if !needs_interval && !spec.subtract_loop_overhead && self.calibration.is_none() {
            let t = match self.timing_only {
                Some((t, _)) => t,
                None => {
                    let (t, source) = crate::timing::timing_overhead_only()?;
                    self.timing_only = Some((t, source));
                    t
                }
            };
            return Ok((0, t, 0.0));
        }
        let cal = self.calibration()?.clone();
        let enough = if needs_interval {
            cal.enough_us.max(spec.enough_floor_us)
        } else {
            0
        };
        let lo = if spec.subtract_loop_overhead {
            cal.loop_overhead_ns * spec.loop_overhead_share
        } else {
            0.0
        };
        Ok((enough, cal.timing_overhead_ns, lo))
    }

    /// The measurement of a finished run: per-child and system figures, after checking that
    /// the children ran together.
    fn record(
        &self,
        spec: Spec<T::Params>,
        enough_us: u64,
        ran: crate::run::Ran<T::Sample, T::Child>,
    ) -> Result<Measurement<T>, Error> {
        let children = ran.children;
        let overlap = Overlap::of(&children, self.sequential);
        if !overlap.together {
            return Err(Error::NotTogether {
                measurement: spec.name,
                overlap,
            });
        }
        let per_child: Vec<(usize, Option<usize>, Vec<Pair>)> = children
            .iter()
            .map(|c| (c.index, c.cpu_for_topology(), c.pairs().collect()))
            .collect();
        let figures = child_figures(&per_child, &spec.metric, spec.rule, &self.topology);
        let all: Vec<Pair> = per_child
            .iter()
            .flat_map(|(_, _, p)| p.iter().copied())
            .collect();
        let aggregate = aggregate(&figures, &all, &spec.metric, spec.rule, self.sequential);
        Ok(Measurement {
            name: spec.name,
            params: spec.params,
            metric: spec.metric,
            rule: spec.rule,
            enough_us,
            figures,
            aggregate,
            calibration_ns: children.iter().map(|c| c.calibration_ns).max().unwrap_or(0),
            children,
            wall_ns: ran.end_ns - ran.start_ns,
            overlap,
            loads: ran.loads,
            cool_down: None,
            power: None,
        })
    }

    /// Closes the run: machine state after, noise verdict, and the report.
    pub fn finish(self, output: &OutputArgs, extra: Option<T::Extra>) -> Report<T> {
        // Written back before the report, so the report can say it was.
        let pinned = crate::freq::pin::release();
        let mut report = self.report(output, extra);
        report.pinned = pinned;
        report
    }

    /// An interrupted run's end: the measurements that finished go to the tool's report
    /// files, marked incomplete with the signal and the measurement that was running
    /// ([`crate::export::write_partial`]; nothing for a `benchmp ab` worker, whose driver
    /// keeps its figures); the error to end the run with.
    pub fn interrupted_at(&self, sig: nix::sys::signal::Signal, running: Option<&str>) -> Error {
        if let Some(output) = crate::cli::partial_target()
            && !crate::run::worker::active()
        {
            let mut report = self.report(&output, None);
            report.incomplete = Some(crate::report::Incomplete {
                signal: sig.as_str().to_string(),
                running: running.map(str::to_string),
                measured: self.measurements.len(),
            });
            crate::export::write_partial(&report, &output);
        }
        Error::Interrupted(sig)
    }

    /// The report of the measurements so far.
    fn report(&self, output: &OutputArgs, extra: Option<T::Extra>) -> Report<T> {
        let after = MachineState::capture(&self.topology.root, &self.topology.online());
        let children: Vec<_> = self
            .measurements
            .iter()
            .flat_map(|m| m.children.iter().cloned())
            .collect();
        let verdict = judge(
            &children,
            &self.before,
            &after,
            &NoisePolicy {
                max_lost_pct: output.noise_lost,
                ..NoisePolicy::default()
            },
        );
        let (timing_overhead_ns, timing_overhead_source) = self
            .timing_only
            .clone()
            .unwrap_or((0.0, crate::timing::Source::NotNeeded));
        let calibration = self.calibration.clone().unwrap_or(Calibration {
            enough_us: 0,
            timing_overhead_ns,
            loop_overhead_ns: 0.0,
            clock_resolution_ns: crate::sys::clock::resolution_ns(),
            enough_source: crate::timing::Source::NotNeeded,
            enough_method: crate::timing::EnoughMethod::Given,
            timing_overhead_source,
            loop_overhead_source: crate::timing::Source::NotNeeded,
            measured_ns: 0,
            cache_file: None,
        });
        let calibration_ns = calibration.measured_ns
            + self
                .measurements
                .iter()
                .map(|m| m.calibration_ns)
                .sum::<u64>();
        let figures = crate::figure::default_figures(&self.measurements, |m| m.name.clone());
        Report {
            tool: self.tool.clone(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            args: self.args.clone(),
            host: Host::current(),
            build: Build::current(),
            topology: self.topology.clone(),
            calibration,
            placement: self.placement.clone(),
            aggregate_mode: output.aggregate,
            measurements: self.measurements.clone(),
            quality: Quality {
                before: self.before.clone(),
                after,
                verdict,
                notes: Vec::new(),
            },
            wall_ns: now_ns() - self.started_ns,
            calibration_ns,
            pid: std::process::id() as i32,
            phases: self.phases.clone(),
            figures,
            pinned: crate::freq::pin::record(),
            power_baseline: self.power.as_ref().and_then(|p| p.baseline.clone()),
            extra,
            incomplete: None,
        }
    }
}

/// The placement `p` asks for, in [`PlacementArgs::chosen_by`]'s precedence (`lmbench_sched`:
/// the variable's value), else the tool's default CPU, else UNIQUE; with the note of a
/// default CPU wrapped into the allowed set.
fn resolve(
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

/// Checks and applies the run conditions before the machine state is captured: counters the
/// kernel refuses and a missing thermal zone are exit status 3 before anything runs, and a
/// frequency pin is in force from here until [`Session::finish`] or the tool's exit.
fn apply_conditions(
    c: &crate::cli::ConditionsArgs,
    topology: &Topology,
    cpus: &[Option<usize>],
) -> Result<(), Error> {
    if c.counters.is_some() && crate::run::worker::active() {
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

/// The work of a measurement's figures, to put per watt: the system figure and each
/// cluster's (a throughput's total, a latency's mean with the children that ran at once).
pub fn works<'a, T: ToolData>(
    m: &'a Measurement<T>,
    operation: &'static str,
) -> (crate::power::Work<'a>, Vec<(usize, crate::power::Work<'a>)>) {
    use crate::power::Work;
    let unit = m.metric.unit();
    let together = |n: usize| if m.overlap.sequential { 1.0 } else { n as f64 };
    let work = |value: f64, children: usize| {
        if m.metric.is_rate() {
            Work::Rate { value, unit }
        } else {
            Work::Latency {
                ns: value,
                concurrent: together(children),
                op: operation,
            }
        }
    };
    let system = work(m.aggregate.cluster, m.children.len());
    let clusters = m
        .aggregate
        .per_cluster
        .iter()
        .map(|c| {
            let value = if m.metric.is_rate() { c.total } else { c.mean };
            (c.cluster, work(value, c.children))
        })
        .collect();
    (system, clusters)
}

/// Makes a measurement a `benchmp ab` worker's: every child sizes its count to the driver's
/// repetition length (fixed counts too: the driver shares one count between both builds) and
/// times one repetition per step. Load children run only during their side's repetitions.
fn pace(cfg: &mut RunConfig, metric: &Metric, params: serde_json::Value) {
    use crate::run::worker;
    cfg.iterations = Iterations::Calibrate { hint: None };
    cfg.enough_ns = worker::rep_ns();
    cfg.warmup_us = 0;
    cfg.sequential = false;
    cfg.paced = Some(crate::run::Paced {
        metric: metric.clone(),
        params,
    });
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
}
