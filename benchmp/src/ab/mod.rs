//! A/B statistics as pure functions over sample arrays: the analysis of the DTO test-suite
//! guide, used by `dto` for its cells and by `benchmp compare` for every tool's figures.
//!
//! Samples of both sides are pooled and sorted; the central figure is the mean of the
//! 10th–90th percentile (the `trim_mean(x, 0.1)` convention: `floor(n / 10)` samples cut from
//! each end); the two trimmed distributions are compared with the two-sample
//! Kolmogorov–Smirnov test as SciPy's `ks_2samp` computes it (see [`ks_2samp`]); outliers are
//! counted against one threshold, Q3 + 1.5 × IQR of the two sides' samples taken together;
//! and the verdict is the guide's rule: a change beyond the minimum effect in the worse
//! direction is a regression. [`judge`] adds what a comparison of two runs needs: the
//! direction of "better" (throughputs up, latencies down), IMPROVED for a change beyond the
//! effect in the better direction, and NOISY for a change the KS test cannot tell from the
//! spread when the samples are numerous enough for it to tell at all.

pub mod kolmogorov;
pub mod mann_whitney;
pub mod paired;

use serde::{Deserialize, Serialize};

pub use crate::stats::{Quantile, quantile, sort};

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

/// The verdict on one A/B figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// No change beyond the minimum effect.
    Pass,
    /// Worse by more than the minimum effect: a regression.
    Fail,
    /// Better by more than the minimum effect.
    Improved,
    /// A reference-only row: shown, never judged.
    Ref,
    /// A change beyond the minimum effect that is this run's noise, not a regression: an A/A
    /// cell (one implementation against itself) that moved, or a shift the KS test cannot
    /// tell from the spread of the samples.
    Noisy,
    /// The figure is in one report only.
    Missing,
}

impl Verdict {
    /// The word the tables, the CSV and the JSON use.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Improved => "IMPROVED",
            Verdict::Ref => "REF",
            Verdict::Noisy => "NOISY",
            Verdict::Missing => "MISSING",
        }
    }
}

/// Which way a figure gets better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Throughputs (MB/s, iterations/s, DMIPS).
    Higher,
    /// Times and latencies (ns).
    Lower,
}

impl Better {
    /// "higher" or "lower".
    pub fn word(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }
}

/// The rule that turns a comparison into a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// Smallest change that counts, percent of the baseline's trimmed mean.
    pub min_effect_pct: f64,
    /// KS p-value at or above which a change is indistinguishable from the spread.
    pub alpha: f64,
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            min_effect_pct: 5.0,
            alpha: 0.05,
        }
    }
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

/// The verdict of a comparison under `rule`, for a figure that gets better in `better`'s
/// direction: beyond the minimum effect, FAIL (worse) or IMPROVED (better), unless the
/// samples are numerous enough for the KS test to reject and it does not (NOISY); else
/// PASS. With too few samples for the test, the effect alone decides (dto's rule).
pub fn judge(c: &Comparison, better: Better, rule: Rule, n: (usize, usize)) -> Verdict {
    let worse_pct = match better {
        Better::Higher => -c.change_pct,
        Better::Lower => c.change_pct,
    };
    if !worse_pct.is_finite() || worse_pct.abs() <= rule.min_effect_pct {
        return Verdict::Pass;
    }
    let testable = ks_min_p(n.0, n.1) < rule.alpha;
    if testable && c.ks.p >= rule.alpha {
        Verdict::Noisy
    } else if worse_pct > 0.0 {
        Verdict::Fail
    } else {
        Verdict::Improved
    }
}

/// Everything the analysis says about one A/B cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Trimmed mean of the baseline samples.
    pub baseline_mean: f64,
    /// Trimmed mean of the current samples.
    pub current_mean: f64,
    /// (current − baseline) / baseline × 100.
    pub change_pct: f64,
    /// KS test on the trimmed distributions.
    pub ks: Ks,
    /// Shared-threshold outlier counts over the untrimmed samples.
    pub outliers: Outliers,
    /// PASS, FAIL, or REF for reference-only rows (NOISY is set by the caller for A/A cells).
    pub verdict: Verdict,
}

