//! The reference's text for a [`Summary`]: with one child, the v2.1 printout followed by this
//! port's figures; with several, the printout once per distinct set of final values, then a
//! table of the children, the clusters and the total. Pure functions of the summary.

use std::fmt::Write as _;

use benchmp::AggregateMode;
use benchmp::cpulist::format_cpu_list;
use benchmp::freq::{ClockSource, CoreClock};
use benchmp::host::Build;

use super::model::{ChildResult, Summary};
use crate::FinalValues;

/// The warning for loops shorter than the 2 s the reference requires (the shortest one
/// named), with a newline; `None` when every loop was long enough.
pub fn short_loop_warning(s: &Summary) -> Option<String> {
    let c = s
        .children
        .iter()
        .filter(|c| !c.reference_min_time_met)
        .min_by_key(|c| c.elapsed_ns)?;
    let whose = if s.children.len() == 1 {
        "the timed loop".to_string()
    } else {
        format!("the timed loop of {}", c.who())
    };
    Some(format!(
        "dhry: warning: {whose} lasted {:.3} s, less than the 2 s the reference requires; \
         use more runs or --time 2\n",
        c.elapsed_ns as f64 / 1e9
    ))
}

/// The error lines of a failed verification: each differing variable, then the count of
/// children that failed.
pub fn verification_failure(s: &Summary) -> String {
    let mut o: String = s
        .verification_errors()
        .iter()
        .map(|line| format!("dhry: error: {line}\n"))
        .collect();
    let failed = s.children.iter().filter(|c| !c.verification.passed).count();
    let _ = writeln!(
        o,
        "dhry: error: verification failed in {failed} of {} children",
        s.children.len()
    );
    o
}

/// Width of the reference's result labels.
const LABEL: usize = 44;

/// The text report: the reference's layout for one child, the per-child table for several.
pub fn render_text(s: &Summary) -> String {
    match s.children.as_slice() {
        [only] => render_one(s, only),
        _ => render_many(s),
    }
}

fn header(o: &mut String, execution_starts: &str) {
    for l in [
        "",
        "Dhrystone Benchmark, Version 2.1 (Language: Rust)",
        "",
        "Program compiled without 'register' attribute",
        "",
        execution_starts,
        "Execution ends",
        "",
    ] {
        o.push_str(l);
        o.push('\n');
    }
}

/// The final values with their "should be" lines (v2.1 layout).
fn final_values_block(o: &mut String, v: &FinalValues) {
    let mut line = |s: &str| {
        o.push_str(s);
        o.push('\n');
    };
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
}

fn field(label: &str, value: String) -> String {
    format!("{label:<LABEL$}{value}\n")
}

fn compiled_with(b: &Build) -> String {
    format!(
        "{}, {} profile, opt-level {}, {}{}",
        b.rustc,
        b.profile,
        b.opt_level,
        b.target,
        if b.rustflags.is_empty() {
            String::new()
        } else {
            format!(", RUSTFLAGS {}", b.rustflags)
        }
    )
}

