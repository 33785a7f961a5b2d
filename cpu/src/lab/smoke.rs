//! Smoke tests of the device-support module: launchers for the kernels in `gpu::smoke`, their
//! CPU references, and `check` (with the `rand` feature), which runs one kernel on seeded
//! random input and compares. `demo smoke` and the GPU tests both go through `check`.

use cudarc::driver::LaunchConfig;
use gpu::smoke::{self as k, kernels};
#[cfg(feature = "rand")]
use rand::rngs::StdRng;
#[cfg(feature = "rand")]
use rand::{Rng, SeedableRng};

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch;
#[cfg(feature = "rand")]
use crate::verify::{self, Mismatch, Tolerance};

/// Threads per block for the smoke kernels that accept any block size.
pub const BLOCK: u32 = 256;
/// Most blocks a grid-stride smoke kernel is launched with.
const MAX_GRID: u32 = 4096;

/// The smoke kernels, each named after the device-support feature it exercises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// `__shared__ float s[256]` via `static_shared!`.
    StaticSharedReverse,
    /// `extern __shared__` via `DynamicShared`.
    DynamicSharedReverse,
    /// `__constant__` coefficients via `constant_memory!`.
    ConstantPolynomial,
    /// `shfl_down_sync`, `shfl_xor_sync`, `shfl_up_sync`, `shfl_idx_sync`.
    WarpShuffle,
    /// `atomic_add` on shared, then global memory.
    SharedAtomicHistogram,
    /// `atomic_add`, `atomic_max`, `atomic_min`, `atomic_cas` on global `i32`.
    GlobalAtomics,
    /// `atomic_add` on a global `f32`.
    GlobalAtomicAddF32,
}

impl Variant {
    /// Every smoke kernel.
    pub const ALL: [Variant; 7] = [
        Variant::StaticSharedReverse,
        Variant::DynamicSharedReverse,
        Variant::ConstantPolynomial,
        Variant::WarpShuffle,
        Variant::SharedAtomicHistogram,
        Variant::GlobalAtomics,
        Variant::GlobalAtomicAddF32,
    ];

    /// The kernel's `.entry` name in the PTX (the kernels' signatures differ: each launcher
    /// launches its own).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant::StaticSharedReverse => kernels::smoke_static_shared_reverse.name(),
            Variant::DynamicSharedReverse => kernels::smoke_dynamic_shared_reverse.name(),
            Variant::ConstantPolynomial => kernels::smoke_constant_polynomial.name(),
            Variant::WarpShuffle => kernels::smoke_warp_shuffle.name(),
            Variant::SharedAtomicHistogram => kernels::smoke_shared_atomic_histogram.name(),
            Variant::GlobalAtomics => kernels::smoke_global_atomics.name(),
            Variant::GlobalAtomicAddF32 => kernels::smoke_global_atomic_add_f32.name(),
        }
    }

    /// The device-support feature the kernel exercises.
    pub fn feature(self) -> &'static str {
        match self {
            Variant::StaticSharedReverse => "static shared memory + syncthreads",
            Variant::DynamicSharedReverse => "dynamic shared memory + syncthreads",
            Variant::ConstantPolynomial => "__constant__ memory (symbol write + ld.const)",
            Variant::WarpShuffle => "warp shuffles: down, xor, up, idx",
            Variant::SharedAtomicHistogram => "shared + global atomicAdd (u32)",
            Variant::GlobalAtomics => "global atomicAdd/Max/Min/CAS (i32)",
            Variant::GlobalAtomicAddF32 => "global atomicAdd (f32)",
        }
    }
}

fn grid_stride_config(kernel: &'static str, n: usize) -> Result<LaunchConfig> {
    let grid = launch::blocks_to_cover(kernel, n, BLOCK as u64)?.clamp(1, MAX_GRID);
    Ok(launch::linear(grid, BLOCK, 0))
}

/// Reverses each block-sized segment of `input` through static shared memory
/// (blocks of [`k::STATIC_REVERSE_BLOCK`] threads).
pub fn static_shared_reverse(gpu: &Gpu, input: &[f32]) -> Result<Vec<f32>> {
    let kernel = kernels::smoke_static_shared_reverse;
    reverse(gpu, kernel, input, k::STATIC_REVERSE_BLOCK, 0)
}

