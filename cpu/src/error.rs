//! The library's error type: every failure a caller can meet, each variant carrying the values
//! that caused it, so callers can match on them instead of parsing text.
//!
//! # Empty input
//! One rule for every pattern: an empty input is valid. Nothing is launched and an empty output
//! is left as it is; a sum of no elements is 0 (written into a device scalar by `sum_into`), a
//! product 1, a minimum the type's largest value; only what has no value (the index of the
//! largest of no elements) is refused ([`Error::EmptyInput`]). Shapes with a zero dimension
//! (`0 x cols`) are empty too. What is refused is what cannot be computed: a mask of even or zero width, lengths
//! that disagree, sizes whose byte count overflows, launches beyond the grid limits.

use cudarc::driver::DriverError;

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong between the host and a kernel.
///
/// # `what`
/// A variant's `what` field names the argument or parameter at fault as the caller knows it:
/// the parameter's name in the function's signature (`"input"`, `"output"`, `"offsets"`,
/// `"keys"`, `"mask"`), or, for a value that is not a parameter of its own (a length, a count,
/// a field), a short lowercase noun naming it (`"input length"`, `"block size"`, `"stride"`).
/// Never a sentence, a kernel's name or an explanation in parentheses: the variant's other
/// fields and its message carry those (which kernel, what is required).
///
/// The enum and every variant with fields are `#[non_exhaustive]`: new variants and new fields
/// may come in a minor release, so a `match` outside this crate needs a `_` arm and `..` in
/// each struct pattern (`Error::MaskWidth { width, .. }`):
///
/// ```
/// # fn handle(e: cpu::Error) -> usize {
/// match e {
///     cpu::Error::LengthMismatch { expected, .. } => expected,
///     cpu::Error::MaskWidth { width, min, max, .. } => width.clamp(min, max),
///     _ => 0,
/// }
/// # }
/// ```
///
/// A pattern that lists every field without `..` does not compile outside the crate, so a
/// field added later cannot break a caller's `match`:
///
/// ```compile_fail,E0638
/// # fn handle(e: cpu::Error) -> usize {
/// match e {
///     cpu::Error::LengthMismatch { what: _, expected, actual: _ } => expected,
///     _ => 0,
/// }
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `libcuda` could not be loaded: no NVIDIA driver on this machine.
    #[error(
        "no NVIDIA driver found (libcuda could not be loaded); running kernels needs an NVIDIA GPU with its driver"
    )]
    NoDriver,
    /// The driver reports no device with this index.
    #[error("there is no CUDA device {device}: the driver reports {count} device(s)")]
    #[non_exhaustive]
    DeviceOutOfRange {
        /// The index asked for.
        device: usize,
        /// Devices the driver reports.
        count: usize,
    },
    /// The embedded PTX targets only architectures newer than the device.
    #[error(
        "the device has compute capability {major}.{minor}, but the embedded PTX was built for {built} only; \
         rebuild with GPU_LAB_PTX_ARCHS=sm_{major}{minor}"
    )]
    #[non_exhaustive]
    NoCompatiblePtx {
        /// Device compute capability, major.
        major: i32,
        /// Device compute capability, minor.
        minor: i32,
        /// The architectures embedded.
        built: String,
    },
    /// A kernel crate's PTX disagrees with its handles ([`Module::check`](crate::Module::check)):
    /// it was built from other kernels.
    #[error("the PTX of {krate} does not match its kernels: {mismatch}")]
    #[non_exhaustive]
    StalePtx {
        /// The kernel crate.
        krate: String,
        /// The first disagreement: the kernel, and the parameter.
        mismatch: gpu_std::host::EntryMismatch,
    },
    /// No kernel of the crate is linked into this program, so none can be checked.
    #[error(
        "this program links no #[kernel] of the crate `{krate}`: name the crate's library (my-kernels is my_kernels) and use one of its kernels"
    )]
    #[non_exhaustive]
    NoKernels {
        /// The crate asked for.
        krate: String,
    },
    /// A kernel launched on a [`Module`](crate::Module) that does not hold it.
    #[error("kernel {kernel} is not in the module of {krate}")]
    #[non_exhaustive]
    NotInModule {
        /// The kernel.
        kernel: &'static str,
        /// The module's crate.
        krate: String,
    },
    /// A kernel declared `#[kernel(min_sm = SM)]` (tensor-core kernels: `min_sm = 80`) launched
    /// on a device of a lower compute capability, refused before anything is queued.
    #[error(
        "kernel {kernel} needs compute capability {}.{} (sm_{min_sm}) or newer, but the device has {}.{} (sm_{device_sm})",
        min_sm / 10, min_sm % 10, device_sm / 10, device_sm % 10
    )]
    #[non_exhaustive]
    ArchTooOld {
        /// The kernel.
        kernel: &'static str,
        /// The oldest architecture it runs on (`XX` of `sm_XX`).
        min_sm: u32,
        /// The device's compute capability, as `10 * major + minor`.
        device_sm: u32,
    },
    /// A safe launch was given device memory of another context than the launching handle's.
    #[error(
        "argument {position} of kernel {kernel} is device memory of another context than the launch's"
    )]
    #[non_exhaustive]
    ForeignArgument {
        /// The kernel.
        kernel: &'static str,
        /// The argument's position in the tuple, from 0.
        position: usize,
    },
    /// A device allocation larger than the free device memory. The context stays usable.
    #[error("out of device memory: {requested} bytes requested, {free} of {total} bytes free")]
    #[non_exhaustive]
    OutOfMemory {
        /// Bytes asked for.
        requested: usize,
        /// Free device memory when the allocation failed.
        free: usize,
        /// Total device memory.
        total: usize,
    },
    /// An element count whose size in bytes does not fit in `usize`.
    #[error("{what}: {count} elements of {element_bytes} bytes overflow the address space")]
    #[non_exhaustive]
    SizeOverflow {
        /// Which buffer.
        what: &'static str,
        /// Elements asked for.
        count: usize,
        /// Bytes per element.
        element_bytes: usize,
    },
    /// A `rows x cols` shape whose element count overflows `usize`.
    #[error("a {rows} x {cols} matrix has more elements than usize can count")]
    #[non_exhaustive]
    ShapeOverflow {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
    /// A CUDA driver call failed.
    #[error("{during}: {source}")]
    #[non_exhaustive]
    Driver {
        /// What was being done (the kernel's name for launches and their completion).
        during: String,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// A buffer that lives in another CUDA context than the handle launching: a context of
    /// another device, or another context (e.g. one made with `cuCtxCreate` beside the primary
    /// context) on the same device. Contexts are named by their `CUcontext` handle, so the
    /// message tells two contexts of one device apart.
    #[error(
        "{}",
        wrong_context_message(what, *expected, *actual, *expected_context, *actual_context)
    )]
    #[non_exhaustive]
    WrongContext {
        /// Which argument.
        what: &'static str,
        /// The launching handle's device.
        expected: usize,
        /// The buffer's device.
        actual: usize,
        /// The launching handle's context (its `CUcontext` handle, as an address).
        expected_context: usize,
        /// The buffer's context (its `CUcontext` handle, as an address).
        actual_context: usize,
    },
    /// Two inputs that must have the same length do not.
    #[error("{what}: expected {expected} elements, got {actual}")]
    #[non_exhaustive]
    LengthMismatch {
        /// Which argument.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// A convolution mask whose width is even, zero, or outside the range of the kernels that
    /// were asked to run it: every kernel of its dimensions (`1..=31`), or one variant's own
    /// range (the wide 2D tile takes `11..=31`, the vec4 tile `1..=9`).
    #[error(
        "a {dims}D mask of width {width}: {kernels} take odd widths {min}..={max} (a centred mask \
         has 2r + 1 taps)"
    )]
    #[non_exhaustive]
    MaskWidth {
        /// 1 or 2.
        dims: u32,
        /// The width given.
        width: usize,
        /// Who refused it: `"the 1D kernels"`, `"the 2D kernels"`, or one variant's kernels
        /// (its kernel name, e.g. `"convolution_2d_wide"`).
        kernels: &'static str,
        /// The narrowest width they are compiled for.
        min: usize,
        /// The widest width they are compiled for.
        max: usize,
    },
    /// A 1D mask given to a 2D convolution or the reverse.
    #[error("a {mask}D mask was given to a {convolution}D convolution")]
    #[non_exhaustive]
    MaskDimensions {
        /// The mask's dimensions.
        mask: u32,
        /// The convolution's.
        convolution: u32,
    },
    /// A variant that needs aligned buffers (16-byte vector accesses) got a view that is not,
    /// and has no fallback.
    #[error("{kernel}: {what} starts at {address:#x}, which is not {alignment}-byte aligned")]
    #[non_exhaustive]
    Misaligned {
        /// The kernel.
        kernel: &'static str,
        /// Which argument.
        what: &'static str,
        /// Its device address.
        address: u64,
        /// The alignment the kernel needs, in bytes.
        alignment: usize,
    },
    /// A shape a variant does not accept (e.g. the 16-byte-access transpose needs multiples
    /// of 4).
    #[error("{kernel} cannot take a {rows} x {cols} matrix: {requirement}")]
    #[non_exhaustive]
    UnsupportedShape {
        /// The kernel.
        kernel: &'static str,
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// What the kernel needs.
        requirement: &'static str,
    },
    /// A block size the kernel cannot run with.
    #[error("{kernel} cannot run blocks of {block} threads: {requirement}")]
    #[non_exhaustive]
    InvalidBlock {
        /// The kernel.
        kernel: &'static str,
        /// The block size given (threads, x dimension).
        block: u32,
        /// What the kernel needs.
        requirement: &'static str,
    },
    /// A launch needs more blocks along one axis than a grid holds.
    #[error(
        "{kernel}: {elements} elements need {blocks} blocks along {axis}, more than the limit {limit}"
    )]
    #[non_exhaustive]
    GridTooLarge {
        /// The kernel.
        kernel: &'static str,
        /// `"x"` or `"y"`.
        axis: &'static str,
        /// Elements (or rows, or tiles) to cover along that axis.
        elements: u64,
        /// Blocks needed.
        blocks: u64,
        /// The hardware limit.
        limit: u64,
    },
    /// A caller-chosen launch configuration that does not fit the kernel (a 2D grid for a 1D
    /// kernel, a grid that does not cover the input, no blocks).
    #[error("{kernel} cannot be launched as {grid:?} x {block:?}: {requirement}")]
    #[non_exhaustive]
    LaunchShape {
        /// The kernel.
        kernel: &'static str,
        /// Grid dimensions given.
        grid: (u32, u32, u32),
        /// Block dimensions given.
        block: (u32, u32, u32),
        /// What the kernel needs.
        requirement: &'static str,
    },
    /// A numeric parameter outside the range the kernel or experiment supports.
    #[error("{what} = {value}: must be {min}..={max}")]
    #[non_exhaustive]
    OutOfRange {
        /// Which parameter.
        what: &'static str,
        /// The value given.
        value: u64,
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// A histogram range `[lower, upper)` no bin can be made of: `lower` not below `upper`, a
    /// NaN bound, for floats an infinite bound or width, for integers a range of more than
    /// 2^32 values (see [`histogram::even`](crate::histogram::even)).
    #[error(
        "histogram range [{lower}, {upper}): lower must be below upper, both (and their \
         difference) finite, and an integer range at most 2^32 values wide"
    )]
    #[non_exhaustive]
    InvalidRange {
        /// The lower level given.
        lower: Level,
        /// The upper level given.
        upper: Level,
    },
    /// A size that must be a multiple of the kernel's unit of work and is not.
    #[error("{what} = {value}: must be a multiple of {multiple}")]
    #[non_exhaustive]
    NotMultiple {
        /// Which size.
        what: &'static str,
        /// The value given.
        value: usize,
        /// The unit it must be a multiple of.
        multiple: usize,
    },
    /// A segment of a segmented reduction whose offsets decrease or pass the input's end.
    #[error(
        "segment {segment} runs from offset {begin} to {end}, not a range within the input's {len} elements"
    )]
    #[non_exhaustive]
    InvalidOffsets {
        /// The segment.
        segment: usize,
        /// Its first offset.
        begin: u64,
        /// Its end offset.
        end: u64,
        /// The input's length.
        len: usize,
    },
    /// An operation that has no value for an empty input (the index of the maximum of no
    /// elements), refused before any device work.
    #[error("{operation} of an empty input has no value")]
    #[non_exhaustive]
    EmptyInput {
        /// The operation (its kernel's name).
        operation: &'static str,
    },
    /// An arg-reduction over segments ([`reduce::segmented_reduce`](crate::reduce::segmented_reduce)
    /// of `ArgMin`/`ArgMax`) with an empty segment: the index of the extreme of no elements has
    /// no value, as for [`Error::EmptyInput`].
    #[error("{operation}: segment {segment} is empty, and the extreme of no elements has no index")]
    #[non_exhaustive]
    EmptySegment {
        /// The operation (its kernel's name).
        operation: &'static str,
        /// The first empty segment.
        segment: usize,
    },
    /// An argument of the right type but the wrong kind (e.g. pageable memory where mapped
    /// page-locked memory is needed).
    #[error("{what}: {requirement}")]
    #[non_exhaustive]
    Unsupported {
        /// Which argument.
        what: &'static str,
        /// What is needed instead.
        requirement: &'static str,
    },
    /// NCCL (`libnccl`) could not be loaded: the collectives of
    /// [`multi_gpu`](crate::multi_gpu) need it, nothing else does.
    #[error(
        "NCCL could not be loaded (the dynamic loader found none of {}); put the directory holding \
         libnccl.so on LD_LIBRARY_PATH (NCCL installs libnccl.so.2, e.g. PyTorch's wheel at \
         <site-packages>/nvidia/nccl/lib/libnccl.so.2: a symlink named libnccl.so to it in a directory \
         on LD_LIBRARY_PATH is enough, and the bundle's run.sh makes one)",
        looked_for.join(", ")
    )]
    #[non_exhaustive]
    NcclNotFound {
        /// The file names tried, in order (cudarc's candidates for `nccl`).
        looked_for: Vec<String>,
    },
    /// An NCCL call failed.
    #[error("{during}: NCCL error {code} ({message})")]
    #[non_exhaustive]
    Nccl {
        /// What was being done.
        during: String,
        /// The `ncclResult_t` returned.
        code: u32,
        /// NCCL's text for it (`ncclGetErrorString`).
        message: String,
    },
    /// Buffers that must all have one length (one per GPU of an all-reduce) do not.
    #[error("{what} must all have the same length, got {lengths:?}")]
    #[non_exhaustive]
    UnequalLengths {
        /// Which buffers.
        what: &'static str,
        /// Their lengths, in order.
        lengths: Vec<usize>,
    },
    /// A device list a group of GPUs cannot be made of (empty, or a device twice).
    #[error("devices {devices:?}: {requirement}")]
    #[non_exhaustive]
    InvalidDevices {
        /// The devices given.
        devices: Vec<usize>,
        /// What is needed instead.
        requirement: &'static str,
    },
    /// A process environment that lets NCCL use what the lab must not: `NCCL_NVLS_ENABLE`
    /// unset when the first communicator would be made (see
    /// [`multi_gpu::keep_nvls_off`](crate::multi_gpu::keep_nvls_off), the step the caller
    /// takes before threads start).
    #[error(
        "{variable} is not set, so NCCL would be free to use NVLink SHARP; set it to {required} \
         before the first communicator: call `unsafe {{ cpu::multi_gpu::keep_nvls_off() }}` at \
         the top of main, before any thread starts, or export {variable}={required}"
    )]
    #[non_exhaustive]
    NcclEnvironment {
        /// The environment variable.
        variable: &'static str,
        /// The value the lab runs with.
        required: &'static str,
    },
    /// A process environment that does not describe a rank of a multi-process job (torchrun's
    /// variables, read by
    /// [`multi_gpu::rendezvous::RankEnv`](crate::multi_gpu::rendezvous::RankEnv)).
    #[error("{variable}={}: {requirement}", value.as_deref().unwrap_or("(unset)"))]
    #[non_exhaustive]
    RankEnvironment {
        /// The environment variable.
        variable: &'static str,
        /// Its value, `None` if unset.
        value: Option<String>,
        /// What it must be.
        requirement: &'static str,
    },
    /// The rendezvous of a multi-process job failed (see
    /// [`multi_gpu::rendezvous`](crate::multi_gpu::rendezvous)).
    #[error("rank {rank} of {world_size}, rendezvous at {address}: {failure}")]
    #[non_exhaustive]
    Rendezvous {
        /// This process's rank.
        rank: usize,
        /// The job's number of ranks.
        world_size: usize,
        /// The rendezvous address (`MASTER_ADDR:MASTER_PORT`).
        address: String,
        /// What went wrong.
        failure: crate::multi_gpu::rendezvous::RendezvousFailure,
    },
    /// A wait of one rank of a multi-process job (a collective, the communicator's
    /// initialisation or split) did not finish within the communicator's timeout: another rank
    /// exited, never arrived, or called other collectives. The communicator was aborted
    /// (`ncclCommAbort`); see [`multi_gpu::rank`](crate::multi_gpu::rank).
    #[error(
        "rank {rank} of {world_size}: {during} did not finish within {timeout:?} (a rank may have \
         exited or called other collectives); the communicator was aborted"
    )]
    #[non_exhaustive]
    CollectiveTimeout {
        /// This process's rank.
        rank: usize,
        /// The job's number of ranks.
        world_size: usize,
        /// What was waited for.
        during: String,
        /// The communicator's timeout.
        timeout: std::time::Duration,
    },
    /// A call on a rank's communicator after it was aborted (by a timeout or an NCCL error).
    #[error(
        "rank {rank} of {world_size}: the communicator was aborted earlier ({cause}); make a new one"
    )]
    #[non_exhaustive]
    CommunicatorAborted {
        /// This process's rank.
        rank: usize,
        /// The job's number of ranks.
        world_size: usize,
        /// The error that aborted it.
        cause: String,
    },
    /// Ranks of a multi-process job passed different values where every rank must pass the same
    /// ([`RankCommunicator::agree`](crate::multi_gpu::rank::RankCommunicator::agree)).
    #[error(
        "rank {rank} of {world_size}: the ranks disagree on {what}: this rank has {value}, the \
         ranks' values range over {min}..={max}"
    )]
    #[non_exhaustive]
    RanksDisagree {
        /// This process's rank.
        rank: usize,
        /// The job's number of ranks.
        world_size: usize,
        /// What must agree.
        what: &'static str,
        /// This rank's value.
        value: u64,
        /// The smallest value of any rank.
        min: u64,
        /// The largest value of any rank.
        max: u64,
    },
    /// An error of the kit ([`gpu_host`]) that the library has no variant of its own for.
    #[error(transparent)]
    Host(gpu_host::Error),
    /// Data larger than a `__constant__` symbol.
    #[error("{symbol} holds {capacity} bytes, {requested} bytes were given")]
    #[non_exhaustive]
    ConstantTooLarge {
        /// The symbol.
        symbol: &'static str,
        /// Its size in bytes.
        capacity: usize,
        /// Bytes given.
        requested: usize,
    },
}

