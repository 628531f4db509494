//! CPU, cluster and cache topology read from sysfs under a configurable root.
//!
//! Clusters are what per-cluster aggregation sums over, so they are chosen from the strongest
//! evidence sysfs offers, in this order: cpufreq policies (`related_cpus`: one frequency domain
//! per cluster on phones), `cpu_capacity` (big.LITTLE capacities), `topology/cluster_id` (when it
//! groups more than SMT siblings), the physical package (sockets), else one cluster. A source
//! that does not group anything (one policy per CPU, equal capacities) gives way to the next.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cpulist::{format_cpu_list, parse_cpu_list};
use crate::size::parse_size;

/// Environment variable naming an alternative sysfs root (for tests and captured trees).
pub const SYSFS_ROOT_ENV: &str = "BENCHMP_SYSFS_ROOT";

/// Where the cluster partition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClusterSource {
    /// cpufreq policies' `related_cpus`.
    CpufreqPolicy,
    /// Equal `cpu_capacity` values.
    CpuCapacity,
    /// `topology/cluster_id`.
    ClusterId,
    /// `topology/physical_package_id`.
    Package,
    /// No evidence: every CPU in one cluster.
    Single,
}

/// One cache as sysfs describes it (`cpuN/cache/indexM`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    /// 1 for L1, 2 for L2, …
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Coherency line size in bytes (0 when unknown).
    pub line_bytes: u32,
    /// Associativity (0 when unknown).
    pub ways: u32,
    /// CPUs sharing this cache.
    pub shared_cpus: Vec<usize>,
}

impl Cache {
    /// True for caches that hold data (Data or Unified).
    pub fn holds_data(&self) -> bool {
        self.kind != "Instruction"
    }
}

/// One online CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cpu {
    /// Kernel CPU number.
    pub id: usize,
    /// Index into [`Topology::clusters`].
    pub cluster: usize,
    /// `cpu_capacity` (1024 = the biggest core), when exposed.
    pub capacity: Option<u32>,
    /// cpufreq `cpuinfo_max_freq` in kHz, when cpufreq exists.
    pub max_freq_khz: Option<u64>,
    /// cpufreq `cpuinfo_min_freq` in kHz.
    pub min_freq_khz: Option<u64>,
    /// `topology/physical_package_id`.
    pub package: Option<i64>,
    /// `topology/core_id`.
    pub core_id: Option<i64>,
    /// `topology/cluster_id` (absent when the kernel reports -1/65535).
    pub cluster_id: Option<i64>,
    /// Indexes into [`Topology::caches`] of the caches this CPU uses, L1 first.
    pub caches: Vec<usize>,
}

/// A group of CPUs that per-cluster aggregation treats as alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// Position in [`Topology::clusters`], ordered by first CPU.
    pub index: usize,
    /// Member CPUs, ascending.
    pub cpus: Vec<usize>,
    /// Largest capacity among the members.
    pub capacity: Option<u32>,
    /// Largest maximum frequency among the members, kHz.
    pub max_freq_khz: Option<u64>,
}

/// The machine's CPUs, clusters and caches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// sysfs root it was read from.
    pub root: PathBuf,
    /// Online CPUs, ascending.
    pub cpus: Vec<Cpu>,
    /// Clusters, ordered by their first CPU.
    pub clusters: Vec<Cluster>,
    /// Which evidence decided the clusters.
    pub cluster_source: ClusterSource,
    /// Distinct caches (one entry per physical cache, whatever the number of sharers).
    pub caches: Vec<Cache>,
}

