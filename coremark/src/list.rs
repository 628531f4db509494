//! CoreMark 1.0's linked-list workload: find, reverse and relink nodes, merge-sort by a
//! data-dependent key (whose comparisons run the matrix and state workloads), remove and
//! restore one item, merge-sort back by index, and CRC the results.
//!
//! The reference keeps list cells and their data records in two memory blocks and lets
//! cells exchange records. A context stores them the same way, as two compact arenas
//! ([`List`]: `nodes`, `infos`) linked by 32-bit indices, so nothing depends on pointer
//! size. For the duration of a run ([`List::run`]) the arenas are turned into cells that
//! link to each other by reference ([`Cells`]); the hot loops (find, reverse, merge) then
//! chase links exactly as the reference chases pointers, with no index arithmetic or
//! bounds checks on the dependent-load path, and the result is written back afterwards.
//! Every comparison and its side effects happen in the reference's order.

use std::cell::Cell;

use crate::calc::Kernels;
use crate::crc::crc16;

/// "No node" in the stored form (the reference's NULL).
const NIL: u32 = u32::MAX;

/// A stored list cell: the next cell and the data record it currently owns.
#[derive(Debug, Clone, Copy)]
struct Node {
    next: u32,
    info: u32,
}

/// A stored data record: `data16` holds the original byte (high) and a cached 7-bit result
/// (low, valid when bit 7 is set); `idx` records the initial order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Info {
    pub(crate) data16: i16,
    pub(crate) idx: i16,
}

/// The list of one context, in stored (index-linked) form.
#[derive(Debug, Clone)]
pub(crate) struct List {
    nodes: Vec<Node>,
    infos: Vec<Info>,
    /// The head returned by initialisation; every benchmark call starts from it.
    head: u32,
}

/// Cells (and records) that fit in `size` bytes: size / 20 − 2. The reference fixes 20
/// bytes per item (16 for a cell, 4 for a record) whatever the pointer size.
pub(crate) fn capacity(size: u32) -> u32 {
    (size / 20).saturating_sub(2)
}

/// A record while running: its fields are updated in place through shared links.
#[derive(Debug)]
pub(crate) struct CellInfo {
    data16: Cell<i16>,
    idx: Cell<i16>,
}

/// A cell while running: links to the next cell and to the record it owns.
#[derive(Debug)]
pub(crate) struct CellNode<'a> {
    next: Cell<Option<&'a CellNode<'a>>>,
    info: Cell<&'a CellInfo>,
}

type Link<'a> = Option<&'a CellNode<'a>>;

/// The list while running: its head (the reference's `res->list`, never updated) and all
/// its cells (to turn links back into indices).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cells<'a> {
    head: &'a CellNode<'a>,
    nodes: &'a [CellNode<'a>],
}

