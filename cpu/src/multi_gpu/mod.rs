//! Reduction one level up: across every GPU of a machine, through NCCL (the collective library
//! every framework uses), loaded at run time like the driver.
//!
//! # Calling it
//! ```no_run
//! use cpu::multi_gpu::GpuGroup;
//!
//! # fn main() -> cpu::Result<()> {
//! // SAFETY: the first statement of main, before any thread exists (see keep_nvls_off).
//! unsafe { cpu::multi_gpu::keep_nvls_off() };
//! let group = GpuGroup::all()?; // every visible GPU; or GpuGroup::new(&[0, 1])?
//! // A sum of data sharded across the GPUs: one buffer (or view) per GPU, any lengths.
//! let shards: Vec<_> = group
//!     .gpus()
//!     .iter()
//!     .map(|g| g.upload(&vec![0.5f32; 1000]))
//!     .collect::<cpu::Result<_>>()?;
//! let total: f64 = group.sharded_sum(&shards)?; // 500 per GPU
//! // An all-reduce (sum) of one f32 buffer per GPU, all of one length, in place.
//! let mut grads: Vec<_> = group
//!     .gpus()
//!     .iter()
//!     .map(|g| g.upload(&vec![1.0f32; 1 << 20]))
//!     .collect::<cpu::Result<_>>()?;
//! group.all_reduce_sum_in_place(&mut grads)?; // every element = number of GPUs
//! # Ok(())
//! # }
//! ```
//!
//! - [`GpuGroup`]: one [`Gpu`] (context, stream, the lab's module) per device and one NCCL
//!   communicator per GPU, all in this process (`ncclCommInitAll`). Any number of GPUs, one
//!   included (an all-reduce over one GPU is a copy).
//! - [`ShardedSum`] / [`GpuGroup::sharded_sum`]: each shard reduced on its GPU by the lab's
//!   [`reduce_sum`](crate::reduce::ReduceSum) (`f32` read, `f64` accumulated), then an NCCL
//!   all-reduce of the `f64` partials: the sum on every GPU.
//! - [`GpuGroup::all_reduce_sum`] / [`GpuGroup::all_reduce_sum_in_place`]: NCCL's all-reduce
//!   of `f32` buffers, one per GPU.
//! - [`ring`]: the teaching version, an all-reduce of the lab's own over peer-to-peer copies
//!   and its `add_into` kernel (reduce-scatter, then all-gather), measured against NCCL.
//!
//! # Finding NCCL
//! cudarc opens `libnccl` on first use, by the names [`nccl_library_names`] lists
//! (`libnccl.so`, ...), through the dynamic loader (so `LD_LIBRARY_PATH` is searched). The
//! group checks with cudarc's own probe first and returns [`Error::NcclNotFound`] (never a
//! panic) where none loads. NCCL installs `libnccl.so.2`, which is not among cudarc's names:
//! a symlink `libnccl.so -> .../libnccl.so.2` in a directory on `LD_LIBRARY_PATH` is enough
//! (PyTorch's wheel ships it as `<site-packages>/nvidia/nccl/lib/libnccl.so.2`; the bundle's
//! `run.sh` makes the link). Nothing of NCCL is needed to build, nor to run anything else.
//!
//! # NVLink SHARP stays off
//! NCCL's NVLS algorithms reduce inside the NVLink switches through multicast objects
//! (`cuMulticastCreate`); the lab's machines must not use them. NCCL reads `NCCL_NVLS_ENABLE`
//! from the process environment, and writing the environment is only sound while no other
//! thread reads it, which a library cannot know: so the caller sets it, with the `unsafe`
//! [`keep_nvls_off`] at the top of `main` (the demo and the GPU tests do) or by exporting
//! `NCCL_NVLS_ENABLE=0`, and [`GpuGroup`] refuses to make communicators while the variable is
//! unset ([`Error::NcclEnvironment`]). No safe function here writes the environment, and
//! nothing here calls `cuMulticastCreate`. (NCCL's `ncclConfig_t` has no NVLS switch, so the
//! environment is the only way.)
//!
//! # One thread, every GPU
//! NCCL requires collectives on several GPUs issued by one thread to sit between
//! `ncclGroupStart` and `ncclGroupEnd` (else the first GPU's call waits for the others, which
//! are never issued). Every collective here is grouped, queued on each GPU's stream, and
//! returns without a host synchronisation unless it returns a value to the host.

