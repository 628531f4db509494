//! Reading a latency curve: the plateaus (L1, L2, L3, DRAM) and the sizes where latency steps,
//! as a pure function of (size, ns) points so it can be tested on synthetic curves.
//!
//! The method, kept simple enough to explain in a report:
//! 1. Each latency is replaced by the median of itself and its two neighbours, so one noisy
//!    point neither splits a plateau nor makes one.
//! 2. Walking up in size, a segment grows while every new point stays within `tolerance`
//!    (default ±12 %) of the segment's median.
//! 3. A segment is a plateau when it has at least `min_points` points, spans at least
//!    `min_span` in size (default 1.5×: short pieces of a ramp are not levels) and is flat: the
//!    least-squares slope of ln(ns) over log2(size) is below `max_slope` (default 0.2, i.e.
//!    under 22 % per doubling). Other segments are transitions or ramps.
//! 4. Neighbouring plateaus whose levels are within the tolerance are merged.
//! 5. A step joins each plateau to the next: the last size still on the lower plateau, the
//!    first size on the upper one, and both latencies. A curve still climbing past its last
//!    plateau ends with an open step.
//!
//! A plateau is named after the smallest cache whose sysfs capacity, times `capacity_slack`
//! (default 1.5, for the grid's granularity and imperfect replacement), still holds the
//! plateau's largest size: a cache cannot keep latency flat far past its capacity. A plateau
//! that outruns every cache is DRAM. So on a VM whose neighbours take most of a shared L3, a
//! flat ~150 ns stretch from 12M to 56M is DRAM even though it starts below the L3's 32M.
//! Levels never go down along the curve, and a jump of 2× or more from the previous plateau
//! moves at least one level up (steps between levels are 2–10×; a TLB step inside a level is
//! well under 2×). Several plateaus within one level (a TLB step inside L2) are numbered: `L2`,
//! `L2 #2`.

use benchmp::stats::median_of;
use serde::{Deserialize, Serialize};

/// Detection settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Relative spread a plateau tolerates around its median (0.12 = ±12 %).
    pub tolerance: f64,
    /// Fewest points that make a plateau.
    pub min_points: usize,
    /// Smallest ratio of a plateau's last size to its first.
    pub min_span: f64,
    /// How far past a cache's capacity a plateau may run and still be named after it.
    pub capacity_slack: f64,
    /// Largest slope of ln(ns) per doubling of size on a plateau.
    pub max_slope: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            tolerance: 0.12,
            min_points: 3,
            min_span: 1.5,
            capacity_slack: 1.5,
            max_slope: 0.2,
        }
    }
}

/// A flat stretch of the curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// Name: `L1`, `L2`, `L3`, `DRAM` (from the caches), or `plateau N` without cache data.
    pub label: String,
    /// Smallest size on it, bytes.
    pub first_bytes: u64,
    /// Largest size on it, bytes.
    pub last_bytes: u64,
    /// Median latency of its points, ns.
    pub ns: f64,
    /// Points on it.
    pub points: usize,
}

/// Where latency leaves one plateau for the next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Label of the plateau left.
    pub from_label: String,
    /// Last size on that plateau, bytes.
    pub last_low_bytes: u64,
    /// Its latency, ns.
    pub from_ns: f64,
    /// Label of the next plateau (`None`: the curve climbs to the end without one).
    pub to_label: Option<String>,
    /// First size on the next plateau, or the largest size measured, bytes.
    pub first_high_bytes: u64,
    /// Latency there, ns.
    pub to_ns: f64,
}

/// Plateaus and steps of one curve.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    /// Plateaus, smallest sizes first.
    pub plateaus: Vec<Plateau>,
    /// Steps between them (and an open one at the end when the curve keeps rising).
    pub steps: Vec<Step>,
}

/// A data cache level as sysfs reports it, for naming plateaus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLevel {
    /// 1 for L1, …
    pub level: u32,
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Description, e.g. `L1 Data 48K`.
    pub name: String,
}

/// Slope of ln(ns) per doubling of size (least squares), 0 for fewer than two sizes.
fn slope(points: &[(u64, f64)]) -> f64 {
    let xs: Vec<f64> = points.iter().map(|p| (p.0 as f64).log2()).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.1.ln()).collect();
    let n = xs.len() as f64;
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    if sxx == 0.0 {
        return 0.0;
    }
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    sxy / sxx
}