/// Reverses each `block`-sized segment of `input` through dynamic shared memory
/// (`4 * block` bytes per block).
///
/// # Errors
/// [`Error::InvalidBlock`] if `block` is not 1..=1024.
pub fn dynamic_shared_reverse(gpu: &Gpu, input: &[f32], block: u32) -> Result<Vec<f32>> {
    let kernel = kernels::smoke_dynamic_shared_reverse;
    launch::check_block(kernel.name(), block, false)?;
    reverse(gpu, kernel, input, block, 4 * block)
}

fn reverse(
    gpu: &Gpu,
    kernel: Kernel<(*const f32, *mut f32, usize)>,
    input: &[f32],
    block: u32,
    shared: u32,
) -> Result<Vec<f32>> {
    let n = input.len();
    let d_in = gpu.upload(input)?;
    let mut d_out = gpu.poisoned(n, f32::NAN)?;
    let grid = launch::blocks_to_cover(kernel.name(), n, block as u64)?;
    if n > 0 {
        let cfg = launch::linear(grid, block, shared);
        // SAFETY: `smoke_{static,dynamic}_shared_reverse(input, output, n)`; both buffers hold
        // `n` floats; the block size is the static array's length or backed by `shared` bytes.
        unsafe { gpu.launch_unchecked(kernel, cfg, (&d_in, &mut d_out, n)) }?;
    }
    gpu.download(&d_out, kernel.name())
}

/// CPU reference of the reverse kernels: each `segment`-sized chunk reversed in place.
pub fn reverse_segments_reference(input: &[f32], segment: usize) -> Vec<f32> {
    input
        .chunks(segment.max(1))
        .flat_map(|c| c.iter().rev().copied())
        .collect()
}

/// Evaluates the degree-7 polynomial with `coefficients` (lowest first, written to
/// `__constant__` memory) at every `x`.
///
/// # Errors
/// [`Error::LengthMismatch`] unless there are exactly 8 coefficients.
pub fn constant_polynomial(gpu: &Gpu, coefficients: &[f32], x: &[f32]) -> Result<Vec<f32>> {
    let kernel = kernels::smoke_constant_polynomial;
    if coefficients.len() != k::C_SMOKE_COEFFICIENTS::LEN {
        return Err(Error::LengthMismatch {
            what: "coefficients",
            expected: k::C_SMOKE_COEFFICIENTS::LEN,
            actual: coefficients.len(),
        });
    }
    let n = x.len();
    // Held until the kernel has finished (the download below waits for it).
    let mut constants = gpu.constant_memory()?;
    constants.write_constant(k::C_SMOKE_COEFFICIENTS, coefficients)?;
    let d_x = gpu.upload(x)?;
    let mut d_y = gpu.poisoned(n, f32::NAN)?;
    if n > 0 {
        let cfg = grid_stride_config(kernel.name(), n)?;
        // SAFETY: `smoke_constant_polynomial(x, y, n)`; both buffers hold `n` floats; the
        // coefficients were written under the lock held until the download.
        unsafe { gpu.launch_unchecked(kernel, cfg, (&d_x, &mut d_y, n)) }?;
    }
    gpu.download(&d_y, kernel.name())
}

/// CPU reference of [`constant_polynomial`], in `f64`.
pub fn polynomial_reference(coefficients: &[f32], x: &[f32]) -> Vec<f64> {
    x.iter()
        .map(|&xi| {
            coefficients
                .iter()
                .rev()
                .fold(0.0f64, |acc, &c| acc * xi as f64 + c as f64)
        })
        .collect()
}

/// The four results of [`warp_shuffle`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpShuffleOutput {
    /// Sum of each warp's 32 values (`shfl_down_sync` tree), one per warp.
    pub warp_sums: Vec<i32>,
    /// The warp's sum in every lane (`shfl_xor_sync` butterfly).
    pub butterfly: Vec<i32>,
    /// Inclusive prefix sum within each warp (`shfl_up_sync`).
    pub scan: Vec<i32>,
    /// The value of lane `(7 * warp) % 32` of each warp (`shfl_idx_sync`).
    pub broadcast: Vec<i32>,
}

