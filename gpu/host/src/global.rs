//! Module globals by symbol: a kernel crate's `__constant__` arrays (`gpu_std::constant_memory!`,
//! typed by [`gpu_std::ConstantSymbol`]) and `__device__` globals, written and read through the
//! driver's `cuModuleGetGlobal` and a copy on a stream (CUDA's `cudaMemcpyToSymbol` /
//! `cudaMemcpyFromSymbol`).

use std::sync::Arc;

use cudarc::driver::{CudaModule, CudaStream, DeviceRepr};

use gpu_std::ConstantSymbol;

use crate::error::{DriverContext, Error, Result, bytes_of};
use crate::{Library, Module};

/// Queues a copy of `data` to the start of the global `symbol` of `module` on `stream`.
///
/// # Errors
/// [`Error::GlobalTooSmall`] if `data` is larger than the symbol; [`Error::Driver`] if the
/// module has no such symbol or the copy cannot be queued.
pub(crate) fn write<T: DeviceRepr>(
    module: &Arc<CudaModule>,
    stream: &Arc<CudaStream>,
    symbol: &str,
    data: &[T],
) -> Result<()> {
    let mut global = module
        .get_global(symbol, stream)
        .during_with(|| format!("looking up the module global {symbol}"))?;
    let requested = std::mem::size_of_val(data);
    if requested > global.len() {
        return Err(Error::GlobalTooSmall {
            symbol: symbol.to_string(),
            capacity: global.len(),
            requested,
        });
    }
    if data.is_empty() {
        return Ok(());
    }
    // SAFETY: the view covers `requested` bytes of the symbol (checked above), reinterpreted
    // as `data.len()` elements of `T`, a `DeviceRepr` plain-data type; module globals are
    // aligned to at least their declared alignment, which the caller's declaration gives `T`.
    let mut typed =
        unsafe { global.transmute_mut::<T>(data.len()) }.ok_or_else(|| Error::GlobalTooSmall {
            symbol: symbol.to_string(),
            capacity: requested,
            requested,
        })?;
    stream
        .memcpy_htod(data, &mut typed)
        .during_with(|| format!("writing the module global {symbol}"))
}

/// Copies the first `len` elements of the global `symbol` of `module` to the host, after the
/// work queued on `stream` so far (the call waits for the stream).
///
/// # Errors
/// [`Error::SizeOverflow`] if `len` elements overflow the address space;
/// [`Error::GlobalTooSmall`] if the symbol holds fewer; [`Error::Driver`] if the module has no
/// such symbol or the copy fails.
pub(crate) fn read<T: DeviceRepr>(
    module: &Arc<CudaModule>,
    stream: &Arc<CudaStream>,
    symbol: &str,
    len: usize,
) -> Result<Vec<T>> {
    let global = module
        .get_global(symbol, stream)
        .during_with(|| format!("looking up the module global {symbol}"))?;
    let requested = bytes_of::<T>("len", len)?;
    if requested > global.len() {
        return Err(Error::GlobalTooSmall {
            symbol: symbol.to_string(),
            capacity: global.len(),
            requested,
        });
    }
    if len == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the view covers `requested` bytes of the symbol (checked above), read as `len`
    // elements of `T`, a `DeviceRepr` plain-data type.
    let typed = unsafe { global.transmute::<T>(len) }.ok_or_else(|| Error::GlobalTooSmall {
        symbol: symbol.to_string(),
        capacity: global.len(),
        requested,
    })?;
    let out = stream
        .clone_dtoh(&typed)
        .during_with(|| format!("reading the module global {symbol}"))?;
    stream
        .synchronize()
        .during_with(|| format!("reading the module global {symbol}"))?;
    Ok(out)
}

/// The size in bytes of the global `symbol` of `module`.
///
/// # Errors
/// [`Error::Driver`] if the module has no such symbol.
pub(crate) fn bytes(
    module: &Arc<CudaModule>,
    stream: &Arc<CudaStream>,
    symbol: &str,
) -> Result<usize> {
    Ok(module
        .get_global(symbol, stream)
        .during_with(|| format!("looking up the module global {symbol}"))?
        .len())
}

