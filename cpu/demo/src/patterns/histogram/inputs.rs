//! The inputs of `demo histogram`: uniform, constant and Zipf-distributed bytes, a file's bytes
//! and a picture's grey levels.

use std::path::Path;

use anyhow::{Context, Result, bail};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::engine::registry::variant_name;

/// Bytes the file of `--input kind --file path` takes in memory: a PNG decoded (up to 4
/// bytes a pixel, then 1), any other file as it is.
pub(super) fn file_bytes(kind: InputKind, path: &Path) -> Result<usize> {
    match kind {
        InputKind::Image => {
            let (cols, rows) = png_dims(path)?;
            Ok(rows.saturating_mul(cols).saturating_mul(5))
        }
        _ => {
            let meta = std::fs::metadata(path)
                .with_context(|| format!("demo histogram: reading {}", path.display()))?;
            Ok(usize::try_from(meta.len()).unwrap_or(usize::MAX))
        }
    }
}

/// `(cols, rows)` of a picture, from its header alone.
pub(super) fn png_dims(path: &Path) -> Result<(usize, usize)> {
    let (cols, rows) = image::ImageReader::open(path)
        .with_context(|| format!("opening {}", path.display()))?
        .with_guessed_format()?
        .into_dimensions()
        .with_context(|| format!("reading the size of {} (PNG expected)", path.display()))?;
    Ok((cols as usize, rows as usize))
}

/// A picture's grey levels (8-bit luma): `(pixels, cols, rows)`.
pub(super) fn load_grey(path: &Path) -> Result<(Vec<u8>, usize, usize)> {
    let image = image::ImageReader::open(path)
        .with_context(|| format!("opening {}", path.display()))?
        .with_guessed_format()?
        .decode()
        .with_context(|| format!("decoding {} (PNG expected)", path.display()))?
        .to_luma8();
    let (cols, rows) = image.dimensions();
    Ok((image.into_raw(), cols as usize, rows as usize))
}

// ---- Inputs ---------------------------------------------------------------------------------

/// `n` uniform random bytes.
pub(crate) fn uniform_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    StdRng::seed_from_u64(seed).fill(&mut v[..]);
    v
}

/// `n` bytes, every one [`CONSTANT_BYTE`].
pub(crate) fn constant_bytes(_seed: u64, n: usize) -> Vec<u8> {
    vec![CONSTANT_BYTE; n]
}

/// The Zipf-like sampling table: 2^16 entries, value k filling a share of them proportional to
/// `1 / (k + 1)^ZIPF_EXPONENT` (rounded to whole entries, at least one each), in order.
pub(super) fn zipf_table() -> Vec<u8> {
    const ENTRIES: usize = 1 << 16;
    let weights: Vec<f64> = (0..256)
        .map(|k| 1.0 / ((k + 1) as f64).powf(ZIPF_EXPONENT))
        .collect();
    let total: f64 = weights.iter().sum();
    // Every value at least one entry; the rest by the largest remainders' order of value,
    // which for decreasing weights is simply: cumulative rounding.
    let mut table = Vec::with_capacity(ENTRIES);
    let mut cumulative = 0.0;
    for (k, w) in weights.iter().enumerate() {
        cumulative += w;
        let end = ((cumulative / total * ENTRIES as f64).round() as usize)
            .max(table.len() + 1)
            .min(ENTRIES - (255 - k));
        table.resize(end, k as u8);
    }
    table.resize(ENTRIES, 255);
    table
}

/// `n` Zipf-like bytes (seeded): value k with probability about `1 / (k + 1)` over the
/// harmonic number H_256 = 6.12 (value 0 about 16% of the bytes, the 128 largest values
/// together about 11%), sampled through [`zipf_table`] (each probability rounded to a
/// multiple of 2^-16).
pub(crate) fn zipf_bytes(seed: u64, n: usize) -> Vec<u8> {
    let table = zipf_table();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let bits: u64 = rng.random();
        for k in 0..4 {
            if v.len() < n {
                v.push(table[((bits >> (16 * k)) & 0xffff) as usize]);
            }
        }
    }
    v
}

/// `source` repeated (and cut) to `n` bytes.
pub(super) fn repeated(source: &[u8], n: usize) -> Vec<u8> {
    source.iter().copied().cycle().take(n).collect()
}

/// The chosen input, and its description for the tables.
pub(super) struct Input {
    pub(super) bytes: Vec<u8>,
    pub(super) what: String,
}

/// The bytes of `--input kind`: generated from `seed`, or the file's repeated to `n`.
pub(super) fn make_input(
    kind: InputKind,
    file: Option<&Path>,
    seed: u64,
    n: usize,
) -> Result<Input> {
    let name = variant_name(kind);
    Ok(match (kind, file) {
        (InputKind::Uniform, _) => Input {
            bytes: uniform_bytes(seed, n),
            what: format!("{name}: uniform random bytes"),
        },
        (InputKind::Constant, _) => Input {
            bytes: constant_bytes(seed, n),
            what: format!("{name}: every byte {CONSTANT_BYTE}"),
        },
        (InputKind::Zipf, _) => Input {
            bytes: zipf_bytes(seed, n),
            what: format!("{name}: P(k) ~ 1/(k+1)^{ZIPF_EXPONENT} over 256 values"),
        },
        (InputKind::Image | InputKind::Text, Some(path)) => {
            let (source, what) = if kind == InputKind::Image {
                let (pixels, cols, rows) = load_grey(path)?;
                (
                    pixels,
                    format!("{cols} x {rows} grey levels of {}", path.display()),
                )
            } else {
                let bytes = std::fs::read(path)
                    .with_context(|| format!("demo histogram: reading {}", path.display()))?;
                let len = bytes.len();
                (bytes, format!("the {len} bytes of {}", path.display()))
            };
            if source.is_empty() {
                bail!("demo histogram: {} has no bytes to count", path.display());
            }
            let what = if source.len() == n {
                format!("{name}: {what}")
            } else {
                format!("{name}: {what}, repeated to {n} bytes")
            };
            Input {
                bytes: repeated(&source, n),
                what,
            }
        }
        (InputKind::Image | InputKind::Text, None) => {
            bail!("demo histogram: --input {name} reads a file: give --file PATH")
        }
    })
}
