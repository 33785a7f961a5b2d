//! The library's entry points as a user calls them: `convolution::{conv1d, conv2d}`,
//! `transpose::transpose`, `vector_add::add` (and their `_with` forms) on the caller's own
//! device memory and stream.
//!
//! - `entry_points::views::*`: every entry point on sub-slices of larger buffers, starting 0 to
//!   4 elements in (so views that are not 16-byte aligned take the fallback variant): the
//!   result against the CPU reference, the launch configuration against the variant the
//!   fallback rule names, and every element of the output buffer outside the view still poison.
//! - `entry_points::callers_stream`: a handle made with `Gpu::from_stream` on a stream the test
//!   creates with cudarc, buffers allocated on it by cudarc, one synchronisation at the end.
//! - `entry_points::constant_memory::*`: masks alive at once, launches from several threads
//!   and handles at once without synchronising in between, a mask made through one handle and
//!   launched through another: every output checked against its own mask's reference.
//! - `entry_points::errors::*` and `entry_points::empty::*`: the typed refusals, and empty
//!   inputs accepted with nothing written.

mod errors;

use errors::{buffers, error_trials};
use std::ops::Range;
use std::sync::Barrier;

use cpu::convolution::{
    self, Mask1d, Mask2d, Reference, Variant1d, Variant2d, reference_1d, reference_2d,
};
use cpu::launch::{VEC4_ALIGNMENT, is_aligned};
use cpu::{Error, Gpu, transpose, vector_add, verify};
use cudarc::driver::{CudaContext, CudaSlice};
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// What every output buffer holds before a launch: a quiet NaN with a payload no kernel
/// produces, compared bit for bit.
const POISON: f32 = f32::from_bits(0x7fc0_5a5a);

/// Elements of padding around the views.
const PAD: usize = 8;

/// `(input offset, output offset)` of the views, in elements: the same offset for both from 0
/// to 4 (aligned at 0 and 4), and one of the two misaligned.
const OFFSETS: [(usize, usize); 7] = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (0, 1), (1, 0)];

/// 1D length: two vec4 tiles and a ragged end.
const N_1D: usize = 5003;
/// 1D mask width.
const W_1D: usize = 7;
/// 2D shapes: `cols` a multiple of 4 (the vec4 kernel loads `float4`s and needs an aligned
/// input) and not (it loads element by element and takes any alignment).
const SHAPES_2D: [(usize, usize); 2] = [(37, 68), (33, 65)];
/// 2D mask width.
const W_2D: usize = 5;
/// Transpose shapes: multiples of 4 (vec4 when aligned) and not.
const SHAPES_T: [(usize, usize); 2] = [(68, 36), (33, 65)];
/// Vector-add length.
const N_ADD: usize = 5003;

fn fail(e: impl std::fmt::Display) -> Failed {
    e.to_string().into()
}

