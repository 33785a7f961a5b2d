//! cuda_std 0.2's `thread` module: indices, barriers and fences under cuda_std's names and
//! signatures, so that a kernel written against `cuda_std::thread` builds here unchanged.
//!
//! Each function is a thin `#[inline(always)]` layer over the same PTX as the crate-root forms
//! ([`thread_idx()`](crate::thread_idx), [`syncthreads`](crate::syncthreads),
//! [`threadfence`](crate::threadfence), ...), which stay the lab's own spelling. Where
//! cuda_std returns `vek::Vec3<u32>` / `vek::Vec2<u32>`, these return [`Dim3`] / [`Dim2`]:
//! the same `x`, `y`, `z` fields (see the crate docs for why not `vek`).
//!
//! Differences from cuda_std 0.2.2, both in the safe direction:
//! - [`grid_fence`] is `membar.gl` (GPU scope), what its documentation promises ("a memory
//!   fence at the grid level"); cuda_std 0.2.2's `libintrinsics` emits `membar.cta`, a
//!   block-scope fence, for it. PTX has no scope between the block and the GPU, so it is the
//!   same fence as [`device_fence`].
//! - [`index`], [`index_1d`], [`index_2d`] and [`index_3d`] compute in `u32`, as cuda_std
//!   does, with explicit wrapping: launches of more than 2^32 threads wrap (use
//!   [`global_index_x`](crate::global_index_x), a `usize`, there).

pub use crate::index::{Dim2, Dim3, block_dim, block_idx, grid_dim, thread_idx};

#[cfg(target_arch = "nvptx64")]
use core::arch::nvptx;

