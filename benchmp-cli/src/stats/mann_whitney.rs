//! The Mann–Whitney U test of two independent samples, as SciPy 1.17's
//! `mannwhitneyu(x, y, alternative="two-sided", method="auto")` computes it. `benchmp compare`
//! applies it to runs, one value per run, because the run is the unit of drift: the samples
//! inside one run share its state and are not independent (Kalibera & Jones, ISMM 2013).
//!
//! U1 = R1 − n1(n1 + 1)/2 from the mid-ranks of the pooled values; the two-sided p-value is
//! twice the upper tail at U = max(U1, U2), capped at 1. It is exact when one sample has at
//! most [`MAX_EXACT_N`] values and no value repeats (the null distribution of U counted as the
//! coefficients of the Gaussian binomial [n1 + n2 choose n1]_q, Di Bucchianico 1999), else the
//! normal approximation with SciPy's tie and continuity corrections. Values must be finite.

use serde::{Deserialize, Serialize};

use super::normal::normal_cdf;

/// SciPy's `method="auto"` counts the exact distribution only when a sample has at most this
/// many values (and there are no ties).
pub const MAX_EXACT_N: usize = 8;

/// How the p-value was obtained (SciPy's `method` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MwMethod {
    /// The exact null distribution of U.
    Exact,
    /// The normal approximation with tie and continuity corrections.
    Asymptotic,
}

/// A Mann–Whitney U test's result.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U of the first sample (SciPy's `statistic`): the pairs (x, y) with x > y, ties half.
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// The branch used for the p-value.
    pub method: MwMethod,
}

