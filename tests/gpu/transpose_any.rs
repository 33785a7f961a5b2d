//! GPU trials of `transpose_tiled_vec4_any`, the transpose of any shape at any element offset:
//! odd shapes (one row, one column, thin, around the 64 x 64 tile, large and odd) on views that
//! start 0 to 4 floats into their allocations on both sides, so that every shift of the input
//! rows and of the output rows against the 16-byte boundaries occurs.
//!
//! Each trial checks the result bit for bit against the CPU reference (a transpose is a copy),
//! and that the guard elements around the output view, poisoned before the launch, are still
//! poison: no 16-byte store strays out of the view. Also: [`transpose::transpose`] picks this
//! kernel for every such view that the aligned vec4 kernel cannot take.

use std::ops::Range;

use cpu::launch::{VEC4_ALIGNMENT, is_aligned};
use cpu::{Gpu, transpose, verify};
use lab_tests::{gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const VARIANT: transpose::Variant = transpose::Variant::TransposeTiledVec4Any;

/// What every output element holds before the launch: a quiet NaN with a payload no input
/// has, compared bit for bit.
const POISON: f32 = f32::from_bits(0x7fc0_a5a5);

/// Guard elements before and after each view (a multiple of 4, so that a view's alignment is
/// its offset's alone).
const GUARD: usize = 8;

/// Offsets in floats of the input and of the output views (each against the other).
const OFFSETS: Range<usize> = 0..5;

/// Shapes run at every pair of offsets: a single element, one row, one column, thin and
/// wide, around the tile (63, 64 + 1, 127, 128 + 1), tiny, a large odd one, and multiples of
/// 4 with whole interior tiles (the whole-tile path at one shift for every row).
const SHAPES: [(usize, usize); 13] = [
    (1, 1),
    (1, 1000),
    (1000, 1),
    (5, 5),
    (3, 8191),
    (8193, 7),
    (63, 65),
    (65, 63),
    (127, 129),
    (1001, 3),
    (2049, 2051),
    (256, 388),
    (452, 260),
];

/// Large shapes at a few offset pairs only: the measured odd shape (8191 x 8193, 256 MiB
/// each way), and a column and a row of 10^7 (more tiles along one side than a 2D grid's
/// 65535 blocks along y would cover).
const LARGE: [((usize, usize), (usize, usize)); 5] = [
    ((8191, 8193), (0, 0)),
    ((8191, 8193), (1, 3)),
    ((8191, 8193), (3, 2)),
    ((10_000_000, 1), (1, 2)),
    ((1, 10_000_000), (2, 1)),
];

fn fail(e: impl std::fmt::Display) -> Failed {
    e.to_string().into()
}

/// Runs the kernel on views `in_offset` and `out_offset` floats into guarded buffers and
/// checks the result and the guards.
fn view_trial(
    seed: u64,
    (rows, cols): (usize, usize),
    (in_offset, out_offset): (usize, usize),
) -> Result<(), Failed> {
    let gpu = gpu()?;
    let n = rows * cols;
    let mut rng = StdRng::seed_from_u64(seed);
    let host: Vec<f32> = (0..n + 2 * GUARD + in_offset)
        .map(|_| rng.random_range(-1e3..1e3))
        .collect();
    let (i0, o0) = (GUARD + in_offset, GUARD + out_offset);
    let input = gpu.upload(&host).map_err(fail)?;
    let mut output = gpu
        .poisoned(n + 2 * GUARD + out_offset, POISON)
        .map_err(fail)?;
    let in_view = input.slice(i0..i0 + n);
    let mut out_view = output.slice_mut(o0..o0 + n);
    check_choice(&gpu, &in_view, &out_view, rows, cols)?;
    transpose::transpose_with(&gpu, VARIANT, &in_view, &mut out_view, rows, cols).map_err(fail)?;
    let got = gpu.download(&output, VARIANT.kernel_name()).map_err(fail)?;
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let expected = transpose::reference(&host[i0..i0 + n], rows, cols);
    verify::exact(&bits(&got[o0..o0 + n]), &bits(&expected)).map_err(|m| {
        format!(
            "{} {rows}x{cols} in+{in_offset} out+{out_offset} seed={seed}: {m}",
            VARIANT.kernel_name()
        )
    })?;
    match got
        .iter()
        .enumerate()
        .find(|&(e, v)| !(o0..o0 + n).contains(&e) && v.to_bits() != POISON.to_bits())
    {
        Some((e, v)) => Err(format!(
            "{rows}x{cols} in+{in_offset} out+{out_offset}: guard {e} (view {o0}..{}) written: {v}",
            o0 + n
        )
        .into()),
        None => Ok(()),
    }
}

/// `transpose::transpose` takes this kernel unless the shape and both views suit the aligned
/// vec4 kernels: the thin one for a thin shape, the tile when a side is below one tile (64)
/// (none of these shapes reaches the tile's grid limit).
fn check_choice(
    gpu: &Gpu,
    input: &impl cudarc::driver::DevicePtr<f32>,
    output: &impl cudarc::driver::DevicePtr<f32>,
    rows: usize,
    cols: usize,
) -> Result<(), Failed> {
    let aligned = is_aligned(gpu.address(input), VEC4_ALIGNMENT)
        && is_aligned(gpu.address(output), VEC4_ALIGNMENT);
    let (vec4, thin) = (
        transpose::Variant::TransposeTiledVec4,
        transpose::Variant::TransposeThinVec4,
    );
    let want = if !aligned {
        VARIANT
    } else if thin.supports(rows, cols) {
        thin
    } else if rows.min(cols) < 64 && vec4.supports(rows, cols) {
        vec4
    } else {
        VARIANT
    };
    let chosen = transpose::Variant::fastest(rows, cols, aligned);
    if chosen == want {
        Ok(())
    } else {
        Err(format!("{rows}x{cols}: transpose would run {chosen:?}, not {want:?}").into())
    }
}

/// Every trial of the any-shape kernel.
pub fn trials() -> Vec<Trial> {
    let mut cases: Vec<((usize, usize), (usize, usize))> = Vec::new();
    for shape in SHAPES {
        for i in OFFSETS {
            for o in OFFSETS {
                cases.push((shape, (i, o)));
            }
        }
    }
    cases.extend(LARGE);
    cases
        .into_iter()
        .map(|(shape @ (rows, cols), offsets @ (i, o))| {
            let name = format!(
                "transpose::{}::views::{rows}x{cols}::in{i}_out{o}",
                VARIANT.kernel_name()
            );
            let seed = seed_for(&name);
            gpu_trial(name, move || view_trial(seed, shape, offsets))
        })
        .collect()
}
