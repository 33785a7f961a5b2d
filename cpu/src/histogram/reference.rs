//! CPU references of the histograms, the bin rule of [`even`](super::even), and histogram
//! equalisation.

use gpu::histogram::NO_BIN;

use super::{BYTE_BINS, HistogramElement, MAX_BINS};

/// The 256-bin histogram of `input`: `counts[b] = #{i : input[i] == b}`, in `u64` (exact for
/// any length).
pub fn bytes(input: &[u8]) -> [u64; BYTE_BINS] {
    let mut counts = [0u64; BYTE_BINS];
    for &b in input {
        counts[b as usize] += 1;
    }
    counts
}

/// The bin of `x` among `bins` equal-width bins over `[lower, upper)`, as
/// [`even`](super::even) computes it on the GPU (the same code: `gpu::histogram::EvenSample`,
/// which the kernels call):
/// - integers: `floor((x - lower) * bins / (upper - lower))`, exact;
/// - `f32`, as CUB: `((x - lower) * scale)` with `scale = bins / (upper - lower)`, both
///   rounded in `f32`, truncated towards zero and clamped to `bins - 1`.
///
/// `None` when `x < lower`, `x >= upper` or `x` is NaN, and when no bins can be made (`bins`
/// outside `1..=MAX_BINS`, or a range [`even`](super::even) refuses).
pub fn bin_of<T: HistogramElement>(
    x: T,
    bins: usize,
    lower: T::Level,
    upper: T::Level,
) -> Option<usize> {
    if bins == 0 || bins > MAX_BINS || !T::valid_range(lower, upper) {
        return None;
    }
    match x.bin(&T::rule(bins as u32, lower, upper)) {
        NO_BIN => None,
        b => Some(b as usize),
    }
}

/// The even histogram of `input` on the CPU: `counts[b] = #{i : bin_of(input[i]) == Some(b)}`
/// in `u64`, `bins` counts.
///
/// # Panics
/// If `bins` is outside `1..=MAX_BINS` or the range is one [`even`](super::even) refuses.
pub fn even<T: HistogramElement>(
    input: &[T],
    bins: usize,
    lower: T::Level,
    upper: T::Level,
) -> Vec<u64> {
    assert!(
        (1..=MAX_BINS).contains(&bins) && T::valid_range(lower, upper),
        "no histogram of {bins} bins over [{lower:?}, {upper:?})"
    );
    let rule = T::rule(bins as u32, lower, upper);
    let mut counts = vec![0u64; bins];
    for &x in input {
        let b = x.bin(&rule);
        if b != NO_BIN {
            counts[b as usize] += 1;
        }
    }
    counts
}

/// Histogram equalisation's lookup table from a 256-bin histogram of grey levels (`u32` or
/// `u64` counts, e.g. from [`bytes`](super::bytes) or [`bytes()`]): the classic CDF mapping
/// `lut[v] = round((cdf(v) - cdf_min) / (N - cdf_min) * 255)`, where `cdf(v)` counts the
/// pixels at or below `v`, `N` all of them and `cdf_min` those at the lowest level present;
/// levels below it map to 0, rounding is half up, in exact integer arithmetic. An image of
/// one level (or none: `N == cdf_min`) has nothing to stretch: the identity table.
///
/// Source: Gonzalez and Woods, *Digital Image Processing*, §3.3.1; the formula as written in
/// Wikipedia's "Histogram equalization".
///
/// # Panics
/// If `counts` does not have 256 elements.
pub fn equalise_lut<C: Copy + Into<u64>>(counts: &[C]) -> [u8; BYTE_BINS] {
    assert_eq!(
        counts.len(),
        BYTE_BINS,
        "a histogram of grey levels has 256 bins"
    );
    let counts: Vec<u128> = counts.iter().map(|&c| c.into() as u128).collect();
    let total: u128 = counts.iter().sum();
    let cdf_min = counts.iter().copied().find(|&c| c > 0).unwrap_or(0);
    let mut lut = [0u8; BYTE_BINS];
    if total == cdf_min {
        for (v, l) in lut.iter_mut().enumerate() {
            *l = v as u8;
        }
        return lut;
    }
    let den = total - cdf_min;
    let mut cdf = 0u128;
    for (l, &c) in lut.iter_mut().zip(&counts) {
        cdf += c;
        *l = if cdf < cdf_min {
            0
        } else {
            ((2 * (cdf - cdf_min) * 255 + den) / (2 * den)) as u8
        };
    }
    lut
}

