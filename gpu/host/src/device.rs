//! [`Device`]: a CUDA device's context and the stream a handle's work goes to.

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice,
    ValidAsZeroBits, sys,
};

use crate::error::{DriverContext, Error, Result, bytes_of};
use crate::kernel::{Bound, Read, Write};

/// One CUDA device: its (primary) context and the stream this handle's work is queued on.
/// Cheap to clone (reference-counted); clones share the stream.
#[derive(Clone, Debug)]
pub struct Device {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
}

impl Device {
    /// Whether an NVIDIA driver (`libcuda`) can be loaded on this machine.
    pub fn driver_available() -> bool {
        // SAFETY: only tries to dlopen the driver library; no CUDA call is made.
        unsafe { sys::is_culib_present() }
    }

    /// Number of CUDA devices.
    ///
    /// # Errors
    /// [`Error::NoDriver`] without a driver; [`Error::Driver`] if the count fails.
    pub fn device_count() -> Result<usize> {
        if !Self::driver_available() {
            return Err(Error::NoDriver);
        }
        Ok(CudaContext::device_count().during("counting CUDA devices")? as usize)
    }

    /// Opens device `device` (0-based, its primary context), with a new stream of its own.
    ///
    /// # Errors
    /// [`Error::NoDriver`], [`Error::DeviceOutOfRange`], [`Error::Driver`].
    pub fn new(device: usize) -> Result<Self> {
        let count = Self::device_count()?;
        if device >= count {
            return Err(Error::DeviceOutOfRange { device, count });
        }
        let ctx = CudaContext::new(device).during("creating the CUDA context")?;
        let stream = ctx.new_stream().during("creating a stream")?;
        Ok(Self::from_stream(stream))
    }

    /// A handle on the caller's `stream` (and its context).
    pub fn from_stream(stream: Arc<CudaStream>) -> Self {
        Self {
            ctx: stream.context().clone(),
            stream,
        }
    }

    /// The same device with a new stream of its own.
    ///
    /// # Errors
    /// [`Error::Driver`] if the stream cannot be made.
    pub fn with_new_stream(&self) -> Result<Self> {
        Ok(Self::from_stream(
            self.ctx.new_stream().during("creating a stream")?,
        ))
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream this handle's work goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The device's index (the context's ordinal).
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    ///
    /// # Errors
    /// [`Error::Driver`] if the query fails.
    pub fn name(&self) -> Result<String> {
        self.ctx.name().during("reading the device name")
    }

    /// Compute capability `(major, minor)`.
    ///
    /// # Errors
    /// [`Error::Driver`] if the query fails.
    pub fn compute_capability(&self) -> Result<(i32, i32)> {
        self.ctx
            .compute_capability()
            .during("reading the compute capability")
    }

    /// Checks that `buffer` lives in this handle's context (the same `CUcontext`, not only the
    /// same device).
    ///
    /// # Errors
    /// [`Error::WrongContext`] naming `what`, both devices and both contexts.
    pub fn check_buffer<T>(&self, what: &'static str, buffer: &impl DeviceSlice<T>) -> Result<()> {
        let other = buffer.stream().context();
        if other.cu_ctx() != self.ctx.cu_ctx() {
            return Err(Error::WrongContext {
                what,
                expected: self.ctx.ordinal(),
                actual: other.ordinal(),
                expected_context: self.ctx.cu_ctx() as usize,
                actual_context: other.cu_ctx() as usize,
            });
        }
        Ok(())
    }

    /// `buffer` bound for reading by one launch on this handle's stream: its address, for a
    /// launcher's checks, taken once (see [`Bound`]); pass the result as the argument.
    pub fn bind<'s, T>(&'s self, buffer: &'s impl DevicePtr<T>) -> Bound<'s, T, Read> {
        Bound::read(buffer, &self.stream)
    }

    /// `buffer` bound for writing by one launch on this handle's stream (see [`Device::bind`]).
    pub fn bind_mut<'s, T>(&'s self, buffer: &'s mut impl DevicePtrMut<T>) -> Bound<'s, T, Write> {
        Bound::write(buffer, &self.stream)
    }

    /// Copies `data` to a new device buffer, queued on this handle's stream.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] if the device cannot hold it; [`Error::Driver`] if the copy fails.
    pub fn upload<T: DeviceRepr>(&self, data: &[T]) -> Result<CudaSlice<T>> {
        // A host slice's size in bytes always fits `isize`: no overflow check is needed.
        self.stream.clone_htod(data).map_err(|e| {
            self.allocation_error(e, std::mem::size_of_val(data), "copying to the device")
        })
    }

    /// A zeroed device buffer of `len` elements, allocated and zeroed on this handle's stream.
    ///
    /// # Errors
    /// [`Error::SizeOverflow`] if `len` elements of `T` overflow the address space (checked
    /// before the driver is called); [`Error::OutOfMemory`]; [`Error::Driver`].
    pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        let requested = bytes_of::<T>("zeroed buffer", len)?;
        self.stream
            .alloc_zeros(len)
            .map_err(|e| self.allocation_error(e, requested, "allocating device memory"))
    }

    /// Copies device memory (a buffer or any view of one, in this handle's context) back to
    /// the host, waiting for the stream: an error of the work queued before it surfaces here.
    ///
    /// # Errors
    /// [`Error::WrongContext`]; [`Error::Driver`] if the copy fails or earlier work faulted.
    pub fn download<T: DeviceRepr>(&self, data: &impl DevicePtr<T>) -> Result<Vec<T>> {
        self.check_buffer("downloaded buffer", data)?;
        self.stream
            .clone_dtoh(data)
            .during("running the queued work, or copying its result back")
    }

    /// Free and total device memory in bytes (`cuMemGetInfo`).
    ///
    /// # Errors
    /// [`Error::Driver`] if the query fails.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.ctx.bind_to_thread().during("binding the context")?;
        cudarc::driver::result::mem_get_info().during("reading the free device memory")
    }

    /// Waits until all work queued on this handle's stream has finished.
    ///
    /// # Errors
    /// [`Error::Driver`] naming `during` if that work failed.
    pub fn synchronize(&self, during: &str) -> Result<()> {
        self.stream.synchronize().during(during.to_string())
    }

    /// A failed allocation as [`Error::OutOfMemory`] (with the free and total memory) when the
    /// driver says so, else [`Error::Driver`].
    pub(crate) fn allocation_error(
        &self,
        e: cudarc::driver::DriverError,
        requested: usize,
        during: &str,
    ) -> Error {
        if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY
            && let Ok((free, total)) = self.memory_info()
        {
            return Error::OutOfMemory {
                requested,
                free,
                total,
            };
        }
        Error::Driver {
            during: during.to_string(),
            source: e,
        }
    }
}
