//! `gpu_std`: device support for kernels written in Rust and compiled by rustc's
//! `nvptx64-nvidia-cuda` backend, this project's counterpart of rust-cuda's `cuda_std`.
//!
//! Everything a kernel needs beyond plain Rust: thread, block and grid indices, barriers,
//! shared memory (dynamic and statically sized), `__constant__` memory, warp shuffles,
//! atomics, the SM clock, launch bounds ([`launch_bounds!`](crate::launch_bounds)) and the
//! panic handler. `unsafe` stays in this module, behind small
//! functions that read like their CUDA C++ counterparts (`threadIdx.x` is
//! [`thread_idx()`]`.x`, `__syncthreads()` is [`syncthreads()`], `__shfl_down_sync` is
//! [`shfl_down_sync`], `atomicAdd` is [`atomic_add`]).
//!
//! Only the constants ([`WARP_SIZE`], [`FULL_MASK`]) and the [`constant_memory!`](crate::constant_memory) declarations
//! exist on the host; the rest is compiled for `nvptx64` alone.
//!
//! How each piece reaches PTX (rustc's nvptx backend has no `__shared__` or `__constant__`
//! attributes):
//! - indices and `bar.sync` come from `core::arch::nvptx`;
//! - dynamic shared memory is `core::intrinsics::gpu::gpu_launch_sized_workgroup_mem`
//!   (`extern __shared__`), so loads through it stay `ld.shared`;
//! - statically sized shared arrays and `__constant__` arrays are module-level PTX
//!   declarations written with `global_asm!`, addressed with inline PTX;
//! - warp shuffles are the `llvm.nvvm.shfl.sync.*` intrinsics; atomics, `bar.warp.sync`,
//!   fences and `%clock64` are inline PTX with CUDA's default semantics (relaxed, GPU scope),
//!   except where the name says otherwise (`atomic_add_acq_rel`, `load_relaxed_gpu`).

#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        stdarch_nvptx,
        asm_experimental_arch,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        link_llvm_intrinsics
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
// The host build keeps the signatures (for code that calls them to type-check) but not the
// device bodies, which alone read some private items.
#![cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]

/// Threads in a warp on every NVIDIA GPU so far (`warpSize`).
pub const WARP_SIZE: u32 = 32;

/// Member mask naming all 32 lanes of a warp (`0xffffffff` in CUDA's `*_sync` intrinsics).
pub const FULL_MASK: u32 = 0xffff_ffff;

pub use gpu_std_macros::{gpu_only, kernel};

mod atomic;
mod constant;
#[cfg(not(target_arch = "nvptx64"))]
pub mod host;
mod index;
mod launch;
pub mod math;
mod memory;
#[cfg(target_arch = "nvptx64")]
mod panic;
mod shared;
mod sync;
mod warp;

pub use atomic::{
    AtomicAdd, AtomicMinMax, atomic_add, atomic_add_acq_rel, atomic_cas, atomic_max, atomic_min,
};
pub use constant::ConstWord;
pub use index::{
    Dim3, block_dim, block_idx, global_index_x, global_index_y, grid_dim, grid_stride_x, lane_id,
    thread_idx, warp_id,
};
pub use memory::{
    RelaxedLoad, clock64, load_global_ca, load_global_cg, load_global_nc, load_global_nc_v4_u32,
    load_global_v4, load_global_v4_u32, load_relaxed_gpu, store_global_v4, store_global_v4_u32,
    tex1d_fetch_f32,
};
#[doc(hidden)]
pub use shared::{shared_window, static_shared_host};
pub use shared::{DynamicShared, SharedArray};
pub use sync::{syncthreads, syncthreads_or, syncwarp, threadfence, threadfence_block};
pub use warp::{WarpShuffle, shfl_down_sync, shfl_idx_sync, shfl_up_sync, shfl_xor_sync};

/// Plain data a kernel may take by value: copied bit for bit into the launch's parameter
/// space (rust-cuda's `DeviceCopy`).
///
/// # Safety
/// The type is `Copy`, has no pointers the device cannot follow (references, boxes), and every
/// bit pattern the host writes is a valid value on the device: `#[repr(C)]` (or a primitive) so
/// both sides agree on its layout.
pub unsafe trait DeviceCopy: Copy {}

macro_rules! device_copy {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive: `Copy`, no pointers, one layout on host and device.
        unsafe impl DeviceCopy for $t {}
    )*};
}
device_copy!(u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, f32, f64, bool);
