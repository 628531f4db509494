//! Kernel software perf counters of the calling process (CPU migrations, context switches).
//!
//! Hardware counters are often unavailable (VMs, locked-down phones); software counters
//! usually work and tell whether a pinned child really stayed put. When perf_event_open is
//! refused the counter is simply absent from the report.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::Read;
use std::os::fd::FromRawFd;

use perf_event_open_sys::bindings;

/// Which software event to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoftwareEvent {
    /// PERF_COUNT_SW_CPU_MIGRATIONS.
    CpuMigrations,
    /// PERF_COUNT_SW_CONTEXT_SWITCHES.
    ContextSwitches,
}

/// An open counter for the calling process, counting from the moment it was opened.
#[derive(Debug)]
pub struct Counter {
    file: File,
}

impl Counter {
    /// Opens a counter on the calling process (any CPU); `None` when the kernel refuses.
    pub fn open(event: SoftwareEvent) -> Option<Counter> {
        let mut attr = bindings::perf_event_attr {
            type_: bindings::PERF_TYPE_SOFTWARE,
            size: std::mem::size_of::<bindings::perf_event_attr>() as u32,
            config: match event {
                SoftwareEvent::CpuMigrations => bindings::PERF_COUNT_SW_CPU_MIGRATIONS as u64,
                SoftwareEvent::ContextSwitches => bindings::PERF_COUNT_SW_CONTEXT_SWITCHES as u64,
            },
            ..Default::default()
        };
        attr.set_exclude_hv(1);
        // SAFETY: `attr` is a fully initialised perf_event_attr of the size the kernel is told;
        // pid 0 / cpu -1 counts the calling process on any CPU; no group, CLOEXEC only.
        let fd = unsafe {
            perf_event_open_sys::perf_event_open(
                &mut attr,
                0,
                -1,
                -1,
                bindings::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
            )
        };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` was just returned by the kernel, is valid, and is owned by nobody else.
        let file = unsafe { File::from_raw_fd(fd) };
        Some(Counter { file })
    }

    /// Current count (events since the counter was opened).
    pub fn read(&mut self) -> Option<u64> {
        let mut buf = [0u8; 8];
        self.file.read_exact(&mut buf).ok()?;
        Some(u64::from_ne_bytes(buf))
    }
}
