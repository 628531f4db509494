//! Distributions behind the KS p-value, following the algorithms SciPy uses so the p-values
//! agree with `scipy.stats.ks_2samp` (checked against fixtures generated with SciPy).
//!
//! Exact two-sample branch: [`prob_outside_square`] (equal sizes: the alternating binomial
//! sum evaluated Horner-style) and [`outer_prob_inside`] (unequal sizes: Hodges' lattice paths
//! with Viehmann's recursion for 1 − p).
//!
//! Asymptotic branch, [`kstwo_sf`] (SciPy's `kstwo.sf`, after Simard & L'Ecuyer 2011):
//! Ruben–Gambino closed forms near the ends of the support; `2 × smirnov(n, x)` for large
//! deviations (x ≥ 0.5, or n·x² ≥ 2.2 when n > 140, or n·x² > 4 when n ≤ 140); the Durbin
//! matrix (Marsaglia–Tsang–Wang) for small n·x and small n·x^1.5; Pelz–Good otherwise.
//! One departure: for n ≤ 140 and 0.754693 < n·x² ≤ 4 SciPy uses Pomeranz's recursion; this
//! module uses the Durbin matrix there, which computes the same exact probability.
//! The one-sided Smirnov tail ([`smirnov_sf`]) is the Birnbaum–Tingey sum with every term
//! formed in logarithms, in place of SciPy's double-double arithmetic.

/// ln(2π).
const LOG_2PI: f64 = 1.837_877_066_409_345_5;
/// sqrt(2π).
const SQRT_2PI: f64 = 2.506_628_274_631_000_7;
/// Natural log of the smallest normal double, below which exp() underflows (cephes MINLOG).
const MIN_LOG_CEPHES: f64 = -708.396_418_532_264_1;
/// Scale step used to keep matrix entries in range: 2^128.
const SCALE_EXP: i32 = 128;
/// Above this n the Smirnov tail uses its closed-form approximation (as SciPy).
const SMIRNOV_MAX_COMPUTE_N: u64 = 1_000_000;

/// x · 2^e without intermediate overflow or underflow for results in range.
pub fn ldexp(mut x: f64, mut e: i64) -> f64 {
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e as i32)
}

/// Pr(D_{n,n} ≥ h/n) for two samples of n values each, 0 < h ≤ n.
pub fn prob_outside_square(n: u64, h: u64) -> f64 {
    // 2 · Σ_k (−1)^k C(2n, n − (k+1)h) / C(2n, n), folded so each factor is a ratio ≤ 1.
    let (n, h) = (n as f64, h as f64);
    let mut p = 0.0;
    let mut k = (n / h).floor();
    while k >= 0.0 {
        let mut term = 1.0;
        let mut j = 0.0;
        while j < h {
            term = (n - k * h - j) * term / (n + k * h + j + 1.0);
            j += 1.0;
        }
        p = term * (1.0 - p);
        k -= 1.0;
    }
    2.0 * p
}

