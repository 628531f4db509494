//! A run's end: the report of its measurements, made final (the tool's figures, notes and
//! noise, [`ToolData`]) before it is returned, so a tool writes it as it is and decides its
//! exit status before anything is written. An interrupted run's partial report is made here
//! too.

use crate::cli::OutputArgs;
use crate::host::{Build, Host};
use crate::quality::{MachineState, NoisePolicy, judge};
use crate::report::{Measurement, Quality, Report, ToolData};
use crate::run::Error;
use crate::sys::clock::now_ns;
use crate::timing::Calibration;

use super::Session;

impl<T: ToolData> Session<T> {
    /// Closes the run: machine state after, noise verdict, and the final report: its figures,
    /// notes and noise are the tool's ([`ToolData::figures`], or those given to
    /// [`Session::set_figures`]; [`ToolData::notes`]; [`ToolData::noise`]).
    pub fn finish(self, output: &OutputArgs, extra: Option<T::Extra>) -> Report<T> {
        self.finish_joined(output, extra, Vec::new())
    }

    /// As [`Session::finish`], the measurements being those of `parts`, the finished reports
    /// of sessions this one stood for (lat_mem_rd calibrates each size of a sweep in a session
    /// of its own): their calibration (the first's) and its time (all of theirs), the machine
    /// state after the last, and the noise verdict over all their children. No parts: this
    /// session's measurements.
    pub fn finish_joined(
        self,
        output: &OutputArgs,
        extra: Option<T::Extra>,
        parts: Vec<Report<T>>,
    ) -> Report<T> {
        // Written back before the report, so the report can say it was.
        let pinned = crate::freq::pin::release();
        let mut report = self.report(output, extra, pinned, parts);
        complete(&mut report, self.figures);
        report
    }

    /// An interrupted run's end: the measurements that finished go to the tool's report
    /// files, marked incomplete with the signal and the measurement that was running
    /// ([`crate::export::write_partial`]; nothing for a `benchmp ab` worker, whose driver
    /// keeps its figures); the error to end the run with.
    pub fn interrupted_at(&self, sig: nix::sys::signal::Signal, running: Option<&str>) -> Error {
        if let Some(output) = &self.reports
            && !self.paced()
        {
            let mut report = self.report(output, None, crate::freq::pin::record(), Vec::new());
            report.figures =
                crate::report::default_figures(&report.measurements, Measurement::label);
            report.incomplete = Some(crate::report::Incomplete {
                signal: sig.as_str().to_string(),
                running: running.map(str::to_string),
                measured: self.measurements.len(),
            });
            crate::export::write_partial(&report, output);
        }
        Error::Interrupted(sig)
    }

    /// The report of the measurements so far (or of `parts`, [`Session::finish_joined`]),
    /// their power per unit of work put on and the noise verdict judged once; its figures and
    /// notes are left to the caller.
    fn report(
        &self,
        output: &OutputArgs,
        extra: Option<T::Extra>,
        pinned: Option<crate::freq::pin::PinRecord>,
        parts: Vec<Report<T>>,
    ) -> Report<T> {
        let Own {
            measurements,
            after,
            calibration,
            calibration_ns,
        } = if parts.is_empty() {
            Own::of(self, extra.as_ref())
        } else {
            Own::joined(parts)
        };
        let children: Vec<_> = measurements
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
            measurements,
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
            figures: Vec::new(),
            pinned,
            power_baseline: self.power.as_ref().and_then(|p| p.baseline.clone()),
            extra,
            incomplete: None,
        }
    }
}

/// What a report holds of the session's own measuring (or of the finished reports it
/// joins): its measurements, the machine after them, the calibration and its time.
struct Own<T: ToolData> {
    measurements: Vec<Measurement<T>>,
    after: MachineState,
    calibration: Calibration,
    calibration_ns: u64,
}

