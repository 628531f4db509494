//! Child placement: lmbench's `LMBENCH_SCHED` policies with their exact CPU choice, and
//! `--cpus LIST`, resolved against the CPUs this process is allowed to use.
//!
//! lmbench numbers CPUs by position in the inherited affinity mask, so under `taskset -c 4-7`
//! child 0 of `UNIQUE` lands on CPU 4. That is kept. What is not kept: its list parser reading
//! past the end of the string, its 32-bit masks, and unknown policy names silently meaning
//! "unpinned" (they are refused here).

use serde::{Deserialize, Serialize};

use crate::cpulist::format_cpu_list;

/// Environment variable lmbench reads for the placement policy.
pub const LMBENCH_SCHED_ENV: &str = "LMBENCH_SCHED";

/// The value of `LMBENCH_SCHED`, `None` when unset (or not Unicode): the one place it is read.
pub fn lmbench_sched() -> Option<String> {
    std::env::var(LMBENCH_SCHED_ENV).ok()
}

/// The policy `LMBENCH_SCHED` names (`None`: unset), refused as [`parse_policy`] refuses it: for
/// a tool that pins nothing but must not pass a typo in its caller's environment silently.
pub fn env_policy() -> Result<Option<Policy>, PlacementError> {
    lmbench_sched().map(|v| parse_policy(&v)).transpose()
}

/// What chose the children's CPUs, in benchmp's precedence (first wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChosenBy {
    /// `--cpus LIST`.
    Cpus,
    /// `--sched POLICY`.
    Sched,
    /// The `LMBENCH_SCHED` environment variable.
    LmbenchSched,
    /// `-P N` alone (one child per allowed CPU, lmbench's UNIQUE).
    Parallel,
}

impl ChosenBy {
    /// The option or variable as the user wrote it (`--cpus`, `LMBENCH_SCHED`, `-P` …).
    pub fn as_str(self) -> &'static str {
        match self {
            ChosenBy::Cpus => "--cpus",
            ChosenBy::Sched => "--sched",
            ChosenBy::LmbenchSched => LMBENCH_SCHED_ENV,
            ChosenBy::Parallel => "-P",
        }
    }
}

impl std::fmt::Display for ChosenBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool's own CPU for its children, used only when nothing in [`ChosenBy`] chose them (dto:
/// PERF_CPU, else CPU 1); outside the allowed set it wraps into it, with a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDefault {
    /// The CPU asked for.
    pub cpu: usize,
    /// What asked for it, as the note names it (`PERF_CPU`).
    pub asked_by: String,
    /// The report's placement source when it is used (`PERF_CPU`, or `default`).
    pub source: String,
}

/// `requested` when it is allowed (or nothing is known to be), else the allowed CPU at its
/// position modulo their count, with a note naming `asked_by` and the wrap.
pub fn wrap_into_allowed(
    asked_by: &str,
    requested: usize,
    allowed: &[usize],
) -> (usize, Option<String>) {
    if allowed.is_empty() || allowed.contains(&requested) {
        return (requested, None);
    }
    let cpu = allowed[requested % allowed.len()];
    let note = format!(
        "{asked_by}={requested} is not in the allowed set {}; wrapped to CPU {cpu}",
        format_cpu_list(allowed)
    );
    (cpu, Some(note))
}

/// A placement policy (lmbench `lib_sched.c`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "policy", content = "list", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Policy {
    /// No pinning.
    Default,
    /// Every child on the first allowed CPU.
    Single,
    /// Child i on allowed CPU i.
    Balanced,
    /// Child i on allowed CPU reverse_bits(i): spread over the machine first.
    BalancedSpread,
    /// One child per CPU: child i on allowed CPU i.
    Unique,
    /// As UNIQUE, spread with reverse_bits(i).
    UniqueSpread,
    /// Child i on list[i mod len] (positions in the allowed set).
    Custom(Vec<usize>),
    /// As CUSTOM (lmbench's extra benchproc term is 0 for these tools).
    CustomUnique(Vec<usize>),
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |l: &Vec<usize>| {
            l.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        match self {
            Policy::Default => f.write_str("DEFAULT"),
            Policy::Single => f.write_str("SINGLE"),
            Policy::Balanced => f.write_str("BALANCED"),
            Policy::BalancedSpread => f.write_str("BALANCED_SPREAD"),
            Policy::Unique => f.write_str("UNIQUE"),
            Policy::UniqueSpread => f.write_str("UNIQUE_SPREAD"),
            Policy::Custom(l) => write!(f, "CUSTOM {}", list(l)),
            Policy::CustomUnique(l) => write!(f, "CUSTOM_UNIQUE {}", list(l)),
        }
    }
}

