//! [`ScanWorkspace`]: the look-back scan's tile status words and ticket, and the launches of
//! the scans, the compaction and the tile copy on them.

use std::marker::PhantomData;

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceSlice, LaunchConfig};
use gpu::scan::{self as k, lookback};

use super::ops::{ByKeyKind, ScanKeys};
use super::{EMPTY_LAUNCH, Kind, Predicate, ScanElement, ScanKind, SelectElement};
#[allow(unused_imports)] // doc links
use super::{exclusive_sum, inclusive_scan_by_key, inclusive_sum, select_if, select_if_count};
use crate::context::Gpu;
use crate::error::{Error, Result, expect_len};
use crate::kernel::DeviceAddress;
use crate::launch;

/// The look-back scan's scratch: the tiles' status words (one 64-bit word per tile holding the
/// tile's aggregate or inclusive prefix, tagged with the launch's epoch; three for 8-byte
/// accumulators, [`gpu::scan::status_words`]) and the tile ticket. Launches on one
/// workspace pass consecutive epochs, so the status words are never cleared between them
/// (only when the 30-bit epoch wraps, once in about 10^9 launches); the ticket counter is left
/// at 0 by every launch. It grows to the longest input it has scanned (8 bytes per 4096
/// elements, the smallest tile: 2 MiB for 2^30).
///
/// One workspace serves one launch at a time: cudarc's stream synchronisation orders launches
/// that share it, also across streams. For concurrent scans on several streams use one
/// workspace per stream (as the handles of [`Gpu::with_new_stream`] do).
pub struct ScanWorkspace<T> {
    status: CudaSlice<u64>,
    counter: CudaSlice<u32>,
    epoch: u32,
    /// [`select_if_count`]'s count (made on its first call).
    selected: Option<CudaSlice<u32>>,
    element: PhantomData<fn() -> T>,
}