impl Error {
    /// [`Error::Driver`] for a driver call of one's own: `during` says what was being done
    /// (`Error::driver("reading the mask back", e)`); [`DriverContext`] does the same on a
    /// `Result`.
    pub fn driver(during: impl Into<String>, source: DriverError) -> Self {
        Error::Driver {
            during: during.into(),
            source,
        }
    }

    /// [`Error::OutOfRange`]: for code outside this crate that reports in the library's terms
    /// (a harness built on [`Result`]); the variants are `#[non_exhaustive]`, so only this
    /// crate can write them as struct expressions.
    pub fn out_of_range(what: &'static str, value: u64, min: u64, max: u64) -> Self {
        Error::OutOfRange {
            what,
            value,
            min,
            max,
        }
    }

    /// [`Error::Unsupported`], as [`Error::out_of_range`].
    pub fn unsupported(what: &'static str, requirement: &'static str) -> Self {
        Error::Unsupported { what, requirement }
    }
}

/// The kit's errors as the library's: each variant to the one of the same name.
impl From<gpu_host::Error> for Error {
    fn from(e: gpu_host::Error) -> Self {
        use gpu_host::Error as H;
        match e {
            H::NoDriver => Error::NoDriver,
            H::DeviceOutOfRange { device, count, .. } => Error::DeviceOutOfRange { device, count },
            H::NoCompatiblePtx {
                major,
                minor,
                built,
                ..
            } => Error::NoCompatiblePtx {
                major,
                minor,
                built,
            },
            H::StalePtx {
                krate, mismatch, ..
            } => Error::StalePtx { krate, mismatch },
            H::NoKernels { krate, .. } => Error::NoKernels { krate },
            H::NotInModule { kernel, krate, .. } => Error::NotInModule { kernel, krate },
            H::ForeignArgument {
                kernel, position, ..
            } => Error::ForeignArgument { kernel, position },
            H::ArchTooOld {
                kernel,
                min_sm,
                device_sm,
                ..
            } => Error::ArchTooOld {
                kernel,
                min_sm,
                device_sm,
            },
            H::WrongContext {
                what,
                expected,
                actual,
                expected_context,
                actual_context,
                ..
            } => Error::WrongContext {
                what,
                expected,
                actual,
                expected_context,
                actual_context,
            },
            H::OutOfMemory {
                requested,
                free,
                total,
                ..
            } => Error::OutOfMemory {
                requested,
                free,
                total,
            },
            H::SizeOverflow {
                what,
                count,
                element_bytes,
                ..
            } => Error::SizeOverflow {
                what,
                count,
                element_bytes,
            },
            H::Driver { during, source, .. } => Error::Driver { during, source },
            other => Error::Host(other),
        }
    }
}

