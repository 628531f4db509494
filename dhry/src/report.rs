//! The report of one measurement and its exporters: the reference's text (default), JSON and
//! CSV. Exporters are pure functions of [`Report`]; field names carry their units.

use std::fmt::Write as _;

use serde::Serialize;

use crate::freq::{ClockSource, CoreClock};
use crate::measure::Measurement;
use crate::{
    FinalValues, Mismatch, REFERENCE_MIN_SECONDS, dhrystones_per_second, dmips, dmips_per_mhz,
    microseconds_per_run,
};

/// How this binary was compiled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BuildInfo {
    /// `rustc --version` of the compiler.
    pub compiler: String,
    /// Target triple.
    pub target: String,
    /// Cargo profile (`release` or `debug`).
    pub profile: String,
    /// Optimisation level.
    pub opt_level: String,
    /// Extra `RUSTFLAGS`, if any.
    pub rustflags: String,
    /// How the two packs were compiled (see README, "Ground rules").
    pub compilation_model: String,
}

impl BuildInfo {
    /// The settings recorded when this crate was built.
    pub fn current() -> Self {
        BuildInfo {
            compiler: env!("DHRY_RUSTC_VERSION").to_string(),
            target: env!("DHRY_TARGET").to_string(),
            profile: env!("DHRY_PROFILE").to_string(),
            opt_level: env!("DHRY_OPT_LEVEL").to_string(),
            rustflags: env!("DHRY_RUSTFLAGS").to_string(),
            compilation_model: "Pack_1 and Pack_2 in one crate (one optimisation unit); \
                                no procedure merging (#[inline(never)])"
                .to_string(),
        }
    }
}

/// Outcome of the section-5 check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// True when every checked variable has its expected value.
    pub passed: bool,
    /// The variables that differ.
    pub mismatches: Vec<Mismatch>,
}

/// Everything one single-core measurement reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Always "dhrystone".
    pub benchmark: String,
    /// Dhrystone version reproduced ("2.1").
    pub version: String,
    /// Runs through Dhrystone in the timed loop.
    pub runs: u64,
    /// Monotonic-clock time of the loop.
    pub elapsed_ns: u64,
    /// The thread's CPU time over the loop.
    pub thread_cpu_ns: u64,
    /// Thread CPU time as a percentage of elapsed time.
    pub cpu_share_percent: f64,
    /// CPU at the start of the loop, if known.
    pub cpu_start: Option<usize>,
    /// CPU at the end of the loop, if known.
    pub cpu_end: Option<usize>,
    /// CPUs the thread was allowed on (1 when pinned), if known.
    pub allowed_cpus: Option<usize>,
    /// Timed loops made to reach the target time.
    pub attempts: u32,
    /// Microseconds for one run through Dhrystone.
    pub us_per_run: f64,
    /// Dhrystones per second.
    pub dhrystones_per_s: f64,
    /// DMIPS (Dhrystones per second / 1757).
    pub dmips: f64,
    /// The core clock used for DMIPS/MHz, if any.
    pub clock: Option<CoreClock>,
    /// DMIPS per MHz, when a clock is known.
    pub dmips_per_mhz: Option<f64>,
    /// True when `dmips_per_mhz` rests on an estimated clock.
    pub dmips_per_mhz_is_estimate: bool,
    /// The loop lasted at least the 2 s the reference requires.
    pub reference_min_time_met: bool,
    /// The section-5 check.
    pub verification: Verification,
    /// The printed final values.
    pub final_values: FinalValues,
    /// How the binary was compiled.
    pub build: BuildInfo,
}