/// Topology could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// No online CPU could be found under the root.
    #[error("no online CPUs found under {0} (is it a sysfs tree?)")]
    NoCpus(PathBuf),
    /// The tree given with BENCHMP_SYSFS_ROOT cannot be read (bad input, exit status 2).
    #[error("BENCHMP_SYSFS_ROOT={}: not a sysfs tree this tool can read", .root.display())]
    GivenRoot {
        /// The root given.
        root: PathBuf,
        /// What went wrong under it.
        #[source]
        source: Box<TopologyError>,
    },
    /// The online list exists but cannot be parsed.
    #[error("{path}: {reason}")]
    BadFile {
        /// File that failed.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

fn read_trim(path: &Path) -> Option<String> {
    crate::sysfs::read_attr(path).ok()
}

fn read_num<T: std::str::FromStr>(path: &Path) -> Option<T> {
    read_trim(path)?.parse().ok()
}

impl Topology {
    /// Reads the topology of this machine (sysfs at `/sys`, or `$BENCHMP_SYSFS_ROOT`).
    pub fn detect() -> Result<Topology, TopologyError> {
        match std::env::var_os(SYSFS_ROOT_ENV) {
            Some(root) => {
                let root = PathBuf::from(root);
                Topology::from_root(&root).map_err(|e| TopologyError::GivenRoot {
                    root,
                    source: Box::new(e),
                })
            }
            None => Topology::from_root(Path::new("/sys")),
        }
    }

    /// Reads the topology from a sysfs tree rooted at `root` (the folder holding `devices/`).
    pub fn from_root(root: &Path) -> Result<Topology, TopologyError> {
        let cpu_dir = root.join("devices/system/cpu");
        let online = online_cpus(&cpu_dir)?;
        if online.is_empty() {
            return Err(TopologyError::NoCpus(root.to_path_buf()));
        }

        let mut caches: Vec<Cache> = Vec::new();
        let mut cpus: Vec<Cpu> = Vec::new();
        for &id in &online {
            let dir = cpu_dir.join(format!("cpu{id}"));
            let topo = dir.join("topology");
            let cluster_id =
                read_num::<i64>(&topo.join("cluster_id")).filter(|&v| v >= 0 && v != 65535);
            let mut own = Vec::new();
            for c in read_caches(&dir.join("cache"), id) {
                let idx = match caches.iter().position(|e| {
                    e.level == c.level && e.kind == c.kind && e.shared_cpus == c.shared_cpus
                }) {
                    Some(i) => i,
                    None => {
                        caches.push(c);
                        caches.len() - 1
                    }
                };
                own.push(idx);
            }
            own.sort_by_key(|&i| (caches[i].level, caches[i].kind.clone()));
            cpus.push(Cpu {
                id,
                cluster: 0,
                capacity: read_num(&dir.join("cpu_capacity")),
                max_freq_khz: read_num(&dir.join("cpufreq/cpuinfo_max_freq")),
                min_freq_khz: read_num(&dir.join("cpufreq/cpuinfo_min_freq")),
                package: read_num::<i64>(&topo.join("physical_package_id")).filter(|&v| v >= 0),
                core_id: read_num(&topo.join("core_id")),
                cluster_id,
                caches: own,
            });
        }

        let (groups, source) = choose_clusters(&cpu_dir, &cpus);
        let mut clusters: Vec<Cluster> = groups
            .into_iter()
            .map(|members| Cluster {
                index: 0,
                capacity: members
                    .iter()
                    .filter_map(|&id| cpus.iter().find(|c| c.id == id)?.capacity)
                    .max(),
                max_freq_khz: members
                    .iter()
                    .filter_map(|&id| cpus.iter().find(|c| c.id == id)?.max_freq_khz)
                    .max(),
                cpus: members,
            })
            .collect();
        clusters.sort_by_key(|c| c.cpus[0]);
        for (i, cl) in clusters.iter_mut().enumerate() {
            cl.index = i;
            for id in &cl.cpus {
                if let Some(c) = cpus.iter_mut().find(|c| c.id == *id) {
                    c.cluster = i;
                }
            }
        }
        Ok(Topology {
            root: root.to_path_buf(),
            cpus,
            clusters,
            cluster_source: source,
            caches,
        })
    }

    /// Online CPU numbers, ascending.
    pub fn online(&self) -> Vec<usize> {
        self.cpus.iter().map(|c| c.id).collect()
    }

    /// The CPU with kernel number `id`, if online.
    pub fn cpu(&self, id: usize) -> Option<&Cpu> {
        self.cpus.iter().find(|c| c.id == id)
    }

    /// Cluster index of an online CPU (cluster 0 for an unknown CPU).
    pub fn cluster_of(&self, id: usize) -> usize {
        self.cpu(id).map(|c| c.cluster).unwrap_or(0)
    }

    /// Data-holding caches seen by `cpu` (or by the first CPU), L1 first.
    pub fn data_caches(&self, cpu: Option<usize>) -> Vec<&Cache> {
        let c = cpu.and_then(|id| self.cpu(id)).or(self.cpus.first());
        c.map(|c| {
            c.caches
                .iter()
                .map(|&i| &self.caches[i])
                .filter(|k| k.holds_data())
                .collect()
        })
        .unwrap_or_default()
    }

    /// Largest data cache seen by `cpu` in bytes (the last level), if any.
    pub fn last_level_cache_bytes(&self, cpu: Option<usize>) -> Option<u64> {
        self.data_caches(cpu).iter().map(|c| c.size_bytes).max()
    }

    /// One-line description, e.g. `2 clusters (cpufreq_policy): 0-3 | 4-7`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .clusters
            .iter()
            .map(|c| format_cpu_list(&c.cpus))
            .collect();
        format!(
            "{} CPUs, {} cluster{} ({}): {}",
            self.cpus.len(),
            self.clusters.len(),
            if self.clusters.len() == 1 { "" } else { "s" },
            serde_json::to_value(self.cluster_source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            parts.join(" | ")
        )
    }
}

fn online_cpus(cpu_dir: &Path) -> Result<Vec<usize>, TopologyError> {
    let online = cpu_dir.join("online");
    if let Some(text) = read_trim(&online) {
        return parse_cpu_list(&text).map_err(|e| TopologyError::BadFile {
            path: online,
            reason: e.to_string(),
        });
    }
    // No online list: every cpuN folder counts.
    let mut v = Vec::new();
    if let Ok(rd) = fs::read_dir(cpu_dir) {
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if let Some(n) = name.strip_prefix("cpu")
                && let Ok(id) = n.parse::<usize>()
            {
                v.push(id);
            }
        }
    }
    v.sort_unstable();
    Ok(v)
}

