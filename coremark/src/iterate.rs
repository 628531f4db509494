//! One CoreMark context (the reference's `core_results`): its seeds, its three data
//! blocks, and `iterate`, which runs the list workload twice per iteration and keeps the
//! running CRCs. The matrix and state workloads run only inside the list's data sort,
//! through [`Kernels::calc`](crate::calc::Kernels::calc) (the reference's `calc_func`).

use std::hint::black_box;

use crate::calc::Kernels;
use crate::crc::crcu16;
use crate::list::{self, List};
use crate::matrix::Matrix;
use crate::state;
use crate::{Error, Seeds};

/// Default total data size in bytes (the reference's TOTAL_DATA_SIZE, "2K").
pub const DEFAULT_TOTAL_SIZE: u32 = 2000;
/// Number of workloads sharing the data (list, matrix, state); all are always enabled.
pub const NUM_ALGORITHMS: u32 = 3;
/// Smallest per-workload block: the list needs head, tail and one item (size / 20 − 2 ≥ 4).
pub const MIN_SIZE_PER_ALGORITHM: u32 = 120;
/// Largest accepted total data size (3 MiB, about 52,000 list items): beyond 32,767 items
/// the reference's 16-bit item indices wrap, and the matrix work grows as size^1.5.
pub const MAX_TOTAL_SIZE: u32 = 3 << 20;

/// CRCs left by one call of [`Context::iterate`]. Serialised with the reference's names
/// and `0x%04x` strings (a child sends them to the parent this way, and each context's
/// result in the report carries them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct IterResult {
    /// Running CRC after the last iteration (`crcfinal`); depends on the iteration count.
    #[serde(rename = "crcfinal", with = "crate::hex")]
    pub crc: u16,
    /// Running CRC after the first iteration.
    #[serde(with = "crate::hex")]
    pub crclist: u16,
    /// First non-zero matrix workload result.
    #[serde(with = "crate::hex")]
    pub crcmatrix: u16,
    /// First non-zero state workload result.
    #[serde(with = "crate::hex")]
    pub crcstate: u16,
}

/// One independent CoreMark context with its own data. Create one per core for
/// multi-context runs; contexts share nothing.
#[derive(Debug, Clone)]
pub struct Context {
    seeds: Seeds,
    total_size: u32,
    size: u32,
    list: List,
    kernels: Kernels,
}

impl Context {
    /// Builds a context: splits `total_size` bytes evenly between the three workloads and
    /// initialises the list (seed1), matrix (seed1 | seed2 << 16) and state input (seed1).
    /// Seeds are used as given; apply the command-line shortcuts with [`Seeds::from_args`].
    pub fn new(seeds: Seeds, total_size: u32) -> Result<Context, Error> {
        // Keep the seeds opaque to the optimiser, as the reference requires.
        let seeds = black_box(seeds);
        let total_size = black_box(total_size);
        if total_size > MAX_TOTAL_SIZE {
            return Err(Error::SizeTooLarge {
                total: u64::from(total_size),
                max: MAX_TOTAL_SIZE,
            });
        }
        let size = total_size / NUM_ALGORITHMS;
        if size < MIN_SIZE_PER_ALGORITHM {
            return Err(Error::SizeTooSmall {
                total: u64::from(total_size),
                min: MIN_SIZE_PER_ALGORITHM * NUM_ALGORITHMS,
            });
        }
        debug_assert!(list::capacity(size) >= 4);
        let list = List::new(size, seeds.seed1);
        let matrix_seed = i32::from(seeds.seed1) | (i32::from(seeds.seed2) << 16);
        let matrix = Matrix::new(size, matrix_seed);
        let state = state::init(size, seeds.seed1);
        Ok(Context {
            seeds,
            total_size,
            size,
            list,
            kernels: Kernels {
                seed1: seeds.seed1,
                seed2: seeds.seed2,
                matrix,
                state,
                crc: 0,
                crcmatrix: 0,
                crcstate: 0,
            },
        })
    }

    /// Runs `iterations` iterations (the reference's `iterate`): the CRCs restart from
    /// zero, and each iteration runs the list workload with finder index +1 and then −1.
    pub fn iterate(&mut self, iterations: u32) -> IterResult {
        let iterations = black_box(iterations);
        let seed3 = self.seeds.seed3;
        let k = &mut self.kernels;
        k.crc = 0;
        k.crcmatrix = 0;
        k.crcstate = 0;
        let crclist = self.list.run(|list| {
            let mut crclist = 0;
            for i in 0..iterations {
                let r = list.bench(1, seed3, k);
                k.crc = crcu16(r, k.crc);
                let r = list.bench(-1, seed3, k);
                k.crc = crcu16(r, k.crc);
                if i == 0 {
                    crclist = k.crc;
                }
            }
            crclist
        });
        black_box(IterResult {
            crc: k.crc,
            crclist,
            crcmatrix: k.crcmatrix,
            crcstate: k.crcstate,
        })
    }

    /// CRC of the seeds and the per-workload size; identifies the standard runs.
    pub fn seedcrc(&self) -> u16 {
        crate::validate::seedcrc(self.seeds, self.size)
    }