impl Report {
    /// Builds the report of a measurement, with an optional core clock.
    pub fn new(m: &Measurement, clock: Option<CoreClock>, build: BuildInfo) -> Report {
        let s = &m.sample;
        let dps = dhrystones_per_second(s.runs, s.elapsed_ns);
        let dmips = dmips(dps);
        let mismatches = m.dhrystone.verify().err().unwrap_or_default();
        Report {
            benchmark: "dhrystone".to_string(),
            version: "2.1".to_string(),
            runs: s.runs,
            elapsed_ns: s.elapsed_ns,
            thread_cpu_ns: s.thread_cpu_ns,
            cpu_share_percent: s.cpu_share_percent(),
            cpu_start: s.cpu_start,
            cpu_end: s.cpu_end,
            allowed_cpus: m.allowed_cpus,
            attempts: m.attempts,
            us_per_run: microseconds_per_run(s.runs, s.elapsed_ns),
            dhrystones_per_s: dps,
            dmips,
            dmips_per_mhz: clock.as_ref().map(|c| dmips_per_mhz(dmips, c.mhz)),
            dmips_per_mhz_is_estimate: clock.as_ref().is_some_and(CoreClock::is_estimate),
            clock,
            reference_min_time_met: s.elapsed_ns as f64 >= REFERENCE_MIN_SECONDS * 1e9,
            verification: Verification {
                passed: mismatches.is_empty(),
                mismatches,
            },
            final_values: m.dhrystone.final_values(),
            build,
        }
    }
}

/// Width of the reference's result labels.
const LABEL: usize = 44;

/// The reference's text (v2.1 layout: final values with "should be" lines, then the result
/// lines), followed by this port's figures.
pub fn render_text(r: &Report) -> String {
    let v = &r.final_values;
    let mut o = String::new();
    let mut line = |s: &str| {
        o.push_str(s);
        o.push('\n');
    };
    line("");
    line("Dhrystone Benchmark, Version 2.1 (Language: Rust)");
    line("");
    line("Program compiled without 'register' attribute");
    line("");
    line(&format!(
        "Execution starts, {} runs through Dhrystone",
        r.runs
    ));
    line("Execution ends");
    line("");
    line("Final values of the variables used in the benchmark:");
    line("");
    let pair = |name: &str, value: &dyn std::fmt::Display, should: &dyn std::fmt::Display| {
        format!("{name:<21}{value}\n        should be:   {should}")
    };
    line(&pair("Int_Glob:", &v.int_glob, &5));
    line(&pair("Bool_Glob:", &v.bool_glob, &1));
    line(&pair("Ch_1_Glob:", &v.ch_1_glob, &'A'));
    line(&pair("Ch_2_Glob:", &v.ch_2_glob, &'B'));
    line(&pair("Arr_1_Glob[8]:", &v.arr_1_glob_8, &7));
    line(&pair(
        "Arr_2_Glob[8][7]:",
        &v.arr_2_glob_8_7,
        &"Number_Of_Runs + 10",
    ));
    for (title, rec, enum_should, int_should, same) in [
        ("Ptr_Glob->", &v.ptr_glob, 2, 17, ""),
        (
            "Next_Ptr_Glob->",
            &v.next_ptr_glob,
            1,
            18,
            ", same as above",
        ),
    ] {
        line(title);
        line(&pair(
            "  Ptr_Comp:",
            &rec.ptr_comp,
            &format!("(implementation-dependent){same}"),
        ));
        line(&pair("  Discr:", &rec.discr, &0));
        line(&pair("  Enum_Comp:", &rec.enum_comp, &enum_should));
        line(&pair("  Int_Comp:", &rec.int_comp, &int_should));
        line(&pair(
            "  Str_Comp:",
            &rec.str_comp,
            &"DHRYSTONE PROGRAM, SOME STRING",
        ));
    }
    line(&pair("Int_1_Loc:", &v.int_1_loc, &5));
    line(&pair("Int_2_Loc:", &v.int_2_loc, &13));
    line(&pair("Int_3_Loc:", &v.int_3_loc, &7));
    line(&pair("Enum_Loc:", &v.enum_loc, &1));
    line(&pair(
        "Str_1_Loc:",
        &v.str_1_loc,
        &"DHRYSTONE PROGRAM, 1'ST STRING",
    ));
    line(&pair(
        "Str_2_Loc:",
        &v.str_2_loc,
        &"DHRYSTONE PROGRAM, 2'ND STRING",
    ));
    line("");
    if r.reference_min_time_met {
        line(&format!(
            "{:<LABEL$}{:6.1} ",
            "Microseconds for one run through Dhrystone: ", r.us_per_run
        ));
        line(&format!(
            "{:<LABEL$}{:6.1} ",
            "Dhrystones per Second:", r.dhrystones_per_s
        ));
    } else {
        line("Measured time too small to obtain meaningful results");
        line("Please increase number of runs");
    }
    line("");

    line("socbench figures (see dhry/README.md):");
    let field = |label: &str, value: String| format!("{label:<LABEL$}{value}");
    line(&field(
        "Microseconds for one run through Dhrystone:",
        format!("{:.4}", r.us_per_run),
    ));
    line(&field(
        "Dhrystones per Second:",
        format!("{:.0}", r.dhrystones_per_s),
    ));
    line(&field(
        "DMIPS (Dhrystones per Second / 1757):",
        format!("{:.1}", r.dmips),
    ));
    line(&field("DMIPS/MHz:", dmips_per_mhz_text(r)));
    line(&field("Timed loop:", loop_text(r)));
    line(&field(
        "Compiled with:",
        format!(
            "{}, {} profile, opt-level {}, {}{}",
            r.build.compiler,
            r.build.profile,
            r.build.opt_level,
            r.build.target,
            if r.build.rustflags.is_empty() {
                String::new()
            } else {
                format!(", RUSTFLAGS {}", r.build.rustflags)
            }
        ),
    ));
    line(&field(
        "Compilation model:",
        r.build.compilation_model.clone(),
    ));
    line(&field(
        "Verification:",
        if r.verification.passed {
            "passed (every checked variable has its expected value)".to_string()
        } else {
            format!(
                "FAILED ({} checked variable(s) differ)",
                r.verification.mismatches.len()
            )
        },
    ));
    o
}

