//! Launch-configuration helpers shared by the launchers: grid sizing with validation, and the
//! "grid x block" text the tables print.

use cudarc::driver::LaunchConfig;

use crate::error::{Error, Result};

/// Largest `gridDim.x` CUDA allows (2^31 - 1).
pub const MAX_GRID_X: u64 = (1 << 31) - 1;
/// Largest number of threads in a block.
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// Alignment in bytes of the 16-byte (`float4`, PTX `ld.global.v4` / `st.global.v4`) accesses
/// of the `*_vec4` kernels. Device allocations are 256-byte aligned; a view of `f32` starting
/// at element `k` of one is 16-byte aligned when `k % 4 == 0`.
pub const VEC4_ALIGNMENT: usize = 16;

/// Whether `address` is a multiple of `alignment` (a power of two).
pub fn is_aligned(address: u64, alignment: usize) -> bool {
    address.is_multiple_of(alignment as u64)
}

/// Checks that the buffer `what` of a launch of `kernel` starts at a multiple of `alignment`
/// bytes.
///
/// # Errors
/// [`Error::Misaligned`] naming the kernel, the buffer, its address and the alignment.
pub fn check_aligned(
    kernel: &'static str,
    what: &'static str,
    address: u64,
    alignment: usize,
) -> Result<()> {
    if is_aligned(address, alignment) {
        Ok(())
    } else {
        Err(Error::Misaligned {
            kernel,
            what,
            address,
            alignment,
        })
    }
}

/// Blocks of `per_block` elements needed to cover `n` elements: `ceil(n / per_block)`.
///
/// # Errors
/// [`Error::GridTooLarge`] if that exceeds [`MAX_GRID_X`]; [`Error::InvalidBlock`] if
/// `per_block` is 0.
pub fn blocks_to_cover(kernel: &'static str, n: usize, per_block: u64) -> Result<u32> {
    blocks_along(kernel, "x", n, per_block, MAX_GRID_X)
}

fn blocks_along(
    kernel: &'static str,
    axis: &'static str,
    n: usize,
    per_block: u64,
    limit: u64,
) -> Result<u32> {
    if per_block == 0 {
        return Err(Error::InvalidBlock {
            kernel,
            block: 0,
            requirement: "a block must cover at least one element",
        });
    }
    let blocks = (n as u64).div_ceil(per_block);
    if blocks > limit {
        return Err(Error::GridTooLarge {
            kernel,
            axis,
            elements: n as u64,
            blocks,
            limit,
        });
    }
    Ok(blocks as u32)
}

/// Checks a one-dimensional block size: `1..=1024`, and whole warps if `whole_warps`.
///
/// # Errors
/// [`Error::InvalidBlock`] naming the block and the rule.
pub fn check_block(kernel: &'static str, block: u32, whole_warps: bool) -> Result<()> {
    if block == 0 || block > MAX_BLOCK_THREADS {
        return Err(Error::InvalidBlock {
            kernel,
            block,
            requirement: "a block has 1..=1024 threads",
        });
    }
    if whole_warps && !block.is_multiple_of(32) {
        return Err(Error::InvalidBlock {
            kernel,
            block,
            requirement: "the kernel needs whole warps (a multiple of 32 threads)",
        });
    }
    Ok(())
}

/// A one-dimensional launch: `grid` blocks of `block` threads, `shared_mem_bytes` of dynamic
/// shared memory.
pub fn linear(grid: u32, block: u32, shared_mem_bytes: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes,
    }
}

/// Largest grid dimension along y (and z) the hardware accepts.
pub const MAX_GRID_Y: u64 = 65_535;

/// A 2D launch of `block_dim` threads whose grid covers `along_x` x `along_y` items, `per_x` x
/// `per_y` of them per block; `shape` names the problem in the error.
///
/// # Errors
/// [`Error::GridTooLarge`] if a dimension needs more blocks than a grid holds (more than
/// [`MAX_GRID_Y`] along y).
pub fn covering_2d(
    kernel: &'static str,
    (along_x, along_y): (usize, usize),
    (per_x, per_y): (u64, u64),
    block_dim: (u32, u32, u32),
) -> Result<LaunchConfig> {
    let gx = blocks_along(kernel, "x", along_x, per_x, MAX_GRID_X)?;
    let gy = blocks_along(kernel, "y", along_y, per_y, MAX_GRID_Y)?;
    Ok(LaunchConfig {
        grid_dim: (gx, gy, 1),
        block_dim,
        shared_mem_bytes: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covering_grids() {
        assert_eq!(blocks_to_cover("k", 0, 256).unwrap(), 0);
        assert_eq!(blocks_to_cover("k", 1, 256).unwrap(), 1);
        assert_eq!(blocks_to_cover("k", 257, 256).unwrap(), 2);
        assert!(blocks_to_cover("k", usize::MAX, 1).is_err());
        assert!(blocks_to_cover("k", 5, 0).is_err());
    }

    #[test]
    fn alignment_checks() {
        assert!(is_aligned(0x7f00_0000_0100, VEC4_ALIGNMENT));
        assert!(!is_aligned(0x7f00_0000_0104, VEC4_ALIGNMENT));
        assert!(check_aligned("k", "x", 0x1000, 16).is_ok());
        assert!(matches!(
            check_aligned("k", "x", 0x1008, 16),
            Err(Error::Misaligned {
                what: "x",
                address: 0x1008,
                alignment: 16,
                ..
            })
        ));
    }

    #[test]
    fn block_checks() {
        assert!(check_block("k", 256, true).is_ok());
        assert!(check_block("k", 0, false).is_err());
        assert!(check_block("k", 2048, false).is_err());
        assert!(matches!(
            check_block("k", 48, true),
            Err(Error::InvalidBlock { block: 48, .. })
        ));
    }

    #[test]
    fn covering_2d_grids() {
        let cfg = covering_2d("k", (100, 33), (32, 8), (32, 8, 1)).unwrap();
        assert_eq!((cfg.grid_dim, cfg.block_dim), ((4, 5, 1), (32, 8, 1)));
        let err = covering_2d("k", (1, 65_536 * 8 + 1), (32, 8), (32, 8, 1)).unwrap_err();
        assert!(
            matches!(
                err,
                Error::GridTooLarge {
                    axis: "y",
                    blocks: 65_537,
                    limit: MAX_GRID_Y,
                    ..
                }
            ),
            "{err}"
        );
    }
}
