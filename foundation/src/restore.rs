//! What a killed socbench run left changed on the machine, written back by the next socbench
//! command, whichever it is, and said.
//!
//! Every change a run makes to the machine's state (a cpufreq policy's limits and governor
//! by `--pin-freq`, `--governor`, `benchmp efficiency`'s steps and dto's PERF_CORE_FREQ_MHZ;
//! any setting held through a [`crate::claim::Claim`], tracefs's included) is recorded in the
//! claim registry before the value is written, with the process holding it. A run killed
//! outright (SIGKILL, an OOM kill) cannot write it back; every socbench binary calls
//! [`left_behind`] as it starts, which writes back each setting whose holders have all died
//! and says so in one line per setting, so a pinned clock never outlives its run unnoticed.

use crate::claim::{Recovered, recover_stale};
use crate::error::{printable, shown};

/// The line that says what was written back: `TOOL: restored PATH to VALUE (left at VALUE by
/// pid N, which ended without writing it back)`.
pub fn line(tool: &str, r: &Recovered) -> String {
    let pids: Vec<String> = r.holders.iter().map(u32::to_string).collect();
    let who = match pids.as_slice() {
        [one] => format!("pid {one}, which ended"),
        more => format!("pids {}, which ended", more.join(", ")),
    };
    let what = if r.written {
        format!("restored {} to {}", shown(&r.path), printable(&r.original))
    } else {
        format!(
            "could not restore {} to {} (it cannot be written now)",
            shown(&r.path),
            printable(&r.original)
        )
    };
    format!(
        "{tool}: {what} (left at {} by {who} without writing it back)",
        printable(&r.left)
    )
}

/// Writes back every setting a dead socbench process left changed and says so on stderr;
/// what was done.
pub fn left_behind(tool: &str) -> Vec<Recovered> {
    let done = recover_stale();
    for r in &done {
        crate::errln!("{}", line(tool, r));
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_file_both_values_and_the_dead_holder() {
        let r = Recovered {
            path: "/sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq".into(),
            original: "2265600".into(),
            left: "1190000".into(),
            holders: vec![4242],
            written: true,
        };
        assert_eq!(
            line("dhry", &r),
            "dhry: restored /sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq to 2265600 (left at 1190000 by pid 4242, which ended without writing it back)"
        );
        let failed = Recovered {
            written: false,
            holders: vec![1, 2],
            ..r
        };
        assert!(line("benchmp", &failed).contains("could not restore"));
        assert!(line("benchmp", &failed).contains("pids 1, 2, which ended"));
    }
}
