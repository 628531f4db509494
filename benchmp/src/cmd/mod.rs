//! The `benchmp` binary's commands, one module each: its options and the `run` that
//! `main` dispatches to.

/// `println!` that fails with an error (exit 1) instead of panicking when stdout cannot be
/// written (a full disk, `> /dev/full`, a closed pipe). Defined before the modules so every
/// one of them can use it.
macro_rules! outln {
    ($($arg:tt)*) => {
        benchmp::cli::write_stdout(&format!("{}\n", format_args!($($arg)*)))?
    };
}

pub mod ab;
pub mod calibrate;
pub mod compare;
pub mod efficiency;
pub mod outdir;
pub mod overhead;
pub mod power;
pub mod power_args;
pub mod probe;
pub mod suite;
pub mod summary;
pub mod topology;

/// Parses a false-alarm rate (`--alpha`): a probability above 0 and below 1.
fn probability(s: &str) -> Result<f64, String> {
    // Below 1e-9 no run of socbench's could ever reach a verdict (the intervals it asks for
    // need more units than any comparison takes), and the rate prints as hundreds of digits.
    match s.trim().parse::<f64>() {
        Ok(p) if (1e-9..1.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "'{s}' is not a false-alarm rate from 1e-9 up to (not including) 1"
        )),
    }
}
