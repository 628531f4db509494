//! socbench `dto`: functional checks and A/B latency comparison of memcpy, memmove, memset and
//! memcmp implementations. See README.md.

use std::time::Duration;

use benchmp::cli::write_stdout;

use dto::bench::{Config, ab_configs, speedup_configs};
use dto::cli::{Cli, Cmd, Common};
use dto::impls::Listing;
use dto::report::{Mode, sorted_json};
use dto::run::perf;
use dto::text;

/// How the contract test runs each dto command (benchmp::cli::Example).
const EXAMPLES: &[benchmp::cli::Example] = &[
    benchmp::cli::Example {
        command: "list",
        quick: "list",
        long: "",
    },
    benchmp::cli::Example {
        command: "check",
        quick: "check --impl cpu --threads 1",
        long: "check --impl cpu --threads 2",
    },
    benchmp::cli::Example {
        command: "ab",
        quick: "PERF_ITERS=10 PERF_AB_ROUNDS=1 ab --baseline cpu --current cpu --only memcpy_4k --pages 4k",
        long: "PERF_ITERS=1000000 ab --baseline cpu --current cpu --json={tmp}/out.json",
    },
    benchmp::cli::Example {
        command: "speedup",
        quick: "PERF_ITERS=10 PERF_AB_ROUNDS=1 speedup --only memcpy_4k --pages 4k",
        long: "PERF_ITERS=1000000 speedup --json={tmp}/out.json",
    },
];

fn main() {
    let trace = |cli: &Cli| match &cli.cmd {
        Cmd::Ab { common, .. } | Cmd::Speedup { common, .. } => common.output.trace,
        _ => false,
    };
    benchmp::tool::main(
        "dto",
        EXAMPLES,
        &[benchmp::error::probe::<dto::Error>],
        trace,
        run_cli,
    )
}

/// A boxed error keeps its type for the probes (a box of `dto::Error`, of a framework error).
type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn run_cli(cli: Cli) -> Result<i32, BoxError> {
    match cli.cmd {
        Cmd::List { json } => {
            let listing = Listing::here();
            write_stdout(&if json {
                sorted_json(&listing)?
            } else {
                text::listing(&listing)
            })?;
            Ok(benchmp::EXIT_OK)
        }
        Cmd::Check {
            imp,
            threads,
            env,
            timeout,
            json,
        } => {
            let timeout = Duration::from_secs(timeout);
            Ok(dto::checkrun::check(
                &imp,
                threads as usize,
                &env,
                timeout,
                json,
            )?)
        }
        Cmd::Ab {
            baseline,
            current,
            label,
            no_cpu,
            common: c,
        } => {
            let configs = ab_configs(baseline, current, label, no_cpu, &c.env);
            measure(Mode::Ab, configs, c)
        }
        Cmd::Speedup { imps, common: c } => {
            let configs = speedup_configs(imps, &c.env);
            measure(Mode::Speedup, configs, c)
        }
    }
}

/// `dto ab` and `dto speedup`: `configs` measured as `c` asks.
fn measure(mode: Mode, configs: Vec<Config>, c: Common) -> Result<i32, BoxError> {
    Ok(perf(
        mode,
        configs,
        c.only,
        c.pages,
        &c.placement,
        &c.output,
    )?)
}
