//! `gpu_std`: device support for kernels written in Rust and compiled by rustc's
//! `nvptx64-nvidia-cuda` backend, this project's counterpart of rust-cuda's `cuda_std`.
//!
//! Everything a kernel needs beyond plain Rust: the [`kernel`](macro@kernel) attribute (a PTX
//! entry on the device, a typed handle in `host` on the host, launch bounds as its argument),
//! thread, block and grid indices, barriers, shared memory (dynamic and statically sized),
//! `__constant__` memory, warp shuffles, atomics, the SM clock and the panic handler; and
//! [`DisjointSlice`], the output of a safe kernel, which a thread writes only at its own
//! [`ThreadIndex`] ([`disjoint`]). Any
//! kernel crate may depend on it (`gpu` does). `unsafe` stays in this crate, behind small
//! functions that read like their CUDA C++ counterparts (`threadIdx.x` is
//! [`thread_idx()`]`.x`, `__syncthreads()` is [`syncthreads()`], `__shfl_down_sync` is
//! [`shfl_down_sync`], `atomicAdd` is [`atomic_add`]).
//!
//! Every public function exists in both builds with the same signature, so code that calls
//! it type-checks on the host too; where the body is device-only ([`gpu_only`](macro@gpu_only))
//! the host's panics. The constants ([`WARP_SIZE`], [`FULL_MASK`]), the
//! [`constant_memory!`](crate::constant_memory) declarations and the atomic floats of
//! [`atomic`] also work on the host.
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
//!
//! # cuda_std's names
//!
//! Beside its own CUDA-like spelling, the crate offers the documented API of rust-cuda's
//! `cuda_std` 0.2.2 under cuda_std's module paths, names and signatures, so that a kernel
//! written against it builds here with the dependency line
//! `cuda_std = { package = "gpu_std", path = ".../gpu/std" }` (`#[kernel]` and
//! [`shared_array!`](crate::shared_array) find the renamed crate). What else a ported crate
//! changes is its crate attributes: cuda_std's `register_attr(nvvm_internal)` belongs to
//! rustc_codegen_nvvm; here a kernel crate is `#![no_std]` with
//! `#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]` (the PTX
//! entry of `#[kernel]`, the inline PTX of `shared_array!`), as `gpu/src/lib.rs` shows.
//! `gpu::cuda_std_style` holds two kernels written against these names alone.
//!
//! Everything below is `#[inline(always)]` over the same PTX as the crate's own forms, which
//! stay as they are. The 3- and 2-component results are [`Dim3`] and [`Dim2`] rather than
//! cuda_std's `vek::Vec3<u32>` / `vek::Vec2<u32>`: the same public `x`, `y`, `z` fields, and
//! vek's `new`, `zero` and `product`. (`vek` 0.15 without default features does build for
//! nvptx64 with `-Zbuild-std=core`, but it would bring itself and seven more crates into both
//! builds, and about ten seconds of compilation into the device build, for three fields.)
//!
//! | cuda_std 0.2.2 | here | notes |
//! |---|---|---|
//! | `#[kernel]`, `#[gpu_only]` | [`kernel`](macro@crate::kernel), [`gpu_only`](macro@crate::gpu_only) | a kernel is a `pub unsafe fn` of `Copy` scalars, raw pointers and `&[T]`, or a safe `pub fn` of scalars, `&[T]` and [`DisjointSlice<T>`](DisjointSlice); generic with `instantiate(..)` |
//! | `thread::{thread_idx,block_idx,block_dim,grid_dim}_{x,y,z}() -> u32` | [`thread`]`::` same names | `%tid`, `%ctaid`, `%ntid`, `%nctaid` |
//! | `thread::{thread_idx,block_idx,block_dim,grid_dim}() -> Vec3<u32>` | [`thread`]`::` same names `-> `[`Dim3`] | the crate-root functions of the same names |
//! | `thread::{index, index_1d}() -> u32` | [`thread::index`], [`thread::index_1d`] | `u32`, wrapping past 2^32 threads (the `usize` forms: [`global_index_x`]) |
//! | `thread::index_2d() -> Vec2<u32>`, `index_3d() -> Vec3<u32>` | [`thread::index_2d`] `-> `[`Dim2`], [`thread::index_3d`] `-> `[`Dim3`] | |
//! | `thread::{first, warp_size}` | [`thread::first`], [`thread::warp_size`] | `warp_size` is the constant [`WARP_SIZE`] |
//! | `thread::sync_threads()` | [`thread::sync_threads`] | [`syncthreads`], `bar.sync 0` |
//! | `thread::sync_threads_{count,and,or}(u32) -> u32` | [`thread::sync_threads_count`], [`thread::sync_threads_and`], [`thread::sync_threads_or`] | `bar.red.{popc,and,or}` |
//! | `thread::{grid_fence, device_fence, system_fence}` | [`thread::grid_fence`], [`thread::device_fence`], [`thread::system_fence`] | `membar.gl`, `membar.gl`, `membar.sys`; 0.2.2 emits `membar.cta` for `grid_fence` despite its "grid level" docs |
//! | `thread::nanosleep(u32)` | [`thread::nanosleep`] | `nanosleep.u32` |
//! | `shared_array![T; N] -> *mut T` | [`shared_array!`](crate::shared_array) | on [`static_shared!`](crate::static_shared)'s declarations, with a generated name; any sized `T` |
//! | `shared::dynamic_shared_mem::<T>() -> *mut T` | [`shared::dynamic_shared_mem`] | the address of [`DynamicShared`] |
//! | `warp::sync_warp(mask)` (`unsafe`), `warp::lane_id()` | [`warp::sync_warp`], [`warp::lane_id`] | [`syncwarp`], `%laneid`; the module also holds the shuffles ([`shfl_down_sync`], ...) |
//! | `atomic::{AtomicF32, AtomicF64}` | [`atomic::AtomicF32`], [`atomic::AtomicF64`] | `new`, `into_inner`, `fetch_{add,sub,and,or,xor}`, `load`, `store` with an `Ordering`; device scope |
//! | `atomic::{BlockAtomicF32, BlockAtomicF64}` | [`atomic::BlockAtomicF32`], [`atomic::BlockAtomicF64`] | block scope, `unsafe` methods |
//! | `atomic::{SystemAtomicF32, SystemAtomicF64}` | [`atomic::SystemAtomicF32`], [`atomic::SystemAtomicF64`] | system scope (`.sys`); 0.2.2 gives them device scope |
//! | `atomic::mid::*` | [`atomic::mid`]`::` same names | `atomic_fetch_{add,sub,and,or,xor,exch}_{u32,u64,i32,i64,f32,f64}_{scope}`, `atomic_fetch_{min,max}_{u32,u64,i32,i64}_{scope}`, `atomic_{load,store}_{32,64}_{scope}`, `{block,device,system}_thread_fence`; sm_70 forms only |
//! | `mem::{dynamic_smem_size, total_smem_size}` | [`mem::dynamic_smem_size`], [`mem::total_smem_size`] | `%dynamic_smem_size`, `%total_smem_size` |
//! | `misc::{clock, breakpoint}` | [`misc::clock`], [`misc::breakpoint`] | [`clock64`], `brkpt` |
//! | `prelude` | [`prelude`] | `kernel` and `thread` only |
//!
//! The atomic floats work on the host too (emulated with `core`'s atomics, as in cuda_std);
//! every other function above exists on the host with the same signature and panics there.
//! On the GPU an atomic float that lives in local memory (a kernel's stack variable), where
//! PTX atomics are undefined, is updated with plain accesses: its methods are safe.
//!
//! Not offered:
//!
//! | cuda_std 0.2.2 | why |
//! |---|---|
//! | `vek` (re-exported), `Vec2` / `Vec3` results | [`Dim2`] / [`Dim3`] instead (above) |
//! | `#[address_space(...)]`, `#[externally_visible]` | attributes of rustc_codegen_nvvm (`nvvm_internal`); rustc's nvptx backend has no address-space attribute: use [`shared_array!`](crate::shared_array) / [`static_shared!`](crate::static_shared) and [`constant_memory!`](crate::constant_memory) |
//! | `io`: `print!`, `println!`, `assert_eq!`, `assert_ne!` | they call `vprintf` / `__assertfail`, external functions the PTX would have to leave to the driver to link; the lab's PTX is self-contained (`tests/ptx.rs`). `core`'s `assert_eq!` traps instead |
//! | `mem::GLOBAL_ALLOCATOR` (`malloc` / `free`), `alloc` in the prelude | the same external functions; no kernel here allocates |
//! | `GpuFloat`, `FloatExt`, `intrinsics` | libdevice bindings, which rustc_codegen_nvvm links and rustc's backend does not; see [`math`] |
//! | `half`, `f16`, `bf16` | a dependency no kernel here needs |
//! | `cfg::ComputeCapability` | reads `CUDA_ARCH` from cuda_builder; here the architecture is the builder's `-C target-cpu=sm_XX` |
//! | `ptr` (`AddressSpace`, `is_in_address_space`, `convert_*`) | `cvta.to.*` yields a state-space address, which Rust would dereference as a generic pointer |
//! | `misc::profiler_counter` | PTX `pmevent` takes an immediate; 0.2.2 passes a register |
//! | `atomic::intrinsics` | raw wrappers, several of which `ptxas` rejects (`atom.sub`, `atom.and.f32`, `atom.inc` without its operand); [`atomic::mid`] and [`atomic_add`] and its siblings cover them |
//! | `rt` | commented out in 0.2.2 (work in progress) |
//! | `cg` (cooperative groups), warp shuffles, votes and matches (`warp_shuffle_*`, `warp_vote_*`, `warp_match_*`, `activemask`, `warp_reduce`) | not in 0.2.2: later cuda_std, on git; the shuffles are [`shfl_down_sync`] and its siblings, the warp vote [`ballot_sync`], a block vote is [`syncthreads_or`] |

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

