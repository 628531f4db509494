//! Kernel perf counters of the calling process: single software counters (CPU migrations,
//! context switches) and groups of events read together with their multiplexing times.
//!
//! Hardware counters are often unavailable (VMs, locked-down phones); software counters
//! usually work and tell whether a pinned child really stayed put. Where perf_event_open is
//! refused, a counter the tool opens by itself is simply absent from the report; a group the
//! user asked for (`--counters`) fails with the kernel's reason.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd};

use perf_event_open_sys::bindings;

/// Which software event to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoftwareEvent {
    /// PERF_COUNT_SW_CPU_MIGRATIONS.
    CpuMigrations,
    /// PERF_COUNT_SW_CONTEXT_SWITCHES.
    ContextSwitches,
}

/// Most events one group may hold: more than any PMU counts at once.
pub const MAX_EVENTS: usize = 16;

/// An event by the name `perf stat -e` and simpleperf give it, with its perf type and config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The name as given (an alias is kept as spelled, e.g. `cs`).
    pub name: String,
    kind: u32,
    config: u64,
}

/// Named events: (names, type, config). Hardware first, then software.
const NAMED: &[(&[&str], u32, u32)] = &[
    (
        &["cycles", "cpu-cycles"],
        bindings::PERF_TYPE_HARDWARE,
        bindings::PERF_COUNT_HW_CPU_CYCLES,
    ),
    (
        &["instructions"],
        bindings::PERF_TYPE_HARDWARE,
        bindings::PERF_COUNT_HW_INSTRUCTIONS,
    ),
    (
        &["cache-references"],
        bindings::PERF_TYPE_HARDWARE,
        bindings::PERF_COUNT_HW_CACHE_REFERENCES,
    ),
    (
        &["cache-misses"],
        bindings::PERF_TYPE_HARDWARE,
        bindings::PERF_COUNT_HW_CACHE_MISSES,
    ),
    (
        &["branches", "branch-instructions"],
        bindings::PERF_TYPE_HARDWARE,
        bindings::PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
    ),
    (
        &["branch-misses"],
        bindings::PERF_TYPE_HARDWARE,
        bindings::PERF_COUNT_HW_BRANCH_MISSES,
    ),
    (
        &["bus-cycles"],
        bindings::PERF_TYPE_HARDWARE,
        bindings::PERF_COUNT_HW_BUS_CYCLES,
    ),
    (
        &["stalled-cycles-frontend"],
        bindings::PERF_TYPE_HARDWARE,
        bindings::PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
    ),
    (
        &["stalled-cycles-backend"],
        bindings::PERF_TYPE_HARDWARE,
        bindings::PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
    ),
    (
        &["ref-cycles"],
        bindings::PERF_TYPE_HARDWARE,
        bindings::PERF_COUNT_HW_REF_CPU_CYCLES,
    ),
    (
        &["cpu-clock"],
        bindings::PERF_TYPE_SOFTWARE,
        bindings::PERF_COUNT_SW_CPU_CLOCK,
    ),
    (
        &["task-clock"],
        bindings::PERF_TYPE_SOFTWARE,
        bindings::PERF_COUNT_SW_TASK_CLOCK,
    ),
    (
        &["page-faults", "faults"],
        bindings::PERF_TYPE_SOFTWARE,
        bindings::PERF_COUNT_SW_PAGE_FAULTS,
    ),
    (
        &["context-switches", "cs"],
        bindings::PERF_TYPE_SOFTWARE,
        bindings::PERF_COUNT_SW_CONTEXT_SWITCHES,
    ),
    (
        &["cpu-migrations", "migrations"],
        bindings::PERF_TYPE_SOFTWARE,
        bindings::PERF_COUNT_SW_CPU_MIGRATIONS,
    ),
    (
        &["minor-faults"],
        bindings::PERF_TYPE_SOFTWARE,
        bindings::PERF_COUNT_SW_PAGE_FAULTS_MIN,
    ),
    (
        &["major-faults"],
        bindings::PERF_TYPE_SOFTWARE,
        bindings::PERF_COUNT_SW_PAGE_FAULTS_MAJ,
    ),
    (
        &["alignment-faults"],
        bindings::PERF_TYPE_SOFTWARE,
        bindings::PERF_COUNT_SW_ALIGNMENT_FAULTS,
    ),
    (
        &["emulation-faults"],
        bindings::PERF_TYPE_SOFTWARE,
        bindings::PERF_COUNT_SW_EMULATION_FAULTS,
    ),
];

