//! Benchmark buffers mapped with a chosen page size, and what the kernel actually gave.
//!
//! `4k` maps ordinary pages and forbids transparent huge pages (MADV_NOHUGEPAGE) so THP cannot
//! change a latency curve behind the user's back; `thp` asks for them (MADV_HUGEPAGE); `huge`
//! maps reserved 2 MiB hugetlb pages (MAP_HUGETLB). The pages obtained are read back from
//! /proc/self/smaps so a report says what was measured, not what was asked.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::num::NonZeroUsize;
use std::path::Path;
use std::ptr::NonNull;

use nix::sys::mman::{MapFlags, MmapAdvise, ProtFlags, madvise, mmap_anonymous, munmap};
use serde::{Deserialize, Serialize};

/// Size of a hugetlb page this module maps (the x86_64/aarch64 default).
pub const HUGE_PAGE: usize = 2 << 20;

/// Page size policy for a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Pages {
    /// No advice: the kernel's transparent-huge-page policy decides, as it does for memory
    /// from malloc (what lmbench gets: huge pages with THP `always`, base pages with `madvise`).
    System,
    /// Base pages only; transparent huge pages are refused with MADV_NOHUGEPAGE.
    #[value(name = "4k")]
    #[serde(rename = "4k")]
    Small,
    /// Transparent huge pages requested with MADV_HUGEPAGE (the kernel may still decline).
    Thp,
    /// Reserved 2 MiB hugetlb pages (MAP_HUGETLB); needs /proc/sys/vm/nr_hugepages > 0.
    Huge,
}

/// Why a buffer could not be mapped.
#[derive(Debug, thiserror::Error)]
pub enum MemError {
    /// MAP_HUGETLB asked but too few pages are reserved.
    #[error(
        "{needed} huge pages of 2 MiB needed but {free} free: reserve them with 'echo {needed} > /proc/sys/vm/nr_hugepages' (as root)"
    )]
    NoHugePages {
        /// Pages the buffer needs.
        needed: u64,
        /// Pages free now.
        free: u64,
    },
    /// The buffers of every child do not fit in the memory the system can give.
    #[error(
        "size {size_bytes} bytes needs {need_bytes} bytes of memory for {children} {}{} but only {have_bytes} bytes are available (MemAvailable in /proc/meminfo)",
        if *.children == 1 { "child" } else { "children" },
        if *.buffers > 1 { " (source and destination buffers)" } else { "" }
    )]
    TooBig {
        /// The size asked for.
        size_bytes: u64,
        /// Bytes all children would map.
        need_bytes: u128,
        /// Children.
        children: usize,
        /// Buffers per child.
        buffers: usize,
        /// MemAvailable.
        have_bytes: u64,
    },
    /// mmap itself failed.
    #[error("cannot map {len} bytes ({} pages)", pages.name())]
    Map {
        /// Bytes asked.
        len: usize,
        /// Page policy.
        pages: Pages,
        /// The system error.
        source: nix::Error,
    },
    /// Zero-length buffer.
    #[error("a buffer of 0 bytes was asked for")]
    Empty,
}

impl crate::error::ExitStatus for MemError {
    fn exit_status(&self) -> i32 {
        self.exit_code()
    }
}

impl MemError {
    /// True when the machine cannot provide what was asked (exit status 3 rather than 1).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, MemError::NoHugePages { .. })
    }

    /// The exit status: 3 for missing huge pages, 2 for a size the machine cannot hold (bad
    /// input, found before anything ran), 1 for a mapping that failed anyway.
    pub fn exit_code(&self) -> i32 {
        match self {
            MemError::NoHugePages { .. } => crate::error::EXIT_UNSUPPORTED,
            MemError::TooBig { .. } | MemError::Empty => crate::error::EXIT_USAGE,
            MemError::Map { .. } => crate::error::EXIT_FAILED,
        }
    }
}

impl Pages {
    /// The option value (`system`, `4k`, `thp`, `huge`).
    pub fn name(self) -> &'static str {
        match self {
            Pages::System => "system",
            Pages::Small => "4k",
            Pages::Thp => "thp",
            Pages::Huge => "huge",
        }
    }
}