// `#[kernel]` refers to this crate as `::gpu_std`, here as in any crate that depends on it.
extern crate self as gpu_std;
pub use gpu_std_macros::{DeviceCopy, gpu_only, kernel};

#[doc(hidden)]
pub use gpu_std_macros::__shared_array;

// The host build reads PTX text (`host::entry_params`), into `String`s and `Vec`s.
#[cfg(not(target_arch = "nvptx64"))]
extern crate alloc;

// The host build's unit tests use `std` (threads for the atomics' host emulation).
#[cfg(test)]
extern crate std;

pub mod atomic;
mod constant;
pub mod disjoint;
#[cfg(not(target_arch = "nvptx64"))]
pub mod host;
mod index;
mod launch;
#[doc(hidden)]
pub use launch::below_min_sm as __below_min_sm;
pub mod math;
pub mod mem;
mod memory;
pub mod misc;
pub mod mma;
#[cfg(target_arch = "nvptx64")]
mod panic;
pub mod reduce;
pub mod shared;
mod sync;
pub mod thread;
pub mod warp;

/// cuda_std's prelude, as far as it is offered here: `use gpu_std::prelude::*;` brings the
/// [`kernel`](macro@kernel) attribute and the [`thread`] module. (cuda_std's
/// also holds `f16`, `print!`, `println!`, its own `assert_eq!` / `assert_ne!` and `alloc`'s
/// types, which are not offered: see the crate docs. `core`'s `assert_eq!`, always in scope,
/// traps on failure.)
pub mod prelude {
    pub use crate::kernel;
    pub use crate::thread;
}

