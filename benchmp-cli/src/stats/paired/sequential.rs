//! Looks that keep alpha at any number of them: a group-sequential design with the
//! O'Brien-Fleming-type alpha-spending function of Lan & DeMets (Biometrika 70, 1983), whose
//! boundaries come from the joint law of the looks (Armitage, McPherson & Rowe's recursive
//! integration; Jennison & Turnbull, *Group Sequential Methods*, §7.2 and ch. 19).
//!
//! A statistic looked at after every process pair with Bonferroni's split pays for each look
//! as if it were independent of the others; successive looks share most of their data, so the
//! exact price is far lower. Here alpha is spent by the information fraction t ∈ (0, 1] (the
//! share of the budget used): almost nothing early, the rest at t = 1, whatever the number of
//! looks and wherever they fall. Each look gives a two-sided boundary c on the z scale and
//! with it a nominal confidence 1 − 2Φ(−c) for that look's interval (a repeated confidence
//! interval: all of them cover the true change together with probability 1 − alpha).

use crate::stats::normal::{normal_cdf, normal_quantile};

/// Points of the grid a look's density is carried on (odd, for Simpson's rule).
const GRID: usize = 601;
/// The density is cut off beyond this many standard deviations of the path at time t.
const TAIL_SD: f64 = 10.0;
/// The least information between two looks the grid resolves (a step of the path with a
/// standard deviation of 0.03 against a grid step of at most 0.034 where the boundary is 10).
const MIN_STEP: f64 = 1e-3;
/// Boundaries are searched in [0, MAX_Z]: beyond it a look spends nothing a double can hold.
const MAX_Z: f64 = 40.0;

/// Alpha spent by information fraction `t` (two-sided), the O'Brien-Fleming type of Lan &
/// DeMets applied to each side's alpha/2, as gsDesign's `sfLDOF` and most tables do:
/// 2 · 2Φ(−z₁₋α/₄ / √t), 0 at t ≤ 0 and all of alpha at t ≥ 1.
pub fn obrien_fleming_spent(t: f64, alpha: f64) -> f64 {
    if t <= 0.0 || !t.is_finite() {
        return 0.0;
    }
    let z = normal_quantile(1.0 - alpha / 4.0);
    4.0 * normal_cdf(-z / t.min(1.0).sqrt())
}

/// The looks of one sequence so far: alpha, the information fractions looked at, the alpha
/// spent, and the density of the path that has not crossed a boundary (on a grid, with
/// Simpson's weights folded in), from which the next look's boundary is found.
#[derive(Debug, Clone)]
pub struct Spending {
    alpha: f64,
    times: Vec<f64>,
    bounds: Vec<f64>,
    spent: f64,
    /// Grid points of S = Z·√t (a Brownian path in information time) inside the last boundary.
    grid: Vec<f64>,
    /// The sub-density at each grid point times its integration weight.
    weight: Vec<f64>,
}

impl Spending {
    /// No look yet, `alpha` to spend (two-sided).
    pub fn new(alpha: f64) -> Spending {
        Spending {
            alpha,
            times: Vec::new(),
            bounds: Vec::new(),
            spent: 0.0,
            grid: Vec::new(),
            weight: Vec::new(),
        }
    }

    /// The information fractions looked at, in order.
    pub fn times(&self) -> &[f64] {
        &self.times
    }

    /// The last look's information fraction (0 before any).
    pub fn last_time(&self) -> f64 {
        self.times.last().copied().unwrap_or(0.0)
    }

    /// Looks at information fraction `t` (at most 1) and returns this look's two-sided z
    /// boundary: the probability, with no change, of crossing here and at no earlier look is
    /// what the spending function adds between the last look and this one. A `t` less than
    /// `MIN_STEP` after the last look brings no new information: it is the last look again.
    pub fn look(&mut self, t: f64) -> f64 {
        let last = self.last_time();
        let t = if t.is_finite() { t.min(1.0) } else { 1.0 };
        if let Some(&c) = self.bounds.last()
            && t - last < MIN_STEP
        {
            return c;
        }
        let t = t.max(MIN_STEP);
        let target = (obrien_fleming_spent(t, self.alpha) - self.spent).max(0.0);
        let sd = (t - last).sqrt();
        let root_t = t.sqrt();
        let cross = |c: f64| -> f64 {
            let b = c * root_t;
            if self.times.is_empty() {
                2.0 * normal_cdf(-c)
            } else {
                self.grid
                    .iter()
                    .zip(&self.weight)
                    .map(|(u, w)| w * (normal_cdf((-b - u) / sd) + normal_cdf((u - b) / sd)))
                    .sum()
            }
        };
        // The crossing probability falls as the boundary rises: bisect for the target.
        let (mut lo, mut hi) = (0.0f64, MAX_Z);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if cross(mid) > target {
                lo = mid;
            } else {
                hi = mid;
            }
            if hi - lo < 1e-10 {
                break;
            }
        }
        let c = hi;
        let crossed = cross(c);
        // The density that goes on: carried from the last grid (or, at the first look, the
        // normal law of S_t) to a new grid inside ±c√t.
        let reach = c.min(TAIL_SD) * root_t;
        let step = 2.0 * reach / (GRID - 1) as f64;
        let grid: Vec<f64> = (0..GRID).map(|j| -reach + j as f64 * step).collect();
        let phi = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let density: Vec<f64> = grid
            .iter()
            .map(|&s| {
                if self.times.is_empty() {
                    phi(s / root_t) / root_t
                } else {
                    self.grid
                        .iter()
                        .zip(&self.weight)
                        .map(|(u, w)| w * phi((s - u) / sd) / sd)
                        .sum()
                }
            })
            .collect();
        self.weight = density
            .iter()
            .enumerate()
            .map(|(j, f)| f * simpson(j, GRID) * step)
            .collect();
        self.grid = grid;
        self.spent += crossed;
        self.times.push(t);
        self.bounds.push(c);
        c
    }
}

