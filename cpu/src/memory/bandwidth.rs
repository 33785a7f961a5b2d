//! Host-device transfer bandwidth (pageable, pinned, write-combined, zero-copy) and launch overhead.

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[];