fn dmips_per_mhz_text(r: &Report) -> String {
    match (&r.clock, r.dmips_per_mhz) {
        (Some(c), Some(x)) if c.source == ClockSource::CpuinfoEstimate => format!(
            "{x:.3} (estimate: {:.1} MHz from {}; give --mhz for an exact figure)",
            c.mhz,
            c.describe()
        ),
        (Some(c), Some(x)) => format!("{x:.3} ({:.1} MHz, {})", c.mhz, c.describe()),
        _ => match r.cpu_end {
            Some(cpu) => format!(
                "unavailable (no clock known for cpu {cpu}: no cpufreq, no \"cpu MHz\"; give --mhz)"
            ),
            None => "unavailable (the CPU the loop ran on is unknown; give --mhz)".to_string(),
        },
    }
}

fn loop_text(r: &Report) -> String {
    let mut t = format!(
        "{} runs in {:.3} s monotonic, {:.3} s thread CPU ({:.1} %)",
        r.runs,
        r.elapsed_ns as f64 / 1e9,
        r.thread_cpu_ns as f64 / 1e9,
        r.cpu_share_percent
    );
    match (r.cpu_start, r.cpu_end) {
        (Some(a), Some(b)) if a == b => {
            let _ = write!(t, ", cpu {b}");
        }
        (Some(a), Some(b)) => {
            let _ = write!(t, ", cpu {a} -> {b} (migrated; pin with taskset)");
        }
        _ => {}
    }
    match r.allowed_cpus {
        Some(1) => t.push_str(", pinned"),
        Some(n) => {
            let _ = write!(t, ", not pinned ({n} CPUs allowed)");
        }
        None => {}
    }
    t
}

/// The report as pretty-printed JSON.
pub fn render_json(r: &Report) -> serde_json::Result<String> {
    serde_json::to_string_pretty(r).map(|mut s| {
        s.push('\n');
        s
    })
}

