//! Where the pointer chain goes: lmbench's sequential and random ("thrash") layouts as a plan of
//! links `from → to` (byte offsets in the buffer), built without touching memory so it can be
//! checked exhaustively (spec lat_mem_rd.md §5; lmbench `stride_initialize`,
//! `thrash_initialize`, `words_initialize` in lib_mem.c).
//!
//! - Sequential: offset o points to o + stride, the last element back to 0: a forward ring
//!   hardware prefetchers follow easily.
//! - Random, size not a page multiple (lmbench's first branch): the elements are linked in the
//!   order of `words(m)`, the bit-reversed index. For an m that is not a power of two, `words`
//!   repeats entries, later links overwrite earlier ones, and the ring actually walked is
//!   shorter than m (e.g. 16 of 48 elements at 3K with stride 64). [`Rings::Lmbench`] keeps
//!   that so figures compare with lmbench's; [`Rings::Exact`] links a true permutation instead.
//! - Random, page-multiple size: pages are shuffled over the whole `maxlen` area, and each
//!   load goes to the next page in shuffled order at a slot that advances through the
//!   bit-reversed order once per lap, so no two consecutive loads share a page.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Bytes of one pointer (the chain's element).
pub const POINTER: usize = std::mem::size_of::<*const u8>();

/// lmbench's default stride: 512 / sizeof(pointer) = 64 bytes on 64-bit targets.
pub const DEFAULT_STRIDE: usize = 512 / POINTER;

/// Chain layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Forward constant-stride ring (lmbench's default).
    Sequential,
    /// Bit-reversed slots on shuffled pages (lmbench's `-t`).
    Random,
}

/// How random-mode rings are built when `words` repeats entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rings {
    /// As lmbench: repeated entries overwrite links and shorten the ring.
    Lmbench,
    /// One ring through every element (bit-reversed order, indices past the end skipped).
    Exact,
}

/// Everything that decides one chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Geometry {
    /// Array size walked, bytes (lmbench's `range`).
    pub range: usize,
    /// Distance between elements, bytes.
    pub stride: usize,
    /// Largest size of the sweep, bytes: the allocation and the area pages are drawn from.
    pub maxlen: usize,
    /// Page size used for the layout (lmbench's `getpagesize()`).
    pub pagesize: usize,
    /// Layout.
    pub mode: Mode,
    /// Ring construction in random mode.
    pub rings: Rings,
}

impl Geometry {
    /// Bytes to allocate: maxlen plus two pages, as lmbench.
    pub fn alloc_bytes(&self) -> usize {
        self.maxlen + 2 * self.pagesize
    }

    /// True when random mode uses the page-shuffling branch.
    pub fn page_multiple(&self) -> bool {
        self.range.is_multiple_of(self.pagesize)
    }
}

/// lmbench's `words_initialize(m, scale)`: entry i is the low b bits of i reversed, times
/// `scale`, with b = floor(log2 m) (0 for m ≤ 1). A permutation only when m is a power of two;
/// otherwise indices ≥ 2^b repeat earlier entries (m = 6 → 0, 2, 1, 3, 0, 2).
pub fn words(m: usize, scale: usize) -> Vec<usize> {
    let bits = if m <= 1 { 0 } else { m.ilog2() };
    (0..m).map(|i| reverse_low_bits(i, bits) * scale).collect()
}

/// A permutation of 0..m in bit-reversed order: the indices of the next power of two, each
/// reversed, keeping those below m (m = 6 → 0, 4, 2, 1, 5, 3), times `scale`. Equal to
/// [`words`] when m is a power of two.
pub fn exact_order(m: usize, scale: usize) -> Vec<usize> {
    if m == 0 {
        return Vec::new();
    }
    let bits = m.next_power_of_two().ilog2();
    (0..m.next_power_of_two())
        .map(|i| reverse_low_bits(i, bits))
        .filter(|&v| v < m)
        .map(|v| v * scale)
        .collect()
}

fn reverse_low_bits(i: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        i.reverse_bits() >> (usize::BITS - bits)
    }
}

/// The links of one chain, as offsets from the buffer start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// o → o + stride for o < range − stride, last → 0.
    Sequential {
        /// Array size.
        range: usize,
        /// Element distance.
        stride: usize,
    },
    /// `offsets[i] → offsets[i+1]`, last → `offsets[0]` (= 0). Written in order, so a repeated
    /// offset keeps its last link, as in lmbench.
    Words {
        /// Element offsets in link order.
        offsets: Vec<usize>,
    },
    /// For page j and slot t: `pages[j] + slots[(j+t) mod m] → pages[j+1] + slots[(j+t+1) mod m]`;
    /// the last page links to `pages[0] + slots[(t+1) mod m]`.
    Pages {
        /// Page offsets in visiting order (the first npages of a shuffle over maxlen).
        pages: Vec<usize>,
        /// In-page offsets in bit-reversed order.
        slots: Vec<usize>,
    },
}