impl<T> ScanWorkspace<T> {
    /// A workspace for inputs up to 2^20 elements (it grows when a longer one comes).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`]; [`Error::Driver`] if an allocation fails.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Self::with_capacity(gpu, 1 << 20)
    }

    /// A workspace for inputs up to `n` elements without growing.
    ///
    /// # Errors
    /// As [`ScanWorkspace::new`].
    pub fn with_capacity(gpu: &Gpu, n: usize) -> Result<Self> {
        Ok(Self {
            status: gpu.zeros(n.div_ceil(k::LOOKBACK_MIN_TILE).max(1))?,
            counter: gpu.zeros(1)?,
            epoch: 0,
            selected: None,
            element: PhantomData,
        })
    }

    /// Queues `output = scan of input` with the operator `K` ([`ScanKind`]: `Sum<T>`,
    /// `Product<T>`, `Min<T>`, `Max<T>`), inclusive or exclusive from `init` (the operator's
    /// identity when `None`), on this workspace, and returns the launch's configuration
    /// ([`EMPTY_LAUNCH`] for an empty input).
    ///
    /// # Errors
    /// As [`inclusive_sum`].
    pub fn scan_with<K: ScanKind<Item = T>>(
        &mut self,
        gpu: &Gpu,
        kind: Kind,
        init: Option<T>,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
    ) -> Result<LaunchConfig> {
        gpu.check_buffer("input", input)?;
        gpu.check_buffer("output", output)?;
        let n = input.len();
        expect_len("output", n, output.len())?;
        let Some((cfg, epoch)) = self.prepare::<K>(gpu, n)? else {
            return Ok(EMPTY_LAUNCH);
        };
        let init = init.map_or(K::IDENTITY, K::lift);
        // SAFETY: `K::KERNEL` takes `(input: *const T, output: *mut T, n, status: *mut u64,
        // counter: *mut u32, epoch, exclusive, init)`; `input` and `output` are views of `n`
        // elements (checked) in `gpu`'s context (checked), aligned for `T`, and do not overlap
        // (one is borrowed mutably while the other is borrowed); the grid has one block per
        // tile of `lookback_tile_of(block, size_of::<T>())` elements, blocks a multiple of 32
        // (`launch_config_for`); `status` holds `status_words` words for each of `grid` tiles,
        // none tagged with the fresh `epoch` (`prepare`); `counter` is 0 (zeroed at
        // allocation, left 0 by each launch) and cudarc orders the launches that share it.
        unsafe {
            gpu.launch_unchecked(
                K::KERNEL,
                cfg,
                (
                    input,
                    output,
                    n,
                    &mut self.status,
                    &mut self.counter,
                    epoch,
                    (kind == Kind::Exclusive) as u32,
                    init,
                ),
            )?;
        }
        Ok(cfg)
    }

    /// [`scan_with`](Self::scan_with) of `data` into itself (each tile is read before it is
    /// written, by the same block).
    ///
    /// # Errors
    /// As [`inclusive_sum`].
    pub fn scan_with_in_place<K: ScanKind<Item = T>>(
        &mut self,
        gpu: &Gpu,
        kind: Kind,
        init: Option<T>,
        data: &mut impl DevicePtrMut<T>,
    ) -> Result<LaunchConfig> {
        gpu.check_buffer("data", data)?;
        let n = data.len();
        let Some((cfg, epoch)) = self.prepare::<K>(gpu, n)? else {
            return Ok(EMPTY_LAUNCH);
        };
        let init = init.map_or(K::IDENTITY, K::lift);
        let data = gpu.bind_mut(data);
        // SAFETY: the address is `data`'s, valid for `n` elements on `gpu`'s stream while
        // `data` (bound for writing, which records the launch's use) lives.
        let input = unsafe { DeviceAddress::<T>::new(data.address(), n, gpu.stream()) };
        // SAFETY: as in `scan_with`, with `input` and `output` the same address, which the
        // kernel allows (each tile is read, then written, by one block, through the coherent
        // path).
        unsafe {
            gpu.launch_unchecked(
                K::KERNEL,
                cfg,
                (
                    &input,
                    data,
                    n,
                    &mut self.status,
                    &mut self.counter,
                    epoch,
                    (kind == Kind::Exclusive) as u32,
                    init,
                ),
            )?;
        }
        Ok(cfg)
    }

    /// Queues [`inclusive_scan_by_key`] on this workspace; returns the launch's configuration
    /// ([`EMPTY_LAUNCH`] for an empty input).
    ///
    /// # Errors
    /// As [`inclusive_scan_by_key`].
    pub fn scan_by_key<K: ByKeyKind<Item = T>>(
        &mut self,
        gpu: &Gpu,
        keys: &impl ScanKeys,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
    ) -> Result<LaunchConfig> {
        let keys = keys.device_keys();
        gpu.check_buffer("keys", keys)?;
        gpu.check_buffer("input", input)?;
        gpu.check_buffer("output", output)?;
        let n = input.len();
        expect_len("keys", n, keys.len())?;
        expect_len("output", n, output.len())?;
        let words = k::status_words(K::ACC_BYTES);
        let kernel = K::KERNEL.name();
        let cfg = Self::scan_config(gpu, kernel, n.max(1), size_of::<T>())?;
        let Some((cfg, epoch)) = self.prepare_kernel(gpu, kernel, n, cfg, words)? else {
            return Ok(EMPTY_LAUNCH);
        };
        let keys = gpu.bind(keys);
        // SAFETY: the address is `keys`' (32-bit `i32` or `u32` words, read as `u32`), valid for
        // `n` words on `gpu`'s stream while `keys` (bound for reading) lives.
        let keys = unsafe { DeviceAddress::<u32>::new(keys.address(), n, gpu.stream()) };
        // SAFETY: `K::KERNEL` takes `(keys, input, output, n, status, counter, epoch)`; `keys`,
        // `input` and `output` hold `n` elements (checked) in `gpu`'s context (checked), and
        // `output` (borrowed mutably) overlaps neither; the grid has one block per tile of
        // `lookback_tile_of(block, size_of::<T>())` elements; `status` holds `words` words per
        // tile, none tagged with the fresh `epoch`; `counter` is 0.
        unsafe {
            gpu.launch_unchecked(
                K::KERNEL,
                cfg,
                (
                    &keys,
                    input,
                    output,
                    n,
                    &mut self.status,
                    &mut self.counter,
                    epoch,
                ),
            )?;
        }
        Ok(cfg)
    }

    /// The launch of the scan `K` for `n` elements: blocks of [`gpu::scan::scan_block`] threads
    /// on this device (256, or 128 for inputs of fewer than four tiles of 256 per SM), one per
    /// tile of [`gpu::scan::lookback_tile_of`] elements, each with the
    /// [`gpu::scan::staged::staged_shared_bytes`] of dynamic shared memory its tile is staged in.
    ///
    /// # Errors
    /// [`Error::GridTooLarge`] for more tiles than a grid holds; [`Error::Driver`] if the SM
    /// count cannot be read.
    pub fn launch_config_for<K: ScanKind>(gpu: &Gpu, n: usize) -> Result<LaunchConfig> {
        Self::scan_config(gpu, K::KERNEL.name(), n, size_of::<K::Item>())
    }

    /// The launch of the look-back scan `kernel` ([`gpu::scan::lookback::scan_lookback`] or
    /// [`gpu::scan::by_key::scan_by_key`]) for `n` elements of `item_bytes` bytes.
    fn scan_config(
        gpu: &Gpu,
        kernel: &'static str,
        n: usize,
        item_bytes: usize,
    ) -> Result<LaunchConfig> {
        let block = k::scan_block(n, item_bytes, gpu.sm_count()?);
        let tile = k::lookback_tile_of(block, item_bytes) as u64;
        let grid = launch::blocks_to_cover(kernel, n, tile)?;
        let shared = k::staged::staged_shared_bytes(block, item_bytes) as u32;
        Ok(launch::linear(grid, block, shared))
    }

    /// The launch of the look-back kernel `kernel` whose tile is in registers (the compaction
    /// and the tile copy) for `n` elements: at most [`gpu::scan::lookback_max_block`] of its
    /// registers on this device.
    fn launch_config_of(
        gpu: &Gpu,
        kernel: &'static str,
        n: usize,
        item_bytes: usize,
    ) -> Result<LaunchConfig> {
        let max_block = k::lookback_max_block(gpu.kernel_resources(kernel)?.registers);
        let block = k::lookback_block_of(n, item_bytes, gpu.sm_count()?, max_block);
        let tile = k::lookback_tile_of(block, item_bytes) as u64;
        let grid = launch::blocks_to_cover(kernel, n, tile)?;
        Ok(launch::linear(grid, block, 0))
    }

    /// The launch of the scan `K` for `n` elements and the launch's epoch (see
    /// [`prepare_kernel`](Self::prepare_kernel)).
    fn prepare<K: ScanKind>(&mut self, gpu: &Gpu, n: usize) -> Result<Option<(LaunchConfig, u32)>> {
        let words = k::status_words(size_of::<K::Acc>());
        let cfg = Self::launch_config_for::<K>(gpu, n.max(1))?;
        self.prepare_kernel(gpu, K::KERNEL.name(), n, cfg, words)
    }

    /// The launch `cfg` of `kernel` (`words` status words per tile) for `n` elements and the
    /// launch's epoch, after growing the status words if needed and clearing them when the
    /// epoch wraps; `None` for `n == 0`.
    fn prepare_kernel(
        &mut self,
        gpu: &Gpu,
        kernel: &'static str,
        n: usize,
        cfg: LaunchConfig,
        words: usize,
    ) -> Result<Option<(LaunchConfig, u32)>> {
        if n == 0 {
            return Ok(None);
        }
        let needed = cfg.grid_dim.0 as usize * words;
        if needed > self.status.len() {
            self.status = gpu.zeros(needed)?;
            self.epoch = 0;
        }
        if self.epoch >= k::MAX_EPOCH {
            gpu.stream()
                .memset_zeros(&mut self.status)
                .map_err(|source| Error::Driver {
                    during: format!("{kernel}: clearing the tile status words"),
                    source,
                })?;
            self.epoch = 0;
        }
        self.epoch += 1;
        Ok(Some((cfg, self.epoch)))
    }
}