/// Proportion of monotone lattice paths from (0,0) to (m,n) that leave the band
/// |x/m − y/n| < h / lcm(m, n); `g` = gcd(m, n). This is Pr(D ≥ h / lcm) for unequal sizes.
pub fn outer_prob_inside(m: u64, n: u64, g: u64, h: u64) -> f64 {
    let (m, n) = if m < n { (n, m) } else { (m, n) };
    let (mg, ng) = (m / g, n / g);
    let (m, n, mg, ng, h) = (m as i64, n as i64, mg as i64, ng as i64, h as i64);
    // One column of the path table, over the window [minj, maxj) of rows inside the band;
    // entries hold 1 − (paths staying inside / all paths) scaled per column.
    let ceil_div = |a: i64, b: i64| -> i64 { a.div_euclid(b) + i64::from(a.rem_euclid(b) != 0) };
    let mut minj: i64 = 0;
    let mut maxj: i64 = ceil_div(h, mg).min(n + 1);
    let mut curlen = maxj - minj;
    let len_a = (2 * maxj + 2).min(n + 1) as usize;
    let mut a = vec![1.0f64; len_a.max(1)];
    for v in a.iter_mut().take(maxj as usize) {
        *v = 0.0;
    }
    for i in 1..=m {
        let (lastminj, lastlen) = (minj, curlen);
        minj = ((ng * i - h).div_euclid(mg) + 1).max(0).min(n);
        maxj = ceil_div(ng * i + h, mg).min(n + 1);
        if maxj <= minj {
            return 1.0;
        }
        let mut val = if minj == 0 { 0.0 } else { 1.0 };
        for jj in 0..(maxj - minj) {
            let j = jj + minj;
            let src = (jj + minj - lastminj) as usize;
            val = (a[src] * i as f64 + val * j as f64) / (i + j) as f64;
            a[jj as usize] = val;
        }
        curlen = maxj - minj;
        if lastlen > curlen {
            let from = (maxj - minj) as usize;
            let to = (from + (lastlen - curlen) as usize).min(a.len());
            for v in &mut a[from..to] {
                *v = 1.0;
            }
        }
    }
    a[(maxj - minj - 1) as usize]
}

/// log(n! / n^n) by Stirling's series (SciPy's `_log_nfactorial_div_n_pow_n`).
fn log_nfactorial_div_n_pow_n(n: f64) -> f64 {
    const C: [f64; 8] = [
        -2.955_065_359_477_124e-2,
        6.410_256_410_256_41e-3,
        -1.917_526_917_526_917_5e-3,
        8.417_508_417_508_417e-4,
        -5.952_380_952_380_952e-4,
        7.936_507_936_507_937e-4,
        -2.777_777_777_777_778e-3,
        8.333_333_333_333_333e-2,
    ];
    let rn = 1.0 / n;
    let x = rn / n;
    let poly = C.iter().fold(0.0, |acc, &c| acc * x + c);
    n.ln() / 2.0 - n + LOG_2PI / 2.0 + rn * poly
}

/// Survival function Pr(D_n > x) of the one-sample two-sided KS statistic for n samples.
pub fn kstwo_sf(n: u64, x: f64) -> f64 {
    if n == 0 || x.is_nan() {
        return f64::NAN;
    }
    if x >= 1.0 {
        return 0.0;
    }
    if x <= 0.0 {
        return 1.0;
    }
    let nf = n as f64;
    let t = nf * x;
    if t <= 1.0 {
        // Ruben–Gambino: 1/(2n) < x ≤ 1/n.
        if t <= 0.5 {
            return 1.0;
        }
        let cdf = if n <= 140 {
            (1..=n).fold(1.0, |p, i| p * (i as f64 * (1.0 / nf) * (2.0 * t - 1.0)))
        } else {
            (log_nfactorial_div_n_pow_n(nf) + nf * (2.0 * t - 1.0).ln()).exp()
        };
        return (1.0 - cdf).clamp(0.0, 1.0);
    }
    if t >= nf - 1.0 {
        return (2.0 * (1.0 - x).powf(nf)).clamp(0.0, 1.0);
    }
    if x >= 0.5 {
        return (2.0 * smirnov_sf(n, x)).clamp(0.0, 1.0);
    }
    let nx2 = t * x;
    if n <= 140 {
        if nx2 <= 4.0 {
            // SciPy: Durbin matrix up to 0.754693, Pomeranz above; both exact.
            return (1.0 - durbin_cdf(n, x)).clamp(0.0, 1.0);
        }
        return (2.0 * smirnov_sf(n, x)).clamp(0.0, 1.0);
    }
    if nx2 >= 370.0 {
        return 0.0;
    }
    if nx2 >= 2.2 {
        return (2.0 * smirnov_sf(n, x)).clamp(0.0, 1.0);
    }
    let cdf = if nx2 >= 18.0 {
        1.0
    } else if n <= 100_000 && nf * x.powf(1.5) <= 1.4 {
        durbin_cdf(n, x)
    } else {
        pelz_good_cdf(n, x)
    };
    (1.0 - cdf).clamp(0.0, 1.0)
}

