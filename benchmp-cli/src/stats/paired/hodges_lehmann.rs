//! The Hodges–Lehmann estimate of the pseudo-median of paired differences and its
//! signed-rank confidence interval: order statistics of the Walsh averages, selected without
//! forming all n(n+1)/2 of them.

use super::wilcoxon::{WILCOXON_MAX_EXACT_N, pow2, signed_rank_null, walsh_count};
use crate::stats::normal::normal_quantile;

/// All n(n+1)/2 Walsh averages (d_i + d_j)/2, i ≤ j, sorted: the set the Hodges–Lehmann
/// estimate and the signed-rank interval are order statistics of.
pub fn walsh_averages(d: &[f64]) -> Vec<f64> {
    let mut w = Vec::with_capacity(d.len() * (d.len() + 1) / 2);
    for (i, &a) in d.iter().enumerate() {
        w.extend(d[i..].iter().map(|&b| (a + b) / 2.0));
    }
    w.sort_by(|a, b| a.total_cmp(b));
    w
}

/// The Hodges–Lehmann estimate of the pseudo-median: the median of the Walsh averages (the
/// mean of the middle two for an even count, as NumPy's median); NaN for no pairs.
pub fn hodges_lehmann(d: &[f64]) -> f64 {
    if d.is_empty() {
        return f64::NAN;
    }
    let s = sorted(d);
    let total = walsh_count(s.len());
    if total % 2 == 1 {
        walsh_kth(&s, total.div_ceil(2))
    } else {
        (walsh_kth(&s, total / 2) + walsh_kth(&s, total / 2 + 1)) / 2.0
    }
}

pub(super) fn sorted(d: &[f64]) -> Vec<f64> {
    let mut s = d.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s
}

/// How many Walsh averages of sorted `s` are at most `v`. (a + b)/2 never decreases when a
/// or b grows, so the largest partner j of each i only moves down as i moves up: O(n).
pub(super) fn walsh_at_most(s: &[f64], v: f64) -> usize {
    let mut count = 0;
    let mut end = s.len(); // partners of i are s[i..end]
    for i in 0..s.len() {
        while end > i && (s[i] + s[end - 1]) / 2.0 > v {
            end -= 1;
        }
        if end <= i {
            break;
        }
        count += end - i;
    }
    count
}

/// The Walsh averages of sorted `s` in (lo, hi], unsorted, by the same two-pointer walk.
pub(super) fn walsh_between(s: &[f64], lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let (mut end_lo, mut end_hi) = (s.len(), s.len());
    for i in 0..s.len() {
        while end_hi > i && (s[i] + s[end_hi - 1]) / 2.0 > hi {
            end_hi -= 1;
        }
        if end_hi <= i {
            break;
        }
        while end_lo > i && (s[i] + s[end_lo - 1]) / 2.0 > lo {
            end_lo -= 1;
        }
        out.extend(s[end_lo.max(i)..end_hi].iter().map(|&b| (s[i] + b) / 2.0));
    }
    out
}

/// Maps an f64 to a u64 whose unsigned order is `total_cmp`'s order.
fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The k-th smallest (1-based) Walsh average of sorted `s` without forming all n(n+1)/2:
/// bisect values, counting in O(n), until at most n averages are left in the bracket, then
/// select among those. It equals `walsh_averages(s)[k - 1]`.
///
/// Halving the value range leaves about half the averages, so a few counts suffice; when
/// ties keep the bracket full, midpoints in the 64-bit order of floats end it within 64 more.
pub(super) fn walsh_kth(s: &[f64], k: usize) -> f64 {
    let n = s.len();
    // Invariant: at most (lo) < k <= at most (hi); s[0] and s[n-1] are the extreme averages.
    let (mut lo, mut hi) = (s[0], s[n - 1]);
    let mut below = walsh_at_most(s, lo);
    if below >= k {
        return lo;
    }
    let mut upto = walsh_count(n);
    let mut steps = 0;
    while upto - below > n {
        let mut mid = lo + (hi - lo) / 2.0;
        if steps >= 64 || !(lo < mid && mid < hi) {
            let (a, b) = (order_key(lo), order_key(hi));
            if b - a < 2 {
                return hi; // no float between: every average left equals hi
            }
            mid = from_order_key(a + (b - a) / 2);
        }
        steps += 1;
        let c = walsh_at_most(s, mid);
        if c >= k {
            (hi, upto) = (mid, c);
        } else {
            (lo, below) = (mid, c);
        }
    }
    let mut left = walsh_between(s, lo, hi);
    let (_, kth, _) = left.select_nth_unstable_by(k - below - 1, |a, b| a.total_cmp(b));
    *kth
}

/// The Wilcoxon signed-rank confidence interval for the pseudo-median (Hollander & Wolfe
/// §3.3): the K-th smallest to the K-th largest of the n(n+1)/2 sorted Walsh averages.
///
/// K is the largest k with P(W+ ≤ k − 1) ≤ (1 − confidence)/2 under the exact null
/// distribution for n ≤ 50, so the coverage is at least `confidence`; above 50 it is
/// floor(n(n+1)/4 − z·sqrt(n(n+1)(2n+1)/24)), z the (1 + confidence)/2 normal quantile, clamped
/// to 1..=n(n+1)/2. Unbounded, (−∞, +∞), for fewer than 2 pairs, a confidence outside (0, 1), or
/// too few pairs for the exact interval to reach the confidence (2^−n above (1 − confidence)/2).
pub fn hl_interval(d: &[f64], confidence: f64) -> (f64, f64) {
    let unbounded = (f64::NEG_INFINITY, f64::INFINITY);
    let n = d.len();
    if n < 2 || !(confidence > 0.0 && confidence < 1.0) {
        return unbounded;
    }
    let Some(k) = interval_rank(n, confidence) else {
        return unbounded;
    };
    let s = sorted(d);
    let total = walsh_count(n);
    (walsh_kth(&s, k), walsh_kth(&s, total + 1 - k))
}

/// The rank K of [`hl_interval`]'s ends; None when the exact interval cannot reach the level.
fn interval_rank(n: usize, confidence: f64) -> Option<usize> {
    let total = walsh_count(n);
    let half_alpha = (1.0 - confidence) / 2.0;
    // Never past the middle, so the lower end is never above the upper.
    let middle = total.div_ceil(2);
    if n <= WILCOXON_MAX_EXACT_N {
        let counts = signed_rank_null(n);
        let scale = pow2(n);
        let mut below = 0u64; // subsets with W+ ≤ k − 1
        let mut k = 0;
        while k < middle {
            below += counts[k];
            if below as f64 / scale > half_alpha {
                break;
            }
            k += 1;
        }
        return (k > 0).then_some(k);
    }
    let nf = n as f64;
    let z = normal_quantile((1.0 + confidence) / 2.0);
    let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
    let k = (total as f64 / 2.0 - z * sd).floor();
    Some((k.max(1.0) as usize).min(middle))
}