impl<'a> Cells<'a> {
    /// Index of `node` among the cells (all links point into `nodes`).
    fn index_of(&self, node: &CellNode<'a>) -> u32 {
        let offset = std::ptr::from_ref(node).addr() - self.nodes.as_ptr().addr();
        (offset / std::mem::size_of::<CellNode<'a>>()) as u32
    }
}

impl List {
    /// Builds the list for `size` bytes and `seed` (seed1), then sorts it by index.
    /// Needs `capacity(size) >= 4` (at least one data item between head and tail).
    pub(crate) fn new(size: u32, seed: i16) -> List {
        let cap = capacity(size);
        debug_assert!(cap >= 4, "list needs at least one data item");
        let used = cap.saturating_sub(1) as usize;
        let mut list = List {
            nodes: Vec::with_capacity(used),
            infos: Vec::with_capacity(used),
            head: 0,
        };
        list.nodes.push(Node { next: NIL, info: 0 });
        list.infos.push(Info {
            data16: 0x8080u16 as i16,
            idx: 0,
        });
        // Insertion takes the next free slot k and succeeds only while k + 1 < capacity.
        let insert = |list: &mut List, info: Info| {
            let k = list.nodes.len() as u32;
            if k + 1 >= cap {
                return;
            }
            list.nodes.push(Node {
                next: list.nodes[0].next,
                info: k,
            });
            list.infos.push(info);
            list.nodes[0].next = k;
        };
        insert(
            &mut list,
            Info {
                data16: -1,
                idx: 0x7fff,
            },
        );
        let seed_bits = i32::from(seed) as u32;
        for i in 0..cap {
            let pattern = ((seed_bits ^ i) as u16) & 0xf;
            let dat = (pattern << 3) | (i & 7) as u16;
            insert(
                &mut list,
                Info {
                    data16: ((dat << 8) | dat) as i16,
                    idx: 0,
                },
            );
        }

        // Index the items (not the tail): the first fifth in order, the rest pseudo-random
        // but placed after them by the 0x3fff mask and the (i & 7) << 8 term.
        let mut cur = list.nodes[0].next;
        let mut i: u32 = 1;
        while list.nodes[cur as usize].next != NIL {
            let info = list.nodes[cur as usize].info as usize;
            if i < cap / 5 {
                list.infos[info].idx = i as i16;
                i += 1;
            } else {
                let pattern = (i ^ seed_bits) as u16;
                i += 1;
                list.infos[info].idx = (0x3fff & ((((i & 7) << 8) as u16) | pattern)) as i16;
            }
            cur = list.nodes[cur as usize].next;
        }
        // Sort by index from cell 0; the cell that ends up first is the head for good.
        list.head = list.run_from(0, |cells| cells.index_of(sort_by_idx(Some(cells.head))));
        list
    }

    /// Runs `f` on the linked form of the list (from its head) and stores the result back.
    pub(crate) fn run<R>(&mut self, f: impl for<'a> FnOnce(Cells<'a>) -> R) -> R {
        self.run_from(self.head, f)
    }

    /// Links the stored cells by reference, runs `f` with cell `start` as head, then stores
    /// links, record ownership and record contents back as indices and values.
    fn run_from<R>(&mut self, start: u32, f: impl for<'a> FnOnce(Cells<'a>) -> R) -> R {
        let infos: Vec<CellInfo> = self
            .infos
            .iter()
            .map(|i| CellInfo {
                data16: Cell::new(i.data16),
                idx: Cell::new(i.idx),
            })
            .collect();
        let nodes: Vec<CellNode<'_>> = self
            .nodes
            .iter()
            .map(|n| CellNode {
                next: Cell::new(None),
                info: Cell::new(&infos[n.info as usize]),
            })
            .collect();
        for (cell, stored) in nodes.iter().zip(&self.nodes) {
            cell.next.set(nodes.get(stored.next as usize));
        }
        let cells = Cells {
            head: &nodes[start as usize],
            nodes: &nodes,
        };
        let result = f(cells);

        let info_base = infos.as_ptr().addr();
        for (stored, cell) in self.nodes.iter_mut().zip(&nodes) {
            stored.next = cell.next.get().map_or(NIL, |n| cells.index_of(n));
            let info = std::ptr::from_ref(cell.info.get()).addr() - info_base;
            stored.info = (info / std::mem::size_of::<CellInfo>()) as u32;
        }
        for (stored, cell) in self.infos.iter_mut().zip(&infos) {
            stored.data16 = cell.data16.get();
            stored.idx = cell.idx.get();
        }
        result
    }

    /// Records of the cells in list order from the head, for tests.
    #[cfg(test)]
    fn records(&self) -> Vec<Info> {
        let mut out = Vec::new();
        let mut cur = self.head;
        while cur != NIL {
            out.push(self.infos[self.nodes[cur as usize].info as usize]);
            cur = self.nodes[cur as usize].next;
        }
        out
    }
}

