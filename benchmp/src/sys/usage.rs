//! Resource usage of the calling process (context switches, page faults, CPU time).

use nix::sys::resource::{UsageWho, getrusage};
use serde::{Deserialize, Serialize};

/// Counters from getrusage(RUSAGE_SELF); differences of two readings describe a phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceUsage {
    /// Voluntary context switches (the process blocked).
    pub voluntary_switches: u64,
    /// Involuntary context switches (the process was preempted: noise).
    pub involuntary_switches: u64,
    /// Minor page faults.
    pub minor_faults: u64,
    /// Major page faults (disk I/O).
    pub major_faults: u64,
    /// User CPU time, ns.
    pub user_ns: u64,
    /// System CPU time, ns.
    pub system_ns: u64,
}

impl ResourceUsage {
    /// Reads the calling process's counters (zeros if the call fails).
    pub fn now() -> ResourceUsage {
        let Ok(u) = getrusage(UsageWho::RUSAGE_SELF) else {
            return ResourceUsage::default();
        };
        let ns = |tv: nix::sys::time::TimeVal| {
            tv.tv_sec() as u64 * 1_000_000_000 + tv.tv_usec() as u64 * 1000
        };
        ResourceUsage {
            voluntary_switches: u.voluntary_context_switches() as u64,
            involuntary_switches: u.involuntary_context_switches() as u64,
            minor_faults: u.minor_page_faults() as u64,
            major_faults: u.major_page_faults() as u64,
            user_ns: ns(u.user_time()),
            system_ns: ns(u.system_time()),
        }
    }

    /// Counter growth from `earlier` to `self`.
    pub fn since(&self, earlier: &ResourceUsage) -> ResourceUsage {
        ResourceUsage {
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            system_ns: self.system_ns.saturating_sub(earlier.system_ns),
        }
    }
}
