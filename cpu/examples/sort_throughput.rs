//! Keys per second of the radix sort's entry points, beside the bytes they must move.
//!
//! For each size from 2^20 to 2^28 keys: `sort::keys` of `u32` and of `f32`, `sort::pairs` of
//! `u32` keys with `u32` values, and `sort::argsort` of `f32`, each on uniform random keys.
//! Every rep sorts a fresh copy of the keys (the copy, and a write of 256 MiB that evicts the
//! L2, outside the timed region); CUDA events around the sort alone; median of 15 after two
//! warm-up sorts (arguments: the largest size, 2^28, and the reps, 15). The floor is the traffic model (`reference::bytes_moved`: one read of the
//! keys for the digit counts, then a read and a write of every key and value per 8-bit pass)
//! over the same run's device-to-device copy bandwidth.
//!
//! Run: `cargo run --release -p cpu --example sort_throughput` (needs an NVIDIA GPU with 8 GiB).

use cpu::Gpu;
use cpu::error::DriverContext;
use cpu::sort::{Order, RadixSort, reference};
use cudarc::driver::{CudaSlice, sys};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Gpu::new(0)?;
    let max_n = std::env::args()
        .nth(1)
        .map_or(Ok(1usize << 28), |s| s.parse::<usize>())?;
    // Reps per row (15 unless the second argument says otherwise).
    let reps = std::env::args()
        .nth(2)
        .map_or(Ok(15usize), |s| s.parse::<usize>())?;
    let stream = gpu.stream().clone();
    let event = || {
        gpu.context()
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .during("creating a timing event")
    };
    let (start, end) = (event()?, event()?);
    let mut flush = gpu.zeros::<u8>(256 << 20)?;
    // The copy bandwidth: 1 GiB device to device, median of `reps`.
    let copy_gbps = {
        let src = gpu.zeros::<u8>(1 << 30)?;
        let mut dst = gpu.zeros::<u8>(1 << 30)?;
        let mut ms = Vec::new();
        for rep in 0..reps + 2 {
            start.record(&stream).during("recording an event")?;
            stream.memcpy_dtod(&src, &mut dst).during("a timed copy")?;
            end.record(&stream).during("recording an event")?;
            end.synchronize().during("waiting for a copy")?;
            if rep >= 2 {
                ms.push(start.elapsed_ms(&end).during("reading an event")? as f64);
            }
        }
        ms.sort_by(f64::total_cmp);
        2.0 * (1u64 << 30) as f64 / ms[ms.len() / 2] / 1e6
    };
    println!(
        "{}: radix sort (one-sweep, 8-bit digits), median of {reps}, fresh keys and a flushed L2 per rep; device-to-device copy {copy_gbps:.0} GB/s",
        gpu.name()?
    );
    println!(
        "| entry point | keys | median ms | Gkeys/s | GB/s moved | floor ms (model / copy GB/s) | of floor |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut ws = RadixSort::new(&gpu)?;
    let mut n = 1usize << 20;
    while n <= max_n {
        let bits: Vec<u32> = {
            let mut s = 0x9e37_79b9_7f4a_7c15u64 ^ n as u64;
            (0..n)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    s as u32
                })
                .collect()
        };
        let pristine_u32: CudaSlice<u32> = gpu.upload(&bits)?;
        let floats: Vec<f32> = bits
            .iter()
            .map(|&b| (b >> 8) as f32 / (1 << 24) as f32 * 2.0 - 1.0)
            .collect();
        let pristine_f32: CudaSlice<f32> = gpu.upload(&floats)?;
        let mut keys_u32 = gpu.zeros::<u32>(n)?;
        let mut keys_f32 = gpu.zeros::<f32>(n)?;
        let mut values = gpu.zeros::<u32>(n)?;
        let mut indices = gpu.zeros::<u32>(n)?;
        // `step(ws, true)` makes fresh keys, `step(ws, false)` sorts them.
        let mut time = |step: &mut dyn FnMut(&mut RadixSort, bool) -> cpu::Result<()>|
         -> Result<f64, Box<dyn std::error::Error>> {
            let mut ms = Vec::new();
            for rep in 0..reps + 2 {
                step(&mut ws, true)?;
                stream.memset_zeros(&mut flush).during("flushing the L2")?;
                start.record(&stream).during("recording an event")?;
                step(&mut ws, false)?;
                end.record(&stream).during("recording an event")?;
                end.synchronize().during("waiting for a sort")?;
                if rep >= 2 {
                    ms.push(start.elapsed_ms(&end).during("reading an event")? as f64);
                }
            }
            ms.sort_by(f64::total_cmp);
            Ok(ms[ms.len() / 2])
        };
        let row = |name: &str, ms: f64, bytes: u64| {
            let floor = bytes as f64 / copy_gbps / 1e6;
            println!(
                "| {name} | {n} | {ms:.4} | {:.2} | {:.0} | {floor:.4} | {:.2} |",
                n as f64 / ms / 1e6,
                bytes as f64 / ms / 1e6,
                floor / ms
            );
        };
        let ms = time(&mut |ws, fresh| {
            if fresh {
                stream
                    .memcpy_dtod(&pristine_u32, &mut keys_u32)
                    .during("fresh keys")
            } else {
                ws.keys(&gpu, &mut keys_u32, Order::Ascending)
            }
        })?;
        row("sort::keys u32", ms, reference::bytes_moved(n, 4, 0, 4));
        let ms = time(&mut |ws, fresh| {
            if fresh {
                stream
                    .memcpy_dtod(&pristine_f32, &mut keys_f32)
                    .during("fresh keys")
            } else {
                ws.keys(&gpu, &mut keys_f32, Order::Ascending)
            }
        })?;
        row("sort::keys f32", ms, reference::bytes_moved(n, 4, 0, 4));
        let ms = time(&mut |ws, fresh| {
            if fresh {
                stream
                    .memcpy_dtod(&pristine_u32, &mut keys_u32)
                    .during("fresh keys")
            } else {
                ws.pairs(&gpu, &mut keys_u32, &mut values, Order::Ascending)
            }
        })?;
        row(
            "sort::pairs u32/u32",
            ms,
            reference::bytes_moved(n, 4, 4, 4),
        );
        let ms = time(&mut |ws, fresh| {
            if fresh {
                Ok(())
            } else {
                ws.argsort(&gpu, &pristine_f32, &mut indices, Order::Ascending)
            }
        })?;
        // An argsort writes indices in its first pass without reading values.
        row(
            "sort::argsort f32",
            ms,
            reference::bytes_moved(n, 4, 4, 4) - 4 * n as u64,
        );
        // Check the last results against the CPU (up to 2^24 keys: the CPU's sort of 2^28 takes
        // longer than the GPU rows together; the GPU trials cover the long inputs).
        if n <= 1 << 24 {
            let got = gpu.download(&indices, "argsort")?;
            let want = reference::argsort(&floats, Order::Ascending);
            if got.iter().zip(&want).any(|(&a, &b)| a as usize != b) {
                return Err(format!("argsort of {n} keys differs from the CPU's").into());
            }
        }
        n *= 4;
    }
    Ok(())
}