pub mod rank;
pub mod rendezvous;
pub mod ring;

use std::ffi::CStr;

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig, SyncOnDrop};
use cudarc::nccl::result::{self as nccl, NcclError};
use cudarc::nccl::sys as nccl_sys;

use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::reduce::{ReduceSum, SumF32F64, reference};

pub use ring::{RingAllReduce, ring_all_reduce_sum};

/// The environment variable that switches NCCL's NVLink SHARP (NVLS) algorithms, and the value
/// the lab keeps it at.
pub const NVLS_ENV: (&str, &str) = ("NCCL_NVLS_ENABLE", "0");

/// The file names cudarc tries, in order, when it loads NCCL (`libnccl.so`, `libnccl64.so`,
/// ...; the loader searches `LD_LIBRARY_PATH` for each).
pub fn nccl_library_names() -> Vec<String> {
    cudarc::get_lib_name_candidates("nccl")
}

/// Whether NCCL can be loaded: cudarc's own probe (it tries to `dlopen` each of
/// [`nccl_library_names`]), so `true` means cudarc's first NCCL call will not panic.
pub fn nccl_available() -> bool {
    // SAFETY: only tries to dlopen the library by each candidate name; no NCCL call is made.
    unsafe { nccl_sys::is_culib_present() }
}

/// [`Error::NcclNotFound`] unless NCCL can be loaded.
fn require_nccl() -> Result<()> {
    if nccl_available() {
        Ok(())
    } else {
        Err(Error::NcclNotFound {
            looked_for: nccl_library_names(),
        })
    }
}

/// [`Error::NcclEnvironment`] unless [`NVLS_ENV`]'s variable is set (by [`keep_nvls_off`] or
/// by the caller's environment): reads the environment only.
fn require_nvls_setting() -> Result<()> {
    let (variable, required) = NVLS_ENV;
    match std::env::var_os(variable) {
        Some(_) => Ok(()),
        None => Err(Error::NcclEnvironment { variable, required }),
    }
}

/// NCCL's version `(major, minor, patch)`, e.g. `(2, 27, 5)`.
///
/// # Errors
/// [`Error::NcclNotFound`]; [`Error::Nccl`] if the query fails.
pub fn nccl_version() -> Result<(u32, u32, u32)> {
    require_nccl()?;
    let code = nccl::get_nccl_version().map_err(nccl_error("reading the NCCL version"))?;
    let code = code.max(0) as u32;
    // NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch since 2.9, major * 1000 + minor *
    // 100 + patch before.
    Ok(if code >= 20900 {
        (code / 10000, code / 100 % 100, code % 100)
    } else {
        (code / 1000, code / 100 % 10, code % 100)
    })
}

/// Maps an [`NcclError`] to [`Error::Nccl`] with NCCL's own text for it.
fn nccl_error(during: impl Into<String>) -> impl FnOnce(NcclError) -> Error {
    let during = during.into();
    move |e| {
        // SAFETY: ncclGetErrorString returns a pointer to a static NUL-terminated string for
        // any result code (NCCL is loaded: the code came from it).
        let text = unsafe { nccl_sys::ncclGetErrorString(e.0) };
        let message = if text.is_null() {
            String::new()
        } else {
            // SAFETY: non-null, NUL-terminated and static (above).
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        };
        Error::Nccl {
            during,
            code: e.0 as u32,
            message,
        }
    }
}