/// Runs the warp-shuffle smoke kernel with blocks of `block` threads.
///
/// # Errors
/// [`Error::InvalidBlock`] if `block` is not a multiple of 32 in 32..=1024 (every lane of a
/// warp must take part in a shuffle).
pub fn warp_shuffle(gpu: &Gpu, input: &[i32], block: u32) -> Result<WarpShuffleOutput> {
    let kernel = kernels::smoke_warp_shuffle;
    launch::check_block(kernel.name(), block, true)?;
    let n = input.len();
    let warps = n.div_ceil(gpu_std::WARP_SIZE as usize);
    let d_in = gpu.upload(input)?;
    let mut d_sums = gpu.poisoned(warps, i32::MIN)?;
    let mut d_butterfly = gpu.poisoned(n, i32::MIN)?;
    let mut d_scan = gpu.poisoned(n, i32::MIN)?;
    let mut d_broadcast = gpu.poisoned(n, i32::MIN)?;
    if n > 0 {
        let grid = launch::blocks_to_cover(kernel.name(), n, block as u64)?;
        let cfg = launch::linear(grid, block, 0);
        let args = (
            &d_in,
            n,
            &mut d_sums,
            &mut d_butterfly,
            &mut d_scan,
            &mut d_broadcast,
        );
        // SAFETY: `smoke_warp_shuffle(input, n, warp_sums, butterfly, scan, broadcast)`:
        // `input`, `butterfly`, `scan`, `broadcast` hold `n` i32, `warp_sums` ceil(n/32); whole
        // warps.
        unsafe { gpu.launch_unchecked(kernel, cfg, args) }?;
    }
    let name = kernel.name();
    Ok(WarpShuffleOutput {
        warp_sums: gpu.download(&d_sums, name)?,
        butterfly: gpu.download(&d_butterfly, name)?,
        scan: gpu.download(&d_scan, name)?,
        broadcast: gpu.download(&d_broadcast, name)?,
    })
}

/// CPU reference of [`warp_shuffle`] (wrapping `i32` arithmetic, 0 past the end of `input`).
pub fn warp_shuffle_reference(input: &[i32]) -> WarpShuffleOutput {
    let mut out = WarpShuffleOutput {
        warp_sums: vec![],
        butterfly: vec![],
        scan: vec![],
        broadcast: vec![],
    };
    for (w, chunk) in input.chunks(32).enumerate() {
        let sum = chunk.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        out.warp_sums.push(sum);
        let src = (7 * w) % 32;
        let picked = chunk.get(src).copied().unwrap_or(0);
        let mut prefix = 0i32;
        for &v in chunk {
            prefix = prefix.wrapping_add(v);
            out.butterfly.push(sum);
            out.scan.push(prefix);
            out.broadcast.push(picked);
        }
    }
    out
}

/// Histogram of `values` into [`k::HISTOGRAM_BINS`] bins (`v % bins`), counted in shared memory
/// per block and merged with global atomics.
pub fn shared_atomic_histogram(gpu: &Gpu, values: &[u32]) -> Result<Vec<u32>> {
    let kernel = kernels::smoke_shared_atomic_histogram;
    let n = values.len();
    let d_values = gpu.upload(values)?;
    let mut d_bins = gpu.zeros::<u32>(k::HISTOGRAM_BINS)?;
    if n > 0 {
        let cfg = grid_stride_config(kernel.name(), n)?;
        // SAFETY: `smoke_shared_atomic_histogram(values, n, bins)`; `bins` holds HISTOGRAM_BINS
        // zeroed counters; BLOCK >= HISTOGRAM_BINS.
        unsafe { gpu.launch_unchecked(kernel, cfg, (&d_values, n, &mut d_bins)) }?;
    }
    gpu.download(&d_bins, kernel.name())
}

/// CPU reference of [`shared_atomic_histogram`].
pub fn histogram_reference(values: &[u32]) -> Vec<u32> {
    let mut bins = vec![0u32; k::HISTOGRAM_BINS];
    for &v in values {
        bins[v as usize % k::HISTOGRAM_BINS] += 1;
    }
    bins
}

