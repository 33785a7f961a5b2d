//! GPU trials of the tensor-core instructions (`cpu::gemm`, `gpu_std::mma`): one warp's
//! `mma.sync` tile `D = A B + C` of each input type against the f64 reference on seeded random
//! inputs, D poisoned with NaN first; the four `ldmatrix` forms against the lane maps the kit
//! documents (the PTX ISA's figures), bit for bit; and the refusals (a wrong tile size before
//! any device work; a device older than sm_80 with `Error::ArchTooOld`, which is what every
//! trial expects there).
//!
//! Tolerance: the reference multiplies the inputs rounded to the tile's type
//! (`TileType::round`), whose products are exact in f32, so what remains is the f32 sums:
//! `mma_tile_error_bound`, `gamma_(K+1)` with a unit of `2^-23` (the tensor core's sums need not
//! round to nearest) times `|C| + sum |a_j b_j|`. A wrong lane map moves whole products and
//! fails by far more; so does an unwritten (NaN) element.

use cpu::gemm::{
    self, TileType, ldmatrix_mismatch, ldmatrix_reference, mma_tile, mma_tile_error_bound,
    mma_tile_reference,
};
use cpu::{Error, Gpu};
use lab_tests::{expect_err, gpu, gpu_trial, seed_for};
use libtest_mimic::{Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `(name, how the inputs are drawn)`: uniform in [-1, 1); small integers (every sum exact,
/// so D must equal the reference exactly); magnitudes over six decades with both signs
/// (cancellation); zeros in A and B (D must be C).
const CASES: [&str; 4] = ["uniform", "small_integers", "wide_range", "zero_products"];

fn draw(case: &str, rng: &mut StdRng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| match case {
            "uniform" => rng.random_range(-1.0f32..1.0),
            "small_integers" => rng.random_range(-8i32..=8) as f32,
            "wide_range" => {
                let sign = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
                sign * 10f32.powf(rng.random_range(-3.0f32..3.0))
            }
            _ => 0.0,
        })
        .collect()
}

/// Whether the device has sm_80's tensor-core instructions; if not, the launch must be
/// refused with `ArchTooOld` naming the kernel and both architectures.
fn has_sm80(gpu: &Gpu) -> Result<bool, Failed> {
    let (major, minor) = gpu.compute_capability().map_err(|e| e.to_string())?;
    Ok(major * 10 + minor >= 80)
}

fn expect_arch_refusal<T: std::fmt::Debug>(
    result: cpu::Result<T>,
    kernel: &'static str,
) -> Result<(), Failed> {
    expect_err(result, |e| {
        matches!(e, Error::ArchTooOld { kernel: k, min_sm: 80, device_sm, .. }
            if *k == kernel && *device_sm < 80)
    })
}

fn tile_trials() -> Vec<Trial> {
    TileType::ALL
        .iter()
        .flat_map(|&ty| CASES.iter().map(move |&case| (ty, case)))
        .map(|(ty, case)| {
            let name = format!("gemm::{}::{case}", ty.kernel_name());
            let seed = seed_for(&name);
            gpu_trial(name, move || {
                let gpu = gpu()?;
                let k = ty.k();
                let mut rng = StdRng::seed_from_u64(seed);
                let a = draw(case, &mut rng, 16 * k);
                let b = draw(case, &mut rng, k * 8);
                // C is drawn from the uniform case even where the products are zero.
                let c_case = if case == "zero_products" { "uniform" } else { case };
                let c = draw(c_case, &mut rng, 16 * 8);
                let got = mma_tile(&gpu, ty, &a, &b, &c);
                if !has_sm80(&gpu)? {
                    return expect_arch_refusal(got, ty.kernel_name());
                }
                let got = got.map_err(|e| e.to_string())?;
                let expected = mma_tile_reference(ty, &a, &b, &c);
                let bound = mma_tile_error_bound(ty, &a, &b, &c);
                let exact = matches!(case, "small_integers" | "zero_products");
                for (i, ((&g, &e), &tol)) in got.iter().zip(&expected).zip(&bound).enumerate() {
                    let error = (g as f64 - e).abs();
                    let tol = if exact { 0.0 } else { tol };
                    // NaN (an unwritten, poisoned element) fails too.
                    if error.is_nan() || error > tol {
                        return Err(format!(
                            "{ty:?} {case} seed={seed}: D[{}][{}] = {g:e}, expected {e:e} \
                             (error {error:e}, bound {tol:e})",
                            i / 8,
                            i % 8
                        )
                        .into());
                    }
                }
                Ok(())
            })
        })
        .collect()
}

fn ldmatrix_trials() -> Vec<Trial> {
    ["identity", "random"]
        .into_iter()
        .map(|case| {
            let name = format!("gemm::gemm_ldmatrix::{case}");
            let seed = seed_for(&name);
            gpu_trial(name, move || {
                let gpu = gpu()?;
                let mut rng = StdRng::seed_from_u64(seed);
                // The identity tile holds 16 r + c at (r, c): a mismatch names the coordinate.
                let a: Vec<u16> = match case {
                    "identity" => (0..256).collect(),
                    _ => (0..256).map(|_| rng.random()).collect(),
                };
                let got = gemm::ldmatrix_tile(&gpu, &a);
                if !has_sm80(&gpu)? {
                    return expect_arch_refusal(got, "gemm_ldmatrix");
                }
                let got = got.map_err(|e| e.to_string())?;
                match ldmatrix_mismatch(&got, &ldmatrix_reference(&a)) {
                    None => Ok(()),
                    Some(m) => Err(format!("{case} seed={seed}: {m}").into()),
                }
            })
        })
        .collect()
}

fn refusal_trials() -> Vec<Trial> {
    vec![gpu_trial("gemm::refuses_a_wrong_tile_size".into(), || {
        let gpu = gpu()?;
        let short = vec![0.0f32; 16 * 16 - 1];
        let (b, c) = (vec![0.0f32; 16 * 8], vec![0.0f32; 16 * 8]);
        expect_err(mma_tile(&gpu, TileType::F16, &short, &b, &c), |e| {
            matches!(e, Error::LengthMismatch { what: "a", expected: 256, actual: 255, .. })
        })?;
        // tf32's A is 16 x 8: a 16 x 16 one is refused.
        expect_err(mma_tile(&gpu, TileType::Tf32, &[0.0; 256], &[0.0; 64], &c), |e| {
            matches!(e, Error::LengthMismatch { what: "a", expected: 128, actual: 256, .. })
        })?;
        expect_err(gemm::ldmatrix_tile(&gpu, &[0u16; 100]), |e| {
            matches!(e, Error::LengthMismatch { what: "a", expected: 256, actual: 100, .. })
        })
    })]
}

pub fn trials() -> Vec<Trial> {
    let mut trials = tile_trials();
    trials.extend(ldmatrix_trials());
    trials.extend(refusal_trials());
    trials
}