impl<'a> Cells<'a> {
    /// One list benchmark call (`core_bench_list`): finds `seed3` keys starting at
    /// `finder_idx` (by index if ≥ 0, else by data byte), sorts by data when
    /// `finder_idx > 0`, removes and restores one item, sorts back by index, and returns the
    /// CRC of what it saw. The list ends in the order it started.
    pub(crate) fn bench(self, finder_idx: i16, seed3: i16, work: &mut Kernels) -> u16 {
        let mut r: u16 = 0;
        let mut found: u16 = 0;
        let mut missed: u16 = 0;
        let mut list: &CellNode<'a> = self.head;
        let mut key_idx = finder_idx;
        let mut key_data: i16 = 0;

        for i in 0..seed3.max(0) {
            key_data = i & 0xff;
            let this = find(Some(list), key_idx, key_data);
            list = reverse(list);
            match this {
                None => {
                    missed = missed.wrapping_add(1);
                    let d = data_of(second(list));
                    r = r.wrapping_add(((d >> 8) & 1) as u16);
                }
                Some(this) => {
                    found = found.wrapping_add(1);
                    let d = data_of(this);
                    if d & 1 != 0 {
                        r = r.wrapping_add(((d >> 9) & 1) as u16);
                    }
                    if let Some(moved) = this.next.get() {
                        this.next.set(moved.next.get());
                        moved.next.set(list.next.get());
                        list.next.set(Some(moved));
                    }
                }
            }
            if key_idx >= 0 {
                key_idx = key_idx.wrapping_add(1);
            }
        }
        r = r.wrapping_add(found.wrapping_mul(4).wrapping_sub(missed));

        if finder_idx > 0 {
            list = sort_by_data(Some(list), work);
        }
        let removed = remove(second(list));

        // CRC from the key's position (or the second cell) to the end, with the head's data
        // each time: the reference's loop really reads the head, and so does this.
        let mut cur = find(Some(list), key_idx, key_data).or(list.next.get());
        while let Some(node) = cur {
            r = crc16(data_of(list), r);
            cur = node.next.get();
        }

        undo_remove(removed, second(list));
        list = sort_by_idx(Some(list));

        let mut cur = list.next.get();
        while let Some(node) = cur {
            r = crc16(data_of(list), r);
            cur = node.next.get();
        }
        r
    }
}

#[inline]
fn data_of(node: &CellNode<'_>) -> i16 {
    node.info.get().data16.get()
}

/// The cell after `node`. The list always has a head, a tail and at least one item
/// between them, so the cells this is used on always have a successor.
#[inline]
fn second<'a>(node: &CellNode<'a>) -> &'a CellNode<'a> {
    node.next
        .get()
        .expect("the list always has at least three cells")
}

/// First cell from `list` whose record has index `key_idx` (when ≥ 0) or whose low data
/// byte equals `key_data` (otherwise).
#[inline]
fn find<'a>(list: Link<'a>, key_idx: i16, key_data: i16) -> Link<'a> {
    let mut cur = list;
    if key_idx >= 0 {
        while let Some(node) = cur {
            if node.info.get().idx.get() == key_idx {
                break;
            }
            cur = node.next.get();
        }
    } else {
        while let Some(node) = cur {
            if node.info.get().data16.get() & 0xff == key_data {
                break;
            }
            cur = node.next.get();
        }
    }
    cur
}

/// Reverses the whole list starting at `list`; returns the new first cell.
#[inline]
fn reverse<'a>(list: &'a CellNode<'a>) -> &'a CellNode<'a> {
    let mut prev: Link<'a> = None;
    let mut cur = list;
    loop {
        let next = cur.next.get();
        cur.next.set(prev);
        prev = Some(cur);
        match next {
            Some(n) => cur = n,
            None => return cur,
        }
    }
}