/// Why a placement cannot be honoured (always a usage error, exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlacementError {
    /// Unknown or unsupported policy name.
    #[error(
        "LMBENCH_SCHED '{0}' is not a policy: use DEFAULT, SINGLE, BALANCED, BALANCED_SPREAD, UNIQUE, UNIQUE_SPREAD, 'CUSTOM <list>' or 'CUSTOM_UNIQUE <list>'"
    )]
    UnknownPolicy(String),
    /// CUSTOM without numbers.
    #[error("LMBENCH_SCHED '{0}' has an empty CPU list")]
    EmptyList(String),
    /// A CPU asked with --cpus is offline.
    #[error("CPU {cpu} is not online (online CPUs: {online})")]
    Offline {
        /// CPU asked.
        cpu: usize,
        /// Online set.
        online: String,
    },
    /// A CPU asked with --cpus is outside the affinity mask (taskset, cgroup cpuset).
    #[error("CPU {cpu} is not in this process's allowed CPU set {allowed} (taskset or cpuset)")]
    NotAllowed {
        /// CPU asked.
        cpu: usize,
        /// Allowed set.
        allowed: String,
    },
    /// A CPU list names one CPU twice.
    #[error("CPU {0} is given twice")]
    Twice(usize),
    /// More children than CPUs to put them on, without asking to share CPUs.
    #[error(
        "-P {parallel} asks for more children than the {count} CPUs this process may use ({allowed}); to share CPUs on purpose give them with --cpus (child i on the i-th, wrapping)"
    )]
    TooManyChildren {
        /// Children asked.
        parallel: usize,
        /// The allowed set.
        allowed: String,
        /// Its size.
        count: usize,
    },
    /// The process may not run anywhere (should not happen).
    #[error("the process's allowed CPU set is empty")]
    NoCpus,
}

impl crate::error::ExitStatus for PlacementError {
    fn exit_status(&self) -> i32 {
        crate::error::EXIT_USAGE
    }
}

/// Parses an `LMBENCH_SCHED` value. Keywords are case-insensitive; `CUSTOM` lists are the
/// integers in the rest of the string, any other character separating them.
pub fn parse_policy(text: &str) -> Result<Policy, PlacementError> {
    let t = text.trim();
    let (word, rest) = match t.find(|c: char| c.is_whitespace()) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let list = || -> Result<Vec<usize>, PlacementError> {
        let v: Vec<usize> = rest
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .filter_map(|s| s.parse().ok())
            .collect();
        if v.is_empty() {
            Err(PlacementError::EmptyList(text.to_string()))
        } else {
            Ok(v)
        }
    };
    let upper = word.to_ascii_uppercase();
    let simple = |p: Policy| {
        if rest.trim().is_empty() {
            Ok(p)
        } else {
            Err(PlacementError::UnknownPolicy(text.to_string()))
        }
    };
    match upper.as_str() {
        "" | "DEFAULT" => simple(Policy::Default),
        "SINGLE" => simple(Policy::Single),
        "BALANCED" => simple(Policy::Balanced),
        "BALANCED_SPREAD" => simple(Policy::BalancedSpread),
        "UNIQUE" => simple(Policy::Unique),
        "UNIQUE_SPREAD" => simple(Policy::UniqueSpread),
        "CUSTOM" => Ok(Policy::Custom(list()?)),
        "CUSTOM_UNIQUE" => Ok(Policy::CustomUnique(list()?)),
        _ => Err(PlacementError::UnknownPolicy(text.to_string())),
    }
}

