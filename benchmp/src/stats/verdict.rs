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

use serde::{Deserialize, Serialize};

use super::descriptive::{Outliers, iqr_outliers, mean, trimmed};
use super::ks::{Ks, ks_2samp, ks_min_p};
use crate::schema::Better;

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

/// The rule that turns a comparison into a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JudgeRule {
    /// Smallest change that counts, percent of the baseline's trimmed mean.
    pub min_effect_pct: f64,
    /// KS p-value at or above which a change is indistinguishable from the spread.
    pub alpha: f64,
}

impl Default for JudgeRule {
    fn default() -> Self {
        JudgeRule {
            min_effect_pct: 5.0,
            alpha: 0.05,
        }
    }
}

/// The verdict of a comparison under `rule`, for a figure that gets better in `better`'s
/// direction: beyond the minimum effect, FAIL (worse) or IMPROVED (better), unless the
/// samples are numerous enough for the KS test to reject and it does not (NOISY); else
/// PASS. With too few samples for the test, the effect alone decides (dto's rule).
pub fn judge(c: &CellComparison, better: Better, rule: JudgeRule, n: (usize, usize)) -> Verdict {
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
pub struct CellComparison {
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
) -> CellComparison {
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
    CellComparison {
        baseline_mean,
        current_mean,
        change_pct,
        ks: ks_2samp(tb, tc),
        outliers: iqr_outliers(baseline, current),
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::sort;

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
        let rule = JudgeRule::default();
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
        let rule = JudgeRule::default();
        let c = compare(&a, &b, rule.min_effect_pct, false);
        assert!(c.change_pct > rule.min_effect_pct && c.ks.p > 0.05, "{c:?}");
        assert_eq!(judge(&c, Better::Lower, rule, (40, 40)), Verdict::Noisy);
        // One sample a side: the test cannot tell anything, the effect decides.
        let c = compare(&[100.0], &[120.0], rule.min_effect_pct, false);
        assert_eq!(judge(&c, Better::Lower, rule, (1, 1)), Verdict::Fail);
        assert!(ks_min_p(3, 3) > 0.05 && ks_min_p(5, 5) < 0.05);
    }
}
