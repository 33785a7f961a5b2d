//! Table cells the memory topics share.

use crate::engine::report::{Measurement, Table};

/// A fraction as a percentage cell (`0.5` is `50.0%`).
pub(super) fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// Adds a row that displays several measurements (one per load path, per host-memory kind):
/// the first through `measured_row`, the others pointed at the same row.
pub(super) fn multi_row(table: &mut Table, cells: Vec<String>, measurements: Vec<Measurement>) {
    let mut measurements = measurements.into_iter();
    match measurements.next() {
        Some(first) => table.measured_row(cells, first),
        None => table.row(cells),
    }
    let row = table.rows.len() - 1;
    for mut m in measurements {
        m.row = row;
        table.measurements.push(m);
    }
}