/// One child: the reference's printout, then this port's figures.
fn render_one(s: &Summary, r: &ChildResult) -> String {
    let mut o = String::new();
    header(
        &mut o,
        &format!("Execution starts, {} runs through Dhrystone", r.runs),
    );
    o.push_str("Final values of the variables used in the benchmark:\n\n");
    final_values_block(&mut o, &r.final_values);
    o.push('\n');
    if r.reference_min_time_met {
        let _ = writeln!(
            o,
            "{:<LABEL$}{:6.1} ",
            "Microseconds for one run through Dhrystone: ", r.us_per_run
        );
        let _ = writeln!(
            o,
            "{:<LABEL$}{:6.1} ",
            "Dhrystones per Second:", r.dhrystones_per_s
        );
    } else {
        o.push_str("Measured time too small to obtain meaningful results\n");
        o.push_str("Please increase number of runs\n");
    }
    o.push('\n');

    o.push_str("socbench figures (see dhry/README.md):\n");
    o.push_str(&field(
        "Microseconds for one run through Dhrystone:",
        format!("{:.4}", r.us_per_run),
    ));
    o.push_str(&field(
        "Dhrystones per Second:",
        format!("{:.0}", r.dhrystones_per_s),
    ));
    o.push_str(&field(
        "DMIPS (Dhrystones per Second / 1757):",
        format!("{:.1}", r.dmips),
    ));
    o.push_str(&field("DMIPS/MHz:", dmips_per_mhz_text(r)));
    o.push_str(&field("Timed loop:", loop_text(r)));
    o.push_str(&field("Compiled with:", compiled_with(&s.build)));
    o.push_str(&field("Compilation model:", s.compilation_model.clone()));
    o.push_str(&field(
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

fn dmips_per_mhz_text(r: &ChildResult) -> String {
    match (&r.clock, r.dmips_per_mhz) {
        (Some(c), Some(x)) if c.is_estimate() => format!(
            "{x:.3} (estimate: {:.1} MHz from {}; give --mhz for an exact figure)",
            c.mhz,
            c.source_text()
        ),
        (Some(c), Some(x)) => format!("{x:.3} ({:.1} MHz, {})", c.mhz, c.source_text()),
        _ => match (r.cpu_end, &r.clock_unknown) {
            (_, Some(why)) => format!("unavailable (the clock is unknown: {why}; give --mhz)"),
            (Some(cpu), None) => format!(
                "unavailable (no clock known for cpu {cpu}: no cpufreq, no clock probe; give --mhz)"
            ),
            (None, None) => {
                "unavailable (the CPU the loop ran on is unknown; give --mhz)".to_string()
            }
        },
    }
}

fn loop_text(r: &ChildResult) -> String {
    let mut t = format!(
        "{} runs in {:.3} s monotonic",
        r.runs,
        r.elapsed_ns as f64 / 1e9
    );
    if let (Some(cpu_ns), Some(share)) = (r.thread_cpu_ns, r.cpu_share_percent) {
        let _ = write!(
            t,
            ", {:.3} s thread CPU ({share:.1} %)",
            cpu_ns as f64 / 1e9
        );
    }
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

/// `children 0-3 (CPUs 4-7)`, `child 2 (CPU 6)`, `children 0-1 (unpinned)`.
fn who_all(children: &[&ChildResult]) -> String {
    let indices: Vec<usize> = children.iter().map(|c| c.child).collect();
    let cpus: Vec<usize> = children.iter().filter_map(|c| c.cpu).collect();
    let (noun, cpu_noun) = if children.len() == 1 {
        ("child", "CPU")
    } else {
        ("children", "CPUs")
    };
    let place = if cpus.is_empty() {
        "unpinned".to_string()
    } else {
        let mut sorted = cpus.clone();
        sorted.sort_unstable();
        sorted.dedup();
        format!("{cpu_noun} {}", format_cpu_list(&sorted))
    };
    format!("{noun} {} ({place})", format_cpu_list(&indices))
}

/// Several children: the printout once per distinct set of final values (addresses aside),
/// then the per-child table, the clusters and the total.
fn render_many(s: &Summary) -> String {
    let mut o = String::new();
    header(
        &mut o,
        &format!(
            "Execution starts, {} runs through Dhrystone in each of {} children",
            s.runs,
            s.children.len()
        ),
    );
    for members in by_final_values(&s.children) {
        let _ = writeln!(
            o,
            "Final values of the variables used in the benchmark ({}):\n",
            who_all(&members)
        );
        final_values_block(&mut o, &members[0].final_values);
        o.push('\n');
    }
    if !s.reference_min_time_met {
        o.push_str("Measured time too small to obtain meaningful results\n");
        o.push_str("Please increase number of runs\n\n");
    }

    o.push_str("socbench figures (see dhry/README.md):\n");
    children_table(&mut o, &s.children);
    for c in &s.clusters {
        o.push_str(&field(
            &format!("Cluster {} (CPUs {}):", c.cluster, format_cpu_list(&c.cpus)),
            format!(
                "{:.1} DMIPS, {:.0} Dhrystones/s ({} children, mean {:.1} DMIPS)",
                c.dmips_total, c.dhrystones_per_s_total, c.children, c.dmips_mean
            ),
        ));
    }
    o.push_str(&field(
        &format!("Total (--aggregate {}):", aggregate_name(s.aggregate)),
        format!(
            "{:.1} DMIPS, {:.0} Dhrystones/s (sum {:.1}, lmbench median x children {:.1})",
            s.total_dmips, s.total_dhrystones_per_s, s.sum_dmips, s.lmbench_median_dmips
        ),
    ));
    o.push_str(&field("Clock for DMIPS/MHz:", clocks_text(&s.children)));
    o.push_str(&field("Compiled with:", compiled_with(&s.build)));
    o.push_str(&field("Compilation model:", s.compilation_model.clone()));
    o.push_str(&field("Verification:", verification_of_all(&s.children)));
    o
}

/// The children grouped by their final values (addresses aside), in order of first child.
fn by_final_values(children: &[ChildResult]) -> Vec<Vec<&ChildResult>> {
    let mut groups: Vec<(FinalValues, Vec<&ChildResult>)> = Vec::new();
    for c in children {
        let key = c.final_values.without_addresses();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(c),
            None => groups.push((key, vec![c])),
        }
    }
    groups.into_iter().map(|(_, members)| members).collect()
}

/// One row per child: where it ran, its figures, its loop and its verification.
fn children_table(o: &mut String, children: &[ChildResult]) {
    let _ = writeln!(
        o,
        "{:>5}  {:>4}  {:>7}  {:>14}  {:>10}  {:>9}  {:>8}  {:>6}  verification",
        "child", "cpu", "cluster", "Dhrystones/s", "DMIPS", "DMIPS/MHz", "loop s", "CPU %"
    );
    for c in children {
        let per_mhz = match (c.dmips_per_mhz, c.dmips_per_mhz_is_estimate) {
            (Some(x), false) => format!("{x:.3}"),
            (Some(x), true) => format!("~{x:.3}"),
            (None, _) => "-".to_string(),
        };
        let _ = writeln!(
            o,
            "{:>5}  {:>4}  {:>7}  {:>14.0}  {:>10.1}  {:>9}  {:>8.3}  {:>6}  {}",
            c.child,
            c.cpu.map_or("-".to_string(), |x| x.to_string()),
            c.cluster,
            c.dhrystones_per_s,
            c.dmips,
            per_mhz,
            c.elapsed_ns as f64 / 1e9,
            c.cpu_share_percent
                .map_or("-".to_string(), |x| format!("{x:.1}")),
            if c.verification.passed {
                "passed".to_string()
            } else {
                format!("FAILED ({})", c.verification.mismatches.len())
            }
        );
    }
}

/// The verification of several children: passed by all, or which failed.
fn verification_of_all(children: &[ChildResult]) -> String {
    let failed: Vec<&ChildResult> = children.iter().filter(|c| !c.verification.passed).collect();
    if failed.is_empty() {
        format!(
            "passed ({} children; every checked variable has its expected value)",
            children.len()
        )
    } else {
        format!(
            "FAILED in {} of {} children ({})",
            failed.len(),
            children.len(),
            who_all(&failed)
        )
    }
}

fn aggregate_name(mode: AggregateMode) -> &'static str {
    match mode {
        AggregateMode::Cluster => "cluster",
        AggregateMode::Median => "median",
    }
}

/// The clock behind the DMIPS/MHz column: one description when every child has the same,
/// else one per child.
fn clocks_text(children: &[ChildResult]) -> String {
    let describe = |c: &CoreClock| {
        let what = CoreClock { cpu: None, ..*c }.source_text();
        if c.is_estimate() {
            format!(
                "~{:.1} MHz (estimate: {what}; give --mhz for an exact figure)",
                c.mhz
            )
        } else {
            format!("{:.1} MHz ({what})", c.mhz)
        }
    };
    let texts: Vec<String> = children
        .iter()
        .map(|c| {
            c.clock
                .as_ref()
                .map_or("unknown (give --mhz)".to_string(), describe)
        })
        .collect();
    let clocks: Vec<&CoreClock> = children.iter().filter_map(|c| c.clock.as_ref()).collect();
    let one_source =
        clocks.len() == children.len() && clocks.windows(2).all(|w| w[0].source == w[1].source);
    if texts.windows(2).all(|w| w[0] == w[1]) {
        texts.into_iter().next().unwrap_or_default()
    } else if one_source && clocks[0].source == ClockSource::Probe {
        // Probed clocks differ a little from child to child: one source, one figure each.
        let each: Vec<String> = children
            .iter()
            .zip(&clocks)
            .map(|(c, k)| format!("child {} ~{:.1}", c.child, k.mhz))
            .collect();
        let what = CoreClock {
            cpu: None,
            ..*clocks[0]
        }
        .source_text();
        format!(
            "{} MHz (estimate: {what}; give --mhz for an exact figure)",
            each.join(", ")
        )
    } else {
        children
            .iter()
            .zip(texts)
            .map(|(c, t)| format!("child {}: {t}", c.child))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{child, estimate, failed_int_glob, summary};

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
DMIPS/MHz:                                  14.741 (estimate: 2200.0 MHz from /proc/cpuinfo \"cpu MHz\" of CPU 1; no cpufreq; give --mhz for an exact figure)
Timed loop:                                 200000000 runs in 3.510 s monotonic, 3.500 s thread CPU (99.7 %), cpu 1, pinned
Compiled with:                              rustc 1.0.0, release profile, opt-level 3, x86_64-unknown-linux-gnu
Compilation model:                          one unit
Verification:                               passed (every checked variable has its expected value)
";

    #[test]
    fn text_snapshot() {
        let s = summary(vec![child(0, 1, estimate(1))]);
        assert_eq!(render_text(&s), SNAPSHOT);
    }

    #[test]
    fn text_without_a_clock_or_enough_time() {
        let mut s = summary(vec![child(0, 1, None)]);
        s.children[0].reference_min_time_met = false;
        let t = render_text(&s);
        assert!(t.contains("Measured time too small to obtain meaningful results\n"));
        assert!(t.contains("DMIPS/MHz:                                  unavailable"));
    }

    #[test]
    fn probed_clocks_share_one_source_line() {
        let probed = |cpu, mhz| {
            Some(CoreClock {
                mhz,
                source: ClockSource::Probe,
                cpu: Some(cpu),
            })
        };
        let s = summary(vec![
            child(0, 0, probed(0, 3561.7)),
            child(1, 1, probed(1, 3519.4)),
        ]);
        let t = render_text(&s);
        assert!(
            t.contains(
                "child 0 ~3561.7, child 1 ~3519.4 MHz (estimate: three instruction chains that agree"
            ),
            "{t}"
        );
        let s = summary(vec![child(0, 1, probed(1, 3600.0))]);
        assert!(
            render_text(&s)
                .contains("(estimate: 3600.0 MHz from three instruction chains that agree")
        );
    }

    #[test]
    fn failed_verification_is_shown() {
        let mut s = summary(vec![child(0, 1, None)]);
        s.children[0].verification = failed_int_glob();
        s.verification_passed = false;
        assert!(render_text(&s).contains("FAILED (1 checked variable(s) differ)"));
        assert_eq!(
            verification_failure(&s),
            "dhry: error: child 0 (CPU 1): Int_Glob is 4, should be 5\n\
             dhry: error: verification failed in 1 of 1 children\n"
        );
    }

    #[test]
    fn a_loop_under_2_s_is_warned_about() {
        let mut s = summary(vec![child(0, 1, None), child(1, 2, None)]);
        assert_eq!(short_loop_warning(&s), None);
        for (c, ns) in s.children.iter_mut().zip([1_500_000_000, 1_200_000_000]) {
            c.reference_min_time_met = false;
            c.elapsed_ns = ns;
        }
        assert_eq!(
            short_loop_warning(&s).unwrap(),
            "dhry: warning: the timed loop of child 1 (CPU 2) lasted 1.200 s, less than the 2 s \
             the reference requires; use more runs or --time 2\n"
        );
        s.children.truncate(1);
        assert!(
            short_loop_warning(&s)
                .unwrap()
                .starts_with("dhry: warning: the timed loop lasted 1.500 s")
        );
    }

    #[test]
    fn several_children_share_one_printout_and_a_table() {
        let s = summary(vec![child(0, 0, estimate(0)), child(1, 1, estimate(1))]);
        let t = render_text(&s);
        assert!(t.contains(
            "Execution starts, 200000000 runs through Dhrystone in each of 2 children\n"
        ));
        assert!(t.contains(
            "Final values of the variables used in the benchmark (children 0-1 (CPUs 0-1)):\n"
        ));
        assert_eq!(t.matches("        should be:   ").count(), 22);
        assert!(t.contains(
            "    0     0        0        56980057     32430.3    ~14.741     3.510    99.7  passed\n"
        ));
        assert!(t.contains(
            "Cluster 0 (CPUs 0-1):                       64860.6 DMIPS, 113960114 Dhrystones/s (2 children, mean 32430.3 DMIPS)\n"
        ), "{t}");
        assert!(t.contains("Total (--aggregate cluster):                64860.6 DMIPS"));
        assert!(t.contains(
            "Clock for DMIPS/MHz:                        ~2200.0 MHz (estimate: /proc/cpuinfo \"cpu MHz\"; no cpufreq; give --mhz for an exact figure)\n"
        ), "{t}");
        assert!(t.contains("Verification:                               passed (2 children;"));
        assert!(!t.contains("Microseconds for one run through Dhrystone:    0.0"));
    }

    #[test]
    fn children_with_different_values_get_a_printout_each() {
        let mut s = summary(vec![
            child(0, 0, None),
            child(1, 1, None),
            child(2, 2, None),
        ]);
        s.children[1].final_values.int_glob = 4;
        s.children[1].verification.passed = false;
        // Different addresses alone do not split the printout.
        s.children[2].final_values.ptr_glob.ptr_comp = 99;
        s.children[2].final_values.next_ptr_glob.ptr_comp = 99;
        let t = render_text(&s);
        assert!(t.contains("benchmark (children 0,2 (CPUs 0,2)):\n"), "{t}");
        assert!(t.contains("benchmark (child 1 (CPU 1)):\n"), "{t}");
        assert_eq!(t.matches("        should be:   ").count(), 44);
        assert!(t.contains("FAILED in 1 of 3 children (child 1 (CPU 1))"));
        assert!(t.contains("Clock for DMIPS/MHz:                        unknown (give --mhz)\n"));
    }
}
