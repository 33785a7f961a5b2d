//! [`Gpu`]: a device, its context, a stream, and the lab's PTX module loaded on it.

use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits, sys,
};
use cudarc::nvrtc::Ptx;

use crate::error::{DriverContext, Error, Result};
use crate::ptx;

/// One CUDA device with the lab's kernels loaded: context, a stream of its own, and the module
/// built from the PTX for the highest architecture not above the device's compute capability.
///
/// Cheap to clone (reference-counted); [`Gpu::with_new_stream`] gives an independent stream on
/// the same context and module, for concurrent users.
#[derive(Clone, Debug)]
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    ptx_arch: u32,
    constant_memory: Arc<Mutex<()>>,
}

impl Gpu {
    /// Whether an NVIDIA driver (`libcuda`) can be loaded on this machine.
    pub fn driver_available() -> bool {
        // SAFETY: only tries to dlopen the driver library; no CUDA call is made.
        unsafe { sys::is_culib_present() }
    }

    /// Number of CUDA devices, or [`Error::NoDriver`].
    pub fn device_count() -> Result<usize> {
        if !Self::driver_available() {
            return Err(Error::NoDriver);
        }
        Ok(CudaContext::device_count().during("counting CUDA devices")? as usize)
    }

    /// Opens device `device` (0-based) and loads the PTX.
    ///
    /// # Errors
    /// [`Error::NoDriver`], [`Error::DeviceOutOfRange`], [`Error::NoCompatiblePtx`] (device
    /// older than every embedded architecture), [`Error::Driver`] (context creation or PTX JIT).
    pub fn new(device: usize) -> Result<Self> {
        let count = Self::device_count()?;
        if device >= count {
            return Err(Error::DeviceOutOfRange { device, count });
        }
        let ctx = CudaContext::new(device).during("creating the CUDA context")?;
        let (major, minor) = ctx
            .compute_capability()
            .during("reading the compute capability")?;
        let (ptx_arch, text) =
            ptx::for_compute_capability(major, minor).ok_or_else(|| Error::NoCompatiblePtx {
                major,
                minor,
                built: ptx::built_archs(),
            })?;
        let module = ctx
            .load_module(Ptx::from_src(text))
            .during(format!("loading the sm_{ptx_arch} PTX"))?;
        let stream = ctx.new_stream().during("creating a stream")?;
        Ok(Self {
            ctx,
            stream,
            module,
            ptx_arch,
            constant_memory: Arc::new(Mutex::new(())),
        })
    }

    /// The same device and module with a new stream of its own.
    pub fn with_new_stream(&self) -> Result<Self> {
        Ok(Self {
            stream: self.ctx.new_stream().during("creating a stream")?,
            ..self.clone()
        })
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream every launcher of this handle uses.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The architecture of the PTX loaded (`90` for `sm_90`).
    pub fn ptx_arch(&self) -> u32 {
        self.ptx_arch
    }

    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> Result<String> {
        self.ctx.name().during("reading the device name")
    }

    /// Compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> Result<(i32, i32)> {
        self.ctx
            .compute_capability()
            .during("reading the compute capability")
    }

    /// Number of streaming multiprocessors.
    pub fn sm_count(&self) -> Result<u32> {
        let n = self
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .during("reading the multiprocessor count")?;
        Ok(n as u32)
    }

    /// Maximum resident threads per multiprocessor (2048 on Volta to Hopper).
    pub fn max_threads_per_sm(&self) -> Result<u32> {
        let n = self
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
            .during("reading the threads per multiprocessor")?;
        Ok(n as u32)
    }

    /// Blocks of `kernel` that fit on one SM at once (the occupancy calculator,
    /// `cuOccupancyMaxActiveBlocksPerMultiprocessor`) for `block` threads and
    /// `dynamic_shared_bytes` of dynamic shared memory; at least 1.
    ///
    /// # Errors
    /// [`Error::Driver`] if the kernel is missing or the query fails.
    pub fn resident_blocks_per_sm(
        &self,
        kernel: &str,
        block: u32,
        dynamic_shared_bytes: usize,
    ) -> Result<u32> {
        let n = self
            .function(kernel)?
            .occupancy_max_active_blocks_per_multiprocessor(block, dynamic_shared_bytes, None)
            .during(format!("occupancy of {kernel}"))?;
        Ok(n.max(1))
    }

