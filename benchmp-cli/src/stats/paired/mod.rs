//! Paired A/B statistics: one repetition of each build close together in time is one unit,
//! so slow drift of the machine falls on both halves and cancels in their ratio, where a
//! test over the samples of two runs measures the runs' drift (Kalibera & Jones, ISMM 2013).
//! The method: log ratios per pair, the Hodges–Lehmann estimate with the Wilcoxon signed-rank
//! interval, the sign test as a cross-check, lag-1 autocorrelation for dependent pairs; over
//! a few process pairs' estimates, Student's t interval on their mean ([`judge_mean`]); and
//! sequential looks whose confidences come from an alpha-spending function ([`sequential`]).
//!
//! Under the null hypothesis, with the order inside each pair random, the sign of each pair's
//! difference is a fair coin whatever the drift does, so the signed-rank and sign tests here
//! are exact randomization tests. Both reproduce SciPy 1.17 (`scipy.stats.wilcoxon` and
//! `binomtest` with their defaults); the interval is the signed-rank test inverted (Hollander
//! & Wolfe, *Nonparametric Statistical Methods*, §3.3). The verdict is the interval against
//! the minimum effect on both sides, undecided (NOISY) while it straddles either boundary.
//! Every function takes finite values; NaN in a sample gives an unspecified result.

mod hodges_lehmann;
pub mod sequential;
mod sign;
pub mod variance;
mod wilcoxon;

use serde::{Deserialize, Serialize};

pub use hodges_lehmann::{hl_interval, hodges_lehmann, walsh_averages};
pub use sign::sign_test;
pub use wilcoxon::{SignedRank, WILCOXON_MAX_EXACT_N, WILCOXON_MAX_FLIP_N, wilcoxon};

use benchmp::schema::Better;

/// The per-pair difference, positive when the current side is worse: ln(current/base) for
/// times, ln(base/current) for throughputs, so one rule judges every figure.
pub fn log_ratio(base: f64, current: f64, better: Better) -> f64 {
    match better {
        Better::Lower => (current / base).ln(),
        Better::Higher => (base / current).ln(),
    }
}

/// Sample lag-1 autocorrelation of the differences in time order, Σ(d_t − d̄)(d_{t+1} − d̄) /
/// Σ(d_t − d̄)² (the check that pairs are independent); 0 for n < 3 or all values equal.
pub fn lag1_autocorrelation(d: &[f64]) -> f64 {
    if d.len() < 3 || d.iter().all(|&v| v == d[0]) {
        return 0.0;
    }
    let mean = benchmp::stats::descriptive::mean(d);
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
    let estimate = hodges_lehmann(d);
    let (mut low, mut high) = hl_interval(d, confidence);
    let rho = lag1_autocorrelation(d);
    if rho > 0.0 && low.is_finite() {
        let widen = ((1.0 + rho) / (1.0 - rho)).sqrt();
        if widen.is_finite() {
            low = estimate - (estimate - low) * widen;
            high = estimate + (high - estimate) * widen;
        } else {
            (low, high) = (f64::NEG_INFINITY, f64::INFINITY);
        }
    }
    judge_interval(d, estimate, (low, high), min_effect_pct, confidence, units)
}

