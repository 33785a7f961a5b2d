//! Static `__device__` globals: the seed's `devU += devV` by symbol
//! (`cudaMemcpyToSymbol`/`FromSymbol`) and by pointer, from `gpu::memory::device_globals`.

use gpu::memory::device_globals::{self as k, kernels};

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::launch;

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[
    kernels::device_globals_add_symbols.name(),
    kernels::device_globals_add_pointers.name(),
];

/// The seed's inputs: `hostU = {1, 2, 3, 4}`, `hostV = {5, 6, 7, 8}`.
pub const SEED_U: [f32; 4] = [1.0, 2.0, 3.0, 4.0];
/// See [`SEED_U`].
pub const SEED_V: [f32; 4] = [5.0, 6.0, 7.0, 8.0];

fn check_inputs(u: &[f32], v: &[f32]) -> Result<()> {
    if v.len() != u.len() {
        return Err(Error::LengthMismatch {
            what: "v",
            expected: u.len(),
            actual: v.len(),
        });
    }
    if u.len() > k::DEVICE_GLOBAL_LEN {
        return Err(Error::OutOfRange {
            what: "elements",
            value: u.len() as u64,
            min: 0,
            max: k::DEVICE_GLOBAL_LEN as u64,
        });
    }
    Ok(())
}

/// The seed's static version: copies `u` and `v` to the `__device__` arrays `DEV_U`, `DEV_V`
/// by symbol, runs `addUV<<<1, n>>>` (`devU[i] += devV[i]`) and copies `DEV_U` back by symbol.
/// Holds the module-globals lock throughout (the arrays belong to the module, shared by every
/// stream).
///
/// # Errors
/// [`Error::LengthMismatch`] if `v` differs in length from `u`; [`Error::OutOfRange`] if
/// more than [`k::DEVICE_GLOBAL_LEN`] elements are given; [`Error::Driver`] on a driver
/// failure.
pub fn add_by_symbol(gpu: &Gpu, u: &[f32], v: &[f32]) -> Result<Vec<f32>> {
    check_inputs(u, v)?;
    if u.is_empty() {
        return Ok(Vec::new());
    }
    let kernel = kernels::device_globals_add_symbols;
    let mut globals = gpu.constant_memory()?;
    globals.write(k::DEV_U, u)?;
    globals.write(k::DEV_V, v)?;
    // SAFETY: `device_globals_add_symbols()` takes no arguments; one block of `n <=
    // DEVICE_GLOBAL_LEN` threads touches only the first `n` elements of the symbols.
    unsafe { gpu.launch_unchecked(kernel, launch::linear(1, u.len() as u32, 0), ()) }?;
    gpu.synchronize(kernel.name())?;
    globals.read(k::DEV_U, u.len())
}

/// The seed's dynamic version: `add4f<<<1, n>>>(devU, devV)` on device buffers.
///
/// # Errors
/// As [`add_by_symbol`].
pub fn add_by_pointer(gpu: &Gpu, u: &[f32], v: &[f32]) -> Result<Vec<f32>> {
    check_inputs(u, v)?;
    if u.is_empty() {
        return Ok(Vec::new());
    }
    let kernel = kernels::device_globals_add_pointers;
    let mut d_u = gpu.upload(u)?;
    let d_v = gpu.upload(v)?;
    // SAFETY: `device_globals_add_pointers(u, v)`, one block of `n` threads, both buffers hold
    // `n` floats and are distinct allocations.
    unsafe {
        gpu.launch_unchecked(
            kernel,
            launch::linear(1, u.len() as u32, 0),
            (&mut d_u, &d_v),
        )
    }?;
    gpu.download(&d_u, kernel.name())
}

/// CPU reference: `u[i] + v[i]`.
pub fn reference(u: &[f32], v: &[f32]) -> Vec<f32> {
    u.iter().zip(v).map(|(a, b)| a + b).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_prints_6_8_10_12() {
        assert_eq!(reference(&SEED_U, &SEED_V), vec![6.0, 8.0, 10.0, 12.0]);
    }
}
