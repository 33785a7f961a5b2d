//! The lab's GPU side: every kernel, written in Rust, compiled to PTX by rustc's
//! `nvptx64-nvidia-cuda` backend (see `xtask` for the builder), on top of the device-support
//! crate [`gpu_std`] (this project's `cuda_std`).
//!
//! Every kernel is a function with `#[kernel]` (a safe `fn` where its parameters are scalars,
//! `&[T]` and `DisjointSlice<T>` outputs, as [`vector_add`]; an `unsafe fn` with a `# Safety`
//! section otherwise; generic with its list of instances, as `scan_lookback` in [`scan::lookback`]),
//! and the crate builds for two targets:
//! - `nvptx64-nvidia-cuda`: each kernel is a PTX `.entry` of its own name;
//! - the host: each kernel is a typed handle of the same name (`gpu_std::host::Kernel`, its
//!   parameter types in order), which `cpu::Gpu::launch` (safe kernels) and `cpu::Gpu::launch_unchecked` take with matching
//!   arguments; beside
//!   them, the items both sides must agree on (block and tile constants, `__constant__` symbol
//!   names and sizes, `#[repr(C)]` parameter types), so the `cpu` crate depends on this crate
//!   instead of repeating literals. The kernels' bodies are compiled for the device only.
//!
//! Each pattern lives in one module, a folder with one file per kernel family for the larger
//! ones ([`reduce`], [`convolution`], [`transpose`]). The names match the `cpu` modules, the
//! tests and the docs: [`reduce`] holds both the reductions and the square sums, as
//! `cpu::reduce` does.
#![no_std]
// `#[kernel]` emits PTX kernel entries (the `abi_ptx` feature); a few helpers are inline PTX.
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch, f16))]
// The host build sees each kernel as its typed handle (`#[kernel]` drops the body there), so the
// kernels' imports and private helpers are used by the device build alone.
#![cfg_attr(not(target_arch = "nvptx64"), allow(unused_imports, dead_code))]

// The host unit tests (the simulations of the transpose kernels' plans) use `std`.
#[cfg(test)]
extern crate std;

pub mod convolution;
/// Two kernels written against cuda_std 0.2's names alone (`thread`, `shared_array!`).
pub mod cuda_std_style;
pub mod gemm;
pub mod histogram;
pub mod md;
pub mod memory;
pub mod multi_gpu;
pub mod reduce;
pub mod saxpy;
pub mod scan;
pub mod smoke;
pub mod sort;
pub mod transpose;
pub mod vector_add;

/// This thread's index in the block, the block's size and the block's index, as `usize`.
#[inline(always)]
pub(crate) fn coordinates() -> (usize, usize, usize) {
    use gpu_std::{block_dim, block_idx, thread_idx};
    (
        thread_idx().x as usize,
        block_dim().x as usize,
        block_idx().x as usize,
    )
}