/// Unlinks the cell after `item`, after swapping records with it so `item` keeps its
/// successor's record; returns the unlinked cell. The tail sentinel guarantees a successor.
fn remove<'a>(item: &'a CellNode<'a>) -> &'a CellNode<'a> {
    let ret = second(item);
    let tmp = item.info.get();
    item.info.set(ret.info.get());
    ret.info.set(tmp);
    item.next.set(ret.next.get());
    ret.next.set(None);
    ret
}

/// Reverses [`remove`]: swaps the records back and relinks `removed` after `modified`.
fn undo_remove<'a>(removed: &'a CellNode<'a>, modified: &'a CellNode<'a>) {
    let tmp = removed.info.get();
    removed.info.set(modified.info.get());
    modified.info.set(tmp);
    removed.next.set(modified.next.get());
    modified.next.set(Some(removed));
}

/// Merge sort by `idx` (`cmp_idx` without results): each comparison first restores
/// both records' low data byte from the high byte.
fn sort_by_idx<'a>(list: Link<'a>) -> &'a CellNode<'a> {
    let restore = |d: i16| ((d as u16 & 0xff00) | ((d as u16) >> 8)) as i16;
    mergesort(list, |a, b| {
        a.data16.set(restore(a.data16.get()));
        b.data16.set(restore(b.data16.get()));
        i32::from(a.idx.get()) - i32::from(b.idx.get())
    })
}

/// Merge sort by the computed data value (`cmp_complex`): `calc_func(a)` then
/// `calc_func(b)`, which may run the matrix or state workload and update the CRCs.
fn sort_by_data<'a>(list: Link<'a>, work: &mut Kernels) -> &'a CellNode<'a> {
    mergesort(list, |a, b| {
        let va = work.calc(&a.data16);
        let vb = work.calc(&b.data16);
        i32::from(va) - i32::from(vb)
    })
}

