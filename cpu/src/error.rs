//! The library's error type: every failure a caller can meet, each with the values that caused it.

use cudarc::driver::DriverError;

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong between the host and a kernel.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `libcuda` could not be loaded: no NVIDIA driver on this machine.
    #[error(
        "no NVIDIA driver found (libcuda could not be loaded); running kernels needs an NVIDIA GPU with its driver"
    )]
    NoDriver,
    /// The driver reports no device with this index.
    #[error("there is no CUDA device {device}: the driver reports {count} device(s)")]
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
    NoCompatiblePtx {
        /// Device compute capability, major.
        major: i32,
        /// Device compute capability, minor.
        minor: i32,
        /// The architectures embedded.
        built: String,
    },
    /// A device allocation larger than the free device memory. The context stays usable.
    #[error("out of device memory: {requested} bytes requested, {free} of {total} bytes free")]
    OutOfMemory {
        /// Bytes asked for.
        requested: usize,
        /// Free device memory when the allocation failed.
        free: usize,
        /// Total device memory.
        total: usize,
    },
    /// A CUDA driver call failed.
    #[error("{during}: {source}")]
    Driver {
        /// What was being done (the kernel's name for launches and their completion).
        during: String,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// Two inputs that must have the same length do not.
    #[error("{what}: expected {expected} elements, got {actual}")]
    LengthMismatch {
        /// Which argument.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// A launch configuration the kernel cannot run with.
    #[error("invalid launch of {kernel}: {reason}")]
    InvalidLaunch {
        /// The kernel.
        kernel: &'static str,
        /// What is wrong, with the offending values.
        reason: String,
    },
    /// An input the operation does not accept.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Data larger than a `__constant__` symbol.
    #[error("{symbol} holds {capacity} bytes, {requested} bytes were given")]
    ConstantTooLarge {
        /// The symbol.
        symbol: &'static str,
        /// Its size in bytes.
        capacity: usize,
        /// Bytes given.
        requested: usize,
    },
}

/// Attaches what was being done to a driver error: `result.during("vector_add launch")?`.
pub trait DriverContext<T> {
    /// Maps a [`DriverError`] to [`Error::Driver`] naming `what`.
    fn during(self, what: impl Into<String>) -> Result<T>;
}

impl<T> DriverContext<T> for std::result::Result<T, DriverError> {
    fn during(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|source| Error::Driver {
            during: what.into(),
            source,
        })
    }
}
