//! The statistics the tools use, as pure functions over samples, each reproducing a named
//! reference (lmbench, NumPy, SciPy) and tested against it. Those only the commands use
//! (`benchmp ab`'s paired tests, Mann–Whitney, the normal distribution) are benchmp-cli's.
//!
//! - [`lmbench`]: lmbench's sorted `(n, u)` array, its median and minimum (the tools' figures).
//! - [`descriptive`]: spread, quantiles, the one f64 median, trimmed mean, summary, outliers.
//! - [`ks`] with [`kolmogorov`]: the two-sample Kolmogorov–Smirnov test.
//! - [`verdict`]: the two-run verdict of `dto` and `benchmp compare` (DTO's rule with KS).

pub mod descriptive;
pub mod kolmogorov;
pub mod ks;
pub mod lmbench;
pub mod verdict;

pub use descriptive::{Quantile, Spread, median_of, middle, quantile, sort, spread};
pub use lmbench::{median, minimum, sorted_pairs};