impl<T: ScanElement> ScanWorkspace<T> {
    /// Queues `output = scan of input` ([`inclusive_sum`] or [`exclusive_sum`]) on this
    /// workspace, and returns the launch's configuration ([`EMPTY_LAUNCH`] for an empty input).
    ///
    /// # Errors
    /// As [`inclusive_sum`].
    pub fn scan(
        &mut self,
        gpu: &Gpu,
        kind: Kind,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
    ) -> Result<LaunchConfig> {
        self.scan_with::<T::SumOp>(gpu, kind, None, input, output)
    }

    /// Queues the scan of `data` into itself; returns the launch's configuration as
    /// [`scan`](Self::scan).
    ///
    /// # Errors
    /// As [`inclusive_sum`].
    pub fn scan_in_place(
        &mut self,
        gpu: &Gpu,
        kind: Kind,
        data: &mut impl DevicePtrMut<T>,
    ) -> Result<LaunchConfig> {
        self.scan_with_in_place::<T::SumOp>(gpu, kind, None, data)
    }

    /// The launch of the sum scan for `n` elements (see
    /// [`launch_config_for`](Self::launch_config_for)).
    ///
    /// # Errors
    /// As [`launch_config_for`](Self::launch_config_for).
    pub fn launch_config(gpu: &Gpu, n: usize) -> Result<LaunchConfig> {
        Self::launch_config_for::<T::SumOp>(gpu, n)
    }
}

