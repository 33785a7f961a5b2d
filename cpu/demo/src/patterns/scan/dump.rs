//! The names `demo scan --dump DIR` writes its arrays under (`DIR/scan/<name>.npy`), one
//! function per table, so that the run and the tests name them alike.
//!
//! - ladder: `input` (i32), `output_<variant>` for each step (`output_kogge-stone`, ...: the
//!   variant's name, as `--variant` takes it; two steps share the kernel `scan_coarsened`);
//!   the block scans' outputs are each section scanned on its own.
//! - entry points: `input_i32`, `output_inclusive_sum_i32`, `output_exclusive_sum_i32`;
//!   `input_u32`, `output_inclusive_sum_u32`, `output_tile_copy_u32` (the input copied through
//!   the look-back's tiles); `input_f32`, `output_inclusive_sum_f32`, `output_exclusive_sum_f32`.
//! - select-if: `input_select_<type>`, `output_select_if_<type>` (the kept elements only: the
//!   first `count` of the output buffer, whose rest the call leaves unspecified) and
//!   `output_select_if_<type>_count` (one u32), for `f32` (`x > 0`) and `i32` (`x != 2`).
//! - operators, for every type `<type>` (`i8`..`u64`, `f32`, `f64`, `f16`): the input
//!   `input_ops_<type>` (`input_<type>` is the entry points' for `i32`, `u32`, `f32`) and the
//!   product's exact factors `input_ops_product_<type>`; the inclusive scans
//!   `output_<op>_<type>` for `<op>` = `cumsum`, `cumprod`, `cummin`, `cummax`; the scans by
//!   key: the keys `input_by_key_keys` (u32), the values `input_by_key_<type>`, and
//!   `output_sum_by_key_f32`, `output_max_by_key_i32`.

use cpu::scan::{Kind, ladder};

use crate::engine::registry::variant_name;

/// A ladder step's output.
pub(super) fn ladder_output(variant: ladder::Variant) -> String {
    format!("output_{}", variant_name(variant))
}

/// An entry point's input of element type `ty` (`i32`, `u32`, `f32`).
pub(super) fn entry_input(ty: &str) -> String {
    format!("input_{ty}")
}

/// An entry point's output: `output_inclusive_sum_i32`.
pub(super) fn entry_output(kind: Kind, ty: &str) -> String {
    format!("output_{}_sum_{ty}", super::kind_name(kind))
}

/// The look-back's tile copy of the u32 input.
pub(super) const TILE_COPY: &str = "output_tile_copy_u32";

/// The compaction's input of element type `ty`.
pub(super) fn select_input(ty: &str) -> String {
    format!("input_select_{ty}")
}

/// The compaction's kept elements.
pub(super) fn select_output(ty: &str) -> String {
    format!("output_select_if_{ty}")
}

/// The compaction's count.
pub(super) fn select_count(ty: &str) -> String {
    format!("{}_count", select_output(ty))
}

/// The operator table's input of `ty` (`product`: the product's factors).
pub(super) fn ops_input(product: bool, ty: &str) -> String {
    if product {
        format!("input_ops_product_{ty}")
    } else {
        format!("input_ops_{ty}")
    }
}

/// An operator's inclusive scan: `output_cummax_i8` (`op`: `cumsum`, `cumprod`, `cummin`,
/// `cummax`).
pub(super) fn ops_output(op: &str, ty: &str) -> String {
    format!("output_{op}_{ty}")
}

/// The scans by key's keys.
pub(super) const BY_KEY_KEYS: &str = "input_by_key_keys";

/// A scan by key's values of `ty`.
pub(super) fn by_key_input(ty: &str) -> String {
    format!("input_by_key_{ty}")
}

/// A scan by key's output: `output_sum_by_key_f32` (`op`: `sum`, `max`).
pub(super) fn by_key_output(op: &str, ty: &str) -> String {
    format!("output_{op}_by_key_{ty}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name a whole run writes, as the docs list them.
    #[test]
    fn names_are_the_documented_ones_and_distinct() {
        let mut names: Vec<String> = vec!["input".into()];
        names.extend(ladder::Variant::ALL.iter().map(|&v| ladder_output(v)));
        for ty in ["i32", "f32"] {
            names.push(entry_input(ty));
            names.push(entry_output(Kind::Inclusive, ty));
            names.push(entry_output(Kind::Exclusive, ty));
        }
        names.push(entry_input("u32"));
        names.push(entry_output(Kind::Inclusive, "u32"));
        names.push(TILE_COPY.into());
        for ty in ["f32", "i32"] {
            names.extend([select_input(ty), select_output(ty), select_count(ty)]);
        }
        for ty in [
            "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "f16",
        ] {
            names.extend([ops_input(false, ty), ops_input(true, ty)]);
            for op in ["cumsum", "cumprod", "cummin", "cummax"] {
                names.push(ops_output(op, ty));
            }
        }
        names.push(BY_KEY_KEYS.into());
        names.extend([by_key_input("f32"), by_key_input("i32")]);
        names.extend([by_key_output("sum", "f32"), by_key_output("max", "i32")]);
        for expected in [
            "output_kogge-stone",
            "output_hierarchical",
            "output_decoupled-lookback",
            "input_i32",
            "output_inclusive_sum_i32",
            "output_exclusive_sum_f32",
            "output_inclusive_sum_u32",
            "input_select_f32",
            "output_select_if_i32",
            "output_select_if_i32_count",
            "input_ops_f16",
            "input_ops_product_u8",
            "output_cummax_i8",
            "output_cumsum_f16",
            "input_by_key_keys",
            "output_sum_by_key_f32",
        ] {
            assert!(names.iter().any(|n| n == expected), "{expected} not named");
        }
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "a name twice: {names:?}");
    }
}
