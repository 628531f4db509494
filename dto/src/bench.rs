//! The guide's benchmark table, page configurations and the A/B configurations a run measures.

use serde::{Deserialize, Serialize};

use crate::impls::ImplSpec;
use crate::kernels::Kernel;

/// The measured operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// memcpy(dst, src, size).
    Memcpy,
    /// memset(dst, byte, size).
    Memset,
    /// memcmp(dst, src, size) of equal buffers (the whole length is compared).
    Memcmp,
}

impl Op {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Memcpy => "memcpy",
            Op::Memset => "memset",
            Op::Memcmp => "memcmp",
        }
    }
}

/// One row of the benchmark table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bench {
    /// Name, e.g. memcpy_1m_pf50.
    pub name: &'static str,
    /// Operation.
    pub op: Op,
    /// Bytes per operation.
    pub size: usize,
    /// Percentage of operations preceded by dropping one destination page.
    pub pf_pct: u32,
    /// Shown but never judged (high variation at small sizes).
    pub reference_only: bool,
}

const fn b(name: &'static str, op: Op, kib: usize, pf_pct: u32, reference_only: bool) -> Bench {
    Bench {
        name,
        op,
        size: kib * 1024,
        pf_pct,
        reference_only,
    }
}

/// The DTO guide's benchmark table.
pub const BENCHES: &[Bench] = &[
    b("memcpy_4k", Op::Memcpy, 4, 0, true),
    b("memcpy_8k", Op::Memcpy, 8, 0, true),
    b("memcpy_16k", Op::Memcpy, 16, 0, false),
    b("memcpy_32k", Op::Memcpy, 32, 0, false),
    b("memcpy_64k", Op::Memcpy, 64, 0, false),
    b("memcpy_128k", Op::Memcpy, 128, 0, false),
    b("memcpy_256k", Op::Memcpy, 256, 0, false),
    b("memcpy_512k", Op::Memcpy, 512, 0, false),
    b("memcpy_1m", Op::Memcpy, 1024, 0, false),
    b("memcpy_1m_pf50", Op::Memcpy, 1024, 50, false),
    b("memset_64k", Op::Memset, 64, 0, false),
    b("memset_128k", Op::Memset, 128, 0, false),
    b("memset_256k", Op::Memset, 256, 0, false),
    b("memset_1m", Op::Memset, 1024, 0, false),
    b("memcmp_64k", Op::Memcmp, 64, 0, false),
    b("memcmp_128k", Op::Memcmp, 128, 0, false),
    b("memcmp_1m", Op::Memcmp, 1024, 0, false),
];

/// The PERF_SHORT sanity subset.
pub const SHORT: &[&str] = &["memcpy_4k", "memcpy_64k", "memcpy_1m", "memset_64k"];

/// Looks a benchmark up by name.
pub fn find(name: &str) -> Option<&'static Bench> {
    BENCHES.iter().find(|b| b.name == name)
}

/// Selects the benchmarks to run: `--only` names (validated) or the PERF_SHORT subset or all.
pub fn select(only: &[String], short: bool) -> Result<Vec<&'static Bench>, String> {
    if !only.is_empty() {
        return only
            .iter()
            .flat_map(|s| s.split(','))
            .filter(|s| !s.is_empty())
            .map(|n| {
                find(n).ok_or_else(|| {
                    let names: Vec<&str> = BENCHES.iter().map(|b| b.name).collect();
                    format!("unknown benchmark '{n}' (known: {})", names.join(", "))
                })
            })
            .collect();
    }
    Ok(BENCHES
        .iter()
        .filter(|b| !short || SHORT.contains(&b.name))
        .collect())
}

/// Page size of the measured buffers: dto's two, spelled `4k` and `2m` on the command line
/// and in reports (benchmp's [`benchmp::Pages`] spells the second `huge`; [`PageKind::pages`]
/// maps to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum PageKind {
    /// 4 KiB pages (transparent huge pages refused).
    #[value(name = "4k")]
    #[serde(rename = "4k")]
    Small,
    /// 2 MiB hugetlb pages.
    #[value(name = "2m")]
    #[serde(rename = "2m")]
    Huge,
}

impl PageKind {
    /// Page size in bytes.
    pub fn bytes(self) -> usize {
        match self {
            PageKind::Small => 4096,
            PageKind::Huge => benchmp::sys::mem::HUGE_PAGE,
        }
    }
    /// `4k` or `2m` (distributions.csv, plot script).
    pub fn short(self) -> &'static str {
        match self {
            PageKind::Small => "4k",
            PageKind::Huge => "2m",
        }
    }
    /// `4KB` or `2MB` (table titles).
    pub fn title(self) -> &'static str {
        match self {
            PageKind::Small => "4KB",
            PageKind::Huge => "2MB",
        }
    }
    /// benchmp's page policy.
    pub fn pages(self) -> benchmp::Pages {
        match self {
            PageKind::Small => benchmp::Pages::Small,
            PageKind::Huge => benchmp::Pages::Huge,
        }
    }
}

impl std::fmt::Display for PageKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.short())
    }
}

/// One A/B configuration: a label, the two implementations and the environment for the
/// children (library knobs such as DTO_*).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Column and row label.
    pub label: String,
    /// The "baseline" side (A).
    pub baseline: ImplSpec,
    /// The "current" side (B).
    pub current: ImplSpec,
    /// Variables set in the parent before each round's children are forked and removed after.
    pub env: Vec<(String, String)>,
}

