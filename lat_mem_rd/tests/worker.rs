//! `lat_mem_rd` as a `benchmp ab` worker: it announces its whole sweep before it measures
//! the first size, so `benchmp ab` can refuse two sweeps that differ before timing a pair.

use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::process::Stdio;
use std::time::{Duration, Instant};

use benchmp::testing::Tool;

#[test]
fn the_sweep_is_announced_before_its_first_size() {
    let (commands_r, commands_w) = std::io::pipe().unwrap();
    let (messages_r, messages_w) = std::io::pipe().unwrap();
    let mut c = Tool::new("lat_mem_rd", env!("CARGO_BIN_EXE_lat_mem_rd"))
        .with_env("BENCHMP_AB_FDS", Some("3,4"))
        .command(&["-N", "1", "64k", "64"]);
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    benchmp::sys::process::pass_fds(
        &mut c,
        commands_r.as_raw_fd(),
        messages_w.as_raw_fd(),
        false,
    );
    let mut child = c.spawn().unwrap();
    drop((commands_r, messages_w));
    let mut lines = BufReader::new(messages_r).lines();
    let mut next = || -> serde_json::Value {
        serde_json::from_str(&lines.next().expect("a message").unwrap()).unwrap()
    };
    let hello = next();
    assert_eq!(hello["hello"]["tool"], "lat_mem_rd", "{hello}");
    let plan = next();
    let planned = plan["plan"]["measurements"]
        .as_array()
        .unwrap_or_else(|| panic!("the second message is no plan: {plan}"));
    let sizes: Vec<u64> = planned
        .iter()
        .map(|m| {
            assert_eq!(m["measurement"], "loads", "{m}");
            assert_eq!(m["params"]["stride_bytes"], 64, "{m}");
            m["params"]["size_bytes"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(sizes.first(), Some(&512), "{sizes:?}");
    assert_eq!(sizes.last(), Some(&(64 << 10)), "{sizes:?}");
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
    // The driver goes away: the worker ends by itself.
    drop(commands_w);
    drop(lines);
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the worker did not end without its driver");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
