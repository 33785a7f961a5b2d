//! The sweeps of `demo conv1d` and `demo conv2d` (`conv1d`, `conv2d`, `conv2d-separable`, `fma-stream`):
//! the cases grouped by shape, admitted by their footprint, run through the entry points.

use super::*;

/// The convolution cases grouped by shape (in order of first appearance): one input per
/// shape, uploaded once for every mask width at it.
pub(super) fn by_shape(cases: Vec<Case>) -> Vec<(Vec<usize>, Vec<Case>)> {
    let mut groups: Vec<(Vec<usize>, Vec<Case>)> = Vec::new();
    for case in cases {
        match groups.iter_mut().find(|(s, _)| *s == case.shape) {
            Some((_, g)) => g.push(case),
            None => groups.push((case.shape.clone(), vec![case])),
        }
    }
    groups
}

/// The cases grouped by shape ([`by_shape`]), each group cut to the cases the sweep admits
/// (room on the device and the host, [`conv_footprint`]); groups left empty are dropped.
pub(super) fn admitted_by_shape(
    sweep: &mut Sweep<'_>,
    cases: Vec<Case>,
) -> Result<Vec<(Vec<usize>, Vec<Case>)>> {
    let mut groups = Vec::new();
    for (shape, group) in by_shape(cases) {
        let mut admitted = Vec::new();
        for case in group {
            if sweep.admit(&case, |n| conv_footprint(&case, n))?.is_some() {
                admitted.push(case);
            }
        }
        if !admitted.is_empty() {
            groups.push((shape, admitted));
        }
    }
    Ok(groups)
}

pub(super) fn sweep_1d(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    for (shape, admitted) in admitted_by_shape(sweep, cases)? {
        let n = shape[0];
        let first = &admitted[0];
        let input = random_floats(sweep.seed_for(first, 0), n);
        let d_in = gpu.upload(&input)?;
        for case in admitted {
            let w = case.width.unwrap_or(1);
            let values = random_floats(sweep.seed_for(&case, 1), w);
            let mask = Mask1d::new(gpu, &values)?;
            let mut d_out = gpu.poisoned(n, f32::NAN)?;
            let aligned = is_aligned(gpu.address(&d_in), VEC4_ALIGNMENT)
                && is_aligned(gpu.address(&d_out), VEC4_ALIGNMENT);
            let variant = Variant1d::fastest(aligned);
            let (kernel, launch) = (variant.entry(w), variant.launch_config(gpu, n, w)?);
            let floor = timing::conv_floor(n, w, 1, sweep.copy(), sweep.fp32());
            let input = &input;
            sweep.measure(
                case,
                kernel,
                convolution::bytes_moved(n),
                Some(floor),
                &mut d_out,
                |o| convolution::conv1d(gpu, &d_in, &mask, o).map(|()| launch),
                |o, _| {
                    let got = gpu.download(o, kernel)?;
                    Ok(compare_1d(&got, input, &values))
                },
            )?;
        }
    }
    Ok(())
}

/// The dense sweep `conv2d`: a random `w x w` mask per case.
pub(super) fn sweep_2d(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    sweep_2d_with(sweep, cases, |sweep, case, w| {
        let values = random_floats(sweep.seed_for(case, 1), w * w);
        Ok(Mask2d::new(sweep.gpu(), &values, w)?)
    })
}

/// The standard deviation of the Gaussian of width `w` the separable sweep and table use:
/// `(w - 1) / 6`, so that SciPy's radius `floor(3 sigma + 0.5)` (`truncate=3.0`) is
/// `(w - 1) / 2`.
pub(super) fn gaussian_sigma(w: usize) -> f32 {
    (w - 1) as f32 / 6.0
}

