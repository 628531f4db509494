//! The messages `coremark` writes on stderr around its report: progress while it sizes and
//! times the run (on a terminal only), a retimed run, and why a result is not valid. The
//! reference's report itself is [`crate::report::Report::text`].

use crate::report::Report;
use crate::timing::{MAX_ATTEMPTS, MIN_VALID_SECONDS};

/// Before the reference's automatic count is chosen.
pub const CHOOSING: &str =
    "coremark: choosing the iteration count (runs of 10, 100, ... iterations)\n";

/// Before the timed runs.
pub fn timing(iterations: u32, contexts: usize) -> String {
    format!("coremark: timing {iterations} iterations in each of {contexts} context(s)\n")
}

/// A run too short to be valid, timed again with `iterations` (attempt `attempt`).
pub fn again(shortest_s: f64, iterations: u32, attempt: u32) -> String {
    format!(
        "coremark: the timed run lasted {shortest_s:.3} s, under the {MIN_VALID_SECONDS} s needed; timing {iterations} iterations again (attempt {attempt} of {})\n",
        MAX_ATTEMPTS
    )
}

/// Why `report`'s result is not valid, in one line.
pub fn not_valid(report: &Report) -> String {
    format!(
        "coremark: result not valid: {}\n",
        report.problems().join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_as_before() {
        assert_eq!(
            timing(3000, 2),
            "coremark: timing 3000 iterations in each of 2 context(s)\n"
        );
        assert_eq!(
            again(8.25, 4363, 2),
            "coremark: the timed run lasted 8.250 s, under the 10 s needed; timing 4363 iterations again (attempt 2 of 3)\n"
        );
    }
}
