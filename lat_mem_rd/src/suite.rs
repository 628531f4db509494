//! lat_mem_rd's entries in `benchmp suite`'s plan: the size sweep to four times the last-level
//! cache and, on more than one CPU, core-to-core latency and latency under load. `benchmp
//! suite` compiles this file into its plan too, so it uses only `benchmp::suite` and `std`
//! (benchmp/src/suite.rs).

use benchmp::suite::{Machine, Mode, SuiteEntry};

/// The quick plan's latency sweep ends here, MiB, whatever the last-level cache: Intel Xeon
/// guests report their host's L3 (260 MiB on one, 480 MiB on another), so the sweep went to
/// 1,040 MiB or more: 89 s of the "about a minute" quick mode promises, on a busy 2-CPU guest.
/// The default and full plans go to four times the cache, where memory's plateau is.
pub const QUICK_LAT_MIB: u64 = 256;

/// The entries of `mode` on `machine`, in the order they run.
pub fn plan(mode: Mode, machine: Machine) -> Vec<SuiteEntry> {
    // The sweep: to four times the last-level cache, at least 8 MiB.
    let mut mib = machine.llc_bytes.saturating_mul(4).div_ceil(1 << 20).max(8);
    let (n, strides, c2c_n) = match mode {
        Mode::Quick => {
            mib = mib.min(QUICK_LAT_MIB);
            (1, "64", 5)
        }
        Mode::Default => (3, "64", 11),
        Mode::Full => (11, "16 64 256", 51),
    };
    // --loaded: at least three intervals per row, so a short preemption of a load is a small
    // share of the window it must cover.
    let (delays, loaded_len, loaded_n) = match mode {
        Mode::Quick => ("0,5000", "64m", 3),
        Mode::Default => ("0,200,1000,5000,20000", "256m", 5),
        Mode::Full => ("0,50,200,500,1000,2000,5000,20000", "256m", 11),
    };
    let sweep = format!("-N {n} {{t}}{mib} {strides} --stdout --json={{json}} --csv={{csv}}");
    let mut out = vec![SuiteEntry::new(
        "lat_mem_rd-t",
        "lat_mem_rd",
        &sweep.replace("{t}", "-t "),
    )];
    if mode == Mode::Full {
        out.push(SuiteEntry::new(
            "lat_mem_rd-seq",
            "lat_mem_rd",
            &sweep.replace("{t}", ""),
        ));
    }
    if machine.cpus > 1 {
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(mode: Mode, machine: Machine) -> Vec<String> {
        plan(mode, machine).iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn the_quick_plan_on_two_cpus() {
        let two = Machine {
            cpus: 2,
            llc_bytes: 32 << 20,
        };
        assert_eq!(
            lines(Mode::Quick, two),
            [
                "lat_mem_rd-t||lat_mem_rd|-N 1 -t 128 64 --stdout --json={json} --csv={csv}",
                "lat_mem_rd-c2c||lat_mem_rd|--c2c -N 5 --json={json}",
                "lat_mem_rd-loaded||lat_mem_rd|--loaded 64m -N 3 --delays 0,5000 --json={json}",
            ]
        );
    }

    #[test]
    fn the_quick_sweep_is_bounded_and_the_others_reach_four_times_the_cache() {
        let big = Machine {
            cpus: 2,
            llc_bytes: 480 << 20,
        };
        let sweep = |mode| lines(mode, big).remove(0);
        assert!(
            sweep(Mode::Quick).contains(" -t 256 64 "),
            "{}",
            sweep(Mode::Quick)
        );
        assert!(
            sweep(Mode::Default).contains(" -t 1920 64 "),
            "{}",
            sweep(Mode::Default)
        );
        assert!(
            sweep(Mode::Full).contains(" -t 1920 16 64 256 "),
            "{}",
            sweep(Mode::Full)
        );
        let unknown = Machine {
            cpus: 8,
            llc_bytes: 0,
        };
        assert_eq!(
            lines(Mode::Default, unknown)[0],
            "lat_mem_rd-t||lat_mem_rd|-N 3 -t 8 64 --stdout --json={json} --csv={csv}"
        );
        assert!(lines(Mode::Full, unknown)[1].starts_with("lat_mem_rd-seq|"));
    }

    #[test]
    fn one_cpu_has_no_core_to_core_or_loaded_latency() {
        let one = Machine {
            cpus: 1,
            llc_bytes: 1 << 20,
        };
        assert_eq!(plan(Mode::Default, one).len(), 1);
    }
}