/// Simpson's weight (over h) of point `j` of `n` (odd): 1, 4, 2, 4, …, 4, 1, over 3.
fn simpson(j: usize, n: usize) -> f64 {
    if j == 0 || j == n - 1 {
        1.0 / 3.0
    } else if j % 2 == 1 {
        4.0 / 3.0
    } else {
        2.0 / 3.0
    }
}

/// The two-sided confidence of an interval at boundary `c`, 1 − 2Φ(−c).
pub fn confidence_at(c: f64) -> f64 {
    1.0 - 2.0 * normal_cdf(-c)
}

/// The boundaries of looks at information fractions `times` (increasing, in (0, 1]).
pub fn boundaries(times: &[f64], alpha: f64) -> Vec<f64> {
    let mut s = Spending::new(alpha);
    times.iter().map(|&t| s.look(t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spending_function_spends_alpha_by_the_end() {
        assert_eq!(obrien_fleming_spent(0.0, 0.05), 0.0);
        assert!((obrien_fleming_spent(1.0, 0.05) - 0.05).abs() < 1e-12);
        assert!((obrien_fleming_spent(2.0, 0.05) - 0.05).abs() < 1e-12);
        // At half the information: 4Φ(−2.24140/√0.5) = 4Φ(−3.16983) = 0.003051.
        assert!((obrien_fleming_spent(0.5, 0.05) - 0.003051).abs() < 2e-6);
        assert!(obrien_fleming_spent(0.1, 0.05) < 1e-8);
    }

    #[test]
    fn boundaries_match_the_published_tables() {
        // Lan-DeMets O'Brien-Fleming spending, two-sided alpha 0.05, equally spaced looks
        // (Jennison & Turnbull, Table 7.5; gsDesign's sfLDOF gives the same to 4 decimals).
        let five = boundaries(&[0.2, 0.4, 0.6, 0.8, 1.0], 0.05);
        for (c, want) in five.iter().zip([4.8769, 3.3569, 2.6803, 2.2898, 2.0310]) {
            assert!((c - want).abs() < 2e-3, "{five:?}");
        }
        // Two looks: the first is z at half of 0.003051, 2.9626 (each side spends its own).
        let two = boundaries(&[0.5, 1.0], 0.05);
        for (c, want) in two.iter().zip([2.9626, 1.9686]) {
            assert!((c - want).abs() < 2e-3, "{two:?}");
        }
        // One look is the fixed-sample test.
        assert!((boundaries(&[1.0], 0.05)[0] - 1.959964).abs() < 1e-6);
        assert!((confidence_at(1.959964) - 0.95).abs() < 1e-6);
    }

    #[test]
    fn many_looks_cost_little_at_the_end() {
        // Twenty looks: the last boundary stays near the fixed test's 1.96, where Bonferroni
        // over the looks would ask for z(1 − 0.05/40) = 3.02.
        let times: Vec<f64> = (1..=20).map(|k| k as f64 / 20.0).collect();
        let b = boundaries(&times, 0.05);
        assert!(b[19] > 1.96 && b[19] < 2.15, "{b:?}");
        assert!(b.windows(2).all(|w| w[0] > w[1]), "{b:?}");
        // A look at the same information is the last look again.
        let mut s = Spending::new(0.05);
        let c = s.look(0.5);
        assert_eq!(s.look(0.5), c);
        assert_eq!(s.look(0.4), c);
        assert_eq!(s.times(), [0.5]);
        assert!((s.look(1.0) - 1.9686).abs() < 2e-3);
    }

    /// xorshift64*: the fixed-seed source of the simulation.
    struct Rng(u64);

    impl Rng {
        fn normal(&mut self) -> f64 {
            let mut u = || {
                self.0 ^= self.0 >> 12;
                self.0 ^= self.0 << 25;
                self.0 ^= self.0 >> 27;
                ((self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 + 0.5)
                    / (1u64 << 53) as f64
            };
            let (a, b) = (u(), u());
            (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
        }
    }

    #[test]
    fn the_boundaries_hold_alpha_over_uneven_looks() {
        // A z statistic of n ≤ 40 standard normal values looked at after the values of uneven
        // looks (information n/40): it crosses a boundary in about alpha of the sequences with
        // no change, where the fixed test's 1.96 at every look crosses far more often.
        let looks = [3usize, 5, 6, 10, 13, 17, 22, 23, 30, 34, 40];
        let times: Vec<f64> = looks.iter().map(|&n| n as f64 / 40.0).collect();
        let b = boundaries(&times, 0.05);
        let mut rng = Rng(0x5eed_5eed);
        let (runs, mut crossed, mut naive) = (20_000, 0, 0);
        for _ in 0..runs {
            let (mut sum, mut n) = (0.0, 0usize);
            let (mut hit, mut hit_naive) = (false, false);
            for (k, &at) in looks.iter().enumerate() {
                while n < at {
                    sum += rng.normal();
                    n += 1;
                }
                let z = sum / (n as f64).sqrt();
                hit |= z.abs() >= b[k];
                hit_naive |= z.abs() >= 1.959964;
            }
            crossed += hit as usize;
            naive += hit_naive as usize;
        }
        let rate = crossed as f64 / runs as f64;
        // Binomial sd at 0.05 over 20 000 runs: 0.0015.
        assert!((rate - 0.05).abs() < 0.006, "{rate}");
        assert!(naive as f64 / runs as f64 > 0.12, "{naive}");
    }
}
