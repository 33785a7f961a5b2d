//! [`Gpu`]: a device's context, a stream, and the lab's kernels on that context.
//!
//! The lab's kernels are one PTX module per pattern (`cpu::ptx::KERNELS`), each loaded the
//! first time one of its kernels is launched, once per CUDA context, and shared by every handle
//! on it ([`Gpu::new`] twice on one device, [`Gpu::from_stream`] on a caller's stream,
//! [`Gpu::with_new_stream`]), so their `__constant__` memory is shared too:
//! [`Gpu::constant_memory`] orders every use of it across the handles and streams of the
//! context.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr,
    DeviceSlice, LaunchConfig, ValidAsZeroBits, sys,
};

use crate::error::{DriverContext, Error, Result, bytes_of};
use crate::kernel::{Arity, Bound, Kernel, KernelArgs, Read, Safe, Write};
use gpu_host::Device;

mod constant_memory;
mod lab_module;

pub use constant_memory::ConstantMemory;
pub use lab_module::new_constant_tag;
use lab_module::{Module, Occupancy, module_for};

/// Scratch buffers kept by a handle for the entry points that need some (the sum's partials,
/// counter and result), one per type, made on first use. Shared by a handle's clones, which
/// use the same stream; never by handles on other streams (see [`Gpu::with_workspace`]).
#[derive(Default)]
struct Workspaces(HashMap<TypeId, Box<dyn Any + Send>>);

impl std::fmt::Debug for Workspaces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Workspaces({} kept)", self.0.len())
    }
}

/// One CUDA device with the lab's kernels: its context, the stream this handle's launches go
/// to, and the lab's PTX modules for the device (SASS where the build made it for the device's
/// architecture, sm_80 and sm_90; else the PTX of the highest architecture not above it).
///
/// Cheap to clone (reference-counted). Every entry point of the library takes a `&Gpu` and
/// queues its work on [`Gpu::stream`]; nothing synchronises behind the caller's back unless
/// the function returns a value to the host (and says so).
///
/// Each module is loaded (from SASS, or JIT-compiled by the driver from PTX) when one of its
/// kernels is first looked up, not when the handle is made, so sizing and device queries cost
/// no load, and a program that reduces loads the reduction's module alone.
#[derive(Clone, Debug)]
pub struct Gpu {
    /// The kit's handle: the context and this handle's stream.
    device: Device,
    module: Arc<Module>,
    /// The device's SM count, read once (shared by the handle's clones; no module needed).
    sm_count: Arc<OnceLock<u32>>,
    /// Scratch kept between calls, for this stream only: shared by clones (same stream), new
    /// for [`Gpu::with_new_stream`] and [`Gpu::from_stream`].
    workspaces: Arc<Mutex<Workspaces>>,
}

impl Gpu {
    /// Whether an NVIDIA driver (`libcuda`) can be loaded on this machine.
    pub fn driver_available() -> bool {
        Device::driver_available()
    }

    /// Number of CUDA devices, or [`Error::NoDriver`].
    pub fn device_count() -> Result<usize> {
        Ok(Device::device_count()?)
    }

    /// Opens device `device` (0-based, its primary context), with a new stream of its own.
    /// The PTX module is loaded on the first handle of a context and shared by the others.
    ///
    /// # Errors
    /// [`Error::NoDriver`], [`Error::DeviceOutOfRange`], [`Error::NoCompatiblePtx`] (device
    /// older than every embedded architecture), [`Error::Driver`] (context creation or PTX JIT).
    pub fn new(device: usize) -> Result<Self> {
        Self::from_device(Device::new(device)?)
    }

    /// A handle that launches on the caller's `stream` (and its context), loading the PTX
    /// module on that context if no handle has yet.
    ///
    /// # Errors
    /// [`Error::NoCompatiblePtx`]; [`Error::Driver`] if the module cannot be loaded.
    pub fn from_stream(stream: Arc<CudaStream>) -> Result<Self> {
        Self::from_device(Device::from_stream(stream))
    }

    /// A handle on the kit's `device` (its context and stream), with the lab's kernels.
    ///
    /// # Errors
    /// [`Error::NoCompatiblePtx`] if the device is older than every embedded architecture.
    pub fn from_device(device: Device) -> Result<Self> {
        let module = module_for(device.context())?;
        Ok(Self {
            device,
            module,
            sm_count: Arc::new(OnceLock::new()),
            workspaces: Arc::default(),
        })
    }

    /// The kit's handle this one is built on (context and stream): what
    /// [`Module::from_table`](crate::Module::from_table) takes to load a kernel crate of one's
    /// own on the same device and stream.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The context's lab kernels (shared by every handle on the context).
    fn module(&self) -> Result<&Arc<Module>> {
        Ok(&self.module)
    }