/// Bottom-up merge sort of the singly linked list starting at `list` (not empty), exactly
/// as the reference performs it: same runs, same comparisons in the same order; stable.
/// `cmp` receives the two cells' records. Returns the new first cell.
#[inline]
fn mergesort<'a, F: FnMut(&CellInfo, &CellInfo) -> i32>(
    list: Link<'a>,
    mut cmp: F,
) -> &'a CellNode<'a> {
    let mut list = list;
    let mut insize: u32 = 1;
    loop {
        let mut p = list;
        list = None;
        let mut tail: Link<'a> = None;
        let mut nmerges: u32 = 0;
        while let Some(p_start) = p {
            nmerges += 1;
            let mut q = Some(p_start);
            let mut psize: u32 = 0;
            for _ in 0..insize {
                psize += 1;
                q = q.and_then(|n| n.next.get());
                if q.is_none() {
                    break;
                }
            }
            let mut qsize = insize;
            loop {
                let e = match (p, q) {
                    (Some(pn), Some(qn)) if psize > 0 && qsize > 0 => {
                        if cmp(pn.info.get(), qn.info.get()) <= 0 {
                            p = pn.next.get();
                            psize -= 1;
                            pn
                        } else {
                            q = qn.next.get();
                            qsize -= 1;
                            qn
                        }
                    }
                    (Some(pn), _) if psize > 0 => {
                        p = pn.next.get();
                        psize -= 1;
                        pn
                    }
                    (_, Some(qn)) if qsize > 0 => {
                        q = qn.next.get();
                        qsize -= 1;
                        qn
                    }
                    _ => break,
                };
                match tail {
                    Some(t) => t.next.set(Some(e)),
                    None => list = Some(e),
                }
                tail = Some(e);
            }
            p = q;
        }
        let last = tail.expect("the list is not empty");
        last.next.set(None);
        if nmerges <= 1 {
            return list.expect("the list is not empty");
        }
        insize *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(list: &List) -> (Vec<(u32, u32)>, Vec<Info>, u32) {
        (
            list.nodes.iter().map(|n| (n.next, n.info)).collect(),
            list.infos.clone(),
            list.head,
        )
    }

    #[test]
    fn capacity_and_item_counts() {
        assert_eq!(capacity(666), 31);
        assert_eq!(capacity(2000), 98);
        assert_eq!(capacity(400), 18);
        for (size, items) in [(666u32, 28usize), (2000, 95), (400, 15), (120, 1)] {
            let list = List::new(size, 0);
            // head + items + tail
            assert_eq!(list.records().len(), items + 2, "size {size}");
            assert_eq!(list.nodes.len(), items + 2);
        }
    }

    #[test]
    fn initial_list_is_sorted_by_idx_with_sentinels_at_the_ends() {
        let list = List::new(666, 0);
        let recs = list.records();
        assert_eq!(recs[0].idx, 0);
        assert_eq!(recs[0].data16, 0x8080u16 as i16);
        let last = recs.last().unwrap();
        assert_eq!((last.idx, last.data16), (0x7fff, -1));
        assert!(recs.windows(2).all(|w| w[0].idx <= w[1].idx));
        // The first fifth (i < 31 / 5 = 6) is indexed 1..=5.
        let idxs: Vec<i16> = recs[1..6].iter().map(|r| r.idx).collect();
        assert_eq!(idxs, [1, 2, 3, 4, 5]);
        // Data bytes are duplicated into both halves and carry no cache bit after init.
        for r in &recs[1..recs.len() - 1] {
            let d = r.data16 as u16;
            assert_eq!(d >> 8, d & 0xff);
            assert_eq!(d & 0x80, 0);
        }
    }

    #[test]
    fn linking_and_storing_back_is_lossless() {
        let mut list = List::new(2000, 0x3415);
        let before = snapshot(&list);
        list.run(|_| ());
        assert_eq!(snapshot(&list), before);
    }

    #[test]
    fn mergesort_is_stable_and_sorts() {
        // Five cells with keys 3,1,3,0,1; cell i owns record i.
        let keys = [3i16, 1, 3, 0, 1];
        let infos: Vec<CellInfo> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| CellInfo {
                data16: Cell::new(i as i16),
                idx: Cell::new(k),
            })
            .collect();
        let nodes: Vec<CellNode<'_>> = infos
            .iter()
            .map(|info| CellNode {
                next: Cell::new(None),
                info: Cell::new(info),
            })
            .collect();
        for w in nodes.windows(2) {
            w[0].next.set(Some(&w[1]));
        }
        let mut calls = 0;
        let first = mergesort(Some(&nodes[0]), |a, b| {
            calls += 1;
            i32::from(a.idx.get()) - i32::from(b.idx.get())
        });
        let mut order = Vec::new();
        let mut cur = Some(first);
        while let Some(n) = cur {
            order.push(data_of(n));
            cur = n.next.get();
        }
        assert_eq!(order, [3, 1, 4, 0, 2]);
        assert!(calls > 0);
    }

    #[test]
    fn remove_and_undo_restore_the_list() {
        let mut list = List::new(666, 0x3415);
        let before = snapshot(&list);
        let during = list.run(|cells| {
            let first = second(cells.head);
            let removed = remove(first);
            let mut n = 0;
            let mut cur = Some(cells.head);
            while let Some(c) = cur {
                n += 1;
                cur = c.next.get();
            }
            undo_remove(removed, first);
            n
        });
        assert_eq!(during, before.0.len() - 1);
        assert_eq!(snapshot(&list), before);
    }

    #[test]
    fn bench_leaves_the_list_in_its_initial_order() {
        let mut list = List::new(2000, 0);
        let order = |l: &List| l.records().iter().map(|r| r.idx).collect::<Vec<_>>();
        let before = order(&list);
        let mut work = crate::iterate::tests_support::kernels(2000 / 3, 0, 0);
        list.run(|cells| {
            cells.bench(1, 0x66, &mut work);
            cells.bench(-1, 0x66, &mut work);
        });
        assert_eq!(order(&list), before);
    }
}