impl<T: SelectElement> ScanWorkspace<T> {
    /// The launch of [`select_if`] for `n` elements: as [`launch_config`](Self::launch_config),
    /// for the compaction kernel's registers.
    ///
    /// # Errors
    /// As [`launch_config`](Self::launch_config).
    pub fn select_launch_config(gpu: &Gpu, n: usize) -> Result<LaunchConfig> {
        Self::launch_config_of(gpu, T::SELECT.name(), n, 4)
    }

    /// Queues [`select_if`] on this workspace; returns the launch's configuration
    /// ([`EMPTY_LAUNCH`] for an empty input, which only zeroes `count`).
    ///
    /// # Errors
    /// As [`select_if`].
    pub fn select_if(
        &mut self,
        gpu: &Gpu,
        input: &impl DevicePtr<T>,
        predicate: Predicate<T>,
        output: &mut impl DevicePtrMut<T>,
        count: &mut impl DevicePtrMut<u32>,
    ) -> Result<LaunchConfig> {
        gpu.check_buffer("input", input)?;
        gpu.check_buffer("output", output)?;
        gpu.check_buffer("count", count)?;
        let n = input.len();
        if output.len() < n {
            return Err(Error::LengthMismatch {
                what: "output",
                expected: n,
                actual: output.len(),
            });
        }
        expect_len("count", 1, count.len())?;
        if n > u32::MAX as usize {
            return Err(Error::OutOfRange {
                what: "input length",
                value: n as u64,
                min: 0,
                max: u32::MAX as u64,
            });
        }
        let cfg = Self::launch_config_of(gpu, T::SELECT.name(), n.max(1), 4)?;
        let Some((cfg, epoch)) = self.prepare_kernel(gpu, T::SELECT.name(), n, cfg, 1)? else {
            gpu.stream()
                .memset_zeros(count)
                .map_err(|source| Error::Driver {
                    during: "select_if: zeroing the count of an empty input".into(),
                    source,
                })?;
            return Ok(EMPTY_LAUNCH);
        };
        let (op, lower, upper) = predicate.encode();
        // SAFETY: `T::SELECT` takes `(input, n, op, lower, upper, output, count, status,
        // counter, epoch)`; `input` is a view of `n` elements and `output` of at least `n`
        // (checked), in `gpu`'s context, that do not overlap (one borrowed mutably, the other
        // shared), nor does `count` (borrowed mutably too), which holds one `u32`; the kernel
        // writes at most `n` elements of `output`; `n <= u32::MAX` (checked); the grid has
        // one block per tile (`launch_config`); `status` holds at least `grid` words, none
        // tagged with the fresh `epoch`; `counter` is 0.
        unsafe {
            gpu.launch_unchecked(
                T::SELECT,
                cfg,
                (
                    input,
                    n,
                    op,
                    lower,
                    upper,
                    output,
                    count,
                    &mut self.status,
                    &mut self.counter,
                    epoch,
                ),
            )?;
        }
        Ok(cfg)
    }

