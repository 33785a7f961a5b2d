//! The names `demo sort --dump DIR` writes its arrays under (`DIR/sort/<name>.npy`), one
//! function per table, so that the run and the tests name them alike. Every input a table sorts
//! is written before that table, beside what it verifies.
//!
//! - entry points, for each row `<row>` (its label with `_` for spaces and `/`: `keys_u32`,
//!   `keys_u32_descending`, `keys_f32`, `keys_u64`, `argsort_f32`): the keys it sorts
//!   `input_<row>` (the key type) and `output_<row>` (the sorted keys; for `argsort_f32` the u32
//!   indices); the pairs row `pairs_u32_u32`: `input_pairs_u32_u32_keys`,
//!   `input_pairs_u32_u32_values` (each key's index), `output_pairs_u32_u32_keys` and
//!   `output_pairs_u32_u32_values`.
//! - ladder: `input_ladder` (the u32 keys every rung sorts, ascending) and
//!   `output_ladder_<rung>` for each rung ([`LADDER_RUNGS`]).
//! - segmented: `input_segmented` (the u32 keys every row sorts, ascending, segment by segment),
//!   and for each layout `<layout>` (`1_to_64`, `1_to_2048`, `1_to_65536`, `1_to_2p20`, `one`)
//!   its CSR offsets `input_segmented_<layout>_offsets` (u64, one more than the segments: segment
//!   `s` is `offsets[s]..offsets[s + 1]`) and the sorted keys `output_segmented_<layout>`.

/// An entry point's row label (`pairs u32/u32`) as its part of a name (`pairs_u32_u32`).
pub(super) fn row_name(label: &str) -> String {
    label.replace([' ', '/'], "_")
}

/// The keys an entry point sorts (`part`: `""`, or `keys` / `values` for the pairs row).
pub(super) fn entry_input(row: &str, part: &str) -> String {
    with_part(format!("input_{row}"), part)
}

/// What an entry point returns (`part` as [`entry_input`]'s).
pub(super) fn entry_output(row: &str, part: &str) -> String {
    with_part(format!("output_{row}"), part)
}

fn with_part(name: String, part: &str) -> String {
    if part.is_empty() {
        name
    } else {
        format!("{name}_{part}")
    }
}

/// The ladder's rungs as their part of a name, in the table's order.
pub(super) const LADDER_RUNGS: [&str; 4] = [
    "one_bit_per_pass",
    "four_bits_per_pass",
    "reduce_then_scan",
    "onesweep",
];

/// The keys every rung of the ladder sorts.
pub(super) const LADDER_INPUT: &str = "input_ladder";

/// A rung's sorted keys: `output_ladder_onesweep`.
pub(super) fn ladder_output(rung: &str) -> String {
    format!("output_ladder_{rung}")
}

/// The keys every row of the segmented table sorts.
pub(super) const SEGMENTED_INPUT: &str = "input_segmented";

/// A layout's CSR offsets: `input_segmented_1_to_64_offsets`.
pub(super) fn segmented_offsets(layout: &str) -> String {
    format!("input_segmented_{layout}_offsets")
}

/// A layout's sorted keys: `output_segmented_1_to_64`.
pub(super) fn segmented_output(layout: &str) -> String {
    format!("output_segmented_{layout}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name a whole run writes, as the docs list them.
    #[test]
    fn names_are_the_documented_ones_and_distinct() {
        let mut names = Vec::new();
        for (label, _, _, _) in super::super::ENTRIES {
            let row = row_name(label);
            if label.starts_with("pairs") {
                for part in ["keys", "values"] {
                    names.extend([entry_input(&row, part), entry_output(&row, part)]);
                }
            } else {
                names.extend([entry_input(&row, ""), entry_output(&row, "")]);
            }
        }
        names.push(LADDER_INPUT.into());
        names.extend(LADDER_RUNGS.map(ladder_output));
        names.push(SEGMENTED_INPUT.into());
        for (_, layout, _) in super::super::segmented::LAYOUTS {
            names.extend([segmented_offsets(layout), segmented_output(layout)]);
        }
        for expected in [
            "input_keys_u32",
            "output_keys_u32",
            "input_keys_u32_descending",
            "output_keys_u32_descending",
            "input_keys_f32",
            "output_keys_f32",
            "input_keys_u64",
            "output_keys_u64",
            "input_pairs_u32_u32_keys",
            "input_pairs_u32_u32_values",
            "output_pairs_u32_u32_keys",
            "output_pairs_u32_u32_values",
            "input_argsort_f32",
            "output_argsort_f32",
            "input_ladder",
            "output_ladder_one_bit_per_pass",
            "output_ladder_onesweep",
            "input_segmented",
            "input_segmented_1_to_64_offsets",
            "output_segmented_1_to_64",
            "input_segmented_one_offsets",
            "output_segmented_one",
        ] {
            assert!(names.iter().any(|n| n == expected), "{expected} not named");
        }
        assert!(
            names
                .iter()
                .all(|n| n.starts_with("input_") || n.starts_with("output_")),
            "{names:?}"
        );
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "a name twice: {names:?}");
    }
}
