//! From lmbench's positional arguments (`<size> <what> [conflict]`, or `<what> [conflict]`
//! with `--sweep`) to what will be measured, with lmbench's rules and one-line errors.

use benchmp::{Usage, parse_size};

use crate::Error;
use crate::ops::Op;
use crate::sweep::{self, MIN_SIZE};

/// What one run measures.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The operation.
    pub op: Op,
    /// Size arguments in bytes, one measurement each (one size unless sweeping).
    pub sizes: Vec<u64>,
    /// lmbench's third argument: copy destination 1920 bytes into the second buffer.
    pub conflict: bool,
    /// True for `--sweep`.
    pub sweep: bool,
}

fn op_named(name: &str) -> Result<Op, Usage> {
    Op::parse(name).ok_or_else(|| {
        Usage(format!(
            "unknown operation '{name}': use one of {}",
            Op::names()
        ))
    })
}

/// Reads the positional arguments. Without a sweep: exactly `<size> <what> [conflict]`, size
/// at least 512 (lmbench's rule); with `--sweep FROM..TO` (and `step`): `<what> [conflict]`.
pub fn plan(args: &[String], sweep_range: Option<&str>, step: f64) -> Result<Plan, Error> {
    match sweep_range {
        None => {
            if !(2..=3).contains(&args.len()) {
                return Err(Usage(format!(
                    "expected <size> <what> [conflict], got {} argument{} (see --help)",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" }
                ))
                .into());
            }
            let size = parse_size(&args[0])?;
            if size < MIN_SIZE {
                return Err(Usage(format!(
                    "size {size} is below {MIN_SIZE} bytes, the unrolled chunk (lmbench's minimum)"
                ))
                .into());
            }
            Ok(Plan {
                op: op_named(&args[1])?,
                sizes: vec![size],
                conflict: args.len() == 3,
                sweep: false,
            })
        }
        Some(range) => {
            if !(1..=2).contains(&args.len()) {
                return Err(Usage(format!(
                    "with --sweep give <what> [conflict], got {} argument{}",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" }
                ))
                .into());
            }
            let (from, to) = sweep::parse_range(range)?;
            Ok(Plan {
                op: op_named(&args[0])?,
                sizes: sweep::sizes(from, to, step)?,
                conflict: args.len() == 2,
                sweep: true,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn code(e: Error) -> i32 {
        benchmp::cli::exit_code_by(&e, &[benchmp::error::probe::<Error>])
    }

    #[test]
    fn lmbench_arguments() {
        let p = plan(&a(&["64m", "rd"]), None, 2.0).unwrap();
        assert_eq!(
            (p.op, p.sizes.clone(), p.conflict),
            (Op::Rd, vec![64 << 20], false)
        );
        let p = plan(&a(&["8k", "bcopy", "anything"]), None, 2.0).unwrap();
        assert!(p.conflict, "any third word selects the conflict layout");
        let p = plan(&a(&["512", "mix3_1"]), None, 2.0).unwrap();
        assert_eq!(p.sizes, vec![512]);
    }

    #[test]
    fn bad_arguments_are_usage_errors() {
        for bad in [
            &["0", "rd"][..],
            &["511", "rd"],
            &["12q", "rd"],
            &["64m", "read"],
            &["64m", "RD"],
            &["64m"],
            &["64m", "rd", "conflict", "more"],
        ] {
            let e = plan(&a(bad), None, 2.0).unwrap_err();
            assert_eq!(code(e), 2, "{bad:?}");
        }
        let e = plan(&a(&["64m", "nope"]), None, 2.0).unwrap_err();
        assert!(
            e.to_string()
                .contains("rd wr rdwr cp fwr frd fcp bzero bcopy")
        );
    }

    #[test]
    fn sweep_arguments() {
        let p = plan(&a(&["frd"]), Some("4k..64k"), 2.0).unwrap();
        assert_eq!(p.sizes, vec![4096, 8192, 16384, 32768, 65536]);
        assert!(p.sweep && !p.conflict);
        let p = plan(&a(&["cp", "conflict"]), Some("4k..4k"), 2.0).unwrap();
        assert!(p.conflict);
        assert_eq!(
            code(plan(&a(&["64m", "rd"]), Some("4k..8k"), 2.0).unwrap_err()),
            2
        );
        assert_eq!(code(plan(&a(&[]), Some("4k..8k"), 2.0).unwrap_err()), 2);
        assert_eq!(
            code(plan(&a(&["rd"]), Some("100..8k"), 2.0).unwrap_err()),
            2
        );
    }
}
