//! The two-sample Kolmogorov–Smirnov test as SciPy's `ks_2samp` computes it, exact for up to
//! 10 000 values a side, with the Kolmogorov distribution of [`super::kolmogorov`] beyond.

use serde::{Deserialize, Serialize};

use super::kolmogorov;

/// How the KS p-value was obtained (SciPy's `method` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KsMethod {
    /// Exact lattice-path count (both samples at most 10 000 values).
    Exact,
    /// Kolmogorov distribution of `round(n1·n2 / (n1 + n2))` samples.
    Asymp,
}

/// Two-sample Kolmogorov–Smirnov result.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ks {
    /// Largest distance between the two empirical CDFs.
    pub d: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Branch used for the p-value.
    pub method: KsMethod,
}

/// Largest sample size for which SciPy's `method='auto'` tries the exact distribution.
pub const KS_MAX_EXACT_N: usize = 10_000;

/// Two-sided two-sample KS test of two sorted, non-empty samples, reproducing SciPy's
/// `ks_2samp(a, b)` with its default `method='auto'`.
///
/// D is the largest gap between the right-continuous empirical CDFs (ties handled as SciPy's
/// `searchsorted(side='right')`). When both samples have at most 10 000 values the exact
/// distribution is used: the Horner-like alternating sum for equal sizes and the
/// Hodges/Viehmann "inside" lattice recursion otherwise, after rounding D to a multiple of
/// 1/lcm(n1, n2); should that give no probability in [0, 1], SciPy and this function fall back to
/// the asymptotic branch, which evaluates the one-sample two-sided Kolmogorov distribution
/// (SciPy's `kstwo.sf`) at `round(n1·n2 / (n1 + n2))`; see [`kolmogorov::kstwo_sf`] for its
/// branches.
pub fn ks_2samp(a: &[f64], b: &[f64]) -> Ks {
    assert!(!a.is_empty() && !b.is_empty(), "ks_2samp needs samples");
    let (n1, n2) = (a.len(), b.len());
    let d = ks_statistic(a, b);
    if n1.max(n2) <= KS_MAX_EXACT_N {
        let g = gcd(n1 as u64, n2 as u64);
        let lcm = (n1 as u64 / g) * n2 as u64;
        let h = (d * lcm as f64).round_ties_even() as u64;
        let d_exact = h as f64 / lcm as f64;
        if h == 0 {
            return Ks {
                d: d_exact,
                p: 1.0,
                method: KsMethod::Exact,
            };
        }
        let p = if n1 == n2 {
            kolmogorov::prob_outside_square(n1 as u64, h)
        } else {
            kolmogorov::outer_prob_inside(n1 as u64, n2 as u64, g, h)
        };
        if p.is_finite() && (0.0..=1.0).contains(&p) {
            return Ks {
                d: d_exact,
                p,
                method: KsMethod::Exact,
            };
        }
        return asymptotic(d_exact, n1, n2);
    }
    asymptotic(d, n1, n2)
}

fn asymptotic(d: f64, n1: usize, n2: usize) -> Ks {
    let (m, n) = (n1.max(n2) as f64, n1.min(n2) as f64);
    let en = (m * n / (m + n)).round_ties_even() as u64;
    Ks {
        d,
        p: kolmogorov::kstwo_sf(en, d).clamp(0.0, 1.0),
        method: KsMethod::Asymp,
    }
}

/// The two-sided KS statistic of two sorted samples, computed as SciPy does (differences of
/// `count / n` at every sample value).
pub fn ks_statistic(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j) = (0usize, 0usize);
    let (mut max_diff, mut min_diff) = (f64::NEG_INFINITY, f64::INFINITY);
    while i < a.len() || j < b.len() {
        // The next distinct value; both ECDFs are evaluated just after it.
        let v = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => break,
        };
        while i < a.len() && a[i] <= v {
            i += 1;
        }
        while j < b.len() && b[j] <= v {
            j += 1;
        }
        let diff = i as f64 / n1 - j as f64 / n2;
        max_diff = max_diff.max(diff);
        min_diff = min_diff.min(diff);
    }
    let min_s = (-min_diff).clamp(0.0, 1.0);
    if min_s > max_diff { min_s } else { max_diff }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The smallest two-sided p-value the exact KS test can give for samples of `n1` and `n2`
/// values (both ECDFs fully apart): below `alpha` only when the test can reject at all.
pub fn ks_min_p(n1: usize, n2: usize) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    if n1.min(n2) > 20 {
        // Already below 1e-10 at 20 a side; no need to count lattice paths for more.
        return 0.0;
    }
    let a: Vec<f64> = (0..n1).map(|i| i as f64).collect();
    let b: Vec<f64> = (0..n2).map(|i| (n1 + i) as f64).collect();
    ks_2samp(&a, &b).p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ks_statistic_handles_ties_and_identity() {
        let a = [1.0, 2.0, 2.0, 3.0];
        assert_eq!(ks_statistic(&a, &a), 0.0);
        let r = ks_2samp(&a, &a);
        assert_eq!((r.d, r.p, r.method), (0.0, 1.0, KsMethod::Exact));
        // Disjoint samples: D = 1.
        assert_eq!(ks_statistic(&[1.0, 2.0], &[3.0, 4.0, 5.0]), 1.0);
        // Ties across samples: after 2 the ECDFs are 3/4 and 1/2, after 3 they are 1 and 1/2.
        assert_eq!(ks_statistic(&a, &[2.0, 4.0]), 0.5);
    }
}