fn read_caches(cache_dir: &Path, cpu: usize) -> Vec<Cache> {
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(cache_dir) else {
        return out;
    };
    let mut dirs: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index"))
        })
        .collect();
    dirs.sort();
    for d in dirs {
        let (Some(level), Some(kind)) = (
            read_num::<u32>(&d.join("level")),
            read_trim(&d.join("type")),
        ) else {
            continue;
        };
        let size_bytes = read_trim(&d.join("size"))
            .and_then(|s| parse_size(&s).ok())
            .unwrap_or(0);
        let shared_cpus = read_trim(&d.join("shared_cpu_list"))
            .and_then(|s| parse_cpu_list(&s).ok())
            .unwrap_or_else(|| vec![cpu]);
        out.push(Cache {
            level,
            kind,
            size_bytes,
            line_bytes: read_num(&d.join("coherency_line_size")).unwrap_or(0),
            ways: read_num(&d.join("ways_of_associativity")).unwrap_or(0),
            shared_cpus,
        });
    }
    out
}

/// Groups CPUs by a key; CPUs without a key make the source unusable (None).
fn group_by<K: Ord>(cpus: &[Cpu], key: impl Fn(&Cpu) -> Option<K>) -> Option<Vec<Vec<usize>>> {
    let mut m: BTreeMap<K, Vec<usize>> = BTreeMap::new();
    for c in cpus {
        m.entry(key(c)?).or_default().push(c.id);
    }
    Some(m.into_values().collect())
}

