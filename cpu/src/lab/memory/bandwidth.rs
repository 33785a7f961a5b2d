//! Host-device transfer bandwidth, like NVIDIA's `bandwidthTest` (seed "cuda 并行归约" section 二),
//! for the host memory kinds of the seed "cuda 学习之内存层次结构" (pageable and page-locked), plus
//! write-combined and zero-copy (mapped) memory, and the launch overhead of an empty kernel.
//!
//! - pageable: a plain `Vec<u8>`; the driver stages each copy through its own pinned buffer.
//! - pinned: page-locked memory from `cuMemHostAlloc(PORTABLE)` (`cudaMallocHost`), copied by
//!   DMA directly.
//! - write-combined: `cuMemHostAlloc(WRITECOMBINED)`, which is what cudarc's `alloc_pinned`
//!   asks for: page-locked but uncached on the CPU, so CPU reads of it are very slow.
//! - zero-copy: `cuMemHostAlloc(PORTABLE | DEVICEMAP)` read or written by a kernel
//!   ([`gpu::memory::bandwidth`]'s copy) through the pointer `cuMemHostGetDevicePointer` gives.

use std::time::Instant;

use cudarc::driver::{
    CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig, sys,
};
use gpu::memory::bandwidth::{self as k, kernels};

use crate::context::Gpu;
use crate::error::{DriverContext, Error, Result};
use crate::kernel::DeviceAddress;
use crate::launch;

/// The kernels of this topic.
pub const KERNELS: &[&str] = &[
    kernels::bandwidth_copy_v4.name(),
    kernels::bandwidth_empty_kernel.name(),
];

/// The host memory a transfer uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum HostMemory {
    /// Ordinary pageable memory (`malloc`, `Vec`).
    Pageable,
    /// Page-locked memory (`cudaMallocHost`, `cuMemHostAlloc` with `PORTABLE`).
    Pinned,
    /// Page-locked write-combined memory (`cuMemHostAlloc` with `WRITECOMBINED`, cudarc's
    /// `alloc_pinned`).
    WriteCombined,
    /// Mapped page-locked memory read or written by a kernel (zero-copy).
    ZeroCopy,
}

impl HostMemory {
    /// Every kind, in table order.
    pub const ALL: [HostMemory; 4] = [
        HostMemory::Pageable,
        HostMemory::Pinned,
        HostMemory::WriteCombined,
        HostMemory::ZeroCopy,
    ];

    /// `cuMemHostAlloc` flags of the page-locked kinds.
    fn flags(self) -> Option<u32> {
        match self {
            HostMemory::Pageable => None,
            HostMemory::Pinned => Some(sys::CU_MEMHOSTALLOC_PORTABLE),
            HostMemory::WriteCombined => Some(sys::CU_MEMHOSTALLOC_WRITECOMBINED),
            HostMemory::ZeroCopy => {
                Some(sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP)
            }
        }
    }
}

/// Direction of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Host to device.
    HostToDevice,
    /// Device to host.
    DeviceToHost,
}

/// Page-locked host memory from `cuMemHostAlloc`, freed with `cuMemFreeHost` on drop.
///
/// Copies and kernels that read or write it run asynchronously ([`transfer`], [`zero_copy`]);
/// each records an event here after it is queued, and every host access ([`as_slice`],
/// [`as_mut_slice`]) and the drop wait for that event first, so the host never touches the
/// bytes while the device does.
///
/// [`as_slice`]: PageLocked::as_slice
/// [`as_mut_slice`]: PageLocked::as_mut_slice
pub struct PageLocked {
    ptr: *mut u8,
    len: usize,
    device_ptr: Option<sys::CUdeviceptr>,
    /// Completes when the last queued copy or kernel using these bytes has.
    pending: Option<CudaEvent>,
}