    /// The same device and module with a new stream of its own, and scratch of its own (the
    /// workspace [`reduce::sum`](fn@crate::reduce::sum) keeps is per stream: never shared with
    /// this handle's other streams).
    ///
    /// # Errors
    /// [`Error::Driver`] if the stream cannot be made.
    pub fn with_new_stream(&self) -> Result<Self> {
        Ok(Self {
            device: self.device.with_new_stream()?,
            workspaces: Arc::default(),
            ..self.clone()
        })
    }

    /// Runs `work` with this handle's workspace of type `W`, made by `make` on first use and
    /// kept for the next call (the reuse behind [`reduce::sum`](fn@crate::reduce::sum)).
    ///
    /// Soundness: a workspace belongs to one stream, this handle's; its clones share it, and
    /// handles on other streams ([`Gpu::with_new_stream`], [`Gpu::from_stream`]) get their
    /// own. The lock is held for the whole of `work`, so two threads using one handle (or
    /// clones) take turns on the host, and what `work` queues runs in stream order; the next
    /// user's kernels cannot start before the previous user's have finished with the buffers.
    /// `work` must not call `with_workspace` again (it would wait for itself).
    ///
    /// # Errors
    /// What `make` or `work` returns.
    pub(crate) fn with_workspace<W: Any + Send, R>(
        &self,
        make: impl FnOnce(&Gpu) -> Result<W>,
        work: impl FnOnce(&mut W) -> Result<R>,
    ) -> Result<R> {
        let mut kept = self.workspaces.lock().unwrap_or_else(|p| p.into_inner());
        let id = TypeId::of::<W>();
        let mut workspace = match kept.0.remove(&id).map(|w| w.downcast::<W>()) {
            Some(Ok(workspace)) => workspace,
            // None kept yet (entries are keyed by their own type, so a kept one always
            // downcasts).
            _ => Box::new(make(self)?),
        };
        let result = work(&mut workspace);
        kept.0.insert(id, workspace);
        result
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        self.device.context()
    }

    /// The stream every launcher of this handle uses.
    pub fn stream(&self) -> &Arc<CudaStream> {
        self.device.stream()
    }

    /// The architecture of the kernel images this device loads (`90` for `sm_90`: SASS on an
    /// H100 or H200, PTX JIT-compiled on a newer GPU).
    pub fn ptx_arch(&self) -> u32 {
        self.module.image.sm
    }

    /// The kernel image this device loads, e.g. `"sm_90 SASS"` or `"sm_70 PTX"`.
    pub fn kernel_image(&self) -> String {
        self.module.image.to_string()
    }

    /// The lab's kernel modules loaded on this context so far, with the image each was loaded
    /// from (`("reduce", "sm_90 SASS")`).
    pub fn loaded_modules(&self) -> Vec<(&'static str, String)> {
        self.module.library.loaded_modules()
    }

    /// The device's index (the context's ordinal).
    pub fn ordinal(&self) -> usize {
        self.device.context().ordinal()
    }

    /// Checks that `buffer` lives in this handle's context (the same `CUcontext`, not only the
    /// same device).
    ///
    /// # Errors
    /// [`Error::WrongContext`] naming `what`, both devices and both contexts.
    pub fn check_buffer<T>(&self, what: &'static str, buffer: &impl DeviceSlice<T>) -> Result<()> {
        Ok(self.device.check_buffer(what, buffer)?)
    }

    /// The device address where `buffer` starts (the view's offset included), for a check
    /// outside a launch. A launcher that checks the address of a buffer it then passes binds
    /// it instead ([`Gpu::bind`]), which takes the address once.
    pub fn address<T>(&self, buffer: &impl DevicePtr<T>) -> u64 {
        let (ptr, _record) = buffer.device_ptr(self.device.stream());
        ptr
    }

    /// `buffer` bound for reading by one launch on this handle's stream: its address, for the
    /// launcher's checks, taken once (see [`Bound`]); pass the result as the argument.
    pub fn bind<'s, T>(&'s self, buffer: &'s impl DevicePtr<T>) -> Bound<'s, T, Read> {
        self.device.bind(buffer)
    }

    /// `buffer` bound for writing by one launch on this handle's stream (see [`Gpu::bind`]).
    pub fn bind_mut<'s, T>(&'s self, buffer: &'s mut impl DevicePtrMut<T>) -> Bound<'s, T, Write> {
        self.device.bind_mut(buffer)
    }

    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> Result<String> {
        self.device
            .context()
            .name()
            .during("reading the device name")
    }