/// A histogram level (a bound of [`Error::InvalidRange`]) as given: integer levels are `i64`,
/// float levels `f32` (widened to `f64` exactly).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Level {
    /// A level of an integer sample type.
    Integer(i64),
    /// A level of a float sample type.
    Float(f64),
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Level::Integer(v) => write!(f, "{v}"),
            Level::Float(v) => write!(f, "{v:?}"),
        }
    }
}

/// The text of [`Error::WrongContext`]: the devices when they differ, else the two contexts
/// of the one device.
fn wrong_context_message(
    what: &str,
    expected: usize,
    actual: usize,
    expected_context: usize,
    actual_context: usize,
) -> String {
    if expected != actual {
        format!(
            "{what} belongs to the context of device {actual}, but the launch is on device {expected}"
        )
    } else {
        format!(
            "{what} belongs to a different context on the same device {actual} (context \
             {actual_context:#x}), not to the launch's context {expected_context:#x}"
        )
    }
}

/// Attaches what was being done to a driver error: `result.during("vector_add launch")?`.
pub trait DriverContext<T> {
    /// Maps a [`DriverError`] to [`Error::Driver`] naming `what`.
    fn during(self, what: impl Into<String>) -> Result<T>;

    /// As [`DriverContext::during`], with the text built only on error (for hot paths).
    fn during_with(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> DriverContext<T> for std::result::Result<T, DriverError> {
    fn during(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|source| Error::Driver {
            during: what.into(),
            source,
        })
    }

    fn during_with(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Driver {
            during: what(),
            source,
        })
    }
}