impl PageLocked {
    /// Allocates `len` bytes (at least one) with `flags` (`CU_MEMHOSTALLOC_*`) in `gpu`'s
    /// context, zeroed; with `DEVICEMAP`, also looks up the device pointer of the mapping.
    ///
    /// # Errors
    /// [`Error::Driver`] if the allocation or the lookup fails.
    pub fn new(gpu: &Gpu, len: usize, flags: u32) -> Result<Self> {
        gpu.context()
            .bind_to_thread()
            .during("binding the CUDA context")?;
        let bytes = len.max(1);
        let mut raw: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the context is current on this thread.
        unsafe { sys::cuMemHostAlloc(&mut raw, bytes, flags) }
            .result()
            .during(format!("allocating {bytes} bytes of page-locked memory"))?;
        let mut this = Self {
            ptr: raw.cast(),
            len,
            device_ptr: None,
            pending: None,
        };
        // SAFETY: `ptr` is valid for `bytes` bytes (just allocated); zeroing makes every byte
        // initialised, so the slices handed out later are sound.
        unsafe { std::ptr::write_bytes(this.ptr, 0, bytes) };
        if flags & sys::CU_MEMHOSTALLOC_DEVICEMAP != 0 {
            let mut dptr: sys::CUdeviceptr = 0;
            // SAFETY: `raw` is a live allocation made with DEVICEMAP; `dptr` a valid out-pointer.
            unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dptr, raw, 0) }
                .result()
                .during("looking up the device pointer of mapped memory")?;
            this.device_ptr = Some(dptr);
        }
        Ok(this)
    }

    /// The bytes, once every copy or kernel queued on them has finished (waits for it).
    pub fn as_slice(&self) -> &[u8] {
        self.wait_for_device();
        // SAFETY: `ptr` is valid, initialised and exclusively owned for `len` bytes, and no
        // device work on them is in flight (waited for above).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, mutably. As [`PageLocked::as_slice`].
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self.wait_for_device();
        // SAFETY: as `as_slice`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// Blocks until the last queued device work on these bytes has finished. An error (a
    /// failed context: sticky, so nothing of it still runs) leaves nothing to wait for.
    fn wait_for_device(&self) {
        if let Some(event) = &self.pending {
            let _ = event.synchronize();
        }
    }

    /// The bytes for a copy about to be queued on `stream`, without waiting on the host:
    /// `stream` waits (on the device) for the last queued work on them first. Call
    /// [`PageLocked::queued_on`] once the copy is queued.
    fn for_device(&mut self, stream: &CudaStream) -> Result<&mut [u8]> {
        if let Some(event) = &self.pending {
            stream
                .wait(event)
                .during("ordering a page-locked transfer")?;
        }
        // SAFETY: `ptr` is valid and initialised for `len` bytes; the slice is handed to one
        // queued copy, and every later host access waits for it (`queued_on`, `as_slice`).
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    /// Records that device work using these bytes was just queued on `stream`: the host's
    /// next access waits for it. If no event can be recorded, waits for the stream instead.
    fn queued_on(&mut self, stream: &std::sync::Arc<CudaStream>) -> Result<()> {
        if let Some(event) = &self.pending
            && event.record(stream).is_ok()
        {
            return Ok(());
        }
        match stream.record_event(None) {
            Ok(event) => {
                self.pending = Some(event);
                Ok(())
            }
            Err(_) => {
                self.pending = None;
                stream
                    .synchronize()
                    .during("waiting for a page-locked transfer")
            }
        }
    }

    /// The device pointer of a mapped (`DEVICEMAP`) allocation.
    pub fn device_ptr(&self) -> Option<sys::CUdeviceptr> {
        self.device_ptr
    }
}

impl Drop for PageLocked {
    fn drop(&mut self) {
        // Not freed under a copy or kernel still using it.
        self.wait_for_device();
        // SAFETY: `ptr` came from `cuMemHostAlloc` and is freed once; nothing borrows it any more.
        // A failure here cannot be reported from `drop`; the driver reclaims it at exit.
        let _ = unsafe { sys::cuMemFreeHost(self.ptr.cast()) };
    }
}

/// A host buffer of one [`HostMemory`] kind.
pub enum HostBuffer {
    /// Pageable.
    Pageable(Vec<u8>),
    /// Page-locked (pinned, write-combined or mapped).
    PageLocked(PageLocked),
}

impl HostBuffer {
    /// `len` zeroed bytes of `kind`.
    ///
    /// # Errors
    /// [`Error::Driver`] if page-locked memory cannot be allocated.
    pub fn new(gpu: &Gpu, kind: HostMemory, len: usize) -> Result<Self> {
        Ok(match kind.flags() {
            None => HostBuffer::Pageable(vec![0; len]),
            Some(flags) => HostBuffer::PageLocked(PageLocked::new(gpu, len, flags)?),
        })
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            HostBuffer::Pageable(v) => v,
            HostBuffer::PageLocked(p) => p.as_slice(),
        }
    }

    /// The bytes, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match self {
            HostBuffer::Pageable(v) => v,
            HostBuffer::PageLocked(p) => p.as_mut_slice(),
        }
    }

    /// Bytes held (no wait).
    fn byte_len(&self) -> usize {
        match self {
            HostBuffer::Pageable(v) => v.len(),
            HostBuffer::PageLocked(p) => p.len,
        }
    }

    /// As [`PageLocked::for_device`]; pageable bytes are copied synchronously by the driver.
    fn for_device(&mut self, stream: &CudaStream) -> Result<&mut [u8]> {
        match self {
            HostBuffer::Pageable(v) => Ok(v),
            HostBuffer::PageLocked(p) => p.for_device(stream),
        }
    }

    /// As [`PageLocked::queued_on`]; nothing to record for pageable bytes.
    fn queued_on(&mut self, stream: &std::sync::Arc<CudaStream>) -> Result<()> {
        match self {
            HostBuffer::Pageable(_) => Ok(()),
            HostBuffer::PageLocked(p) => p.queued_on(stream),
        }
    }

    fn mapped(&self) -> Result<sys::CUdeviceptr> {
        match self {
            HostBuffer::PageLocked(PageLocked {
                device_ptr: Some(p),
                ..
            }) => Ok(*p),
            _ => Err(Error::Unsupported {
                what: "host buffer",
                requirement: "zero-copy needs mapped page-locked memory (HostMemory::ZeroCopy)",
            }),
        }
    }
}