/// Greedy segments `[start, end)` of a smoothed curve: a segment ends where a point leaves the
/// band (a ln distance) around the median of the segment so far.
fn segments(smooth: &[f64], band: f64) -> Vec<(usize, usize)> {
    let n = smooth.len();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=n {
        if i == n {
            out.push((start, n));
            break;
        }
        let level = median_of(&smooth[start..i]);
        if (smooth[i].ln() - level.ln()).abs() > band {
            out.push((start, i));
            start = i;
        }
    }
    out
}

/// The segments that are flat and long enough to be plateaus, neighbours at the same level
/// merged.
fn flat_runs(
    pts: &[(u64, f64)],
    segments: &[(usize, usize)],
    p: &Params,
    band: f64,
) -> Vec<(usize, usize)> {
    let level =
        |r: (usize, usize)| median_of(&pts[r.0..r.1].iter().map(|q| q.1).collect::<Vec<_>>());
    let mut plateaus: Vec<(usize, usize)> = Vec::new();
    for &(a, b) in segments {
        let span = pts[b - 1].0 as f64 / pts[a].0 as f64;
        if b - a < p.min_points || span < p.min_span || slope(&pts[a..b]) > p.max_slope {
            continue;
        }
        if let Some(last) = plateaus.last_mut()
            && last.1 == a
            && (level((a, b)).ln() - level(*last).ln()).abs() <= band
        {
            last.1 = b;
            continue;
        }
        plateaus.push((a, b));
    }
    plateaus
}

/// The steps between named plateaus, and an open one at the end when the curve keeps rising.
fn steps(out: &[Plateau], plateaus: &[(usize, usize)], pts: &[(u64, f64)], band: f64) -> Vec<Step> {
    let n = pts.len();
    let mut steps = Vec::new();
    for w in out.windows(2) {
        steps.push(Step {
            from_label: w[0].label.clone(),
            last_low_bytes: w[0].last_bytes,
            from_ns: w[0].ns,
            to_label: Some(w[1].label.clone()),
            first_high_bytes: w[1].first_bytes,
            to_ns: w[1].ns,
        });
    }
    if let (Some(last), Some(&(_, end))) = (out.last(), plateaus.last()) {
        let (size, ns) = pts[n - 1];
        if end < n && ns.ln() - last.ns.ln() > band {
            steps.push(Step {
                from_label: last.label.clone(),
                last_low_bytes: last.last_bytes,
                from_ns: last.ns,
                to_label: None,
                first_high_bytes: size,
                to_ns: ns,
            });
        }
    }
    steps
}

/// Finds the plateaus and steps of a curve of (size in bytes, ns) points and names the
/// plateaus after `caches` (empty: numbered). Points with a latency that is not a positive
/// number are ignored; order does not matter.
pub fn detect(points: &[(u64, f64)], caches: &[CacheLevel], p: &Params) -> Shape {
    let mut pts: Vec<(u64, f64)> = points
        .iter()
        .copied()
        .filter(|&(_, ns)| ns.is_finite() && ns > 0.0)
        .collect();
    pts.sort_by_key(|&(s, _)| s);
    pts.dedup_by_key(|&mut (s, _)| s);
    if pts.is_empty() {
        return Shape::default();
    }
    let n = pts.len();
    let smooth: Vec<f64> = (0..n)
        .map(|i| {
            if i == 0 || i + 1 == n {
                pts[i].1
            } else {
                median_of(&[pts[i - 1].1, pts[i].1, pts[i + 1].1])
            }
        })
        .collect();

    let band = (1.0 + p.tolerance).ln();
    let plateaus = flat_runs(&pts, &segments(&smooth, band), p, band);
    let mut out: Vec<Plateau> = plateaus
        .iter()
        .map(|&(a, b)| Plateau {
            label: String::new(),
            first_bytes: pts[a].0,
            last_bytes: pts[b - 1].0,
            ns: median_of(&pts[a..b].iter().map(|q| q.1).collect::<Vec<_>>()),
            points: b - a,
        })
        .collect();
    name_plateaus(&mut out, caches, p.capacity_slack);

    let steps = steps(&out, &plateaus, &pts, band);
    Shape {
        plateaus: out,
        steps,
    }
}

