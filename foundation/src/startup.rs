//! What every socbench binary does before anything else, so a hostile environment gets a
//! status and a line instead of a silent death or a lost result:
//!
//! - SIGXFSZ is ignored: past the file-size limit (`ulimit -f`) a write fails with EFBIG and
//!   the command says so (exit 1, naming the limit) instead of dying of the signal;
//! - the standard streams are checked: a stdout or stderr closed when the process started
//!   (`>&-`) would lose the result or the notes without a word (the standard library puts
//!   `/dev/null` there before `main`), so the command ends before it measures anything
//!   (exit 1; said on stderr when that one is open). A closed stdin needs nothing: it reads
//!   as empty.

/// Which standard stream a command found closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// Descriptor 1.
    Stdout,
    /// Descriptor 2.
    Stderr,
}

/// The first of stdout and stderr that was closed when the process started, if any.
pub fn closed_stream() -> Option<Closed> {
    if crate::sys::closed_at_start(1) {
        Some(Closed::Stdout)
    } else if crate::sys::closed_at_start(2) {
        Some(Closed::Stderr)
    } else {
        None
    }
}

/// Prepares the process as described above; `tool` names it in the line a closed stdout
/// gets. Ends the process (exit 1) when stdout or stderr was closed.
pub fn prepare(tool: &str) {
    crate::sys::ignore_file_size_signal();
    match closed_stream() {
        None => {}
        Some(Closed::Stdout) => {
            crate::errln!(
                "{tool}: stdout is closed: what the command writes there would be lost; give it a file or /dev/null"
            );
            std::process::exit(crate::exit_code::FAILED);
        }
        // Nothing can be said: stderr is where it would go.
        Some(Closed::Stderr) => std::process::exit(crate::exit_code::FAILED),
    }
}
