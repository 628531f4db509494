//! The paired A/B statistics against an independent implementation: values computed by SciPy
//! and NumPy, and an interval computed in Python from its own null distribution
//! (tests/fixtures/make_paired_fixtures.py), on fixed sample sets, committed as JSON.

use benchmp::schema::Better;
use benchmp_cli::stats::normal;
use benchmp_cli::stats::paired;
use serde_json::Value;

fn fixtures() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/paired_fixtures.json"
    ))
    .expect("fixture file");
    serde_json::from_str(&text).expect("fixture JSON")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_f64().unwrap())
        .collect()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn close(got: f64, want: f64, abs: f64, rel: f64) -> bool {
    (got - want).abs() <= abs.max(rel * want.abs())
}

fn cases() -> Vec<Value> {
    let cases = fixtures()["cases"].as_array().unwrap().clone();
    assert!(cases.len() >= 12);
    cases
}

#[test]
fn wilcoxon_matches_scipy_on_every_branch() {
    let mut branches = std::collections::BTreeSet::new();
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let d = floats(&c["d"]);
        let branch = c["wilcoxon_branch"].as_str().unwrap();
        let r = paired::wilcoxon(&d);
        let (stat, p) = (num(&c["wilcoxon_statistic"]), num(&c["wilcoxon_p"]));
        assert_eq!(r.statistic, stat, "{name}: statistic");
        assert_eq!(r.exact, branch != "normal", "{name}: branch {branch}");
        // Exact branches to 1e-9; the normal branch to 1e-6, and relative 1e-9 in the tail.
        let ok = if r.exact {
            close(r.p, p, 1e-9, 0.0)
        } else {
            close(r.p, p, 1e-6, 0.0) && close(r.p, p, 1e-300, 1e-9)
        };
        assert!(ok, "{name} ({branch}): p {} vs SciPy {p}", r.p);
        branches.insert(branch.to_string());
    }
    assert_eq!(
        branches.len(),
        3,
        "exact, sign-flip and normal branches covered"
    );
}

#[test]
fn sign_test_matches_binomtest() {
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let got = paired::sign_test(&floats(&c["d"]));
        let want = num(&c["sign_p"]);
        assert!(close(got, want, 1e-300, 1e-9), "{name}: {got} vs {want}");
    }
    let f = fixtures();
    let grid = f["binomtest"].as_array().unwrap();
    assert!(grid.len() > 100);
    for r in grid {
        let (k, n) = (r["k"].as_u64().unwrap(), r["n"].as_u64().unwrap());
        // k positives, n - k negatives, and a few zeros that the test must drop.
        let mut d = vec![0.0; (n % 3) as usize];
        d.extend((0..n).map(|i| if i < k { 0.01 } else { -0.01 }));
        let (got, want) = (paired::sign_test(&d), num(&r["p"]));
        assert!(
            close(got, want, 1e-300, 1e-9),
            "binomtest({k}, {n}): {got} vs {want}"
        );
    }
}

#[test]
fn hodges_lehmann_and_interval_match_the_independent_computation() {
    let mut seen = (0, 0, 0); // exact-branch intervals, normal-branch, unbounded
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let d = floats(&c["d"]);
        let hl = paired::hodges_lehmann(&d);
        let want = num(&c["hl"]);
        assert!(close(hl, want, 1e-15, 1e-12), "{name}: HL {hl} vs {want}");
        for iv in c["intervals"].as_array().unwrap() {
            let conf = num(&iv["confidence"]);
            let (lo, hi) = paired::hl_interval(&d, conf);
            if iv["low"].is_null() {
                assert_eq!(
                    (lo, hi),
                    (f64::NEG_INFINITY, f64::INFINITY),
                    "{name} at {conf}"
                );
                seen.2 += 1;
                continue;
            }
            let (want_lo, want_hi) = (num(&iv["low"]), num(&iv["high"]));
            assert!(
                close(lo, want_lo, 1e-15, 1e-12) && close(hi, want_hi, 1e-15, 1e-12),
                "{name} at {conf} (K {}): [{lo}, {hi}] vs [{want_lo}, {want_hi}]",
                iv["k"]
            );
            if d.len() <= paired::WILCOXON_MAX_EXACT_N {
                seen.0 += 1;
            } else {
                seen.1 += 1;
            }
        }
    }
    assert!(seen.0 > 0 && seen.1 > 0 && seen.2 > 0, "{seen:?}");
}

#[test]
fn walsh_averages_have_the_hodges_lehmann_median() {
    for c in cases() {
        let d = floats(&c["d"]);
        if d.is_empty() || d.len() > 200 {
            continue;
        }
        let w = paired::walsh_averages(&d);
        assert_eq!(w.len(), d.len() * (d.len() + 1) / 2);
        assert!(w.windows(2).all(|p| p[0] <= p[1]));
        let m = w.len();
        let median = if m % 2 == 1 {
            w[m / 2]
        } else {
            (w[m / 2 - 1] + w[m / 2]) / 2.0
        };
        assert_eq!(paired::hodges_lehmann(&d), median, "{}", c["name"]);
    }
}

#[test]
fn lag1_autocorrelation_matches_numpy() {
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let d = floats(&c["d"]);
        let (got, want) = (paired::lag1_autocorrelation(&d), num(&c["lag1"]));
        assert!(close(got, want, 1e-12, 1e-12), "{name}: {got} vs {want}");
    }
}

#[test]
fn normal_quantile_and_cdf_match_scipy() {
    let f = fixtures();
    for r in f["norm_ppf"].as_array().unwrap() {
        let (p, want) = (num(&r["p"]), num(&r["z"]));
        let got = normal::normal_quantile(p);
        assert!(close(got, want, 1e-15, 1e-9), "ppf({p}): {got} vs {want}");
    }
    for r in f["norm_cdf"].as_array().unwrap() {
        let (x, want) = (num(&r["x"]), num(&r["cdf"]));
        let got = normal::normal_cdf(x);
        assert!(close(got, want, 1e-300, 1e-12), "cdf({x}): {got} vs {want}");
    }
}

#[test]
fn log_ratios_are_oriented_as_numpy_computed_them() {
    let f = fixtures();
    for r in f["log_ratio"].as_array().unwrap() {
        let better = match r["better"].as_str().unwrap() {
            "lower" => Better::Lower,
            _ => Better::Higher,
        };
        let (b, c, want) = (num(&r["base"]), num(&r["current"]), num(&r["d"]));
        let got = paired::log_ratio(b, c, better);
        assert!(close(got, want, 1e-15, 1e-13), "{r}: {got}");
    }
}
