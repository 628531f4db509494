//! The array sizes a sweep visits: lmbench's grid (spec lat_mem_rd.md §3).
//!
//! From 512 bytes the size doubles up to 1K, grows by 1K up to 4K, then by a sixteenth of the
//! next power of two above 32K, which gives +2K steps up to 32K and eight equal steps per
//! doubling after it. A lower bound other than 512 (`--min`) applies the same step rule from
//! there, so an off-grid start yields a different sequence, as the vendor extension does.

/// lmbench's smallest array size in bytes.
pub const LOWER: u64 = 512;

/// lmbench's `step`: the size after `k`.
pub fn next_size(k: u64) -> u64 {
    if k < 1024 {
        k * 2
    } else if k < 4096 {
        k + 1024
    } else {
        let mut s: u64 = 32 * 1024;
        while s <= k {
            s *= 2;
        }
        k + s / 16
    }
}

/// Sizes from `min` while they do not exceed `max`, in lmbench's order. `min` must be at
/// least 1 (a zero start would never grow).
pub fn sizes(min: u64, max: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut k = min.max(1);
    while k <= max {
        out.push(k);
        k = next_size(k);
    }
    out
}

/// The sizes measured for one stride: lmbench skips sizes smaller than the stride.
pub fn sizes_for_stride(min: u64, max: u64, stride: u64) -> Vec<u64> {
    sizes(min, max)
        .into_iter()
        .filter(|&s| s >= stride)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;
    const M: u64 = 1024 * 1024;

    #[test]
    fn grid_starts_like_lmbench() {
        let s = sizes(LOWER, 160 * K);
        let expect: Vec<u64> = [
            512, 1024, 2048, 3072, 4096, 6144, 8192, 10240, 12288, 14336, 16384, 18432, 20480,
            22528, 24576, 26624, 28672, 30720, 32768, 36864, 40960, 45056, 49152, 53248, 57344,
            61440, 65536, 73728, 81920, 90112, 98304, 106496, 114688, 122880, 131072, 147456,
            163840,
        ]
        .to_vec();
        assert_eq!(s, expect);
    }

    #[test]
    fn counts_match_the_spec() {
        // 19 sizes up to 32K, then 8 per doubling: 8·(5 + k) more for 2^k MiB.
        assert_eq!(sizes(LOWER, 32 * K).len(), 19);
        assert_eq!(sizes(LOWER, M).len(), 59);
        assert_eq!(sizes(LOWER, 64 * M).len(), 107);
        assert_eq!(sizes(LOWER, 256 * M).len(), 123);
        for k in 0..=10u32 {
            assert_eq!(
                sizes(LOWER, M << k).len(),
                19 + 8 * (5 + k as usize),
                "2^{k} MiB"
            );
        }
    }

    #[test]
    fn every_power_of_two_is_on_the_grid() {
        let s = sizes(LOWER, 1 << 30);
        for p in 9..=30 {
            assert!(s.contains(&(1u64 << p)), "2^{p}");
        }
        assert_eq!(*s.last().unwrap(), 1 << 30);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn sizes_below_the_stride_are_skipped() {
        let s = sizes_for_stride(LOWER, M, 256 * K);
        assert_eq!(s[0], 256 * K);
        let s = sizes_for_stride(LOWER, 4 * K, 1536);
        assert_eq!(s, vec![2048, 3072, 4096]);
    }

    #[test]
    fn custom_bounds() {
        // On-grid start: the tail of lmbench's sequence.
        assert_eq!(
            sizes(64 * K, 96 * K),
            vec![64 * K, 72 * K, 80 * K, 88 * K, 96 * K]
        );
        // Off-grid start: the same step rule from there.
        assert_eq!(sizes(5000, 12000), vec![5000, 7048, 9096, 11144]);
        // A single size.
        assert_eq!(sizes(256 * M, 256 * M), vec![256 * M]);
        assert!(sizes(2 * M, M).is_empty());
    }
}