fn matmul(a: &[f64], b: &[f64], m: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * m];
    for i in 0..m {
        for k in 0..m {
            let aik = a[i * m + k];
            if aik == 0.0 {
                continue;
            }
            for j in 0..m {
                c[i * m + j] += aik * b[k * m + j];
            }
        }
    }
    c
}

/// Pr(D_n ≤ d) by Durbin's matrix method as arranged by Marsaglia, Tsang and Wang (2003).
pub fn durbin_cdf(n: u64, d: f64) -> f64 {
    if d >= 1.0 {
        return 1.0;
    }
    let nd = n as f64 * d;
    if nd <= 0.5 {
        return 0.0;
    }
    let k = nd.ceil() as usize;
    let h = k as f64 - nd;
    let m = 2 * k - 1;
    // First column v (and, reversed, the last row) and the 1/j! band of the matrix H.
    let mut v = vec![0.0; m];
    let mut w = vec![0.0; m];
    let mut fac = 1.0;
    for j in 1..=m {
        w[j - 1] = fac;
        fac /= j as f64;
        v[j - 1] = (1.0 - h.powi(j as i32)) * fac;
    }
    let tt = (2.0 * h - 1.0).max(0.0).powi(m as i32) - 2.0 * h.powi(m as i32);
    v[m - 1] = (1.0 + tt) * fac;
    let mut hm = vec![0.0; m * m];
    for col in 1..m {
        for row in (col - 1)..m {
            hm[row * m + col] = w[row - (col - 1)];
        }
    }
    for row in 0..m {
        hm[row * m] = v[row];
    }
    for col in 0..m {
        hm[(m - 1) * m + col] = v[m - 1 - col];
    }
    // H^n by squaring, rescaling by 2^-128 whenever the centre entry grows past 2^128.
    let big = 2f64.powi(SCALE_EXP);
    let mut pw = vec![0.0; m * m];
    for i in 0..m {
        pw[i * m + i] = 1.0;
    }
    let (mut expnt, mut h_expnt) = (0i64, 0i64);
    let mut nn = n;
    while nn > 0 {
        if nn % 2 == 1 {
            pw = matmul(&pw, &hm, m);
            expnt += h_expnt;
        }
        hm = matmul(&hm, &hm, m);
        h_expnt *= 2;
        if hm[(k - 1) * m + (k - 1)].abs() > big {
            for e in hm.iter_mut() {
                *e /= big;
            }
            h_expnt += i64::from(SCALE_EXP);
        }
        nn /= 2;
    }
    let mut p = pw[(k - 1) * m + (k - 1)];
    // Multiply by n!/n^n, keeping p away from underflow.
    let nf = n as f64;
    let small = 2f64.powi(-SCALE_EXP);
    for i in 1..=n {
        p = i as f64 * p / nf;
        if p.abs() < small {
            p *= big;
            expnt -= i64::from(SCALE_EXP);
        }
    }
    ldexp(p, expnt).clamp(0.0, 1.0)
}