/// Sets `NCCL_NVLS_ENABLE=0` in the process environment unless the variable is set already,
/// so that NCCL never uses NVLink SHARP (multicast objects in the NVLink switches). NCCL reads
/// the variable when it makes its first communicator; [`GpuGroup`] refuses to make any while
/// it is unset ([`Error::NcclEnvironment`]), so a program that uses [`GpuGroup`] calls this
/// first (or exports the variable before it starts).
///
/// # Safety
/// As [`std::env::set_var`]: no other thread may read or write the environment at the same
/// time, through Rust or through C (`getenv`, which NCCL, CUDA and libc call from their own
/// threads). Call it at the top of `main`, before any thread starts (and before any NCCL or
/// CUDA call); the lab's `demo` and GPU tests do.
pub unsafe fn keep_nvls_off() {
    let (name, value) = NVLS_ENV;
    if std::env::var_os(name).is_none() {
        // SAFETY: the caller guarantees no concurrent access to the environment.
        unsafe { std::env::set_var(name, value) };
    }
}

/// One NCCL communicator, aborted when dropped (after [`GpuGroup`]'s drop has waited for its
/// streams, so no collective is in flight).
#[derive(Debug)]
struct Communicator(nccl_sys::ncclComm_t);

impl Drop for Communicator {
    fn drop(&mut self) {
        // SAFETY: a communicator made by ncclCommInitAll, destroyed once; the group's streams
        // were synchronised first. A failure leaves nothing to clean up.
        let _ = unsafe { nccl::comm_abort(self.0) };
    }
}

/// Every GPU of a machine (or of a list) with one NCCL communicator each, in this process.
///
/// Rank `r` of the communicators is [`GpuGroup::gpus`]`()[r]`; its collectives run on that
/// handle's stream. Made by `ncclCommInitAll` (NCCL's single-process initialisation, the call
/// behind cudarc's `Comm::from_devices`), driven by the raw layer so that the buffers' cudarc
/// stream tracking is recorded after `ncclGroupEnd` has queued the collective, and so that no
/// drop can panic.
///
/// Not `Send`: NCCL communicators are used from the thread that made them here.
#[derive(Debug)]
pub struct GpuGroup {
    // Dropped first (fields drop in order), while the handles still hold the contexts.
    comms: Vec<Communicator>,
    gpus: Vec<Gpu>,
}

impl GpuGroup {
    /// Every visible GPU (`CUDA_VISIBLE_DEVICES` narrows them), ranks in device order.
    ///
    /// # Errors
    /// [`Error::NoDriver`]; [`Error::InvalidDevices`] if the driver reports no device; as
    /// [`GpuGroup::from_gpus`].
    pub fn all() -> Result<Self> {
        let count = Gpu::device_count()?;
        Self::new(&(0..count).collect::<Vec<_>>())
    }

    /// The GPUs `devices` (0-based, each once), rank `r` on `devices[r]`, each with a new
    /// stream.
    ///
    /// # Errors
    /// [`Error::InvalidDevices`] for an empty list or a device named twice;
    /// [`Error::DeviceOutOfRange`]; as [`Gpu::new`] and [`GpuGroup::from_gpus`].
    pub fn new(devices: &[usize]) -> Result<Self> {
        check_devices(devices)?;
        let count = Gpu::device_count()?;
        if let Some(&device) = devices.iter().find(|&&d| d >= count) {
            return Err(Error::DeviceOutOfRange { device, count });
        }
        require_nccl()?;
        let gpus = devices
            .iter()
            .map(|&d| Gpu::new(d))
            .collect::<Result<Vec<_>>>()?;
        Self::from_gpus(gpus)
    }

