//! Constant memory: launchers and CPU reference for `gpu::memory::constant_memory` (the table
//! read uniformly or divergently from `__constant__`, global and read-only memory, and the
//! seed's `devVar` example).

use cudarc::driver::{CudaSlice, LaunchConfig};
use gpu::memory::constant_memory::{self as k, kernels};

use crate::context::{ConstantMemory, Gpu};
use crate::error::{Error, Result};
use crate::launch;

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[
    kernels::constant_memory_table.name(),
    kernels::constant_memory_global_table.name(),
    kernels::constant_memory_readonly_table.name(),
    kernels::constant_memory_dev_var.name(),
];

/// Where the table is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Variant {
    /// `__constant__` memory (`ld.const`).
    Constant,
    /// Global memory, ordinary loads.
    Global,
    /// Global memory through the read-only data path (`ld.global.nc`).
    ReadOnly,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 3] = [Variant::Constant, Variant::Global, Variant::ReadOnly];

    /// The kernel's `.entry` name (the constant-memory kernel takes no table parameter, so
    /// the variants' kernels have two signatures: [`Table::launch`] launches each by its own).
    pub fn kernel_name(self) -> &'static str {
        match self {
            Variant::Constant => kernels::constant_memory_table.name(),
            Variant::Global => kernels::constant_memory_global_table.name(),
            Variant::ReadOnly => kernels::constant_memory_readonly_table.name(),
        }
    }
}

/// How the lanes of a warp address the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Access {
    /// Every lane reads the same word (`spread = 0`): one broadcast per warp.
    Uniform,
    /// The 32 lanes read 32 different words (`spread = 1`).
    Divergent,
}

impl Access {
    /// Both access patterns.
    pub const ALL: [Access; 2] = [Access::Uniform, Access::Divergent];

    /// Words between neighbouring lanes' addresses.
    pub fn spread(self) -> u32 {
        match self {
            Access::Uniform => 0,
            Access::Divergent => 1,
        }
    }
}

/// The table on the device: in `__constant__` memory ([`k::C_TABLE`]) and in a global buffer.
pub struct Table {
    values: Vec<f32>,
    global: CudaSlice<f32>,
    tag: u64,
}

impl Table {
    /// Uploads `values` to a global buffer. The `__constant__` copy is written by
    /// [`Table::launch`] for the [`Variant::Constant`] kernel, under the module's constant
    /// memory lock.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `values` has [`k::TABLE_LEN`] elements;
    /// [`Error::Driver`] if the upload fails.
    pub fn new(gpu: &Gpu, values: &[f32]) -> Result<Self> {
        if values.len() != k::TABLE_LEN {
            return Err(Error::LengthMismatch {
                what: "table",
                expected: k::TABLE_LEN,
                actual: values.len(),
            });
        }
        Ok(Self {
            values: values.to_vec(),
            global: gpu.upload(values)?,
            tag: crate::context::new_constant_tag(),
        })
    }

    /// Writes the `__constant__` copy (once: the table is immutable and tagged). Callers queue
    /// their launches of [`Variant::Constant`] while `constants` lives.
    ///
    /// # Errors
    /// [`Error::Driver`] if the copy fails.
    pub fn write_constant(&self, constants: &mut ConstantMemory) -> Result<()> {
        constants.write_constant_tagged(k::C_TABLE, self.tag, &self.values)
    }