/// Pelz–Good approximation of Pr(D_n ≤ x) (series in 1/sqrt(n) of the Kolmogorov limit).
pub fn pelz_good_cdf(n: u64, x: f64) -> f64 {
    use std::f64::consts::PI;
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let nf = n as f64;
    let z = nf.sqrt() * x;
    let (z2, z3, z4, z6) = (z * z, z.powi(3), z.powi(4), z.powi(6));
    let qlog = -PI * PI / 8.0 / z2;
    if qlog < -708.0 {
        return 0.0;
    }
    let q = qlog.exp();
    let (pi2, pi4, pi6) = (PI * PI, PI.powi(4), PI.powi(6));
    let k1a = -z2;
    let k1b = pi2 / 4.0;
    let k2a = 6.0 * z6 + 2.0 * z4;
    let k2b = (2.0 * z4 - 5.0 * z2) * pi2 / 4.0;
    let k2c = pi4 * (1.0 - 2.0 * z2) / 16.0;
    let k3d = pi6 * (5.0 - 30.0 * z2) / 64.0;
    let k3c = pi4 * (-60.0 * z2 + 212.0 * z4) / 16.0;
    let k3b = pi2 * (135.0 * z4 - 96.0 * z6) / 4.0;
    let k3a = -30.0 * z6 - 90.0 * z.powi(8);
    let mut kk = [0.0f64; 4];
    let maxk = (16.0 * z / PI).ceil() as i64;
    for k in (1..=maxk).rev() {
        let mo = (2 * k - 1) as f64;
        let (m2, m4, m6) = (mo * mo, mo.powi(4), mo.powi(6));
        let qp = q.powf(8.0 * k as f64);
        let c = [
            1.0,
            k1a + k1b * m2,
            k2a + k2b * m2 + k2c * m4,
            k3a + k3b * m2 + k3c * m4 + k3d * m6,
        ];
        for (acc, ci) in kk.iter_mut().zip(c) {
            *acc = *acc * qp + ci;
        }
    }
    let div = [z, 6.0 * z4, 72.0 * z.powi(7), 6480.0 * z.powi(10)];
    for (acc, d) in kk.iter_mut().zip(div) {
        *acc = *acc * q * SQRT_2PI / d;
    }
    let q2 = (-pi2 / 2.0 / z2).exp();
    let sqrt3z = 3f64.sqrt() * z;
    let (mut k2extra, mut k3extra) = (0.0, 0.0);
    for k in (1..=maxk).rev() {
        let kf = k as f64;
        let ksq = kf * kf;
        let qp = q2.powf(ksq);
        k2extra += ksq * qp;
        let kspi = PI * kf;
        k3extra += (sqrt3z + kspi) * (sqrt3z - kspi) * ksq * qp;
    }
    kk[2] += k2extra * pi2 * SQRT_2PI / (-36.0 * z3);
    kk[3] += k3extra * pi2 * SQRT_2PI / (216.0 * z6);
    (0..4).map(|i| kk[i] / nf.powf(i as f64 / 2.0)).sum()
}

