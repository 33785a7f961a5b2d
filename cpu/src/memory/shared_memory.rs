//! Shared memory declared statically and dynamically: the seed's `u[i] = tmp[i]*tmp[i] + tmp[3-i]` example.

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[];
