//! The Wilcoxon signed-rank test as SciPy computes it: the exact null distribution, the
//! exact sign-flip test for ties and zeros, and the normal approximation.

use serde::{Deserialize, Serialize};

use crate::stats::normal::normal_cdf;

/// Result of the Wilcoxon signed-rank test, as `scipy.stats.wilcoxon` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SignedRank {
    /// min(W+, W−): the smaller of the rank sums of the positive and the negative differences.
    pub statistic: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether p comes from an exact null distribution (SciPy's exact branch, or its
    /// enumeration of all sign flips) rather than the normal approximation.
    pub exact: bool,
}

/// Largest sample for which SciPy's `method="auto"` uses an exact null distribution.
pub const WILCOXON_MAX_EXACT_N: usize = 50;

/// Largest sample SciPy enumerates every sign flip of when ties or zeros rule out the exact
/// table: 2^13 flips fit in `permutation_test`'s default 9 999 resamples.
pub const WILCOXON_MAX_FLIP_N: usize = 13;

/// The two-sided Wilcoxon signed-rank test of `scipy.stats.wilcoxon(d)` (SciPy 1.17 defaults:
/// zeros dropped, no continuity correction, `method="auto"`).
///
/// With n the number of differences *including* zeros, as SciPy counts them: no ties and no
/// zeros and n ≤ 50 gives the exact distribution, p = 2·P(W ≤ min(W+, W−)) capped at 1; ties
/// or zeros with n ≤ 13 give SciPy's exact permutation test, all sign flips of the midranks,
/// p = 2·min(P(W ≤ W+), P(W ≥ W+)) capped at 1; otherwise the normal approximation with the
/// variance less Σ(t³ − t)/48 over tie groups. Deviation: all-zero differences give p = 1
/// where SciPy's normal branch (n > 13) gives NaN from 0/0; no differences give NaN as SciPy.
pub fn wilcoxon(d: &[f64]) -> SignedRank {
    if d.is_empty() {
        return SignedRank {
            statistic: f64::NAN,
            p: f64::NAN,
            exact: false,
        };
    }
    let x: Vec<f64> = d.iter().copied().filter(|&v| v != 0.0).collect();
    let has_zeros = x.len() < d.len();
    let ranks = midranks(&x);
    let r_plus: f64 = ranks
        .rank
        .iter()
        .zip(&x)
        .filter(|(_, v)| **v > 0.0)
        .map(|(r, _)| r)
        .sum();
    let r_minus = walsh_count(x.len()) as f64 - r_plus;
    let statistic = r_plus.min(r_minus);
    if !ranks.has_ties && !has_zeros && d.len() <= WILCOXON_MAX_EXACT_N {
        let below: u64 = signed_rank_null(x.len())[..=statistic as usize]
            .iter()
            .sum();
        let p = (2.0 * below as f64 / pow2(x.len())).min(1.0);
        return SignedRank {
            statistic,
            p,
            exact: true,
        };
    }
    if d.len() <= WILCOXON_MAX_FLIP_N {
        return SignedRank {
            statistic,
            p: sign_flip_p(&x, &ranks.rank),
            exact: true,
        };
    }
    let n = x.len() as f64;
    let variance = (n * (n + 1.0) * (2.0 * n + 1.0) - ranks.tie_term / 2.0) / 24.0;
    let p = if variance > 0.0 {
        let z = (r_plus - n * (n + 1.0) / 4.0) / variance.sqrt();
        2.0 * normal_cdf(-z.abs())
    } else {
        1.0
    };
    SignedRank {
        statistic,
        p,
        exact: false,
    }
}

/// Ranks of |x| with ties given their mean rank, as SciPy's `rankdata(method="average")`.
struct Midranks {
    rank: Vec<f64>,
    /// Σ (t³ − t) over groups of t tied magnitudes (SciPy's tie correction).
    tie_term: f64,
    has_ties: bool,
}

fn midranks(x: &[f64]) -> Midranks {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].abs().total_cmp(&x[b].abs()));
    let mut rank = vec![0.0; x.len()];
    let (mut tie_term, mut has_ties) = (0.0, false);
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && x[order[end]].abs() == x[order[start]].abs() {
            end += 1;
        }
        // Positions start..end hold ranks start+1 ..= end.
        let mid = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            rank[i] = mid;
        }
        let t = (end - start) as f64;
        tie_term += t * t * t - t;
        has_ties |= end - start > 1;
        start = end;
    }
    Midranks {
        rank,
        tie_term,
        has_ties,
    }
}

/// SciPy's exact permutation p for few differences with ties or zeros: every assignment of
/// signs to the midranks is equally likely; flips of zeros change nothing and cancel.
fn sign_flip_p(x: &[f64], rank: &[f64]) -> f64 {
    // Midranks are multiples of 1/2: count in doubled ranks, which are integers.
    let doubled: Vec<usize> = rank.iter().map(|r| (2.0 * r) as usize).collect();
    let observed: usize = doubled
        .iter()
        .zip(x)
        .filter(|(_, v)| **v > 0.0)
        .map(|(r, _)| r)
        .sum();
    let counts = subset_sum_counts(&doubled);
    let total = pow2(x.len());
    let less: u64 = counts[..=observed].iter().sum();
    let greater: u64 = counts[observed..].iter().sum();
    (2.0 * (less.min(greater) as f64) / total).min(1.0)
}

/// counts[s] = number of subsets of `weights` summing to s: the null distribution of a
/// signed-rank sum, each weight's sign a fair coin. Exact in u64 for up to 63 weights.
fn subset_sum_counts(weights: &[usize]) -> Vec<u64> {
    assert!(weights.len() < 64, "subset counts overflow u64");
    let total: usize = weights.iter().sum();
    let mut counts = vec![0u64; total + 1];
    counts[0] = 1;
    let mut reach = 0;
    for &w in weights {
        reach += w;
        for s in (w..=reach).rev() {
            counts[s] += counts[s - w];
        }
    }
    counts
}

/// The exact null distribution of W+ for n ≤ 50 pairs, as subset counts of ranks 1..=n out
/// of 2^n; built once for every n (each table extends the last by one rank) and kept.
pub(super) fn signed_rank_null(n: usize) -> &'static [u64] {
    static TABLES: std::sync::OnceLock<Vec<Vec<u64>>> = std::sync::OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        let mut tables = vec![vec![1u64]];
        for r in 1..=WILCOXON_MAX_EXACT_N {
            let last = &tables[r - 1];
            let mut next = vec![0u64; walsh_count(r) + 1];
            next[..last.len()].copy_from_slice(last);
            for (s, &c) in last.iter().enumerate() {
                next[s + r] += c;
            }
            tables.push(next);
        }
        tables
    });
    &tables[n]
}

pub(super) fn pow2(n: usize) -> f64 {
    2f64.powi(n as i32)
}

pub(super) fn walsh_count(n: usize) -> usize {
    n * (n + 1) / 2
}
