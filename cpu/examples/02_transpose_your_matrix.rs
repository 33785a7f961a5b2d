//! 02: transpose a matrix that lives in your own buffer, including a block of it.
//!
//! [`transpose::transpose`] picks the fastest correct kernel for the shape and the alignment:
//! when both sides are multiples of 4 and the views are 16-byte aligned, 4 x 4 blocks in
//! registers for a thin matrix (one side at most 32) and the 16-byte-access tile for the
//! others; the any-shape 16-byte-access tile otherwise (each row's aligned `float4`s, its ends
//! float by float). All three run below.
//!
//! Run: `cargo run --release -p cpu --example 02_transpose_your_matrix` (needs an NVIDIA GPU).

use cpu::{Gpu, transpose};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Gpu::new(0)?;
    for (rows, cols, offset) in [
        (4096, 2048, 0),
        (8, 100_000, 0),
        (1001, 3, 0),
        (640, 480, 1),
    ] {
        // Your row-major matrix, `offset` floats into a larger buffer.
        let n = rows * cols;
        let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut padded = vec![0.0f32; offset];
        padded.extend_from_slice(&host);
        let input = gpu.upload(&padded)?;
        let mut output = gpu.zeros::<f32>(n + offset)?;

        transpose::transpose(
            &gpu,
            &input.slice(offset..),
            &mut output.slice_mut(offset..),
            rows,
            cols,
        )?;
        let got = gpu.download(&output, "transpose")?;
        let wrong = (0..rows)
            .flat_map(|r| (0..cols).map(move |c| (r, c)))
            .filter(|&(r, c)| got[offset + c * rows + r] != host[r * cols + c])
            .count();
        // The kernel it picked (the rule is public): what `transpose` launched.
        let aligned = offset % 4 == 0;
        let kernel = transpose::Variant::fastest(rows, cols, aligned).kernel_name();
        println!("{rows} x {cols} at offset {offset}: {kernel}, {wrong} elements wrong");
        if wrong > 0 {
            return Err(
                format!("{wrong} elements of the {rows} x {cols} transpose are wrong").into(),
            );
        }
    }
    Ok(())
}
