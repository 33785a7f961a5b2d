//! Array of structs against struct of arrays for the same arithmetic.

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[];