/// The separable sweep `conv2d-separable`: the Gaussian of each case's width
/// ([`gaussian_sigma`]), through the same entry point.
pub(super) fn sweep_2d_separable(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    sweep_2d_with(sweep, cases, |sweep, _, w| {
        let mask = Mask2d::gaussian(sweep.gpu(), gaussian_sigma(w), GAUSSIAN_TRUNCATE)?;
        if mask.width() != w {
            bail!(
                "Mask2d::gaussian({}) is {} wide, the sweep expected {w}",
                gaussian_sigma(w),
                mask.width()
            );
        }
        Ok(mask)
    })
}

/// The sweep `fma-stream`: [`FmaStream`] at each case's width on one random image, each row's
/// floor that of the fused separable kernel of that width (`2w` FMAs per output); every 7th
/// element and the last 4 checked bit for bit.
pub(super) fn sweep_fma_stream(sweep: &mut Sweep<'_>, cases: Vec<Case>) -> Result<()> {
    let gpu = sweep.gpu();
    for (shape, admitted) in admitted_by_shape(sweep, cases)? {
        let n = shape.iter().product::<usize>();
        let first = &admitted[0];
        let input = random_floats(sweep.seed_for(first, 0), n);
        let mut stream = FmaStream::new(gpu, &input)?;
        for case in admitted {
            let w = case.width.unwrap_or(3);
            let kernel = fma_stream::kernel(w)?.name();
            let floor = floor_of(n, 2 * w as u64, sweep.copy(), sweep.fp32());
            let input = &input;
            sweep.measure(
                case,
                kernel,
                stream.bytes(),
                Some(floor),
                &mut stream,
                |s| s.launch(gpu, w),
                |s, _| Ok(s.check(gpu, w, input, STREAM_CHECK_STRIDE)?),
            )?;
        }
    }
    Ok(())
}

/// A 2D sweep: one input per shape, `make_mask` for each case, `conv2d` timed; each row's
/// floor is that of the variant `conv2d` runs ([`Variant2d::fmas_per_output`]: `w^2` dense,
/// `2w` separable).
pub(super) fn sweep_2d_with(
    sweep: &mut Sweep<'_>,
    cases: Vec<Case>,
    make_mask: impl Fn(&Sweep<'_>, &Case, usize) -> Result<Mask2d>,
) -> Result<()> {
    let gpu = sweep.gpu();
    for (shape, admitted) in admitted_by_shape(sweep, cases)? {
        let (rows, cols) = (shape[0], shape[1]);
        let first = &admitted[0];
        let n = rows * cols;
        let input = random_floats(sweep.seed_for(first, 0), n);
        let d_in = gpu.upload(&input)?;
        for case in admitted {
            let w = case.width.unwrap_or(1);
            let mask = make_mask(sweep, &case, w)?;
            let mut d_out = gpu.poisoned(n, f32::NAN)?;
            let aligned = is_aligned(gpu.address(&d_in), VEC4_ALIGNMENT);
            let variant = Variant2d::choose(&mask, rows, cols, aligned);
            let kernel = variant.entry(w);
            let launch = variant.launch_config(gpu, rows, cols, w)?;
            let floor = floor_of(n, variant.fmas_per_output(w), sweep.copy(), sweep.fp32());
            let input = &input;
            let check = CheckMask::of(&mask);
            sweep.measure(
                case,
                kernel,
                convolution::bytes_moved(n),
                Some(floor),
                &mut d_out,
                |o| convolution::conv2d(gpu, &d_in, &mask, o, rows, cols).map(|()| launch),
                |o, _| {
                    let got = gpu.download(o, kernel)?;
                    Ok(compare_2d(&got, input, rows, cols, check))
                },
            )?;
        }
    }
    Ok(())
}

/// Peak memory of a convolution case of `n` outputs: input and output on the device (and the
/// mask); on the host the input, the downloaded output, and per checking thread a chunk's
/// `f64` reference and scale and its input window.
pub(super) fn conv_footprint(case: &Case, n: usize) -> Footprint {
    Footprint::new(format!("{} of {}", case.pattern, case.label()))
        .device::<f32>(2, n)
        .device_bytes(SMALL)
        .host::<f32>(2, n)
        .host::<[u8; 24]>(check_threads() as u64, CHECK_CHUNK)
}