/// lmbench's reverse_bits: reverse the low b bits of `x`, b = bit length of (ncpus − 1), ≥ 1.
pub fn reverse_bits(x: usize, ncpus: usize) -> usize {
    let mut bits = 1;
    let mut m = ncpus.saturating_sub(1) >> 1;
    while m > 0 {
        bits += 1;
        m >>= 1;
    }
    let mut r = 0;
    for b in 0..bits {
        if x & (1 << b) != 0 {
            r |= 1 << (bits - 1 - b);
        }
    }
    r
}

/// The logical CPU number lmbench picks for child `i` (before wrapping into the allowed set);
/// `None` for DEFAULT.
pub fn logical_cpu(policy: &Policy, child: usize, ncpus: usize) -> Option<usize> {
    match policy {
        Policy::Default => None,
        Policy::Single => Some(0),
        Policy::Balanced | Policy::Unique => Some(child),
        Policy::BalancedSpread | Policy::UniqueSpread => Some(reverse_bits(child, ncpus)),
        Policy::Custom(l) | Policy::CustomUnique(l) => Some(l[child % l.len()]),
    }
}

/// How the children were placed, for reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// Policy text (`UNIQUE`, `CUSTOM 0 2`, `cpus 0-3` …) and where it came from.
    pub policy: String,
    /// `--cpus`, `LMBENCH_SCHED`, or `default`.
    pub source: String,
    /// The CPU each child is pinned to (`None`: not pinned), by child index.
    pub cpus: Vec<Option<usize>>,
    /// The process's allowed CPUs at start.
    pub allowed: Vec<usize>,
    /// What the placement did that the user may not expect (a CUSTOM CPU wrapped onto
    /// another), shown with the run's notes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Resolves lmbench-policy placement for `parallel` children: logical number mod online CPUs,
/// then mod the allowed count, then the n-th allowed CPU in ascending order.
pub fn place_by_policy(
    policy: &Policy,
    parallel: usize,
    online: &[usize],
    allowed: &[usize],
) -> Result<Vec<Option<usize>>, PlacementError> {
    if allowed.is_empty() {
        return Err(PlacementError::NoCpus);
    }
    let ncpus = online.len().max(1);
    Ok((0..parallel)
        .map(|i| {
            logical_cpu(policy, i, ncpus).map(|n| {
                let n = (n % ncpus) % allowed.len();
                allowed[n]
            })
        })
        .collect())
}

/// One line per CPU a CUSTOM list names that is not the CPU a child gets: lmbench wraps a
/// number beyond the online or allowed CPUs onto another one, silently; we say so.
pub fn wrap_warnings(
    policy: &Policy,
    parallel: usize,
    online: &[usize],
    allowed: &[usize],
) -> Vec<String> {
    let (Policy::Custom(list) | Policy::CustomUnique(list)) = policy else {
        return Vec::new();
    };
    let Ok(placed) = place_by_policy(policy, parallel, online, allowed) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for (i, cpu) in placed.iter().enumerate() {
        let named = list[i % list.len()];
        if let Some(got) = *cpu
            && got != named
        {
            lines.push(format!(
                "{policy}: child {i} runs on CPU {got}, not CPU {named}: lmbench takes the number modulo the {} online CPUs, then as an index into the allowed ones ({}); --cpus pins to the CPUs named or refuses them",
                online.len(),
                format_cpu_list(allowed)
            ));
        }
    }
    lines
}

/// Refuses a CPU that is offline or outside this process's allowed set, as `--cpus` does.
pub fn check_cpu(cpu: usize, online: &[usize], allowed: &[usize]) -> Result<(), PlacementError> {
    if !online.contains(&cpu) {
        return Err(PlacementError::Offline {
            cpu,
            online: format_cpu_list(online),
        });
    }
    if !allowed.contains(&cpu) {
        return Err(PlacementError::NotAllowed {
            cpu,
            allowed: format_cpu_list(allowed),
        });
    }
    Ok(())
}

