//! The 1D convolutions to call: the `convolution_1d_tiled_vec4_w*` family, one entry per mask
//! width, generated from one const-generic body (beyond the seed).

use gpu_std::kernel;
use gpu_std::math::fmaf32;

use super::common::{F4, load_group, ordered_fma, ordered_load};
use super::{BLOCK_1D, C_MASK_1D, VEC4_HALO_1D, VEC4_TILE_1D};
use gpu_std::{block_dim, block_idx, grid_dim, store_global_v4, syncthreads, thread_idx};

/// The radius from which the 1D body emits its window loads and multiply-adds in program
/// order (17 taps and wider): below it the compiler's own schedule fits in 4 or more blocks
/// per SM and measured up to 1% faster on an H200; from it the ordered form takes 64
/// registers instead of up to 126.
const ORDERED_RADIUS_1D: usize = 8;
/// `float4` groups of a 1D vec4 tile.
const TILE_GROUPS_1D: usize = VEC4_TILE_1D / 4;
/// `float4` groups of each 1D halo.
const HALO_GROUPS_1D: usize = VEC4_HALO_1D / 4;
/// `float4` groups of the interior each thread stages per tile.
const GROUPS_PER_THREAD_1D: usize = TILE_GROUPS_1D / BLOCK_1D as usize;

/// Loads into registers what thread `t` stages for tile `tile`: the interior groups
/// `t + h B` (`h < 4`), and for the first 8 threads one group of the 16-cell halos.
///
/// # Safety
/// `input` is valid for `n` floats and 16-byte aligned.
#[inline(always)]
unsafe fn load_tile_1d(
    input: *const f32,
    n: usize,
    tile: usize,
    t: usize,
) -> [[f32; 4]; GROUPS_PER_THREAD_1D + 1] {
    let base = tile * VEC4_TILE_1D;
    let mut v = [[0.0f32; 4]; GROUPS_PER_THREAD_1D + 1];
    for h in 0..GROUPS_PER_THREAD_1D {
        let start = base + 4 * (t + h * BLOCK_1D as usize);
        // SAFETY: `start` is a multiple of 4; `input` is aligned.
        v[h] = unsafe { load_group(input, start, n, true) };
    }
    if t < 2 * HALO_GROUPS_1D {
        let start = if t < HALO_GROUPS_1D {
            base.wrapping_sub(VEC4_HALO_1D) + 4 * t
        } else {
            base + VEC4_TILE_1D + 4 * (t - HALO_GROUPS_1D)
        };
        // SAFETY: `start` is a multiple of 4 (or wrapped below 0: all ghosts).
        v[GROUPS_PER_THREAD_1D] = unsafe { load_group(input, start, n, true) };
    }
    v
}