impl<T: ToolData> Own<T> {
    /// The session's measurements as the report keeps them: each one's power put per unit of
    /// its work (the tool's, [`ToolData::work`], else its own figures'), sample detail kept
    /// when the tool keeps it ([`ToolData::SAMPLE_DETAIL_KEPT`]).
    fn of(session: &Session<T>, extra: Option<&T::Extra>) -> Own<T> {
        let after = MachineState::capture(&session.topology.root, &session.topology.online());
        let (timing_overhead_ns, timing_overhead_source) = session
            .timing_only
            .clone()
            .unwrap_or((0.0, crate::timing::ValueSource::NotNeeded));
        let calibration = session.calibration.clone().unwrap_or(Calibration {
            enough_us: 0,
            timing_overhead_ns,
            loop_overhead_ns: 0.0,
            clock_resolution_ns: crate::sys::clock::resolution_ns(),
            enough_source: crate::timing::ValueSource::NotNeeded,
            enough_method: crate::timing::EnoughMethod::Given,
            timing_overhead_source,
            loop_overhead_source: crate::timing::ValueSource::NotNeeded,
            measured_ns: 0,
            cache_file: None,
            cache_problem: None,
            cache_written: false,
        });
        let calibration_ns = calibration.measured_ns
            + session
                .measurements
                .iter()
                .map(|m| m.calibration_ns)
                .sum::<u64>();
        let measurements = session
            .measurements
            .iter()
            .zip(&session.operations)
            .map(|(m, &operation)| kept(m, operation, extra, &session.topology))
            .collect();
        Own {
            measurements,
            after,
            calibration,
            calibration_ns,
        }
    }

    /// The finished reports of sessions a joined one stood for: their measurements, the
    /// machine after the last, the first's calibration and all of their calibration time
    /// (`parts` is not empty).
    fn joined(parts: Vec<Report<T>>) -> Own<T> {
        let calibration = parts[0].calibration.clone();
        let calibration_ns = parts.iter().map(|r| r.calibration_ns).sum();
        let after = parts[parts.len() - 1].quality.after.clone();
        Own {
            measurements: parts.into_iter().flat_map(|r| r.measurements).collect(),
            after,
            calibration,
            calibration_ns,
        }
    }
}

/// A measurement as its report keeps it ([`Own::of`]).
fn kept<T: ToolData>(
    m: &Measurement<T>,
    operation: &'static str,
    extra: Option<&T::Extra>,
    topology: &crate::topology::Topology,
) -> Measurement<T> {
    let mut kept = m.clone();
    if let Some(p) = kept.power.as_mut() {
        match extra.and_then(|e| T::work(e, m)) {
            Some((system, clusters)) => p.per_watt(system, &clusters, topology),
            None => {
                let (system, clusters) = super::works(m, operation);
                p.per_watt(system, &clusters, topology);
            }
        }
    }
    if !T::SAMPLE_DETAIL_KEPT {
        for c in &mut kept.children {
            for s in &mut c.samples {
                s.detail = None;
            }
        }
    }
    kept
}