    /// The seeds this context was built with.
    pub fn seeds(&self) -> Seeds {
        self.seeds
    }

    /// Total data size in bytes, as requested.
    pub fn total_size(&self) -> u32 {
        self.total_size
    }

    /// Bytes given to each workload (the report's "CoreMark Size").
    pub fn size_per_algorithm(&self) -> u32 {
        self.size
    }

    /// Side of the square matrices.
    pub fn matrix_dimension(&self) -> usize {
        self.kernels.matrix.n()
    }
}

/// Building blocks for other modules' tests.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// Matrix and state blocks of `size` bytes each for the given seeds, CRCs at zero.
    pub(crate) fn kernels(size: u32, seed1: i16, seed2: i16) -> Kernels {
        Kernels {
            seed1,
            seed2,
            matrix: Matrix::new(size, i32::from(seed1) | (i32::from(seed2) << 16)),
            state: state::init(size, seed1),
            crc: 0,
            crcmatrix: 0,
            crcstate: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KnownRun;

    /// The timed function starts on a cache line in every build.
    #[test]
    fn the_timed_code_starts_on_a_cache_line() {
        benchmp::testing::assert_code_aligned(&[(
            "Context::iterate",
            Context::iterate as *const (),
        )]);
    }

    #[test]
    fn sizes_are_checked() {
        assert!(matches!(
            Context::new(Seeds::PERFORMANCE, 0),
            Err(Error::SizeTooSmall { .. })
        ));
        assert!(matches!(
            Context::new(Seeds::PERFORMANCE, 359),
            Err(Error::SizeTooSmall { min: 360, .. })
        ));
        assert!(Context::new(Seeds::PERFORMANCE, 360).is_ok());
        assert!(matches!(
            Context::new(Seeds::PERFORMANCE, MAX_TOTAL_SIZE + 1),
            Err(Error::SizeTooLarge { .. })
        ));
    }

    #[test]
    fn split_and_dimensions() {
        let ctx = Context::new(Seeds::PERFORMANCE, 2000).unwrap();
        assert_eq!(ctx.size_per_algorithm(), 666);
        assert_eq!(ctx.matrix_dimension(), 9);
        assert_eq!(ctx.total_size(), 2000);
    }

    #[test]
    fn totals_are_split_as_the_reference_splits_them() {
        // Each workload gets total / 3 bytes, so totals that round down to a standard
        // block size are that standard run, with its seedcrc and known CRCs.
        for (total, run) in [
            (1998, KnownRun::Performance2k),
            (1999, KnownRun::Performance2k),
            (1201, KnownRun::ProfileGeneration),
            (1202, KnownRun::ProfileGeneration),
            (6002, KnownRun::Performance6k),
        ] {
            let seeds = match run {
                KnownRun::ProfileGeneration => Seeds::PROFILE,
                _ => Seeds::PERFORMANCE,
            };
            let mut ctx = Context::new(seeds, total).unwrap();
            assert_eq!(ctx.seedcrc(), run.seedcrc(), "total {total}");
            let r = ctx.iterate(1);
            let want = run.expected();
            assert_eq!(
                (r.crclist, r.crcmatrix, r.crcstate),
                (want.list, want.matrix, want.state),
                "total {total}"
            );
            assert!(crate::validate(ctx.seedcrc(), &r).passed());
        }
    }

    #[test]
    fn smallest_and_odd_sizes_keep_the_crc_bookkeeping() {
        for total in [360u32, 361, 400, 777, 1000, 1201, 4096] {
            for seeds in [
                Seeds::PERFORMANCE,
                Seeds::VALIDATION,
                Seeds::new(-7, 99, 33),
            ] {
                let what = format!("total {total}, {seeds:?}");
                let one = Context::new(seeds, total).unwrap().iterate(1);
                let mut ctx = Context::new(seeds, total).unwrap();
                let two = ctx.iterate(2);
                // crclist is the running CRC after the first iteration, and a one-iteration
                // run ends there.
                assert_eq!(one.crc, one.crclist, "{what}");
                assert_eq!(two.crclist, one.crc, "{what}");
                // The matrix and state CRCs are the first results seen, whatever follows.
                assert_eq!((two.crcmatrix, two.crcstate), (one.crcmatrix, one.crcstate));
                if seeds.seed1 == seeds.seed2 {
                    // Equal seeds restore every block: the context repeats itself.
                    assert_eq!(ctx.iterate(2), two, "{what}");
                }
            }
        }
    }

    #[test]
    fn negative_and_zero_seed3_skip_the_find_loop() {
        let run = |s3| Context::new(Seeds::new(3, 3, s3), 2000).unwrap().iterate(1);
        // No find at all either way, so the same CRCs; one find changes the list CRC.
        assert_eq!(run(0), run(-5));
        assert_ne!(run(0).crclist, run(1).crclist);
    }

    #[test]
    fn iterate_is_repeatable_for_equal_seed1_seed2() {
        let mut ctx = Context::new(Seeds::VALIDATION, 2000).unwrap();
        let a = ctx.iterate(3);
        let b = ctx.iterate(3);
        assert_eq!(a, b);
    }
}
