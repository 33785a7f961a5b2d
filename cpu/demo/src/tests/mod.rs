//! Unit tests over the binary's whole list of patterns ([`PATTERNS`](crate::PATTERNS)): they sit
//! at the top, the one place that names every pattern, so that the engine's own tests name none.

mod cli;
mod registry;
mod sweep;

use crate::PATTERNS;
use crate::engine::registry::Patterns;

/// The binary's patterns, as the engine gets them.
pub(crate) fn patterns() -> Patterns {
    Patterns::new(PATTERNS)
}