/// The body of the `convolution_1d_tiled_vec4_w*` kernels, for radius `R` (mask width
/// `2R + 1`), a compile-time constant so that the mask loops unroll, the window stays in
/// registers and every mask read is an immediate constant-bank operand.
///
/// Algorithm: a grid-stride loop over tiles of [`VEC4_TILE_1D`] = 4096 outputs. Each
/// thread holds in registers four `float4` groups of the tile (`t + 256 h`) and, for the
/// first 8 threads, one group of the 16-cell halos, all loaded with `ld.global.v4` (ghost
/// cells as 0, the ragged end element by element). After a barrier the registers go to the
/// shared stage with 16-byte stores; the thread then issues the loads of the next tile and,
/// while they are in flight, computes its four output groups: for group `p` it reads the
/// aligned window of groups `p - G ..= p + G` (`G = ceil(R / 4)`) with 16-byte shared loads
/// (consecutive lanes, consecutive 16 bytes: no bank conflicts), forms the 4 outputs
/// `sum_j M[j] x[4p + q + j - R]` in registers and stores them with one `st.global.v4`.
///
/// From 17 taps (`ORDERED_RADIUS_1D`) the window loads and the multiply-adds are emitted in
/// program order (`ordered_load`, `ordered_fma`), so one group's window is live at a time: 64 registers for 31 taps
/// instead of 126 (4 blocks per SM instead of 2), which took the 31-tap convolution of 2^26
/// floats from 1.31x to 1.12x its memory floor on an H200.
///
/// # Safety
/// `input` and `output` are valid for `n` floats, do not overlap, and are 16-byte aligned;
/// block [`BLOCK_1D`] (asserted).
#[inline(always)]
unsafe fn convolution_1d_tiled_vec4<const R: usize>(
    input: *const f32,
    output: *mut f32,
    mask_width: usize,
    n: usize,
) {
    const B: usize = BLOCK_1D as usize;
    const HG: usize = HALO_GROUPS_1D;
    const GPT: usize = GROUPS_PER_THREAD_1D;
    /// Window groups for the widest mask.
    const MAX_WINDOW: usize = 2 * HALO_GROUPS_1D + 1;
    assert!(block_dim().x == BLOCK_1D && mask_width == 2 * R + 1 && R <= VEC4_HALO_1D);
    let g = R.div_ceil(4);
    let stage = gpu_std::static_shared!(
        s_convolution_1d_tiled_vec4: [F4; TILE_GROUPS_1D + 2 * HALO_GROUPS_1D]
    );
    let t = thread_idx().x as usize;
    let tiles = n.div_ceil(VEC4_TILE_1D);
    let stride = grid_dim().x as usize;
    let mut tile = block_idx().x as usize;
    if tile >= tiles {
        return;
    }
    // SAFETY: `input` is valid for `n` floats and aligned (caller).
    let mut regs = unsafe { load_tile_1d(input, n, tile, t) };
    loop {
        for h in 0..GPT {
            // SAFETY: one writer per group; the previous tile's reads ended at the barrier
            // at the bottom of the loop.
            unsafe { stage.write(HG + t + h * B, F4(regs[h])) };
        }
        if t < 2 * HG {
            let slot = if t < HG {
                t
            } else {
                HG + TILE_GROUPS_1D + (t - HG)
            };
            // SAFETY: halo groups, one writer each.
            unsafe { stage.write(slot, F4(regs[GPT])) };
        }
        syncthreads();
        let next = tile + stride;
        if next < tiles {
            // SAFETY: as above.
            regs = unsafe { load_tile_1d(input, n, next, t) };
        }
        let base = tile * VEC4_TILE_1D;
        for h in 0..GPT {
            let p = t + h * B;
            // window[4 i + e] = x[4 (p - G + i) + e], i.e. window[4 G + k] = x[4p + k].
            let mut window = [0.0f32; 4 * MAX_WINDOW];
            for i in 0..2 * g + 1 {
                // SAFETY: staged before the barrier; `HG + p - G + i` lies in the stage
                // because `G <= HG`.
                let v = unsafe {
                    if R >= ORDERED_RADIUS_1D {
                        ordered_load(stage.shared_address() + 16 * (HG + p - g + i) as u32)
                    } else {
                        stage.read(HG + p - g + i).0
                    }
                };
                for e in 0..4 {
                    window[4 * i + e] = v[e];
                }
            }
            let mut out = [0.0f32; 4];
            for q in 0..4 {
                for j in 0..2 * R + 1 {
                    // Output `4p + q` takes `x[4p + q + j - R] = window[4G + q + j - R]`.
                    out[q] = if R >= ORDERED_RADIUS_1D {
                        ordered_fma(window[4 * g + q + j - R], C_MASK_1D::read(j), out[q])
                    } else {
                        fmaf32(window[4 * g + q + j - R], C_MASK_1D::read(j), out[q])
                    };
                }
            }
            let o = base + 4 * p;
            if o < n && n - o >= 4 {
                // SAFETY: `o + 3 < n`; 16-byte aligned (`o % 4 == 0`, aligned base).
                unsafe { store_global_v4(output.add(o), out) };
            } else {
                for q in 0..4 {
                    if o + q < n {
                        // SAFETY: `o + q < n`.
                        unsafe { *output.add(o + q) = out[q] };
                    }
                }
            }
        }
        if next >= tiles {
            break;
        }
        // Every read of this tile's stage is done before the next tile overwrites it.
        syncthreads();
        tile = next;
    }
}