    /// A group of the caller's handles (their streams: `Gpu::from_stream` on each), one per
    /// device, rank `r` on `gpus[r]`.
    ///
    /// Needs `NCCL_NVLS_ENABLE` set in the environment (to `0` by [`keep_nvls_off`] at the top
    /// of `main`, or exported); it reads the environment and never writes it.
    ///
    /// # Errors
    /// [`Error::InvalidDevices`] for no handle or two on one device; [`Error::NcclNotFound`];
    /// [`Error::NcclEnvironment`] if `NCCL_NVLS_ENABLE` is unset; [`Error::Nccl`] if NCCL
    /// cannot make the communicators.
    pub fn from_gpus(gpus: Vec<Gpu>) -> Result<Self> {
        let devices: Vec<usize> = gpus.iter().map(Gpu::ordinal).collect();
        check_devices(&devices)?;
        require_nccl()?;
        require_nvls_setting()?;
        let ordinals: Vec<i32> = devices.iter().map(|&d| d as i32).collect();
        let mut raw = vec![std::ptr::null_mut(); gpus.len()];
        // SAFETY: `raw` has room for one communicator per device of `ordinals` (same length,
        // distinct devices: checked above).
        unsafe { nccl::comm_init_all(raw.as_mut_ptr(), ordinals.len() as i32, ordinals.as_ptr()) }
            .map_err(nccl_error(format!(
                "making NCCL communicators on devices {devices:?}"
            )))?;
        Ok(Self {
            comms: raw.into_iter().map(Communicator).collect(),
            gpus,
        })
    }

    /// Number of GPUs (NCCL ranks).
    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    /// Always `false`: a group has at least one GPU.
    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// The handles, by rank.
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// The device of each rank.
    pub fn devices(&self) -> Vec<usize> {
        self.gpus.iter().map(Gpu::ordinal).collect()
    }

    /// Waits for every GPU's stream; `during` names the work waited for in an error.
    ///
    /// # Errors
    /// [`Error::Driver`] if a stream's work failed.
    pub fn synchronize(&self, during: &str) -> Result<()> {
        self.gpus.iter().try_for_each(|g| g.synchronize(during))
    }