/// Memory the system can give without swapping: `MemAvailable` (else `MemTotal`) of a
/// /proc/meminfo text, in bytes.
pub fn available_from(meminfo: &str) -> Option<u64> {
    let field = |name: &str| {
        meminfo.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?;
            let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
            Some(kb * 1024)
        })
    };
    field("MemAvailable").or_else(|| field("MemTotal"))
}

/// Available memory of this machine, if /proc/meminfo can be read.
pub fn available() -> Option<u64> {
    available_from(&crate::sysfs::read_proc(Path::new("/proc/meminfo")).ok()?)
}

/// What a run will map: each child maps `buffers` (bytes each) with `pages`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryNeed {
    /// The size the user asked for (named in the message).
    pub size_bytes: u64,
    /// Bytes of each buffer one child maps.
    pub buffers: Vec<u64>,
    /// Children, each with its own buffers.
    pub children: usize,
    /// Page policy.
    pub pages: Pages,
}

impl MemoryNeed {
    /// Refuses, before anything is forked, a run whose buffers cannot all be mapped: reserved
    /// huge pages for `huge` (exit 3), else MemAvailable (exit 2). Every tool checks its sizes
    /// this way, so the message is the same everywhere.
    pub fn check(&self) -> Result<(), MemError> {
        self.check_against(available())
    }

    /// [`MemoryNeed::check`] against a given MemAvailable (`None`: unknown, not checked).
    pub fn check_against(&self, have: Option<u64>) -> Result<(), MemError> {
        if self.pages == Pages::Huge {
            let per_child: u64 = self
                .buffers
                .iter()
                .map(|b| {
                    b.div_ceil(HUGE_PAGE as u64)
                        .saturating_mul(HUGE_PAGE as u64)
                })
                .fold(0, u64::saturating_add);
            return check_huge_pages(per_child.saturating_mul(self.children as u64));
        }
        let need: u128 =
            self.buffers.iter().map(|&b| u128::from(b)).sum::<u128>() * self.children as u128;
        match have {
            Some(have_bytes) if need > u128::from(have_bytes) => Err(MemError::TooBig {
                size_bytes: self.size_bytes,
                need_bytes: need,
                children: self.children,
                buffers: self.buffers.len(),
                have_bytes,
            }),
            _ => Ok(()),
        }
    }
}

/// What the kernel backed a buffer with, read from /proc/self/smaps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PagesObtained {
    /// Page size of the mapping (KernelPageSize), bytes.
    pub page_size_bytes: u64,
    /// Bytes resident in transparent huge pages (AnonHugePages).
    pub anon_huge_bytes: u64,
    /// Bytes in hugetlb pages (Private_Hugetlb + Shared_Hugetlb).
    pub hugetlb_bytes: u64,
    /// Resident bytes (Rss).
    pub rss_bytes: u64,
}

/// An anonymous private mapping, unmapped on drop. Contents start zeroed (not yet faulted in).
///
/// Base-page and THP buffers end in one inaccessible guard page: it catches overruns, and it
/// keeps the kernel from merging two buffers mapped back to back into one mapping, so each
/// buffer's smaps entry (and [`Buffer::pages_obtained`]) describes that buffer alone.
#[derive(Debug)]
pub struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
    map_len: usize,
    pages: Pages,
}