pub use atomic::{
    AtomicAdd, AtomicMinMax, ReduceAdd, atomic_add, atomic_add_acq_rel, atomic_cas, atomic_max,
    atomic_min, atomic_shared_add, red_global_add, red_shared_add,
};
pub use constant::{ConstWord, ConstantSymbol};
pub use disjoint::{DisjointSlice, GridStride, ThreadIndex, grid_stride, thread_index};
pub use index::{
    Dim2, Dim3, block_dim, block_idx, global_index_x, global_index_y, grid_dim, grid_stride_x,
    lane_id, thread_idx, warp_id,
};
pub use memory::{
    RelaxedLoad, clock64, copy_async_16, copy_async_commit, copy_async_wait_all,
    copy_async_wait_prior, globaltimer, load_global_ca, load_global_cg, load_global_nc,
    load_global_nc_v4_u32, load_global_v4, load_global_v4_u32, load_relaxed_gpu,
    load_relaxed_gpu_words, load_shared_v4_u32, store_global_v4, store_global_v4_u32,
    store_shared_v4_u32, tex1d_fetch_f32,
};
pub use shared::{DynamicShared, SharedArray};
#[doc(hidden)]
pub use shared::{shared_window, static_shared_host};
pub use sync::{syncthreads, syncthreads_or, syncwarp, threadfence, threadfence_block};
pub use warp::{
    Pod, WarpShuffle, ballot_sync, lanemask_lt, match_any_sync, match_bits_sync, shfl_down_sync,
    shfl_idx_sync, shfl_up_sync, shfl_xor_sync,
};