/// Pr(D+_n > x), the one-sided Smirnov tail (SciPy's `smirnov(n, x)`).
///
/// One function on purpose: its branches are one published algorithm (the Birnbaum–Tingey
/// sum and its closed forms), and split they would no longer read against it.
pub fn smirnov_sf(n: u64, x: f64) -> f64 {
    if n == 0 || !(0.0..=1.0).contains(&x) {
        return f64::NAN;
    }
    if n == 1 {
        return 1.0 - x;
    }
    if x == 0.0 {
        return 1.0;
    }
    if x == 1.0 {
        return 0.0;
    }
    let nf = n as f64;
    let nx = nf * x;
    let mut nxfl = nx.floor();
    let mut alpha = nx - nxfl;
    if alpha >= 1.0 {
        nxfl += 1.0;
        alpha = 0.0;
    }
    let nxfl = nxfl as u64;
    if nxfl == 0 || (nxfl == 1 && alpha == 0.0) {
        // x ≤ 1/n: cdf = x (1 + x)^(n−1).
        let cdf = x * (1.0 + x).powf(nf - 1.0);
        return (1.0 - cdf).clamp(0.0, 1.0);
    }
    if -2.0 * nf * x * x < MIN_LOG_CEPHES {
        return 0.0;
    }
    if nxfl >= n - 1 {
        return (1.0 - x).powf(nf).clamp(0.0, 1.0);
    }
    if n > SMIRNOV_MAX_COMPUTE_N {
        let logp = -(6.0 * nf * x + 1.0).powi(2) / 18.0 / nf;
        return if logp < -std::f64::consts::LN_2 {
            logp.exp()
        } else {
            1.0 + logp.exp_m1()
        };
    }
    // Terms A_v = C(n,v) (1 − x − v/n)^(n−v) (x + v/n)^(v−1); the tail is x Σ A_v over
    // v ≤ n(1−x) (lower sum) or 1 − x Σ A_v over v > n(1−x) (upper sum, few terms).
    let mut lower_last = n - nxfl - u64::from(alpha != 0.0);
    let mut upper_first = n - nxfl;
    if alpha == 0.0 {
        lower_last -= 1;
        upper_first += 1;
    }
    let upper_terms = n - upper_first + 1;
    let use_upper =
        (upper_terms <= 1 && x < 0.5) || (n >= 10 && upper_terms <= 3 && x <= 0.5 / nf.sqrt());
    // ln C(n, v) for the term's v, and the signed term.
    let term = |v: u64, ln_c: f64| -> f64 {
        let vf = v as f64;
        let base2 = (nf - vf) / nf - x;
        let base1 = x + vf / nf;
        let e2 = n - v;
        let mut lt = ln_c;
        let mut sign = 1.0;
        if e2 > 0 {
            if base2 == 0.0 {
                return 0.0;
            }
            lt += e2 as f64 * base2.abs().ln();
            if base2 < 0.0 && e2 % 2 == 1 {
                sign = -1.0;
            }
        }
        lt += (vf - 1.0) * base1.ln();
        sign * lt.exp()
    };
    if use_upper {
        let mut sum = 0.0;
        let mut ln_c = 0.0; // C(n, n)
        let mut v = n;
        loop {
            sum += term(v, ln_c);
            if v == upper_first {
                break;
            }
            // C(n, v−1) = C(n, v) · v / (n − v + 1)
            ln_c += (v as f64 / (n - v + 1) as f64).ln();
            v -= 1;
        }
        let cdf = x * sum;
        return (1.0 - cdf).clamp(0.0, 1.0);
    }
    let n_terms = lower_last + 1;
    let vmid = n / 2;
    let mut sum = 0.0;
    let mut ln_c = 0.0; // C(n, 0)
    for v in 0..n_terms {
        let a = term(v, ln_c);
        if a.is_finite() {
            sum += a;
        }
        if a != 0.0 {
            if 4.0 * (n_terms - v) as f64 * a.abs() < f64::EPSILON * sum && v != n_terms - 1 {
                break;
            }
        } else if v > vmid {
            break;
        }
        ln_c += ((n - v) as f64 / (v + 1) as f64).ln();
    }
    (x * sum).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_formula_small_cases() {
        // n = 1: D is 1 with certainty.
        assert!((prob_outside_square(1, 1) - 1.0).abs() < 1e-15);
        // n = 2, D = 1: 2 of the 6 orderings separate the samples completely.
        assert!((prob_outside_square(2, 2) - 2.0 / 6.0).abs() < 1e-15);
    }

    #[test]
    fn inside_method_agrees_with_square_formula() {
        for n in [3u64, 7, 20] {
            for h in 1..=n {
                let a = prob_outside_square(n, h);
                let b = outer_prob_inside(n, n, n, h);
                assert!((a - b).abs() < 1e-12, "n {n} h {h}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn kstwo_limits() {
        assert_eq!(kstwo_sf(100, 0.0), 1.0);
        assert_eq!(kstwo_sf(100, 1.0), 0.0);
        assert_eq!(kstwo_sf(100, 0.004), 1.0);
        // For one sample D_1 = max(U, 1 − U): Pr(D_1 > x) = 2(1 − x) for x ≥ 1/2.
        assert!((kstwo_sf(1, 0.75) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn smirnov_one_sample() {
        assert!((smirnov_sf(1, 0.3) - 0.7).abs() < 1e-15);
        // Large n: close to exp(-2 n x^2).
        let s = smirnov_sf(10_000, 0.01);
        assert!((s / (-2.0f64).exp() - 1.0).abs() < 0.05, "{s}");
    }

    #[test]
    fn durbin_and_pelz_good_agree_where_both_apply() {
        for &(n, x) in &[(2000u64, 0.01), (5000, 0.008), (20000, 0.005)] {
            let a = durbin_cdf(n, x);
            let b = pelz_good_cdf(n, x);
            assert!((a - b).abs() < 1e-5, "n {n} x {x}: {a} vs {b}");
        }
    }
}
