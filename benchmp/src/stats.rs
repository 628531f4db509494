//! lmbench's result arithmetic as pure functions: the sorted sample array, its median with the
//! odd/even rule, its minimum, and plain descriptive statistics for run quality.
//!
//! lmbench keeps `(n, u)` pairs (iterations, time) sorted by time per iteration, slowest first;
//! pairs with `u == 0` are dropped. The median of an even count averages the two middle pairs
//! component-wise with integer division. socbench keeps `u` in nanoseconds instead of
//! microseconds; the rules are otherwise the same (lmbench `lib_timing.c`, insertsort,
//! save_median, save_minimum).

use serde::{Deserialize, Serialize};

/// One timed interval: `n` iterations took `u` nanoseconds (after overhead subtraction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pair {
    /// Iterations run in the interval.
    pub n: u64,
    /// Net time of the interval in nanoseconds.
    pub u: u64,
}

impl Pair {
    /// Time per iteration in nanoseconds (0 when `n` is 0).
    pub fn per_iteration_ns(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.u as f64 / self.n as f64
        }
    }
}

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

/// Descriptive statistics of per-iteration times, for run-quality reporting.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Number of values.
    pub count: usize,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for fewer than two values.
    pub stddev: f64,
    /// stddev / mean; 0 when the mean is 0.
    pub cv: f64,
}

/// Spread of a set of values; `None` when it is empty.
pub fn spread(values: &[f64]) -> Option<Spread> {
    if values.is_empty() {
        return None;
    }
    let count = values.len();
    let mean = values.iter().sum::<f64>() / count as f64;
    let var = if count > 1 {
        values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (count - 1) as f64
    } else {
        0.0
    };
    let stddev = var.sqrt();
    Some(Spread {
        count,
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        mean,
        stddev,
        cv: if mean != 0.0 { stddev / mean } else { 0.0 },
    })
}

/// A quantile's rank as a fraction of the sorted values, from 0 (the smallest) to 1 (the
/// largest). Made only by [`Quantile::new`] or the named ranks, so a percent (50) can never
/// pass for a fraction (0.5): `Quantile::new(50.0)` is `None`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Quantile(f64);

impl Quantile {
    /// The 10th percentile.
    pub const P10: Quantile = Quantile(0.1);
    /// The first quartile.
    pub const Q1: Quantile = Quantile(0.25);
    /// The median.
    pub const MEDIAN: Quantile = Quantile(0.5);
    /// The third quartile.
    pub const Q3: Quantile = Quantile(0.75);
    /// The 90th percentile.
    pub const P90: Quantile = Quantile(0.9);

    /// The rank `q`, a fraction from 0 to 1; `None` for anything else (NaN, a percent).
    pub fn new(q: f64) -> Option<Quantile> {
        (0.0..=1.0).contains(&q).then_some(Quantile(q))
    }

    /// The rank as a fraction from 0 to 1.
    pub fn fraction(self) -> f64 {
        self.0
    }
}

/// Sorts values ascending (NaN last, by `total_cmp`).
pub fn sort(v: &mut [f64]) {
    v.sort_by(f64::total_cmp);
}

/// The quantile `q` of sorted values with linear interpolation between the closest ranks
/// (NumPy's default, Hyndman and Fan's type 7); NaN for no values.
pub fn quantile(sorted: &[f64], q: Quantile) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * q.0;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let t = h - lo as f64;
    let (a, b) = (sorted[lo], sorted[hi]);
    // Interpolate from the nearer end, as NumPy does, so q = 1 gives the maximum exactly.
    if t < 0.5 {
        a + (b - a) * t
    } else {
        b - (b - a) * (1.0 - t)
    }
}

/// The median of values in any order: the middle one, or the mean of the two middle ones
/// ([`quantile`] at [`Quantile::MEDIAN`]); NaN for no values. The one f64 median of the
/// workspace (lmbench's median of timed intervals, [`median`], keeps its own rule).
pub fn median_of(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    sort(&mut v);
    quantile(&v, Quantile::MEDIAN)
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

    #[test]
    fn spread_values() {
        let s = spread(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.count, 8);
        assert_eq!(s.min, 2.0);
        assert_eq!(s.max, 9.0);
        assert!((s.mean - 5.0).abs() < 1e-12);
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!(spread(&[]).is_none());
        assert_eq!(spread(&[3.0]).unwrap().stddev, 0.0);
    }

    #[test]
    fn a_percent_is_not_a_quantile() {
        assert_eq!(Quantile::new(50.0), None);
        assert_eq!(Quantile::new(f64::NAN), None);
        assert_eq!(Quantile::new(-0.1), None);
        assert_eq!(Quantile::new(0.5), Some(Quantile::MEDIAN));
    }

    #[test]
    fn quantiles_interpolate_linearly() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, Quantile::new(0.0).unwrap()), 1.0);
        assert_eq!(quantile(&v, Quantile::new(1.0).unwrap()), 4.0);
        assert_eq!(quantile(&v, Quantile::MEDIAN), 2.5);
        assert!((quantile(&v, Quantile::Q1) - 1.75).abs() < 1e-15);
        assert!(quantile(&[], Quantile::MEDIAN).is_nan());
    }

    #[test]
    fn the_median_of_values_is_the_middle_not_the_largest() {
        // What `benchmp ab` showed as a side's median: the largest of these.
        let v = [500000.0, 333333.0, 250000.0, 200000.0, 166667.0];
        assert_eq!(median_of(&v), 250000.0);
        assert_eq!(median_of(&[3.0, 1.0, 4.0, 2.0]), 2.5);
        assert!(median_of(&[]).is_nan());
    }
}
