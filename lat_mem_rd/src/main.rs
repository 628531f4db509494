//! socbench `lat_mem_rd`: arguments and output around [`lat_mem_rd::measure::run`].

use anyhow::Result;
use benchmp::cli::Stream;
use lat_mem_rd::cli::Cli;
use lat_mem_rd::measure::{self, TOOL};
use lat_mem_rd::text::{self, Printer};
use lat_mem_rd::{c2c, config, loaded};

/// How the contract test runs lat_mem_rd (benchmp::cli::Example).
const EXAMPLES: &[benchmp::cli::Example] = &[benchmp::cli::Example {
    command: "",
    quick: "-N 1 --enough-floor 1000 --max 1k 1 64",
    long: "-t --json={tmp}/out.json --md={tmp}/out.md 256m 64",
}];

fn main() {
    benchmp::tool::main(
        TOOL,
        EXAMPLES,
        &[benchmp::error::probe::<lat_mem_rd::Error>],
        |c: &Cli| c.output.trace,
        run,
    )
}

fn run(mut cli: Cli) -> Result<i32> {
    // lmbench's stream, so lmbench's own harness (which keeps only stderr) finds every line.
    cli.output = cli.output.results_on(Stream::Stderr);
    cli.output.check()?;
    // --c2c and --loaded are not lmbench outputs: they do not take lmbench's stream.
    if cli.c2c {
        let output = cli.output.results_on(Stream::Stdout);
        return Ok(c2c::run(&cli.placement, &cli.timing, &output)?);
    }
    if cli.loaded {
        // One chaser measures; the load children are --load-cpus. A -P it would ignore is
        // refused rather than dropped.
        if let Some(n) = cli.placement.parallel.filter(|&n| n > 1) {
            return Err(benchmp::Usage(format!(
                "--loaded runs one chaser: -P {n} does not apply (the load runs on --load-cpus)"
            ))
            .into());
        }
        let pages = cli.pages();
        let output = cli.output.results_on(Stream::Stdout);
        let len = cli.len.unwrap_or(0);
        let stride = loaded::stride(len, &cli.strides)?;
        let floor = cli.enough_floor.unwrap_or(config::ENOUGH_FLOOR_US);
        let req = cli.load.request(len, stride, pages, floor, cli.seed);
        return Ok(loaded::run(&req, &cli.placement, &cli.timing, &output)?);
    }
    let sweep = config::check(&cli.request(), config::system_page_size())?;
    let printer = Printer {
        on: cli.output.text_mode(),
        to: cli.output.result_stream(),
        explicit: sweep.explicit_strides,
    };
    let finished = measure::run(
        &sweep,
        &cli.placement,
        &cli.timing,
        &cli.output,
        cli.mhz,
        |e| printer.event(e),
    )?;
    let code = benchmp::emit(&finished.report, &cli.output, |_| String::new())?;
    let notes = cli.output.note_stream();
    if cli.summary || notes.is_terminal() {
        let _ = notes.write(&text::summary_text(&finished.summaries));
    }
    Ok(code)
}