/// `[wrapping sum, max, min, count]` of `values` by global atomics (`[0, i32::MIN, i32::MAX, 0]`
/// for no values).
pub fn global_atomics(gpu: &Gpu, values: &[i32]) -> Result<Vec<i32>> {
    let kernel = kernels::smoke_global_atomics;
    let n = values.len();
    let d_values = gpu.upload(values)?;
    let mut d_results = gpu.upload(&[0, i32::MIN, i32::MAX, 0])?;
    if n > 0 {
        let cfg = grid_stride_config(kernel.name(), n)?;
        // SAFETY: `smoke_global_atomics(values, n, results)`; `results` holds
        // GLOBAL_ATOMICS_SLOTS initialised slots.
        unsafe { gpu.launch_unchecked(kernel, cfg, (&d_values, n, &mut d_results)) }?;
    }
    gpu.download(&d_results, kernel.name())
}

/// CPU reference of [`global_atomics`].
pub fn global_atomics_reference(values: &[i32]) -> Vec<i32> {
    vec![
        values.iter().fold(0i32, |a, &b| a.wrapping_add(b)),
        values.iter().copied().max().unwrap_or(i32::MIN),
        values.iter().copied().min().unwrap_or(i32::MAX),
        values.len() as i32,
    ]
}

/// Sum of `x` with one global `f32` atomicAdd per element.
pub fn global_atomic_add_f32(gpu: &Gpu, x: &[f32]) -> Result<f32> {
    let kernel = kernels::smoke_global_atomic_add_f32;
    let n = x.len();
    let d_x = gpu.upload(x)?;
    let mut d_sum = gpu.zeros::<f32>(1)?;
    if n > 0 {
        let cfg = grid_stride_config(kernel.name(), n)?;
        // SAFETY: `smoke_global_atomic_add_f32(x, n, sum)`; `x` holds `n` floats, `sum` is one
        // zeroed float.
        unsafe { gpu.launch_unchecked(kernel, cfg, (&d_x, n, &mut d_sum)) }?;
    }
    Ok(gpu.download(&d_sum, kernel.name())?[0])
}

/// What [`check`] found for one kernel.
#[cfg(feature = "rand")]
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Elements of input.
    pub n: usize,
    /// Seed of the random input.
    pub seed: u64,
    /// `Ok` if the GPU matched the reference.
    pub result: Result<(), Mismatch>,
}

