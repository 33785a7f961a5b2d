//! Smoke tests of the device-support module: launchers for the kernels in `gpu::smoke`, their
//! CPU references, and `check` (with the `rand` feature), which runs one kernel on seeded
//! random input and compares. `demo smoke` and the GPU tests both go through `check`.

use cudarc::driver::{LaunchConfig, PushKernelArg};
use gpu::smoke as k;
#[cfg(feature = "rand")]
use rand::rngs::StdRng;
#[cfg(feature = "rand")]
use rand::{Rng, SeedableRng};

use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result};
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

    /// The kernel's `.entry` name in the PTX.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant::StaticSharedReverse => k::SMOKE_STATIC_SHARED_REVERSE,
            Variant::DynamicSharedReverse => k::SMOKE_DYNAMIC_SHARED_REVERSE,
            Variant::ConstantPolynomial => k::SMOKE_CONSTANT_POLYNOMIAL,
            Variant::WarpShuffle => k::SMOKE_WARP_SHUFFLE,
            Variant::SharedAtomicHistogram => k::SMOKE_SHARED_ATOMIC_HISTOGRAM,
            Variant::GlobalAtomics => k::SMOKE_GLOBAL_ATOMICS,
            Variant::GlobalAtomicAddF32 => k::SMOKE_GLOBAL_ATOMIC_ADD_F32,
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
    let kernel = k::SMOKE_STATIC_SHARED_REVERSE;
    reverse(gpu, kernel, input, k::STATIC_REVERSE_BLOCK, 0)
}

/// Reverses each `block`-sized segment of `input` through dynamic shared memory
/// (`4 * block` bytes per block).
///
/// # Errors
/// [`Error::InvalidBlock`] if `block` is not 1..=1024.
pub fn dynamic_shared_reverse(gpu: &Gpu, input: &[f32], block: u32) -> Result<Vec<f32>> {
    let kernel = k::SMOKE_DYNAMIC_SHARED_REVERSE;
    launch::check_block(kernel, block, false)?;
    reverse(gpu, kernel, input, block, 4 * block)
}