impl Plan {
    /// The plan for `g`. Random page-multiple layouts shuffle the pages with `seed`; `None`
    /// keeps them in address order (same ring shape, for analysis).
    pub fn new(g: &Geometry, seed: Option<u64>) -> Plan {
        let order = |m: usize, scale: usize| match g.rings {
            Rings::Lmbench => words(m, scale),
            Rings::Exact => exact_order(m, scale),
        };
        match g.mode {
            Mode::Sequential => Plan::Sequential {
                range: g.range,
                stride: g.stride,
            },
            Mode::Random if !g.page_multiple() => Plan::Words {
                offsets: order(g.range / g.stride, g.stride),
            },
            Mode::Random => {
                let npages = g.range.div_ceil(g.pagesize);
                let all_pages = g.maxlen.div_ceil(g.pagesize).max(npages);
                let mut pages: Vec<usize> = (0..all_pages).map(|p| p * g.pagesize).collect();
                if let Some(seed) = seed {
                    fastrand::Rng::with_seed(seed).shuffle(&mut pages);
                }
                pages.truncate(npages);
                Plan::Pages {
                    pages,
                    slots: order(g.pagesize / g.stride, g.stride),
                }
            }
        }
    }

    /// Offset of the first load.
    pub fn start(&self) -> usize {
        match self {
            Plan::Sequential { .. } => 0,
            Plan::Words { offsets } => offsets.first().copied().unwrap_or(0),
            Plan::Pages { pages, slots } => pages[0] + slots[0],
        }
    }

    /// Elements the layout intends to visit (what lmbench's load count assumes).
    pub fn intended(&self) -> usize {
        match self {
            Plan::Sequential { range, stride } => range.div_ceil(*stride),
            Plan::Words { offsets } => offsets.len(),
            Plan::Pages { pages, slots } => pages.len() * slots.len(),
        }
    }

    /// Calls `link(from, to)` for every pointer to write, in lmbench's order (later writes to
    /// the same offset win). Pages mode goes page by page so the writes stay local.
    pub fn for_each_link(&self, mut link: impl FnMut(usize, usize)) {
        match self {
            Plan::Sequential { range, stride } => {
                let mut o = 0;
                while o + stride < *range {
                    link(o, o + stride);
                    o += stride;
                }
                link(o, 0);
            }
            Plan::Words { offsets } => {
                for w in offsets.windows(2) {
                    link(w[0], w[1]);
                }
                if let (Some(&last), Some(&first)) = (offsets.last(), offsets.first()) {
                    link(last, first);
                }
            }
            Plan::Pages { pages, slots } => {
                let m = slots.len();
                let last = pages.len() - 1;
                for (j, &page) in pages.iter().enumerate() {
                    for t in 0..m {
                        let from = page + slots[(j + t) % m];
                        let to = if j < last {
                            pages[j + 1] + slots[(j + t + 1) % m]
                        } else {
                            pages[0] + slots[(t + 1) % m]
                        };
                        link(from, to);
                    }
                }
            }
        }
    }

    /// Follows the links from the start until an offset repeats: the offsets walked, in
    /// order, and whether the walk closed on the start (a ring) rather than on a later element.
    pub fn walk(&self) -> Walk {
        let mut next: HashMap<usize, usize> = HashMap::new();
        self.for_each_link(|from, to| {
            next.insert(from, to);
        });
        let start = self.start();
        let mut order = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut o = start;
        while seen.insert(o) {
            order.push(o);
            match next.get(&o) {
                Some(&n) => o = n,
                None => {
                    return Walk {
                        order,
                        closed: false,
                        written: next.len(),
                    };
                }
            }
        }
        Walk {
            closed: o == start,
            order,
            written: next.len(),
        }
    }
}

/// The result of following a plan's links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walk {
    /// Offsets visited from the start, each once.
    pub order: Vec<usize>,
    /// True when the last link leads back to the start.
    pub closed: bool,
    /// Distinct offsets holding a link.
    pub written: usize,
}

/// Loads in one lap of the ring actually walked for `g`, and the elements intended: equal
/// except in lmbench-faithful random mode when `words` repeats entries. Page shuffling does
/// not change a ring's length, so pages are taken in address order here. `None` when the
/// ring would take too long to follow (faithful mode, odd stride, very large size).
pub fn ring_loads(g: &Geometry) -> (Option<usize>, usize) {
    const MAX_WALK: usize = 1 << 22;
    let plan = Plan::new(g, None);
    let intended = plan.intended();
    let exact = match &plan {
        Plan::Sequential { .. } => true,
        Plan::Words { offsets } => distinct(offsets),
        Plan::Pages { slots, .. } => distinct(slots),
    };
    if exact {
        return (Some(intended), intended);
    }
    if plan.intended() > MAX_WALK {
        return (None, intended);
    }
    let w = plan.walk();
    (w.closed.then_some(w.order.len()), intended)
}

