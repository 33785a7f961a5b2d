//! GPU trials of `transpose_thin_vec4`, the transpose of thin matrices (one side at most
//! `THIN_MAX`, both multiples of 4) by 4 x 4 blocks in registers (at `s = 4` through a
//! warp-private shared stage): both orientations, the smallest shapes, every short side from 4
//! to `THIN_MAX` (those whose groups of 4 do not divide a 256-thread block included), partial
//! last blocks and warps, and 2^22-element matrices.
//!
//! Each trial checks the result bit for bit against the CPU reference (a transpose is a copy),
//! and that the guard elements before and after the output view, poisoned before the launch,
//! are still poison: no 16-byte store strays out of the view. Also, through
//! [`transpose::transpose`]: the thin shapes take this kernel, the shapes just past `THIN_MAX`
//! take the tile, and a matrix of more than 65535 tiles of 64 rows (the tiled kernel's
//! `gridDim.y` limit) takes the any-shape kernel instead of failing; 4194304 x 4, which
//! `transpose` once refused, runs.

use cpu::{Error, Gpu, transpose, verify};
use gpu::transpose::THIN_MAX;
use lab_tests::{expect_err, fast_floats, gpu, gpu_trial, large_memory, seed_for};
use libtest_mimic::{Failed, Trial};

const VARIANT: transpose::Variant = transpose::Variant::TransposeThinVec4;

/// What every output element holds before the launch: a quiet NaN with a payload no input
/// has, compared bit for bit.
const POISON: f32 = f32::from_bits(0x7fc0_a5a5);

/// Guard elements before and after the output view (a multiple of 4: the view stays 16-byte
/// aligned, as the kernel needs).
const GUARD: usize = 8;

/// Shapes run through `transpose_with(TransposeThinVec4, ...)`: one cell, two cells each way,
/// short-wide and tall-narrow, a long side that leaves the last block partial (1000 = 250
/// groups of 4; 4092, 4100), short sides 12, 20, 28 (3, 5, 7 groups: blocks of 255 and 252
/// threads) and `THIN_MAX`, squares, and 2^22 elements each way. At `s = 4` (the staged path,
/// warps of 32 long groups per round): 1000 ends in a partial warp in round 0, 3236 (809
/// groups: block 1 holds 256 + 41) in round 1, with one whole warp and one of 9 lanes.
const SHAPES: [(usize, usize); 24] = [
    (4, 4),
    (4, 8),
    (8, 4),
    (4, 1000),
    (1000, 4),
    (4, 3236),
    (3236, 4),
    (8, 1000),
    (1000, 8),
    (12, 1000),
    (1000, 12),
    (16, 4092),
    (4092, 16),
    (20, 4100),
    (4100, 28),
    (24, 24),
    (THIN_MAX, THIN_MAX),
    (THIN_MAX, 4100),
    (4100, THIN_MAX),
    (THIN_MAX, THIN_MAX + 4),
    (THIN_MAX + 4, THIN_MAX),
    (4, 4096 + 4),
    (4, 1 << 20),
    (1 << 20, 4),
];

/// Shapes run through `transpose::transpose` (the entry point's choice), with the variant it
/// must pick: thin at 2^24 elements both ways (the sweep's shapes; 4194304 x 4 needed 65536
/// tiles along `gridDim.y` and was refused), the tile just past `THIN_MAX`, and the tile's
/// grid limit: 65535 tiles of 64 rows fit, 4 rows more (the smallest multiple of 4 past
/// `65535 * 64`) take the any-shape kernel.
const ENTRY: [((usize, usize), transpose::Variant); 6] = [
    ((4, 4_194_304), VARIANT),
    ((4_194_304, 4), VARIANT),
    ((THIN_MAX + 4, 4100), transpose::Variant::TransposeTiledVec4),
    ((4100, THIN_MAX + 4), transpose::Variant::TransposeTiledVec4),
    (
        (65_535 * 64, THIN_MAX + 4),
        transpose::Variant::TransposeTiledVec4,
    ),
    (
        (65_535 * 64 + 4, THIN_MAX + 4),
        transpose::Variant::TransposeTiledVec4Any,
    ),
];

fn fail(e: impl std::fmt::Display) -> Failed {
    e.to_string().into()
}

