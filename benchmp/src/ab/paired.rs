//! Paired A/B statistics: one repetition of each build close together in time is one unit,
//! so slow drift of the machine falls on both halves and cancels in their ratio, where a
//! test over the samples of two runs measures the runs' drift (Kalibera & Jones, ISMM 2013).
//! The method: log ratios per pair, the Hodges–Lehmann estimate with the Wilcoxon signed-rank
//! interval, the sign test as a cross-check, lag-1 autocorrelation for dependent pairs, and
//! sequential looks at doubling pair counts with alpha split over them (Bonferroni).
//!
//! Under the null hypothesis, with the order inside each pair random, the sign of each pair's
//! difference is a fair coin whatever the drift does, so the signed-rank and sign tests here
//! are exact randomization tests. Both reproduce SciPy 1.17 (`scipy.stats.wilcoxon` and
//! `binomtest` with their defaults); the interval is the signed-rank test inverted (Hollander
//! & Wolfe, *Nonparametric Statistical Methods*, §3.3). The verdict is the interval against
//! the minimum effect on both sides, undecided (NOISY) while it straddles either boundary.
//! Every function takes finite values; NaN in a sample gives an unspecified result.

use serde::{Deserialize, Serialize};

use super::Better;

/// The per-pair difference, positive when the current side is worse: ln(current/base) for
/// times, ln(base/current) for throughputs, so one rule judges every figure.
pub fn log_ratio(base: f64, current: f64, better: Better) -> f64 {
    match better {
        Better::Lower => (current / base).ln(),
        Better::Higher => (base / current).ln(),
    }
}

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

fn sorted(d: &[f64]) -> Vec<f64> {
    let mut s = d.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s
}

fn walsh_count(n: usize) -> usize {
    n * (n + 1) / 2
}

