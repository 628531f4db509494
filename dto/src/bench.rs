//! The guide's benchmark table, page configurations and the A/B configurations a run measures.

use serde::{Deserialize, Serialize};

use crate::impls::ImplSpec;

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