/// One CSV record of the headline fields.
#[derive(Serialize)]
struct CsvRow<'a> {
    benchmark: &'a str,
    version: &'a str,
    runs: u64,
    elapsed_ns: u64,
    thread_cpu_ns: u64,
    cpu_share_percent: f64,
    cpu: Option<usize>,
    allowed_cpus: Option<usize>,
    us_per_run: f64,
    dhrystones_per_s: f64,
    dmips: f64,
    mhz: Option<f64>,
    mhz_source: Option<ClockSource>,
    dmips_per_mhz: Option<f64>,
    dmips_per_mhz_is_estimate: bool,
    reference_min_time_met: bool,
    verification_passed: bool,
    mismatches: usize,
    compiler: &'a str,
    opt_level: &'a str,
}

/// The report as CSV: a header line and one record.
pub fn render_csv(r: &Report) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.serialize(CsvRow {
        benchmark: &r.benchmark,
        version: &r.version,
        runs: r.runs,
        elapsed_ns: r.elapsed_ns,
        thread_cpu_ns: r.thread_cpu_ns,
        cpu_share_percent: r.cpu_share_percent,
        cpu: r.cpu_end,
        allowed_cpus: r.allowed_cpus,
        us_per_run: r.us_per_run,
        dhrystones_per_s: r.dhrystones_per_s,
        dmips: r.dmips,
        mhz: r.clock.as_ref().map(|c| c.mhz),
        mhz_source: r.clock.as_ref().map(|c| c.source),
        dmips_per_mhz: r.dmips_per_mhz,
        dmips_per_mhz_is_estimate: r.dmips_per_mhz_is_estimate,
        reference_min_time_met: r.reference_min_time_met,
        verification_passed: r.verification.passed,
        mismatches: r.verification.mismatches.len(),
        compiler: &r.build.compiler,
        opt_level: &r.build.opt_level,
    })?;
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dhrystone;
    use crate::measure::Sample;

    fn sample_report(clock: Option<CoreClock>) -> Report {
        let mut d = Dhrystone::new();
        d.run(20);
        let m = Measurement {
            dhrystone: d,
            sample: Sample {
                runs: 200_000_000,
                elapsed_ns: 3_510_000_000,
                thread_cpu_ns: 3_500_000_000,
                cpu_start: Some(1),
                cpu_end: Some(1),
            },
            attempts: 1,
            allowed_cpus: Some(1),
        };
        let mut r = Report::new(
            &m,
            clock,
            BuildInfo {
                compiler: "rustc 1.0.0".to_string(),
                target: "x86_64-unknown-linux-gnu".to_string(),
                profile: "release".to_string(),
                opt_level: "3".to_string(),
                rustflags: String::new(),
                compilation_model: "one unit".to_string(),
            },
        );
        // Addresses differ between runs; pin them for the snapshot.
        r.final_values.ptr_glob.ptr_comp = 1234;
        r.final_values.next_ptr_glob.ptr_comp = 1234;
        // The state ran 20 times; show it as the measured loop's 200,000,000.
        r.final_values.arr_2_glob_8_7 = 200_000_010;
        r
    }

    const SNAPSHOT: &str = "
Dhrystone Benchmark, Version 2.1 (Language: Rust)

Program compiled without 'register' attribute

Execution starts, 200000000 runs through Dhrystone
Execution ends

Final values of the variables used in the benchmark:

Int_Glob:            5
        should be:   5
Bool_Glob:           1
        should be:   1
Ch_1_Glob:           A
        should be:   A
Ch_2_Glob:           B
        should be:   B
Arr_1_Glob[8]:       7
        should be:   7
Arr_2_Glob[8][7]:    200000010
        should be:   Number_Of_Runs + 10
Ptr_Glob->
  Ptr_Comp:          1234
        should be:   (implementation-dependent)
  Discr:             0
        should be:   0
  Enum_Comp:         2
        should be:   2
  Int_Comp:          17
        should be:   17
  Str_Comp:          DHRYSTONE PROGRAM, SOME STRING
        should be:   DHRYSTONE PROGRAM, SOME STRING