    /// The SM clock rate in kHz (`CU_DEVICE_ATTRIBUTE_CLOCK_RATE`, the peak clock).
    ///
    /// # Errors
    /// [`Error::Driver`] if the attribute cannot be read.
    pub fn sm_clock_khz(&self) -> Result<u32> {
        Ok(self
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
            .during("reading the SM clock rate")? as u32)
    }

    /// The peak memory clock in kHz (`CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE`).
    ///
    /// # Errors
    /// [`Error::Driver`] if the attribute cannot be read.
    pub fn memory_clock_khz(&self) -> Result<u32> {
        Ok(self
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
            .during("reading the memory clock rate")? as u32)
    }

    /// The global memory bus width in bits.
    ///
    /// # Errors
    /// [`Error::Driver`] if the attribute cannot be read.
    pub fn memory_bus_bits(&self) -> Result<u32> {
        Ok(self
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
            .during("reading the memory bus width")? as u32)
    }

    /// The CUDA version the driver supports, `(13, 0)` (`cuDriverGetVersion`).
    ///
    /// # Errors
    /// [`Error::Driver`] if the query fails.
    pub fn driver_version(&self) -> Result<(i32, i32)> {
        let mut v = 0;
        // SAFETY: cuDriverGetVersion writes one int through the valid pointer it is given.
        unsafe { sys::cuDriverGetVersion(&mut v) }
            .result()
            .during("reading the driver version")?;
        Ok((v / 1000, (v % 1000) / 10))
    }

    /// The device's L2 cache size in bytes.
    ///
    /// # Errors
    /// [`Error::Driver`] if the attribute cannot be read.
    pub fn l2_cache_bytes(&self) -> Result<usize> {
        Ok(self
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
            .during("reading the L2 cache size")? as usize)
    }

