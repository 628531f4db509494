//! Children forked after the marker was opened write their own pid, through the inherited
//! descriptor, as benchmark children do. A plain `main` (harness = false) so the process is
//! single-threaded when it forks.
#![allow(clippy::disallowed_macros)] // a build script, test or bench prints to its runner

use std::os::unix::net::UnixDatagram;

use ftrace::Marker;
use ftrace::script::{Op, run_in_children};

fn main() {
    // A datagram socket keeps each write(2) a separate message.
    let (read, write) = UnixDatagram::pair().expect("socketpair");
    let marker = Marker::from_fd(write.into());
    let parent = std::process::id();

    marker.begin("parent"); // caches the parent's pid before forking
    let ops = [
        Op::Begin("child".into()),
        Op::Counter("n".into(), 1),
        Op::End,
    ];
    let children = run_in_children(&marker, &ops, 3).expect("children ran");
    marker.end();
    drop(marker);

    read.set_nonblocking(true).unwrap();
    let mut records = Vec::new();
    let mut buf = [0u8; 2048];
    while let Ok(n) = read.recv(&mut buf) {
        records.push(String::from_utf8(buf[..n].to_vec()).unwrap());
    }

    assert_eq!(
        records.first().map(String::as_str),
        Some(format!("B|{parent}|parent").as_str())
    );
    assert_eq!(
        records.last().map(String::as_str),
        Some(format!("E|{parent}").as_str())
    );
    assert_eq!(records.len(), 2 + 3 * children.len());
    for child in &children {
        assert_ne!(*child as u32, parent);
        let mine: Vec<&str> = records
            .iter()
            .map(String::as_str)
            .filter(|r| r.split('|').nth(1) == Some(&child.to_string()))
            .collect();
        assert_eq!(
            mine,
            [
                format!("B|{child}|child"),
                format!("C|{child}|n|1"),
                format!("E|{child}")
            ],
            "records of child {child}: {records:?}"
        );
    }
    println!(
        "fork_pid: {} children wrote their own pids: ok",
        children.len()
    );
}