/// The verdict of an interval [low, high] (log ratios, already widened for autocorrelation)
/// about `estimate` over the units `d`: undecided when it is unbounded (too few units) or the
/// units are clearly correlated, else FAIL, IMPROVED, PASS or undecided against ±θ.
fn judge_interval(
    d: &[f64],
    estimate: f64,
    (low, high): (f64, f64),
    min_effect_pct: f64,
    confidence: f64,
    units: &str,
) -> Judgement {
    let n = d.len();
    let rho = lag1_autocorrelation(d);
    let n_eff = effective_n(n, rho);
    let formed = low.is_finite();
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

/// The verdict on a few units that are each an estimate already (process pairs' estimates):
/// their mean with Student's t interval at `confidence`, mean ± t(n−1)·s/√n, which exists from
/// two units at any confidence (a signed-rank interval needs 8 units for 97.5 % and 11 for
/// 99.8 %, so early looks at high confidence could not decide). The interval is widened for
/// lag-1 autocorrelation and the verdict read off it as in [`judge`]; `estimate_pct` is the
/// mean, and the signed-rank and sign tests' p-values are reported beside it.
pub fn judge_mean(d: &[f64], min_effect_pct: f64, confidence: f64, units: &str) -> Judgement {
    let n = d.len();
    let (mean, sd) =
        benchmp::stats::descriptive::spread(d).map_or((f64::NAN, 0.0), |s| (s.mean, s.stddev));
    let rho = lag1_autocorrelation(d);
    let (mut low, mut high) = (f64::NEG_INFINITY, f64::INFINITY);
    if n >= 2 && confidence < 1.0 {
        let half =
            student_t_quantile(0.5 + confidence / 2.0, (n - 1) as f64) * sd / (n as f64).sqrt();
        let widen = if rho > 0.0 {
            ((1.0 + rho) / (1.0 - rho)).sqrt()
        } else {
            1.0
        };
        if (half * widen).is_finite() {
            (low, high) = (mean - half * widen, mean + half * widen);
        }
    }
    judge_interval(d, mean, (low, high), min_effect_pct, confidence, units)
}

/// Student's t quantile with `df` degrees of freedom at probability `p` (statrs).
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) if p > 0.0 && p < 1.0 => t.inverse_cdf(p),
        _ if p >= 1.0 => f64::INFINITY,
        _ => f64::NAN,
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

    /// The confidence of each look's interval under Bonferroni's split, 1 − alpha/looks: the
    /// chance of a false alarm at any look stays at most alpha, but each look pays as if the
    /// looks were independent ([`sequential`] spends alpha by their joint law instead).
    pub fn confidence(&self) -> f64 {
        1.0 - self.alpha / self.at().len() as f64
    }

    /// Whether a session with `n` pairs is at one of the looks of [`Looks::at`].
    pub fn is_look(&self, n: usize) -> bool {
        self.at().contains(&n)
    }
}

#[cfg(test)]
mod tests {
    use super::hodges_lehmann::{sorted, walsh_kth};
    use super::*;