    /// [`Error::LengthMismatch`] unless `actual` (buffers given) is one per GPU.
    fn check_count(&self, what: &'static str, actual: usize) -> Result<()> {
        if actual == self.len() {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                what,
                expected: self.len(),
                actual,
            })
        }
    }

    /// Queues the sum of `shards` (one `f32` buffer or view per GPU, `shards[r]` on rank `r`'s
    /// device, any lengths, 0 included) into `results` (one 1-element `f64` buffer per GPU):
    /// every `results[r]` receives the total. No host synchronisation. Allocates a
    /// [`ShardedSum`] (a few KiB per GPU); keep one to sum many times.
    ///
    /// # Errors
    /// As [`ShardedSum::sum_into`].
    pub fn sharded_sum_into<S, R>(&self, shards: &[S], results: &mut [R]) -> Result<()>
    where
        S: DevicePtr<f32>,
        R: DevicePtrMut<f64>,
    {
        ShardedSum::new(self)?
            .sum_into(self, shards, results)
            .map(drop)
    }

    /// The sum of `shards` (one per GPU, any lengths) as a host value, waiting for it. See
    /// [`ShardedSum`] for the accuracy.
    ///
    /// # Errors
    /// As [`ShardedSum::sum`].
    pub fn sharded_sum<S: DevicePtr<f32>>(&self, shards: &[S]) -> Result<f64> {
        ShardedSum::new(self)?.sum(self, shards)
    }

    /// Queues NCCL's all-reduce (sum) of `inputs` into `outputs`: one `f32` buffer or view of
    /// each per GPU (`inputs[r]`, `outputs[r]` on rank `r`'s device), all of one length; every
    /// `outputs[r]` receives the elementwise sum of every input. No host synchronisation.
    ///
    /// Rounding: each element is the sum of `len()` floats in NCCL's order (ring or tree), at
    /// most `len() - 1` roundings; every rank gets the same bits.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless one input and one output per GPU;
    /// [`Error::UnequalLengths`] (inputs' lengths, then outputs') unless all are equal;
    /// [`Error::WrongContext`] for a buffer on another device than its rank; [`Error::Nccl`].
    pub fn all_reduce_sum<S, D>(&self, inputs: &[S], outputs: &mut [D]) -> Result<()>
    where
        S: DevicePtr<f32>,
        D: DevicePtrMut<f32>,
    {
        self.check_count("inputs", inputs.len())?;
        self.check_count("outputs", outputs.len())?;
        let lengths: Vec<usize> = inputs
            .iter()
            .map(|b| b.len())
            .chain(outputs.iter().map(|b| b.len()))
            .collect();
        check_equal("buffers", &lengths)?;
        for ((gpu, input), output) in self.gpus.iter().zip(inputs).zip(outputs.iter()) {
            gpu.check_buffer("input", input)?;
            gpu.check_buffer("output", output)?;
        }
        let count = lengths[0];
        if count == 0 {
            return Ok(());
        }
        // The pointers (and cudarc's stream tracking of the buffers, recorded when the guards
        // drop: after ncclGroupEnd has queued the collective).
        let mut guards: Vec<SyncOnDrop<'_>> = Vec::with_capacity(2 * self.len());
        let mut ptrs = Vec::with_capacity(self.len());
        for ((gpu, input), output) in self.gpus.iter().zip(inputs).zip(outputs.iter_mut()) {
            let (src, read) = input.device_ptr(gpu.stream());
            let (dst, write) = output.device_ptr_mut(gpu.stream());
            guards.extend([read, write]);
            ptrs.push((src, dst));
        }
        self.grouped_all_reduce(
            &ptrs,
            count,
            nccl_sys::ncclDataType_t::ncclFloat32,
            "NCCL all-reduce (f32 sum)",
        )?;
        drop(guards);
        Ok(())
    }

    /// As [`GpuGroup::all_reduce_sum`], in place: every `buffers[r]` becomes the elementwise
    /// sum of all of them.
    ///
    /// # Errors
    /// As [`GpuGroup::all_reduce_sum`].
    pub fn all_reduce_sum_in_place<D: DevicePtrMut<f32>>(&self, buffers: &mut [D]) -> Result<()> {
        self.all_reduce_in_place(
            buffers,
            nccl_sys::ncclDataType_t::ncclFloat32,
            "NCCL all-reduce (f32 sum, in place)",
        )
    }

    /// NCCL's in-place all-reduce (sum) of one buffer per GPU of `T` (`f32` or `f64`).
    fn all_reduce_in_place<T, D: DevicePtrMut<T>>(
        &self,
        buffers: &mut [D],
        datatype: nccl_sys::ncclDataType_t,
        during: &str,
    ) -> Result<()> {
        self.check_count("buffers", buffers.len())?;
        let lengths: Vec<usize> = buffers.iter().map(|b| b.len()).collect();
        check_equal("buffers", &lengths)?;
        for (gpu, buffer) in self.gpus.iter().zip(buffers.iter()) {
            gpu.check_buffer("buffer", buffer)?;
        }
        let count = lengths[0];
        if count == 0 {
            return Ok(());
        }
        let mut guards: Vec<SyncOnDrop<'_>> = Vec::with_capacity(self.len());
        let mut ptrs = Vec::with_capacity(self.len());
        for (gpu, buffer) in self.gpus.iter().zip(buffers.iter_mut()) {
            let (ptr, write) = buffer.device_ptr_mut(gpu.stream());
            guards.push(write);
            ptrs.push((ptr, ptr));
        }
        self.grouped_all_reduce(&ptrs, count, datatype, during)?;
        drop(guards);
        Ok(())
    }

    /// `ncclAllReduce(src, dst, count, datatype, ncclSum)` on every rank, between
    /// `ncclGroupStart` and `ncclGroupEnd` (always balanced, also when a call fails).
    fn grouped_all_reduce(
        &self,
        ptrs: &[(u64, u64)],
        count: usize,
        datatype: nccl_sys::ncclDataType_t,
        during: &str,
    ) -> Result<()> {
        nccl::group_start().map_err(nccl_error(format!("{during}: ncclGroupStart")))?;
        let mut first_error = None;
        for ((comm, gpu), &(src, dst)) in self.comms.iter().zip(&self.gpus).zip(ptrs) {
            // SAFETY: `src` and `dst` are device pointers of `count` elements of `datatype` on
            // this rank's device (lengths and contexts checked by the callers; equal when in
            // place, which NCCL allows), kept alive by the callers' borrows until the
            // collective is queued; `comm` is this rank's communicator and the stream belongs
            // to the same device.
            let queued = unsafe {
                nccl::all_reduce(
                    src as *const _,
                    dst as *mut _,
                    count,
                    datatype,
                    nccl_sys::ncclRedOp_t::ncclSum,
                    comm.0,
                    gpu.stream().cu_stream() as nccl_sys::cudaStream_t,
                )
            };
            if let Err(e) = queued {
                first_error.get_or_insert_with(|| {
                    nccl_error(format!("{during} on device {}", gpu.ordinal()))(e)
                });
            }
        }
        let ended = nccl::group_end().map_err(nccl_error(format!("{during}: ncclGroupEnd")));
        match first_error {
            Some(e) => Err(e),
            None => ended.map(drop),
        }
    }
}

