//! The A/B statistics against an independent implementation: values computed by SciPy and
//! NumPy (tests/fixtures/make_ks_fixtures.py) on fixed sample sets, committed as JSON.

use benchmp::stats::descriptive as stats;
use benchmp::stats::kolmogorov;
use benchmp::stats::ks::{KsMethod, ks_2samp};
use serde_json::Value;

fn fixtures() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/ks_fixtures.json"
    ))
    .expect("fixture file");
    serde_json::from_str(&text).expect("fixture JSON")
}

fn sorted(v: &Value) -> Vec<f64> {
    let mut x: Vec<f64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_f64().unwrap())
        .collect();
    stats::sort(&mut x);
    x
}

fn close(got: f64, want: f64, abs: f64, rel: f64) -> bool {
    (got - want).abs() <= abs.max(rel * want.abs())
}

#[test]
fn ks_2samp_matches_scipy() {
    let f = fixtures();
    let cases = f["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    let mut methods = std::collections::HashSet::new();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let (a, b) = (sorted(&c["a"]), sorted(&c["b"]));
        let r = ks_2samp(&a, &b);
        let (d, p) = (c["ks_d"].as_f64().unwrap(), c["ks_p"].as_f64().unwrap());
        assert!((r.d - d).abs() <= 1e-9, "{name}: D {} vs SciPy {d}", r.d);
        assert!((r.p - p).abs() <= 1e-6, "{name}: p {} vs SciPy {p}", r.p);
        let want = match c["method"].as_str().unwrap() {
            "exact" => KsMethod::Exact,
            _ => KsMethod::Asymp,
        };
        assert_eq!(r.method, want, "{name}");
        methods.insert(format!("{:?}", r.method));
    }
    assert_eq!(methods.len(), 2, "both branches covered");
}

#[test]
fn trimmed_mean_and_quartiles_match_scipy_and_numpy() {
    let f = fixtures();
    for c in f["cases"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let (a, b) = (sorted(&c["a"]), sorted(&c["b"]));
        for (x, key) in [(&a, "trim_mean_a"), (&b, "trim_mean_b")] {
            let want = c[key].as_f64().unwrap();
            let got = stats::trimmed_mean(x);
            assert!(
                close(got, want, 1e-12, 1e-12),
                "{name} {key}: {got} vs {want}"
            );
        }
        let all = stats::merge_sorted(&a, &b);
        for (q, key) in [
            (stats::Quantile::Q1, "q1_all"),
            (stats::Quantile::Q3, "q3_all"),
        ] {
            let want = c[key].as_f64().unwrap();
            let got = stats::quantile(&all, q);
            assert!(
                close(got, want, 1e-12, 1e-12),
                "{name} {key}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn kolmogorov_distribution_matches_scipy_kstwo() {
    let f = fixtures();
    let rows = f["kstwo_sf"].as_array().unwrap();
    assert!(rows.len() > 100);
    for r in rows {
        let (n, x, want) = (
            r["n"].as_u64().unwrap(),
            r["x"].as_f64().unwrap(),
            r["sf"].as_f64().unwrap(),
        );
        let got = kolmogorov::kstwo_sf(n, x);
        assert!(
            close(got, want, 1e-9, 1e-6),
            "kstwo.sf({x}, {n}): {got} vs {want}"
        );
    }
}

#[test]
fn smirnov_tail_matches_scipy() {
    let f = fixtures();
    for r in f["smirnov_sf"].as_array().unwrap() {
        let (n, x, want) = (
            r["n"].as_u64().unwrap(),
            r["x"].as_f64().unwrap(),
            r["sf"].as_f64().unwrap(),
        );
        let got = kolmogorov::smirnov_sf(n, x);
        assert!(
            close(got, want, 1e-12, 1e-9),
            "smirnov({n}, {x}): {got} vs {want}"
        );
    }
}
