//! GPU trials of the memory hierarchy lab (on-chip topics).

use libtest_mimic::Trial;

/// Every trial of these topics.
pub fn trials() -> Vec<Trial> {
    Vec::new()
}
