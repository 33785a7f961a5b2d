//! The kit's error type: each variant carries the values that caused it.

use cudarc::driver::DriverError;

/// Result with the kit's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong between the host and a kernel crate's module.
///
/// The enum and every variant with fields are `#[non_exhaustive]`: match with a `_` arm and `..`.
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
    /// Every PTX of a table targets an architecture newer than the device.
    #[error(
        "the device has compute capability {major}.{minor}, but the PTX was built for {built} only; \
         build it for sm_{major}{minor}"
    )]
    #[non_exhaustive]
    NoCompatiblePtx {
        /// Device compute capability, major.
        major: i32,
        /// Device compute capability, minor.
        minor: i32,
        /// The architectures built.
        built: String,
    },
    /// A kernel crate's PTX disagrees with its handles ([`Module::check`](crate::Module::check)):
    /// a stale PTX, which would be launched with the wrong arguments.
    #[error("the PTX of {krate} does not match its kernels: {mismatch}")]
    #[non_exhaustive]
    StalePtx {
        /// The kernel crate.
        krate: String,
        /// The first kernel and parameter that disagree.
        mismatch: gpu_std::host::EntryMismatch,
    },
    /// No kernel of the crate is linked into this program, so its PTX cannot be checked.
    #[error(
        "this program links no #[kernel] of the crate `{krate}`: name the crate's library (my-kernels is my_kernels) and use one of its kernels"
    )]
    #[non_exhaustive]
    NoKernels {
        /// The crate asked for.
        krate: String,
    },
    /// A handle launched against a module that does not hold its kernel.
    #[error("kernel {kernel} is not in the module of {krate}")]
    #[non_exhaustive]
    NotInModule {
        /// The kernel.
        kernel: &'static str,
        /// The module's crate.
        krate: String,
    },
    /// A kernel declared `#[kernel(min_sm = SM)]` launched on a device of a lower compute
    /// capability (refused before anything is queued: its entry there is a trap).
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
    /// A safe launch was given device memory of another context than the launch's.
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
    /// A buffer of another context than the handle's.
    #[error(
        "{what} belongs to context {actual_context:#x} (device {actual}), not to the handle's \
         context {expected_context:#x} (device {expected})"
    )]
    #[non_exhaustive]
    WrongContext {
        /// Which argument.
        what: &'static str,
        /// The handle's device.
        expected: usize,
        /// The buffer's device.
        actual: usize,
        /// The handle's context (its `CUcontext` handle, as an address).
        expected_context: usize,
        /// The buffer's context.
        actual_context: usize,
    },
    /// A device allocation larger than the free device memory.
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
    /// An element count whose size in bytes does not fit in `isize`.
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
    /// A kernel or global that no module of the kernel crate's table holds.
    #[error("no module of the kernels of {krate} holds {name}")]
    #[non_exhaustive]
    NotInTable {
        /// The kernel, global or module asked for.
        name: String,
        /// The kernel crate.
        krate: String,
    },
    /// A module's image could not be read: a file beside the program missing or not the one
    /// the build recorded, or bytes that do not decompress.
    #[error("the {image} image of the kernel module {module} cannot be used: {reason}")]
    #[non_exhaustive]
    KernelImage {
        /// The module, as `crate::module`.
        module: String,
        /// The image, e.g. `sm_90 SASS`.
        image: String,
        /// What is wrong.
        reason: String,
    },
    /// The driver refused to load a module's image (a JIT failure, or no memory left).
    #[error("loading the kernel module {module} from its {image} image failed: {source}")]
    #[non_exhaustive]
    ModuleLoad {
        /// The module, as `crate::module`.
        module: String,
        /// The image, e.g. `sm_90 SASS`.
        image: String,
        /// The driver's error.
        source: DriverError,
    },
    /// Data larger than the module global it is copied to, or a read of more than it holds.
    #[error("the module global {symbol} holds {capacity} bytes; {requested} bytes were asked for")]
    #[non_exhaustive]
    GlobalTooSmall {
        /// The global's symbol.
        symbol: String,
        /// Its size in bytes (in the loaded module).
        capacity: usize,
        /// Bytes to write or read.
        requested: usize,
    },
    /// A `__constant__` array whose size in the loaded module is not the size its declaration
    /// gives (`gpu_std::constant_memory!`): a PTX built from other sources than the handle.
    #[error(
        "the __constant__ array {symbol} is declared as {declared} bytes but the loaded module holds {found}: the PTX is stale"
    )]
    #[non_exhaustive]
    ConstantSize {
        /// The array's symbol.
        symbol: &'static str,
        /// Its size by the declaration the host was compiled with.
        declared: usize,
        /// Its size in the module.
        found: usize,
    },
    /// A CUDA driver call failed.
    #[error("{during}: {source}")]
    #[non_exhaustive]
    Driver {
        /// What was being done.
        during: String,
        /// The driver's error.
        source: DriverError,
    },
}

impl Error {
    /// [`Error::Driver`] for a driver call of one's own (a launcher's cudarc call the kit does
    /// not wrap): `during` says what was being done, in words a user reads after "while", e.g.
    /// `Error::driver("copying the mask to constant memory", e)`. [`DriverContext`] does the
    /// same on a `Result`.
    pub fn driver(during: impl Into<String>, source: DriverError) -> Self {
        Error::Driver {
            during: during.into(),
            source,
        }
    }
}

/// Attaches what was being done to a driver error: `result.during("loading the PTX")?`, for
/// the kit's calls and a user's own cudarc calls alike.
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

/// `count` elements of `T` in bytes.
///
/// # Errors
/// [`Error::SizeOverflow`] if the product overflows `usize` or exceeds `isize::MAX`.
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

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::driver::sys::CUresult;

    #[test]
    fn a_users_driver_failure_is_the_kits_driver_error() {
        // (Not displayed: cudarc's `DriverError` asks the driver for its text, and this
        // machine may have none.)
        let source = DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        let e = Error::driver("copying my table", source);
        assert!(
            matches!(&e, Error::Driver { during, source: s } if during == "copying my table" && *s == source)
        );
        let r: std::result::Result<(), DriverError> = Err(source);
        let e = r.during("copying it again").unwrap_err();
        assert!(matches!(&e, Error::Driver { during, .. } if during == "copying it again"));
    }
}