fn check_bytes(bytes: usize, host: usize, device: usize) -> Result<()> {
    if bytes > host.min(device) {
        return Err(Error::OutOfRange {
            what: "transfer bytes",
            value: bytes as u64,
            min: 0,
            max: host.min(device) as u64,
        });
    }
    Ok(())
}

/// Queues a transfer of the first `bytes` bytes between `host` and `device` on `gpu`'s stream:
/// the driver's copy for pageable and page-locked memory, [`zero_copy`] for mapped memory.
/// No host synchronisation for page-locked memory: reading or writing `host` afterwards (its
/// `as_slice`, `as_mut_slice`) waits for the transfer.
///
/// # Errors
/// [`Error::OutOfRange`] if `bytes` exceeds a buffer (or, for zero-copy, is not a multiple of
/// 16); [`Error::Driver`] if the copy fails.
pub fn transfer(
    gpu: &Gpu,
    kind: HostMemory,
    direction: Direction,
    host: &mut HostBuffer,
    device: &mut CudaSlice<u8>,
    bytes: usize,
) -> Result<()> {
    check_bytes(bytes, host.byte_len(), device.len())?;
    if kind == HostMemory::ZeroCopy {
        return zero_copy(gpu, direction, host, device, bytes).map(drop);
    }
    let stream = gpu.stream();
    let bytes_on_host = &mut host.for_device(stream)?[..bytes];
    let queued = match direction {
        Direction::HostToDevice => stream
            .memcpy_htod(bytes_on_host, &mut device.slice_mut(..bytes))
            .during("host-to-device memcpy"),
        Direction::DeviceToHost => stream
            .memcpy_dtoh(&device.slice(..bytes), bytes_on_host)
            .during("device-to-host memcpy"),
    };
    // Recorded even after a failed call: the host waits for whatever was queued.
    host.queued_on(stream)?;
    queued
}

/// The zero-copy kernel's launch for `bytes`: blocks of [`k::BLOCK_SIZE`], at most one wave of
/// resident blocks.
///
/// # Errors
/// [`Error::Driver`] if the device cannot be queried.
pub fn copy_config(gpu: &Gpu, bytes: usize) -> Result<LaunchConfig> {
    let groups = bytes / k::GROUP_BYTES;
    let covering = launch::blocks_to_cover(
        kernels::bandwidth_copy_v4.name(),
        groups,
        k::BLOCK_SIZE as u64,
    )?;
    let wave = gpu.sm_count()? * (gpu.max_threads_per_sm()? / k::BLOCK_SIZE).max(1);
    Ok(launch::linear(covering.min(wave).max(1), k::BLOCK_SIZE, 0))
}

