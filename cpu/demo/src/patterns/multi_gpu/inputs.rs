//! The inputs and checks of the multi-GPU tables: per-rank values from a hash (exact in `f32` in
//! any order), filled and compared on every core (rayon), and poisoned outputs.

use anyhow::Result;
use cpu::Gpu;
use cpu::error::DriverContext;
use cpu::verify::Mismatch;
use cudarc::driver::{CudaSlice, DevicePtrMut, sys};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use super::*;

/// `n` floats uniform in `[-1, 1)` from 24 random bits each (fast enough for 2^30).
pub(super) fn random_floats(seed: u64, n: usize) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut bits = vec![0u32; n];
    rng.fill(&mut bits[..]);
    bits.into_iter()
        .map(|b| (b >> 8) as f32 * (2.0 / (1u32 << 24) as f32) - 1.0)
        .collect()
}

/// The all-reduce input of rank `rank` at element `i`: a small integer in `-16..=15` from a
/// hash of the seed, the rank and the index, so that every sum of up to 2^19 ranks is exact in
/// `f32` in any order and the expected result is computed per element without storing it.
pub(super) fn input_value(key: u64, i: usize) -> f32 {
    (((i as u64 ^ key).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 59) as i32 - 16) as f32
}

/// The hash key of rank `rank` (splitmix64 of the seed and the rank).
pub(super) fn rank_key(seed: u64, rank: usize) -> u64 {
    let mut z = seed ^ (rank as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fills `out` in parallel (rayon) with `f(i)` for `i` in `0..out.len()`.
pub(super) fn fill_parallel(out: &mut [f32], f: impl Fn(usize) -> f32 + Sync) {
    out.par_iter_mut()
        .with_min_len(1 << 16)
        .enumerate()
        .for_each(|(i, x)| *x = f(i));
}

/// Compares `got` with `expected(i)` exactly (bit for bit), in parallel (rayon).
pub(super) fn check_exact(
    got: &[f32],
    expected: impl Fn(usize) -> f32 + Sync,
) -> Result<(), Mismatch> {
    const PER: usize = 1 << 16;
    let found: Vec<(usize, Option<usize>)> = got
        .par_chunks(PER)
        .enumerate()
        .map(|(c, part)| {
            let mut count = 0;
            let mut first = None;
            for (j, &x) in part.iter().enumerate() {
                if x.to_bits() != expected(c * PER + j).to_bits() {
                    count += 1;
                    first.get_or_insert(c * PER + j);
                }
            }
            (count, first)
        })
        .collect();
    let count: usize = found.iter().map(|f| f.0).sum();
    match found.iter().find_map(|f| f.1) {
        None => Ok(()),
        Some(index) => Err(Mismatch {
            index,
            got: format!("{}", got[index]),
            expected: format!("{}", expected(index)),
            count,
        }),
    }
}

/// Sets `n` floats at the start of `buffer` to [`POISON_BITS`] on `gpu`'s stream.
pub(super) fn poison(gpu: &Gpu, buffer: &mut CudaSlice<f32>, n: usize) -> cpu::Result<()> {
    let (ptr, _write) = buffer.device_ptr_mut(gpu.stream());
    gpu.context()
        .bind_to_thread()
        .during("binding the context")?;
    // SAFETY: `ptr` is the start of `buffer`, which holds at least `n` floats (the callers'
    // sizes never exceed the allocation); cuMemsetD32Async writes `n` 4-byte words on the
    // buffer's own stream.
    unsafe { sys::cuMemsetD32Async(ptr, POISON_BITS, n, gpu.stream().cu_stream()) }
        .result()
        .during("poisoning an output")
}
