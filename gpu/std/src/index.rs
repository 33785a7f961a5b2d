//! Thread, block and grid indices (CUDA's `threadIdx`, `blockIdx`, `blockDim`, `gridDim`).

#[cfg(target_arch = "nvptx64")]
use core::arch::nvptx;

/// A three-component launch index or extent, as CUDA's `uint3` / `dim3`.
///
/// Also what [`thread::thread_idx`](crate::thread::thread_idx) and the other `thread`
/// functions return where cuda_std 0.2 returns `vek::Vec3<u32>`: the same public `x`, `y`, `z`
/// fields, and vek's [`new`](Self::new), [`zero`](Self::zero) and [`product`](Self::product).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Fastest-varying component (consecutive `x` are consecutive lanes of a warp).
    pub x: u32,
    /// Second component.
    pub y: u32,
    /// Slowest-varying component.
    pub z: u32,
}

impl Dim3 {
    /// `(x, y, z)`.
    #[inline(always)]
    pub const fn new(x: u32, y: u32, z: u32) -> Self {
        Self { x, y, z }
    }

    /// `(0, 0, 0)`: the first thread of a block, the first block of a grid.
    #[inline(always)]
    pub const fn zero() -> Self {
        Self::new(0, 0, 0)
    }

    /// `x * y * z` (wrapping): threads per block for [`block_dim`], blocks per grid for
    /// [`grid_dim`].
    #[inline(always)]
    pub const fn product(self) -> u32 {
        self.x.wrapping_mul(self.y).wrapping_mul(self.z)
    }
}

/// A two-component index, what [`thread::index_2d`](crate::thread::index_2d) returns where
/// cuda_std 0.2 returns `vek::Vec2<u32>` (the same public `x`, `y` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dim2 {
    /// Fastest-varying component (the column of a row-major matrix).
    pub x: u32,
    /// Second component (the row).
    pub y: u32,
}

impl Dim2 {
    /// `(x, y)`.
    #[inline(always)]
    pub const fn new(x: u32, y: u32) -> Self {
        Self { x, y }
    }

    /// `(0, 0)`.
    #[inline(always)]
    pub const fn zero() -> Self {
        Self::new(0, 0)
    }

    /// `x * y` (wrapping).
    #[inline(always)]
    pub const fn product(self) -> u32 {
        self.x.wrapping_mul(self.y)
    }
}

/// This thread's index within its block (`threadIdx`); `x < block_dim().x`, and so on.
#[inline(always)]
#[crate::gpu_only]
pub fn thread_idx() -> Dim3 {
    // SAFETY: reading the `%tid` special registers has no side effects and is valid in any kernel.
    unsafe {
        Dim3 {
            x: nvptx::_thread_idx_x() as u32,
            y: nvptx::_thread_idx_y() as u32,
            z: nvptx::_thread_idx_z() as u32,
        }
    }
}

/// This block's index within the grid (`blockIdx`).
#[inline(always)]
#[crate::gpu_only]
pub fn block_idx() -> Dim3 {
    // SAFETY: reading the `%ctaid` special registers has no side effects.
    unsafe {
        Dim3 {
            x: nvptx::_block_idx_x() as u32,
            y: nvptx::_block_idx_y() as u32,
            z: nvptx::_block_idx_z() as u32,
        }
    }
}

/// Threads per block in each dimension (`blockDim`), as given at launch.
#[inline(always)]
#[crate::gpu_only]
pub fn block_dim() -> Dim3 {
    // SAFETY: reading the `%ntid` special registers has no side effects.
    unsafe {
        Dim3 {
            x: nvptx::_block_dim_x() as u32,
            y: nvptx::_block_dim_y() as u32,
            z: nvptx::_block_dim_z() as u32,
        }
    }
}

/// Blocks per grid in each dimension (`gridDim`), as given at launch.
#[inline(always)]
#[crate::gpu_only]
pub fn grid_dim() -> Dim3 {
    // SAFETY: reading the `%nctaid` special registers has no side effects.
    unsafe {
        Dim3 {
            x: nvptx::_grid_dim_x() as u32,
            y: nvptx::_grid_dim_y() as u32,
            z: nvptx::_grid_dim_z() as u32,
        }
    }
}

/// `blockIdx.x * blockDim.x + threadIdx.x`, computed in 64 bits so that grids covering more
/// than 2^32 elements do not wrap.
#[inline(always)]
#[crate::gpu_only]
pub fn global_index_x() -> usize {
    block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize
}

/// `blockIdx.y * blockDim.y + threadIdx.y`, in 64 bits.
#[inline(always)]
#[crate::gpu_only]
pub fn global_index_y() -> usize {
    block_idx().y as usize * block_dim().y as usize + thread_idx().y as usize
}

/// Threads in the whole grid along x (`blockDim.x * gridDim.x`): the step of a grid-stride loop.
#[inline(always)]
#[crate::gpu_only]
pub fn grid_stride_x() -> usize {
    block_dim().x as usize * grid_dim().x as usize
}

/// This thread's lane within its warp (`%laneid`, 0..32).
#[inline(always)]
#[crate::gpu_only]
pub fn lane_id() -> u32 {
    let lane: u32;
    // SAFETY: reads a special register; no memory access.
    unsafe {
        core::arch::asm!("mov.u32 {l}, %laneid;", l = out(reg32) lane,
            options(pure, nomem, nostack));
    }
    lane
}

/// This thread's warp within a one-dimensional block (`threadIdx.x / warpSize`).
#[inline(always)]
#[crate::gpu_only]
pub fn warp_id() -> u32 {
    thread_idx().x / super::WARP_SIZE
}