fn launch_copy(
    gpu: &Gpu,
    src: &impl DevicePtr<u32>,
    dst: &mut impl DevicePtrMut<u32>,
    bytes: usize,
) -> Result<LaunchConfig> {
    let cfg = copy_config(gpu, bytes)?;
    if bytes == 0 {
        return Ok(cfg);
    }
    let groups = bytes / k::GROUP_BYTES;
    // SAFETY: `bandwidth_copy_v4(src, dst, groups)`: the callers pass two distinct allocations
    // (device memory, or the device pointer of mapped host memory) of at least
    // `bytes = 16 * groups` bytes, 16-byte aligned (cuMemAlloc and cuMemHostAlloc return page-
    // or 256-byte aligned memory), and touch neither until the stream is synchronized.
    unsafe { gpu.launch_unchecked(kernels::bandwidth_copy_v4, cfg, (src, dst, groups)) }?;
    Ok(cfg)
}

/// The first `bytes` bytes of `buffer` as the copy kernel's `u32` words (`bytes` is at most its
/// length and a multiple of 16: checked by the callers).
fn words(buffer: &CudaSlice<u8>, bytes: usize) -> Result<cudarc::driver::CudaView<'_, u32>> {
    // SAFETY: every bit pattern is a valid `u32`, and the view covers `bytes / 4` words of the
    // buffer (`None` otherwise); the allocation is 256-byte aligned, so the words are aligned.
    unsafe { buffer.transmute::<u32>(bytes / 4) }.ok_or(Error::LengthMismatch {
        what: "copy buffer",
        expected: bytes,
        actual: buffer.len(),
    })
}

/// As [`words`], mutably.
fn words_mut(
    buffer: &mut CudaSlice<u8>,
    bytes: usize,
) -> Result<cudarc::driver::CudaViewMut<'_, u32>> {
    let actual = buffer.len();
    // SAFETY: as in `words`; the view borrows the buffer mutably.
    unsafe { buffer.transmute_mut::<u32>(bytes / 4) }.ok_or(Error::LengthMismatch {
        what: "copy buffer",
        expected: bytes,
        actual,
    })
}

/// Queues the zero-copy kernel: host-to-device reads the mapped `host` and writes `device`,
/// device-to-host the reverse, over the first `bytes` bytes.
///
/// # Errors
/// [`Error::OutOfRange`] if `host` is not mapped memory, `bytes` is not a multiple of 16 or
/// exceeds a buffer; [`Error::Driver`] if the launch fails.
pub fn zero_copy(
    gpu: &Gpu,
    direction: Direction,
    host: &mut HostBuffer,
    device: &mut CudaSlice<u8>,
    bytes: usize,
) -> Result<LaunchConfig> {
    let mapped = host.mapped()?;
    check_bytes(bytes, host.byte_len(), device.len())?;
    if !bytes.is_multiple_of(k::GROUP_BYTES) {
        return Err(Error::NotMultiple {
            what: "zero-copy bytes",
            value: bytes,
            multiple: k::GROUP_BYTES,
        });
    }
    // The stream waits for the last device work on the host bytes (another stream's included).
    host.for_device(gpu.stream())?;
    // SAFETY: `mapped` is the device pointer of the mapped host buffer, valid for `bytes / 4`
    // words (checked above); the driver tracks no events for host memory, so `queued_on` below
    // records one that every host access and the buffer's drop wait for.
    let mut host_words = unsafe { DeviceAddress::<u32>::new(mapped, bytes / 4, gpu.stream()) };
    let queued = match direction {
        Direction::HostToDevice => {
            launch_copy(gpu, &host_words, &mut words_mut(device, bytes)?, bytes)
        }
        Direction::DeviceToHost => launch_copy(gpu, &words(device, bytes)?, &mut host_words, bytes),
    };
    host.queued_on(gpu.stream())?;
    queued
}

/// Queues the kernel copy of the first `bytes` bytes of `src` into `dst` (device to device),
/// the zero-copy kernel on device memory, beside the driver's memcpy.
///
/// # Errors
/// As [`zero_copy`].
pub fn kernel_copy(
    gpu: &Gpu,
    src: &CudaSlice<u8>,
    dst: &mut CudaSlice<u8>,
    bytes: usize,
) -> Result<LaunchConfig> {
    check_bytes(bytes, src.len(), dst.len())?;
    if !bytes.is_multiple_of(k::GROUP_BYTES) {
        return Err(Error::NotMultiple {
            what: "bytes",
            value: bytes,
            multiple: k::GROUP_BYTES,
        });
    }
    launch_copy(gpu, &words(src, bytes)?, &mut words_mut(dst, bytes)?, bytes)
}

/// The transfer sizes of the sweep: 1 KiB, 4 KiB, ... (powers of 4) up to `max_bytes`.
pub fn sweep_sizes(max_bytes: usize) -> Vec<usize> {
    std::iter::successors(Some(1usize << 10), |s| s.checked_mul(4))
        .take_while(|&s| s <= max_bytes)
        .collect()
}