    /// Queues `out[i] = sum_{k < reads} table[(k + lane * spread) % TABLE_LEN]` for every
    /// element of `out` (blocks of [`k::BLOCK_SIZE`]). For [`Variant::Constant`], the table must
    /// have been written with [`Table::write_constant`] under the lock.
    ///
    /// # Errors
    /// [`Error::GridTooLarge`] if the grid would be too large; [`Error::Driver`] if the
    /// launch fails.
    pub fn launch(
        &self,
        gpu: &Gpu,
        variant: Variant,
        access: Access,
        reads: u32,
        out: &mut CudaSlice<f32>,
    ) -> Result<LaunchConfig> {
        let kernel = variant.kernel_name();
        let n = out.len();
        let cfg = launch::linear(
            launch::blocks_to_cover(kernel, n, k::BLOCK_SIZE as u64)?,
            k::BLOCK_SIZE,
            0,
        );
        if n == 0 {
            return Ok(cfg);
        }
        let spread = access.spread();
        let table = &self.global;
        match variant {
            // SAFETY: `constant_memory_table(out, n, reads, spread)` reads the `__constant__`
            // table (TABLE_LEN floats, written under the caller's lock); `out` holds `n` floats
            // and the grid covers them.
            Variant::Constant => unsafe {
                gpu.launch_unchecked(kernels::constant_memory_table, cfg, (out, n, reads, spread))
            },
            // SAFETY: `constant_memory_global_table(table, out, n, reads, spread)`: `table`
            // holds TABLE_LEN floats, only read; `out` holds `n` floats and the grid covers them.
            Variant::Global => unsafe {
                gpu.launch_unchecked(
                    kernels::constant_memory_global_table,
                    cfg,
                    (table, out, n, reads, spread),
                )
            },
            // SAFETY: as `Global`, for `constant_memory_readonly_table` (`table` is not written
            // during the launch, as the read-only path requires).
            Variant::ReadOnly => unsafe {
                gpu.launch_unchecked(
                    kernels::constant_memory_readonly_table,
                    cfg,
                    (table, out, n, reads, spread),
                )
            },
        }?;
        Ok(cfg)
    }

    /// CPU reference for `n` threads: each lane's sequential `f32` sum (the kernel's order, so
    /// the result is exact).
    pub fn reference(&self, n: usize, access: Access, reads: u32) -> Vec<f32> {
        let per_lane: Vec<f32> = (0..32u32)
            .map(|lane| {
                (0..reads).fold(0.0f32, |s, r| {
                    let j = (r.wrapping_add(lane.wrapping_mul(access.spread())) as usize)
                        % k::TABLE_LEN;
                    s + self.values[j]
                })
            })
            .collect();
        (0..n).map(|i| per_lane[i % 32]).collect()
    }
}

/// Runs one variant and access pattern on `n` threads and returns the output (constant
/// memory written and read under the lock).
///
/// # Errors
/// As [`Table::new`] and [`Table::launch`].
pub fn run(
    gpu: &Gpu,
    variant: Variant,
    access: Access,
    values: &[f32],
    n: usize,
    reads: u32,
) -> Result<Vec<f32>> {
    let table = Table::new(gpu, values)?;
    let mut out = gpu.poisoned(n, f32::NAN)?;
    let mut constants = gpu.constant_memory()?;
    if variant == Variant::Constant {
        table.write_constant(&mut constants)?;
    }
    table.launch(gpu, variant, access, reads, &mut out)?;
    drop(constants);
    gpu.download(&out, variant.kernel_name())
}

/// The seed's example: `__constant__ int devVar = 100;`, `xminus<<<1, threads>>>(a)` with
/// `a[i] = devVar + i` (the seed uses 4 threads and prints `100 101 102 103`).
///
/// # Errors
/// [`Error::InvalidBlock`] if `threads` is not 1..=1024; [`Error::Driver`] on a driver
/// failure.
pub fn dev_var_example(gpu: &Gpu, dev_var: i32, threads: u32) -> Result<Vec<i32>> {
    let kernel = kernels::constant_memory_dev_var;
    launch::check_block(kernel.name(), threads, false)?;
    let mut a = gpu.poisoned(threads as usize, i32::MIN)?;
    let mut constants = gpu.constant_memory()?;
    constants.write_constant(k::C_DEV_VAR, &[dev_var])?;
    // SAFETY: `constant_memory_dev_var(a)`, one block of `threads` threads, `a` holds `threads`
    // ints.
    unsafe { gpu.launch_unchecked(kernel, launch::linear(1, threads, 0), (&mut a,)) }?;
    gpu.download(&a, kernel.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads() {
        assert_eq!(Access::Uniform.spread(), 0);
        assert_eq!(Access::Divergent.spread(), 1);
        assert_eq!(KERNELS.len(), 4);
    }
}