fn randoms(rng: &mut StdRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

/// Fails if an element of `got` (a whole buffer) outside `view` is not [`POISON`].
fn untouched(got: &[f32], view: Range<usize>) -> Result<(), Failed> {
    match got
        .iter()
        .enumerate()
        .find(|(i, v)| !view.contains(i) && v.to_bits() != POISON.to_bits())
    {
        Some((i, v)) => {
            Err(format!("element {i}, outside the view {view:?}, was written: {v}").into())
        }
        None => Ok(()),
    }
}

fn aligned(address: u64) -> bool {
    is_aligned(address, VEC4_ALIGNMENT)
}

fn conv1d_view(seed: u64, (i, o): (usize, usize)) -> Result<(), Failed> {
    let gpu = gpu()?;
    let mut rng = StdRng::seed_from_u64(seed);
    let host = randoms(&mut rng, N_1D + PAD);
    let values = randoms(&mut rng, W_1D);
    let mask = Mask1d::new(&gpu, &values).map_err(fail)?;
    let input = gpu.upload(&host).map_err(fail)?;
    let mut output = gpu.poisoned(N_1D + PAD, POISON).map_err(fail)?;
    let in_view = input.slice(i..i + N_1D);
    let mut out_view = output.slice_mut(o..o + N_1D);
    let both_aligned = aligned(gpu.address(&in_view)) && aligned(gpu.address(&out_view));
    convolution::conv1d(&gpu, &in_view, &mask, &mut out_view).map_err(fail)?;
    let variant = Variant1d::fastest(both_aligned);
    let got = gpu.download(&output, "conv1d").map_err(fail)?;
    convolution::compare(
        &got[o..o + N_1D],
        &reference_1d(&host[i..i + N_1D], &values),
    )
    .result
    .map_err(|m| format!("{} seed={seed}: {m}", variant.kernel_name()))?;
    untouched(&got, o..o + N_1D)
}

fn conv2d_view(
    seed: u64,
    (rows, cols): (usize, usize),
    (i, o): (usize, usize),
) -> Result<(), Failed> {
    let gpu = gpu()?;
    let n = rows * cols;
    let mut rng = StdRng::seed_from_u64(seed);
    let host = randoms(&mut rng, n + PAD);
    let values = randoms(&mut rng, W_2D * W_2D);
    let mask = Mask2d::new(&gpu, &values, W_2D).map_err(fail)?;
    let input = gpu.upload(&host).map_err(fail)?;
    let mut output = gpu.poisoned(n + PAD, POISON).map_err(fail)?;
    let in_view = input.slice(i..i + n);
    let mut out_view = output.slice_mut(o..o + n);
    let input_aligned = aligned(gpu.address(&in_view));
    convolution::conv2d(&gpu, &in_view, &mask, &mut out_view, rows, cols).map_err(fail)?;
    let variant = Variant2d::fastest(cols, input_aligned);
    let got = gpu.download(&output, "conv2d").map_err(fail)?;
    let reference = reference_2d(&host[i..i + n], rows, cols, &values, W_2D);
    convolution::compare(&got[o..o + n], &reference)
        .result
        .map_err(|m| format!("{} seed={seed}: {m}", variant.kernel_name()))?;
    untouched(&got, o..o + n)
}

fn transpose_view(
    seed: u64,
    (rows, cols): (usize, usize),
    (i, o): (usize, usize),
) -> Result<(), Failed> {
    let gpu = gpu()?;
    let n = rows * cols;
    let host = randoms(&mut StdRng::seed_from_u64(seed), n + PAD);
    let input = gpu.upload(&host).map_err(fail)?;
    let mut output = gpu.poisoned(n + PAD, POISON).map_err(fail)?;
    let in_view = input.slice(i..i + n);
    let mut out_view = output.slice_mut(o..o + n);
    let both_aligned = aligned(gpu.address(&in_view)) && aligned(gpu.address(&out_view));
    transpose::transpose(&gpu, &in_view, &mut out_view, rows, cols).map_err(fail)?;
    let variant = transpose::Variant::fastest(rows, cols, both_aligned);
    let got = gpu.download(&output, "transpose").map_err(fail)?;
    verify::exact(
        &got[o..o + n],
        &transpose::reference(&host[i..i + n], rows, cols),
    )
    .map_err(|m| format!("{} seed={seed}: {m}", variant.kernel_name()))?;
    untouched(&got, o..o + n)
}

fn add_view(seed: u64, (ox, oy, oz): (usize, usize, usize)) -> Result<(), Failed> {
    let gpu = gpu()?;
    let mut rng = StdRng::seed_from_u64(seed);
    let (hx, hy) = (
        randoms(&mut rng, N_ADD + PAD),
        randoms(&mut rng, N_ADD + PAD),
    );
    let (x, y) = (
        gpu.upload(&hx).map_err(fail)?,
        gpu.upload(&hy).map_err(fail)?,
    );
    let mut z = gpu.poisoned(N_ADD + PAD, POISON).map_err(fail)?;
    let (x_view, y_view) = (x.slice(ox..ox + N_ADD), y.slice(oy..oy + N_ADD));
    let mut z_view = z.slice_mut(oz..oz + N_ADD);
    let all_aligned = aligned(gpu.address(&x_view))
        && aligned(gpu.address(&y_view))
        && aligned(gpu.address(&z_view));
    vector_add::add(&gpu, &x_view, &y_view, &mut z_view).map_err(fail)?;
    let variant = vector_add::Variant::fastest(all_aligned);
    let got = gpu.download(&z, "vector_add").map_err(fail)?;
    let reference = vector_add::reference(&hx[ox..ox + N_ADD], &hy[oy..oy + N_ADD]);
    verify::exact(&got[oz..oz + N_ADD], &reference)
        .map_err(|m| format!("{} seed={seed}: {m}", variant.kernel_name()))?;
    untouched(&got, oz..oz + N_ADD)
}

/// The explicitly chosen 2D vec4 kernel on an image whose width is not a multiple of 4 loads
/// element by element: a misaligned input is accepted, and the result is right.
fn conv2d_with_vec4_odd_width_misaligned(seed: u64) -> Result<(), Failed> {
    let gpu = gpu()?;
    let (rows, cols) = (33, 65);
    let n = rows * cols;
    let mut rng = StdRng::seed_from_u64(seed);
    let host = randoms(&mut rng, n + 1);
    let values = randoms(&mut rng, 9);
    let mask = Mask2d::new(&gpu, &values, 3).map_err(fail)?;
    let input = gpu.upload(&host).map_err(fail)?;
    let mut output = gpu.poisoned(n + 2, POISON).map_err(fail)?;
    convolution::conv2d_with(
        &gpu,
        Variant2d::Convolution2dTiledVec4,
        &input.slice(1..),
        &mask,
        &mut output.slice_mut(1..n + 1),
        rows,
        cols,
    )
    .map_err(fail)?;
    let got = gpu
        .download(&output, "convolution_2d_tiled_vec4")
        .map_err(fail)?;
    convolution::compare(
        &got[1..n + 1],
        &reference_2d(&host[1..], rows, cols, &values, 3),
    )
    .result
    .map_err(|m| format!("seed={seed}: {m}"))?;
    untouched(&got, 1..n + 1)
}

fn view_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for offsets @ (i, o) in OFFSETS {
        let name = format!("entry_points::views::conv1d::in{i}_out{o}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || conv1d_view(seed, offsets)));
        for shape @ (rows, cols) in SHAPES_2D {
            let name = format!("entry_points::views::conv2d::{rows}x{cols}::in{i}_out{o}");
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || conv2d_view(seed, shape, offsets)));
        }
        for shape @ (rows, cols) in SHAPES_T {
            let name = format!("entry_points::views::transpose::{rows}x{cols}::in{i}_out{o}");
            let seed = seed_for(&name);
            trials.push(gpu_trial(name, move || {
                transpose_view(seed, shape, offsets)
            }));
        }
    }
    let add_offsets = (0..=4)
        .map(|k| (k, k, k))
        .chain([(0, 0, 1), (0, 1, 0), (1, 0, 0)]);
    for offsets @ (ox, oy, oz) in add_offsets {
        let name = format!("entry_points::views::vector_add::x{ox}_y{oy}_z{oz}");
        let seed = seed_for(&name);
        trials.push(gpu_trial(name, move || add_view(seed, offsets)));
    }
    let name = "entry_points::views::conv2d_with_vec4_odd_width_misaligned_input".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        conv2d_with_vec4_odd_width_misaligned(seed)
    }));
    trials
}

