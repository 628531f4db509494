//! The one way every socbench binary writes to its terminal streams. `print!` and `eprint!`
//! panic when a stream cannot be written (`> /dev/full`, a closed pipe, a full disk), which
//! turns any exit status into 101; here a failed write to stdout is an error the caller ends
//! with (exit 1, said on stderr), and a failed write to stderr is dropped, since stderr is
//! where it would have been said. The workspace's `clippy.toml` forbids the std macros.

use std::fmt;
use std::io::{self, Write};

/// Writes `text` to stdout and flushes it; the error (a closed pipe, a full disk) is the
/// caller's to end with.
pub fn out(text: &str) -> io::Result<()> {
    let mut o = io::stdout().lock();
    o.write_all(text.as_bytes()).and_then(|()| o.flush())
}

/// Writes formatted text to stdout and flushes it ([`out`]).
pub fn out_fmt(args: fmt::Arguments<'_>) -> io::Result<()> {
    let mut o = io::stdout().lock();
    o.write_fmt(args).and_then(|()| o.flush())
}

/// Writes `text` to stderr. A failure is dropped: there is no stream left to say it on.
pub fn err(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// Writes formatted text to stderr ([`err`]).
pub fn err_fmt(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// `eprintln!` that never panics: one line on stderr, dropped when stderr cannot be written.
#[macro_export]
macro_rules! errln {
    () => {
        $crate::console::err("\n")
    };
    ($($arg:tt)*) => {
        $crate::console::err_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `println!` that never panics: evaluates to the [`std::io::Result`] of writing the line to
/// stdout and flushing it.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::console::out("\n")
    };
    ($($arg:tt)*) => {
        $crate::console::out_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}
