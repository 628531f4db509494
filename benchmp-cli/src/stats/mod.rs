//! The statistics only the commands use, pure functions over samples, each reproducing a
//! named reference (SciPy, R) and tested against it; the tools' own (lmbench's rules, KS, the
//! two-run verdict) are the framework's (`benchmp::stats`).
//!
//! - [`mann_whitney`]: the Mann–Whitney U test (`benchmp compare` over several runs a side).
//! - [`normal`]: the standard normal CDF and quantile.
//! - [`paired`]: Hodges–Lehmann, the Wilcoxon signed-rank and sign tests, and the paired
//!   verdict `benchmp ab` gives.

pub mod mann_whitney;
pub mod normal;
pub mod paired;
