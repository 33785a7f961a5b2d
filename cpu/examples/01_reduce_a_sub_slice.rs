//! 01: reduce a sub-slice of your own buffer, on your own stream.
//!
//! A program that already has a CUDA context and stream (from cudarc, or from another library
//! through cudarc) wraps its stream in a [`Gpu`] and calls the library on views of its own
//! buffers: nothing is copied, and nothing synchronises until it asks for a value on the host.
//!
//! Run: `cargo run --release -p cpu --example 01_reduce_a_sub_slice` (needs an NVIDIA GPU).

use cpu::Gpu;
use cpu::reduce::{self, SumF32, SumF32F64};
use cudarc::driver::CudaContext;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Your context and stream.
    let ctx = CudaContext::new(0)?;
    let stream = ctx.new_stream()?;
    // Your data: 2^24 floats, of which we want the sum of elements 1001..=16_000_000.
    let host: Vec<f32> = (0..1usize << 24).map(|i| (i % 100) as f32 * 0.01).collect();
    let data = stream.clone_htod(&host)?;

    let gpu = Gpu::from_stream(stream.clone())?;
    let view = data.slice(1001..16_000_001);
    let total: f32 = reduce::sum::<SumF32>(&gpu, &view)?;
    let precise: f64 = reduce::sum::<SumF32F64>(&gpu, &view)?;

    // Or keep the result on the device (no host synchronisation) for a kernel that follows.
    let mut on_device = stream.alloc_zeros::<f64>(1)?;
    reduce::sum_into::<SumF32F64>(&gpu, &view, &mut on_device)?;
    let copied = stream.clone_dtoh(&on_device)?[0];

    let expected: f64 = host[1001..16_000_001].iter().map(|&x| x as f64).sum();
    println!("sum of elements 1001..=16000000 on {}", gpu.name()?);
    println!("  f32 accumulation  {total}");
    println!("  f64 accumulation  {precise} (device scalar: {copied})");
    println!("  CPU, f64          {expected}");
    let relative = ((total as f64 - expected) / expected).abs();
    if precise != copied || (precise - expected).abs() > 1e-9 * expected || relative > 1e-4 {
        return Err("the sums disagree".into());
    }
    Ok(())
}
