//! The names `demo histogram --dump DIR` writes its arrays under (`DIR/histogram/<name>.npy`),
//! one function per table, so that the run and the tests name them alike.
//!
//! - ladder: `input` (the `--input` bytes), `output_<variant>` (256 u32 counts) for each step
//!   (`output_global-atomics`, ..., `output_bytes`: the variant's name, as `demo list` shows it).
//! - inputs: `input_bytes_<input>` and `output_bytes_<input>` (256 u32 counts) for each input
//!   kind (`uniform`, `constant`, `zipf`, and `image` or `text` with `--file`), and
//!   `output_bytes_accumulate_uniform`: `Update::Accumulate` onto counts of 1 each, so every
//!   count is one more than `output_bytes_uniform`'s; `output_bytes_u64_uniform`, the same
//!   bytes into 256 u64 counts (`histogram_bytes_u64`).
//! - even: `input_even_<type>` (`u8`, `u16`, `i32`, `f32`), `range_even_<type>` (`[lower,
//!   upper]` of the call, in the level type: `i64` for the integer samples, `f32` for `f32`) and `output_even_<type>_<bins>_<counts>`
//!   (`output_even_f32_256_u64`), for each bin count the table runs (`--bins`, 4096, and one
//!   beyond the shared-memory limit).
//! - shared-atomics: `output_shared_atomics_<pattern>`, the sink (one u32; predicted for
//!   `distinct-banks` and `one-address` only).
//! - equalise (with `--image`): `image_input` (rows x cols grey levels), `image_counts` (256
//!   u32) and `image_output` (rows x cols, equalised).

use cpu::histogram::ladder;

use crate::engine::registry::variant_name;

/// A ladder step's counts.
pub(super) fn ladder_output(variant: ladder::Variant) -> String {
    format!("output_{}", variant_name(variant))
}

/// The bytes of input kind `input` (`uniform`) the inputs table counts.
pub(super) fn bytes_input(input: &str) -> String {
    format!("input_bytes_{input}")
}

/// `histogram::bytes`'s counts of input kind `input`; `accumulate` for the row adding to
/// counts of 1.
pub(super) fn bytes_output(input: &str, accumulate: bool) -> String {
    if accumulate {
        format!("output_bytes_accumulate_{input}")
    } else {
        format!("output_bytes_{input}")
    }
}

/// `histogram::bytes`'s counts of input kind `input` into u64 counters.
pub(super) fn bytes_output_u64(input: &str) -> String {
    format!("output_bytes_u64_{input}")
}

/// The samples of type `ty` the even table counts.
pub(super) fn even_input(ty: &str) -> String {
    format!("input_even_{ty}")
}

/// The `[lower, upper]` bounds the even table passes for samples of type `ty`.
pub(super) fn even_range(ty: &str) -> String {
    format!("range_even_{ty}")
}

/// `histogram::even`'s `bins` counts of type `counts` over the samples of type `ty`.
pub(super) fn even_output(ty: &str, bins: usize, counts: &str) -> String {
    format!("output_even_{ty}_{bins}_{counts}")
}

/// The shared-atomic microbenchmark's sink for `pattern`.
pub(super) fn shared_atomics_output(pattern: ladder::AtomicPattern) -> String {
    format!("output_shared_atomics_{}", variant_name(pattern))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_documented_ones_and_distinct() {
        let mut names: Vec<String> = vec!["input".into()];
        names.extend(ladder::Variant::ALL.iter().map(|&v| ladder_output(v)));
        for input in ["uniform", "constant", "zipf"] {
            names.push(bytes_input(input));
            names.push(bytes_output(input, false));
        }
        names.push(bytes_output("uniform", true));
        names.push(bytes_output_u64("uniform"));
        for ty in ["u8", "u16", "i32", "f32"] {
            names.push(even_input(ty));
            names.push(even_range(ty));
            for bins in [256, 4096, 12289] {
                for counts in ["u32", "u64"] {
                    names.push(even_output(ty, bins, counts));
                }
            }
        }
        names.extend(ladder::AtomicPattern::ALL.map(shared_atomics_output));
        for expected in [
            "output_global-atomics",
            "output_bytes",
            "input_bytes_zipf",
            "output_bytes_zipf",
            "output_bytes_accumulate_uniform",
            "output_bytes_u64_uniform",
            "input_even_f32",
            "output_even_f32_256_u32",
            "output_even_u16_4096_u64",
            "output_shared_atomics_one-address",
        ] {
            assert!(names.iter().any(|n| n == expected), "{expected} not named");
        }
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "a name twice: {names:?}");
    }
}
