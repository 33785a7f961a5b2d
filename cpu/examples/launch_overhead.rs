//! Host time per launch: what the library's entry points cost the CPU on top of the kernel.
//!
//! Each case queues `LAUNCHES` calls of one entry point on one stream and times, on the host,
//! the loop that queues them (the host's cost per launch) and the loop plus the wait for the
//! stream (end to end per launch; the GPU's own time where it is the longer of the two).
//! Median of `REPEATS` batches after one warm-up batch.
//!
//! Run: `cargo run --release -p cpu --example launch_overhead` (needs an NVIDIA GPU).

use std::time::Instant;

use cpu::convolution::{self, Mask2d};
use cpu::reduce::{self, ReduceSum, SumI32};
use cpu::vector_add::{self, Variant};
use cpu::{Gpu, Result, launch};
use gpu::vector_add::kernels::{vector_add, vector_add_vec4};

const LAUNCHES: usize = 10_000;
const REPEATS: usize = 7;

/// Median of the host times (queueing alone, and queueing plus the wait) of `REPEATS`
/// batches of `LAUNCHES` calls of `launch`, in microseconds per launch.
fn time(gpu: &Gpu, mut launch: impl FnMut() -> Result<()>) -> Result<(f64, f64)> {
    let mut queue = Vec::new();
    let mut total = Vec::new();
    for batch in 0..=REPEATS {
        gpu.synchronize("waiting before a batch")?;
        let start = Instant::now();
        for _ in 0..LAUNCHES {
            launch()?;
        }
        let queued = start.elapsed();
        gpu.synchronize("waiting for a batch")?;
        let done = start.elapsed();
        if batch > 0 {
            queue.push(queued.as_secs_f64() * 1e6 / LAUNCHES as f64);
            total.push(done.as_secs_f64() * 1e6 / LAUNCHES as f64);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok((median(&mut queue), median(&mut total)))
}

fn main() -> Result<()> {
    let gpu = Gpu::new(0)?;
    println!(
        "{} ({LAUNCHES} launches per batch, median of {REPEATS} batches)",
        gpu.name()?
    );
    println!("| entry point | host us per launch (queueing) | us per launch (with the wait) |");
    println!("|---|---|---|");
    let row = |name: &str, (queue, total): (f64, f64)| {
        println!("| {name} | {queue:.2} | {total:.2} |");
    };

    let (x, y) = (gpu.upload(&[1.0f32])?, gpu.upload(&[2.0f32])?);
    let mut z = gpu.zeros::<f32>(1)?;
    row(
        "vector_add::add_with (VectorAdd, 1 element)",
        time(&gpu, || {
            vector_add::add_with(&gpu, Variant::VectorAdd, &x, &y, &mut z).map(drop)
        })?,
    );

    // The launch itself, without a library entry point's checks: the safe launch of a safe
    // kernel (its one extra check: every buffer in the handle's context), the unchecked launch
    // of the same kernel, and of an unsafe kernel with raw pointers.
    let cfg = launch::linear(1, 256, 0);
    row(
        "Gpu::launch (safe vector_add, 1 element)",
        time(&gpu, || gpu.launch(vector_add, cfg, (&x, &y, &mut z)))?,
    );
    row(
        "Gpu::launch_unchecked (vector_add, 1 element)",
        // SAFETY: a safe kernel; any arguments of its types are sound.
        time(&gpu, || unsafe {
            gpu.launch_unchecked(vector_add, cfg, (&x, &y, &mut z))
        })?,
    );
    row(
        "Gpu::launch_unchecked (vector_add_vec4, raw pointers, 1 element)",
        // SAFETY: `x`, `y`, `z` hold one float each (16-byte aligned allocations), and one
        // thread covers the one-element tail.
        time(&gpu, || unsafe {
            gpu.launch_unchecked(vector_add_vec4, cfg, (&x, &y, &mut z, 1usize))
        })?,
    );

    // The same two launches in alternating batches (21 pairs), so that drift of the host's
    // speed over the run falls on both alike: the safe launch's cost beside the unchecked one's.
    let mut safe = Vec::new();
    let mut unchecked = Vec::new();
    for _ in 0..21 {
        let batch = |launch: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
            gpu.synchronize("waiting before a batch")?;
            let start = Instant::now();
            for _ in 0..LAUNCHES {
                launch()?;
            }
            let queued = start.elapsed();
            gpu.synchronize("waiting for a batch")?;
            Ok(queued.as_secs_f64() * 1e6 / LAUNCHES as f64)
        };
        safe.push(batch(&mut || {
            gpu.launch(vector_add, cfg, (&x, &y, &mut z))
        })?);
        unchecked.push(batch(&mut || {
            // SAFETY: one float in each buffer, and one thread covers the one-element tail.
            unsafe { gpu.launch_unchecked(vector_add_vec4, cfg, (&x, &y, &mut z, 1usize)) }
        })?);
    }
    safe.sort_by(f64::total_cmp);
    unchecked.sort_by(f64::total_cmp);
    let (s, u) = (safe[safe.len() / 2], unchecked[unchecked.len() / 2]);
    println!(
        "| safe Gpu::launch / unchecked Gpu::launch_unchecked, alternating batches (median of 21 each) | {s:.2} / {u:.2} = {:.3} | |",
        s / u
    );

    let (rows, cols) = (480, 640);
    let image = gpu.upload(&vec![0.5f32; rows * cols])?;
    let mut filtered = gpu.zeros::<f32>(rows * cols)?;
    let mask = Mask2d::new(&gpu, &[1.0 / 9.0; 9], 3)?;
    row(
        "convolution::conv2d (640 x 480, 3 x 3)",
        time(&gpu, || {
            convolution::conv2d(&gpu, &image, &mask, &mut filtered, rows, cols).map(drop)
        })?,
    );

    let input = gpu.upload(&vec![1i32; 1 << 20])?;
    let mut result = gpu.zeros::<i32>(1)?;
    row(
        "reduce::sum_into (i32, 2^20)",
        time(&gpu, || {
            reduce::sum_into::<SumI32>(&gpu, &input, &mut result).map(drop)
        })?,
    );
    let mut workspace = ReduceSum::<SumI32>::new(&gpu)?;
    row(
        "ReduceSum::sum_into (i32, 2^20, workspace reused)",
        time(&gpu, || {
            workspace.sum_into(&gpu, &input, &mut result).map(drop)
        })?,
    );
    Ok(())
}