/// How many Walsh averages of sorted `s` are at most `v`. (a + b)/2 never decreases when a
/// or b grows, so the largest partner j of each i only moves down as i moves up: O(n).
fn walsh_at_most(s: &[f64], v: f64) -> usize {
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
fn walsh_between(s: &[f64], lo: f64, hi: f64) -> Vec<f64> {
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
fn walsh_kth(s: &[f64], k: usize) -> f64 {
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
fn signed_rank_null(n: usize) -> &'static [u64] {
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

fn pow2(n: usize) -> f64 {
    2f64.powi(n as i32)
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

/// Sample lag-1 autocorrelation of the differences in time order, Σ(d_t − d̄)(d_{t+1} − d̄) /
/// Σ(d_t − d̄)² (the check that pairs are independent); 0 for n < 3 or all values equal.
pub fn lag1_autocorrelation(d: &[f64]) -> f64 {
    if d.len() < 3 || d.iter().all(|&v| v == d[0]) {
        return 0.0;
    }
    let mean = super::mean(d);
    let c: Vec<f64> = d.iter().map(|v| v - mean).collect();
    let num: f64 = c.windows(2).map(|w| w[0] * w[1]).sum();
    let den: f64 = c.iter().map(|v| v * v).sum();
    num / den
}

/// The number of independent pairs that carry as much information as n pairs with lag-1
/// autocorrelation rho, n(1 − rho)/(1 + rho) (AR(1) variance of a mean); n when rho ≤ 0.
pub fn effective_n(n: usize, rho: f64) -> f64 {
    if rho > 0.0 {
        (n as f64 * (1.0 - rho) / (1.0 + rho)).max(0.0)
    } else {
        n as f64
    }
}

/// The verdict on a set of pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Decision {
    /// The whole interval is worse than the minimum effect: a regression.
    Fail,
    /// The whole interval is better than the minimum effect.
    Improved,
    /// The whole interval lies within the minimum effect either way.
    Pass,
    /// Not decided yet: too few pairs, correlated pairs, or an interval across a boundary.
    Undecided,
}

/// Lag-1 autocorrelation at or above which pairs are too dependent to judge.
pub const MAX_RHO: f64 = 0.5;

/// The lag-1 autocorrelation that n independent pairs exceed by chance once in a hundred,
/// about z(0.99)/√n: a rho under it is not clearly positive (0.67 for 12 pairs, 0.37 for 40).
pub fn rho_by_chance(n: usize) -> f64 {
    2.326 / (n.max(1) as f64).sqrt()
}

/// Everything [`judge_pairs`] says about one figure; percentages are of the baseline,
/// positive worse (the sign of [`log_ratio`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// Number of units judged: repetition pairs, or process pairs' estimates.
    pub pairs: usize,
    /// Hodges–Lehmann estimate, percent.
    pub estimate_pct: f64,
    /// Lower end of the interval, percent (−100 when unbounded).
    pub low_pct: f64,
    /// Upper end of the interval, percent (+∞ when unbounded).
    pub high_pct: f64,
    /// Confidence of the interval (before any widening for autocorrelation).
    pub confidence: f64,
    /// Two-sided Wilcoxon signed-rank p-value.
    pub wilcoxon_p: f64,
    /// Two-sided sign-test p-value (the cross-check robust to any shape).
    pub sign_p: f64,
    /// Lag-1 autocorrelation of the differences in time order.
    pub rho: f64,
    /// Effective number of independent pairs.
    pub n_eff: f64,
    /// The verdict.
    pub decision: Decision,
    /// Why the verdict is undecided; None otherwise.
    pub why: Option<String>,
}

/// The paired verdict on log-ratio differences `d` (time order) with minimum effect θ =
/// ln(1 + min_effect_pct/100) and the signed-rank interval [L, U] at `confidence`: FAIL if
/// L > θ, IMPROVED if U < −θ, PASS if −θ < L and U < θ, else undecided (NOISY).
///
/// With lag-1 autocorrelation rho > 0 the interval is widened about the estimate by
/// sqrt((1 + rho)/(1 − rho)) = sqrt(n/n_eff): the pairs carry about n_eff independent pairs'
/// information. Undecided, whatever the interval, with too few pairs for an interval at this
/// confidence or with rho ≥ 0.5 that chance would not give independent pairs ([`rho_by_chance`]).
pub fn judge_pairs(d: &[f64], min_effect_pct: f64, confidence: f64) -> Judgement {
    judge(d, min_effect_pct, confidence, "pairs")
}

/// [`judge_pairs`] over units other than repetition pairs (each process pair's estimate, for
/// one), `units` naming them in the reasons.
pub fn judge(d: &[f64], min_effect_pct: f64, confidence: f64, units: &str) -> Judgement {
    let n = d.len();
    let estimate = hodges_lehmann(d);
    let (mut low, mut high) = hl_interval(d, confidence);
    let rho = lag1_autocorrelation(d);
    let n_eff = effective_n(n, rho);
    let formed = low.is_finite();
    if rho > 0.0 && formed {
        let widen = ((1.0 + rho) / (1.0 - rho)).sqrt();
        if widen.is_finite() {
            low = estimate - (estimate - low) * widen;
            high = estimate + (high - estimate) * widen;
        } else {
            (low, high) = (f64::NEG_INFINITY, f64::INFINITY);
        }
    }
    let pct = |x: f64| x.exp_m1() * 100.0;
    let theta = (min_effect_pct / 100.0).ln_1p();
    let (decision, why) = if !formed {
        let why = format!(
            "too few {units} ({n}) for a {:.1} % interval",
            confidence * 100.0
        );
        (Decision::Undecided, Some(why))
    } else if rho >= MAX_RHO && rho > rho_by_chance(n) {
        let why = format!("{units} are correlated (lag-1 autocorrelation {rho:.2})");
        (Decision::Undecided, Some(why))
    } else if low > theta {
        (Decision::Fail, None)
    } else if high < -theta {
        (Decision::Improved, None)
    } else if -theta < low && high < theta {
        (Decision::Pass, None)
    } else {
        let why = format!(
            "the interval [{:+.1} %, {:+.1} %] straddles ±{min_effect_pct} %",
            pct(low),
            pct(high)
        );
        (Decision::Undecided, Some(why))
    };
    Judgement {
        pairs: n,
        estimate_pct: pct(estimate),
        low_pct: pct(low),
        high_pct: pct(high),
        confidence,
        wilcoxon_p: wilcoxon(d).p,
        sign_p: sign_test(d),
        rho,
        n_eff,
        decision,
        why,
    }
}

/// When to look at the pairs while they accumulate, and at what confidence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Looks {
    /// Pairs at the first look; each later look doubles it.
    pub first: usize,
    /// Pairs at the last look: the session stops there whatever the verdict.
    pub max_pairs: usize,
    /// False-alarm rate held across all the looks together.
    pub alpha: f64,
}

impl Default for Looks {
    fn default() -> Self {
        Looks {
            first: 16,
            max_pairs: 4096,
            alpha: 0.05,
        }
    }
}

impl Looks {
    /// Pair counts at which to look: first, 2·first, 4·first, … below max_pairs, then
    /// max_pairs (doubling, so the looks cost log of the pairs; a first of 0 counts as 1).
    pub fn at(&self) -> Vec<usize> {
        let mut at = Vec::new();
        let mut n = self.first.max(1);
        while n < self.max_pairs {
            at.push(n);
            n = n.saturating_mul(2);
        }
        at.push(self.max_pairs);
        at
    }

    /// The confidence of each look's interval, 1 − alpha/looks (Bonferroni: the chance of a
    /// false alarm at any look stays at most alpha, where alpha at every look would grow).
    pub fn confidence(&self) -> f64 {
        1.0 - self.alpha / self.at().len() as f64
    }

    /// The confidence of each look when alpha is held over `family` figures together,
    /// 1 − alpha/(looks × family).
    pub fn confidence_over(&self, family: usize) -> f64 {
        1.0 - self.alpha / (self.at().len() * family.max(1)) as f64
    }

    /// Whether a session with `n` pairs is at one of the looks of [`Looks::at`].
    pub fn is_look(&self, n: usize) -> bool {
        self.at().contains(&n)
    }
}

/// The standard normal CDF Φ(x) = erfc(−x/√2)/2, accurate relative to about 1e-15 in both
/// tails (SciPy's `ndtr`, for the signed-rank test's normal branch).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The standard normal quantile Φ⁻¹(p) (SciPy's `norm.ppf`): Abramowitz & Stegun 26.2.23
/// (error below 4.5e-4) refined by Halley steps on [`normal_cdf`] to full precision.
///
/// ±∞ at 0 and 1, NaN outside [0, 1]. The step works in the lower tail q = min(p, 1 − p) (1 − p
/// is exact for p ≥ 1/2) and near the middle on Φ(z) − 1/2 = erf(z/√2)/2, so the result keeps
/// its relative precision for p near 1/2 as well as for p down to 1e-300.
pub fn normal_quantile(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if p == 0.5 {
        return 0.0;
    }
    let q = p.min(1.0 - p);
    let t = (-2.0 * q.ln()).sqrt();
    let mut z = -(t
        - (2.515517 + 0.802853 * t + 0.010328 * t * t)
            / (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t));
    for _ in 0..4 {
        let density = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        if density == 0.0 {
            break;
        }
        let f = if q >= 0.25 {
            0.5 * erf(z / std::f64::consts::SQRT_2) - (q - 0.5)
        } else {
            normal_cdf(z) - q
        };
        // Halley: Φ'' = −z·Φ', so the step is u / (1 + z·u/2) with u = f/Φ'.
        let u = f / density;
        let step = u / (1.0 + 0.5 * z * u);
        if !step.is_finite() {
            break;
        }
        z -= step;
        if step.abs() <= 1e-16 * z.abs() {
            break;
        }
    }
    if p < 0.5 { z } else { -z }
}

/// Below this |x| erf comes from its power series, above it erfc from its continued fraction:
/// both then converge to about 1e-15 relative in under 100 terms.
const ERF_SERIES_MAX: f64 = 1.5;

/// erf(x) = 2/√π·e^(−x²)·Σ x(2x²)^k/(1·3·…·(2k+1)) (Abramowitz & Stegun 7.1.6: all terms
/// positive, no cancellation) for small |x|, 1 − erfc(x) above.
fn erf(x: f64) -> f64 {
    if x < 0.0 {
        return -erf(-x);
    }
    if x >= ERF_SERIES_MAX {
        return 1.0 - erfc(x);
    }
    let x2 = 2.0 * x * x;
    let (mut term, mut sum) = (x, x);
    let mut k = 0.0;
    while term > 1e-17 * sum {
        k += 1.0;
        term *= x2 / (2.0 * k + 1.0);
        sum += term;
    }
    2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp() * sum
}

/// erfc(x) = e^(−x²)/√π / (x + (1/2)/(x + 1/(x + (3/2)/(x + …)))) (A&S 7.1.14) by Lentz's
/// method for x ≥ 1.5, where it keeps its relative precision deep in the tail; 1 − erf below.
fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < ERF_SERIES_MAX {
        return 1.0 - erf(x);
    }
    if x > 27.0 {
        return 0.0; // below the smallest subnormal
    }
    const TINY: f64 = 1e-300;
    let (mut f, mut c, mut dd) = (x, x, 0.0);
    for k in 1..1000 {
        let a = k as f64 / 2.0;
        dd = x + a * dd;
        dd = if dd == 0.0 { 1.0 / TINY } else { 1.0 / dd };
        c = x + a / c;
        if c == 0.0 {
            c = TINY;
        }
        let delta = c * dd;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / f
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample of the hand-checked tests (units do not matter to the rank statistics).
    const HAND: [f64; 6] = [10.0, -2.0, 4.0, 1.0, 6.0, 3.0];

    #[test]
    fn alpha_over_a_family_of_figures_splits_over_figures_and_looks() {
        let looks = Looks {
            first: 8,
            max_pairs: 16,
            alpha: 0.05,
        };
        assert_eq!(looks.at(), [8, 16]);
        assert!((looks.confidence_over(1) - 0.975).abs() < 1e-12);
        assert!((looks.confidence_over(100) - (1.0 - 0.05 / 200.0)).abs() < 1e-12);
        // Zero figures count as one.
        assert_eq!(looks.confidence_over(0), looks.confidence_over(1));
    }

    #[test]
    fn log_ratio_is_positive_when_current_is_worse() {
        // 10 % more time is worse; 10 % more throughput is better.
        assert!((log_ratio(100.0, 110.0, Better::Lower) - 1.1f64.ln()).abs() < 1e-15);
        assert!((log_ratio(100.0, 110.0, Better::Higher) + 1.1f64.ln()).abs() < 1e-15);
        assert!(log_ratio(100.0, 90.0, Better::Higher) > 0.0);
        assert_eq!(log_ratio(5.0, 5.0, Better::Lower), 0.0);
    }

    #[test]
    fn hand_checked_walsh_averages_estimate_and_interval() {
        // Sorted d = -2, 1, 3, 4, 6, 10; the 21 Walsh averages (d_i + d_j)/2, i <= j, by row:
        //   -2: -2, -0.5, 0.5, 1, 2, 4      1: 1, 2, 2.5, 3.5, 5.5
        //    3: 3, 3.5, 4.5, 6.5            4: 4, 5, 7       6: 6, 8      10: 10
        let want = [
            -2.0, -0.5, 0.5, 1.0, 1.0, 2.0, 2.0, 2.5, 3.0, 3.5, 3.5, 4.0, 4.0, 4.5, 5.0, 5.5, 6.0,
            6.5, 7.0, 8.0, 10.0,
        ];
        assert_eq!(walsh_averages(&HAND), want);
        // The 11th of 21 is the median.
        assert_eq!(hodges_lehmann(&HAND), 3.5);
        let s = sorted(&HAND);
        for (k, w) in want.iter().enumerate() {
            assert_eq!(walsh_kth(&s, k + 1), *w, "k {}", k + 1);
        }
        // Null distribution of W+ for n = 6 (64 sign patterns): W+ = 0, 1, 2 one way each,
        // 3 two ways ({3}, {1,2}). At 90 %: P(W+ <= 2) = 3/64 <= 0.05 < P(W+ <= 3) = 5/64, so
        // K = 3 and the interval is the 3rd smallest to the 3rd largest (19th): [0.5, 7].
        assert_eq!(hl_interval(&HAND, 0.90), (0.5, 7.0));
        // At 95 %: P(W+ <= 0) = 1/64 <= 0.025 < 2/64: K = 1, the extremes.
        assert_eq!(hl_interval(&HAND, 0.95), (-2.0, 10.0));
        // At 99 % even K = 1 has 1/64 > 0.005: no interval.
        assert_eq!(hl_interval(&HAND, 0.99), (f64::NEG_INFINITY, f64::INFINITY));
        // Even count: 15 averages of n = 5 are odd; n = 4 gives 10, the median of the 5th
        // and 6th. d = 0, 1, 2, 4: averages 0 .5 1 2 1 1.5 2.5 2 3 4 -> sorted 5th 1.5, 6th 2.
        assert_eq!(hodges_lehmann(&[4.0, 0.0, 2.0, 1.0]), 1.75);
    }

    #[test]
    fn walsh_selection_matches_the_sorted_averages() {
        let mut rng = Rng(0x5eed_0042);
        for n in [1usize, 2, 3, 7, 30, 90] {
            // Continuous values, then heavy ties and zeros (quantized timings).
            let smooth: Vec<f64> = (0..n).map(|_| rng.normal(0.03)).collect();
            let ties: Vec<f64> = smooth.iter().map(|v| (v * 100.0).round() / 100.0).collect();
            for d in [smooth, ties, vec![0.0; n]] {
                let want = walsh_averages(&d);
                let s = sorted(&d);
                for (k, w) in want.iter().enumerate() {
                    assert_eq!(walsh_kth(&s, k + 1), *w, "n {n} k {}", k + 1);
                }
            }
        }
    }

    #[test]
    fn hand_checked_signed_rank_test() {
        // |d| ranks: 1->1, 2->2, 3->3, 4->4, 6->5, 10->6; only -2 is negative: W- = 2.
        // Exact: P(W+ <= 2) = 3/64, two-sided 6/64.
        let r = wilcoxon(&HAND);
        assert_eq!((r.statistic, r.exact), (2.0, true));
        assert!((r.p - 6.0 / 64.0).abs() < 1e-15);
        // A tie and a zero, n = 10 <= 13: all sign flips of midranks. Nonzero |d| sorted
        // 0.1 0.1 -0.1 0.2 0.2 0.3 0.5 0.7: midranks 2 2 2 4.5 4.5 6 7 8, W- = 2; the flips with
        // W+ <= 2 are {} and each single rank-2 element: 4 of 256, two-sided 1/32.
        let d = [0.0, 0.0, 0.1, 0.2, 0.3, -0.1, 0.1, 0.2, 0.5, 0.7];
        let r = wilcoxon(&d);
        assert_eq!((r.statistic, r.exact), (2.0, true));
        assert!((r.p - 1.0 / 32.0).abs() < 1e-15);
        assert_eq!(wilcoxon(&[0.0; 20]).p, 1.0);
        assert!(wilcoxon(&[]).p.is_nan());
    }

    #[test]
    fn sign_test_small_cases() {
        // 3 of 3 positive: 2 * (1/8).
        assert_eq!(sign_test(&[1.0, 2.0, 3.0]), 0.25);
        // 1 negative of 6 (the zero dropped): 2 * (1 + 6)/64.
        assert_eq!(
            sign_test(&[1.0, 1.0, 0.0, 1.0, -1.0, 1.0, 1.0]),
            14.0 / 64.0
        );
        assert_eq!(sign_test(&[1.0, -1.0]), 1.0);
        assert_eq!(sign_test(&[0.0, 0.0]), 1.0);
        // Large n stays finite where 2^-n underflows.
        let d: Vec<f64> = (0..3000)
            .map(|i| if i % 3 == 0 { -1.0 } else { 1.0 })
            .collect();
        let p = sign_test(&d);
        assert!(p > 0.0 && p < 1e-60, "{p}");
    }

    #[test]
    fn autocorrelation_and_effective_n() {
        assert_eq!(lag1_autocorrelation(&[1.0, 2.0]), 0.0);
        assert_eq!(lag1_autocorrelation(&[0.1; 10]), 0.0);
        // Alternating signs: strongly negative.
        let alt: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        assert!((lag1_autocorrelation(&alt) + 0.95).abs() < 1e-12);
        // 1, 2, 3: deviations -1, 0, 1; (0 + 0)/2 = 0.
        assert_eq!(lag1_autocorrelation(&[1.0, 2.0, 3.0]), 0.0);
        assert_eq!(effective_n(100, 0.5), 100.0 / 3.0);
        assert_eq!(effective_n(100, -0.3), 100.0);
        assert_eq!(effective_n(100, 0.0), 100.0);
        assert_eq!(effective_n(100, 1.0), 0.0);
    }

    #[test]
    fn normal_quantile_inverts_the_cdf() {
        assert_eq!(normal_quantile(0.5), 0.0);
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert!(normal_quantile(1.5).is_nan());
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-14);
        for p in [1e-300, 1e-20, 1e-6, 0.01, 0.3, 0.499, 0.75, 0.999] {
            // Φ at a float z is only as good as z's last bit, z²·ε relative in the tail.
            let z = normal_quantile(p);
            let tol = 4.0 * f64::EPSILON * (1.0 + z * z);
            assert!((normal_cdf(z) / p - 1.0).abs() < tol, "{p}: {z}");
        }
        assert!((erf(0.5) + erfc(0.5) - 1.0).abs() < 1e-16);
        assert!((erf(2.0) + erfc(2.0) - 1.0).abs() < 1e-16);
    }

    /// n evenly spaced differences centre ± half_width, in the time order lowest, highest,
    /// second lowest, second highest, …: a hand-made sample whose lag-1 autocorrelation is
    /// strongly negative, so the interval is not widened.
    fn spread(centre: f64, half_width: f64, n: usize) -> Vec<f64> {
        let at = |i: usize| centre + half_width * (2.0 * i as f64 / (n - 1) as f64 - 1.0);
        (0..n)
            .map(|t| {
                if t % 2 == 0 {
                    at(t / 2)
                } else {
                    at(n - 1 - t / 2)
                }
            })
            .collect()
    }

    #[test]
    fn verdict_boundaries() {
        let conf = 0.95;
        let theta_pct = 5.0;
        let theta = 0.05f64.ln_1p();
        // Interval clearly above +5 %: FAIL; the mirror image: IMPROVED; tight at 0: PASS.
        let fail = judge_pairs(&spread(0.10, 0.02, 40), theta_pct, conf);
        assert_eq!(fail.decision, Decision::Fail, "{fail:?}");
        assert!(fail.low_pct > theta_pct && fail.why.is_none());
        let improved = judge_pairs(&spread(-0.10, 0.02, 40), theta_pct, conf);
        assert_eq!(improved.decision, Decision::Improved, "{improved:?}");
        let pass = judge_pairs(&spread(0.0, 0.02, 40), theta_pct, conf);
        assert_eq!(pass.decision, Decision::Pass, "{pass:?}");
        assert!(pass.low_pct > -theta_pct && pass.high_pct < theta_pct);
        // Centred on the boundary: undecided, and the reason names the interval.
        let edge = judge_pairs(&spread(theta, 0.02, 40), theta_pct, conf);
        assert_eq!(edge.decision, Decision::Undecided);
        let why = edge.why.unwrap();
        assert!(
            why.starts_with("the interval [+") && why.ends_with("straddles ±5 %"),
            "{why}"
        );
        // The boundary itself: a lower end exactly at θ is not a FAIL (L > θ is strict).
        let j = judge_pairs(&[theta; 10], theta_pct, conf);
        assert!((j.low_pct - theta_pct).abs() < 1e-12, "{j:?}");
        assert_eq!(j.decision, Decision::Undecided);
        // Too few pairs for the confidence.
        let few = judge_pairs(&[0.1, 0.11, 0.12], theta_pct, conf);
        assert_eq!(few.decision, Decision::Undecided);
        assert_eq!(
            few.why.as_deref(),
            Some("too few pairs (3) for a 95.0 % interval")
        );
        assert_eq!(
            judge_pairs(&[], theta_pct, conf).decision,
            Decision::Undecided
        );
        // Correlated pairs: a slow ramp far above θ is still undecided.
        let ramp: Vec<f64> = (0..40).map(|i| 0.2 + 0.001 * i as f64).collect();
        let r = judge_pairs(&ramp, theta_pct, conf);
        assert_eq!(r.decision, Decision::Undecided);
        assert!(r.rho >= MAX_RHO && r.n_eff < 40.0 / 3.0);
        let why = r.why.unwrap();
        assert!(
            why.starts_with("pairs are correlated (lag-1 autocorrelation 0."),
            "{why}"
        );
        // A rho over 0.5 that 12 independent pairs give by chance more than once in a hundred
        // (0.59 < 0.67) does not hide an eightfold change: the widened interval decides.
        let wiggle = [1., 1., 1., 0., 0., 0., -1., -1., -1., 0., 0., 1.];
        let d: Vec<f64> = wiggle.iter().map(|w| -2.1 + 0.05 * w).collect();
        let j = judge_pairs(&d, theta_pct, conf);
        assert!(j.rho > MAX_RHO && j.rho < rho_by_chance(12), "{j:?}");
        assert_eq!(j.decision, Decision::Improved, "{j:?}");
    }

    #[test]
    fn positive_autocorrelation_widens_the_interval() {
        // A moving average e_t + e_{t-1}/2 of N(0, 0.03) noise: rho = 0.4 in theory, under
        // the 0.5 cut.
        let mut rng = Rng(0x5eed_00aa);
        let e: Vec<f64> = (0..61).map(|_| rng.normal(0.03)).collect();
        let ma: Vec<f64> = e.windows(2).map(|w| w[1] + 0.5 * w[0]).collect();
        let (lo, hi) = hl_interval(&ma, 0.95);
        let j = judge_pairs(&ma, 5.0, 0.95);
        assert!(j.rho > 0.2 && j.rho < MAX_RHO, "{}", j.rho);
        let widen = ((1.0 + j.rho) / (1.0 - j.rho)).sqrt();
        let est = hodges_lehmann(&ma);
        let want_low = ((est - (est - lo) * widen).exp_m1()) * 100.0;
        let want_high = ((est + (hi - est) * widen).exp_m1()) * 100.0;
        assert!((j.low_pct - want_low).abs() < 1e-12 && (j.high_pct - want_high).abs() < 1e-12);
        assert!(j.low_pct < lo.exp_m1() * 100.0);
    }

    #[test]
    fn looks_double_up_to_the_maximum() {
        let l = Looks::default();
        assert_eq!(l.at(), [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]);
        assert!((l.confidence() - (1.0 - 0.05 / 9.0)).abs() < 1e-15);
        assert!(l.is_look(64) && !l.is_look(65) && l.is_look(4096));
        let odd = Looks {
            first: 20,
            max_pairs: 100,
            alpha: 0.1,
        };
        assert_eq!(odd.at(), [20, 40, 80, 100]);
        let one = Looks {
            first: 50,
            max_pairs: 30,
            alpha: 0.1,
        };
        assert_eq!(one.at(), [30]);
        assert!((one.confidence() - 0.9).abs() < 1e-15);
        assert_eq!(
            serde_json::to_value(Decision::Undecided).unwrap(),
            "UNDECIDED"
        );
    }

    /// xorshift64* (Vigna): a fixed-seed source for the simulations below.
    struct Rng(u64);

    impl Rng {
        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
            // In (0, 1): never 0, so the logarithm below is finite.
            ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        /// N(0, sd) by Box–Muller (one of the pair of normals).
        fn normal(&mut self, sd: f64) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
    }

    /// One sequential session: pairs with differences shift + N(0, sd), judged at every look
    /// until a verdict; returns the last decision.
    fn session(rng: &mut Rng, looks: &Looks, conf: f64, shift: f64, sd: f64, min: f64) -> Decision {
        let mut d = Vec::with_capacity(looks.max_pairs);
        let mut decision = Decision::Undecided;
        for n in looks.at() {
            while d.len() < n {
                d.push(shift + rng.normal(sd));
            }
            decision = judge_pairs(&d, min, conf).decision;
            if decision != Decision::Undecided {
                break;
            }
        }
        decision
    }

    fn fail_rate(seed: u64, looks: &Looks, conf: f64, shift: f64, sd: f64, min: f64) -> f64 {
        let mut rng = Rng(seed);
        let sessions = 2000;
        let fails = (0..sessions)
            .filter(|_| session(&mut rng, looks, conf, shift, sd, min) == Decision::Fail)
            .count();
        fails as f64 / sessions as f64
    }

    #[test]
    fn looks_hold_the_false_alarm_rate_under_the_null() {
        // No minimum effect, so a FAIL is exactly a false alarm of the one-sided test at each
        // look; sessions run to the last look unless they fail. The split keeps it within
        // alpha/2 (binomial sd over 2000 sessions is about 0.0035 at 0.025).
        let looks = Looks {
            first: 16,
            max_pairs: 256,
            alpha: 0.05,
        };
        let split = fail_rate(0x5eed_0001, &looks, looks.confidence(), 0.0, 0.05, 0.0);
        assert!(split <= looks.alpha / 2.0 + 0.01, "{split}");
        // Without the split, alpha at every look, the same sessions fail beyond alpha/2.
        let unsplit = fail_rate(0x5eed_0001, &looks, 1.0 - looks.alpha, 0.0, 0.05, 0.0);
        // (0.014 and 0.0755 with this seed.)
        assert!(
            unsplit > looks.alpha / 2.0 + 0.01 && unsplit > split,
            "{unsplit} vs {split}"
        );
        // With the defaults (5 % minimum effect) the null passes and never fails.
        let d = Looks::default();
        assert_eq!(
            fail_rate(0x5eed_0002, &d, d.confidence(), 0.0, 0.05, 5.0),
            0.0
        );
    }

    #[test]
    fn looks_catch_a_five_percent_slowdown() {
        let d = Looks::default();
        let rate = fail_rate(0x5eed_0003, &d, d.confidence(), 0.05f64.ln_1p(), 0.02, 2.0);
        assert!(rate >= 0.99, "{rate}");
    }
}
