//! The marker write path and the layer's enter/exit allocate nothing. A counting global
//! allocator in a single-threaded program (harness = false) watches them.
#![allow(clippy::disallowed_macros)] // a build script, test or bench prints to its runner
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicUsize, Ordering};

use ftrace::{Marker, MarkerLayer};
use tracing_subscriber::prelude::*;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call unchanged to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: ptr came from System.alloc with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_in(body: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    body();
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

fn main() {
    let (read, write) = UnixDatagram::pair().unwrap();
    read.set_nonblocking(true).unwrap();
    let marker = Marker::from_fd(write.into());
    let long = "x|y\n".repeat(600);
    // The counter works: an allocation is seen.
    assert!(allocations_in(|| drop(std::hint::black_box(vec![1u8; 16]))) > 0);
    marker.begin("warm up the pid cache");

    let n = allocations_in(|| {
        marker.begin("rep child=1 cpu=3 n=4");
        marker.counter(&long, i64::MIN);
        marker.instant(&long);
        marker.end();
    });
    assert_eq!(n, 0, "marker writes allocated {n} times");

    // A disabled marker allocates nothing either.
    let off = Marker::disabled();
    assert_eq!(allocations_in(|| off.begin(&long)), 0);

    let (layer_read, layer_write) = UnixDatagram::pair().unwrap();
    layer_read.set_nonblocking(true).unwrap();
    let subscriber = tracing_subscriber::registry().with(MarkerLayer::with_marker(
        Marker::from_fd(layer_write.into()),
    ));
    tracing::subscriber::with_default(subscriber, || {
        let span = tracing::info_span!("rep", child = 1, cpu = 3, n = 4);
        // The registry's per-thread span stack grows on first use.
        span.in_scope(|| {});
        let n = allocations_in(|| {
            for _ in 0..20 {
                let _entered = span.enter();
            }
        });
        assert_eq!(n, 0, "entering and exiting a span allocated {n} times");
    });

    let mut buf = [0u8; 2048];
    let mut records = 0;
    while layer_read.recv(&mut buf).is_ok() {
        records += 1;
    }
    assert_eq!(records, 2 + 40, "one B and one E per enter");
    println!("no_alloc: marker writes and span enter/exit allocate nothing: ok");
}
