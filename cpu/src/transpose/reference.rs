//! The CPU reference of the transpose and the bytes a transpose moves.

/// CPU reference: the `cols x rows` row-major transpose of the `rows x cols` row-major `input`.
///
/// # Panics
/// If `input.len() != rows * cols`.
pub fn reference(input: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    assert_eq!(input.len(), rows * cols, "input is not rows x cols");
    let mut out = vec![0.0; input.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = input[r * cols + c];
        }
    }
    out
}

/// Bytes a transpose (or copy) of `rows x cols` floats must move: each element read and written once.
pub fn bytes_moved(rows: usize, cols: usize) -> u64 {
    8 * rows as u64 * cols as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_by_hand() {
        // [[1, 2, 3], [4, 5, 6]] -> [[1, 4], [2, 5], [3, 6]]
        assert_eq!(
            reference(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3),
            vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
        );
        assert_eq!(reference(&[7.0], 1, 1), vec![7.0]);
    }
}
