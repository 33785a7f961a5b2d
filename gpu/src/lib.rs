//! The lab's GPU side: every kernel, written in Rust, compiled to PTX by rustc's
//! `nvptx64-nvidia-cuda` backend (see `xtask` for the builder).
//!
//! The crate builds for two targets:
//! - `nvptx64-nvidia-cuda`: the kernels (`extern "ptx-kernel"` entry points), the
//!   [`device`] support module and a panic handler that traps.
//! - the host: only the items both sides must agree on (kernel entry names, block and tile
//!   constants, `__constant__` symbol names and sizes, `#[repr(C)]` parameter types), so the
//!   `cpu` crate depends on this crate instead of repeating literals.
//!
//! Each pattern lives in one module, a folder with one file per kernel family for the larger
//! ones ([`reduce`], [`convolution`]). The names match the `cpu` modules, the tests and the
//! docs: [`reduce`] holds both the reductions and the square sums, as `cpu::reduce` does.
#![no_std]
// The kernels exist only in the device build (`nvptx64-nvidia-cuda`), so on the host the links
// that the shared docs make to them cannot resolve. Those links are checked by the device doc
// build (`cargo doc -p gpu --target nvptx64-nvidia-cuda`, in `.ci/run`), where every kernel is.
#![cfg_attr(not(target_arch = "nvptx64"), allow(rustdoc::broken_intra_doc_links))]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        asm_experimental_arch,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        link_llvm_intrinsics
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
// The host build sees each kernel as its typed handle (`#[kernel]` drops the body there), so the
// kernels' imports and private helpers are used by the device build alone.
#![cfg_attr(not(target_arch = "nvptx64"), allow(unused_imports, dead_code))]

pub mod convolution;

pub mod md;
pub mod memory;
pub mod multi_gpu;
pub mod reduce;
pub mod saxpy;
pub mod smoke;
pub mod transpose;
pub mod vector_add;