    /// The kernel named `name` (an `.entry` of the PTX).
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        self.module
            .load_function(name)
            .during(format!("looking up kernel {name}"))
    }

    /// Copies `data` to the device.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] if the device cannot hold it; [`Error::Driver`] if the copy fails.
    pub fn upload<T: DeviceRepr>(&self, data: &[T]) -> Result<CudaSlice<T>> {
        self.stream
            .clone_htod(data)
            .map_err(|e| allocation_error(e, std::mem::size_of_val(data), "copying to the device"))
    }

    /// A device buffer of `len` elements, every one set to `poison` (so an element a kernel
    /// forgets to write is caught by the comparison with the reference).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] if the device cannot hold it (checked before the host copy is
    /// built); [`Error::Driver`] otherwise.
    pub fn poisoned<T: DeviceRepr + Clone>(&self, len: usize, poison: T) -> Result<CudaSlice<T>> {
        let requested = len.saturating_mul(std::mem::size_of::<T>());
        let (free, total) = self.memory_info()?;
        if requested > free {
            return Err(Error::OutOfMemory {
                requested,
                free,
                total,
            });
        }
        self.upload(&vec![poison; len])
    }

    /// Free and total device memory in bytes (`cuMemGetInfo`).
    ///
    /// # Errors
    /// [`Error::Driver`] if the query fails.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.ctx.bind_to_thread().during("binding the context")?;
        cudarc::driver::result::mem_get_info().during("reading the free device memory")
    }

    /// A zeroed device buffer of `len` elements.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] if the device cannot hold it; [`Error::Driver`] otherwise.
    pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.stream.alloc_zeros(len).map_err(|e| {
            allocation_error(
                e,
                len.saturating_mul(std::mem::size_of::<T>()),
                "allocating device memory",
            )
        })
    }

    /// Copies a device buffer back to the host, waiting for the stream; `kernel` names the
    /// work whose completion this waits for, so an error raised by it says which kernel failed.
    pub fn download<T: DeviceRepr + Default + Clone>(
        &self,
        data: &CudaSlice<T>,
        kernel: &str,
    ) -> Result<Vec<T>> {
        self.stream
            .clone_dtoh(data)
            .during(format!("{kernel} (running, or copying its result back)"))
    }

    /// Writes `data` at the start of the module global `symbol`, a `__constant__` or
    /// `__device__` array (CUDA's `cudaMemcpyToSymbol`), through the driver's
    /// `cuModuleGetGlobal`. Callers hold [`Gpu::lock_constant_memory`] while they use it.
    ///
    /// # Errors
    /// [`Error::ConstantTooLarge`] if `data` is larger than the symbol; [`Error::Driver`] if the
    /// module has no such symbol.
    pub fn write_constant<T: DeviceRepr>(&self, symbol: &'static str, data: &[T]) -> Result<()> {
        let mut global = self
            .module
            .get_global(symbol, &self.stream)
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
        self.stream
            .memcpy_htod(data, &mut typed)
            .during(format!("writing {symbol}"))
    }

    /// Reads the first `len` elements of the module global `symbol` (a `__device__` or
    /// `__constant__` array; CUDA's `cudaMemcpyFromSymbol`), waiting for the stream.
    ///
    /// # Errors
    /// [`Error::ConstantTooLarge`] if the symbol holds fewer than `len` elements;
    /// [`Error::Driver`] if the module has no such symbol or the copy fails.
    pub fn read_symbol<T: DeviceRepr + Default + Clone>(
        &self,
        symbol: &'static str,
        len: usize,
    ) -> Result<Vec<T>> {
        let global = self
            .module
            .get_global(symbol, &self.stream)
            .during(format!("looking up {symbol}"))?;
        let requested = len * std::mem::size_of::<T>();
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
        self.stream
            .memcpy_dtoh(&typed, &mut out)
            .during(format!("reading {symbol}"))?;
        self.synchronize(&format!("reading {symbol}"))?;
        Ok(out)
    }

    /// What the loaded kernel `name` uses, from the driver (`cuFuncGetAttribute`): the figures
    /// `ptxas -v` prints, for the code actually running on this device.
    ///
    /// # Errors
    /// [`Error::Driver`] if the kernel is missing or an attribute query fails.
    pub fn kernel_resources(&self, name: &str) -> Result<KernelResources> {
        let f = self.function(name)?;
        let during = || format!("reading the attributes of {name}");
        Ok(KernelResources {
            registers: f.num_regs().during(during())? as u32,
            local_bytes: f.local_size_bytes().during(during())? as u32,
            static_shared_bytes: f.shared_size_bytes().during(during())? as u32,
            max_threads_per_block: f.max_threads_per_block().during(during())? as u32,
        })
    }

    /// Exclusive use of the module's `__constant__` memory.
    ///
    /// Constant memory belongs to the module, not to a stream: two handles (e.g. from
    /// [`Gpu::with_new_stream`]) that write a symbol and launch concurrently would read each
    /// other's values. A launcher that writes constant memory holds this guard from the write
    /// until its kernel has completed.
    pub fn lock_constant_memory(&self) -> MutexGuard<'_, ()> {
        self.constant_memory
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits until all work queued on this handle's stream has finished.
    pub fn synchronize(&self, during: &str) -> Result<()> {
        self.stream.synchronize().during(during.to_string())
    }
}

/// A kernel's per-thread and per-block resources as the driver reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelResources {
    /// Registers per thread.
    pub registers: u32,
    /// Local memory per thread in bytes (stack frame and spills).
    pub local_bytes: u32,
    /// Statically declared shared memory per block in bytes.
    pub static_shared_bytes: u32,
    /// Largest block the kernel can be launched with on this device.
    pub max_threads_per_block: u32,
}

/// [`Error::OutOfMemory`] (with the free and total device memory) for an allocation the driver
/// refused for lack of memory, else [`Error::Driver`].
fn allocation_error(e: cudarc::driver::DriverError, requested: usize, during: &str) -> Error {
    if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY
        && let Ok((free, total)) = cudarc::driver::result::mem_get_info()
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