/// `count` elements of `T` in bytes, checked before anything is asked of the driver.
///
/// # Errors
/// [`Error::SizeOverflow`] if the product overflows `usize` or exceeds `isize::MAX` (the
/// largest object Rust can address, host or device).
pub fn bytes_of<T>(what: &'static str, count: usize) -> Result<usize> {
    let element_bytes = std::mem::size_of::<T>();
    count
        .checked_mul(element_bytes)
        .filter(|&bytes| bytes <= isize::MAX as usize)
        .ok_or(Error::SizeOverflow {
            what,
            count,
            element_bytes,
        })
}

/// [`Error::LengthMismatch`] naming `what` unless `actual == expected`.
pub(crate) fn expect_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected != actual {
        return Err(Error::LengthMismatch {
            what,
            expected,
            actual,
        });
    }
    Ok(())
}

/// `rows * cols`.
///
/// # Errors
/// [`Error::ShapeOverflow`] if the product overflows `usize`.
pub fn elements(rows: usize, cols: usize) -> Result<usize> {
    rows.checked_mul(cols)
        .ok_or(Error::ShapeOverflow { rows, cols })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `what` naming rule of [`Error`]'s docs: a short lowercase noun (at most four words),
    /// no parentheses or sentence punctuation. Checked on every literal the crate's sources
    /// pass as a `what` (the field, and the helpers that take it first).
    #[test]
    fn every_what_follows_the_naming_rule() {
        fn walk(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, files);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        let mut files = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        let starts = [
            "what: \"",
            "expect_len(\"",
            "check_buffer(\"",
            "check_equal(\"",
            "check_count(\"",
            "out_of_range(\"",
            "unsupported(\"",
            "covering_launch(kernel.name(), \"",
        ];
        let mut seen = 0;
        let mut bad = Vec::new();
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            for start in starts {
                for (at, _) in text.match_indices(start) {
                    let rest = &text[at + start.len()..];
                    let what = &rest[..rest.find('"').unwrap()];
                    seen += 1;
                    let ok = what.starts_with(|c: char| c.is_ascii_lowercase())
                        && what.split(' ').count() <= 4
                        && what
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || " _-".contains(c));
                    if !ok {
                        bad.push(format!("{}: {what:?}", file.display()));
                    }
                }
            }
        }
        assert!(
            seen > 100,
            "only {seen} `what`s found: the patterns no longer match"
        );
        assert!(
            bad.is_empty(),
            "`what`s against the rule:\n{}",
            bad.join("\n")
        );
    }

    #[test]
    fn byte_counts_that_overflow_are_refused() {
        assert_eq!(bytes_of::<f32>("x", 1 << 20).unwrap(), 4 << 20);
        assert_eq!(
            bytes_of::<u8>("x", isize::MAX as usize).unwrap(),
            isize::MAX as usize
        );
        for (count, e) in [
            (1usize << 62, bytes_of::<f32>("x", 1 << 62)),
            (usize::MAX, bytes_of::<f64>("x", usize::MAX)),
            // Fits in usize, but no object may be larger than isize::MAX bytes.
            (1usize << 62, bytes_of::<[u8; 2]>("x", 1 << 62)),
        ] {
            let e = e.unwrap_err();
            assert!(
                matches!(e, Error::SizeOverflow { what: "x", count: c, .. } if c == count),
                "{e:?}"
            );
        }
    }

    #[test]
    fn wrong_context_names_devices_or_contexts_apart() {
        let other_device = Error::WrongContext {
            what: "x",
            expected: 0,
            actual: 1,
            expected_context: 0x10,
            actual_context: 0x20,
        };
        assert_eq!(
            other_device.to_string(),
            "x belongs to the context of device 1, but the launch is on device 0"
        );
        let same_device = Error::WrongContext {
            what: "x",
            expected: 0,
            actual: 0,
            expected_context: 0x10,
            actual_context: 0x20,
        }
        .to_string();
        assert!(same_device.contains("a different context on the same device 0"));
        assert!(same_device.contains("0x20") && same_device.contains("0x10"));
    }
}