    /// [`select_if_count`] on this workspace: [`select_if`](Self::select_if) into the
    /// workspace's own count scalar (allocated on the first call), then the count downloaded,
    /// waiting for `gpu`'s stream.
    ///
    /// # Errors
    /// As [`select_if_count`].
    pub fn select_if_count(
        &mut self,
        gpu: &Gpu,
        input: &impl DevicePtr<T>,
        predicate: Predicate<T>,
        output: &mut impl DevicePtrMut<T>,
    ) -> Result<usize> {
        let mut count = match self.selected.take() {
            Some(count) => count,
            None => gpu.zeros::<u32>(1)?,
        };
        let result = self
            .select_if(gpu, input, predicate, output, &mut count)
            .and_then(|_| gpu.download(&count, T::SELECT.name()));
        self.selected = Some(count);
        Ok(result?[0] as usize)
    }
}

impl ScanWorkspace<u32> {
    /// Queues the look-back scan's memory traffic without its scan ([`gpu::scan::lookback::scan_tile_copy`]):
    /// `output = input`, through the tiles, tickets, barrier and 16-byte loads and stores of
    /// [`scan`](Self::scan), launched as the `u32` scan would be for this length. A
    /// microbenchmark: its time is the floor of the scan's tile shape, beside the copy's.
    /// Returns the launch's configuration ([`EMPTY_LAUNCH`] for an empty input).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if the lengths differ; [`Error::WrongContext`] if a buffer
    /// lives in another context; [`Error::Misaligned`] unless both start on a 16-byte
    /// boundary; otherwise as [`inclusive_sum`].
    pub fn tile_copy(
        &mut self,
        gpu: &Gpu,
        input: &impl DevicePtr<u32>,
        output: &mut impl DevicePtrMut<u32>,
    ) -> Result<LaunchConfig> {
        gpu.check_buffer("input", input)?;
        gpu.check_buffer("output", output)?;
        let n = input.len();
        expect_len("output", n, output.len())?;
        if n == 0 {
            return Ok(EMPTY_LAUNCH);
        }
        let kernel = lookback::scan_tile_copy;
        let (input, output) = (gpu.bind(input), gpu.bind_mut(output));
        launch::check_aligned(kernel.name(), "input", input.address(), 16)?;
        launch::check_aligned(kernel.name(), "output", output.address(), 16)?;
        let cfg = Self::launch_config_of(gpu, kernel.name(), n, 4)?;
        // SAFETY: `scan_tile_copy` takes `(input: *const u32, output: *mut u32, n, counter:
        // *mut u32)`; both views hold `n` elements (checked) in `gpu`'s context (checked),
        // start on a 16-byte boundary (checked) and do not overlap (one is borrowed mutably);
        // the grid has one block per tile of `lookback_tile(block)` elements
        // (`launch_config`); `counter` is 0 (zeroed at allocation, left 0 by each launch).
        unsafe { gpu.launch_unchecked(kernel, cfg, (input, output, n, &mut self.counter)) }?;
        Ok(cfg)
    }
}