/// Plain data a kernel may take by value: copied bit for bit into the launch's parameter
/// space (rust-cuda's `DeviceCopy`), and the element type of the buffers a safe kernel takes.
///
/// Implemented for the primitives and arrays of them; `#[derive(DeviceCopy)]` implements it,
/// with no `unsafe`, for a `#[repr(C)]` struct of such fields (and in the host build cudarc's
/// `DeviceRepr` and `ValidAsZeroBits` too, so the struct is a device buffer's element).
///
/// ```
/// #[derive(Clone, Copy, Debug, Default, PartialEq, gpu_std::DeviceCopy)]
/// #[repr(C)]
/// pub struct Particle {
///     pub position: [f32; 3],
///     pub mass: f32,
/// }
/// /// A generic one: `DeviceCopy` where its fields are.
/// #[derive(Clone, Copy, gpu_std::DeviceCopy)]
/// #[repr(C)]
/// pub struct Pair<V> {
///     pub value: V,
///     pub index: u32,
/// }
/// fn plain<T: gpu_std::DeviceCopy>() {}
/// plain::<Particle>();
/// plain::<Pair<f64>>();
/// plain::<[Pair<Particle>; 4]>();
/// ```
///
/// Refused: a struct without `#[repr(C)]` or `#[repr(transparent)]` (host and device must lay
/// it out alike; Rust's default layout promises nothing across targets),
///
/// ```compile_fail
/// #[derive(Clone, Copy, gpu_std::DeviceCopy)]
/// pub struct NoRepr {
///     pub x: f32,
/// }
/// ```
///
/// an enum (a device write could leave a bit pattern that is no variant),
///
/// ```compile_fail
/// #[derive(Clone, Copy, gpu_std::DeviceCopy)]
/// #[repr(C)]
/// pub enum Kind {
///     A,
///     B,
/// }
/// ```
///
/// and a field that is not `DeviceCopy` (a reference: the device cannot follow it).
///
/// ```compile_fail,E0277
/// #[derive(Clone, Copy, gpu_std::DeviceCopy)]
/// #[repr(C)]
/// pub struct Borrowed {
///     pub x: &'static f32,
/// }
/// ```
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
device_copy!(
    u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, f32, f64, bool
);

// SAFETY: `N` elements of a `DeviceCopy` type, laid out one after another on both targets.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}

/// Runs `$body` with `$i` bound to each of `0..$n` (`$n` a constant up to 32), one copy per
/// index: a loop written out, so that every index into a per-thread array in it is a constant
/// and the array stays in registers (LLVM leaves a loop with a long body rolled, and the arrays
/// it indexes then go to local memory).
///
/// ```ignore
/// let mut keys = [0u32; 16];
/// gpu_std::unroll!(i < 16 => { keys[i] = *input.add(32 * i + lane); });
/// ```
#[macro_export]
macro_rules! unroll {
    ($i:ident < $n:expr => $body:block) => {
        $crate::unroll!(@ $i, $n, $body,
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31)
    };
    (@ $i:ident, $n:expr, $body:block, $($k:literal)*) => {
        const _: () = assert!($n <= 32, "unroll! writes out at most 32 copies");
        $(
            #[allow(clippy::reversed_empty_ranges, unused_comparisons)]
            if $k < $n {
                let $i: usize = $k;
                $body
            }
        )*
    };
}