    /// Compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> Result<(i32, i32)> {
        self.device
            .context()
            .compute_capability()
            .during("reading the compute capability")
    }

    /// Number of streaming multiprocessors (asked of the driver once per handle and its clones;
    /// loads no module).
    pub fn sm_count(&self) -> Result<u32> {
        if let Some(&n) = self.sm_count.get() {
            return Ok(n);
        }
        let n = self
            .device
            .context()
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .during("reading the multiprocessor count")? as u32;
        Ok(*self.sm_count.get_or_init(|| n))
    }

    /// Maximum resident threads per multiprocessor (2048 on Volta to Hopper).
    pub fn max_threads_per_sm(&self) -> Result<u32> {
        let n = self
            .device
            .context()
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
            .during("reading the threads per multiprocessor")?;
        Ok(n as u32)
    }

    /// Blocks of `kernel` that fit on one SM at once (the occupancy calculator,
    /// `cuOccupancyMaxActiveBlocksPerMultiprocessor`) for `block` threads and
    /// `dynamic_shared_bytes` of dynamic shared memory; at least 1. Asked of the driver once
    /// per context and launch shape, then remembered, so launchers may call it at every launch.
    ///
    /// # Errors
    /// [`Error::Driver`] if the kernel is missing or the query fails.
    pub fn resident_blocks_per_sm(
        &self,
        kernel: &str,
        block: u32,
        dynamic_shared_bytes: usize,
    ) -> Result<u32> {
        let module = self.module()?;
        let lock = || module.occupancy.lock().unwrap_or_else(|p| p.into_inner());
        let shape = (block, dynamic_shared_bytes);
        let cached = |table: &HashMap<String, Occupancy>| {
            table
                .get(kernel)?
                .iter()
                .find(|(s, _)| *s == shape)
                .map(|(_, blocks)| *blocks)
        };
        if let Some(blocks) = cached(&lock()) {
            return Ok(blocks);
        }
        let blocks = self
            .function(kernel)?
            .occupancy_max_active_blocks_per_multiprocessor(block, dynamic_shared_bytes, None)
            .during_with(|| format!("occupancy of {kernel}"))?
            .max(1);
        lock()
            .entry(kernel.to_string())
            .or_default()
            .push((shape, blocks));
        Ok(blocks)
    }

    /// Blocks of `block` threads of `kernel` that fit on the whole device at once (one wave):
    /// SMs x [`Gpu::resident_blocks_per_sm`], at least one per SM. Both are asked of the driver
    /// once per context (and launch shape), so launchers may call it at every launch.
    ///
    /// # Errors
    /// [`Error::Driver`] if the kernel is missing or a query fails.
    pub fn one_wave(&self, kernel: &str, block: u32, dynamic_shared_bytes: usize) -> Result<u32> {
        Ok(self.sm_count()? * self.resident_blocks_per_sm(kernel, block, dynamic_shared_bytes)?)
    }

    /// The SM clock rate in kHz (`CU_DEVICE_ATTRIBUTE_CLOCK_RATE`, the peak clock).
    ///
    /// # Errors
    /// [`Error::Driver`] if the attribute cannot be read.
    pub fn sm_clock_khz(&self) -> Result<u32> {
        Ok(self
            .device
            .context()
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
            .during("reading the SM clock rate")? as u32)
    }

    /// The peak memory clock in kHz (`CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE`).
    ///
    /// # Errors
    /// [`Error::Driver`] if the attribute cannot be read.
    pub fn memory_clock_khz(&self) -> Result<u32> {
        Ok(self
            .device
            .context()
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
            .during("reading the memory clock rate")? as u32)
    }

    /// The global memory bus width in bits.
    ///
    /// # Errors
    /// [`Error::Driver`] if the attribute cannot be read.
    pub fn memory_bus_bits(&self) -> Result<u32> {
        Ok(self
            .device
            .context()
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
            .device
            .context()
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
            .during("reading the L2 cache size")? as usize)
    }

    /// The kernel named `name` (an `.entry` of the PTX), looked up in the module once per
    /// context and reused by every launch.
    ///
    /// # Errors
    /// [`Error::Driver`] if the module has no such entry.
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        self.module()?.function(name)
    }

    /// Queues the safe kernel `kernel` (a `#[kernel] fn` whose parameters are scalars, `&[T]`
    /// and `DisjointSlice<T>`) on this handle's stream with launch configuration `cfg` and the
    /// arguments `args`, a tuple matching its parameters one by one: `&buffer` for `&[T]`,
    /// `&mut buffer` for `DisjointSlice<T>` (each passes its length), values for scalars. A wrong
    /// count, order or type of arguments does not compile, nor does an unsafe kernel (launch it
    /// with [`Gpu::launch_unchecked`]), nor one buffer passed as two outputs or as an input and
    /// an output (the borrows conflict). Every buffer's use is recorded on the stream.
    ///
    /// ```no_run
    /// # fn f(gpu: &cpu::Gpu) -> cpu::Result<()> {
    /// use gpu::vector_add::kernels::vector_add;
    /// let (x, y) = (gpu.upload(&[1.0f32; 1000])?, gpu.upload(&[2.0f32; 1000])?);
    /// let mut z = gpu.zeros::<f32>(1000)?;
    /// gpu.launch(vector_add, cpu::launch::linear(4, 256, 0), (&x, &y, &mut z))?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::ForeignArgument`] if a buffer belongs to another context (checked before the
    /// launch); [`Error::Driver`] naming the kernel if the lookup or the launch fails (a `cfg`
    /// the device refuses).
    pub fn launch<'s, P: Arity, A: KernelArgs<'s, P> + Arity<Count = P::Count>>(
        &'s self,
        kernel: Kernel<P, Safe>,
        cfg: LaunchConfig,
        args: A,
    ) -> Result<()> {
        crate::kernel::check_arguments(kernel, self.device.context().cu_ctx(), &args)?;
        // SAFETY: a `Safe` kernel is sound for any arguments of its parameter types (its
        // handle's contract), and they are device memory of this context.
        unsafe { self.launch_unchecked(kernel, cfg, args) }
    }

    /// Queues `kernel` on this handle's stream with launch configuration `cfg` and the
    /// arguments `args`, a tuple matching the kernel's parameters one by one (see
    /// [`crate::kernel`] for the forms: device buffers for pointers and slices, values for
    /// scalars). A wrong count, order or type of arguments does not compile. Every buffer's use
    /// is recorded on the stream, so freeing or reusing it waits for the kernel.
    ///
    /// The kernel's function is looked up once per context; nothing else is asked of the
    /// driver, and no error text is built unless the launch fails.
    ///
    /// # Safety
    /// The launch meets the kernel's `# Safety` contract, which types cannot express: every
    /// pointer is valid for what the kernel reads or writes at these sizes, outputs do not
    /// overlap inputs where it says so, and `cfg` has the shape it requires. Buffers belong to
    /// this handle's context (check with [`Gpu::check_buffer`]).
    ///
    /// # Errors
    /// [`Error::ArchTooOld`] for a kernel declared `min_sm` above the device's architecture
    /// (before its module is loaded); [`Error::Driver`] naming the kernel if the lookup or the
    /// launch fails.
    pub unsafe fn launch_unchecked<
        's,
        P: Arity,
        S,
        A: KernelArgs<'s, P> + Arity<Count = P::Count>,
    >(
        &'s self,
        kernel: Kernel<P, S>,
        cfg: LaunchConfig,
        args: A,
    ) -> Result<()> {
        // Before the module is loaded: a kernel the device is too old for is refused first.
        gpu_host::kernel::check_arch(self.device.context(), kernel.info())?;
        let f = self.function(kernel.name())?;
        // SAFETY: the caller's contract above; `f` is the entry of the handle's name in the
        // lab's PTX, built from the same signatures (`tests/ptx.rs` checks every one).
        Ok(unsafe { crate::kernel::launch_function(self.device.stream(), &f, kernel, cfg, args) }?)
    }

    /// Copies `data` (`data.len()` elements) to a new device buffer, queued on this handle's
    /// stream.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] if the device cannot hold it; [`Error::Driver`] if the copy fails.
    pub fn upload<T: DeviceRepr>(&self, data: &[T]) -> Result<CudaSlice<T>> {
        Ok(self.device.upload(data)?)
    }

    /// Copies `data` into `dst`, a device buffer or view (`CudaSlice`, `CudaViewMut`) of
    /// exactly `data.len()` elements in this handle's context, queued on this handle's stream.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] (`what: "upload destination"`) if the lengths differ;
    /// [`Error::WrongContext`] if `dst` lives in another context; [`Error::Driver`] if the copy
    /// fails.
    pub fn upload_into<T: DeviceRepr>(
        &self,
        data: &[T],
        dst: &mut impl DevicePtrMut<T>,
    ) -> Result<()> {
        crate::error::expect_len("upload destination", data.len(), dst.len())?;
        self.check_buffer("upload destination", dst)?;
        self.device
            .stream()
            .memcpy_htod(data, dst)
            .during("copying to the device")
    }

    /// A device buffer of `len` elements, every one set to `poison` (so an element a kernel
    /// forgets to write is caught by the comparison with the reference).
    ///
    /// # Errors
    /// [`Error::SizeOverflow`] if `len` elements of `T` overflow the address space;
    /// [`Error::OutOfMemory`] if the device cannot hold it (both checked before the host copy
    /// is built and before any allocation); [`Error::Driver`] otherwise.
    pub fn poisoned<T: DeviceRepr + Clone>(&self, len: usize, poison: T) -> Result<CudaSlice<T>> {
        let requested = bytes_of::<T>("poisoned buffer", len)?;
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
        Ok(self.device.memory_info()?)
    }

    /// A zeroed device buffer of `len` elements (`len * size_of::<T>()` bytes), allocated and
    /// zeroed on this handle's stream.
    ///
    /// # Errors
    /// [`Error::SizeOverflow`] if `len` elements of `T` overflow the address space (checked
    /// before the driver is called); [`Error::OutOfMemory`] if the device cannot hold it;
    /// [`Error::Driver`] otherwise.
    pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        Ok(self.device.zeros(len)?)
    }

    /// Copies device memory back to the host, waiting for the stream: `data` is a buffer or
    /// any view of one (`CudaSlice`, `CudaView`, `CudaViewMut`; `slice.slice(3..10)` downloads
    /// 7 elements) in this handle's context. `kernel` names the work whose completion this
    /// waits for, so an error raised by it says which kernel failed.
    ///
    /// # Errors
    /// [`Error::WrongContext`] if `data` lives in another context; [`Error::SizeOverflow`] if
    /// its length in bytes overflows the address space; [`Error::Driver`] if the copy fails or
    /// the work before it faulted.
    pub fn download<T: DeviceRepr + Default + Clone>(
        &self,
        data: &impl DevicePtr<T>,
        kernel: &str,
    ) -> Result<Vec<T>> {
        self.check_buffer("downloaded buffer", data)?;
        bytes_of::<T>("downloaded buffer", data.len())?;
        self.device
            .stream()
            .clone_dtoh(data)
            .during_with(|| format!("{kernel} (running, or copying its result back)"))
    }

    /// As [`Gpu::download`], into the caller's `dst`, which must hold exactly `data.len()`
    /// elements.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] (`what: "download destination"`) if the lengths differ;
    /// otherwise as [`Gpu::download`].
    pub fn download_into<T: DeviceRepr>(
        &self,
        data: &impl DevicePtr<T>,
        dst: &mut [T],
        kernel: &str,
    ) -> Result<()> {
        crate::error::expect_len("download destination", data.len(), dst.len())?;
        self.check_buffer("downloaded buffer", data)?;
        self.device
            .stream()
            .memcpy_dtoh(data, dst)
            .during_with(|| format!("{kernel} (running, or copying its result back)"))?;
        self.synchronize(kernel)
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

    /// Exclusive, ordered use of the module's `__constant__` (and `__device__`) globals for
    /// the launches queued while the returned guard lives.
    ///
    /// Constant memory belongs to the module, which every handle on this context shares, not
    /// to a stream. When the last launch that used constant memory went to another stream,
    /// the guard records an event there and makes this handle's stream wait for it (a
    /// `cuStreamWaitEvent`, no host synchronisation); on the same stream, stream order already
    /// does, and nothing is queued. When dropped, the guard names this stream as the last. So a
    /// write through the guard never reaches a kernel queued earlier, and a kernel queued under
    /// the guard reads what was written under it, whatever other threads and streams do. Queue
    /// the launch that reads the symbols before dropping the guard; hold one guard at a time
    /// per thread.
    ///
    /// # Errors
    /// [`Error::Driver`] if the event or the wait cannot be queued.
    pub fn constant_memory(&self) -> Result<ConstantMemory<'_>> {
        let timeline = self
            .module()?
            .constants
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(last) = &timeline.last_stream
            && last.cu_stream() != self.device.stream().cu_stream()
        {
            // Everything queued on the other stream so far: its constant-memory launches
            // included (the wait covers more than they need, never less).
            let event = last
                .record_event(None)
                .during("ordering a use of constant memory")?;
            self.device
                .stream()
                .wait(&event)
                .during("ordering a use of constant memory")?;
        }
        Ok(ConstantMemory {
            gpu: self,
            timeline,
        })
    }

    /// Waits until all work queued on this handle's stream has finished.
    pub fn synchronize(&self, during: &str) -> Result<()> {
        Ok(self.device.synchronize(during)?)
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