/// The two-sided Mann–Whitney U test of `x` against `y` (both non-empty, any order).
pub fn mann_whitney_u(x: &[f64], y: &[f64]) -> MannWhitney {
    assert!(
        !x.is_empty() && !y.is_empty(),
        "mann_whitney_u needs values"
    );
    let (n1, n2) = (x.len(), y.len());
    let mut all: Vec<(f64, bool)> = x
        .iter()
        .map(|&v| (v, true))
        .chain(y.iter().map(|&v| (v, false)))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Mid-ranks, the first sample's rank sum and Σ(t³ − t) over groups of tied values.
    let (mut r1, mut tie_term, mut i) = (0.0, 0.0, 0);
    while i < all.len() {
        let j = i + all[i..].iter().take_while(|a| a.0 == all[i].0).count();
        let rank = (i + 1 + j) as f64 / 2.0;
        r1 += rank * all[i..j].iter().filter(|a| a.1).count() as f64;
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u1 = r1 - f1 * (f1 + 1.0) / 2.0;
    let u = u1.max(f1 * f2 - u1);
    let (p, method) = if n1.min(n2) <= MAX_EXACT_N && tie_term == 0.0 {
        (exact_p(n1, n2, u as usize), MwMethod::Exact)
    } else {
        let n = f1 + f2;
        let var = f1 * f2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
        // Every value tied: no variance and no evidence (SciPy: z = −∞, p = 1).
        let p = if var > 0.0 {
            let z = (u - f1 * f2 / 2.0 - 0.5) / var.sqrt();
            2.0 * normal_cdf(-z)
        } else {
            1.0
        };
        (p, MwMethod::Asymptotic)
    };
    MannWhitney {
        u: u1,
        p: p.clamp(0.0, 1.0),
        method,
    }
}

/// 2·P(U ≥ u) under the null hypothesis, for u ≥ n1·n2/2: by symmetry twice the count of
/// arrangements with U ≤ n1·n2 − u over C(n1 + n2, n1).
fn exact_p(n1: usize, n2: usize, u: usize) -> f64 {
    let (m, n) = (n1.min(n2), n1.max(n2));
    let top = n1 * n2 - u;
    // The truncated power series ∏ (1 − q^(n+i)) / (1 − q^i), i = 1..=m, up to q^top.
    let mut c = vec![0.0f64; top + 1];
    c[0] = 1.0;
    let mut total = 1.0;
    for i in 1..=m {
        for k in (n + i..=top).rev() {
            c[k] -= c[k - n - i];
        }
        for k in i..=top {
            c[k] += c[k - i];
        }
        total = total * (n + i) as f64 / i as f64;
    }
    2.0 * c.iter().sum::<f64>() / total
}

/// The smallest two-sided p-value the test can give for `n1` and `n2` distinct values (the
/// two samples fully apart): a side with too few runs can never be below alpha.
pub fn min_p(n1: usize, n2: usize) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    let x: Vec<f64> = (0..n1).map(|i| i as f64).collect();
    let y: Vec<f64> = (0..n2).map(|i| (n1 + i) as f64).collect();
    mann_whitney_u(&x, &y).p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// x, y, SciPy's statistic and p-value, and the method `auto` chose.
    type Case = (&'static [f64], &'static [f64], f64, f64, MwMethod);

    /// Reference values from SciPy 1.17.1, each printed by
    /// `python3 -c 'from scipy.stats import mannwhitneyu as m; r = m(X, Y, alternative="two-sided", method="auto"); print(repr(float(r.statistic)), repr(float(r.pvalue)))'`
    /// with X and Y as given.
    const SCIPY: &[Case] = &[
        (
            &[1.1, 2.3, 3.0, 4.5],
            &[5.0, 6.2, 7.1, 8.4],
            0.0,
            0.02857142857142857,
            MwMethod::Exact,
        ),
        (
            &[1.0, 2.0, 3.0],
            &[4.0, 5.0, 6.0],
            0.0,
            0.1,
            MwMethod::Exact,
        ),
        (
            &[10.0, 12.5, 11.2, 13.9, 9.8],
            &[12.0, 14.1, 15.3, 13.0],
            3.0,
            0.1111111111111111,
            MwMethod::Exact,
        ),
        (&[5.0], &[1.0, 2.0, 3.0], 3.0, 0.5, MwMethod::Exact),
        (
            &[1.0, 2.0, 2.0, 3.0, 4.0],
            &[2.0, 3.0, 3.0, 5.0, 6.0, 7.0],
            6.0,
            0.11390314458853068,
            MwMethod::Asymptotic,
        ),
        (
            &[1.0, 1.0],
            &[1.0, 1.0, 1.0],
            3.0,
            1.0,
            MwMethod::Asymptotic,
        ),
        (
            &[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5],
            &[6.0, 9.0, 10.0],
            3.0,
            0.06363636363636363,
            MwMethod::Exact,
        ),
    ];

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    #[test]
    fn matches_scipy_on_fixed_samples() {
        for &(x, y, u, p, method) in SCIPY {
            let r = mann_whitney_u(x, y);
            assert_eq!((r.u, r.method), (u, method), "{x:?} {y:?}");
            assert!(close(r.p, p), "{x:?} {y:?}: {} vs SciPy {p}", r.p);
        }
    }

    #[test]
    fn matches_scipy_on_larger_samples() {
        // x = [1.5 * i for i in range(10)], y = [1.5 * i + 4.2 for i in range(10)]:
        // both above 8 values, so asymptotic though nothing ties.
        let x: Vec<f64> = (0..10).map(|i| i as f64 * 1.5).collect();
        let y: Vec<f64> = (0..10).map(|i| i as f64 * 1.5 + 4.2).collect();
        let r = mann_whitney_u(&x, &y);
        assert_eq!((r.u, r.method), (28.0, MwMethod::Asymptotic));
        assert!(close(r.p, 0.10410988966022681), "{r:?}");
        // x = [float(i) for i in range(8)], y = [i + 5.25 for i in range(12)]: exact, 8 a side.
        let x: Vec<f64> = (0..8).map(f64::from).collect();
        let y: Vec<f64> = (0..12).map(|i| f64::from(i) + 5.25).collect();
        let r = mann_whitney_u(&x, &y);
        assert_eq!((r.u, r.method), (3.0, MwMethod::Exact));
        assert!(close(r.p, 0.00011113757243788204), "{r:?}");
    }

    #[test]
    fn the_test_is_symmetric_and_bounded_by_its_sizes() {
        let (x, y) = ([3.0, 1.0, 4.0, 1.5], [5.0, 9.0, 2.0, 6.0, 5.5]);
        let (a, b) = (mann_whitney_u(&x, &y), mann_whitney_u(&y, &x));
        assert_eq!(a.p, b.p);
        assert_eq!(a.u + b.u, 20.0);
        // Fully apart, 4 a side is the fewest with p below 0.05; 3 and 4 against 3 are not.
        assert!(close(min_p(4, 4), 2.0 / 70.0));
        assert!(min_p(3, 3) > 0.05 && min_p(4, 3) > 0.05 && min_p(5, 3) < 0.05);
        assert_eq!(min_p(1, 1), 1.0);
    }
}
