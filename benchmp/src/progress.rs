//! Progress for long runs, on stderr and only when stderr is a terminal (never in logs or pipes).

use std::io::{IsTerminal, Write};

/// A one-line progress indicator (`[3/107] 64K`), redrawn in place.
#[derive(Debug)]
pub struct Progress {
    total: usize,
    done: usize,
    enabled: bool,
    label: String,
}

impl Progress {
    /// A progress line for `total` steps; silent unless stderr is a TTY.
    pub fn new(label: &str, total: usize) -> Progress {
        Progress {
            total,
            done: 0,
            enabled: std::io::stderr().is_terminal(),
            label: label.to_string(),
        }
    }

    /// Marks the start of the next step, described by `what`.
    pub fn step(&mut self, what: &str) {
        self.done += 1;
        if self.enabled {
            let mut e = std::io::stderr().lock();
            let _ = write!(
                e,
                "\r\x1b[2K{} [{}/{}] {what}",
                self.label, self.done, self.total
            );
            let _ = e.flush();
        }
    }

    /// Clears the line.
    pub fn finish(&mut self) {
        if self.enabled {
            clear_line();
            self.enabled = false;
        }
    }
}

/// Clears the progress line on a terminal's stderr (for output that interleaves with it);
/// does nothing when stderr is not a terminal.
pub fn clear_line() {
    let mut e = std::io::stderr().lock();
    if e.is_terminal() {
        let _ = write!(e, "\r\x1b[2K");
        let _ = e.flush();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