/// A handle on a stream the test made with cudarc, buffers allocated and read back by cudarc
/// on that stream, every entry point queued without a synchronisation, one at the end.
fn callers_stream(seed: u64) -> Result<(), Failed> {
    let ctx = CudaContext::new(0).map_err(fail)?;
    let stream = ctx.new_stream().map_err(fail)?;
    let gpu = Gpu::from_stream(stream.clone()).map_err(fail)?;
    if !std::sync::Arc::ptr_eq(gpu.stream(), &stream) {
        return Err("Gpu::from_stream does not launch on the caller's stream".into());
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let (rows, cols) = (37, 68);
    let n = rows * cols;
    let (hx, hy) = (randoms(&mut rng, n), randoms(&mut rng, n));
    let (v1, v2) = (randoms(&mut rng, W_1D), randoms(&mut rng, W_2D * W_2D));
    let x = stream.clone_htod(&hx).map_err(fail)?;
    let y = stream.clone_htod(&hy).map_err(fail)?;
    let mut outputs: Vec<CudaSlice<f32>> = (0..5)
        .map(|_| stream.clone_htod(&vec![POISON; n]))
        .collect::<Result<_, _>>()
        .map_err(fail)?;
    let mask1 = Mask1d::new(&gpu, &v1).map_err(fail)?;
    let mask2 = Mask2d::new(&gpu, &v2, W_2D).map_err(fail)?;
    convolution::conv1d(&gpu, &x, &mask1, &mut outputs[0]).map_err(fail)?;
    convolution::conv1d_with(
        &gpu,
        Variant1d::Convolution1dConstantMask,
        &x,
        &mask1,
        &mut outputs[1],
    )
    .map_err(fail)?;
    convolution::conv2d(&gpu, &x, &mask2, &mut outputs[2], rows, cols).map_err(fail)?;
    transpose::transpose(&gpu, &x, &mut outputs[3], rows, cols).map_err(fail)?;
    vector_add::add(&gpu, &x, &y, &mut outputs[4]).map_err(fail)?;
    stream.synchronize().map_err(fail)?;
    let got: Vec<Vec<f32>> = outputs
        .iter()
        .map(|o| stream.clone_dtoh(o))
        .collect::<Result<_, _>>()
        .map_err(fail)?;
    let r1 = reference_1d(&hx, &v1);
    for (k, what) in [(0, "conv1d"), (1, "conv1d_with constant mask")] {
        convolution::compare(&got[k], &r1)
            .result
            .map_err(|m| format!("{what} seed={seed}: {m}"))?;
    }
    convolution::compare(&got[2], &reference_2d(&hx, rows, cols, &v2, W_2D))
        .result
        .map_err(|m| format!("conv2d seed={seed}: {m}"))?;
    verify::exact(&got[3], &transpose::reference(&hx, rows, cols))
        .map_err(|m| format!("transpose seed={seed}: {m}"))?;
    verify::exact(&got[4], &vector_add::reference(&hx, &hy))
        .map_err(|m| format!("vector add seed={seed}: {m}"))?;
    Ok(())
}

/// Outputs queued and not yet read back, each with the reference it must match.
struct Pending<'r> {
    outputs: Vec<(CudaSlice<f32>, &'r Reference, String)>,
}

impl<'r> Pending<'r> {
    fn new() -> Self {
        Self {
            outputs: Vec::new(),
        }
    }

    fn push(&mut self, output: CudaSlice<f32>, reference: &'r Reference, what: String) {
        self.outputs.push((output, reference, what));
    }

    /// Reads every output back (the first download waits for the stream) and compares it.
    fn check(self, gpu: &Gpu) -> Result<(), String> {
        for (output, reference, what) in self.outputs {
            let got = gpu.download(&output, &what).map_err(|e| e.to_string())?;
            convolution::compare(&got, reference)
                .result
                .map_err(|m| format!("{what}: {m}"))?;
        }
        Ok(())
    }
}

/// One 1D and one 2D mask per handle, and the references they must give.
struct Job {
    input_1d: Vec<f32>,
    mask_1d: Vec<f32>,
    image: Vec<f32>,
    mask_2d: Vec<f32>,
}

/// 1D length and 2D shape of the constant-memory trials: kernels of a few microseconds, so
/// that launches of different streams overlap.
const N_HAMMER: usize = (1 << 16) + 3;
const SHAPE_HAMMER: (usize, usize) = (256, 260);
/// Launches of each kind per thread.
const ITERATIONS: usize = 50;

impl Job {
    /// Random data; the centre taps are `100 + id`, so no two jobs share a mask.
    fn new(seed: u64, id: usize) -> Self {
        let mut rng = StdRng::seed_from_u64(seed ^ (id as u64).wrapping_mul(0x9e37_79b9));
        let (rows, cols) = SHAPE_HAMMER;
        let mut mask_1d = randoms(&mut rng, W_1D);
        mask_1d[W_1D / 2] = 100.0 + id as f32;
        let mut mask_2d = randoms(&mut rng, W_2D * W_2D);
        mask_2d[W_2D * W_2D / 2] = 100.0 + id as f32;
        Self {
            input_1d: randoms(&mut rng, N_HAMMER),
            mask_1d,
            image: randoms(&mut rng, rows * cols),
            mask_2d,
        }
    }

    /// Launches the constant-mask and vec4 kernels, 1D and 2D, [`ITERATIONS`] times each on
    /// `gpu` with this job's masks, each into an output of its own (allocated and poisoned
    /// first, so that the loop only launches), without synchronising; the loop starts when
    /// every thread waiting on `start` is ready. Then reads every output back and checks it
    /// against this job's references.
    fn run(&self, gpu: &Gpu, start: &Barrier) -> Result<(), String> {
        let e = |e: Error| e.to_string();
        let (rows, cols) = SHAPE_HAMMER;
        let r1 = reference_1d(&self.input_1d, &self.mask_1d);
        let r2 = reference_2d(&self.image, rows, cols, &self.mask_2d, W_2D);
        // Every thread reaches the barrier, also one whose set-up failed (else the others
        // would wait for ever); the failure is reported after it.
        let setup = || -> Result<_, String> {
            let poisoned = |len: usize| -> Result<Vec<CudaSlice<f32>>, String> {
                (0..2 * ITERATIONS)
                    .map(|_| gpu.poisoned(len, POISON).map_err(e))
                    .collect()
            };
            let buffers = (
                Mask1d::new(gpu, &self.mask_1d).map_err(e)?,
                Mask2d::new(gpu, &self.mask_2d, W_2D).map_err(e)?,
                gpu.upload(&self.input_1d).map_err(e)?,
                gpu.upload(&self.image).map_err(e)?,
                poisoned(N_HAMMER)?,
                poisoned(rows * cols)?,
            );
            gpu.synchronize("poisoning the outputs").map_err(e)?;
            Ok(buffers)
        };
        let setup = setup();
        start.wait();
        let (mask_1d, mask_2d, input, image, mut outs_1d, mut outs_2d) = setup?;
        let (v1, v2) = (
            Variant1d::Convolution1dConstantMask,
            Variant2d::Convolution2dConstantMask,
        );
        for (o1, o2) in outs_1d.chunks_mut(2).zip(outs_2d.chunks_mut(2)) {
            convolution::conv1d_with(gpu, v1, &input, &mask_1d, &mut o1[0]).map_err(e)?;
            convolution::conv1d(gpu, &input, &mask_1d, &mut o1[1]).map_err(e)?;
            convolution::conv2d_with(gpu, v2, &image, &mask_2d, &mut o2[0], rows, cols)
                .map_err(e)?;
            convolution::conv2d(gpu, &image, &mask_2d, &mut o2[1], rows, cols).map_err(e)?;
        }
        let mut pending = Pending::new();
        for (k, (o1, o2)) in outs_1d.into_iter().zip(outs_2d).enumerate() {
            let (i, vec4) = (k / 2, k % 2 == 1);
            let (name1, name2) = if vec4 {
                ("conv1d (vec4)", "conv2d (vec4)")
            } else {
                (v1.kernel_name(), v2.kernel_name())
            };
            pending.push(o1, &r1, format!("{name1} #{i}"));
            pending.push(o2, &r2, format!("{name2} #{i}"));
        }
        pending.check(gpu)
    }
}

/// Runs one [`Job`] per handle, each on a thread of its own, at once.
fn threads(seed: u64, handles: Vec<Gpu>) -> Result<(), Failed> {
    let start = Barrier::new(handles.len());
    let start = &start;
    let results: Vec<Result<(), String>> = std::thread::scope(|s| {
        let workers: Vec<_> = handles
            .into_iter()
            .enumerate()
            .map(|(id, gpu)| {
                s.spawn(move || {
                    Job::new(seed, id)
                        .run(&gpu, start)
                        .map_err(|m| format!("thread {id}: {m}"))
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err("a thread panicked".into())))
            .collect()
    });
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("seed={seed}: {}", failures.join("; ")).into())
    }
}

/// Two 1D and two 2D masks alive at once on one thread and one handle, launches interleaved.
fn masks_alive_at_once(seed: u64) -> Result<(), Failed> {
    let gpu = gpu()?;
    let (rows, cols) = SHAPE_HAMMER;
    let jobs = [Job::new(seed, 0), Job::new(seed, 1)];
    let refs_1d: Vec<Reference> = jobs
        .iter()
        .map(|j| reference_1d(&j.input_1d, &j.mask_1d))
        .collect();
    let refs_2d: Vec<Reference> = jobs
        .iter()
        .map(|j| reference_2d(&j.image, rows, cols, &j.mask_2d, W_2D))
        .collect();
    let mut masks = Vec::new();
    let mut inputs = Vec::new();
    for j in &jobs {
        masks.push((
            Mask1d::new(&gpu, &j.mask_1d).map_err(fail)?,
            Mask2d::new(&gpu, &j.mask_2d, W_2D).map_err(fail)?,
        ));
        inputs.push((
            gpu.upload(&j.input_1d).map_err(fail)?,
            gpu.upload(&j.image).map_err(fail)?,
        ));
    }
    let mut pending = Pending::new();
    for i in 0..10 {
        for (k, ((m1, m2), (input, image))) in masks.iter().zip(&inputs).enumerate() {
            for v in Variant1d::ALL {
                let mut out = gpu.poisoned(N_HAMMER, POISON).map_err(fail)?;
                convolution::conv1d_with(&gpu, v, input, m1, &mut out).map_err(fail)?;
                pending.push(
                    out,
                    &refs_1d[k],
                    format!("mask {k} {} #{i}", v.kernel_name()),
                );
            }
            // The variants with a kernel for this dense mask.
            for v in Variant2d::ALL
                .into_iter()
                .filter(|v| v.supports_width(W_2D) && !v.needs_separable_mask())
            {
                let mut out = gpu.poisoned(rows * cols, POISON).map_err(fail)?;
                convolution::conv2d_with(&gpu, v, image, m2, &mut out, rows, cols).map_err(fail)?;
                pending.push(
                    out,
                    &refs_2d[k],
                    format!("mask {k} {} #{i}", v.kernel_name()),
                );
            }
        }
    }
    pending
        .check(&gpu)
        .map_err(|m| format!("seed={seed}: {m}").into())
}

/// Masks made through one `Gpu::new(0)` handle, launched through another (and the reverse),
/// interleaved with the other handle's own masks.
fn mask_through_another_handle(seed: u64) -> Result<(), Failed> {
    let a = Gpu::new(0).map_err(fail)?;
    let b = Gpu::new(0).map_err(fail)?;
    let (rows, cols) = SHAPE_HAMMER;
    let (ja, jb) = (Job::new(seed, 0), Job::new(seed, 1));
    let (ra1, rb1) = (
        reference_1d(&ja.input_1d, &ja.mask_1d),
        reference_1d(&ja.input_1d, &jb.mask_1d),
    );
    let ra2 = reference_2d(&ja.image, rows, cols, &ja.mask_2d, W_2D);
    let mask_a = Mask1d::new(&a, &ja.mask_1d).map_err(fail)?;
    let mask_a2 = Mask2d::new(&a, &ja.mask_2d, W_2D).map_err(fail)?;
    let mask_b = Mask1d::new(&b, &jb.mask_1d).map_err(fail)?;
    let input = b.upload(&ja.input_1d).map_err(fail)?;
    let image = b.upload(&ja.image).map_err(fail)?;
    let mut pending_b = Pending::new();
    let mut pending_a = Pending::new();
    for i in 0..4 {
        for v in Variant1d::ALL {
            let mut out = b.poisoned(N_HAMMER, POISON).map_err(fail)?;
            convolution::conv1d_with(&b, v, &input, &mask_b, &mut out).map_err(fail)?;
            pending_b.push(
                out,
                &rb1,
                format!("b's mask on b, {} #{i}", v.kernel_name()),
            );
            let mut out = b.poisoned(N_HAMMER, POISON).map_err(fail)?;
            convolution::conv1d_with(&b, v, &input, &mask_a, &mut out).map_err(fail)?;
            pending_b.push(
                out,
                &ra1,
                format!("a's mask on b, {} #{i}", v.kernel_name()),
            );
            let mut out = a.poisoned(N_HAMMER, POISON).map_err(fail)?;
            convolution::conv1d_with(&a, v, &input, &mask_b, &mut out).map_err(fail)?;
            pending_a.push(
                out,
                &rb1,
                format!("b's mask on a, {} #{i}", v.kernel_name()),
            );
        }
        let mut out = b.poisoned(rows * cols, POISON).map_err(fail)?;
        convolution::conv2d(&b, &image, &mask_a2, &mut out, rows, cols).map_err(fail)?;
        pending_b.push(out, &ra2, format!("a's 2D mask on b #{i}"));
    }
    pending_b
        .check(&b)
        .and_then(|()| pending_a.check(&a))
        .map_err(|m| format!("seed={seed}: {m}").into())
}

fn constant_memory_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    let name = "entry_points::constant_memory::masks_1d_and_2d_alive_at_once".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || masks_alive_at_once(seed)));
    let name = "entry_points::constant_memory::four_threads_with_new_stream".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        let base = gpu()?;
        let handles = (0..4)
            .map(|_| base.with_new_stream())
            .collect::<cpu::Result<Vec<_>>>()
            .map_err(fail)?;
        threads(seed, handles)
    }));
    let name = "entry_points::constant_memory::four_threads_own_gpu_new".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || {
        let handles = (0..4)
            .map(|_| Gpu::new(0))
            .collect::<cpu::Result<Vec<_>>>()
            .map_err(fail)?;
        threads(seed, handles)
    }));
    let name = "entry_points::constant_memory::mask_made_through_another_handle".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || mask_through_another_handle(seed)));
    trials
}

