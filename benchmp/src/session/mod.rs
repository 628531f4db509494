//! A tool run: topology, placement, calibration and machine state gathered once, any number of
//! measurements, then one report and its output. This is the API the tools call.

use std::time::Duration;

use crate::aggregate::{Rule, aggregate, child_figures};
use crate::beside::Nothing;
use crate::cli::{OutputArgs, PlacementArgs, TimingArgs};
use crate::quality::{MachineState, Overlap};
use crate::report::{Measurement, ToolData};
use crate::run::Error;
use crate::run::worker::Driver;
use crate::run::{Benchmark, BuildError, ChildInfo, Iterations, Make, RunConfig, run_beside};
use crate::sched::{Placement, ToolDefault, check_cpu};
use crate::schema::{Figure, Metric, Pair};
use crate::sys::clock::now_ns;
use crate::timing::{Calibration, CalibrationRequest, calibrate_traced};
use crate::topology::Topology;

mod finish;
mod place;

use place::{apply_conditions, resolve};

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

/// The load children of a measurement ([`Session::measure_on`]).
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
    timing_only: Option<(f64, crate::timing::ValueSource)>,
    calibration_request: CalibrationRequest,
    warmup_us: u64,
    repetitions: usize,
    timeout: Duration,
    sequential: bool,
    before: MachineState,
    conditions: crate::cli::ConditionsArgs,
    started_ns: u64,
    measurements: Vec<Measurement<T>>,
    /// What one operation of each measurement's latency is ([`Spec::operation`]), for its
    /// energy per operation when the report is made.
    operations: Vec<&'static str>,
    phases: Vec<crate::report::ParentPhase>,
    /// The power sources sampled beside every measurement (`None`: there are none, and
    /// nothing is sampled).
    power: Option<crate::power::Power>,
    /// Set when this run is a `benchmp ab` worker's ([`PlacementArgs::worker`]): the driver
    /// paces its measurements.
    driver: Option<Driver>,
    /// The figures the tool made itself while measuring ([`Session::set_figures`]).
    figures: Option<Vec<Figure>>,
    /// The tool's report files, where an interrupted run leaves what it measured
    /// ([`Session::interrupted_at`]; `None`: the tool writes no partial report).
    reports: Option<OutputArgs>,
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
        reports: Option<&OutputArgs>,
    ) -> Result<Session<T>, Error> {
        Session::start_with_default(tool, placement, timing, reports, None)
    }

    /// As [`Session::start`], with the tool's own CPU used when no option and no
    /// LMBENCH_SCHED chose any ([`PlacementArgs::chosen_by`]); a wrap of it into the allowed
    /// set is told by [`Session::placement_note`].
    pub fn start_with_default(
        tool: &str,
        placement: &PlacementArgs,
        timing: &TimingArgs,
        reports: Option<&OutputArgs>,
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
        let paced = placement.worker.is_some();
        apply_conditions(&conditions, &topology, &resolved.cpus, paced)?;
        let power = crate::power::Power::open(&conditions.power_request(paced), &topology)?;
        let before = MachineState::capture(&topology.root, &online);
        let driver = match placement.worker {
            Some(mode) => Some(Driver::join(mode, tool)?),
            None => None,
        };
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
            operations: Vec::new(),
            phases: Vec::new(),
            power,
            driver,
            figures: None,
            reports: reports.cloned(),
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
        let Some(driver) = &self.driver else {
            return Ok(());
        };
        let list = measurements
            .into_iter()
            .map(|(measurement, p)| crate::run::worker::Planned {
                measurement,
                sizing: Some(T::sizing(&p)),
                params: serde_json::to_value(&p).unwrap_or_default(),
            })
            .collect();
        driver.announce(list)
    }

    /// Measurements so far.
    pub fn measurements(&self) -> &[Measurement<T>] {
        &self.measurements
    }

    /// The figures of the report, made by the tool while it measured (from what the report
    /// does not keep: dto's per-cell analyses), in place of [`ToolData::figures`].
    pub fn set_figures(&mut self, figures: Vec<Figure>) {
        self.figures = Some(figures);
    }

    /// True when `benchmp ab` paces this run (it is one side's worker): the driver sizes the
    /// counts and times the repetitions, so a tool sizes nothing of its own and runs each
    /// measurement once.
    pub fn paced(&self) -> bool {
        self.driver.is_some()
    }

    /// Runs one measurement on all children and records it.
    pub fn measure<B>(
        &mut self,
        spec: Spec<T::Params>,
        mut make: impl Make<B>,
    ) -> Result<&Measurement<T>, Error>
    where
        B: Benchmark<Sample = T::Sample, Child = T::Child>,
    {
        let placed = self.placement.cpus.clone();
        let mut idle = |_: &ChildInfo| Ok(crate::run::parent_idle());
        self.measure_placed(placed, spec, &mut make, Loads::NONE, &mut idle)
    }

    /// Runs one measurement with load children on `loads.cpus` besides the measuring ones,
    /// which run on `on` (one pair of CPUs after another, a chaser apart from its loads) or,
    /// with `None`, on the session's placement. Each load builds its benchmark with
    /// `make_load` and runs it without pause from before the first timed interval until after
    /// the last; their results over the measuring window are recorded with the measurement.
    /// With `loads.required`, a load that did not run through the whole window (stopped, or
    /// starved) fails the measurement: a figure "under load" must have had its load. Every
    /// CPU given must be online and allowed; the session's placement and its record in the
    /// report stay as resolved.
    pub fn measure_on<B, L: Benchmark>(
        &mut self,
        on: Option<&[usize]>,
        spec: Spec<T::Params>,
        mut make: impl Make<B>,
        loads: Loads<'_>,
        mut make_load: impl Make<L>,
    ) -> Result<&Measurement<T>, Error>
    where
        B: Benchmark<Sample = T::Sample, Child = T::Child>,
    {
        let online = self.topology.online();
        for &c in on.into_iter().flatten().chain(loads.cpus.iter().flatten()) {
            check_cpu(c, &online, &self.placement.allowed)?;
        }
        let placed = match on {
            Some(cpus) => cpus.iter().map(|&c| Some(c)).collect(),
            None => self.placement.cpus.clone(),
        };
        self.measure_placed(placed, spec, &mut make, loads, &mut make_load)
    }

    /// A measurement of [`Session::measure_on`] with the measuring children on `placed`:
    /// the one place that runs and records one.
    fn measure_placed<B, L: Benchmark>(
        &mut self,
        placed: Vec<Option<usize>>,
        spec: Spec<T::Params>,
        make: &mut dyn FnMut(&ChildInfo) -> Result<B, BuildError>,
        loads: Loads<'_>,
        make_load: &mut dyn FnMut(&ChildInfo) -> Result<L, BuildError>,
    ) -> Result<&Measurement<T>, Error>
    where
        B: Benchmark<Sample = T::Sample, Child = T::Child>,
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
        if let Some(driver) = &self.driver {
            driver.pace(
                &mut cfg,
                crate::run::Paced {
                    metric: spec.metric.clone(),
                    params: serde_json::to_value(&spec.params).unwrap_or_default(),
                    sizing: T::sizing(&spec.params),
                },
            );
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
        // A run whose children ran apart (another task held one child's CPU for part of it)
        // is run again, up to ATTEMPTS times; `record` refuses it when the last ran apart too.
        let mut attempts = 0;
        let (ran, power) = loop {
            attempts += 1;
            let mut window = self.power.as_mut().map(|p| p.window(measured.clone()));
            let ran = match window.as_mut() {
                Some(w) => run_beside(&cfg, &mut *make, &mut *make_load, w),
                None => run_beside(&cfg, &mut *make, &mut *make_load, &mut Nothing),
            };
            let power = window.map(crate::power::sampler::PowerWindow::finish);
            let ran = match ran {
                Err(Error::Interrupted(sig)) => {
                    return Err(self.interrupted_at(sig, Some(&spec.name)));
                }
                other => other?,
            };
            let power = power.flatten();
            // Each attempt is a run of the parent's, as its trace slices show.
            self.phases.push(crate::report::ParentPhase {
                name: "run".into(),
                label: Some(spec.name.clone()),
                start_ns: ran.start_ns,
                end_ns: ran.end_ns,
            });
            let apart = !Overlap::of(&ran.children, self.sequential, self.paced()).together;
            if !apart || attempts >= crate::run::overlap::ATTEMPTS {
                break (ran, power);
            }
        };
        // Under benchmp ab a load runs only during its side's repetitions, by design.
        let required = loads.required && cfg.paced.is_none();
        if let Some(l) = ran.loads.iter().find(|l| required && !l.ran_through) {
            return Err(Error::LoadNotRunning {
                measurement: spec.name,
                load: Box::new(l.clone()),
            });
        }
        let operation = spec.operation;
        let mut m = self.record(spec, enough_us, ran, attempts)?;
        m.cool_down = cool_down;
        // Its figures per watt are put on when the report is made (the tool may name the
        // work, [`ToolData::work`]).
        m.power = power;
        self.measurements.push(m);
        self.operations.push(operation);
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

    /// The measurement of a finished run, the last of `attempts`: per-child and system
    /// figures, after checking that the children ran together.
    fn record(
        &self,
        spec: Spec<T::Params>,
        enough_us: u64,
        ran: crate::run::Ran<T::Sample, T::Child>,
        attempts: u32,
    ) -> Result<Measurement<T>, Error> {
        let children = ran.children;
        let overlap = Overlap {
            attempts,
            ..Overlap::of(&children, self.sequential, self.paced())
        };
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
            sizing: T::sizing(&spec.params),
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