impl Config {
    /// True when both sides are the same implementation: its change is noise, not a regression.
    pub fn is_a_a(&self) -> bool {
        self.baseline == self.current
    }

    /// `cpu` against itself, the reference row.
    fn cpu(env: &[(String, String)]) -> Config {
        Config {
            label: "cpu".into(),
            baseline: ImplSpec::Cpu,
            current: ImplSpec::Cpu,
            env: env.to_vec(),
        }
    }
}

/// `dto ab`'s configurations: cpu against itself (unless `no_cpu`, or both sides are cpu and
/// it is the only row), then `baseline` against `current` under `label` (default the
/// current implementation's; `ab` where that would be `cpu`).
pub fn ab_configs(
    baseline: ImplSpec,
    current: ImplSpec,
    label: Option<String>,
    no_cpu: bool,
    env: &[(String, String)],
) -> Vec<Config> {
    let mut configs = Vec::new();
    let both_cpu = baseline == ImplSpec::Cpu && current == ImplSpec::Cpu;
    if !no_cpu || both_cpu {
        configs.push(Config::cpu(env));
    }
    if !both_cpu {
        let mut label = label.unwrap_or_else(|| current.label());
        if label == "cpu" {
            label = "ab".into();
        }
        configs.push(Config {
            label,
            baseline,
            current,
            env: env.to_vec(),
        });
    }
    configs
}

/// `dto speedup`'s configurations: cpu, then each of `imps` against itself (default every
/// built-in kernel this CPU has; cpu itself is not repeated).
pub fn speedup_configs(imps: Vec<ImplSpec>, env: &[(String, String)]) -> Vec<Config> {
    let imps = if imps.is_empty() {
        Kernel::ALL
            .into_iter()
            .filter(|k| k.available().is_ok())
            .map(ImplSpec::Kernel)
            .collect()
    } else {
        imps
    };
    let mut configs = vec![Config::cpu(env)];
    for i in imps.into_iter().filter(|i| *i != ImplSpec::Cpu) {
        configs.push(Config {
            label: i.label(),
            baseline: i.clone(),
            current: i,
            env: env.to_vec(),
        });
    }
    configs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_the_guide() {
        assert_eq!(BENCHES.len(), 17);
        let refs: Vec<&str> = BENCHES
            .iter()
            .filter(|b| b.reference_only)
            .map(|b| b.name)
            .collect();
        assert_eq!(refs, ["memcpy_4k", "memcpy_8k"]);
        assert_eq!(find("memcpy_1m_pf50").unwrap().pf_pct, 50);
        assert_eq!(find("memcmp_128k").unwrap().size, 128 * 1024);
    }

    #[test]
    fn page_kinds_are_spelled_as_on_the_command_line() {
        for (k, name) in [(PageKind::Small, "4k"), (PageKind::Huge, "2m")] {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<PageKind>(&json).unwrap(), k);
            assert_eq!((k.short(), k.to_string()), (name, name.to_string()));
        }
    }

    #[test]
    fn ab_measures_cpu_first_unless_told_not_to() {
        let k = ImplSpec::Kernel(Kernel::Portable);
        let labels = |c: Vec<Config>| c.into_iter().map(|c| c.label).collect::<Vec<_>>();
        assert_eq!(
            labels(ab_configs(ImplSpec::Cpu, k.clone(), None, false, &[])),
            ["cpu", "portable"]
        );
        assert_eq!(
            labels(ab_configs(ImplSpec::Cpu, k.clone(), None, true, &[])),
            ["portable"]
        );
        assert_eq!(
            labels(ab_configs(ImplSpec::Cpu, ImplSpec::Cpu, None, true, &[])),
            ["cpu"]
        );
        let env = [("DTO_MIN_BYTES".to_string(), "4096".to_string())];
        let c = ab_configs(k.clone(), k, Some("cpu".into()), true, &env);
        assert_eq!((c[0].label.as_str(), c[0].env.as_slice()), ("ab", &env[..]));
    }

    #[test]
    fn speedup_puts_each_implementation_beside_cpu_once() {
        let k = ImplSpec::Kernel(Kernel::Portable);
        let c = speedup_configs(vec![ImplSpec::Cpu, k.clone()], &[]);
        let rows: Vec<(&str, bool)> = c.iter().map(|c| (c.label.as_str(), c.is_a_a())).collect();
        assert_eq!(rows, [("cpu", true), ("portable", true)]);
        let all = speedup_configs(Vec::new(), &[]);
        assert!(
            all.iter().any(|c| c.current == k),
            "the portable kernel runs anywhere"
        );
    }

    #[test]
    fn selection() {
        assert_eq!(select(&[], true).unwrap().len(), 4);
        assert_eq!(select(&[], false).unwrap().len(), 17);
        let one = select(&["memcpy_64k".into()], true).unwrap();
        assert_eq!(one[0].name, "memcpy_64k");
        assert_eq!(
            select(&["memcpy_4k,memset_1m".into()], false)
                .unwrap()
                .len(),
            2
        );
        assert!(
            select(&["memcpy_3k".into()], false)
                .unwrap_err()
                .contains("unknown")
        );
    }
}
