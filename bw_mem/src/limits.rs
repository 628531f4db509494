//! Refusing sizes the machine cannot hold, before any child is forked.
//!
//! Every child maps its own buffers: `nbytes`, plus `nbytes + 2048` for the copies. A size
//! beyond what the machine has would otherwise end in the OOM killer or a swap storm halfway
//! through a run; it is a usage error (exit 2) instead, and missing huge pages are reported
//! by benchmp (exit 3) before forking.

use benchmp::sys::mem::MemoryNeed;

use crate::ops::{Op, SECOND_BUFFER_SLACK};

/// What `parallel` children of `op` at `nbytes` will map, for benchmp's memory check.
pub fn need(op: Op, nbytes: u64, parallel: usize, pages: benchmp::Pages) -> MemoryNeed {
    let mut buffers = vec![nbytes];
    if op.uses_second_buffer() {
        buffers.push(nbytes.saturating_add(SECOND_BUFFER_SLACK as u64));
    }
    MemoryNeed {
        size_bytes: nbytes,
        buffers,
        children: parallel,
        pages,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchmp::Pages;

    #[test]
    fn copies_and_children_are_counted() {
        let gib = 1u64 << 30;
        let fits = |op, size, p| need(op, size, p, Pages::Small).check_against(Some(8 * gib));
        assert!(fits(Op::Rd, 6 * gib, 1).is_ok());
        assert!(fits(Op::Rd, 6 * gib, 2).is_err());
        assert!(fits(Op::Cp, 6 * gib, 1).is_err());
        assert!(fits(Op::Rd, u64::MAX, 1).is_err());
        assert!(
            need(Op::Rd, u64::MAX, 1, Pages::Small)
                .check_against(None)
                .is_ok()
        );
    }

    #[test]
    fn copies_map_a_second_buffer_with_the_conflict_slack() {
        let mib = 1u64 << 20;
        assert_eq!(need(Op::Rd, 3 * mib, 1, Pages::Huge).buffers, vec![3 * mib]);
        assert_eq!(
            need(Op::Bcopy, 2 * mib, 2, Pages::Huge).buffers,
            vec![2 * mib, 2 * mib + 2048]
        );
    }
}
