//! Every statistic of the workspace, as pure functions over samples, each reproducing a named
//! reference (lmbench, NumPy, SciPy) and tested against it.
//!
//! - [`lmbench`]: lmbench's sorted `(n, u)` array, its median and minimum (the tools' figures).
//! - [`descriptive`]: spread, quantiles, the one f64 median, trimmed mean, summary, outliers.
//! - [`ks`] with [`kolmogorov`]: the two-sample Kolmogorov–Smirnov test.
//! - [`mann_whitney`]: the Mann–Whitney U test (process pairs' estimates).
//! - [`normal`]: the standard normal CDF and quantile.
//! - [`paired`]: Hodges–Lehmann, the Wilcoxon signed-rank and sign tests, and the paired
//!   verdict `benchmp ab` gives.
//! - [`verdict`]: the two-run verdict of `dto` and `benchmp compare` (DTO's rule with KS).

pub mod descriptive;
pub mod kolmogorov;
pub mod ks;
pub mod lmbench;
pub mod mann_whitney;
pub mod normal;
pub mod paired;
pub mod verdict;

pub use descriptive::{Quantile, Spread, median_of, middle, quantile, sort, spread};
pub use lmbench::{median, minimum, sorted_pairs};
