//! The suite's plan as data: which tool runs with which arguments and environment in each
//! mode, sized from the machine's own topology (the CPUs the suite may use, the last-level
//! cache). One plan for every place the suite runs: this machine, a phone after `adb push`.

use std::fmt;

/// How much the suite measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Fewer operations and repetitions (about a minute here).
    Quick,
    /// The default set (a few minutes here).
    Default,
    /// Every operation, lmbench's 11 repetitions, more strides (tens of minutes).
    Full,
}

/// One word of an entry's arguments or environment: text, or a path the executor fills in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// The word as it is.
    Text(String),
    /// `PREFIX` followed by the entry's JSON report path (`--json=` + path).
    Json(&'static str),
    /// `PREFIX` followed by the entry's CSV path.
    Csv(&'static str),
    /// `PREFIX` followed by a folder of the entry's own (made before it runs).
    Dir(&'static str),
}

impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Word::Text(t) => f.write_str(t),
            Word::Json(p) => write!(f, "{p}{{json}}"),
            Word::Csv(p) => write!(f, "{p}{{csv}}"),
            Word::Dir(p) => write!(f, "{p}{{dir}}"),
        }
    }
}

/// One run of one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteEntry {
    /// Names the entry's files (`LABEL.json`, `.csv`, `.txt`, `.err`, `LABEL/`).
    pub label: String,
    /// The tool's binary name.
    pub tool: &'static str,
    /// Environment set for the run (`NAME`, value).
    pub env: Vec<(String, Word)>,
    /// The tool's arguments.
    pub args: Vec<Word>,
}

impl fmt::Display for SuiteEntry {
    /// `LABEL|ENV|TOOL|ARGS`: the environment and arguments space-separated, `{json}`,
    /// `{csv}` and `{dir}` for the entry's files (the form `benchmp suite --list` prints).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let args: Vec<String> = self.args.iter().map(Word::to_string).collect();
        write!(
            f,
            "{}|{}|{}|{}",
            self.label,
            env.join(" "),
            self.tool,
            args.join(" ")
        )
    }
}

impl SuiteEntry {
    fn new(label: impl Into<String>, tool: &'static str, args: &str) -> SuiteEntry {
        SuiteEntry {
            label: label.into(),
            tool,
            env: Vec::new(),
            args: args.split_whitespace().map(word).collect(),
        }
    }

    /// True when the entry needs a folder of its own.
    pub fn needs_dir(&self) -> bool {
        self.args
            .iter()
            .chain(self.env.iter().map(|(_, w)| w))
            .any(|w| matches!(w, Word::Dir(_)))
    }
}

/// A plan word: `--json={json}`, `--csv={csv}` and `{dir}` become placeholders.
fn word(w: &str) -> Word {
    match w {
        "--json={json}" => Word::Json("--json="),
        "--csv={csv}" => Word::Csv("--csv="),
        "{dir}" => Word::Dir(""),
        _ => Word::Text(w.to_string()),
    }
}

/// What the plan is sized by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    /// CPUs the all-CPU entries run one child on each of.
    pub cpus: usize,
    /// Largest cache of the first CPU, bytes (0 when unknown).
    pub llc_bytes: u64,
}

/// The quick plan's latency sweep ends here, MiB, whatever the last-level cache: Intel Xeon
/// guests report their host's L3 (260 MiB on one, 480 MiB on another), so the sweep went to
/// 1,040 MiB or more: 89 s of the "about a minute" quick mode promises, on a busy 2-CPU guest.
/// The default and full plans go to four times the cache, where memory's plateau is.
pub const QUICK_LAT_MIB: u64 = 256;

