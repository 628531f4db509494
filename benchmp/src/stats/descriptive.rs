//! Descriptive statistics of f64 samples: spread, quantiles with NumPy's interpolation, the one
//! f64 median, the 10 %-trimmed mean (SciPy's `trim_mean(x, 0.1)`), a five-number summary and
//! outliers above Q3 + 1.5 × IQR.

use serde::{Deserialize, Serialize};

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
/// workspace (lmbench's median of timed intervals, [`crate::stats::lmbench::median`], keeps its own rule).
pub fn median_of(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    sort(&mut v);
    quantile(&v, Quantile::MEDIAN)
}

/// The sample at the middle of sorted values (the upper of the two middle ones for an even
/// count), for a median that must be one of the samples: one that names its CPU or its clock
/// source. A median of values is [`median_of`].
pub fn middle<T>(sorted: &[T]) -> Option<&T> {
    sorted.get(sorted.len() / 2)
}

/// The 10th–90th percentile slice of sorted samples: `floor(n / 10)` cut from each end.
pub fn trimmed(sorted: &[f64]) -> &[f64] {
    let cut = sorted.len() / 10;
    &sorted[cut..sorted.len() - cut]
}

/// Arithmetic mean; NaN for an empty slice.
pub fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    x.iter().sum::<f64>() / x.len() as f64
}

/// Mean of the 10th–90th percentile of sorted samples.
pub fn trimmed_mean(sorted: &[f64]) -> f64 {
    mean(trimmed(sorted))
}

/// Merges two sorted slices into one sorted vector.
pub fn merge_sorted(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Outliers counted per version against one shared threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Outliers {
    /// First quartile of both versions' samples together.
    pub q1: f64,
    /// Third quartile of both versions' samples together.
    pub q3: f64,
    /// Q3 + 1.5 × (Q3 − Q1).
    pub threshold: f64,
    /// Baseline samples above the threshold.
    pub baseline: usize,
    /// Current samples above the threshold.
    pub current: usize,
}

/// Counts samples above Q3 + 1.5 × IQR, the quartiles taken over both sorted samples together.
pub fn iqr_outliers(baseline: &[f64], current: &[f64]) -> Outliers {
    let all = merge_sorted(baseline, current);
    let q1 = quantile(&all, Quantile::Q1);
    let q3 = quantile(&all, Quantile::Q3);
    let threshold = q3 + 1.5 * (q3 - q1);
    let above = |s: &[f64]| s.len() - s.partition_point(|&x| x <= threshold);
    Outliers {
        q1,
        q3,
        threshold,
        baseline: above(baseline),
        current: above(current),
    }
}

/// Short description of a sorted sample set for reports.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Smallest sample.
    pub min: f64,
    /// 10th percentile.
    pub p10: f64,
    /// Median.
    pub median: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Largest sample.
    pub max: f64,
    /// Mean of all samples.
    pub mean: f64,
}

/// Summarises sorted samples.
pub fn summary(sorted: &[f64]) -> Summary {
    Summary {
        n: sorted.len(),
        min: sorted.first().copied().unwrap_or(f64::NAN),
        p10: quantile(sorted, Quantile::P10),
        median: quantile(sorted, Quantile::MEDIAN),
        p90: quantile(sorted, Quantile::P90),
        max: sorted.last().copied().unwrap_or(f64::NAN),
        mean: mean(sorted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
