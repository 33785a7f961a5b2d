//! [`ConstantMemory`]: ordered use of the lab module's `__constant__` and `__device__` globals,
//! from [`Gpu::constant_memory`].

use std::sync::MutexGuard;

use cudarc::driver::DeviceRepr;

use super::Gpu;
use super::lab_module::ConstantTimeline;
use crate::error::{DriverContext, Error, Result, bytes_of};

/// Use of the module's `__constant__` and `__device__` globals, from [`Gpu::constant_memory`].
pub struct ConstantMemory<'g> {
    pub(super) gpu: &'g Gpu,
    pub(super) timeline: MutexGuard<'g, ConstantTimeline>,
}

impl ConstantMemory<'_> {
    /// Queues a write of `data` at the start of the module global `symbol` (CUDA's
    /// `cudaMemcpyToSymbol`, through the driver's `cuModuleGetGlobal`).
    ///
    /// # Errors
    /// [`Error::ConstantTooLarge`] if `data` is larger than the symbol; [`Error::Driver`] if the
    /// module has no such symbol or the copy fails.
    pub fn write<T: DeviceRepr>(&mut self, symbol: &'static str, data: &[T]) -> Result<()> {
        self.timeline.written.retain(|(s, _)| *s != symbol);
        self.copy_in(symbol, data)
    }

    /// As [`ConstantMemory::write`], skipped if the symbol already holds the data written with
    /// the same `tag` (an immutable value's id, e.g. a convolution mask's): repeated launches
    /// with one mask cost no copy.
    ///
    /// # Errors
    /// As [`ConstantMemory::write`].
    pub fn write_tagged<T: DeviceRepr>(
        &mut self,
        symbol: &'static str,
        tag: u64,
        data: &[T],
    ) -> Result<()> {
        if self.timeline.written.contains(&(symbol, tag)) {
            return Ok(());
        }
        self.write(symbol, data)?;
        self.timeline.written.push((symbol, tag));
        Ok(())
    }

    fn copy_in<T: DeviceRepr>(&self, symbol: &'static str, data: &[T]) -> Result<()> {
        let gpu = self.gpu;
        let module = gpu.module()?.holding(symbol)?;
        let mut global = module
            .get_global(symbol, gpu.stream())
            .during(format!("looking up the module global {symbol}"))?;
        let requested = std::mem::size_of_val(data);
        if requested > global.len() {
            return Err(Error::ConstantTooLarge {
                symbol,
                capacity: global.len(),
                requested,
            });
        }
        // SAFETY: the view covers `requested` bytes of the symbol (checked above), reinterpreted
        // as `data.len()` elements of `T`; `T: DeviceRepr` has no invalid bit patterns on device.
        let mut typed =
            unsafe { global.transmute_mut::<T>(data.len()) }.ok_or(Error::ConstantTooLarge {
                symbol,
                capacity: requested,
                requested,
            })?;
        gpu.stream()
            .memcpy_htod(data, &mut typed)
            .during(format!("writing {symbol}"))
    }

    /// Reads the first `len` elements of the module global `symbol` (a `__device__` or
    /// `__constant__` array; CUDA's `cudaMemcpyFromSymbol`), waiting for the stream.
    ///
    /// # Errors
    /// [`Error::SizeOverflow`] if `len` elements of `T` overflow the address space;
    /// [`Error::ConstantTooLarge`] if the symbol holds fewer than `len` elements;
    /// [`Error::Driver`] if the module has no such symbol or the copy fails.
    pub fn read<T: DeviceRepr + Default + Clone>(
        &mut self,
        symbol: &'static str,
        len: usize,
    ) -> Result<Vec<T>> {
        let gpu = self.gpu;
        let module = gpu.module()?.holding(symbol)?;
        let global = module
            .get_global(symbol, gpu.stream())
            .during(format!("looking up {symbol}"))?;
        let requested = bytes_of::<T>(symbol, len)?;
        if requested > global.len() {
            return Err(Error::ConstantTooLarge {
                symbol,
                capacity: global.len(),
                requested,
            });
        }
        // SAFETY: the view covers `requested` bytes of the symbol (checked above), read as
        // `len` elements of `T`, a `DeviceRepr` plain-data type.
        let typed = unsafe { global.transmute::<T>(len) }.ok_or(Error::ConstantTooLarge {
            symbol,
            capacity: global.len(),
            requested,
        })?;
        let mut out = vec![T::default(); len];
        gpu.stream()
            .memcpy_dtoh(&typed, &mut out)
            .during(format!("reading {symbol}"))?;
        gpu.synchronize(&format!("reading {symbol}"))?;
        Ok(out)
    }
}

impl Drop for ConstantMemory<'_> {
    fn drop(&mut self) {
        // The next user on another stream records an event on this one and waits for it.
        self.timeline.last_stream = Some(self.gpu.stream().clone());
    }
}