/// The entries of `mode` on `machine`, in the order they run.
pub fn plan(mode: Mode, machine: Machine) -> Vec<SuiteEntry> {
    let ncpus = machine.cpus.max(1);
    let (mut n, mut ops, mut size) = (5, "rd wr rdwr cp bcopy bzero rdvec cpnt", "64m");
    let (mut lat_n, mut lat_strides, mut dhry_time) = (3, "64", "2");
    let mut dto_short = true;
    let (mut all, mut c2c_n) = (ncpus, 11);
    // --loaded: at least three intervals per row, so a short preemption of a load is a small
    // share of the window it must cover.
    let (mut delays, mut loaded_len, mut loaded_n) = ("0,200,1000,5000,20000", "256m", 5);
    // lat_mem_rd: to four times the last-level cache, at least 8 MiB (quick: at most
    // QUICK_LAT_MIB).
    let mut lat_mib = machine.llc_bytes.saturating_mul(4).div_ceil(1 << 20).max(8);
    match mode {
        Mode::Quick => {
            lat_mib = lat_mib.min(QUICK_LAT_MIB);
            (n, ops, lat_n, dhry_time, all, c2c_n) = (3, "rd wr cp bzero", 1, "0.5", 1, 5);
            (delays, loaded_len, loaded_n) = ("0,5000", "64m", 3);
        }
        Mode::Full => {
            (n, size, c2c_n) = (11, "256m", 51);
            ops = "rd wr rdwr cp fwr frd fcp bzero bcopy rdvec wrnt cpnt memcpy memset";
            (delays, loaded_n) = ("0,50,200,500,1000,2000,5000,20000", 11);
            (lat_n, lat_strides, dhry_time, dto_short) = (11, "16 64 256", "5", false);
        }
        Mode::Default => {}
    }
    let mut out = Vec::new();
    let parallel: &[usize] = if ncpus == 1 { &[1] } else { &[1, ncpus] };
    for &p in parallel {
        for op in ops.split_whitespace() {
            out.push(SuiteEntry::new(
                format!("bw_mem-{op}-P{p}"),
                "bw_mem",
                &format!("-P {p} -N {n} {size} {op} --stdout --json={{json}} --csv={{csv}}"),
            ));
        }
    }
    let lat =
        format!("-N {lat_n} {{t}}{lat_mib} {lat_strides} --stdout --json={{json}} --csv={{csv}}");
    out.push(SuiteEntry::new(
        "lat_mem_rd-t",
        "lat_mem_rd",
        &lat.replace("{t}", "-t "),
    ));
    if mode == Mode::Full {
        out.push(SuiteEntry::new(
            "lat_mem_rd-seq",
            "lat_mem_rd",
            &lat.replace("{t}", ""),
        ));
    }
    if ncpus > 1 {
        // Core-to-core latency: every ordered pair of CPUs (a few seconds on a phone's eight).
        out.push(SuiteEntry::new(
            "lat_mem_rd-c2c",
            "lat_mem_rd",
            &format!("--c2c -N {c2c_n} --json={{json}}"),
        ));
        // Latency under load: the first CPU chases while every other one streams reads.
        out.push(SuiteEntry::new(
            "lat_mem_rd-loaded",
            "lat_mem_rd",
            &format!("--loaded {loaded_len} -N {loaded_n} --delays {delays} --json={{json}}"),
        ));
    }
    // CoreMark-compatible runs need at least 10 s each to validate; quick mode runs one core.
    let all_parallel: &[usize] = if all == 1 { &[1] } else { &[1, all] };
    for &p in all_parallel {
        out.push(SuiteEntry::new(
            format!("dhry-P{p}"),
            "dhry",
            &format!("-P {p} --time {dhry_time} --json={{json}} --csv={{csv}}"),
        ));
        out.push(SuiteEntry::new(
            format!("coremark-P{p}"),
            "coremark",
            &format!("-P {p} --json={{json}} --csv={{csv}}"),
        ));
    }
    let mut dto = SuiteEntry::new("dto-speedup", "dto", "speedup --json={json}");
    if dto_short {
        dto.env.push(("PERF_SHORT".into(), Word::Text("1".into())));
    }
    dto.env.push(("RESULTS_DIR".into(), Word::Dir("")));
    out.push(dto);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(e: &SuiteEntry) -> String {
        e.to_string()
    }

    #[test]
    fn the_plan_runs_every_tool_of_the_list_and_no_other() {
        for mode in [Mode::Quick, Mode::Default, Mode::Full] {
            let machine = Machine {
                cpus: 2,
                llc_bytes: 32 << 20,
            };
            // Each tool where it first runs.
            let mut tools: Vec<&str> = Vec::new();
            for e in plan(mode, machine) {
                if !tools.contains(&e.tool) {
                    tools.push(e.tool);
                }
            }
            assert_eq!(tools, benchmp_cli::suite_tools(), "{mode:?}");
        }
    }

    #[test]
    fn quick_plan_on_this_kind_of_machine() {
        let p = plan(
            Mode::Quick,
            Machine {
                cpus: 2,
                llc_bytes: 32 << 20,
            },
        );
        let lines: Vec<String> = p.iter().map(line).collect();
        assert_eq!(
            lines,
            [
                "bw_mem-rd-P1||bw_mem|-P 1 -N 3 64m rd --stdout --json={json} --csv={csv}",
                "bw_mem-wr-P1||bw_mem|-P 1 -N 3 64m wr --stdout --json={json} --csv={csv}",
                "bw_mem-cp-P1||bw_mem|-P 1 -N 3 64m cp --stdout --json={json} --csv={csv}",
                "bw_mem-bzero-P1||bw_mem|-P 1 -N 3 64m bzero --stdout --json={json} --csv={csv}",
                "bw_mem-rd-P2||bw_mem|-P 2 -N 3 64m rd --stdout --json={json} --csv={csv}",
                "bw_mem-wr-P2||bw_mem|-P 2 -N 3 64m wr --stdout --json={json} --csv={csv}",
                "bw_mem-cp-P2||bw_mem|-P 2 -N 3 64m cp --stdout --json={json} --csv={csv}",
                "bw_mem-bzero-P2||bw_mem|-P 2 -N 3 64m bzero --stdout --json={json} --csv={csv}",
                "lat_mem_rd-t||lat_mem_rd|-N 1 -t 128 64 --stdout --json={json} --csv={csv}",
                "lat_mem_rd-c2c||lat_mem_rd|--c2c -N 5 --json={json}",
                "lat_mem_rd-loaded||lat_mem_rd|--loaded 64m -N 3 --delays 0,5000 --json={json}",
                "dhry-P1||dhry|-P 1 --time 0.5 --json={json} --csv={csv}",
                "coremark-P1||coremark|-P 1 --json={json} --csv={csv}",
                "dto-speedup|PERF_SHORT=1 RESULTS_DIR={dir}|dto|speedup --json={json}",
            ]
        );
        assert!(p.last().unwrap().needs_dir());
        assert!(!p[0].needs_dir());
    }

    #[test]
    fn the_quick_sweep_is_bounded_and_the_others_reach_four_times_the_cache() {
        let big = Machine {
            cpus: 2,
            llc_bytes: 480 << 20,
        };
        let lat = |mode| {
            let p = plan(mode, big);
            line(p.iter().find(|e| e.label == "lat_mem_rd-t").unwrap())
        };
        assert!(
            lat(Mode::Quick).contains(" -t 256 64 "),
            "{}",
            lat(Mode::Quick)
        );
        assert!(
            lat(Mode::Default).contains(" -t 1920 64 "),
            "{}",
            lat(Mode::Default)
        );
        assert!(
            lat(Mode::Full).contains(" -t 1920 16 64 256 "),
            "{}",
            lat(Mode::Full)
        );
    }

    #[test]
    fn default_and_full_plans() {
        let m = Machine {
            cpus: 8,
            llc_bytes: 0,
        };
        let d = plan(Mode::Default, m);
        assert_eq!(d.iter().filter(|e| e.tool == "bw_mem").count(), 16);
        let lat = d.iter().find(|e| e.label == "lat_mem_rd-t").unwrap();
        assert_eq!(
            line(lat),
            "lat_mem_rd-t||lat_mem_rd|-N 3 -t 8 64 --stdout --json={json} --csv={csv}"
        );
        let labels: Vec<&str> = d.iter().map(|e| e.label.as_str()).collect();
        assert!(labels.ends_with(&[
            "dhry-P1",
            "coremark-P1",
            "dhry-P8",
            "coremark-P8",
            "dto-speedup"
        ]));
        let f = plan(Mode::Full, m);
        assert_eq!(f.iter().filter(|e| e.tool == "bw_mem").count(), 28);
        assert!(f.iter().any(|e| e.label == "lat_mem_rd-seq"));
        let dto = f.last().unwrap();
        assert_eq!(
            line(dto),
            "dto-speedup|RESULTS_DIR={dir}|dto|speedup --json={json}"
        );
        // One CPU: no parallel entries, no core-to-core or loaded latency.
        let one = plan(
            Mode::Default,
            Machine {
                cpus: 1,
                llc_bytes: 1 << 20,
            },
        );
        assert!(
            one.iter()
                .filter(|e| e.tool == "bw_mem")
                .all(|e| e.label.ends_with("-P1"))
        );
        assert!(
            !one.iter()
                .any(|e| e.label.contains("c2c") || e.label.contains("loaded"))
        );
        assert_eq!(one.iter().filter(|e| e.tool == "dhry").count(), 1);
    }
}