/// Runs `variant` (or, for `None`, `transpose::transpose`, which must pick `want`) on a
/// `rows x cols` input into an output view `GUARD` floats into a poisoned buffer `GUARD`
/// floats longer on each side; checks the result, the guards, and the launch.
fn trial(
    seed: u64,
    (rows, cols): (usize, usize),
    chosen: Option<transpose::Variant>,
    want: transpose::Variant,
) -> Result<(), Failed> {
    let gpu = gpu()?;
    let n = rows * cols;
    // Inputs past 2^24 elements: one at a time (hundreds of MiB each, on both sides).
    let _big = (n > 1 << 24).then(large_memory);
    let host = fast_floats(seed, n);
    let input = gpu.upload(&host).map_err(fail)?;
    let mut output = gpu.poisoned(n + 2 * GUARD, POISON).map_err(fail)?;
    let mut view = output.slice_mut(GUARD..GUARD + n);
    let cfg = match chosen {
        Some(v) => {
            transpose::transpose_with(&gpu, v, &input, &mut view, rows, cols).map_err(fail)?
        }
        None => {
            // The plain form launches `Variant::fastest`'s choice, which is checked below.
            transpose::transpose(&gpu, &input, &mut view, rows, cols).map_err(fail)?;
            want.launch_config(rows, cols).map_err(fail)?
        }
    };
    let label = format!("{} {rows}x{cols} seed={seed}", want.kernel_name());
    // Both views are 16-byte aligned: `transpose` takes `want` (its launch says which).
    let expected = want.launch_config(rows, cols).map_err(fail)?;
    if (cfg.grid_dim, cfg.block_dim) != (expected.grid_dim, expected.block_dim)
        || transpose::Variant::fastest(rows, cols, true) != want
    {
        return Err(format!(
            "{label}: launched {:?} x {:?}, fastest {:?}",
            cfg.grid_dim,
            cfg.block_dim,
            transpose::Variant::fastest(rows, cols, true)
        )
        .into());
    }
    let got = gpu.download(&output, want.kernel_name()).map_err(fail)?;
    // The inputs are finite, never -0.0: comparing floats is comparing bits, and an element
    // left unwritten (NaN poison) differs from every one of them.
    verify::exact(
        &got[GUARD..GUARD + n],
        &transpose::reference(&host, rows, cols),
    )
    .map_err(|m| format!("{label}: {m}"))?;
    let guards = got[..GUARD].iter().chain(&got[GUARD + n..]);
    match guards
        .enumerate()
        .find(|(_, v)| v.to_bits() != POISON.to_bits())
    {
        Some((e, v)) => Err(format!("{label}: guard {e} (of 2 x {GUARD}) written: {v}").into()),
        None => Ok(()),
    }
}

/// The thin kernel refuses, with a typed error before any launch, what it does not take: a
/// short side past `THIN_MAX`, a side not a multiple of 4, a misaligned view.
fn refusals() -> Result<(), Failed> {
    let gpu: Gpu = gpu()?;
    let input = gpu.zeros::<f32>(64 * 64).map_err(fail)?;
    let mut output = gpu.zeros::<f32>(64 * 64).map_err(fail)?;
    let s = THIN_MAX + 4;
    expect_err(
        transpose::transpose_with(
            &gpu,
            VARIANT,
            &input.slice(..s * s),
            &mut output.slice_mut(..s * s),
            s,
            s,
        ),
        |e| matches!(e, Error::UnsupportedShape { rows, cols, .. } if (*rows, *cols) == (s, s)),
    )?;
    expect_err(
        transpose::transpose_with(
            &gpu,
            VARIANT,
            &input.slice(..8 * 63),
            &mut output.slice_mut(..8 * 63),
            8,
            63,
        ),
        |e| matches!(e, Error::UnsupportedShape { cols: 63, .. }),
    )?;
    expect_err(
        transpose::transpose_with(
            &gpu,
            VARIANT,
            &input.slice(1..1 + 8 * 64),
            &mut output.slice_mut(..8 * 64),
            8,
            64,
        ),
        |e| matches!(e, Error::Misaligned { what: "input", .. }),
    )
}

/// Every trial of the thin kernel.
pub fn trials() -> Vec<Trial> {
    let mut trials: Vec<Trial> = SHAPES
        .into_iter()
        .map(|shape @ (rows, cols)| {
            let name = format!("transpose::{}::{rows}x{cols}", VARIANT.kernel_name());
            let seed = seed_for(&name);
            // Shapes past THIN_MAX on one side only are still thin: the other side is short.
            gpu_trial(name, move || trial(seed, shape, Some(VARIANT), VARIANT))
        })
        .collect();
    trials.extend(ENTRY.into_iter().map(|(shape @ (rows, cols), want)| {
        let name = format!("transpose::entry_point::{rows}x{cols}");
        let seed = seed_for(&name);
        gpu_trial(name, move || trial(seed, shape, None, want))
    }));
    trials.push(gpu_trial(
        format!("transpose::{}::refusals", VARIANT.kernel_name()),
        refusals,
    ));
    trials
}
