//! A tool binary's `main`, the same in every tool: its arguments parsed (with the examples the
//! contract test runs), logging set up as its `--trace` asks, then its run, whose exit status
//! ends the process, or whose error is reported as one `tool: ...` line with the status its
//! class names ([`crate::cli::report_error`]).

use crate::cli::{self, Example};
use crate::error::ExitProbe;

/// Parses `T`, starts logging (`trace`: whether the arguments ask for a trace), runs `run`
/// and exits with its status, or with its error's. `E` is any error that shows itself as a
/// `dyn Error` (a binary's `anyhow::Error`, a boxed library error; not a box of an `anyhow`
/// error, which hides the types in its chain); `probes` recognise the tool's own error types
/// in it, as the framework's are ([`crate::cli::report_error_by`]).
pub fn main<T, E>(
    tool: &str,
    examples: &[Example],
    probes: &[ExitProbe],
    trace: impl FnOnce(&T) -> bool,
    run: impl FnOnce(T) -> Result<i32, E>,
) -> !
where
    T: clap::Parser,
    E: std::ops::Deref<Target = dyn std::error::Error + Send + Sync + 'static>,
{
    let args: T = cli::parse(examples);
    cli::init_logging(trace(&args));
    let code = match run(args) {
        Ok(code) => code,
        Err(e) => cli::report_error_by(tool, &*e, probes),
    };
    cli::exit(code)
}