fn reverse(
    gpu: &Gpu,
    kernel: &'static str,
    input: &[f32],
    block: u32,
    shared: u32,
) -> Result<Vec<f32>> {
    let n = input.len();
    let d_in = gpu.upload(input)?;
    let mut d_out = gpu.poisoned(n, f32::NAN)?;
    let grid = launch::blocks_to_cover(kernel, n, block as u64)?;
    if n > 0 {
        let f = gpu.function(kernel)?;
        let mut args = gpu.stream().launch_builder(&f);
        args.arg(&d_in).arg(&mut d_out).arg(&n);
        // SAFETY: matches `(input: *const f32, output: *mut f32, n: usize)`; both buffers hold
        // `n` floats; the block size is the static array's length or backed by `shared` bytes.
        unsafe { args.launch(launch::linear(grid, block, shared)) }
            .during(format!("launching {kernel}"))?;
    }
    gpu.download(&d_out, kernel)
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
    let kernel = k::SMOKE_CONSTANT_POLYNOMIAL;
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
    constants.write(k::C_SMOKE_COEFFICIENTS::SYMBOL, coefficients)?;
    let d_x = gpu.upload(x)?;
    let mut d_y = gpu.poisoned(n, f32::NAN)?;
    if n > 0 {
        let f = gpu.function(kernel)?;
        let mut args = gpu.stream().launch_builder(&f);
        args.arg(&d_x).arg(&mut d_y).arg(&n);
        // SAFETY: matches `(x: *const f32, y: *mut f32, n: usize)`; both buffers hold `n` floats.
        unsafe { args.launch(grid_stride_config(kernel, n)?) }
            .during(format!("launching {kernel}"))?;
    }
    gpu.download(&d_y, kernel)
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
    let kernel = k::SMOKE_WARP_SHUFFLE;
    launch::check_block(kernel, block, true)?;
    let n = input.len();
    let warps = n.div_ceil(gpu_std::WARP_SIZE as usize);
    let d_in = gpu.upload(input)?;
    let mut d_sums = gpu.poisoned(warps, i32::MIN)?;
    let mut d_butterfly = gpu.poisoned(n, i32::MIN)?;
    let mut d_scan = gpu.poisoned(n, i32::MIN)?;
    let mut d_broadcast = gpu.poisoned(n, i32::MIN)?;
    if n > 0 {
        let grid = launch::blocks_to_cover(kernel, n, block as u64)?;
        let f = gpu.function(kernel)?;
        let mut args = gpu.stream().launch_builder(&f);
        args.arg(&d_in)
            .arg(&n)
            .arg(&mut d_sums)
            .arg(&mut d_butterfly)
            .arg(&mut d_scan)
            .arg(&mut d_broadcast);
        // SAFETY: matches `(input, n, warp_sums, butterfly, scan, broadcast)`: `input`,
        // `butterfly`, `scan`, `broadcast` hold `n` i32, `warp_sums` ceil(n/32); whole warps.
        unsafe { args.launch(launch::linear(grid, block, 0)) }
            .during(format!("launching {kernel}"))?;
    }
    Ok(WarpShuffleOutput {
        warp_sums: gpu.download(&d_sums, kernel)?,
        butterfly: gpu.download(&d_butterfly, kernel)?,
        scan: gpu.download(&d_scan, kernel)?,
        broadcast: gpu.download(&d_broadcast, kernel)?,
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
    let kernel = k::SMOKE_SHARED_ATOMIC_HISTOGRAM;
    let n = values.len();
    let d_values = gpu.upload(values)?;
    let mut d_bins = gpu.zeros::<u32>(k::HISTOGRAM_BINS)?;
    if n > 0 {
        let f = gpu.function(kernel)?;
        let mut args = gpu.stream().launch_builder(&f);
        args.arg(&d_values).arg(&n).arg(&mut d_bins);
        // SAFETY: matches `(values: *const u32, n: usize, bins: *mut u32)`; `bins` holds
        // HISTOGRAM_BINS zeroed counters; BLOCK >= HISTOGRAM_BINS.
        unsafe { args.launch(grid_stride_config(kernel, n)?) }
            .during(format!("launching {kernel}"))?;
    }
    gpu.download(&d_bins, kernel)
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
    let kernel = k::SMOKE_GLOBAL_ATOMICS;
    let n = values.len();
    let d_values = gpu.upload(values)?;
    let mut d_results = gpu.upload(&[0, i32::MIN, i32::MAX, 0])?;
    if n > 0 {
        let f = gpu.function(kernel)?;
        let mut args = gpu.stream().launch_builder(&f);
        args.arg(&d_values).arg(&n).arg(&mut d_results);
        // SAFETY: matches `(values: *const i32, n: usize, results: *mut i32)`; `results` holds
        // GLOBAL_ATOMICS_SLOTS initialised slots.
        unsafe { args.launch(grid_stride_config(kernel, n)?) }
            .during(format!("launching {kernel}"))?;
    }
    gpu.download(&d_results, kernel)
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
    let kernel = k::SMOKE_GLOBAL_ATOMIC_ADD_F32;
    let n = x.len();
    let d_x = gpu.upload(x)?;
    let mut d_sum = gpu.zeros::<f32>(1)?;
    if n > 0 {
        let f = gpu.function(kernel)?;
        let mut args = gpu.stream().launch_builder(&f);
        args.arg(&d_x).arg(&n).arg(&mut d_sum);
        // SAFETY: matches `(x: *const f32, n: usize, sum: *mut f32)`; `sum` is one zeroed float.
        unsafe { args.launch(grid_stride_config(kernel, n)?) }
            .during(format!("launching {kernel}"))?;
    }
    Ok(gpu.download(&d_sum, kernel)?[0])
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

/// Launches [`k::SMOKE_TRAP_OUT_OF_BOUNDS`], which traps by design, and waits for it: the
/// result is the error a kernel fault produces ([`Error::Driver`] naming the kernel). The
/// fault leaves the CUDA context unusable, so call it only in a process of its own (the tests
/// run it in a child process).
///
/// # Errors
/// The fault, as [`Error::Driver`]; any other driver error before it.
pub fn trap_out_of_bounds(gpu: &Gpu) -> Result<()> {
    let kernel = k::SMOKE_TRAP_OUT_OF_BOUNDS;
    let mut data = gpu.zeros::<f32>(32)?;
    let n = data.len();
    let f = gpu.function(kernel)?;
    let mut args = gpu.stream().launch_builder(&f);
    args.arg(&mut data).arg(&n);
    // SAFETY: `smoke_trap_out_of_bounds(data: *mut f32, n: usize)` with `n` valid elements;
    // its out-of-bounds index is caught by a bounds check that traps before any access.
    unsafe { args.launch(launch::linear(1, 32, 0)) }.during(format!("launching {kernel}"))?;
    gpu.download(&data, kernel).map(drop)
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