/// Names plateaus after the smallest cache that holds their largest size (with `slack`), DRAM
/// past the last, numbering repeats (`L2 #2`); without caches: `plateau 1`, `plateau 2`, …
/// Levels never go down along the curve, and a latency jump of `NEW_LEVEL_STEP` or more from
/// the previous plateau moves at least one level up: steps between cache levels and to DRAM
/// are 2–10×, a TLB step within one level is well under 2×. This names a DRAM plateau that
/// starts inside a shared L3's nominal size (taken by other tenants) correctly.
fn name_plateaus(plateaus: &mut [Plateau], caches: &[CacheLevel], slack: f64) {
    const NEW_LEVEL_STEP: f64 = 2.0;
    let mut caches: Vec<&CacheLevel> = caches.iter().collect();
    caches.sort_by_key(|c| (c.level, c.size_bytes));
    caches.dedup_by_key(|c| c.level);
    let mut used: Vec<String> = Vec::new();
    let mut prev: Option<(usize, f64)> = None; // (level index, ns); caches.len() = DRAM
    for (i, pl) in plateaus.iter_mut().enumerate() {
        let base = if caches.is_empty() {
            format!("plateau {}", i + 1)
        } else {
            let by_size = caches
                .iter()
                .position(|c| pl.last_bytes as f64 <= c.size_bytes as f64 * slack)
                .unwrap_or(caches.len());
            let idx = match prev {
                Some((p, ns)) if pl.ns >= ns * NEW_LEVEL_STEP => by_size.max(p + 1),
                Some((p, _)) => by_size.max(p),
                None => by_size,
            }
            .min(caches.len());
            prev = Some((idx, pl.ns));
            match caches.get(idx) {
                Some(c) => format!("L{}", c.level),
                None => "DRAM".to_string(),
            }
        };
        let count = used.iter().filter(|u| **u == base).count();
        pl.label = if count == 0 {
            base.clone()
        } else {
            format!("{base} #{}", count + 1)
        };
        used.push(base);
    }
}

