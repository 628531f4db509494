//! The two-sided sign test: the cross-check that holds whatever the differences' shape.

/// Two-sided sign test, zeros dropped: `scipy.stats.binomtest(k_pos, n_nonzero, 0.5).pvalue`.
///
/// SciPy sums the probabilities of all counts no likelier than the observed one (within a
/// relative 1e-7); with p = 1/2 the binomial is symmetric and each step towards the middle is
/// likelier by (n − j)/(j + 1) ≥ 1 + 2/n, so for n below 2·10^7 that is 2·P(X ≤ min(k, n − k))
/// capped at 1. No non-zero differences give 1 (SciPy refuses n = 0).
pub fn sign_test(d: &[f64]) -> f64 {
    let pos = d.iter().filter(|&&v| v > 0.0).count();
    let neg = d.iter().filter(|&&v| v < 0.0).count();
    let n = pos + neg;
    let m = pos.min(neg);
    if n == 0 || 2 * m == n {
        return 1.0;
    }
    (2.0 * binomial_half_cdf(m, n)).min(1.0)
}

/// P(X ≤ m) for X ~ Binomial(n, 1/2) and m < n/2: the largest term C(n, m)/2^n as a product
/// with its power of two kept apart (2^−n underflows past n = 1074), the smaller terms by the
/// ratio C(n, j−1)/C(n, j) = j/(n − j + 1).
fn binomial_half_cdf(m: usize, n: usize) -> f64 {
    const SCALE: i32 = 512;
    let (mut top, mut exp2) = (1.0f64, -(n as i64));
    for i in 1..=m {
        top *= (n - m + i) as f64 / i as f64;
        if top > 2f64.powi(SCALE) {
            top *= 2f64.powi(-SCALE);
            exp2 += i64::from(SCALE);
        }
    }
    let (mut term, mut sum) = (1.0, 1.0);
    for j in (1..=m).rev() {
        term *= j as f64 / (n - j + 1) as f64;
        sum += term;
        if term < 1e-17 * sum {
            break;
        }
    }
    let mut p = top * sum;
    while exp2 < -i64::from(SCALE) {
        p *= 2f64.powi(-SCALE);
        exp2 += i64::from(SCALE);
    }
    p * 2f64.powi(exp2 as i32)
}