/// Histogram equalisation of a grey image on the CPU: [`equalise_lut`] of its [`bytes()`]
/// histogram, applied to every pixel.
pub fn equalise(image: &[u8]) -> Vec<u8> {
    let lut = equalise_lut(&bytes(image));
    image.iter().map(|&p| lut[p as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_count_every_value() {
        let c = bytes(&[0, 255, 7, 7, 255, 255]);
        assert_eq!((c[0], c[7], c[255]), (1, 2, 3));
        assert_eq!(c.iter().sum::<u64>(), 6);
    }

    #[test]
    fn a_byte_range_of_256_bins_is_the_identity() {
        for x in 0..=255u8 {
            // [0, 255) holds 255 values: the top one is dropped.
            let expected = (x < 255).then_some(x as usize * 256 / 255);
            assert_eq!(bin_of(x, 256, 0, 255), expected);
            assert_eq!(bin_of(x as u16, 256, 0, 256), Some(x as usize));
        }
    }

    #[test]
    fn integer_bins_are_exact_floors() {
        // 7 bins over [0, 100): width 100/7.
        assert_eq!(bin_of(0i32, 7, 0, 100), Some(0));
        assert_eq!(bin_of(14i32, 7, 0, 100), Some(0)); // 14 * 7 / 100 = 0.98
        assert_eq!(bin_of(15i32, 7, 0, 100), Some(1)); // 1.05
        assert_eq!(bin_of(99i32, 7, 0, 100), Some(6));
        assert_eq!(bin_of(100i32, 7, 0, 100), None);
        assert_eq!(bin_of(-1i32, 7, 0, 100), None);
        // Negative bounds, and the whole i32 range into 2^20 bins (the 64-bit path).
        assert_eq!(bin_of(-10i32, 4, -10, 10), Some(0));
        assert_eq!(bin_of(-6i32, 4, -10, 10), Some(0));
        assert_eq!(bin_of(-5i32, 4, -10, 10), Some(1));
        assert_eq!(bin_of(9i32, 4, -10, 10), Some(3));
        assert_eq!(
            bin_of(i32::MIN, MAX_BINS, i32::MIN.into(), i32::MAX.into()),
            Some(0)
        );
        assert_eq!(
            bin_of(i32::MAX - 1, MAX_BINS, i32::MIN.into(), i32::MAX.into()),
            Some(MAX_BINS - 1)
        );
        assert_eq!(
            bin_of(i32::MAX, MAX_BINS, i32::MIN.into(), i32::MAX.into()),
            None
        );
        let x = 123_456_789i32;
        let exact = ((x as i64 - i32::MIN as i64) as u128 * MAX_BINS as u128
            / (i32::MAX as i64 - i32::MIN as i64) as u128) as usize;
        assert_eq!(
            bin_of(x, MAX_BINS, i32::MIN.into(), i32::MAX.into()),
            Some(exact)
        );
        // u16 over its whole range into 1000 bins: (65534 * 1000) fits 32 bits, 2^20 does not.
        assert_eq!(bin_of(65534u16, 1000, 0, u16::MAX.into()), Some(999));
        // More bins than values: floor(65534 * 2^20 / 65535) = 2^20 - 17, some bins stay empty.
        assert_eq!(
            bin_of(65534u16, MAX_BINS, 0, u16::MAX.into()),
            Some(MAX_BINS - 17)
        );
        assert_eq!(bin_of(u16::MAX, 1000, 0, u16::MAX.into()), None);
        // One bin takes the whole range.
        assert_eq!(bin_of(200u8, 1, 3, 250), Some(0));
        assert_eq!(bin_of(2u8, 1, 3, 250), None);
    }

    #[test]
    fn floats_follow_cub() {
        assert_eq!(bin_of(0.0f32, 10, 0.0, 1.0), Some(0));
        assert_eq!(bin_of(0.25f32, 4, 0.0, 1.0), Some(1));
        assert_eq!(bin_of(-0.0f32, 4, 0.0, 1.0), Some(0));
        assert_eq!(bin_of(1.0f32, 4, 0.0, 1.0), None);
        assert_eq!(bin_of(-1e-30f32, 4, 0.0, 1.0), None);
        assert_eq!(bin_of(f32::NAN, 4, 0.0, 1.0), None);
        assert_eq!(bin_of(f32::INFINITY, 4, 0.0, 1.0), None);
        assert_eq!(bin_of(f32::NEG_INFINITY, 4, 0.0, 1.0), None);
        // The largest float below the upper bound: rounding carries it to `bins`, clamped.
        let below = f32::from_bits(1.0f32.to_bits() - 1);
        assert_eq!(bin_of(below, 3, 0.0, 1.0), Some(2));
        assert_eq!(bin_of(below, 1 << 20, 0.0, 1.0), Some((1 << 20) - 1));
        // CUB's arithmetic, not the exact quotient: 0.3 * (10 / 1) in f32.
        let x = 0.3f32;
        assert_eq!(
            bin_of(x, 10, 0.0, 1.0),
            Some(((x - 0.0) * (10.0f32 / 1.0)) as usize)
        );
        // Bounds that are not representable exactly, a negative range.
        assert_eq!(bin_of(-2.5f32, 5, -5.0, 0.0), Some(2));
        assert_eq!(bin_of(-5.0f32, 5, -5.0, 0.0), Some(0));
        // Denormals are not flushed: a tiny range still bins.
        let tiny = f32::from_bits(4);
        assert_eq!(bin_of(f32::from_bits(2), 2, 0.0, tiny), Some(1));
    }

    #[test]
    fn refused_ranges_give_no_bin() {
        assert_eq!(bin_of(1i32, 0, 0, 10), None);
        assert_eq!(bin_of(1i32, MAX_BINS + 1, 0, 10), None);
        assert_eq!(bin_of(1i32, 4, 10, 10), None);
        assert_eq!(bin_of(1i32, 4, 10, 0), None);
        assert_eq!(bin_of(0.5f32, 4, f32::NAN, 1.0), None);
        assert_eq!(bin_of(0.5f32, 4, 0.0, f32::INFINITY), None);
        assert_eq!(bin_of(0.5f32, 4, -3e38, 3e38), None); // the width overflows
        assert!(!f32::valid_range(0.0, f32::NAN));
        assert!(u8::valid_range(0, 1));
        // Integer levels span at most 2^32 values.
        assert!(i32::valid_range(i32::MIN.into(), i64::from(i32::MAX) + 1));
        assert!(!i32::valid_range(i32::MIN.into(), i64::from(i32::MAX) + 2));
        assert!(!u8::valid_range(i64::MIN, i64::MAX));
        assert_eq!(bin_of(1u8, 4, i64::MIN, i64::MAX), None);
    }

    #[test]
    fn integer_levels_reach_the_largest_value() {
        assert_eq!(bin_of(255u8, 256, 0, 256), Some(255));
        assert_eq!(bin_of(u16::MAX, 16, 0, 65536), Some(15));
        let top = i64::from(i32::MAX) + 1;
        assert_eq!(bin_of(i32::MAX, 4, i32::MIN.into(), top), Some(3));
        assert_eq!(bin_of(i32::MIN, 4, i32::MIN.into(), top), Some(0));
        assert_eq!(
            even(&[0u8, 255, 255, 128], 2, 0, 256),
            vec![1, 3],
            "[0, 128) and [128, 256)"
        );
    }

    #[test]
    fn even_counts_each_bin() {
        let x = [0.1f32, 0.5, 0.99, 1.0, f32::NAN, -0.5, 0.74];
        assert_eq!(even(&x, 4, 0.0, 1.0), vec![1, 0, 2, 1]);
        assert_eq!(even(&[5u8, 4, 9, 200], 2, 0, 10), vec![1, 2]);
    }

    #[test]
    fn equalisation_stretches_the_cdf() {
        // Two levels, half the pixels each: the lower maps to 0, the upper to 255.
        let mut c = [0u32; 256];
        c[100] = 50;
        c[150] = 50;
        let lut = equalise_lut(&c);
        assert_eq!(
            (lut[0], lut[100], lut[120], lut[150], lut[255]),
            (0, 0, 0, 255, 255)
        );
        // Four equal levels: 0, 85, 170, 255.
        let mut c = [0u64; 256];
        for v in [10, 20, 30, 40] {
            c[v] = 7;
        }
        let lut = equalise_lut(&c);
        assert_eq!([lut[10], lut[20], lut[30], lut[40]], [0, 85, 170, 255]);
        // Rounding half up: (1 / 2) * 255 = 127.5 -> 128.
        let mut c = [0u64; 256];
        c[0] = 1;
        c[1] = 1;
        c[2] = 1;
        assert_eq!(equalise_lut(&c)[1], 128);
        // One level: the identity.
        let mut c = [0u64; 256];
        c[42] = 9;
        assert_eq!(equalise_lut(&c)[42], 42);
        assert_eq!(equalise_lut(&[0u32; 256])[200], 200);
        assert_eq!(equalise(&[3, 3, 9, 9]), vec![0, 0, 255, 255]);
    }
}
