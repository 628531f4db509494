//! lmbench's result arithmetic as pure functions: the sorted sample array, its median with the
//! odd/even rule, its minimum, and plain descriptive statistics for run quality.
//!
//! lmbench keeps `(n, u)` pairs (iterations, time) sorted by time per iteration, slowest first;
//! pairs with `u == 0` are dropped. The median of an even count averages the two middle pairs
//! component-wise with integer division. socbench keeps `u` in nanoseconds instead of
//! microseconds; the rules are otherwise the same (lmbench `lib_timing.c`, insertsort,
//! save_median, save_minimum).

use crate::schema::Pair;

/// True when `a` is strictly faster per iteration than `b` (u_a/n_a < u_b/n_b), exactly.
fn faster(a: Pair, b: Pair) -> bool {
    (a.u as u128) * (b.n as u128) < (b.u as u128) * (a.n as u128)
}

/// Inserts `p` into `sorted` (slowest per iteration first) as lmbench's insertsort does: before
/// the first entry that is strictly faster, so ties keep arrival order. `u == 0` is dropped.
fn insert_sorted(sorted: &mut Vec<Pair>, p: Pair) {
    if p.u == 0 {
        return;
    }
    let pos = sorted
        .iter()
        .position(|&e| faster(e, p))
        .unwrap_or(sorted.len());
    sorted.insert(pos, p);
}

/// Builds lmbench's sorted array from samples in arrival order.
pub fn sorted_pairs(pairs: impl IntoIterator<Item = Pair>) -> Vec<Pair> {
    let mut v = Vec::new();
    for p in pairs {
        insert_sorted(&mut v, p);
    }
    v
}

/// lmbench's median of a sorted array: empty gives (1, 0); odd takes the middle entry; even
/// averages the two middle entries' n and u separately, in integer division.
pub fn median(sorted: &[Pair]) -> Pair {
    let len = sorted.len();
    if len == 0 {
        return Pair { n: 1, u: 0 };
    }
    let i = len / 2;
    if len % 2 == 1 {
        sorted[i]
    } else {
        let (a, b) = (sorted[i - 1], sorted[i]);
        Pair {
            n: ((a.n as u128 + b.n as u128) / 2) as u64,
            u: ((a.u as u128 + b.u as u128) / 2) as u64,
        }
    }
}

/// lmbench's minimum: the fastest entry (the last of the sorted array); empty gives (1, 0).
pub fn minimum(sorted: &[Pair]) -> Pair {
    sorted.last().copied().unwrap_or(Pair { n: 1, u: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(n: u64, u: u64) -> Pair {
        Pair { n, u }
    }
    #[test]
    fn sorts_slowest_first_and_drops_zero() {
        let s = sorted_pairs([p(10, 100), p(10, 300), p(1, 0), p(10, 200)]);
        assert_eq!(s, vec![p(10, 300), p(10, 200), p(10, 100)]);
    }

    #[test]
    fn ties_keep_arrival_order() {
        // 20/10 and 40/20 have the same ratio: the first to arrive stays first.
        let s = sorted_pairs([p(10, 20), p(20, 40), p(5, 50)]);
        assert_eq!(s, vec![p(5, 50), p(10, 20), p(20, 40)]);
    }

    #[test]
    fn median_odd_takes_middle() {
        let s = sorted_pairs([p(1, 5), p(1, 1), p(1, 3), p(1, 4), p(1, 2)]);
        assert_eq!(median(&s), p(1, 3));
    }

    #[test]
    fn median_even_averages_components_with_integer_division() {
        // Sorted: (3,31) ratio 10.3, (2,15) 7.5, (4,20) 5, (1,4) 4 -> middle (2,15),(4,20).
        let s = sorted_pairs([p(4, 20), p(1, 4), p(3, 31), p(2, 15)]);
        assert_eq!(s, vec![p(3, 31), p(2, 15), p(4, 20), p(1, 4)]);
        assert_eq!(median(&s), p(3, 17)); // (2+4)/2 = 3, (15+20)/2 = 17 (truncated)
    }

    #[test]
    fn median_of_eleven_is_sixth_slowest() {
        let s = sorted_pairs((1..=11).map(|u| p(1, u * 10)));
        assert_eq!(median(&s), p(1, 60));
    }

    #[test]
    fn empty_median_and_minimum() {
        assert_eq!(median(&[]), p(1, 0));
        assert_eq!(minimum(&[]), p(1, 0));
    }

    #[test]
    fn minimum_is_fastest() {
        let s = sorted_pairs([p(2, 30), p(1, 10), p(4, 20)]);
        assert_eq!(minimum(&s), p(4, 20));
    }
}
