//! Shared pieces of the GPU tests: the device handle, seeds, and trials that show as ignored
//! where no NVIDIA driver or device is present.

use std::sync::OnceLock;

use cpu::Gpu;
use libtest_mimic::{Failed, Trial};

/// Whether a CUDA device can be opened; decided once per test binary.
pub fn gpu_available() -> bool {
    shared_gpu().is_some()
}

fn shared_gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Option<Gpu>> = OnceLock::new();
    GPU.get_or_init(|| Gpu::new(0).ok()).as_ref()
}

/// A handle on device 0 with a stream of its own (trials run in parallel threads).
pub fn gpu() -> Result<Gpu, Failed> {
    match shared_gpu() {
        Some(g) => g.with_new_stream().map_err(|e| e.to_string().into()),
        None => Err(Gpu::new(0)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
            .into()),
    }
}

/// The base seed of this run: `GPU_LAB_SEED` if set (to replay a failure), else fresh.
pub fn base_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        std::env::var("GPU_LAB_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(rand::random)
    })
}

/// A GPU trial: ignored (with the reason in the runner's listing) where no GPU can be opened,
/// so it is never counted as passed there.
pub fn gpu_trial(
    name: String,
    test: impl FnOnce() -> Result<(), Failed> + Send + 'static,
) -> Trial {
    Trial::test(name, test).with_ignored_flag(!gpu_available())
}

/// A seed for one named trial, derived from the run's [`base_seed`] so that every trial gets
/// different data and a failure replays with the same `GPU_LAB_SEED`.
pub fn seed_for(name: &str) -> u64 {
    name.bytes().fold(base_seed(), |h, b| {
        h.wrapping_mul(0x100_0000_01b3).wrapping_add(b as u64)
    })
}

/// Passes when `result` is an error for which `matches` holds.
pub fn expect_err<T: std::fmt::Debug>(
    result: cpu::Result<T>,
    matches: impl Fn(&cpu::Error) -> bool,
) -> Result<(), Failed> {
    match result {
        Err(e) if matches(&e) => Ok(()),
        other => Err(format!("expected a typed error, got {other:?}").into()),
    }
}

/// Serialises the trials that need tens of gigabytes of device and host memory (element
/// counts beyond 2^31), so that they do not run at the same time.
pub fn large_memory() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `n` floats uniform in `[-1, 1)` from 24 random bits each: fast enough for 2^31 elements.
pub fn fast_floats(seed: u64, n: usize) -> Vec<f32> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut bits = vec![0u32; n];
    rng.fill(&mut bits[..]);
    bits.into_iter()
        .map(|b| (b >> 8) as f32 * (2.0 / (1u32 << 24) as f32) - 1.0)
        .collect()
}
