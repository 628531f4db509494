//! A tool binary's `main`, the same in every tool: its arguments parsed (with the examples the
//! contract test runs), logging set up as its `--trace` asks, then its run, whose exit status
//! ends the process, or whose error is reported as one `tool: ...` line with the status its
//! class names ([`crate::cli::report_error`]).

use crate::cli::{self, Example};

/// Parses `T`, starts logging (`trace`: whether the arguments ask for a trace), runs `run`
/// and exits with its status, or with its error's.
pub fn main<T: clap::Parser>(
    tool: &str,
    examples: &[Example],
    trace: impl FnOnce(&T) -> bool,
    run: impl FnOnce(T) -> anyhow::Result<i32>,
) -> ! {
    let args: T = cli::parse(examples);
    cli::init_logging(trace(&args));
    let code = match run(args) {
        Ok(code) => code,
        Err(e) => cli::report_error(tool, &e),
    };
    cli::exit(code)
}
