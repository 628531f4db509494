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
pub mod overhead;
pub mod probe;
pub mod suite;
pub mod summary;
pub mod topology;

/// Parses a false-alarm rate (`--alpha`): a probability above 0 and below 1.
fn probability(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(p),
        _ => Err(format!("'{s}' is not a probability between 0 and 1")),
    }
}
