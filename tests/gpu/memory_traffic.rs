//! GPU trials of the memory hierarchy lab (global-memory and transfer topics).

use libtest_mimic::Trial;

/// Every trial of these topics.
pub fn trials() -> Vec<Trial> {
    Vec::new()
}
