//! Shared-memory bank conflicts: the access patterns, their conflict degree computed from the
//! bank mapping, and the measurement with
//! `gpu::memory::bank_conflicts::kernels::bank_conflicts_read`.

use gpu::memory::bank_conflicts::{self as k, kernels};

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::launch;
use crate::verify::{self, Mismatch};

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[kernels::bank_conflicts_read.name()];

/// Banks of shared memory (4-byte words).
pub const BANKS: u32 = 32;

/// One access pattern: lane `l` reads word `(l / group) * stride`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessPattern {
    /// Name in the demo's table.
    pub name: &'static str,
    /// Words between consecutive groups of lanes.
    pub stride: u32,
    /// Consecutive lanes that read the same word (1: every lane its own word).
    pub group: u32,
}

/// The patterns of the demo: the seed's strides 1 and 2, powers of two to 32, an odd stride,
/// the padded transpose tile, broadcast and multicast.
pub const PATTERNS: [AccessPattern; 11] = [
    AccessPattern {
        name: "stride 1",
        stride: 1,
        group: 1,
    },
    AccessPattern {
        name: "stride 2",
        stride: 2,
        group: 1,
    },
    AccessPattern {
        name: "stride 4",
        stride: 4,
        group: 1,
    },
    AccessPattern {
        name: "stride 8",
        stride: 8,
        group: 1,
    },
    AccessPattern {
        name: "stride 16",
        stride: 16,
        group: 1,
    },
    AccessPattern {
        name: "stride 32 (tile[32][32] column)",
        stride: 32,
        group: 1,
    },
    AccessPattern {
        name: "stride 3 (odd)",
        stride: 3,
        group: 1,
    },
    AccessPattern {
        name: "stride 33 (padded tile[32][33] column)",
        stride: 33,
        group: 1,
    },
    AccessPattern {
        name: "broadcast (one word)",
        stride: 0,
        group: 1,
    },
    AccessPattern {
        name: "multicast (8 words, 4 lanes each)",
        stride: 1,
        group: 4,
    },
    AccessPattern {
        name: "multicast, 4 words in one bank",
        stride: 32,
        group: 8,
    },
];

/// The n-way conflict of a pattern: the largest number of distinct words one bank must
/// deliver to the 32 lanes (1 = conflict-free; lanes reading the same word share it).
pub fn conflict_degree(stride: u32, group: u32) -> u32 {
    let mut words_per_bank: Vec<Vec<u32>> = vec![Vec::new(); BANKS as usize];
    for lane in 0..32u32 {
        let word = (lane / group.max(1)) * stride;
        let bank = &mut words_per_bank[(word % BANKS) as usize];
        if !bank.contains(&word) {
            bank.push(word);
        }
    }
    words_per_bank.iter().map(Vec::len).max().unwrap_or(1) as u32
}

/// One measured pattern.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Every thread's XOR of the words it read against the host's.
    pub check: std::result::Result<(), Mismatch>,
    /// SM cycles per warp-wide shared load (median over the blocks, one block per SM).
    pub cycles_per_access: f64,
    /// The same in nanoseconds at the device's SM clock.
    pub ns_per_access: f64,
}

/// Runs `reps` reads per thread of the pattern in one block of [`k::BLOCK_SIZE`] threads per SM
/// and returns the cost per warp access and the check of every thread's XOR of the words it
/// read against the host's.
///
/// # Errors
/// [`Error::OutOfRange`] if `stride > MAX_STRIDE`, `group` is not 1..=32 or `reps` is 0;
/// [`Error::Driver`] if the launch fails.
pub fn measure(gpu: &Gpu, stride: u32, group: u32, reps: u32) -> Result<Measured> {
    for (what, value, min, max) in [
        ("stride", stride, 0, k::MAX_STRIDE),
        ("group", group, 1, 32),
        ("reps", reps, 1, u32::MAX),
    ] {
        if !(min..=max).contains(&value) {
            return Err(Error::OutOfRange {
                what,
                value: value.into(),
                min: min.into(),
                max: max.into(),
            });
        }
    }
    let kernel = kernels::bank_conflicts_read;
    let blocks = gpu.sm_count()?;
    let threads = blocks as usize * k::BLOCK_SIZE as usize;
    let mut cycles = gpu.poisoned::<u64>(blocks as usize, u64::MAX)?;
    let mut sink = gpu.poisoned::<u32>(threads, 0xDEAD_BEEF)?;
    let cfg = launch::linear(blocks, k::BLOCK_SIZE, 0);
    // SAFETY: `bank_conflicts_read(stride, group, reps, cycles, sink)`: `cycles` holds `grid`
    // and `sink` `grid * block` elements.
    unsafe { gpu.launch_unchecked(kernel, cfg, (stride, group, reps, &mut cycles, &mut sink)) }?;
    let got = gpu.download(&sink, kernel.name())?;
    let per_thread = expected_sink(stride, group, reps);
    let expected: Vec<u32> = (0..threads)
        .map(|t| per_thread[t % k::BLOCK_SIZE as usize])
        .collect();
    let check = verify::exact(&got, &expected);
    let mut per_block: Vec<f64> = gpu
        .download(&cycles, kernel.name())?
        .into_iter()
        .map(|c| c as f64)
        .collect();
    per_block.sort_by(f64::total_cmp);
    let median = per_block[per_block.len() / 2];
    let warps = (k::BLOCK_SIZE / 32) as f64;
    let cycles_per_access = median / (reps as f64 * warps);
    let clock_khz = gpu.sm_clock_khz()? as f64;
    Ok(Measured {
        check,
        cycles_per_access,
        ns_per_access: cycles_per_access / clock_khz * 1e6,
    })
}

/// What each thread of a block XORs together: the words it reads, `word(w) = w * 2654435761`.
pub fn expected_sink(stride: u32, group: u32, reps: u32) -> Vec<u32> {
    let mask = k::SHARED_WORDS as u32 - 1;
    (0..k::BLOCK_SIZE)
        .map(|t| {
            let base = ((t % 32) / group.max(1)).wrapping_mul(stride);
            (0..reps).fold(0u32, |acc, r| {
                let w = base.wrapping_add(32 * r) & mask;
                acc ^ w.wrapping_mul(2_654_435_761)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_degrees_follow_the_bank_mapping() {
        let degrees: Vec<u32> = PATTERNS
            .iter()
            .map(|p| conflict_degree(p.stride, p.group))
            .collect();
        assert_eq!(degrees, [1, 2, 4, 8, 16, 32, 1, 1, 1, 1, 4]);
    }
}
