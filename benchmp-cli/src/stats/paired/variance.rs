//! Where the variance of paired differences lives: within a process pair (repetition to
//! repetition) and between process pairs (what each new pair of processes brings: page
//! placement, code layout, frequency), by the one-way random-effects analysis of variance
//! with the method-of-moments estimates (Searle, Casella & McCulloch, *Variance Components*,
//! §3.5), which takes groups of unequal sizes.

use serde::{Deserialize, Serialize};

/// The two parts of the differences' variance, as standard deviations of the log ratio in
/// percent (a log ratio of 0.01 is about 1 %).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Components {
    /// Standard deviation of one repetition pair's difference about its process pair's mean.
    pub within_sd_pct: f64,
    /// Standard deviation of the process pairs' true means about the overall one (0 when the
    /// spread of their means is no more than the within part explains).
    pub between_sd_pct: f64,
    /// Process pairs the estimate is over.
    pub process_pairs: usize,
    /// Repetition pairs the estimate is over.
    pub pairs: usize,
    /// p-value of the one-way analysis's F test, MSB/MSW on (k − 1, N − k) degrees of
    /// freedom: how often process pairs with no between part would spread their means this
    /// far (1 when MSW is 0 and the means agree; absent in reports from before it was kept).
    #[serde(default = "no_test")]
    pub between_p: f64,
}

fn no_test() -> f64 {
    f64::NAN
}

/// The variance components of `groups` (each process pair's differences): `None` with fewer
/// than two groups or no group of two or more, where the parts cannot be told apart.
///
/// MSW = Σᵢ Σⱼ (xᵢⱼ − x̄ᵢ)² / (N − k), MSB = Σᵢ nᵢ (x̄ᵢ − x̄)² / (k − 1),
/// n₀ = (N − Σᵢ nᵢ²/N) / (k − 1); within = MSW, between = max(0, (MSB − MSW) / n₀).
pub fn components(groups: &[&[f64]]) -> Option<Components> {
    let groups: Vec<&[f64]> = groups.iter().copied().filter(|g| !g.is_empty()).collect();
    let k = groups.len();
    let n: usize = groups.iter().map(|g| g.len()).sum();
    if k < 2 || n <= k {
        return None;
    }
    let mean = |g: &[f64]| g.iter().sum::<f64>() / g.len() as f64;
    let grand = groups.iter().flat_map(|g| g.iter()).sum::<f64>() / n as f64;
    let (mut ssw, mut ssb) = (0.0, 0.0);
    for g in &groups {
        let m = mean(g);
        ssw += g.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
        ssb += g.len() as f64 * (m - grand) * (m - grand);
    }
    let msw = ssw / (n - k) as f64;
    let msb = ssb / (k - 1) as f64;
    let sum_sq: f64 = groups.iter().map(|g| (g.len() * g.len()) as f64).sum();
    let n0 = (n as f64 - sum_sq / n as f64) / (k - 1) as f64;
    let between = ((msb - msw) / n0).max(0.0);
    let between_p = if msw > 0.0 {
        use statrs::distribution::{ContinuousCDF, FisherSnedecor};
        FisherSnedecor::new((k - 1) as f64, (n - k) as f64).map_or(f64::NAN, |f| f.sf(msb / msw))
    } else if msb > 0.0 {
        0.0
    } else {
        1.0
    };
    Some(Components {
        within_sd_pct: msw.sqrt() * 100.0,
        between_sd_pct: between.sqrt() * 100.0,
        process_pairs: k,
        pairs: n,
        between_p,
    })
}

/// [`components`] of differences in time order cut into process pairs of `sizes` pairs each;
/// `None` also when the sizes do not add up to the differences.
pub fn of_process_pairs(differences: &[f64], sizes: &[usize]) -> Option<Components> {
    if sizes.iter().sum::<usize>() != differences.len() {
        return None;
    }
    let mut groups = Vec::with_capacity(sizes.len());
    let mut rest = differences;
    for &s in sizes {
        let (g, r) = rest.split_at(s);
        groups.push(g);
        rest = r;
    }
    components(&groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_groups_by_hand() {
        // Groups {1, 3} and {5, 7} (in hundredths): means 2 and 6, grand mean 4.
        // SSW = 2 + 2 = 4 over N - k = 2: MSW = 2. SSB = 2·4 + 2·4 = 16 over k - 1 = 1.
        // n0 = (4 - 8/4) / 1 = 2: between = (16 - 2) / 2 = 7.
        let c = components(&[&[0.01, 0.03], &[0.05, 0.07]]).unwrap();
        assert!((c.within_sd_pct - 2f64.sqrt()).abs() < 1e-12);
        assert!((c.between_sd_pct - 7f64.sqrt()).abs() < 1e-12);
        assert_eq!((c.process_pairs, c.pairs), (2, 4));
        // F = 16/2 = 8 on (1, 2) degrees of freedom, the square of t on 2: p = 1 − t/√(2 + t²)
        // at t = √8, 0.1055728.
        assert!((c.between_p - 0.1055728).abs() < 1e-6, "{}", c.between_p);
    }

    #[test]
    fn unequal_groups_by_hand() {
        // {0, 2, 4} and {6} (hundredths): means 2 and 6, grand 3. SSW = 8 over 2: MSW = 4.
        // SSB = 3·1 + 1·9 = 12 over 1. n0 = 4 - 10/4 = 1.5: between = (12 - 4) / 1.5.
        let c = components(&[&[0.0, 0.02, 0.04], &[0.06]]).unwrap();
        assert!((c.within_sd_pct - 2.0).abs() < 1e-12);
        assert!((c.between_sd_pct - (8.0f64 / 1.5).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn means_closer_than_the_noise_give_no_between_part() {
        let c = components(&[&[0.0, 0.02], &[0.01, 0.01]]).unwrap();
        assert_eq!(c.between_sd_pct, 0.0);
        assert_eq!(c.between_p, 1.0);
        // No spread within and different means: the between part is certain.
        let c = components(&[&[0.01, 0.01], &[0.02, 0.02]]).unwrap();
        assert_eq!(c.between_p, 0.0);
    }

    #[test]
    fn too_little_to_tell_the_parts_apart() {
        assert_eq!(components(&[&[0.01, 0.02]]), None);
        assert_eq!(components(&[&[0.01], &[0.02]]), None);
        assert_eq!(of_process_pairs(&[0.01, 0.02, 0.03], &[1, 1]), None);
        let c = of_process_pairs(&[0.01, 0.03, 0.05, 0.07], &[2, 2]).unwrap();
        assert_eq!((c.process_pairs, c.pairs), (2, 4));
    }
}