/// The sysfs cache of a plateau's level (for the summary's comparison), by label.
pub fn cache_for<'a>(label: &str, caches: &'a [CacheLevel]) -> Option<&'a CacheLevel> {
    let level: u32 = label.strip_prefix('L')?.split(' ').next()?.parse().ok()?;
    caches
        .iter()
        .filter(|c| c.level == level)
        .max_by_key(|c| c.size_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;
    const M: u64 = 1024 * 1024;

    fn vm_caches() -> Vec<CacheLevel> {
        vec![
            CacheLevel {
                level: 1,
                size_bytes: 48 * K,
                name: "L1 Data 48K".into(),
            },
            CacheLevel {
                level: 2,
                size_bytes: M,
                name: "L2 Unified 1M".into(),
            },
            CacheLevel {
                level: 3,
                size_bytes: 32 * M,
                name: "L3 Unified 32M".into(),
            },
        ]
    }

    /// A deterministic ±`noise` wobble so tests do not depend on a random generator.
    fn wobble(i: usize, noise: f64) -> f64 {
        1.0 + noise * ((i * 7919 % 13) as f64 / 6.0 - 1.0)
    }

    /// A staircase over lmbench's grid: L1 1.5 ns to 32K, L2 4.5 ns from 64K to 768K, L3
    /// 15 ns from 2M to 16M, DRAM 90 ns from 64M, with ramps between.
    fn staircase(noise: f64) -> Vec<(u64, f64)> {
        crate::sweep::sizes(512, 256 * M)
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let lat = |lo: f64, hi: f64, a: u64, b: u64| {
                    let t =
                        ((s as f64).ln() - (a as f64).ln()) / ((b as f64).ln() - (a as f64).ln());
                    lo * (hi / lo).powf(t)
                };
                let ns = if s <= 32 * K {
                    1.5
                } else if s < 64 * K {
                    lat(1.5, 4.5, 32 * K, 64 * K)
                } else if s <= 768 * K {
                    4.5
                } else if s < 2 * M {
                    lat(4.5, 15.0, 768 * K, 2 * M)
                } else if s <= 16 * M {
                    15.0
                } else if s < 64 * M {
                    lat(15.0, 90.0, 16 * M, 64 * M)
                } else {
                    90.0
                };
                (s, ns * wobble(i, noise))
            })
            .collect()
    }

    #[test]
    fn finds_four_levels_on_a_staircase() {
        for noise in [0.0, 0.03] {
            let s = detect(&staircase(noise), &vm_caches(), &Params::default());
            let labels: Vec<&str> = s.plateaus.iter().map(|p| p.label.as_str()).collect();
            assert_eq!(labels, ["L1", "L2", "L3", "DRAM"], "noise {noise}: {s:#?}");
            let ns: Vec<f64> = s.plateaus.iter().map(|p| p.ns).collect();
            for (got, want) in ns.iter().zip([1.5, 4.5, 15.0, 90.0]) {
                assert!((got / want - 1.0).abs() < 0.05, "{ns:?}");
            }
            assert_eq!(s.plateaus[0].first_bytes, 512);
            // The L1 plateau ends at 32K or one grid point later (the ramp's first point is
            // within tolerance); L2 starts near 64K.
            assert!(
                [32 * K, 36 * K].contains(&s.plateaus[0].last_bytes),
                "{s:#?}"
            );
            assert!(
                (56 * K..=72 * K).contains(&s.plateaus[1].first_bytes),
                "{s:#?}"
            );
            assert_eq!(s.plateaus[3].last_bytes, 256 * M);
            assert_eq!(s.steps.len(), 3, "no open step: the curve ends flat");
            assert_eq!(s.steps[0].from_label, "L1");
            assert_eq!(s.steps[0].to_label.as_deref(), Some("L2"));
            assert!(s.steps[2].to_ns > 80.0);
        }
    }

    #[test]
    fn a_flat_curve_is_one_plateau() {
        let pts: Vec<(u64, f64)> = crate::sweep::sizes(512, M)
            .into_iter()
            .enumerate()
            .map(|(i, s)| (s, 2.0 * wobble(i, 0.04)))
            .collect();
        let s = detect(&pts, &[], &Params::default());
        assert_eq!(s.plateaus.len(), 1, "{s:#?}");
        assert_eq!(s.plateaus[0].label, "plateau 1");
        assert_eq!(s.plateaus[0].points, pts.len());
        assert!(s.steps.is_empty());
    }

    #[test]
    fn a_steady_ramp_has_no_plateau() {
        // Latency doubling with every doubling of size: nothing is flat.
        let pts: Vec<(u64, f64)> = crate::sweep::sizes(4 * K, 64 * M)
            .into_iter()
            .map(|s| (s, s as f64 / 4096.0))
            .collect();
        let s = detect(&pts, &vm_caches(), &Params::default());
        assert!(s.plateaus.is_empty(), "{s:#?}");
        assert!(s.steps.is_empty());
    }

    #[test]
    fn one_spike_does_not_split_a_plateau() {
        let mut pts: Vec<(u64, f64)> = crate::sweep::sizes(512, 32 * K)
            .into_iter()
            .map(|s| (s, 1.2))
            .collect();
        pts[9].1 = 9.0;
        let s = detect(&pts, &vm_caches(), &Params::default());
        assert_eq!(s.plateaus.len(), 1, "{s:#?}");
        assert_eq!(s.plateaus[0].label, "L1");
        assert!((s.plateaus[0].ns - 1.2).abs() < 1e-9);
    }

    #[test]
    fn a_curve_still_rising_ends_with_an_open_step() {
        let mut pts: Vec<(u64, f64)> = crate::sweep::sizes(512, 32 * K)
            .into_iter()
            .map(|s| (s, 1.0))
            .collect();
        for (i, s) in crate::sweep::sizes(36 * K, 128 * K).into_iter().enumerate() {
            pts.push((s, 1.3 * 1.3f64.powi(i as i32)));
        }
        let s = detect(&pts, &vm_caches(), &Params::default());
        assert_eq!(s.plateaus.len(), 1, "{s:#?}");
        assert_eq!(s.steps.len(), 1);
        assert_eq!(s.steps[0].to_label, None);
        assert_eq!(s.steps[0].first_high_bytes, 128 * K);
    }

    #[test]
    fn repeated_levels_are_numbered_and_names_need_caches() {
        // Two plateaus both inside the L2 capacity (a TLB step within L2).
        let mut pts = Vec::new();
        for s in crate::sweep::sizes(64 * K, 192 * K) {
            pts.push((s, 4.0));
        }
        for s in crate::sweep::sizes(256 * K, 768 * K) {
            pts.push((s, 6.0));
        }
        let s = detect(&pts, &vm_caches(), &Params::default());
        let labels: Vec<&str> = s.plateaus.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["L2", "L2 #2"]);
        assert_eq!(s.steps[0].last_low_bytes, 192 * K);
        assert_eq!(s.steps[0].first_high_bytes, 256 * K);
        let c = vm_caches();
        assert_eq!(cache_for("L2 #2", &c).unwrap().size_bytes, M);
        assert_eq!(cache_for("DRAM", &c), None);
    }

    /// A random-mode sweep (stride 64, 512 bytes to 256M, -N 1) measured on a 2-vCPU KVM
    /// guest whose sysfs reports L1d 48K, L2 1M and a shared L3 of 32M.
    const VM_CURVE: &str = "\
        0.968,0.963,0.969,0.970,0.973,0.970,0.970,0.967,0.970,0.966,0.974,0.973,1.015,1.069,\
        1.047,0.983,1.015,0.969,0.975,0.981,0.978,0.973,1.378,3.592,3.441,3.429,3.460,3.444,\
        3.472,3.483,3.471,4.504,3.442,3.524,3.475,3.681,3.508,3.532,3.489,3.535,3.585,3.490,\
        3.489,3.460,3.482,3.538,3.948,5.261,5.210,5.175,5.175,5.174,5.342,5.516,5.455,5.443,\
        6.255,6.893,7.503,8.784,9.855,9.930,10.548,10.954,11.608,12.051,12.201,12.996,12.956,\
        13.213,13.754,14.025,13.594,16.659,13.427,13.178,17.741,18.028,14.107,20.727,23.347,\
        21.922,15.277,52.353,51.044,41.596,142.570,139.759,148.039,146.727,146.424,146.194,\
        151.633,153.739,154.941,159.646,157.394,159.919,161.347,164.780,165.003,165.769,\
        166.439,165.229,166.106,182.308,179.627,185.206,197.810,186.092,205.382,202.647,\
        198.418,186.073,194.764,192.868,195.192,193.221,207.874,195.959,202.140,194.587,198.449";

    #[test]
    fn reads_a_measured_vm_curve() {
        let ns: Vec<f64> = VM_CURVE
            .split(',')
            .map(|v| v.trim().parse().unwrap())
            .collect();
        let sizes = crate::sweep::sizes(512, 256 * M);
        assert_eq!(ns.len(), sizes.len());
        let pts: Vec<(u64, f64)> = sizes.into_iter().zip(ns).collect();
        let s = detect(&pts, &vm_caches(), &Params::default());
        let got: Vec<(&str, u64, u64, u64)> = s
            .plateaus
            .iter()
            .map(|p| {
                (
                    p.label.as_str(),
                    p.first_bytes,
                    p.last_bytes,
                    p.ns.round() as u64,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("L1", 512, 44 * K, 1),
                ("L2", 52 * K, 352 * K, 3),
                ("L2 #2", 416 * K, 832 * K, 5),
                ("L3", 1792 * K, 4608 * K, 13),
                ("DRAM", 12 * M, 56 * M, 157),
                ("DRAM #2", 60 * M, 256 * M, 195),
            ],
            "{s:#?}"
        );
        // The climb from L3 to DRAM is one step, not a series of short plateaus.
        let st = &s.steps[3];
        assert_eq!((st.last_low_bytes, st.first_high_bytes), (4608 * K, 12 * M));
    }

    #[test]
    fn a_big_jump_is_a_new_level_even_inside_a_nominal_cache() {
        // L3 flat to 7.5M, then ~147 ns from 11M to 44M: inside 1.5 × the nominal 32M, but an
        // 11× step is not a TLB effect; and a 1.3× step inside L1 stays L1.
        let mut pts = Vec::new();
        for s in crate::sweep::sizes(512, 3 * K) {
            pts.push((s, 1.0));
        }
        for s in crate::sweep::sizes(6 * K, 48 * K) {
            pts.push((s, 1.3));
        }
        for s in crate::sweep::sizes(1664 * K, 7680 * K) {
            pts.push((s, 12.8));
        }
        for s in crate::sweep::sizes(11 * M, 44 * M) {
            pts.push((s, 147.0));
        }
        let s = detect(&pts, &vm_caches(), &Params::default());
        let labels: Vec<&str> = s.plateaus.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["L1", "L1 #2", "L3", "DRAM"], "{s:#?}");
    }

    #[test]
    fn empty_and_tiny_inputs() {
        assert_eq!(detect(&[], &[], &Params::default()), Shape::default());
        let s = detect(
            &[(512, 1.0), (1024, 0.0), (2048, f64::NAN)],
            &[],
            &Params::default(),
        );
        assert!(s.plateaus.is_empty());
        let s = detect(
            &[(512, 1.0), (1024, 1.0), (2048, 1.0)],
            &[],
            &Params::default(),
        );
        assert_eq!(s.plateaus.len(), 1);
    }
}
