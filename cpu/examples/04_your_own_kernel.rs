//! 04: launch a kernel of your own.
//!
//! `gpu::saxpy` (`y = a x + y`) is a safe `#[kernel]` of the lab's `gpu` crate (its threads write
//! only their own elements of `y`, through a `DisjointSlice`). `cargo build` embeds it in the PTX
//! every [`Gpu`] loads, and the host sees it as a typed handle: [`Gpu::launch`] takes the
//! handle, the launch configuration and the arguments as a tuple, checked against the kernel's
//! signature by the compiler (no name string, no hand-built argument list), and needs no
//! `unsafe`. Kernels in a crate of your own: `docs/writing_a_kernel.md` and
//! `templates/your-kernels`.
//!
//! Run: `cargo run --release -p cpu --example 04_your_own_kernel` (needs an NVIDIA GPU).

use cpu::{Gpu, launch};
use gpu::saxpy::{BLOCK_SIZE, kernels::saxpy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Gpu::new(0)?;
    let n: usize = 1_000_003;
    let a = 2.5f32;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 1e-3).collect();
    let y: Vec<f32> = (0..n).map(|i| 1.0 - (i % 7) as f32).collect();

    let d_x = gpu.upload(&x)?;
    let mut d_y = gpu.upload(&y)?;
    let cfg = launch::linear(n.div_ceil(BLOCK_SIZE as usize) as u32, BLOCK_SIZE, 0);
    // `saxpy` is a safe kernel (each thread writes only its own elements of `y`): no `unsafe`.
    gpu.launch(saxpy, cfg, (a, &d_x, &mut d_y))?;
    let got = gpu.download(&d_y, saxpy.name())?;

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