macro_rules! special_register {
    ($($(#[$meta:meta])* $name:ident => $intrinsic:ident;)*) => {$(
        $(#[$meta])*
        #[inline(always)]
        #[crate::gpu_only]
        pub fn $name() -> u32 {
            // SAFETY: reading a special register has no side effects and is valid in any
            // kernel.
            unsafe { nvptx::$intrinsic() as u32 }
        }
    )*};
}

special_register! {
    /// `threadIdx.x`: this thread's x index within its block (`%tid.x`).
    thread_idx_x => _thread_idx_x;
    /// `threadIdx.y` (`%tid.y`).
    thread_idx_y => _thread_idx_y;
    /// `threadIdx.z` (`%tid.z`).
    thread_idx_z => _thread_idx_z;
    /// `blockIdx.x`: this block's x index within the grid (`%ctaid.x`).
    block_idx_x => _block_idx_x;
    /// `blockIdx.y` (`%ctaid.y`).
    block_idx_y => _block_idx_y;
    /// `blockIdx.z` (`%ctaid.z`).
    block_idx_z => _block_idx_z;
    /// `blockDim.x`: threads per block along x (`%ntid.x`).
    block_dim_x => _block_dim_x;
    /// `blockDim.y` (`%ntid.y`).
    block_dim_y => _block_dim_y;
    /// `blockDim.z` (`%ntid.z`).
    block_dim_z => _block_dim_z;
    /// `gridDim.x`: blocks per grid along x (`%nctaid.x`).
    grid_dim_x => _grid_dim_x;
    /// `gridDim.y` (`%nctaid.y`).
    grid_dim_y => _grid_dim_y;
    /// `gridDim.z` (`%nctaid.z`).
    grid_dim_z => _grid_dim_z;
}

/// The thread's index in the whole grid, counting 1D, 2D and 3D blocks and grids: unique for
/// every thread of the launch, whatever its shape (blocks in x-major order, threads in x-major
/// order within a block). `u32`, wrapping past 2^32 threads.
///
/// For a one-dimensional launch [`index_1d`] is the same number with less arithmetic.
#[inline(always)]
#[crate::gpu_only]
pub fn index() -> u32 {
    let (grid, block, dim, thread) = (grid_dim(), block_idx(), block_dim(), thread_idx());
    let block_id = block
        .x
        .wrapping_add(block.y.wrapping_mul(grid.x))
        .wrapping_add(grid.x.wrapping_mul(grid.y).wrapping_mul(block.z));
    block_id
        .wrapping_mul(dim.product())
        .wrapping_add(thread.z.wrapping_mul(dim.x.wrapping_mul(dim.y)))
        .wrapping_add(thread.y.wrapping_mul(dim.x))
        .wrapping_add(thread.x)
}

/// `threadIdx.x + blockIdx.x * blockDim.x`: the thread's index along x in the grid (`u32`,
/// wrapping past 2^32 threads). The element index of a one-dimensional launch.
#[inline(always)]
#[crate::gpu_only]
pub fn index_1d() -> u32 {
    thread_idx_x().wrapping_add(block_idx_x().wrapping_mul(block_dim_x()))
}

/// The thread's `(x, y)` index in the grid: [`index_1d`] along x and along y.
#[inline(always)]
#[crate::gpu_only]
pub fn index_2d() -> Dim2 {
    Dim2::new(
        thread_idx_x().wrapping_add(block_idx_x().wrapping_mul(block_dim_x())),
        thread_idx_y().wrapping_add(block_idx_y().wrapping_mul(block_dim_y())),
    )
}

/// The thread's `(x, y, z)` index in the grid: [`index_1d`] along each axis.
#[inline(always)]
#[crate::gpu_only]
pub fn index_3d() -> Dim3 {
    Dim3::new(
        thread_idx_x().wrapping_add(block_idx_x().wrapping_mul(block_dim_x())),
        thread_idx_y().wrapping_add(block_idx_y().wrapping_mul(block_dim_y())),
        thread_idx_z().wrapping_add(block_idx_z().wrapping_mul(block_dim_z())),
    )
}

/// Whether this is thread `(0, 0, 0)` of block `(0, 0, 0)`: true in exactly one thread of the
/// launch (the first by index, not the first to run), for work done once.
#[inline(always)]
#[crate::gpu_only]
pub fn first() -> bool {
    block_idx() == Dim3::zero() && thread_idx() == Dim3::zero()
}

/// Threads in a warp: [`WARP_SIZE`](crate::WARP_SIZE), 32 on every NVIDIA GPU so far.
/// (cuda_std reads `%warpsize`, which holds the same number; a constant lets the compiler fold
/// it.)
#[inline(always)]
pub fn warp_size() -> u32 {
    crate::WARP_SIZE
}

/// Block-wide barrier (`__syncthreads()`, PTX `bar.sync 0`): waits until every thread of the
/// block reaches it; shared- and global-memory writes before it are visible to the block
/// after it. Every thread of the block must reach it (not inside a branch some skip). The
/// crate-root spelling is [`syncthreads`](crate::syncthreads).
#[inline(always)]
#[crate::gpu_only]
pub fn sync_threads() {
    crate::syncthreads()
}

/// [`sync_threads`] that also returns how many threads of the block passed a non-zero
/// `predicate` (`__syncthreads_count`, PTX `bar.red.popc.u32`).
#[inline(always)]
#[crate::gpu_only]
pub fn sync_threads_count(predicate: u32) -> u32 {
    let count: u32;
    // SAFETY: as for `sync_threads`; the asm clobbers memory so accesses stay on their side.
    unsafe {
        core::arch::asm!(
            "{{\n\t.reg .pred p;\n\tsetp.ne.u32 p, {x}, 0;\n\tbar.red.popc.u32 {r}, 0, p;\n\t}}",
            x = in(reg32) predicate, r = out(reg32) count,
            options(nostack));
    }
    count
}

/// [`sync_threads`] that also returns 1 if every thread of the block passed a non-zero
/// `predicate`, else 0 (`__syncthreads_and`, PTX `bar.red.and.pred`).
#[inline(always)]
#[crate::gpu_only]
pub fn sync_threads_and(predicate: u32) -> u32 {
    let all: u32;
    // SAFETY: as for `sync_threads`; the asm clobbers memory so accesses stay on their side.
    unsafe {
        core::arch::asm!(
            "{{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, {x}, 0;\n\tbar.red.and.pred q, 0, p;\n\tselp.u32 {r}, 1, 0, q;\n\t}}",
            x = in(reg32) predicate, r = out(reg32) all,
            options(nostack));
    }
    all
}

/// [`sync_threads`] that also returns 1 if any thread of the block passed a non-zero
/// `predicate`, else 0 (`__syncthreads_or`, PTX `bar.red.or.pred`; the crate-root
/// [`syncthreads_or`](crate::syncthreads_or) takes and returns `bool`).
#[inline(always)]
#[crate::gpu_only]
pub fn sync_threads_or(predicate: u32) -> u32 {
    crate::syncthreads_or(predicate != 0) as u32
}

/// Memory fence for every thread of the grid (PTX `membar.gl`, GPU scope): this thread's
/// writes before it are seen by the grid before its writes after it. Not an execution barrier:
/// nothing waits for other threads. The same fence as [`device_fence`] (see the module docs
/// for cuda_std 0.2.2's `membar.cta`).
#[inline(always)]
#[crate::gpu_only]
pub fn grid_fence() {
    crate::threadfence()
}

/// Memory fence for the device (`__threadfence()`, PTX `membar.gl`).
#[inline(always)]
#[crate::gpu_only]
pub fn device_fence() {
    crate::threadfence()
}

/// Memory fence for the system: the device, the host and peer devices
/// (`__threadfence_system()`, PTX `membar.sys`), for data shared through mapped host memory
/// or peer access.
#[inline(always)]
#[crate::gpu_only]
pub fn system_fence() {
    // SAFETY: a fence has no preconditions; it clobbers memory so accesses stay on their side.
    unsafe { core::arch::asm!("membar.sys;", options(nostack)) }
}

/// Suspends the thread for about `nanos` nanoseconds (`__nanosleep`, PTX `nanosleep.u32`,
/// sm_70+; the hardware caps one sleep at about a millisecond): the back-off of a spin loop.
#[inline(always)]
#[crate::gpu_only]
pub fn nanosleep(nanos: u32) {
    // SAFETY: only delays the thread. Not `nomem`: loads in a spin loop stay on their side.
    unsafe { core::arch::asm!("nanosleep.u32 {n};", n = in(reg32) nanos, options(nostack)) }
}
