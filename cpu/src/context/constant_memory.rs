//! [`ConstantMemory`]: ordered use of the lab module's `__constant__` and `__device__` globals,
//! from [`Gpu::constant_memory`].

use std::sync::MutexGuard;

use cudarc::driver::DeviceRepr;
use gpu_std::ConstantSymbol;

use super::Gpu;
use super::lab_module::ConstantTimeline;
use crate::error::{Error, Result};

/// Use of the module's `__constant__` and `__device__` globals, from [`Gpu::constant_memory`].
pub struct ConstantMemory<'g> {
    pub(super) gpu: &'g Gpu,
    pub(super) timeline: MutexGuard<'g, ConstantTimeline>,
}

impl ConstantMemory<'_> {
    /// Queues a write of `data` to the first `data.len()` elements of the `__constant__` array
    /// `constant` (a `gpu_std::constant_memory!` declaration of the `gpu` crate; CUDA's
    /// `cudaMemcpyToSymbol`), its type and length checked (the kit's
    /// [`gpu_host::Library::write_constant`]).
    ///
    /// # Errors
    /// [`Error::ConstantTooLarge`] if `data` has more than `C::LEN` elements; as
    /// [`gpu_host::Library::write_constant`] otherwise.
    pub fn write_constant<C: ConstantSymbol>(
        &mut self,
        constant: C,
        data: &[C::Element],
    ) -> Result<()>
    where
        C::Element: DeviceRepr,
    {
        self.timeline.written.retain(|(s, _)| *s != C::SYMBOL);
        let gpu = self.gpu;
        let library = &gpu.module()?.library;
        library
            .write_constant(gpu.stream(), constant, data)
            .map_err(|e| too_large(C::SYMBOL, e))
    }

    /// As [`ConstantMemory::write_constant`], skipped if the array already holds the data
    /// written with the same `tag` (an immutable value's id, e.g. a convolution mask's):
    /// repeated launches with one mask cost no copy.
    ///
    /// # Errors
    /// As [`ConstantMemory::write_constant`].
    pub fn write_constant_tagged<C: ConstantSymbol>(
        &mut self,
        constant: C,
        tag: u64,
        data: &[C::Element],
    ) -> Result<()>
    where
        C::Element: DeviceRepr,
    {
        if self.timeline.written.contains(&(C::SYMBOL, tag)) {
            return Ok(());
        }
        self.write_constant(constant, data)?;
        self.timeline.written.push((C::SYMBOL, tag));
        Ok(())
    }

    /// The `C::LEN` elements of the `__constant__` array `constant`, waiting for the stream.
    ///
    /// # Errors
    /// As [`gpu_host::Library::read_constant`].
    pub fn read_constant<C: ConstantSymbol>(&mut self, constant: C) -> Result<Vec<C::Element>>
    where
        C::Element: DeviceRepr,
    {
        let gpu = self.gpu;
        Ok(gpu
            .module()?
            .library
            .read_constant(gpu.stream(), constant)?)
    }

    /// Queues a write of `data` at the start of the module global `symbol` (a `__device__`
    /// array the kernels name; CUDA's `cudaMemcpyToSymbol`, through the driver's
    /// `cuModuleGetGlobal`). [`ConstantMemory::write_constant`] is the typed form for a
    /// `constant_memory!` array.
    ///
    /// # Errors
    /// [`Error::ConstantTooLarge`] if `data` is larger than the symbol; [`Error::Driver`] if the
    /// module has no such symbol or the copy fails.
    pub fn write<T: DeviceRepr>(&mut self, symbol: &'static str, data: &[T]) -> Result<()> {
        self.timeline.written.retain(|(s, _)| *s != symbol);
        let gpu = self.gpu;
        gpu.module()?
            .library
            .write_global(gpu.stream(), symbol, data)
            .map_err(|e| too_large(symbol, e))
    }

    /// Reads the first `len` elements of the module global `symbol` (a `__device__` or
    /// `__constant__` array; CUDA's `cudaMemcpyFromSymbol`), waiting for the stream.
    ///
    /// # Errors
    /// [`Error::SizeOverflow`] if `len` elements of `T` overflow the address space;
    /// [`Error::ConstantTooLarge`] if the symbol holds fewer than `len` elements;
    /// [`Error::Driver`] if the module has no such symbol or the copy fails.
    pub fn read<T: DeviceRepr>(&mut self, symbol: &'static str, len: usize) -> Result<Vec<T>> {
        let gpu = self.gpu;
        gpu.module()?
            .library
            .read_global(gpu.stream(), symbol, len)
            .map_err(|e| too_large(symbol, e))
    }
}

/// The kit's [`gpu_host::Error::GlobalTooSmall`] as the library's [`Error::ConstantTooLarge`]
/// (which names the symbol by the `gpu` crate's constant); any other error as it maps.
fn too_large(symbol: &'static str, e: gpu_host::Error) -> Error {
    match e {
        gpu_host::Error::GlobalTooSmall {
            capacity,
            requested,
            ..
        } => Error::ConstantTooLarge {
            symbol,
            capacity,
            requested,
        },
        other => other.into(),
    }
}

impl Drop for ConstantMemory<'_> {
    fn drop(&mut self) {
        // The next user on another stream records an event on this one and waits for it.
        self.timeline.last_stream = Some(self.gpu.stream().clone());
    }
}