/// Free 2 MiB hugetlb pages (HugePages_Free in /proc/meminfo).
pub fn huge_pages_free() -> u64 {
    crate::sysfs::read_proc(Path::new("/proc/meminfo"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("HugePages_Free:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Checks that `bytes` (rounded up to 2 MiB pages) can be backed by free hugetlb pages.
pub fn check_huge_pages(bytes: u64) -> Result<(), MemError> {
    let needed = bytes.div_ceil(HUGE_PAGE as u64).max(1);
    let free = huge_pages_free();
    if free < needed {
        return Err(MemError::NoHugePages { needed, free });
    }
    Ok(())
}

/// Memory kept free beside a renewal's new buffers (MemAvailable less this must hold them).
const RENEW_HEADROOM: u64 = 256 << 20;

/// True when `bytes` more with `pages` can be mapped beside what is mapped now, with room to
/// spare: a benchmark renewing its buffers ([`crate::Benchmark::renew`]) maps the new ones
/// before it lets the old go, and skips the renewal rather than push the machine to swap
/// (`bytes`: what every child renewing at the same time maps).
pub fn room_beside(bytes: u64, pages: Pages) -> bool {
    match pages {
        Pages::Huge => check_huge_pages(bytes).is_ok(),
        _ => available().is_some_and(|have| have >= bytes.saturating_add(RENEW_HEADROOM)),
    }
}

impl Buffer {
    /// Maps `len` bytes with the page policy; the length is rounded up to whole pages.
    pub fn new(len: usize, pages: Pages) -> Result<Buffer, MemError> {
        if len == 0 {
            return Err(MemError::Empty);
        }
        let granule = if pages == Pages::Huge {
            HUGE_PAGE
        } else {
            4096
        };
        let map_len = len.div_ceil(granule) * granule;
        if pages == Pages::Huge {
            check_huge_pages(map_len as u64)?;
        }
        let mut flags = MapFlags::MAP_PRIVATE;
        if pages == Pages::Huge {
            flags |= MapFlags::MAP_HUGETLB;
        }
        let guard = if pages == Pages::Huge { 0 } else { 4096 };
        let nz = NonZeroUsize::new(map_len + guard).ok_or(MemError::Empty)?;
        // SAFETY: a fresh anonymous mapping at a kernel-chosen address aliases nothing.
        let ptr = unsafe {
            mmap_anonymous(
                None,
                nz,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                flags,
            )
        }
        .map_err(|source| MemError::Map { len, pages, source })?;
        if guard > 0 {
            // SAFETY: the guard is the last page of the mapping just created; only its
            // protection changes and nothing refers to it.
            let _ = unsafe {
                nix::sys::mman::mprotect(ptr.byte_add(map_len), guard, ProtFlags::PROT_NONE)
            };
        }
        let advice = match pages {
            Pages::Small => Some(MmapAdvise::MADV_NOHUGEPAGE),
            Pages::Thp => Some(MmapAdvise::MADV_HUGEPAGE),
            Pages::System | Pages::Huge => None,
        };
        if let Some(advice) = advice {
            // SAFETY: the range is exactly the mapping just created; advice does not unmap it.
            let _ = unsafe { madvise(ptr, map_len, advice) };
        }
        Ok(Buffer {
            ptr: ptr.cast(),
            len,
            map_len: map_len + guard,
            pages,
        })
    }

    /// Usable length in bytes (as asked).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: empty buffers are refused at creation.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Page policy the buffer was mapped with.
    pub fn pages(&self) -> Pages {
        self.pages
    }

    /// Start address (page aligned).
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    /// Start address for writing (page aligned).
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The buffer as bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the mapping is readable, at least `len` bytes long, lives as long as `self`,
        // and is only mutated through `&mut self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The buffer as mutable bytes.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as `as_slice`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// Writes one byte in every 4 KiB page so every page is faulted in now (by this CPU).
    pub fn touch(&mut self) {
        let s = self.as_mut_slice();
        for i in (0..s.len()).step_by(4096) {
            // Volatile so the store of a value the page already holds is not elided.
            let p = &mut s[i] as *mut u8;
            // SAFETY: `p` points into the live, writable slice.
            unsafe { p.write_volatile(0) };
        }
    }

    /// What backs the mapping now, from /proc/self/smaps.
    pub fn pages_obtained(&self) -> PagesObtained {
        smaps_for(self.ptr.as_ptr() as usize).unwrap_or_default()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `new`; no reference outlives `self`.
        let _ = unsafe { munmap(self.ptr.cast::<c_void>(), self.map_len) };
    }
}

/// One page shared by the parent and every child forked after it was mapped (MAP_SHARED):
/// atomic words that pinned children use to talk to each other, e.g. the cache line two
/// children bounce to measure a core-to-core transfer. Each word sits on a cache line of its
/// own (128 bytes apart, beyond any adjacent-line prefetch).
#[derive(Debug)]
pub struct SharedPage {
    ptr: NonNull<std::sync::atomic::AtomicU64>,
}

/// Bytes between two words of a [`SharedPage`].
pub const SHARED_WORD_STRIDE: usize = 128;
/// Words a [`SharedPage`] holds.
pub const SHARED_WORDS: usize = 4096 / SHARED_WORD_STRIDE;

impl SharedPage {
    /// Maps a zeroed shared page. Map it before forking the children that use it.
    pub fn new() -> Result<SharedPage, MemError> {
        let len = NonZeroUsize::new(4096).ok_or(MemError::Empty)?;
        // SAFETY: a fresh anonymous mapping at a kernel-chosen address aliases nothing.
        let ptr = unsafe {
            mmap_anonymous(
                None,
                len,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
            )
        }
        .map_err(|source| MemError::Map {
            len: 4096,
            pages: Pages::Small,
            source,
        })?;
        Ok(SharedPage { ptr: ptr.cast() })
    }

    /// Word `i` (`i < SHARED_WORDS`), on a cache line of its own.
    pub fn word(&self, i: usize) -> &std::sync::atomic::AtomicU64 {
        assert!(i < SHARED_WORDS, "a shared page holds {SHARED_WORDS} words");
        // SAFETY: the page is mapped read-write for as long as `self` lives; word i lies at
        // byte i × 128 < 4096, aligned for an AtomicU64; atomics are the only access, so
        // processes sharing the page never race on non-atomic data.
        unsafe {
            &*self
                .ptr
                .as_ptr()
                .byte_add(i * SHARED_WORD_STRIDE)
                .cast_const()
        }
    }
}

impl Drop for SharedPage {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the page mapped in `new`; no reference outlives `self`.
        let _ = unsafe { munmap(self.ptr.cast::<c_void>(), 4096) };
    }
}

/// Reads the smaps entry of the mapping containing `addr`.
fn smaps_for(addr: usize) -> Option<PagesObtained> {
    let text = crate::sysfs::read_proc(Path::new("/proc/self/smaps")).ok()?;
    parse_smaps(&text, addr)
}

/// Parses the smaps block whose address range contains `addr`.
pub fn parse_smaps(text: &str, addr: usize) -> Option<PagesObtained> {
    let mut inside = false;
    let mut out = PagesObtained::default();
    for line in text.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-')
            && let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        {
            if inside {
                return Some(out);
            }
            inside = lo <= addr && addr < hi;
            continue;
        }
        if !inside {
            continue;
        }
        let kb = |rest: &str| -> u64 {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .unwrap_or(0)
                * 1024
        };
        if let Some((key, rest)) = line.split_once(':') {
            match key {
                "KernelPageSize" => out.page_size_bytes = kb(rest),
                "AnonHugePages" => out.anon_huge_bytes = kb(rest),
                "Private_Hugetlb" | "Shared_Hugetlb" => out.hugetlb_bytes += kb(rest),
                "Rss" => out.rss_bytes = kb(rest),
                _ => {}
            }
        }
    }
    inside.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_page_holds_words_on_lines_of_their_own() {
        use std::sync::atomic::Ordering;
        // Sharing across processes is checked through the binaries (lat_mem_rd --c2c): the
        // test runner is multi-threaded and never forks.
        let page = SharedPage::new().unwrap();
        for i in 0..SHARED_WORDS {
            page.word(i).store(i as u64 * 3, Ordering::SeqCst);
        }
        for i in 0..SHARED_WORDS {
            assert_eq!(page.word(i).load(Ordering::SeqCst), i as u64 * 3);
        }
        let gap = page.word(1) as *const _ as usize - page.word(0) as *const _ as usize;
        assert_eq!(gap, SHARED_WORD_STRIDE);
    }

    #[test]
    fn meminfo_fields() {
        let t = "MemTotal:       24683604 kB\nMemFree:        21553044 kB\nMemAvailable:   24105000 kB\n";
        assert_eq!(available_from(t), Some(24_105_000 * 1024));
        assert_eq!(available_from("MemTotal: 1024 kB\n"), Some(1024 * 1024));
        assert_eq!(available_from("nothing"), None);
    }

    #[test]
    fn memory_need_counts_children_and_buffers() {
        let need = MemoryNeed {
            size_bytes: 600,
            buffers: vec![600, 700],
            children: 2,
            pages: Pages::Small,
        };
        assert!(need.check_against(Some(2600)).is_ok());
        let e = need.check_against(Some(2599)).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::EXIT_USAGE);
        let text = e.to_string();
        assert!(
            text.contains("needs 2600 bytes") && text.contains("2 children"),
            "{text}"
        );
        assert!(text.contains("source and destination"), "{text}");
        assert!(
            need.check_against(None).is_ok(),
            "unknown memory is not checked"
        );
        // The message names the error once, however it is rendered.
        let chain = crate::error::chain_line(&e);
        assert_eq!(chain.matches("MemAvailable").count(), 1, "{chain}");
    }

    const SMAPS: &str = "\
7f0000000000-7f0000200000 rw-p 00000000 00:00 0
Size:               2048 kB
KernelPageSize:        4 kB
Rss:                2048 kB
AnonHugePages:      2048 kB
Private_Hugetlb:       0 kB
7f0000400000-7f0000800000 rw-p 00000000 00:00 0
Size:               4096 kB
KernelPageSize:     2048 kB
Rss:                   0 kB
AnonHugePages:         0 kB
Shared_Hugetlb:        0 kB
Private_Hugetlb:    4096 kB
";

    #[test]
    fn smaps_picks_the_right_mapping() {
        let thp = parse_smaps(SMAPS, 0x7f0000100000).unwrap();
        assert_eq!(thp.anon_huge_bytes, 2 << 20);
        assert_eq!(thp.page_size_bytes, 4096);
        let huge = parse_smaps(SMAPS, 0x7f0000400000).unwrap();
        assert_eq!(huge.hugetlb_bytes, 4 << 20);
        assert_eq!(huge.page_size_bytes, 2 << 20);
        assert!(parse_smaps(SMAPS, 0x1000).is_none());
    }

    #[test]
    fn small_pages_buffer_maps_touches_and_reports() {
        let mut b = Buffer::new(1 << 20, Pages::Small).unwrap();
        b.touch();
        assert_eq!(b.len(), 1 << 20);
        assert_eq!(b.as_ptr() as usize % 4096, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        let got = b.pages_obtained();
        assert_eq!(got.anon_huge_bytes, 0, "MADV_NOHUGEPAGE must keep THP away");
        assert_eq!(got.rss_bytes, 1 << 20);
    }

    #[test]
    fn huge_pages_missing_is_a_clear_error() {
        // One more page than are free, whatever the reservation.
        let e = Buffer::new((huge_pages_free() as usize + 1) * HUGE_PAGE, Pages::Huge).unwrap_err();
        assert!(e.is_unsupported());
        assert!(e.to_string().contains("/proc/sys/vm/nr_hugepages"), "{e}");
    }

    #[test]
    fn adjacent_buffers_stay_separate_mappings() {
        let mut a = Buffer::new(1 << 20, Pages::Small).unwrap();
        let mut b = Buffer::new(1 << 20, Pages::Small).unwrap();
        a.touch();
        b.touch();
        // Each mapping holds exactly its own resident megabyte, whatever their addresses.
        assert_eq!(a.pages_obtained().rss_bytes, 1 << 20);
        assert_eq!(b.pages_obtained().rss_bytes, 1 << 20);
    }

    #[test]
    fn a_renewal_that_cannot_fit_beside_is_skipped() {
        // More than any machine has, in base pages or in reserved huge pages.
        for pages in [Pages::System, Pages::Small, Pages::Thp, Pages::Huge] {
            assert!(!room_beside(1 << 60, pages), "{pages:?}");
        }
    }

    #[test]
    fn empty_buffer_is_refused() {
        assert!(matches!(Buffer::new(0, Pages::Small), Err(MemError::Empty)));
    }
}
