//! The CPU references of the sorts: the standard library's stable sort with `torch.sort`'s
//! order of the key type ([`TorchOrder`]), independent of the kernels' bit mapping.

use std::cmp::Ordering;

use super::Order;

/// A key's order as `torch.sort` (with `stable=True`) orders it: integers as they are; floats
/// with `-0.0 == +0.0`, every NaN above `+inf` and equal to every other NaN.
pub trait TorchOrder: Copy {
    /// `self` against `other`.
    fn torch_cmp(&self, other: &Self) -> Ordering;
}

macro_rules! int_order {
    ($($t:ty),*) => {$(
        impl TorchOrder for $t {
            fn torch_cmp(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
        }
    )*};
}
int_order!(u8, u16, u32, u64, i8, i16, i32, i64);

macro_rules! float_order {
    ($($t:ty),*) => {$(
        impl TorchOrder for $t {
            fn torch_cmp(&self, other: &Self) -> Ordering {
                match (self.is_nan(), other.is_nan()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Greater,
                    (false, true) => Ordering::Less,
                    // `partial_cmp` has `-0.0 == +0.0`.
                    (false, false) => self.partial_cmp(other).expect("neither is NaN"),
                }
            }
        }
    )*};
}
float_order!(f32, f64);

/// The indices that sort `keys` stably in `order` (`torch.argsort(stable=True)`).
pub fn argsort<K: TorchOrder>(keys: &[K], order: Order) -> Vec<usize> {
    let mut index: Vec<usize> = (0..keys.len()).collect();
    match order {
        Order::Ascending => index.sort_by(|&a, &b| keys[a].torch_cmp(&keys[b])),
        Order::Descending => index.sort_by(|&a, &b| keys[b].torch_cmp(&keys[a])),
    }
    index
}

/// `keys` sorted stably in `order`, and `values` moved with them.
pub fn sort_pairs<K: TorchOrder, V: Copy>(
    keys: &[K],
    values: &[V],
    order: Order,
) -> (Vec<K>, Vec<V>) {
    let index = argsort(keys, order);
    (
        index.iter().map(|&i| keys[i]).collect(),
        index.iter().map(|&i| values[i]).collect(),
    )
}

/// `keys` sorted stably in `order`.
pub fn sort_keys<K: TorchOrder>(keys: &[K], order: Order) -> Vec<K> {
    argsort(keys, order).into_iter().map(|i| keys[i]).collect()
}

/// Bytes a one-sweep sort of `n` keys of `key_bytes` (with values of `value_bytes`, 0 for none)
/// in `passes` passes must move: the up-front count reads the keys once, each pass reads and
/// writes every key and value once.
pub fn bytes_moved(n: usize, key_bytes: usize, value_bytes: usize, passes: u32) -> u64 {
    let n = n as u64;
    n * key_bytes as u64 + 2 * n * (key_bytes + value_bytes) as u64 * passes as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_follow_torch() {
        let keys = [
            1.0f32,
            f32::NAN,
            -0.0,
            0.0,
            f32::NEG_INFINITY,
            -f32::NAN,
            -1.0,
            0.0,
        ];
        let sorted = sort_keys(&keys, Order::Ascending);
        let bits: Vec<u32> = sorted.iter().map(|x| x.to_bits()).collect();
        let want: Vec<u32> = [
            f32::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            0.0,
            1.0,
            f32::NAN,
            -f32::NAN,
        ]
        .iter()
        .map(|x| x.to_bits())
        .collect();
        assert_eq!(bits, want);
        let down = argsort(&keys, Order::Descending);
        assert_eq!(down, vec![1, 5, 0, 2, 3, 7, 6, 4]);
    }

    /// The patterns the module docs' table lists (what `keys_bits`' bit range selects from).
    #[test]
    fn the_documented_bit_patterns() {
        use gpu::sort::{KEY_FLOAT, KEY_SIGNED, KEY_UNSIGNED, RadixBits};
        let f = |x: f32| x.to_bits().ordered(KEY_FLOAT, 0);
        assert_eq!(f(f32::NEG_INFINITY), 0x007f_ffff);
        assert_eq!((f(-0.0), f(0.0)), (0x8000_0000, 0x8000_0000));
        assert_eq!(f(f32::INFINITY), 0xff80_0000);
        for nan in [f32::NAN, -f32::NAN, f32::from_bits(0xff80_0001)] {
            assert_eq!(f(nan), u32::MAX, "{:#x}", nan.to_bits());
        }
        assert!(f(-1.0) < f(-0.5) && f(-0.5) < f(0.0) && f(0.0) < f(1e-45) && f(1.0) < f(2.0));
        let i = |x: i32| (x as u32).ordered(KEY_SIGNED, 0);
        assert_eq!((i(i32::MIN), i(-1), i(0)), (0, 0x7fff_ffff, 0x8000_0000));
        assert_eq!(7u32.ordered(KEY_UNSIGNED, 0), 7);
        // Descending: the pattern inverted.
        assert_eq!(
            1.0f64.to_bits().ordered(KEY_FLOAT, u64::MAX),
            !(1.0f64.to_bits() | 1 << 63)
        );
    }

    #[test]
    fn pairs_are_stable() {
        let (k, v) = sort_pairs(&[2u8, 1, 2, 1], &[0u32, 1, 2, 3], Order::Ascending);
        assert_eq!((k, v), (vec![1, 1, 2, 2], vec![1, 3, 0, 2]));
    }

    #[test]
    fn traffic_of_32_bit_keys() {
        assert_eq!(bytes_moved(1 << 28, 4, 0, 4), 36 << 28);
    }
}
