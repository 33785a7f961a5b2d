//! Shared-memory bank conflicts: strided, padded, broadcast and multicast access, timed with the SM clock.

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[];
