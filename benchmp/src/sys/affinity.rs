//! CPU affinity: read the allowed set, pin the calling process, and verify the pin.
//!
//! core_affinity cannot tell whether a pin took effect, and a phone's cpuset can silently narrow
//! what a process may use, so the pin is checked with sched_getaffinity and sched_getcpu.

use nix::sched::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
use nix::unistd::Pid;

/// CPUs the calling process may run on (its affinity mask), ascending.
pub fn allowed_cpus() -> nix::Result<Vec<usize>> {
    let set = sched_getaffinity(Pid::from_raw(0))?;
    Ok((0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect())
}

/// The CPU the caller is running on right now, if the kernel says.
pub fn current_cpu() -> Option<usize> {
    sched_getcpu().ok()
}

/// Why a pin failed or could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum AffinityError {
    /// The CPU number does not fit in a CPU set.
    #[error("CPU {cpu} cannot be put in a CPU set")]
    NoSuchCpu {
        /// The CPU.
        cpu: usize,
        /// The system error.
        #[source]
        source: nix::Error,
    },
    /// sched_setaffinity refused.
    #[error("sched_setaffinity to CPU {cpu} failed")]
    Set {
        /// The CPU.
        cpu: usize,
        /// The system error.
        #[source]
        source: nix::Error,
    },
    /// sched_getaffinity failed.
    #[error("sched_getaffinity failed")]
    Get(#[source] nix::Error),
    /// The mask read back is not the one set (a cpuset narrowed it, or another process moved us).
    #[error("pinned to CPU {cpu} but the affinity mask reads {}", crate::cpulist::format_cpu_list(.got))]
    Mask {
        /// The CPU asked for.
        cpu: usize,
        /// The mask read back.
        got: Vec<usize>,
    },
    /// The kernel kept running the process elsewhere.
    #[error("pinned to CPU {cpu} but still running on CPU {}", .on.map_or("?".into(), |c| c.to_string()))]
    NotMoved {
        /// The CPU asked for.
        cpu: usize,
        /// Where it still runs.
        on: Option<usize>,
    },
}

/// Pins the calling process to `cpu` and checks that the mask is exactly `{cpu}` and that the
/// process now runs there.
pub fn pin_and_verify(cpu: usize) -> Result<(), AffinityError> {
    let mut set = CpuSet::new();
    set.set(cpu)
        .map_err(|source| AffinityError::NoSuchCpu { cpu, source })?;
    sched_setaffinity(Pid::from_raw(0), &set)
        .map_err(|source| AffinityError::Set { cpu, source })?;
    let got = allowed_cpus().map_err(AffinityError::Get)?;
    if got != [cpu] {
        return Err(AffinityError::Mask { cpu, got });
    }
    // The kernel migrates a task off a CPU it is no longer allowed on before returning to user
    // space; give it a few chances to settle before calling the pin broken.
    for _ in 0..100 {
        if current_cpu() == Some(cpu) {
            return Ok(());
        }
        std::thread::yield_now();
    }
    Err(AffinityError::NotMoved {
        cpu,
        on: current_cpu(),
    })
}

/// Runs `f` with the calling process pinned to `cpu` (verified), then restores the affinity
/// mask it had; with `None` it just runs `f`. For a parent that sizes a fixed-count run on a
/// chosen core before forking; call it only while single-threaded.
pub fn with_pinned<T>(cpu: Option<usize>, f: impl FnOnce() -> T) -> Result<T, AffinityError> {
    let Some(cpu) = cpu else {
        return Ok(f());
    };
    let saved = sched_getaffinity(Pid::from_raw(0)).map_err(AffinityError::Get)?;
    let value = pin_and_verify(cpu).map(|()| f());
    let restored = sched_setaffinity(Pid::from_raw(0), &saved)
        .map_err(|source| AffinityError::Set { cpu, source });
    let value = value?;
    restored.map(|()| value)
}

/// Lets the calling process run on `cpus` only and returns the mask it had, for the parent
/// to keep its own work (the power sampler) off the CPUs it measures. Call it only after
/// every child is forked: a child inherits the mask it is forked with.
pub fn confine(cpus: &[usize]) -> nix::Result<Vec<usize>> {
    let old = allowed_cpus()?;
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c)?;
    }
    sched_setaffinity(Pid::from_raw(0), &set)?;
    Ok(old)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_pinned_restores_the_mask() {
        let before = allowed_cpus().unwrap();
        let cpu = *before.last().unwrap();
        let inside = with_pinned(Some(cpu), || (allowed_cpus().unwrap(), current_cpu())).unwrap();
        assert_eq!(inside.0, vec![cpu]);
        assert_eq!(inside.1, Some(cpu));
        assert_eq!(allowed_cpus().unwrap(), before);
        assert_eq!(with_pinned(None, || 7).unwrap(), 7);
    }

    #[test]
    fn confine_returns_the_mask_to_give_back() {
        let before = allowed_cpus().unwrap();
        let last = *before.last().unwrap();
        let old = confine(&[last]).unwrap();
        assert_eq!(allowed_cpus().unwrap(), vec![last]);
        confine(&old).unwrap();
        assert_eq!(allowed_cpus().unwrap(), before);
    }
}