/// `stream` belongs to `context`, or [`Error::WrongContext`] naming it.
fn check_stream(
    context: &Arc<cudarc::driver::CudaContext>,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let other = stream.context();
    if other.cu_ctx() != context.cu_ctx() {
        return Err(Error::WrongContext {
            what: "stream",
            expected: context.ordinal(),
            actual: other.ordinal(),
            expected_context: context.cu_ctx() as usize,
            actual_context: other.cu_ctx() as usize,
        });
    }
    Ok(())
}

/// The module of `C` checked to hold it at its declared size.
fn constant_module<C: ConstantSymbol>(
    module: Arc<CudaModule>,
    stream: &Arc<CudaStream>,
) -> Result<Arc<CudaModule>> {
    let found = bytes(&module, stream, C::SYMBOL)?;
    if found != C::BYTES {
        return Err(Error::ConstantSize {
            symbol: C::SYMBOL,
            declared: C::BYTES,
            found,
        });
    }
    Ok(module)
}

/// `data.len() <= C::LEN`, or [`Error::GlobalTooSmall`].
fn check_constant_len<C: ConstantSymbol>(len: usize) -> Result<()> {
    if len > C::LEN {
        return Err(Error::GlobalTooSmall {
            symbol: C::SYMBOL.to_string(),
            capacity: C::BYTES,
            requested: len.saturating_mul(std::mem::size_of::<C::Element>()),
        });
    }
    Ok(())
}

impl Library {
    /// Queues on `stream` a copy of `data` to the first `data.len()` elements of the
    /// `__constant__` array `constant` (declared with `gpu_std::constant_memory!`; CUDA's
    /// `cudaMemcpyToSymbolAsync`), loading the module that holds it if it is not yet. Kernels
    /// queued on `stream` after the call read the new values; constant memory belongs to the
    /// module, not to a stream, so a kernel of this context running on another stream at the
    /// same time may read either (order the streams, as the lab's `cpu::Gpu::constant_memory`
    /// does).
    ///
    /// # Errors
    /// [`Error::WrongContext`] if `stream` is not of this library's context;
    /// [`Error::GlobalTooSmall`] if `data` has more than `C::LEN` elements;
    /// [`Error::NotInTable`] if no module holds the symbol; [`Error::ConstantSize`] if the loaded
    /// module's array is not `C::BYTES` long (a stale PTX); [`Error::Driver`] if the copy fails.
    pub fn write_constant<C: ConstantSymbol>(
        &self,
        stream: &Arc<CudaStream>,
        constant: C,
        data: &[C::Element],
    ) -> Result<()>
    where
        C::Element: DeviceRepr,
    {
        let _ = constant;
        check_stream(self.context(), stream)?;
        check_constant_len::<C>(data.len())?;
        let module = constant_module::<C>(self.module_holding(C::SYMBOL)?, stream)?;
        write(&module, stream, C::SYMBOL, data)
    }

    /// The `C::LEN` elements of the `__constant__` array `constant`, after the work queued on
    /// `stream` so far (waits for it; CUDA's `cudaMemcpyFromSymbol`).
    ///
    /// # Errors
    /// As [`Library::write_constant`] (but for the length).
    pub fn read_constant<C: ConstantSymbol>(
        &self,
        stream: &Arc<CudaStream>,
        constant: C,
    ) -> Result<Vec<C::Element>>
    where
        C::Element: DeviceRepr,
    {
        let _ = constant;
        check_stream(self.context(), stream)?;
        let module = constant_module::<C>(self.module_holding(C::SYMBOL)?, stream)?;
        read(&module, stream, C::SYMBOL, C::LEN)
    }

    /// Queues on `stream` a copy of `data` to the start of the module global `symbol` (a
    /// `__device__` or `__constant__` array the kernel crate declares by name; CUDA's
    /// `cudaMemcpyToSymbolAsync`), loading the module that holds it if it is not yet. Prefer
    /// [`Library::write_constant`] for a `constant_memory!` array: its type and length are
    /// checked there.
    ///
    /// # Errors
    /// [`Error::WrongContext`] if `stream` is not of this library's context;
    /// [`Error::NotInTable`] if no module holds `symbol`; [`Error::GlobalTooSmall`] if `data` is
    /// larger than the symbol; [`Error::Driver`] if the copy fails.
    pub fn write_global<T: DeviceRepr>(
        &self,
        stream: &Arc<CudaStream>,
        symbol: &str,
        data: &[T],
    ) -> Result<()> {
        check_stream(self.context(), stream)?;
        write(&self.module_holding(symbol)?, stream, symbol, data)
    }

