//! How a figure is written in a table, one rule for every table of the workspace.

/// A figure for a table: `decimals` places where that stays short, scientific notation for
/// magnitudes a table cannot hold (1e308 would print as 309 digits, 1e-300 as 300 zeros), and
/// the non-finite as `nan`/`inf`.
pub fn table_number(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        format!("{x}")
    } else if x != 0.0 && !(1e-4..1e12).contains(&x.abs()) {
        format!("{x:.3e}")
    } else {
        format!("{x:.decimals$}")
    }
}
