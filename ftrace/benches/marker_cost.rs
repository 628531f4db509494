//! Cost of one trace_marker write in ns, with tracing on and off, next to a null syscall timed
//! in the same run. Run with `cargo bench -p ftrace --bench marker_cost` (as root for the
//! tracefs rows; `ftrace bench-marker` prints the same on a device).
#![allow(clippy::disallowed_macros)] // a build script, test or bench prints to its runner

fn main() {
    const CALLS: usize = 2000;
    const ROUNDS: usize = 21;
    match ftrace::bench::measure(CALLS, ROUNDS) {
        Ok(report) => print!("{}", ftrace::bench::render(&report, CALLS, ROUNDS)),
        Err(err) => {
            eprintln!("marker_cost: {err}");
            std::process::exit(err.exit_code());
        }
    }
}
