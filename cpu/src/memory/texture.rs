//! Texture memory: a lookup through the texture path or, where unreachable, the read-only data cache.

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[];
