//! 04: launch a kernel of your own.
//!
//! `gpu::saxpy` (`y = a x + y`) is the kernel `docs/writing_a_kernel.md` adds to the `gpu`
//! crate, step by step. Once it is there, `cargo build` embeds it in the PTX every [`Gpu`]
//! loads, and any program launches it by name through cudarc's launch builder, as here.
//!
//! Run: `cargo run --release -p cpu --example 04_your_own_kernel` (needs an NVIDIA GPU).

use cpu::Gpu;
use cudarc::driver::{LaunchConfig, PushKernelArg};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Gpu::new(0)?;
    let n: usize = 1_000_003;
    let a = 2.5f32;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 1e-3).collect();
    let y: Vec<f32> = (0..n).map(|i| 1.0 - (i % 7) as f32).collect();

    let d_x = gpu.upload(&x)?;
    let mut d_y = gpu.upload(&y)?;
    let saxpy = gpu.function(gpu::saxpy::SAXPY)?;
    let block = gpu::saxpy::BLOCK_SIZE;
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(block as usize) as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut args = gpu.stream().launch_builder(&saxpy);
    args.arg(&a).arg(&d_x).arg(&mut d_y).arg(&n);
    // SAFETY: the arguments match `saxpy(a: f32, x: *const f32, y: *mut f32, n: usize)`; `d_x`
    // and `d_y` are two allocations of `n` floats each.
    unsafe { args.launch(cfg) }?;
    let got = gpu.download(&d_y, gpu::saxpy::SAXPY)?;

    // The GPU's fused multiply-add rounds once, as `f32::mul_add` does: the results are equal.
    let wrong = (0..n).filter(|&i| got[i] != a.mul_add(x[i], y[i])).count();
    println!(
        "saxpy of {n} floats on {}: {wrong} elements differ from the CPU",
        gpu.name()?
    );
    if wrong > 0 {
        return Err(format!("{wrong} of {n} elements are wrong").into());
    }
    Ok(())
}