Next_Ptr_Glob->
  Ptr_Comp:          1234
        should be:   (implementation-dependent), same as above
  Discr:             0
        should be:   0
  Enum_Comp:         1
        should be:   1
  Int_Comp:          18
        should be:   18
  Str_Comp:          DHRYSTONE PROGRAM, SOME STRING
        should be:   DHRYSTONE PROGRAM, SOME STRING
Int_1_Loc:           5
        should be:   5
Int_2_Loc:           13
        should be:   13
Int_3_Loc:           7
        should be:   7
Enum_Loc:            1
        should be:   1
Str_1_Loc:           DHRYSTONE PROGRAM, 1'ST STRING
        should be:   DHRYSTONE PROGRAM, 1'ST STRING
Str_2_Loc:           DHRYSTONE PROGRAM, 2'ND STRING
        should be:   DHRYSTONE PROGRAM, 2'ND STRING

Microseconds for one run through Dhrystone:    0.0 
Dhrystones per Second:                      56980057.0 

socbench figures (see dhry/README.md):
Microseconds for one run through Dhrystone: 0.0175
Dhrystones per Second:                      56980057
DMIPS (Dhrystones per Second / 1757):       32430.3
DMIPS/MHz:                                  14.741 (estimate: 2200.0 MHz from /proc/cpuinfo \"cpu MHz\" of cpu 1, no cpufreq here; give --mhz for an exact figure)
Timed loop:                                 200000000 runs in 3.510 s monotonic, 3.500 s thread CPU (99.7 %), cpu 1, pinned
Compiled with:                              rustc 1.0.0, release profile, opt-level 3, x86_64-unknown-linux-gnu
Compilation model:                          one unit
Verification:                               passed (every checked variable has its expected value)
";

    #[test]
    fn text_snapshot() {
        let r = sample_report(Some(CoreClock {
            mhz: 2200.0,
            source: ClockSource::CpuinfoEstimate,
            cpu: Some(1),
        }));
        assert_eq!(render_text(&r), SNAPSHOT);
    }

    #[test]
    fn text_without_a_clock_or_enough_time() {
        let mut r = sample_report(None);
        r.reference_min_time_met = false;
        let t = render_text(&r);
        assert!(t.contains("Measured time too small to obtain meaningful results\n"));
        assert!(t.contains("DMIPS/MHz:                                  unavailable"));
    }

    #[test]
    fn failed_verification_is_reported() {
        let mut r = sample_report(None);
        r.verification = Verification {
            passed: false,
            mismatches: vec![Mismatch {
                name: "Int_Glob",
                actual: "4".to_string(),
                expected: "5".to_string(),
            }],
        };
        assert!(render_text(&r).contains("FAILED (1 checked variable(s) differ)"));
        let j: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        assert_eq!(j["verification"]["passed"], false);
        assert_eq!(j["verification"]["mismatches"][0]["name"], "Int_Glob");
    }

    #[test]
    fn json_fields_carry_units() {
        let r = sample_report(Some(CoreClock {
            mhz: 1000.0,
            source: ClockSource::Option,
            cpu: None,
        }));
        let j: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        assert_eq!(j["runs"], 200_000_000);
        assert_eq!(j["elapsed_ns"], 3_510_000_000u64);
        assert_eq!(j["clock"]["source"], "option");
        assert_eq!(j["dmips_per_mhz_is_estimate"], false);
        assert_eq!(j["verification"]["passed"], true);
        assert_eq!(j["final_values"]["arr_2_glob_8_7"], 200_000_010);
        assert!((j["dmips"].as_f64().unwrap() - 32_430.31).abs() < 0.01);
    }

    #[test]
    fn csv_is_a_header_and_one_record() {
        let r = sample_report(None);
        let text = render_csv(&r).unwrap();
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let headers = rd.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 1);
        let get = |k: &str| rows[0][headers.iter().position(|h| h == k).unwrap()].to_string();
        assert_eq!(get("runs"), "200000000");
        assert_eq!(get("mhz"), "");
        assert_eq!(get("verification_passed"), "true");
    }
}
