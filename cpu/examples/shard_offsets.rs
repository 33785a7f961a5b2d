//! Does where a shard starts change how fast one GPU sums it?
//!
//! The sharded sum over 3 GPUs gives each rank 357913920 of 2^30 floats, starting at byte
//! offsets 0, 1431655680 and 2863311360 of its copy of the input: 128-byte boundaries, not
//! 2 MiB ones. This program sums slices of that length at those offsets, and at the same offsets
//! rounded down to 2 MiB, with the library's one-launch reduction (`ReduceSum` of f32 into f64)
//! on one GPU. The offsets take turns within each round, so drift falls on all alike; each row
//! is the median of `ROUNDS` CUDA-event timings. The whole input (4 GiB) is far beyond the L2.
//!
//! Run: `cargo run --release -p cpu --example shard_offsets` (needs an NVIDIA GPU with 5 GiB).

use cpu::Gpu;
use cpu::error::DriverContext;
use cpu::reduce::{ReduceSum, SumF32F64};
use cudarc::driver::sys;

const ROUNDS: usize = 41;
const TOTAL: usize = 1 << 30;
const SHARD: usize = 357_913_920;
const TWO_MIB: usize = (2 << 20) / 4;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Gpu::new(0)?;
    let data = gpu.upload(&vec![0.5f32; TOTAL])?;
    let mut result = gpu.zeros::<f64>(1)?;
    let mut sum = ReduceSum::<SumF32F64>::new(&gpu)?;
    let shard_offsets = [0, SHARD, 2 * SHARD];
    let mut cases: Vec<(usize, usize)> = Vec::new();
    for off in shard_offsets {
        cases.push((off, SHARD));
        if off % TWO_MIB != 0 {
            cases.push((off / TWO_MIB * TWO_MIB, SHARD));
        }
    }
    cases.extend([(32, SHARD), (16384, SHARD), (TOTAL / 4, SHARD), (0, TOTAL)]);
    let event = || {
        gpu.context()
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .during("creating a timing event")
    };
    let (start, end) = (event()?, event()?);
    let mut samples = vec![Vec::with_capacity(ROUNDS); cases.len()];
    for round in 0..=ROUNDS {
        for (c, &(off, len)) in cases.iter().enumerate() {
            let view = data.slice(off..off + len);
            start.record(gpu.stream()).during("recording an event")?;
            sum.sum_into(&gpu, &view, &mut result)?;
            end.record(gpu.stream()).during("recording an event")?;
            gpu.synchronize("a timed sum")?;
            if round > 0 {
                samples[c].push(start.elapsed_ms(&end).during("reading an event time")? as f64);
            }
        }
    }
    let got = gpu.download(&result, "the last sum")?[0];
    if got != 0.5 * TOTAL as f64 {
        return Err(format!("the last sum is {got}, not {}", 0.5 * TOTAL as f64).into());
    }
    println!(
        "{}: reduce_sum_f32_f64 over slices of a 2^30-float buffer, median of {ROUNDS} rounds",
        gpu.name()?
    );
    println!("| first element | byte offset | offset mod 2 MiB | elements | median ms | GB/s |");
    println!("|---|---|---|---|---|---|");
    for ((off, len), s) in cases.iter().zip(&mut samples) {
        s.sort_by(f64::total_cmp);
        let ms = s[s.len() / 2];
        println!(
            "| {off} | {} | {} | {len} | {ms:.4} | {:.1} |",
            off * 4,
            off * 4 % (2 << 20),
            (len * 4) as f64 / ms / 1e6
        );
    }
    Ok(())
}
