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

/// Pins the calling process to `cpu` and checks that the mask is exactly `{cpu}` and that the
/// process now runs there. Returns a readable reason on failure.
pub fn pin_and_verify(cpu: usize) -> Result<(), String> {
    let mut set = CpuSet::new();
    set.set(cpu)
        .map_err(|e| format!("CPU {cpu} cannot be put in a CPU set: {e}"))?;
    sched_setaffinity(Pid::from_raw(0), &set)
        .map_err(|e| format!("sched_setaffinity to CPU {cpu} failed: {e}"))?;
    let got = allowed_cpus().map_err(|e| format!("sched_getaffinity failed: {e}"))?;
    if got != [cpu] {
        return Err(format!(
            "pinned to CPU {cpu} but the affinity mask reads {}",
            crate::cpulist::format_cpu_list(&got)
        ));
    }
    // The kernel migrates a task off a CPU it is no longer allowed on before returning to user
    // space; give it a few chances to settle before calling the pin broken.
    for _ in 0..100 {
        if current_cpu() == Some(cpu) {
            return Ok(());
        }
        std::thread::yield_now();
    }
    Err(format!(
        "pinned to CPU {cpu} but still running on CPU {}",
        current_cpu().map_or("?".into(), |c| c.to_string())
    ))
}

/// Runs `f` with the calling process pinned to `cpu` (verified), then restores the affinity
/// mask it had; with `None` it just runs `f`. For a parent that sizes a fixed-count run on a
/// chosen core before forking; call it only while single-threaded.
pub fn with_pinned<T>(cpu: Option<usize>, f: impl FnOnce() -> T) -> Result<T, String> {
    let Some(cpu) = cpu else {
        return Ok(f());
    };
    let saved = sched_getaffinity(Pid::from_raw(0))
        .map_err(|e| format!("sched_getaffinity failed: {e}"))?;
    let value = pin_and_verify(cpu).map(|()| f());
    let restored = sched_setaffinity(Pid::from_raw(0), &saved)
        .map_err(|e| format!("restoring the CPU mask failed: {e}"));
    let value = value?;
    restored.map(|()| value)
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
}