    /// The first `len` elements of the module global `symbol`, after the work queued on
    /// `stream` so far (waits for it; CUDA's `cudaMemcpyFromSymbol`).
    ///
    /// # Errors
    /// As [`Library::write_global`]; [`Error::SizeOverflow`] if `len` elements of `T` overflow
    /// the address space.
    pub fn read_global<T: DeviceRepr>(
        &self,
        stream: &Arc<CudaStream>,
        symbol: &str,
        len: usize,
    ) -> Result<Vec<T>> {
        check_stream(self.context(), stream)?;
        read(&self.module_holding(symbol)?, stream, symbol, len)
    }
}

impl Module {
    /// Queues on the module's stream (the [`Device`](crate::Device)'s it was made with) a copy
    /// of `data` to the first `data.len()` elements of the `__constant__` array `constant`
    /// (declared in the kernel crate with `gpu_std::constant_memory!`; CUDA's
    /// `cudaMemcpyToSymbol`): `module.write_constant(C_COEFFICIENTS, &[0.25, 0.5, 0.25])?`.
    /// Kernels launched through this module afterwards read the new values; see
    /// [`Library::write_constant`] for other streams. The array is the module's, shared by
    /// every thread that launches through it: threads that each write and then launch queue
    /// the two under one lock of their own, or one may launch on the other's values.
    ///
    /// # Errors
    /// [`Error::GlobalTooSmall`] if `data` has more than `C::LEN` elements;
    /// [`Error::NotInTable`] if no module of the crate holds the symbol;
    /// [`Error::ConstantSize`] if the loaded array is not `C::BYTES` long (a stale PTX);
    /// [`Error::Driver`] if the copy fails.
    pub fn write_constant<C: ConstantSymbol>(&self, constant: C, data: &[C::Element]) -> Result<()>
    where
        C::Element: DeviceRepr,
    {
        let _ = constant;
        let stream = self.device().stream();
        check_constant_len::<C>(data.len())?;
        let module = constant_module::<C>(self.cuda_module_holding(C::SYMBOL)?, stream)?;
        write(&module, stream, C::SYMBOL, data)
    }

    /// The `C::LEN` elements of the `__constant__` array `constant`, after the work queued on
    /// the module's stream so far (waits for it; CUDA's `cudaMemcpyFromSymbol`).
    ///
    /// # Errors
    /// As [`Module::write_constant`] (but for the length).
    pub fn read_constant<C: ConstantSymbol>(&self, constant: C) -> Result<Vec<C::Element>>
    where
        C::Element: DeviceRepr,
    {
        let _ = constant;
        let stream = self.device().stream();
        let module = constant_module::<C>(self.cuda_module_holding(C::SYMBOL)?, stream)?;
        read(&module, stream, C::SYMBOL, C::LEN)
    }

    /// Queues on the module's stream a copy of `data` to the start of the module global
    /// `symbol` (a `__device__` or `__constant__` array the kernel crate declares by name).
    /// Prefer [`Module::write_constant`] for a `constant_memory!` array.
    ///
    /// # Errors
    /// [`Error::NotInTable`] if no module holds `symbol`; [`Error::GlobalTooSmall`] if `data` is
    /// larger than the symbol; [`Error::Driver`] if the copy fails.
    pub fn write_global<T: DeviceRepr>(&self, symbol: &str, data: &[T]) -> Result<()> {
        let stream = self.device().stream();
        write(&self.cuda_module_holding(symbol)?, stream, symbol, data)
    }

    /// The first `len` elements of the module global `symbol`, after the work queued on the
    /// module's stream so far (waits for it).
    ///
    /// # Errors
    /// As [`Module::write_global`]; [`Error::SizeOverflow`] if `len` elements of `T` overflow
    /// the address space.
    pub fn read_global<T: DeviceRepr>(&self, symbol: &str, len: usize) -> Result<Vec<T>> {
        let stream = self.device().stream();
        read(&self.cuda_module_holding(symbol)?, stream, symbol, len)
    }
}