fn distinct(v: &[usize]) -> bool {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.windows(2).all(|w| w[0] != w[1])
}

/// lmbench's loads per benchmark call: 100 × (range / (stride × 100) + 1).
pub fn lmbench_count(range: usize, stride: usize) -> usize {
    100 * (range / (stride * 100) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: usize = 4096;

    fn geom(range: usize, stride: usize, mode: Mode, rings: Rings) -> Geometry {
        Geometry {
            range,
            stride,
            maxlen: 1 << 20,
            pagesize: PAGE,
            mode,
            rings,
        }
    }

    /// Every intended element is visited exactly once in one closed ring, and nothing else is
    /// linked.
    fn assert_full_ring(plan: &Plan, what: &str) {
        let w = plan.walk();
        assert!(w.closed, "{what}: not a ring");
        assert_eq!(w.order.len(), plan.intended(), "{what}: ring length");
        assert_eq!(w.written, plan.intended(), "{what}: stray links");
        let mut sorted = w.order.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), w.order.len(), "{what}: repeated element");
    }

    #[test]
    fn words_match_lmbench() {
        assert_eq!(words(8, 1), vec![0, 4, 2, 6, 1, 5, 3, 7]);
        assert_eq!(words(6, 1), vec![0, 2, 1, 3, 0, 2]);
        assert_eq!(words(1, 64), vec![0]);
        assert_eq!(words(2, 64), vec![0, 64]);
        assert_eq!(words(4, 10), vec![0, 20, 10, 30]);
        assert_eq!(words(5, 1), vec![0, 2, 1, 3, 0]);
    }

    #[test]
    fn exact_order_is_a_permutation() {
        assert_eq!(exact_order(6, 1), vec![0, 4, 2, 1, 5, 3]);
        for m in 1..300 {
            let mut v = exact_order(m, 1);
            assert_eq!(v[0], 0);
            v.sort_unstable();
            assert_eq!(v, (0..m).collect::<Vec<_>>(), "m = {m}");
            if m.is_power_of_two() {
                assert_eq!(exact_order(m, 3), words(m, 3));
            }
        }
    }

    #[test]
    fn sequential_rings_are_full_and_forward() {
        for stride in [8, 16, 24, 64, 100, 128, 4096] {
            for range in [512, 1000, 3072, 4096, 6144, 36864, 65536, 100_000] {
                if range < stride {
                    continue;
                }
                let g = geom(range, stride, Mode::Sequential, Rings::Lmbench);
                let plan = Plan::new(&g, Some(1));
                assert_full_ring(&plan, &format!("seq {range}/{stride}"));
                let order = plan.walk().order;
                assert_eq!(order.len(), range.div_ceil(stride));
                assert!(order.windows(2).all(|w| w[1] == w[0] + stride));
                assert_eq!(ring_loads(&g), (Some(order.len()), order.len()));
            }
        }
    }

    /// The spec's table of ring lengths for sizes that are not page multiples (measured on
    /// lmbench): reachable elements / m.
    #[test]
    fn faithful_rings_reproduce_lmbench_lengths() {
        // (range, (ring, m) at stride 64, (ring, m) at stride 16)
        type Row = (usize, (usize, usize), (usize, usize));
        let table: [Row; 11] = [
            (512, (8, 8), (32, 32)),
            (1024, (16, 16), (64, 64)),
            (2048, (32, 32), (128, 128)),
            (3072, (16, 48), (64, 192)),
            (6144, (32, 96), (128, 384)),
            (10240, (32, 160), (128, 640)),
            (14336, (96, 224), (384, 896)),
            (18432, (32, 288), (128, 1152)),
            (22528, (96, 352), (384, 1408)),
            (26624, (160, 416), (640, 1664)),
            (30720, (224, 480), (896, 1920)),
        ];
        for (range, s64, s16) in table {
            for (stride, (ring, m)) in [(64, s64), (16, s16)] {
                let g = geom(range, stride, Mode::Random, Rings::Lmbench);
                assert!(!g.page_multiple());
                let plan = Plan::new(&g, Some(7));
                assert_eq!(plan.intended(), m, "{range}/{stride}");
                let w = plan.walk();
                assert!(w.closed, "{range}/{stride} must still be a ring");
                assert_eq!(w.order.len(), ring, "{range}/{stride}");
                assert_eq!(ring_loads(&g), (Some(ring), m));
            }
        }
    }

    #[test]
    fn exact_rings_are_full_where_lmbench_shortens() {
        for stride in [8, 16, 64, 96, 128] {
            for range in [512, 1024, 3072, 6144, 10240, 14336, 30720, 5000, 100_001] {
                if range < stride {
                    continue;
                }
                let g = geom(range, stride, Mode::Random, Rings::Exact);
                if g.page_multiple() {
                    continue;
                }
                let plan = Plan::new(&g, Some(3));
                assert_eq!(plan.intended(), range / stride);
                assert_full_ring(&plan, &format!("exact {range}/{stride}"));
                assert_eq!(ring_loads(&g), (Some(range / stride), range / stride));
            }
        }
    }

    #[test]
    fn page_rings_are_full_and_change_page_every_load() {
        for rings in [Rings::Lmbench, Rings::Exact] {
            for stride in [8, 16, 64, 128, 1024, 4096] {
                for range in [4096, 8192, 32768, 65536, 40960] {
                    let g = geom(range, stride, Mode::Random, rings);
                    assert!(g.page_multiple());
                    let plan = Plan::new(&g, Some(range as u64 ^ stride as u64));
                    let what = format!("{rings:?} {range}/{stride}");
                    assert_full_ring(&plan, &what);
                    assert_eq!(plan.intended(), (range / PAGE) * (PAGE / stride), "{what}");
                    let order = plan.walk().order;
                    if range > PAGE {
                        for pair in order.windows(2) {
                            assert_ne!(pair[0] / PAGE, pair[1] / PAGE, "{what}: same page");
                        }
                        assert_ne!(
                            order[order.len() - 1] / PAGE,
                            order[0] / PAGE,
                            "{what}: wrap"
                        );
                    }
                    // Every page of the range is used, and pages come from all of maxlen.
                    let mut pages: Vec<usize> = order.iter().map(|o| o / PAGE).collect();
                    pages.sort_unstable();
                    pages.dedup();
                    assert_eq!(pages.len(), range / PAGE, "{what}");
                    assert!(order.iter().all(|&o| o + POINTER <= g.maxlen + PAGE));
                }
            }
        }
    }

    #[test]
    fn one_page_walks_the_bit_reversed_slots() {
        let g = geom(PAGE, 64, Mode::Random, Rings::Lmbench);
        let plan = Plan::new(&g, None);
        let order = plan.walk().order;
        assert_eq!(&order[..5], &[0, 2048, 1024, 3072, 512]);
    }

    #[test]
    fn pages_are_shuffled_over_maxlen() {
        let g = geom(8 * PAGE, 64, Mode::Random, Rings::Lmbench);
        let a = Plan::new(&g, Some(1));
        let b = Plan::new(&g, Some(2));
        let Plan::Pages { pages, .. } = &a else {
            panic!("page plan expected")
        };
        assert_eq!(pages.len(), 8);
        assert!(pages.iter().all(|p| p % PAGE == 0 && *p < g.maxlen));
        // With 256 pages to draw from, eight in address order would be a broken shuffle.
        assert!(pages.windows(2).any(|w| w[1] != w[0] + PAGE));
        assert_ne!(a, b, "the seed changes the page order");
        assert_eq!(a, Plan::new(&g, Some(1)), "and fixes it");
    }

    #[test]
    fn odd_stride_pages_shorten_only_in_faithful_mode() {
        // 4096 / 96 = 42 slots: words(42) repeats, so lmbench's ring is shorter.
        let f = geom(2 * PAGE, 96, Mode::Random, Rings::Lmbench);
        let (ring, intended) = ring_loads(&f);
        assert_eq!(intended, 84);
        assert!(ring.unwrap() < intended);
        let e = Geometry {
            rings: Rings::Exact,
            ..f
        };
        assert_full_ring(&Plan::new(&e, Some(5)), "exact 8K/96");
        assert_eq!(ring_loads(&e), (Some(84), 84));
    }

    #[test]
    fn every_link_stays_inside_the_allocation() {
        for mode in [Mode::Sequential, Mode::Random] {
            for range in [512, 3072, 4096, 1 << 20] {
                let g = Geometry {
                    maxlen: 1 << 20,
                    ..geom(range, 64, mode, Rings::Lmbench)
                };
                let plan = Plan::new(&g, Some(9));
                plan.for_each_link(|from, to| {
                    assert!(from + POINTER <= g.alloc_bytes());
                    assert!(to + POINTER <= g.alloc_bytes());
                });
            }
        }
    }

    #[test]
    fn lmbench_count_formula() {
        assert_eq!(lmbench_count(512, 64), 100);
        assert_eq!(lmbench_count(1 << 20, 64), 16_400);
        assert_eq!(lmbench_count(6400, 64), 200);
    }
}
