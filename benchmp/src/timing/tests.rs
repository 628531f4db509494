//! Unit tests of the timing calibration (lmbench's rules and the cache).

use super::*;

#[test]
fn resize_follows_lmbench() {
    // Short intervals grow ×8; long ones scale to 1.1 × enough.
    assert_eq!(resize_count(10, 100_000.0, 5e6), 80);
    assert_eq!(resize_count(1000, 1e6, 5e6), 5501);
    assert_eq!(resize_count(1000, 1e7, 5e6), 551);
    assert!(resize_count(u64::MAX / 2, 1.0, 5e6) <= 1 << 48);
}

#[test]
fn chase_work_grows_with_n() {
    // Not a timing assertion: the kernel must not be folded into a constant.
    assert_eq!(chase(0), 0);
    assert_eq!(chase(1000), 0);
    assert_eq!(one_load(10) + two_loads(10), 0);
}

#[test]
fn calibrated_loop_reaches_a_count() {
    let mut iters = 1;
    let (n, u) = calibrated(&mut iters, 200_000, one_load);
    assert!(n > 1, "the count must grow from 1");
    assert!(u > 0.0);
}

/// A cache entry of this machine, made now.
fn this_machines_entry() -> CacheEntry {
    CacheEntry {
        machine: machine_key(),
        created_unix: unix_now(),
        enough_us: 5000,
        enough_method: EnoughMethod::Linear,
        timing_overhead_ns: 20.0,
        loop_overhead_ns: 0.5,
    }
}

#[test]
fn cache_round_trip_respects_machine_key() {
    let dir = std::env::temp_dir().join(format!("benchmp-cache-test-{}", std::process::id()));
    let path = dir.join("calibration.json");
    let e = this_machines_entry();
    store_cache(&path, &e).unwrap();
    assert_eq!(load_cache(&path), Ok(Some(e.clone())));
    let other = CacheEntry {
        machine: "another machine".into(),
        ..e.clone()
    };
    store_cache(&path, &other).unwrap();
    assert_eq!(
        load_cache(&path),
        Ok(None),
        "another machine's calibration is ignored"
    );
    let stale = CacheEntry {
        created_unix: 1,
        ..e
    };
    store_cache(&path, &stale).unwrap();
    assert_eq!(
        load_cache(&path),
        Ok(None),
        "a stale calibration is ignored"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_cache_is_never_written_through_a_planted_link() {
    let dir = std::env::temp_dir().join(format!("benchmp-cache-links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("calibration.json");
    let victim = dir.join("victim");
    std::fs::write(&victim, "keep").unwrap();
    // Every name a writer of this process could take beside the cache.
    let pid = std::process::id();
    for name in [
        format!("calibration.tmp{pid}"),
        format!(".calibration.json.{pid}.tmp"),
    ] {
        std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
    }
    let e = this_machines_entry();
    store_cache(&path, &e).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(load_cache(&path), Ok(Some(e.clone())));
    // A link at the cache's own path: neither followed nor replaced.
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    let err = store_cache(&path, &e).unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    // A FIFO or a device in its place is refused without waiting.
    std::fs::remove_file(&path).unwrap();
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    assert!(load_cache(&path).unwrap_err().contains("a FIFO"));
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
    assert!(load_cache(&path).unwrap_err().contains("character device"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cached_values_are_used_without_measuring() {
    let dir = std::env::temp_dir().join(format!("benchmp-cache-use-{}", std::process::id()));
    let path = dir.join("c.json");
    let e = CacheEntry {
        enough_us: 7777,
        timing_overhead_ns: 11.0,
        loop_overhead_ns: 0.25,
        ..this_machines_entry()
    };
    store_cache(&path, &e).unwrap();
    // Only meaningful when the test environment does not override the values.
    if std::env::var_os("ENOUGH").is_none()
        && std::env::var_os("TIMING_O").is_none()
        && std::env::var_os("LOOP_O").is_none()
    {
        let c = calibrate(&CalibrationRequest {
            enough_us: None,
            cache: Some(path.clone()),
            recalibrate: false,
        })
        .unwrap();
        assert_eq!(c.enough_us, 7777);
        assert_eq!(c.enough_source, ValueSource::Cache);
        assert_eq!(c.loop_overhead_ns, 0.25);
        assert_eq!(c.measured_ns, 0);
        let c = calibrate(&CalibrationRequest {
            enough_us: Some(1234),
            cache: Some(path.clone()),
            recalibrate: false,
        })
        .unwrap();
        assert_eq!(c.enough_us, 1234);
        assert_eq!(c.enough_source, ValueSource::Option);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_host_too_busy_to_test_any_candidate_gives_a_readable_method() {
    // No candidate tested: the deviation seen is infinite, which JSON cannot hold (serde_json
    // wrote a null, and a report carrying it could not be read back).
    let m = overhead_bound(f64::INFINITY);
    assert_eq!(m, EnoughMethod::OverheadBound { noise_pct: None });
    let text = serde_json::to_string(&m).unwrap();
    assert_eq!(serde_json::from_str::<EnoughMethod>(&text).unwrap(), m);
    assert_eq!(
        overhead_bound(4.5),
        EnoughMethod::OverheadBound {
            noise_pct: Some(4.5)
        }
    );
    // A report written before the field could be missing still reads.
    let old: EnoughMethod =
        serde_json::from_str(r#"{"method":"overhead_bound","noise_pct":4.4}"#).unwrap();
    assert_eq!(
        old,
        EnoughMethod::OverheadBound {
            noise_pct: Some(4.4)
        }
    );
}