impl Drop for GpuGroup {
    fn drop(&mut self) {
        // No collective may be in flight when a communicator is aborted. A failure here was
        // or will be reported by the call that queued the work.
        for gpu in &self.gpus {
            let _ = gpu.synchronize("finishing the group's work");
        }
    }
}

/// [`Error::InvalidDevices`] for an empty list or a device named twice.
fn check_devices(devices: &[usize]) -> Result<()> {
    if devices.is_empty() {
        return Err(Error::InvalidDevices {
            devices: Vec::new(),
            requirement: "a group needs at least one GPU",
        });
    }
    for (i, d) in devices.iter().enumerate() {
        if devices[..i].contains(d) {
            return Err(Error::InvalidDevices {
                devices: devices.to_vec(),
                requirement: "each device at most once (NCCL has one rank per GPU)",
            });
        }
    }
    Ok(())
}

/// [`Error::UnequalLengths`] unless every length is the first.
fn check_equal(what: &'static str, lengths: &[usize]) -> Result<()> {
    if lengths.windows(2).all(|w| w[0] == w[1]) {
        Ok(())
    } else {
        Err(Error::UnequalLengths {
            what,
            lengths: lengths.to_vec(),
        })
    }
}

/// The sum of data sharded across a [`GpuGroup`], with its per-GPU workspace: one
/// [`ReduceSum<SumF32F64>`] and one `f64` partial per GPU, allocated once.
///
/// Algorithm: rank `r` reduces its shard with the lab's one-launch `reduce_sum_f32_f64`
/// (reads `f32`, accumulates `f64`) into a device scalar on its stream; then one NCCL
/// all-reduce (sum) of the `f64` scalars, grouped across the ranks, leaves the total on every
/// GPU. The work per GPU is its shard's read (bandwidth-bound, 4 bytes per element) plus one
/// 8-byte all-reduce (latency-bound, some microseconds), so `k` GPUs read `k` times as fast.
///
/// Accuracy: every partial is accumulated in `f64`, so the error is at most
/// `(depth + k - 1) * f64::EPSILON * sum |x|` with `depth` the longest rounding chain of a
/// shard's launch ([`reference::reduce_sum_depth`]) and `k - 1` further roundings in NCCL's
/// sum of the partials ([`ShardedSum::error_bound`]): far below one `f32` ulp of the result
/// for any data that fits in memory.
pub struct ShardedSum {
    reducers: Vec<ReduceSum<SumF32F64>>,
    partials: Vec<CudaSlice<f64>>,
}

impl ShardedSum {
    /// The workspace on every GPU of `group`.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`]; [`Error::Driver`].
    pub fn new(group: &GpuGroup) -> Result<Self> {
        Ok(Self {
            reducers: group
                .gpus
                .iter()
                .map(ReduceSum::new)
                .collect::<Result<_>>()?,
            partials: group
                .gpus
                .iter()
                .map(|g| g.zeros(1))
                .collect::<Result<_>>()?,
        })
    }