/// Checks a CPU list a user gave for a tool's own option (lat_mem_rd's `--load-cpus`): each
/// CPU as [`check_cpu`], and each once. The caller names the option in its message.
pub fn check_cpu_list(
    cpus: &[usize],
    online: &[usize],
    allowed: &[usize],
) -> Result<(), PlacementError> {
    for (i, &c) in cpus.iter().enumerate() {
        check_cpu(c, online, allowed)?;
        if cpus[..i].contains(&c) {
            return Err(PlacementError::Twice(c));
        }
    }
    Ok(())
}

/// Places children on an explicit CPU list (`--cpus`): child i on cpus[i mod len]. Every CPU
/// must be online and in the allowed set.
pub fn place_on_list(
    cpus: &[usize],
    parallel: usize,
    online: &[usize],
    allowed: &[usize],
) -> Result<Vec<Option<usize>>, PlacementError> {
    for &c in cpus {
        check_cpu(c, online, allowed)?;
    }
    if cpus.is_empty() {
        return Err(PlacementError::NoCpus);
    }
    Ok((0..parallel).map(|i| Some(cpus[i % cpus.len()])).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_policy() {
        assert_eq!(parse_policy("DEFAULT"), Ok(Policy::Default));
        assert_eq!(parse_policy("single"), Ok(Policy::Single));
        assert_eq!(parse_policy("Balanced"), Ok(Policy::Balanced));
        assert_eq!(parse_policy("BALANCED_SPREAD"), Ok(Policy::BalancedSpread));
        assert_eq!(parse_policy("unique"), Ok(Policy::Unique));
        assert_eq!(parse_policy("UNIQUE_SPREAD"), Ok(Policy::UniqueSpread));
        assert_eq!(parse_policy("CUSTOM 1 3"), Ok(Policy::Custom(vec![1, 3])));
        assert_eq!(
            parse_policy("custom 4,5;6"),
            Ok(Policy::Custom(vec![4, 5, 6]))
        );
        assert_eq!(
            parse_policy("CUSTOM_UNIQUE 0 2"),
            Ok(Policy::CustomUnique(vec![0, 2]))
        );
    }

    #[test]
    fn list_ends_with_the_string() {
        // lmbench read past a list ending in a digit into the next environment entry.
        assert_eq!(parse_policy("CUSTOM 1 3"), Ok(Policy::Custom(vec![1, 3])));
    }

    #[test]
    fn refuses_unknown_policies() {
        for bad in [
            "CUSTOM_SPREAD 1",
            "UNIQUE_LAST",
            "fast",
            "UNIQUE 3",
            "CUSTOM1",
        ] {
            assert!(parse_policy(bad).is_err(), "{bad}");
        }
        assert!(matches!(
            parse_policy("CUSTOM"),
            Err(PlacementError::EmptyList(_))
        ));
    }

    #[test]
    fn reverse_bits_matches_lmbench() {
        let v: Vec<usize> = (0..8).map(|i| reverse_bits(i, 8)).collect();
        assert_eq!(v, vec![0, 4, 2, 6, 1, 5, 3, 7]);
        let v: Vec<usize> = (0..2).map(|i| reverse_bits(i, 2)).collect();
        assert_eq!(v, vec![0, 1]);
        assert_eq!(reverse_bits(0, 1), 0);
        let v: Vec<usize> = (0..4).map(|i| reverse_bits(i, 3)).collect();
        assert_eq!(v, vec![0, 2, 1, 3]);
    }

    #[test]
    fn policies_index_the_allowed_set() {
        let online: Vec<usize> = (0..8).collect();
        let allowed = vec![4, 5, 6, 7]; // taskset -c 4-7
        assert_eq!(
            place_by_policy(&Policy::Unique, 4, &online, &allowed).unwrap(),
            vec![Some(4), Some(5), Some(6), Some(7)]
        );
        assert_eq!(
            place_by_policy(&Policy::Custom(vec![0, 2]), 2, &online, &allowed).unwrap(),
            vec![Some(4), Some(6)]
        );
        assert_eq!(
            place_by_policy(&Policy::Default, 2, &online, &allowed).unwrap(),
            vec![None, None]
        );
        assert_eq!(
            place_by_policy(&Policy::Single, 3, &online, &allowed).unwrap(),
            vec![Some(4); 3]
        );
    }

    #[test]
    fn spread_policies_on_eight_cpus() {
        let all: Vec<usize> = (0..8).collect();
        let got = place_by_policy(&Policy::UniqueSpread, 8, &all, &all).unwrap();
        let got: Vec<usize> = got.into_iter().map(Option::unwrap).collect();
        assert_eq!(got, vec![0, 4, 2, 6, 1, 5, 3, 7]);
    }

    #[test]
    fn a_custom_cpu_that_wraps_is_named() {
        let online = [0, 1];
        let w = wrap_warnings(&Policy::Custom(vec![0, 9]), 2, &online, &online);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("child 1 runs on CPU 1, not CPU 9"), "{w:?}");
        assert!(wrap_warnings(&Policy::Custom(vec![1, 0]), 2, &online, &online).is_empty());
        assert!(wrap_warnings(&Policy::Unique, 4, &online, &online).is_empty());
    }

    #[test]
    fn children_beyond_the_set_wrap() {
        // Measured with lmbench on 2 CPUs: unrestricted, child 2 went to CPU 0; under taskset -c 1,
        // child 0 went to CPU 1.
        let online = vec![0, 1];
        assert_eq!(
            place_by_policy(&Policy::Unique, 3, &online, &online).unwrap(),
            vec![Some(0), Some(1), Some(0)]
        );
        assert_eq!(
            place_by_policy(&Policy::Unique, 1, &online, &[1]).unwrap(),
            vec![Some(1)]
        );
    }

    #[test]
    fn cpu_list_placement_is_checked() {
        let online = vec![0, 1, 2, 3];
        let allowed = vec![0, 1];
        assert_eq!(
            place_on_list(&[1, 0], 3, &online, &allowed).unwrap(),
            vec![Some(1), Some(0), Some(1)]
        );
        let e = place_on_list(&[2], 1, &online, &allowed).unwrap_err();
        assert_eq!(
            e.to_string(),
            "CPU 2 is not in this process's allowed CPU set 0-1 (taskset or cpuset)"
        );
        let e = place_on_list(&[9], 1, &online, &allowed).unwrap_err();
        assert_eq!(e.to_string(), "CPU 9 is not online (online CPUs: 0-3)");
    }

    #[test]
    fn a_tool_cpu_list_is_checked_and_named_once() {
        let (online, allowed) = ([0, 1, 2, 3], [0, 1]);
        assert!(check_cpu_list(&[1, 0], &online, &allowed).is_ok());
        let e = check_cpu_list(&[1, 1], &online, &allowed).unwrap_err();
        assert_eq!(e.to_string(), "CPU 1 is given twice");
        assert!(matches!(
            check_cpu_list(&[0, 3], &online, &allowed),
            Err(PlacementError::NotAllowed { cpu: 3, .. })
        ));
        assert!(matches!(
            check_cpu_list(&[7], &online, &allowed),
            Err(PlacementError::Offline { cpu: 7, .. })
        ));
    }

    #[test]
    fn a_tool_default_wraps_into_the_allowed_set() {
        assert_eq!(wrap_into_allowed("PERF_CPU", 1, &[0, 1]), (1, None));
        let (cpu, note) = wrap_into_allowed("PERF_CPU", 5, &[0, 2, 4]);
        assert_eq!(cpu, 4);
        assert_eq!(
            note.as_deref(),
            Some("PERF_CPU=5 is not in the allowed set 0,2,4; wrapped to CPU 4")
        );
        assert_eq!(wrap_into_allowed("PERF_CPU", 1, &[0]).0, 0);
    }

    #[test]
    fn placement_errors_are_usage_errors() {
        use crate::error::ExitStatus;
        let e = parse_policy("bogus").unwrap_err();
        assert_eq!(e.exit_status(), crate::error::EXIT_USAGE);
        assert!(e.to_string().starts_with("LMBENCH_SCHED 'bogus'"), "{e}");
    }
}
