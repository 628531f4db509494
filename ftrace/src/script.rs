//! `ftrace mark`: write a sequence of markers from one process, optionally repeated in forked
//! children, for shell scripts and for checking a capture end to end.
//!
//! Operations: `begin NAME`, `end`, `counter NAME VALUE`, `instant NAME`, `sleep MS`.
//! A slice must begin and end in the same process (viewers pair B and E per thread), which is
//! why one invocation takes a whole sequence.

use std::thread;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::wait::{WaitStatus, waitpid};

use crate::marker::{Kind, Marker};
use crate::sys;

/// One marker operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `begin NAME`
    Begin(String),
    /// `end`
    End,
    /// `counter NAME VALUE`
    Counter(String, i64),
    /// `instant NAME`
    Instant(String),
    /// `sleep MS`
    Sleep(u64),
}

/// Parses words such as `begin outer counter n 4 end` into operations.
pub fn parse_ops<S: AsRef<str>>(words: &[S]) -> Result<Vec<Op>, String> {
    let mut ops = Vec::new();
    let mut words = words.iter().map(AsRef::as_ref);
    while let Some(word) = words.next() {
        let mut arg = |what: &str| {
            words
                .next()
                .map(str::to_string)
                .ok_or_else(|| format!("`{word}` needs {what}"))
        };
        let op = match word {
            "begin" | "b" => Op::Begin(arg("a NAME")?),
            "end" | "e" => Op::End,
            "instant" | "i" => Op::Instant(arg("a NAME")?),
            "counter" | "c" => {
                let name = arg("a NAME and a VALUE")?;
                let value = arg("a VALUE")?;
                let value = value
                    .parse()
                    .map_err(|_| format!("counter value {value:?} is not an integer"))?;
                Op::Counter(name, value)
            }
            "sleep" => {
                let ms = arg("milliseconds")?;
                Op::Sleep(
                    ms.parse()
                        .map_err(|_| format!("sleep {ms:?} is not a whole number of ms"))?,
                )
            }
            other => {
                return Err(format!(
                    "unknown operation {other:?} (expected begin, end, counter, instant or sleep)"
                ));
            }
        };
        ops.push(op);
    }
    Ok(ops)
}

/// Writes the operations in order; stops at the first write that fails for another reason
/// than tracing being off (EBADF), and returns that error.
pub fn run_ops(marker: &Marker, ops: &[Op]) -> Result<(), Errno> {
    for op in ops {
        let written = match op {
            Op::Begin(name) => marker.try_emit(Kind::Begin, name),
            Op::End => marker.try_emit(Kind::End, ""),
            Op::Counter(name, value) => marker.try_emit(Kind::Counter(*value), name),
            Op::Instant(name) => marker.try_emit(Kind::Instant, name),
            Op::Sleep(ms) => {
                thread::sleep(Duration::from_millis(*ms));
                Ok(0)
            }
        };
        match written {
            Ok(_) | Err(Errno::EBADF) => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// Runs the operations in `children` forked processes at once (sharing `marker`'s descriptor,
/// as benchmark children do) and waits for them; returns their pids, or ECHILD when a child
/// failed. The process must be single-threaded.
pub fn run_in_children(marker: &Marker, ops: &[Op], children: usize) -> nix::Result<Vec<i32>> {
    let mut pids = Vec::with_capacity(children);
    for _ in 0..children {
        let pid = sys::fork_and_run(|| i32::from(run_ops(marker, ops).is_err()))?;
        pids.push(pid);
    }
    let mut failed = false;
    for pid in &pids {
        match waitpid(*pid, None)? {
            WaitStatus::Exited(_, 0) => {}
            _ => failed = true,
        }
    }
    if failed {
        return Err(nix::errno::Errno::ECHILD);
    }
    Ok(pids.into_iter().map(|p| p.as_raw()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sequences() {
        let ops = parse_ops(&[
            "begin", "outer x", "c", "n", "-4", "instant", "i", "sleep", "1", "end",
        ])
        .unwrap();
        assert_eq!(
            ops,
            vec![
                Op::Begin("outer x".into()),
                Op::Counter("n".into(), -4),
                Op::Instant("i".into()),
                Op::Sleep(1),
                Op::End
            ]
        );
        assert!(parse_ops(&["begin"]).unwrap_err().contains("needs a NAME"));
        assert!(
            parse_ops(&["counter", "n", "x"])
                .unwrap_err()
                .contains("not an integer")
        );
        assert!(
            parse_ops(&["jump"])
                .unwrap_err()
                .contains("unknown operation")
        );
        assert!(parse_ops::<&str>(&[]).unwrap().is_empty());
    }

    #[test]
    fn a_failed_write_stops_the_sequence() {
        let ops = parse_ops(&["begin", "x", "end"]).unwrap();
        let full = Marker::open("/dev/full").unwrap();
        assert_eq!(run_ops(&full, &ops), Err(Errno::ENOSPC));
        // Tracing off (EBADF, here a read-only descriptor) is not a failure.
        let read_only = std::fs::File::open("/dev/null").unwrap();
        assert_eq!(run_ops(&Marker::from_fd(read_only.into()), &ops), Ok(()));
        assert_eq!(run_ops(&Marker::disabled(), &ops), Ok(()));
    }
}
