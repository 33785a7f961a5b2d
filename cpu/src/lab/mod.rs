//! The lab: what the `demo` command measures and teaches beyond the operations, kept callable.
//!
//! - [`memory`]: the memory hierarchy, one module per topic (registers, shared memory and bank
//!   conflicts, constant memory, `__device__` globals, coalescing, layouts, host-device
//!   bandwidth, texture objects), with the launchers, CPU references and measurements behind
//!   `demo <topic>`, and [`memory::read_stream`], the read-only bandwidth ceiling.
//! - [`md`]: molecular-dynamics force reduction (the seed "cuda 并行归约"'s OpenMP paper): the
//!   LJ-melt system, neighbour lists, the CPU thread team ([`md::team`], a library of its own)
//!   and the GPU force kernels.
//! - [`smoke`]: one kernel per device-support feature of `gpu_std`, each checked against the CPU.

pub mod md;
pub mod memory;
pub mod smoke;
