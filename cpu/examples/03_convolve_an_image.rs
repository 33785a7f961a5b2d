//! 03: convolve your own image with a mask you keep, from several threads at once.
//!
//! A [`Mask2d`] is validated once and holds no lock: any thread may launch with it on its own
//! stream, with other masks alive at the same time. The library writes the `__constant__`
//! mask before each launch that reads it (skipped when it already holds that mask) and orders
//! those writes across streams on the GPU.
//!
//! Run: `cargo run --release -p cpu --example 03_convolve_an_image` (needs an NVIDIA GPU).

use cpu::convolution::{self, Mask1d, Mask2d, reference_1d, reference_2d};
use cpu::{Gpu, verify};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Gpu::new(0)?;
    let (rows, cols) = (1080, 1920);
    // Your picture: a bright disc on a gradient.
    let image: Vec<f32> = (0..rows * cols)
        .map(|i| {
            let (y, x) = ((i / cols) as f32, (i % cols) as f32);
            let disc = ((x - 960.0).powi(2) + (y - 540.0).powi(2) < 300.0f32.powi(2)) as u8;
            x / cols as f32 + disc as f32
        })
        .collect();
    let d_image = gpu.upload(&image)?;

    // Two 2D masks and a 1D mask alive at once, used by three threads with streams of their own.
    // Sobel, horizontal derivative; a 5 x 5 Gaussian, binomial weights [1 4 6 4 1] / 16 squared.
    let (w, sobel) = (3, vec![-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0]);
    let binomial = [1.0f32, 4.0, 6.0, 4.0, 1.0];
    let (g, gauss): (usize, Vec<f32>) = (
        5,
        binomial
            .iter()
            .flat_map(|a| binomial.iter().map(move |b| a * b / 256.0))
            .collect(),
    );
    let edges = Mask2d::new(&gpu, &sobel, w)?;
    let blur = Mask2d::new(&gpu, &gauss, g)?;
    let smooth = Mask1d::new(&gpu, &[0.25, 0.5, 0.25])?;
    let results = std::thread::scope(|s| {
        let jobs = [
            (&edges, "sobel-x", &sobel, w),
            (&blur, "gaussian5", &gauss, g),
        ]
        .map(|(mask, name, values, width)| {
            let (gpu, d_image, image) = (&gpu, &d_image, &image);
            s.spawn(move || -> cpu::Result<(String, f64)> {
                let mine = gpu.with_new_stream()?;
                let mut out = mine.zeros::<f32>(rows * cols)?;
                for _ in 0..20 {
                    convolution::conv2d(&mine, d_image, mask, &mut out, rows, cols)?;
                }
                let got = mine.download(&out, name)?;
                let expected = reference_2d(image, rows, cols, values, width);
                Ok((
                    name.to_string(),
                    verify::max_abs_error(&got, &expected.values),
                ))
            })
        });
        let row = s.spawn(|| -> cpu::Result<(String, f64)> {
            let mine = gpu.with_new_stream()?;
            let mut out = mine.zeros::<f32>(cols)?;
            convolution::conv1d(&mine, &d_image.slice(0..cols), &smooth, &mut out)?;
            let got = mine.download(&out, "smooth")?;
            let expected = reference_1d(&image[..cols], smooth.values());
            Ok((
                "row 0, [1 2 1]/4".into(),
                verify::max_abs_error(&got, &expected.values),
            ))
        });
        let mut all: Vec<_> = jobs
            .into_iter()
            .map(|j| j.join().expect("no panic"))
            .collect();
        all.push(row.join().expect("no panic"));
        all
    });
    for result in results {
        let (name, err) = result?;
        println!("{name:>18} on a {cols} x {rows} image: max |gpu - cpu| = {err:.2e}");
        if err.is_nan() || err >= 1e-4 {
            return Err(format!("{name}: the GPU differs from the CPU by {err}").into());
        }
    }
    Ok(())
}