    /// Queues the sum of `shards` (one `f32` buffer or view per GPU, any lengths) into
    /// `results` (one 1-element `f64` buffer per GPU): every `results[r]` receives the total.
    /// Returns each shard's launch configuration (for [`ShardedSum::error_bound`]). No host
    /// synchronisation.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless one shard and one result per GPU, or if a result is not
    /// one element; [`Error::WrongContext`] for a buffer on another device than its rank;
    /// [`Error::Driver`] if a launch fails; [`Error::Nccl`].
    pub fn sum_into<S, R>(
        &mut self,
        group: &GpuGroup,
        shards: &[S],
        results: &mut [R],
    ) -> Result<Vec<LaunchConfig>>
    where
        S: DevicePtr<f32>,
        R: DevicePtrMut<f64>,
    {
        group.check_count("shards", shards.len())?;
        group.check_count("results", results.len())?;
        self.check_group(group)?;
        let mut cfgs = Vec::with_capacity(group.len());
        for (((gpu, reducer), shard), result) in group
            .gpus
            .iter()
            .zip(&mut self.reducers)
            .zip(shards)
            .zip(results.iter_mut())
        {
            cfgs.push(reducer.sum_into(gpu, shard, result)?);
        }
        group.all_reduce_in_place(
            results,
            nccl_sys::ncclDataType_t::ncclFloat64,
            "NCCL all-reduce of the shards' partial sums (f64)",
        )?;
        Ok(cfgs)
    }

    /// Queues the sum of `shards` into this workspace's own device scalars (one per GPU; read
    /// them with [`ShardedSum::result`]). No host synchronisation.
    ///
    /// # Errors
    /// As [`ShardedSum::sum_into`].
    pub fn launch<S: DevicePtr<f32>>(
        &mut self,
        group: &GpuGroup,
        shards: &[S],
    ) -> Result<Vec<LaunchConfig>> {
        let mut partials = std::mem::take(&mut self.partials);
        let cfgs = self.sum_into(group, shards, &mut partials);
        self.partials = partials;
        cfgs
    }

    /// The total left by the last [`ShardedSum::launch`] on rank `rank`'s GPU, waiting for its
    /// stream (every rank holds the same bits).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for a rank beyond the group; [`Error::Driver`] if the copy
    /// fails or the work faulted.
    pub fn result(&self, group: &GpuGroup, rank: usize) -> Result<f64> {
        let (Some(gpu), Some(partial)) = (group.gpus.get(rank), self.partials.get(rank)) else {
            return Err(Error::LengthMismatch {
                what: "rank",
                expected: group.len(),
                actual: rank,
            });
        };
        Ok(gpu.download(partial, "the sharded sum")?[0])
    }

    /// The sum of `shards` as a host value: [`ShardedSum::launch`], then rank 0's
    /// [`ShardedSum::result`].
    ///
    /// # Errors
    /// As [`ShardedSum::sum_into`].
    pub fn sum<S: DevicePtr<f32>>(&mut self, group: &GpuGroup, shards: &[S]) -> Result<f64> {
        self.launch(group, shards)?;
        self.result(group, 0)
    }

    /// Bound on `|result - exact|` for shards of `lengths` summed with launches `cfgs` (as
    /// [`ShardedSum::sum_into`] returns them), `sum_abs` the sum of `|x|` over every shard:
    /// `(max depth + k - 1)` roundings in `f64` of `sum_abs`, plus an `f64` reference's own
    /// ([`reference::sum_error_bound`]).
    pub fn error_bound(lengths: &[usize], cfgs: &[LaunchConfig], sum_abs: f64) -> f64 {
        let depth = lengths
            .iter()
            .zip(cfgs)
            .map(|(&n, cfg)| reference::reduce_sum_depth(n, cfg))
            .max()
            .unwrap_or(0)
            + lengths.len().saturating_sub(1) as u64;
        let total: usize = lengths.iter().sum();
        reference::sum_error_bound(total, depth, f64::EPSILON, sum_abs)
    }

    /// [`Error::LengthMismatch`] unless this workspace was made for a group of this size.
    fn check_group(&self, group: &GpuGroup) -> Result<()> {
        group.check_count(
            "ShardedSum workspaces (made for another group)",
            self.reducers.len(),
        )
    }
}