/// Every entry point on empty views (some misaligned, with the vec4 variants chosen
/// explicitly, and shapes the vec4 transpose would refuse if they were not empty): `Ok`, a grid
/// of 0 blocks from the `_with` forms, and nothing written.
fn empty_inputs() -> Result<(), Failed> {
    let gpu = gpu()?;
    let (input, mut output) = buffers(&gpu, 16)?;
    let mask1 = Mask1d::new(&gpu, &[1.0; 3]).map_err(fail)?;
    let mask2 = Mask2d::new(&gpu, &[1.0; 9], 3).map_err(fail)?;
    let mut configs = Vec::new();
    for k in 0..4 {
        let (i, mut o) = (input.slice(k..k), output.slice_mut(k + 1..k + 1));
        convolution::conv1d(&gpu, &i, &mask1, &mut o).map_err(fail)?;
        let v1 = Variant1d::Convolution1dTiledVec4;
        configs.push(convolution::conv1d_with(&gpu, v1, &i, &mask1, &mut o).map_err(fail)?);
        convolution::conv1d_values(&gpu, &i, &[2.0], &mut o).map_err(fail)?;
        for (rows, cols) in [(0, 7), (5, 0), (0, 0)] {
            convolution::conv2d(&gpu, &i, &mask2, &mut o, rows, cols).map_err(fail)?;
            let v2 = Variant2d::Convolution2dTiledVec4;
            configs.push(
                convolution::conv2d_with(&gpu, v2, &i, &mask2, &mut o, rows, cols).map_err(fail)?,
            );
            transpose::transpose(&gpu, &i, &mut o, rows, cols).map_err(fail)?;
            let vt = transpose::Variant::TransposeTiledVec4;
            configs
                .push(transpose::transpose_with(&gpu, vt, &i, &mut o, rows, cols).map_err(fail)?);
        }
        vector_add::add(&gpu, &i, &i, &mut o).map_err(fail)?;
        let va = vector_add::Variant::VectorAddVec4;
        configs.push(vector_add::add_with(&gpu, va, &i, &i, &mut o).map_err(fail)?);
    }
    if let Some(cfg) = configs.iter().find(|c| c.grid_dim.0 != 0) {
        return Err(format!("an empty input returned the launch {cfg:?}").into());
    }
    let got = gpu.download(&output, "nothing").map_err(fail)?;
    untouched(&got, 0..0)
}

/// Every entry-point trial.
pub fn trials() -> Vec<Trial> {
    let mut trials = view_trials();
    let name = "entry_points::callers_stream".to_string();
    let seed = seed_for(&name);
    trials.push(gpu_trial(name, move || callers_stream(seed)));
    trials.extend(constant_memory_trials());
    trials.extend(error_trials());
    trials.push(gpu_trial(
        "entry_points::empty::nothing_launched_nothing_written".into(),
        empty_inputs,
    ));
    trials
}
