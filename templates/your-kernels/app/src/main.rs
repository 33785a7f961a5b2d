//! Runs the three kernels on small inputs and compares each result with the CPU, one line per
//! kernel. Without a GPU it prints the one-sentence reason and exits with status 1.
//!
//! Run: `cargo run --release` (in the workspace folder).

use std::process::ExitCode;

use app::{AxpyElement, BLOCK_SUM_THREADS, reference};
use gpu_host::{Device, Module};

/// Elements per input: not a multiple of the block, so the last block is partial.
const N: usize = 1000;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::new(0)?;
    let module = app::load(&device)?;
    let name = device.name()?;
    // Inputs any reader can recompute: a sawtooth in [-1, 1) and a ramp.
    let x: Vec<f32> = (0..N).map(|i| (i % 200) as f32 / 100.0 - 1.0).collect();
    let y: Vec<f32> = (0..N).map(|i| i as f32 * 0.5).collect();

    // The safe kernel.
    let (d_x, d_y) = (device.upload(&x)?, device.upload(&y)?);
    let mut d_z = device.upload(&[f32::NAN; N])?; // poisoned: an unwritten element shows
    app::add(&module, &d_x, &d_y, &mut d_z)?;
    let z = device.download(&d_z)?;
    let add_wrong = count_differences(&z, &reference::add(&x, &y));
    println!("add of {N} floats on {name}: {add_wrong} elements differ from the CPU");

    // The unsafe kernel with shared memory (launched by a checked, safe function).
    let blocks = N.div_ceil(BLOCK_SUM_THREADS as usize);
    let mut d_sums = device.upload(&vec![f32::NAN; blocks])?;
    app::block_sums(&module, &d_x, &mut d_sums)?;
    let sums = device.download(&d_sums)?;
    let expected = reference::block_sums(&x);
    let outside = x
        .chunks(BLOCK_SUM_THREADS as usize)
        .zip(sums.iter().zip(&expected))
        .filter(|(block, (got, want))| {
            // A NaN (an unwritten sum) is not within any bound.
            let within = (f64::from(**got) - **want).abs() <= reference::block_sum_tolerance(block);
            !within
        })
        .count();
    println!(
        "block_sum of {N} floats in {blocks} blocks: {outside} sums outside the rounding bound \
         of the CPU's (total {:.4}, CPU {:.4})",
        sums.iter().map(|&s| f64::from(s)).sum::<f64>(),
        expected.iter().sum::<f64>()
    );

    // The generic kernel, at every type it is instantiated for.
    let axpy_wrong = axpy_differences(&module, 2.5f32, &x, &y)?
        + axpy_differences(&module, 2.5f64, &widen(&x), &widen(&y))?
        + axpy_differences(&module, -3i32, &ints(&x), &ints(&y))?
        + axpy_differences(&module, 3u32, &uints(&x), &uints(&y))?;
    println!(
        "axpy of {N} elements of f32, f64, i32 and u32: {axpy_wrong} elements differ from the CPU"
    );

    if add_wrong + axpy_wrong + outside > 0 {
        return Err("a kernel disagrees with the CPU".into());
    }
    Ok(())
}

/// `y = a x + y` on the GPU for `T`, then the number of elements that differ from the CPU's.
fn axpy_differences<T: AxpyElement + Default + Clone>(
    module: &Module,
    a: T,
    x: &[T],
    y: &[T],
) -> app::Result<usize> {
    let device = module.device();
    let d_x = device.upload(x)?;
    let mut d_y = device.upload(y)?;
    app::axpy(module, a, &d_x, &mut d_y)?;
    let got = device.download(&d_y)?;
    Ok(count_differences(&got, &reference::axpy(a, x, y)))
}

/// Elements of `got` not equal to those of `want` (a NaN is never equal).
fn count_differences<T: PartialEq>(got: &[T], want: &[T]) -> usize {
    got.iter().zip(want).filter(|(g, w)| g != w).count() + got.len().abs_diff(want.len())
}

fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

fn ints(v: &[f32]) -> Vec<i32> {
    v.iter().map(|&x| (x * 1000.0) as i32).collect()
}

fn uints(v: &[f32]) -> Vec<u32> {
    v.iter().map(|&x| (x * 1000.0) as i32 as u32).collect()
}