/// The busbw factor of an all-reduce over `ranks` GPUs, `2 (n - 1) / n` (nccl-tests,
/// `doc/PERFORMANCE.md`): each rank must send and receive `(n - 1) / n` of its buffer twice
/// (once reducing, once gathering) whatever the algorithm, so `busbw = algbw x 2 (n - 1) / n`
/// is the bandwidth each link carries, comparable with the hardware's peak for any `n`.
/// 0 for one GPU (nothing crosses a link).
pub fn all_reduce_bus_factor(ranks: usize) -> f64 {
    if ranks == 0 {
        return 0.0;
    }
    2.0 * (ranks - 1) as f64 / ranks as f64
}

/// CPU reference of an all-reduce (sum): the elementwise sum of `inputs` (equal lengths) in
/// `f64`, and the sum of `|x|` per element (the scale of the rounding bound).
///
/// # Panics
/// If the inputs' lengths differ (a test's mistake).
pub fn all_reduce_reference(inputs: &[&[f32]]) -> (Vec<f64>, Vec<f64>) {
    let n = inputs.first().map_or(0, |x| x.len());
    assert!(inputs.iter().all(|x| x.len() == n), "unequal lengths");
    let mut sum = vec![0.0f64; n];
    let mut abs = vec![0.0f64; n];
    for x in inputs {
        for (i, &v) in x.iter().enumerate() {
            sum[i] += v as f64;
            abs[i] += (v as f64).abs();
        }
    }
    (sum, abs)
}

/// Bound on `|got - exact|` for one element of an `f32` all-reduce over `ranks` GPUs whose
/// inputs' `|x|` sum to `sum_abs`: `(ranks - 1)` roundings of `f32` (each add of NCCL's ring or
/// tree, or of [`ring`]), so 0 for one GPU and for sums of small integers.
pub fn all_reduce_bound(ranks: usize, sum_abs: f64) -> f64 {
    ranks.saturating_sub(1) as f64 * f32::EPSILON as f64 * sum_abs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lists() {
        assert!(matches!(
            check_devices(&[]),
            Err(Error::InvalidDevices { .. })
        ));
        assert!(matches!(
            check_devices(&[0, 1, 0]),
            Err(Error::InvalidDevices { devices, .. }) if devices == [0, 1, 0]
        ));
        assert!(check_devices(&[1, 0]).is_ok());
    }

    #[test]
    fn unequal_lengths_carry_them() {
        assert!(check_equal("x", &[3, 3, 3]).is_ok());
        assert!(check_equal("x", &[]).is_ok());
        let e = check_equal("x", &[3, 4]).unwrap_err();
        assert!(matches!(&e, Error::UnequalLengths { lengths, .. } if lengths == &[3, 4]));
        assert_eq!(e.to_string(), "x must all have the same length, got [3, 4]");
    }

    #[test]
    fn bus_factor_as_nccl_tests() {
        assert_eq!(all_reduce_bus_factor(1), 0.0);
        assert_eq!(all_reduce_bus_factor(2), 1.0);
        assert_eq!(all_reduce_bus_factor(4), 1.5);
        assert_eq!(all_reduce_bus_factor(8), 1.75);
    }

    #[test]
    fn references() {
        let (sum, abs) = all_reduce_reference(&[&[1.0, -2.0], &[3.0, 0.5]]);
        assert_eq!(sum, [4.0, -1.5]);
        assert_eq!(abs, [4.0, 2.5]);
        assert_eq!(all_reduce_bound(1, 10.0), 0.0);
        assert_eq!(all_reduce_bound(3, 1.0), 2.0 * f32::EPSILON as f64);
    }

    #[test]
    fn the_missing_library_is_named() {
        let e = Error::NcclNotFound {
            looked_for: vec!["libnccl.so".into(), "libnccl64.so".into()],
        };
        let text = e.to_string();
        assert!(text.contains("libnccl.so, libnccl64.so"), "{text}");
        assert!(text.contains("LD_LIBRARY_PATH"), "{text}");
        assert!(nccl_library_names().iter().any(|n| n == "libnccl.so"));
    }

    #[test]
    fn a_missing_nccl_is_an_error_not_a_panic() {
        if !nccl_available() {
            assert!(matches!(nccl_version(), Err(Error::NcclNotFound { .. })));
        }
    }
}
