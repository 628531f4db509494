//! `ftrace`: capture a systrace-format trace around a command, convert it for Perfetto and
//! chrome://tracing, write markers from scripts, and time a marker write.
//!
//! Exit status: 0 ok; 1 failed (trace invalid or empty, a setting not restored, a result that
//! cannot be written to stdout, a resource limit such as a full disk); 2 usage or setup error (bad arguments, not root, tracefs not
//! mounted, unknown event, buffer refused, a command that cannot run, an output file that
//! cannot be written, another capture running); 3 the kernel has no tracefs.
//! `record` otherwise ends with its command's status (128 + N after signal N). Every error is
//! one line on stderr starting `ftrace: `.

use std::process::ExitCode;

use anyhow::Result;
use clap::builder::Styles;
use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};

use foundation::error::printable;
use ftrace::exit_code;

use cli::{Cli, Command, usage_line};
use cmd::Usage;

mod cli;
mod cmd;

/// How the contract test runs each command (foundation::contract::Example).
const EXAMPLES: &[foundation::contract::Example] = &[
    foundation::contract::Example {
        command: "record",
        quick: "record -o {tmp}/trace.txt -- true",
        long: "record -o {tmp}/trace.txt -- sleep 1000",
    },
    foundation::contract::Example {
        command: "convert",
        quick: "convert --json {repo}/ftrace/tests/fixtures/tgid.txt {tmp}/trace.json",
        long: "",
    },
    foundation::contract::Example {
        command: "mark",
        quick: "mark --marker /dev/null begin phase counter n 4 end",
        long: "mark --marker /dev/null begin phase sleep 1000000 end",
    },
    foundation::contract::Example {
        command: "bench-marker",
        quick: "bench-marker --calls 10 --rounds 1",
        long: "bench-marker --calls 1000000000 --rounds 1000",
    },
];

fn main() -> ExitCode {
    foundation::startup::prepare("ftrace");
    let cli = match parse_args() {
        Ok(cli) => cli,
        Err(err)
            if matches!(
                err.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
            ) =>
        {
            let _ = err.print();
            return ExitCode::from(exit_code::OK as u8);
        }
        Err(err) => {
            foundation::errln!("ftrace: {}", usage_line(&err));
            return ExitCode::from(exit_code::USAGE as u8);
        }
    };
    foundation::restore::left_behind("ftrace");
    let code = match run(cli) {
        Ok(code) => code,
        Err(err) => {
            let own = err.downcast_ref::<ftrace::Error>();
            let limit = foundation::error::Limit::in_chain(err.as_ref())
                .filter(|_| own.is_none_or(|e| e.exit_code() == exit_code::FAILED));
            let named = limit.map(|l| format!(" ({l})")).unwrap_or_default();
            foundation::errln!("ftrace: {}{named}", printable(&message(&err)));
            if let Some(e) = own {
                e.exit_code()
            } else if limit.is_some() {
                exit_code::FAILED
            } else if err.downcast_ref::<Usage>().is_some() {
                exit_code::USAGE
            } else {
                exit_code::FAILED
            }
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The command line, parsed without styles: a usage message is then clap's text exactly,
/// with any escape character of the user's arguments still there to be shown escaped.
fn parse_args() -> Result<Cli, clap::Error> {
    foundation::contract::print_spec_if_asked(&Cli::command(), EXAMPLES);
    let matches = Cli::command().styles(Styles::plain()).try_get_matches()?;
    Cli::from_arg_matches(&matches)
}

/// The error and its causes on one line; ftrace errors already name their cause.
fn message(err: &anyhow::Error) -> String {
    let mut parts = Vec::new();
    for cause in err.chain() {
        parts.push(cause.to_string());
        if cause.is::<ftrace::Error>() {
            break;
        }
    }
    parts.join(": ")
}

fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Record(args) => cmd::record(args),
        Command::Convert(args) => cmd::convert(args),
        Command::Mark(args) => cmd::mark(args),
        Command::BenchMarker(args) => cmd::bench_marker(&args),
    }
}