/// The test pattern: byte `i` of a buffer filled for `seed`, never zero (so a zeroed
/// destination that a copy missed never matches).
pub fn pattern_byte(seed: u64, i: usize) -> u8 {
    let h = (i as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h >> 56) as u8) | 1
}

/// Fills `buf` with [`pattern_byte`].
pub fn fill_pattern(seed: u64, buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = pattern_byte(seed, i);
    }
}

/// The first index (of those visited every `step` bytes, plus the last 4 KiB) where `buf` is not
/// the pattern; `step = 1` checks every byte (a larger step is for write-combined memory, whose
/// CPU reads are uncached).
pub fn first_pattern_mismatch(seed: u64, buf: &[u8], step: usize) -> Option<usize> {
    let tail = buf.len().saturating_sub(4096);
    (0..buf.len())
        .step_by(step.max(1))
        .chain(tail..buf.len())
        .find(|&i| buf[i] != pattern_byte(seed, i))
}

/// Launch overhead of [`bandwidth_empty_kernel`](kernels::bandwidth_empty_kernel) (one block
/// of one thread).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaunchOverhead {
    /// GPU time per launch: CUDA events around `launches` back-to-back launches, divided.
    pub gpu_us: f64,
    /// Host time to queue one launch (wall clock over the same back-to-back launches).
    pub enqueue_us: f64,
    /// Host wall clock of one launch followed by a stream synchronization (median).
    pub round_trip_us: f64,
    /// Launches per measurement.
    pub launches: usize,
}

/// Measures [`LaunchOverhead`] with `launches` back-to-back launches and as many
/// launch-and-synchronize round trips.
///
/// # Errors
/// [`Error::OutOfRange`] if `launches` is 0; [`Error::Driver`] if a launch or an event fails.
pub fn launch_overhead(gpu: &Gpu, launches: usize) -> Result<LaunchOverhead> {
    if launches == 0 {
        return Err(Error::OutOfRange {
            what: "launches",
            value: 0,
            min: 1,
            max: u64::MAX,
        });
    }
    let cfg = launch::linear(1, 1, 0);
    let launch_once = || -> Result<()> { gpu.launch(kernels::bandwidth_empty_kernel, cfg, ()) };
    for _ in 0..10 {
        launch_once()?;
    }
    let events = || {
        gpu.context()
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .during("creating a timing event")
    };
    let (start, end) = (events()?, events()?);
    gpu.synchronize("empty kernel warm-up")?;
    let wall = Instant::now();
    start.record(gpu.stream()).during("recording an event")?;
    for _ in 0..launches {
        launch_once()?;
    }
    end.record(gpu.stream()).during("recording an event")?;
    let enqueue = wall.elapsed().as_secs_f64();
    gpu.synchronize("empty kernel launches")?;
    let gpu_ms = start.elapsed_ms(&end).during("reading an event time")? as f64;
    let mut round_trips: Vec<f64> = (0..launches)
        .map(|_| {
            let t = Instant::now();
            launch_once()?;
            gpu.synchronize("empty kernel round trip")?;
            Ok(t.elapsed().as_secs_f64())
        })
        .collect::<Result<_>>()?;
    round_trips.sort_by(f64::total_cmp);
    Ok(LaunchOverhead {
        gpu_us: gpu_ms * 1e3 / launches as f64,
        enqueue_us: enqueue * 1e6 / launches as f64,
        round_trip_us: round_trips[launches / 2] * 1e6,
        launches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_powers_of_four() {
        let s = sweep_sizes(1 << 30);
        assert_eq!(s.len(), 11);
        assert_eq!((s[0], s[10]), (1 << 10, 1 << 30));
        assert_eq!(sweep_sizes(5000), [1024, 4096]);
        assert!(sweep_sizes(100).is_empty());
    }

    #[test]
    fn pattern_is_never_zero_and_checks_find_errors() {
        let mut buf = vec![0u8; 10_000];
        fill_pattern(7, &mut buf);
        assert!(buf.iter().all(|&b| b != 0));
        assert_eq!(first_pattern_mismatch(7, &buf, 1), None);
        buf[9_999] = 0;
        assert_eq!(first_pattern_mismatch(7, &buf, 4096), Some(9_999));
        assert_ne!(first_pattern_mismatch(8, &buf, 1), None);
    }
}