/// The handle of a `convolution_1d_tiled_vec4_w*` kernel (host build): `(input, output,
/// mask_width, n)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type Vec4Kernel1d = gpu_std::host::Kernel<(*const f32, *mut f32, usize, usize)>;

/// Defines one `convolution_1d_tiled_vec4_w*` entry per mask width and, on the host, the table
/// of their handles by radius.
macro_rules! convolution_1d_tiled_vec4_entries {
    ($(($name:ident, $width:literal, $radius:literal)),* $(,)?) => {
        $(
            #[doc = concat!(
                "The 1D convolution to call, for a mask of width ", stringify!($width),
                ": a 4096-output tile per block and loop step (16 outputs per thread), staged ",
                "with 16-byte loads and stores, the next tile's loads in flight while this one ",
                "is computed from 16-byte shared windows; outputs stored as `float4`.\n\n",
                "Algorithm: see the shared body `convolution_1d_tiled_vec4::<R>` (here `R` = ",
                stringify!($radius), ").\n\n",
                "Launch: block [`BLOCK_1D`] (asserted); any grid (the host uses one wave of ",
                "resident blocks, at most one per tile); [`C_MASK_1D`] holds the mask; ",
                "`mask_width` must be ", stringify!($width), " (asserted).\n\n",
                "Parameters: `input`, `output`: `n` floats, any `n`.\n\n",
                "# Safety\n`input` and `output` are valid for `n` floats, do not overlap, and ",
                "are 16-byte aligned (device allocations are).\n\n",
                "Performance: `4096 + 32` loads of `N` per 4096 outputs: ratio ",
                "`4096 w / 4128`; 8 bytes of DRAM traffic per output, so the copy bandwidth is ",
                "the limit; shared memory moves 16 bytes per lane per access."
            )]
            #[kernel]
            pub unsafe fn $name(
                input: *const f32,
                output: *mut f32,
                mask_width: usize,
                n: usize,
            ) {
                // SAFETY: forwarded.
                unsafe { convolution_1d_tiled_vec4::<$radius>(input, output, mask_width, n) }
            }
        )*

        /// The `convolution_1d_tiled_vec4_w*` kernels, indexed by the mask radius `w / 2` (host
        /// build: the launcher picks the entry compiled for its mask's width).
        #[cfg(not(target_arch = "nvptx64"))]
        pub const CONVOLUTION_1D_TILED_VEC4_BY_RADIUS:
            [Vec4Kernel1d; super::MAX_MASK_WIDTH / 2 + 1] = [$($name),*];

        // Entry `i` is the one of radius `i` and width `2i + 1`.
        const _: () = {
            let radii: &[usize] = &[$($radius),*];
            let widths: &[usize] = &[$($width),*];
            let mut i = 0;
            while i < radii.len() {
                assert!(radii[i] == i && widths[i] == 2 * i + 1);
                i += 1;
            }
        };
    };
}

convolution_1d_tiled_vec4_entries!(
    (convolution_1d_tiled_vec4_w1, 1, 0),
    (convolution_1d_tiled_vec4_w3, 3, 1),
    (convolution_1d_tiled_vec4_w5, 5, 2),
    (convolution_1d_tiled_vec4_w7, 7, 3),
    (convolution_1d_tiled_vec4_w9, 9, 4),
    (convolution_1d_tiled_vec4_w11, 11, 5),
    (convolution_1d_tiled_vec4_w13, 13, 6),
    (convolution_1d_tiled_vec4_w15, 15, 7),
    (convolution_1d_tiled_vec4_w17, 17, 8),
    (convolution_1d_tiled_vec4_w19, 19, 9),
    (convolution_1d_tiled_vec4_w21, 21, 10),
    (convolution_1d_tiled_vec4_w23, 23, 11),
    (convolution_1d_tiled_vec4_w25, 25, 12),
    (convolution_1d_tiled_vec4_w27, 27, 13),
    (convolution_1d_tiled_vec4_w29, 29, 14),
    (convolution_1d_tiled_vec4_w31, 31, 15),
);