/// Runs `variant` on `n` seeded random inputs and compares it with its CPU reference (feature
/// `rand`).
///
/// Inputs: floats uniform in [-1, 1); `i32` in [-1000, 1000]; `u32` over the full range.
/// Integer results must match exactly; the polynomial within `14` roundings of
/// `sum |c_k|`; the atomic float sum within `n` roundings of `sum |x|`.
///
/// # Errors
/// Driver and launch errors; a mismatch is not an error but `Outcome::result`.
#[cfg(feature = "rand")]
pub fn check(gpu: &Gpu, variant: Variant, n: usize, seed: u64) -> Result<Outcome> {
    let mut rng = StdRng::seed_from_u64(seed);
    let floats =
        |rng: &mut StdRng| -> Vec<f32> { (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect() };
    let result = match variant {
        Variant::StaticSharedReverse => {
            let input = floats(&mut rng);
            let expected = reverse_segments_reference(&input, k::STATIC_REVERSE_BLOCK as usize);
            verify::exact(&static_shared_reverse(gpu, &input)?, &expected)
        }
        Variant::DynamicSharedReverse => {
            let input = floats(&mut rng);
            let block = 96;
            let expected = reverse_segments_reference(&input, block as usize);
            verify::exact(&dynamic_shared_reverse(gpu, &input, block)?, &expected)
        }
        Variant::ConstantPolynomial => {
            let coefficients: Vec<f32> = (0..k::C_SMOKE_COEFFICIENTS::LEN)
                .map(|_| rng.random_range(-1.0..1.0))
                .collect();
            let x = floats(&mut rng);
            let scale: f64 = coefficients.iter().map(|c| c.abs() as f64).sum();
            let tol = Tolerance::f32_roundings(2 * (coefficients.len() - 1), 0.0);
            let tol = Tolerance {
                absolute: tol.relative * scale,
                ..tol
            };
            verify::close(
                &constant_polynomial(gpu, &coefficients, &x)?,
                &polynomial_reference(&coefficients, &x),
                tol,
            )
        }
        Variant::WarpShuffle => {
            let input: Vec<i32> = (0..n).map(|_| rng.random_range(-1000..=1000)).collect();
            let got = warp_shuffle(gpu, &input, BLOCK)?;
            let want = warp_shuffle_reference(&input);
            verify::exact(&got.warp_sums, &want.warp_sums)
                .and(verify::exact(&got.butterfly, &want.butterfly))
                .and(verify::exact(&got.scan, &want.scan))
                .and(verify::exact(&got.broadcast, &want.broadcast))
        }
        Variant::SharedAtomicHistogram => {
            let values: Vec<u32> = (0..n).map(|_| rng.random()).collect();
            verify::exact(
                &shared_atomic_histogram(gpu, &values)?,
                &histogram_reference(&values),
            )
        }
        Variant::GlobalAtomics => {
            let values: Vec<i32> = (0..n).map(|_| rng.random_range(-1000..=1000)).collect();
            verify::exact(
                &global_atomics(gpu, &values)?,
                &global_atomics_reference(&values),
            )
        }
        Variant::GlobalAtomicAddF32 => {
            let x = floats(&mut rng);
            let exact_sum: f64 = x.iter().map(|&v| v as f64).sum();
            let magnitude: f64 = x.iter().map(|&v| v.abs() as f64).sum();
            let tol = Tolerance::f32_roundings(n, 0.0);
            let tol = Tolerance {
                absolute: tol.relative * magnitude,
                ..tol
            };
            verify::close(&[global_atomic_add_f32(gpu, &x)?], &[exact_sum], tol)
        }
    };
    Ok(Outcome { n, seed, result })
}

/// Launches [`smoke_trap_out_of_bounds`](kernels::smoke_trap_out_of_bounds), which traps by
/// design, and waits for it: the
/// result is the error a kernel fault produces ([`Error::Driver`] naming the kernel). The
/// fault leaves the CUDA context unusable, so call it only in a process of its own (the tests
/// run it in a child process).
///
/// # Errors
/// The fault, as [`Error::Driver`]; any other driver error before it.
pub fn trap_out_of_bounds(gpu: &Gpu) -> Result<()> {
    let kernel = kernels::smoke_trap_out_of_bounds;
    let mut data = gpu.zeros::<f32>(32)?;
    let n = data.len();
    // SAFETY: `smoke_trap_out_of_bounds(data, n)` with `n` valid elements; its out-of-bounds
    // index is caught by a bounds check that traps before any access.
    unsafe { gpu.launch_unchecked(kernel, launch::linear(1, 32, 0), (&mut data, n)) }?;
    gpu.download(&data, kernel.name()).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverse_reference_reverses_each_segment() {
        assert_eq!(
            reverse_segments_reference(&[1.0, 2.0, 3.0, 4.0, 5.0], 2),
            vec![2.0, 1.0, 4.0, 3.0, 5.0]
        );
    }

    #[test]
    fn polynomial_reference_is_horner() {
        // 1 + 2x + 3x^2 at x = 2 is 17.
        let c = [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        assert_eq!(polynomial_reference(&c, &[2.0]), vec![17.0]);
    }

    #[test]
    fn warp_reference_by_hand() {
        let input: Vec<i32> = (1..=33).collect();
        let r = warp_shuffle_reference(&input);
        assert_eq!(r.warp_sums, vec![528, 33]);
        assert_eq!(r.scan[31], 528);
        assert_eq!(r.scan[32], 33);
        assert_eq!(r.broadcast[0], 1); // warp 0 takes lane 0
        assert_eq!(r.broadcast[32], 0); // warp 1 takes lane 7, past the end: 0
        assert_eq!(r.butterfly[5], 528);
    }

    #[test]
    fn histogram_and_atomics_references() {
        let h = histogram_reference(&[0, 64, 65, 3]);
        assert_eq!((h[0], h[1], h[3]), (2, 1, 1));
        assert_eq!(global_atomics_reference(&[3, -5, 7]), vec![5, 7, -5, 3]);
        assert_eq!(
            global_atomics_reference(&[]),
            vec![0, i32::MIN, i32::MAX, 0]
        );
    }
}