/// Makes `report` the tool's: its figures (`given`, else [`ToolData::figures`]), its notes,
/// and its own noise added to the verdict.
fn complete<T: ToolData>(report: &mut Report<T>, given: Option<Vec<crate::schema::Figure>>) {
    report.figures = given.unwrap_or_else(|| T::figures(report));
    report.quality.notes = T::notes(report);
    let noise = T::noise(report);
    if !noise.is_empty() {
        let verdict = &mut report.quality.verdict;
        verdict.reasons.extend(noise);
        verdict.noisy = true;
    }
    // An emulated CPU's figures are the emulator's whatever the run did: what would make the
    // run noisy is said among the notes, not judged (the report's note says why).
    if report
        .host
        .virtual_cpu
        .as_ref()
        .is_some_and(|v| v.kind == "emulated")
    {
        let verdict = std::mem::take(&mut report.quality.verdict);
        report.quality.notes.extend(
            verdict
                .reasons
                .into_iter()
                .map(|r| format!("not judged as noise on an emulated CPU: {r}")),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{PlacementArgs, TimingArgs};
    use crate::schema::Figure;

    /// A tool whose report names its figure after its tool section and says one note and one
    /// reason of noise of its own.
    #[derive(Debug)]
    struct Judged;

    fn figure(name: &str) -> Figure {
        Figure {
            name: name.into(),
            cpu: None,
            cluster: None,
            unit: "ns".into(),
            better: crate::schema::Better::Lower,
            value: 1.0,
            samples: vec![1.0],
            sizing: Default::default(),
        }
    }

    impl ToolData for Judged {
        type Params = ();
        type Sample = ();
        type Child = ();
        type Extra = String;

        fn figures(report: &Report<Judged>) -> Vec<Figure> {
            vec![figure(report.extra.as_deref().unwrap_or("no extra"))]
        }

        fn notes(report: &Report<Judged>) -> Vec<String> {
            vec![format!("{} measured", report.measurements.len())]
        }

        fn noise(_: &Report<Judged>) -> Vec<String> {
            vec!["the tool's own".into()]
        }
    }

    /// A session that measures nothing: no power source sampled.
    fn session() -> Session<Judged> {
        let mut placement = PlacementArgs::default();
        placement.conditions.power = Some(crate::power::Choice::Off);
        Session::start("judged", &placement, &TimingArgs::default(), None).expect("a session")
    }

    fn names(r: &Report<Judged>) -> Vec<&str> {
        r.figures.iter().map(|f| f.name.as_str()).collect()
    }

    #[test]
    fn on_an_emulated_cpu_noise_is_said_not_judged() {
        let mut r = session().finish(&OutputArgs::default(), Some("cells".into()));
        r.host.virtual_cpu = Some(crate::host::VirtualCpu {
            kind: "emulated".into(),
            evidence: vec!["device tree compatible \"linux,dummy-virt\"".into()],
        });
        r.quality.verdict = crate::quality::RunVerdict::default();
        complete(&mut r, None);
        assert!(!r.quality.verdict.noisy);
        assert!(r.quality.verdict.reasons.is_empty());
        assert!(
            r.quality
                .notes
                .iter()
                .any(|n| n == "not judged as noise on an emulated CPU: the tool's own"),
            "{:?}",
            r.quality.notes
        );
    }

    #[test]
    fn the_report_finish_returns_has_the_tools_figures_notes_and_noise() {
        let r = session().finish(&OutputArgs::default(), Some("cells".into()));
        assert_eq!(names(&r), ["cells"]);
        assert_eq!(r.quality.notes, ["0 measured"]);
        assert!(r.quality.verdict.noisy);
        assert_eq!(
            r.quality.verdict.reasons.last().map(String::as_str),
            Some("the tool's own")
        );
        assert!(r.incomplete.is_none());
    }

    #[test]
    fn figures_made_while_measuring_are_the_reports() {
        let mut s = session();
        s.set_figures(vec![figure("made while measuring")]);
        let r = s.finish(&OutputArgs::default(), Some("cells".into()));
        assert_eq!(names(&r), ["made while measuring"]);
        assert_eq!(r.quality.notes, ["0 measured"]);
    }

    #[test]
    fn a_joined_report_is_judged_by_the_tool_after_joining() {
        let part = session().finish(&OutputArgs::default(), None);
        assert_eq!(names(&part), ["no extra"]);
        let r = session().finish_joined(&OutputArgs::default(), Some("sweep".into()), vec![part]);
        assert_eq!(names(&r), ["sweep"]);
        // The verdict is the joined one's, with the tool's own noise added once.
        let own = r.quality.verdict.reasons.iter();
        assert_eq!(own.filter(|x| *x == "the tool's own").count(), 1);
    }
}
