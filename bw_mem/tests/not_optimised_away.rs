//! A correctness check of the release build's kernels, not a performance test: a kernel the
//! optimiser deleted or hoisted out of the pass loop would "move" 64 MiB in next to no time.
//! Every timed interval of every operation at 64 MiB must take at least the time the bytes it
//! touches would need at 1 TB/s, a bound far above any single core's memory bandwidth today
//! (about 20-100 GB/s), so only a kernel that skips its work can fail it. Intervals of 100 ms
//! hold dozens of passes, so a pass loop collapsed into one pass fails it too.
//!
//! Run it on the release binary: `cargo test --release -p bw_mem --test not_optimised_away`,
//! or, from any build of this test, on a release binary built apart:
//! `BW_MEM_RELEASE=target/release/bw_mem cargo test -p bw_mem --test not_optimised_away` (what
//! scripts/test.sh does, so that only the tool, not the test too, goes through fat LTO). That
//! binary's own report must say it is a release build with fat LTO. In a debug build without
//! `BW_MEM_RELEASE` (plain `cargo test`) it is skipped: the unoptimised kernels are slow enough
//! to pass trivially, and take a minute doing so.
#![allow(clippy::disallowed_macros)] // a build script, test or bench prints to its runner

use std::process::Command;
use std::time::Instant;

use bw_mem::ops::Op;

/// Upper bound on the bandwidth any kernel can honestly reach, bytes per second.
const CEILING_BYTES_PER_S: f64 = 1e12;
const SIZE: u64 = 64 << 20;

#[test]
fn every_kernel_takes_at_least_its_bytes_at_one_terabyte_per_second() {
    let bin = match std::env::var_os("BW_MEM_RELEASE") {
        Some(path) => std::path::PathBuf::from(path),
        None if cfg!(debug_assertions) => {
            eprintln!(
                "skipped: checks the release build (cargo test --release --test \
                 not_optimised_away, or BW_MEM_RELEASE=PATH)"
            );
            return;
        }
        None => env!("CARGO_BIN_EXE_bw_mem").into(),
    };
    for op in Op::ALL {
        let t0 = Instant::now();
        let out = Command::new(&bin)
            .args(["--json", "-N", "2", "64m", op.name()])
            .env("ENOUGH", "100000")
            .env("TIMING_O", "0")
            .env("LOOP_O", "0")
            .env("BENCHMP_CALIBRATION", "off")
            .env_remove("LMBENCH_SCHED")
            .output()
            .expect("bw_mem runs");
        let wall = t0.elapsed().as_secs_f64();
        assert!(
            out.status.success(),
            "{op}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let build = &v["build"];
        assert!(
            build["cargo_profile"] == "release" && build["lto"] == "fat",
            "{}: not a release build with fat LTO: {build}",
            bin.display()
        );
        let touched = op.traffic(SIZE).touched_bytes as f64;
        let mut passes = 0u64;
        for c in v["measurements"][0]["children"].as_array().unwrap() {
            for s in c["samples"].as_array().unwrap() {
                let n = s["iterations"].as_u64().unwrap();
                let ns = s["elapsed_ns"].as_u64().unwrap() as f64;
                passes += n;
                let floor_ns = touched * n as f64 / CEILING_BYTES_PER_S * 1e9;
                assert!(
                    ns >= floor_ns,
                    "{op}: {n} passes over {touched} bytes took {ns} ns, less than {floor_ns:.0} ns \
                     (faster than 1 TB/s): the kernel's work was optimised away"
                );
            }
        }
        assert!(passes > 0, "{op}: no samples");
        let floor_s = touched * passes as f64 / CEILING_BYTES_PER_S;
        assert!(
            wall >= floor_s,
            "{op}: the whole run took {wall} s for {passes} passes, under {floor_s} s"
        );
    }
}