fn choose_clusters(cpu_dir: &Path, cpus: &[Cpu]) -> (Vec<Vec<usize>>, ClusterSource) {
    let n = cpus.len();
    let online: Vec<usize> = cpus.iter().map(|c| c.id).collect();

    // 1. cpufreq policies: informative unless every CPU is its own policy.
    let policy = group_by(cpus, |c| {
        let text = read_trim(&cpu_dir.join(format!("cpu{}/cpufreq/related_cpus", c.id)))?;
        let mut related = parse_cpu_list(&text).ok()?;
        related.retain(|id| online.contains(id));
        Some(related)
    });
    if let Some(g) = policy
        && (n == 1 || g.len() < n)
    {
        return (g, ClusterSource::CpufreqPolicy);
    }

    // 2. Capacities: informative when they differ.
    if let Some(g) = group_by(cpus, |c| c.capacity)
        && g.len() > 1
    {
        return (g, ClusterSource::CpuCapacity);
    }

    // 3. cluster_id: informative when a cluster holds more than one core (not just SMT threads).
    if let Some(g) = group_by(cpus, |c| Some((c.package, c.cluster_id?)))
        && g.len() > 1
    {
        let multi_core = g.iter().any(|members| {
            let mut cores: Vec<Option<i64>> = members
                .iter()
                .filter_map(|id| cpus.iter().find(|c| c.id == *id))
                .map(|c| c.core_id)
                .collect();
            cores.sort_unstable();
            cores.dedup();
            cores.len() > 1
        });
        if multi_core {
            return (g, ClusterSource::ClusterId);
        }
    }

    // 4. Packages.
    if let Some(g) = group_by(cpus, |c| c.package) {
        return (g, ClusterSource::Package);
    }
    (vec![online], ClusterSource::Single)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Topology {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
            .join("sys");
        Topology::from_root(&root).unwrap()
    }

    fn cluster_cpus(t: &Topology) -> Vec<String> {
        t.clusters
            .iter()
            .map(|c| format_cpu_list(&c.cpus))
            .collect()
    }

    #[test]
    fn vm_two_cores_one_cluster() {
        let t = fixture("vm2");
        assert_eq!(t.online(), vec![0, 1]);
        assert_eq!(cluster_cpus(&t), vec!["0-1"]);
        assert_eq!(t.cluster_source, ClusterSource::Package);
        assert_eq!(t.cpus[0].capacity, Some(1024));
        assert_eq!(t.cpus[0].max_freq_khz, None);
        assert_eq!(t.cpus[0].cluster_id, None, "65535 means unknown");
        // L1d 48K, L1i 32K, L2 1M private, L3 32M shared: four distinct per CPU, 7 in all.
        assert_eq!(t.caches.len(), 7);
        let sizes: Vec<(u32, u64)> = t
            .data_caches(Some(1))
            .iter()
            .map(|c| (c.level, c.size_bytes))
            .collect();
        assert_eq!(sizes, vec![(1, 48 << 10), (2, 1 << 20), (3, 32 << 20)]);
        let l3 = t.data_caches(Some(0))[2];
        assert_eq!(l3.shared_cpus, vec![0, 1]);
        assert_eq!(l3.line_bytes, 64);
        assert_eq!(t.last_level_cache_bytes(None), Some(32 << 20));
    }

    #[test]
    fn phone_four_clusters_from_cpufreq() {
        let t = fixture("phone8");
        assert_eq!(t.online(), (0..8).collect::<Vec<_>>());
        assert_eq!(t.cluster_source, ClusterSource::CpufreqPolicy);
        assert_eq!(cluster_cpus(&t), vec!["0-1", "2-4", "5-6", "7"]);
        let caps: Vec<Option<u32>> = t.clusters.iter().map(|c| c.capacity).collect();
        assert_eq!(caps, vec![Some(325), Some(830), Some(880), Some(1024)]);
        let freqs: Vec<Option<u64>> = t.clusters.iter().map(|c| c.max_freq_khz).collect();
        assert_eq!(
            freqs,
            vec![Some(2265600), Some(2956800), Some(3148800), Some(3302400)]
        );
        assert_eq!(t.cluster_of(6), 2);
        // Little cores share an L2; the prime core has its own 2M L2; one L3 for all.
        let little: Vec<u64> = t
            .data_caches(Some(0))
            .iter()
            .map(|c| c.size_bytes)
            .collect();
        assert_eq!(little, vec![64 << 10, 512 << 10, 12 << 20]);
        let prime: Vec<u64> = t
            .data_caches(Some(7))
            .iter()
            .map(|c| c.size_bytes)
            .collect();
        assert_eq!(prime, vec![64 << 10, 2 << 20, 12 << 20]);
        assert_eq!(t.data_caches(Some(1))[1].shared_cpus, vec![0, 1]);
    }

    #[test]
    fn phone_without_cpufreq_falls_back_to_capacity() {
        let t = fixture("phone8-nocpufreq");
        assert_eq!(t.cluster_source, ClusterSource::CpuCapacity);
        assert_eq!(cluster_cpus(&t), vec!["0-1", "2-4", "5-6", "7"]);
    }

    #[test]
    fn server_two_sockets_from_package() {
        let t = fixture("server2s");
        assert_eq!(t.cpus.len(), 16);
        // Per-CPU cpufreq policies and per-core cluster_id say nothing about sockets.
        assert_eq!(t.cluster_source, ClusterSource::Package);
        assert_eq!(cluster_cpus(&t), vec!["0-3,8-11", "4-7,12-15"]);
        let l3 = t.data_caches(Some(5)).last().copied().unwrap();
        assert_eq!(l3.size_bytes, 30 << 20);
        assert_eq!(format_cpu_list(&l3.shared_cpus), "4-7,12-15");
        let l2 = t.data_caches(Some(9))[1];
        assert_eq!(l2.shared_cpus, vec![1, 9]);
        assert_eq!(t.cpus[0].max_freq_khz, Some(3500000));
    }

    #[test]
    fn missing_root_is_an_error() {
        let e = Topology::from_root(Path::new("/nonexistent/sysfs")).unwrap_err();
        assert!(e.to_string().contains("no online CPUs"), "{e}");
    }
}