impl Event {
    /// The event named `name`: one of perf's generic names, or a raw PMU event `r<hex>`.
    pub fn parse(name: &str) -> Result<Event, String> {
        let name = name.trim();
        if let Some(hex) = name.strip_prefix('r').filter(|h| !h.is_empty())
            && let Ok(config) = u64::from_str_radix(hex, 16)
        {
            return Ok(Event {
                name: name.to_string(),
                kind: bindings::PERF_TYPE_RAW,
                config,
            });
        }
        NAMED
            .iter()
            .find(|(names, _, _)| names.contains(&name))
            .map(|&(_, kind, config)| Event {
                name: name.to_string(),
                kind,
                config: u64::from(config),
            })
            .ok_or_else(|| {
                format!(
                    "'{name}' is not a counter this tool knows (perf's names: {}; or a raw event r<hex>)",
                    NAMED
                        .iter()
                        .map(|(n, _, _)| n[0])
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }

    /// True for a hardware (PMU) event, named or raw.
    pub fn is_hardware(&self) -> bool {
        matches!(
            self.kind,
            bindings::PERF_TYPE_HARDWARE | bindings::PERF_TYPE_RAW
        )
    }

    /// True when this is the core cycles event.
    pub fn is_cycles(&self) -> bool {
        self.kind == bindings::PERF_TYPE_HARDWARE
            && self.config == u64::from(bindings::PERF_COUNT_HW_CPU_CYCLES)
    }

    /// The same event under another spelling? (`cs` and `context-switches` are one.)
    pub fn same(&self, other: &Event) -> bool {
        self.kind == other.kind && self.config == other.config
    }
}

/// Parses a comma-separated list of events: at least one, at most [`MAX_EVENTS`], none twice.
pub fn parse_events(list: &str) -> Result<Vec<Event>, String> {
    let mut events: Vec<Event> = Vec::new();
    for name in list.split(',') {
        let e = Event::parse(name)?;
        if events.iter().any(|x| x.same(&e)) {
            return Err(format!("counter '{}' is given twice", e.name));
        }
        events.push(e);
    }
    if events.len() > MAX_EVENTS {
        return Err(format!(
            "{} counters given; one group counts at most {MAX_EVENTS}",
            events.len()
        ));
    }
    Ok(events)
}

/// Why the kernel would not open a counter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("perf_event_open refused '{event}' ({errno}): {why}")]
pub struct CounterOpenError {
    /// The event.
    pub event: String,
    /// The kernel's error.
    pub errno: nix::errno::Errno,
    /// What that means here.
    pub why: String,
}

/// What an errno from perf_event_open means, in words.
fn reason(errno: nix::errno::Errno, hardware: bool) -> String {
    use nix::errno::Errno;
    match errno {
        Errno::ENOENT | Errno::EOPNOTSUPP if hardware => {
            "no hardware counters here (a VM without a virtual PMU, or an event this CPU lacks)"
                .to_string()
        }
        Errno::ENOENT | Errno::EOPNOTSUPP => "the kernel does not count this event".to_string(),
        Errno::EACCES | Errno::EPERM => {
            let paranoid = crate::sysfs::read_attr(std::path::Path::new("/proc/sys/kernel/perf_event_paranoid"))
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unreadable".into());
            format!(
                "not permitted: /proc/sys/kernel/perf_event_paranoid is {paranoid} (run as root or lower it)"
            )
        }
        Errno::ENOSYS => "this kernel has no perf_event_open".to_string(),
        Errno::EINVAL => {
            "the kernel rejected it (a raw code this PMU lacks, or more events than it counts at once)"
                .to_string()
        }
        Errno::EMFILE => "too many open files".to_string(),
        other => other.desc().to_string(),
    }
}

/// Opens one event on the calling process (any CPU), as a member of `group` when given
/// (`-1`: its own group). Hardware events that the paranoia level refuses with the kernel
/// counted are retried counting user space only.
fn open_event(
    kind: u32,
    config: u64,
    group: i32,
    read_format: u64,
) -> Result<File, nix::errno::Errno> {
    let mut attr = bindings::perf_event_attr {
        type_: kind,
        size: std::mem::size_of::<bindings::perf_event_attr>() as u32,
        config,
        read_format,
        ..Default::default()
    };
    attr.set_exclude_hv(1);
    let mut fd = open_attr(&mut attr, group);
    if fd < 0 {
        let errno = nix::errno::Errno::last();
        if !matches!(errno, nix::errno::Errno::EACCES | nix::errno::Errno::EPERM) {
            return Err(errno);
        }
        attr.set_exclude_kernel(1);
        fd = open_attr(&mut attr, group);
        if fd < 0 {
            return Err(nix::errno::Errno::last());
        }
    }
    // SAFETY: `fd` was just returned by the kernel, is valid, and is owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// perf_event_open(attr, this process, any CPU, group, CLOEXEC); the raw result.
fn open_attr(attr: &mut bindings::perf_event_attr, group: i32) -> i32 {
    // SAFETY: `attr` is a fully initialised perf_event_attr of the size the kernel is told;
    // pid 0 / cpu -1 counts the calling process on any CPU; `group` is -1 or an open leader.
    unsafe {
        perf_event_open_sys::perf_event_open(
            attr,
            0,
            -1,
            group,
            bindings::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    }
}

/// An open counter for the calling process, counting from the moment it was opened.
#[derive(Debug)]
pub struct Counter {
    file: File,
}

impl Counter {
    /// Opens a counter on the calling process (any CPU); `None` when the kernel refuses.
    pub fn open(event: SoftwareEvent) -> Option<Counter> {
        let config = match event {
            SoftwareEvent::CpuMigrations => bindings::PERF_COUNT_SW_CPU_MIGRATIONS,
            SoftwareEvent::ContextSwitches => bindings::PERF_COUNT_SW_CONTEXT_SWITCHES,
        };
        open_event(bindings::PERF_TYPE_SOFTWARE, u64::from(config), -1, 0)
            .ok()
            .map(|file| Counter { file })
    }

    /// Current count (events since the counter was opened).
    pub fn read(&mut self) -> Option<u64> {
        let mut buf = [0u8; 8];
        self.file.read_exact(&mut buf).ok()?;
        Some(u64::from_ne_bytes(buf))
    }
}

/// Events counted together: the kernel schedules a group onto the PMU as one, so their
/// counts cover the same time, and one read returns them all with the group's times.
#[derive(Debug)]
pub struct Group {
    leader: File,
    _members: Vec<File>,
    events: Vec<Event>,
}

/// One read of a group: counts since it was opened, and how long it was enabled and how long
/// it was really on the PMU (less when the kernel multiplexed it with other groups).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupReading {
    /// ns the group was enabled (while this task ran).
    pub enabled_ns: u64,
    /// ns the group was counting.
    pub running_ns: u64,
    /// One count per event, in the order given.
    pub values: Vec<u64>,
}

impl GroupReading {
    /// What was counted from `earlier` to this reading.
    pub fn since(&self, earlier: &GroupReading) -> GroupReading {
        GroupReading {
            enabled_ns: self.enabled_ns.saturating_sub(earlier.enabled_ns),
            running_ns: self.running_ns.saturating_sub(earlier.running_ns),
            values: self
                .values
                .iter()
                .zip(&earlier.values)
                .map(|(a, b)| a.saturating_sub(*b))
                .collect(),
        }
    }
}

impl Group {
    /// Opens `events` as one group on the calling process, the first as its leader.
    pub fn open(events: &[Event]) -> Result<Group, CounterOpenError> {
        let format = u64::from(
            bindings::PERF_FORMAT_GROUP
                | bindings::PERF_FORMAT_TOTAL_TIME_ENABLED
                | bindings::PERF_FORMAT_TOTAL_TIME_RUNNING,
        );
        let fail = |e: &Event, errno| CounterOpenError {
            event: e.name.clone(),
            errno,
            why: reason(errno, e.is_hardware()),
        };
        let first = events.first().ok_or_else(|| CounterOpenError {
            event: String::new(),
            errno: nix::errno::Errno::EINVAL,
            why: "no events".into(),
        })?;
        let leader =
            open_event(first.kind, first.config, -1, format).map_err(|n| fail(first, n))?;
        let mut members = Vec::new();
        for e in &events[1..] {
            let f =
                open_event(e.kind, e.config, leader.as_raw_fd(), format).map_err(|n| fail(e, n))?;
            members.push(f);
        }
        Ok(Group {
            leader,
            _members: members,
            events: events.to_vec(),
        })
    }

    /// The events, in the order of the counts.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Reads every count and the group's times.
    pub fn read(&mut self) -> std::io::Result<GroupReading> {
        let n = self.events.len();
        let mut buf = vec![0u8; 8 * (3 + n)];
        let got = self.leader.read(&mut buf)?;
        let word =
            |i: usize| u64::from_ne_bytes(buf[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        if got != buf.len() || word(0) as usize != n {
            return Err(std::io::Error::other(format!(
                "perf group read returned {got} bytes for {n} events"
            )));
        }
        Ok(GroupReading {
            enabled_ns: word(1),
            running_ns: word(2),
            values: (0..n).map(|i| word(3 + i)).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_named_as_perf_names_them() {
        let e = parse_events("cycles,instructions,cs,r01c2").unwrap();
        assert_eq!(e.len(), 4);
        assert!(e[0].is_cycles() && e[0].is_hardware());
        assert!(!e[2].is_hardware());
        assert_eq!((e[3].kind, e[3].config), (bindings::PERF_TYPE_RAW, 0x1c2));
        assert!(e[3].is_hardware());
        for bad in ["", "cycle", "r", "rxyz", "cycles,,instructions"] {
            assert!(parse_events(bad).is_err(), "{bad:?}");
        }
        let twice = parse_events("cs,context-switches").unwrap_err();
        assert!(twice.contains("twice"), "{twice}");
        let seventeen: Vec<String> = (1..=17).map(|i| format!("r{i:x}")).collect();
        assert!(
            parse_events(&seventeen.join(","))
                .unwrap_err()
                .contains("at most 16")
        );
    }

    #[test]
    fn a_software_group_counts_together() {
        // Software events work wherever perf_event_open does (not under paranoia 3).
        let events = parse_events("task-clock,page-faults,context-switches").unwrap();
        let mut g = match Group::open(&events) {
            Ok(g) => g,
            Err(e)
                if matches!(
                    e.errno,
                    nix::errno::Errno::EACCES | nix::errno::Errno::EPERM
                ) =>
            {
                foundation::errln!("skipped: {e}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        let a = g.read().unwrap();
        let mut v = vec![0u8; 64 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
        let b = g.read().unwrap();
        let d = b.since(&a);
        assert!(d.values[0] > 0, "task-clock counted: {d:?}");
        assert!(d.values[1] >= 1000, "64 MiB touched: {d:?}");
        assert!(d.enabled_ns >= d.running_ns && d.running_ns > 0, "{d:?}");
    }
}