/// Compares two sorted sample sets as the guide does; `min_effect_pct` is PERF_MIN_EFFECT.
pub fn compare(
    baseline: &[f64],
    current: &[f64],
    min_effect_pct: f64,
    reference_only: bool,
) -> Comparison {
    let (tb, tc) = (trimmed(baseline), trimmed(current));
    let baseline_mean = mean(tb);
    let current_mean = mean(tc);
    let change_pct = (current_mean - baseline_mean) / baseline_mean * 100.0;
    let verdict = if reference_only {
        Verdict::Ref
    } else if change_pct > min_effect_pct {
        Verdict::Fail
    } else {
        Verdict::Pass
    };
    Comparison {
        baseline_mean,
        current_mean,
        change_pct,
        ks: ks_2samp(tb, tc),
        outliers: iqr_outliers(baseline, current),
        verdict,
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
    fn trimming_cuts_a_tenth_from_each_end() {
        let v: Vec<f64> = (0..20).map(f64::from).collect();
        assert_eq!(trimmed(&v), &v[2..18]);
        assert_eq!(trimmed_mean(&v), 9.5);
        let small = [1.0, 2.0, 3.0];
        assert_eq!(trimmed(&small), &small);
    }

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

    #[test]
    fn outliers_share_one_threshold() {
        let b: Vec<f64> = (1..=8).map(f64::from).chain([100.0]).collect();
        let c: Vec<f64> = (1..=8).map(f64::from).chain([50.0, 60.0]).collect();
        let o = iqr_outliers(&b, &c);
        assert!(o.threshold > 8.0 && o.threshold < 50.0, "{o:?}");
        assert_eq!((o.baseline, o.current), (1, 2));
    }

    #[test]
    fn verdict_labels_match_the_json() {
        for v in [
            Verdict::Pass,
            Verdict::Fail,
            Verdict::Improved,
            Verdict::Ref,
            Verdict::Noisy,
            Verdict::Missing,
        ] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.label());
        }
    }

    #[test]
    fn verdicts_follow_the_minimum_effect() {
        let base: Vec<f64> = (0..100).map(|i| 100.0 + (i % 7) as f64).collect();
        let mut s = base.clone();
        sort(&mut s);
        let slower: Vec<f64> = s.iter().map(|x| x * 1.05).collect();
        let faster: Vec<f64> = s.iter().map(|x| x * 0.9).collect();
        assert_eq!(compare(&s, &slower, 2.0, false).verdict, Verdict::Fail);
        assert_eq!(compare(&s, &slower, 10.0, false).verdict, Verdict::Pass);
        assert_eq!(compare(&s, &faster, 2.0, false).verdict, Verdict::Pass);
        assert_eq!(compare(&s, &slower, 2.0, true).verdict, Verdict::Ref);
        let c = compare(&s, &slower, 2.0, false);
        assert!((c.change_pct - 5.0).abs() < 1e-9);
    }

    #[test]
    fn judging_knows_which_way_is_better() {
        let s: Vec<f64> = (0..50).map(|i| 100.0 + (i % 5) as f64).collect();
        let up: Vec<f64> = s.iter().map(|x| x * 1.10).collect();
        let rule = Rule::default();
        let c = compare(&s, &up, rule.min_effect_pct, false);
        // 10 % more ns is a regression; 10 % more MB/s an improvement.
        assert_eq!(judge(&c, Better::Lower, rule, (50, 50)), Verdict::Fail);
        assert_eq!(judge(&c, Better::Higher, rule, (50, 50)), Verdict::Improved);
        let small: Vec<f64> = s.iter().map(|x| x * 1.02).collect();
        let c = compare(&s, &small, rule.min_effect_pct, false);
        assert_eq!(judge(&c, Better::Lower, rule, (50, 50)), Verdict::Pass);
    }

    #[test]
    fn a_shift_within_the_spread_is_noisy_when_the_test_can_tell() {
        // Two wide, overlapping distributions whose trimmed means differ by about 6 %.
        let a: Vec<f64> = (0..40).map(|i| 50.0 + i as f64 * 2.5).collect();
        let b: Vec<f64> = (0..40).map(|i| 55.0 + i as f64 * 2.5).collect();
        let rule = Rule::default();
        let c = compare(&a, &b, rule.min_effect_pct, false);
        assert!(c.change_pct > rule.min_effect_pct && c.ks.p > 0.05, "{c:?}");
        assert_eq!(judge(&c, Better::Lower, rule, (40, 40)), Verdict::Noisy);
        // One sample a side: the test cannot tell anything, the effect decides.
        let c = compare(&[100.0], &[120.0], rule.min_effect_pct, false);
        assert_eq!(judge(&c, Better::Lower, rule, (1, 1)), Verdict::Fail);
        assert!(ks_min_p(3, 3) > 0.05 && ks_min_p(5, 5) < 0.05);
    }
}