    /// The sample of the hand-checked tests (units do not matter to the rank statistics).
    const HAND: [f64; 6] = [10.0, -2.0, 4.0, 1.0, 6.0, 3.0];

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
    fn student_t_quantiles() {
        // R's qt(0.975, 3), qt(0.975, 7), qt(0.9995, 3); far in the tail the closed forms of
        // two degrees of freedom, (2p − 1)/√(2p(1 − p)), and of one, tan(π(p − 1/2)).
        let two = |p: f64| (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
        let one = |p: f64| (std::f64::consts::PI * (p - 0.5)).tan();
        for (p, df, want) in [
            (0.975, 3.0, 3.182446305),
            (0.975, 7.0, 2.364624252),
            (0.9995, 3.0, 12.92397863),
            (1.0 - 1e-9, 2.0, two(1.0 - 1e-9)),
            (0.999, 1.0, one(0.999)),
        ] {
            let t = student_t_quantile(p, df);
            assert!(
                (t - want).abs() < 1e-4 * want,
                "qt({p}, {df}) = {t}, not {want}"
            );
        }
        assert_eq!(student_t_quantile(1.0, 3.0), f64::INFINITY);
    }

    #[test]
    fn mean_interval_by_hand() {
        // 1, 2, 3, 6 (hundredths): mean 3, s² = (4 + 1 + 0 + 9)/3 = 14/3, se = √(14/12);
        // at 95 % t(3) = 3.1824: half-width 3.437; lag-1 autocorrelation (2 + 0 + 0)/14 > 0
        // widens it by √((1 + ρ)/(1 − ρ)).
        let d = [0.01, 0.02, 0.03, 0.06];
        let j = judge_mean(&d, 50.0, 0.95, "process pairs");
        let rho = 2.0f64 / 14.0;
        let half = 3.182446305 * (14.0f64 / 12.0).sqrt() * ((1.0 + rho) / (1.0 - rho)).sqrt();
        assert!((j.rho - rho).abs() < 1e-12);
        assert!((j.estimate_pct - 0.03f64.exp_m1() * 100.0).abs() < 1e-9);
        assert!(
            (j.low_pct - (0.03 - half / 100.0).exp_m1() * 100.0).abs() < 1e-6,
            "{j:?}"
        );
        assert!(
            (j.high_pct - (0.03 + half / 100.0).exp_m1() * 100.0).abs() < 1e-6,
            "{j:?}"
        );
        assert_eq!(j.decision, Decision::Pass);
        // One unit: no interval at any confidence.
        let one = judge_mean(&[0.2], 2.0, 0.9, "process pairs");
        assert_eq!(one.decision, Decision::Undecided);
        assert_eq!(
            one.why.as_deref(),
            Some("too few process pairs (1) for a 90.0 % interval")
        );
        // Four clear units decide at a confidence a signed-rank interval of four cannot reach.
        let fail = judge_mean(&[0.10, 0.11, 0.09, 0.10], 2.0, 0.999, "process pairs");
        assert_eq!(fail.decision, Decision::Fail, "{fail:?}");
        assert_eq!(
            judge(&[0.10, 0.11, 0.09, 0.10], 2.0, 0.999, "process pairs").decision,
            Decision::Undecided
        );
    }

    /// One sequential session over units shift + N(0, sd) with a look after every unit from
    /// the fourth (information n/max), t intervals at the spending function's confidences.
    fn spent_session(rng: &mut Rng, bounds: &[f64], shift: f64, sd: f64, min: f64) -> Decision {
        let max = bounds.len() + 3;
        let mut d = Vec::new();
        for n in 1..=max {
            d.push(shift + rng.normal(sd));
            if n < 4 {
                continue;
            }
            let c = bounds[n - 4];
            let j = judge_mean(&d, min, sequential::confidence_at(c), "units");
            if j.decision != Decision::Undecided || n == max {
                return j.decision;
            }
        }
        unreachable!()
    }

    #[test]
    fn spent_looks_hold_alpha_with_t_intervals() {
        // Looks after units 4 to 16, information n/16: the same boundaries in every session.
        let times: Vec<f64> = (4..=16).map(|n| n as f64 / 16.0).collect();
        let b = sequential::boundaries(&times, 0.05);
        // No minimum effect: a FAIL is a false alarm of the one-sided test, at most alpha/2
        // over all 13 looks (binomial sd over 4000 sessions about 0.0025 at 0.025).
        let mut rng = Rng(0x5eed_0101);
        let sessions = 4000;
        let fails = (0..sessions)
            .filter(|_| spent_session(&mut rng, &b, 0.0, 0.01, 0.0) == Decision::Fail)
            .count();
        let rate = fails as f64 / sessions as f64;
        assert!(rate <= 0.025 + 0.008, "{rate}");
        // A change of 3θ with units of sd θ/2 fails in nearly every session, and the same
        // units with no change pass within ±θ in nearly every one.
        let theta = 0.01f64;
        let mut rng = Rng(0x5eed_0102);
        let fail = (0..500)
            .filter(|_| {
                spent_session(&mut rng, &b, 3.0 * theta, theta / 2.0, 1.0) == Decision::Fail
            })
            .count();
        assert!(fail >= 490, "{fail}");
        let pass = (0..500)
            .filter(|_| spent_session(&mut rng, &b, 0.0, theta / 2.0, 1.0) == Decision::Pass)
            .count();
        assert!(pass >= 490, "{pass}");
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
