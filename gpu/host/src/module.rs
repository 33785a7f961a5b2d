//! [`Module`]: the PTX of a kernel crate loaded on a [`Device`]'s context, with every one of its
//! kernels' typed handles checked against it.
//!
//! A crate of one's own builds its kernels with `ptx_builder::Builder`, embeds the PTX table
//! (`Built::write_table`), and loads it here:
//!
//! ```no_run
//! # fn main() -> gpu_host::Result<()> {
//! use gpu_host::{Device, LaunchConfig, Module};
//! # let table: &[(u32, &'static str)] = &[];
//! let device = Device::new(0)?;
//! // Every handle the crate `gpu` declares is checked against its `.entry` before the load.
//! let module = Module::from_table(&device, "gpu", table)?;
//! let x = device.upload(&[1.0f32; 1000])?;
//! let mut y = device.upload(&[2.0f32; 1000])?;
//! let cfg = LaunchConfig::for_num_elems(1000);
//! // `saxpy` is a safe kernel (its threads write only their own elements of `y`).
//! module.launch(gpu::saxpy::kernels::saxpy, cfg, (2.0f32, &x, &mut y))?;
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaFunction, CudaModule, LaunchConfig};
use cudarc::nvrtc::Ptx;

use crate::Device;
use crate::error::{DriverContext, Error, Result};
use crate::kernel::{KERNELS, Kernel, KernelArgs, KernelInfo, Safe};

/// A kernel crate's PTX loaded on one context; launches go to the stream of the [`Device`] it
/// was loaded with.
pub struct Module {
    device: Device,
    krate: String,
    entries: Vec<String>,
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<String, CudaFunction>>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("crate", &self.krate)
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl Module {
    /// Checks `ptx` against every kernel handle the crate `krate` declares (every `#[kernel]`
    /// of that crate linked into this program, [`KERNELS`]): each has its `.entry`, with the
    /// same parameters (count, order, byte sizes). No GPU needed.
    ///
    /// # Errors
    /// [`Error::StalePtx`] naming the first kernel (and parameter) that disagrees;
    /// [`Error::NoKernels`] if the program links no kernel of `krate`.
    pub fn check(krate: &str, ptx: &str) -> Result<()> {
        let kernels: Vec<&'static KernelInfo> =
            KERNELS.iter().filter(|k| k.crate_name() == krate).collect();
        if kernels.is_empty() {
            return Err(Error::NoKernels {
                krate: krate.to_string(),
            });
        }
        gpu_std::host::check_entries(ptx, kernels).map_err(|mismatch| Error::StalePtx {
            krate: krate.to_string(),
            mismatch,
        })
    }

    /// Loads `ptx`, the PTX of the kernel crate `krate` (its library name, as `ptx_builder`'s
    /// `Built::lib_name` gives it), on `device`'s context, after [`Module::check`].
    ///
    /// # Errors
    /// As [`Module::check`]; [`Error::Driver`] if the driver refuses the PTX (an architecture
    /// newer than the device).
    pub fn from_ptx(device: &Device, krate: &str, ptx: &str) -> Result<Self> {
        Self::check(krate, ptx)?;
        let module = device
            .context()
            .load_module(Ptx::from_src(ptx))
            .during_with(|| format!("loading the PTX of {krate}"))?;
        Ok(Self {
            device: device.clone(),
            krate: krate.to_string(),
            entries: gpu_std::host::entry_names(ptx)
                .into_iter()
                .map(str::to_string)
                .collect(),
            module,
            functions: Mutex::new(HashMap::new()),
        })
    }

    /// Loads the PTX of `krate` from `table`, one `(sm, text)` row per architecture as
    /// `ptx_builder`'s `Built::write_table` embeds it
    /// (`include!(concat!(env!("OUT_DIR"), "/kernels_ptx.rs"))`): the row of the highest
    /// architecture not above `device`'s compute capability, through [`Module::from_ptx`].
    ///
    /// # Errors
    /// [`Error::NoCompatiblePtx`] if every row is newer than the device; otherwise as
    /// [`Module::from_ptx`].
    pub fn from_table(device: &Device, krate: &str, table: &[(u32, &'static str)]) -> Result<Self> {
        let (major, minor) = device.compute_capability()?;
        let (_, ptx) =
            crate::pick_ptx(table, major, minor).ok_or_else(|| Error::NoCompatiblePtx {
                major,
                minor,
                built: table
                    .iter()
                    .map(|(a, _)| format!("sm_{a}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        Self::from_ptx(device, krate, ptx)
    }

    /// The crate whose kernels it holds.
    pub fn crate_name(&self) -> &str {
        &self.krate
    }

    /// The `.entry` names of its PTX.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// The device (and stream) it was loaded with.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The loaded module itself (its globals: `get_global`), for what the typed handles do not
    /// cover.
    pub fn cuda_module(&self) -> &Arc<CudaModule> {
        &self.module
    }

    /// The function of the entry `name`, looked up once and then kept.
    ///
    /// # Errors
    /// [`Error::Driver`] if the PTX has no such entry.
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        let mut functions = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = functions.get(name) {
            return Ok(f.clone());
        }
        let f = self
            .module
            .load_function(name)
            .during_with(|| format!("looking up kernel {name}"))?;
        functions.insert(name.to_string(), f.clone());
        Ok(f)
    }

    /// Queues the safe kernel `kernel` (a `#[kernel] fn` whose parameters are scalars, `&[T]`
    /// and `DisjointSlice<T>`) on the stream of the [`Device`] the module was loaded with, with
    /// launch configuration `cfg` and the arguments `args`, a tuple matching its parameters one
    /// by one ([`crate::kernel`]: `&buffer` for `&[T]`, `&mut buffer` for `DisjointSlice<T>`,
    /// values for scalars). No `unsafe`: the types prove what an unsafe kernel's contract would
    /// ask, and every buffer is checked to be in this context.
    ///
    /// # Errors
    /// [`Error::NotInModule`] if `kernel` is not one of this module's crate or its PTX has no
    /// such entry; [`Error::ForeignArgument`] if a buffer belongs to another context;
    /// [`Error::Driver`] if the launch fails.
    pub fn launch<'s, P, A: KernelArgs<'s, P>>(
        &'s self,
        kernel: Kernel<P, Safe>,
        cfg: LaunchConfig,
        args: A,
    ) -> Result<()> {
        crate::kernel::check_arguments(kernel, self.device.context().cu_ctx(), &args)?;
        // SAFETY: a `Safe` kernel is sound for any arguments of its parameter types, and they
        // are device memory of this module's context.
        unsafe { self.launch_unchecked(kernel, cfg, args) }
    }

    /// Queues `kernel`, safe or not, on the stream of the [`Device`] the module was loaded with
    /// (the same argument forms as [`Module::launch`], checked at compile time).
    ///
    /// # Safety
    /// The kernel's own contract (its `# Safety` section) holds for these arguments and `cfg`:
    /// every pointer is valid for what the kernel reads or writes at these sizes, outputs do not
    /// overlap inputs where it says so, `cfg` has the shape it requires, and every buffer
    /// belongs to this module's context.
    ///
    /// # Errors
    /// [`Error::NotInModule`] if `kernel` is not one of this module's crate or its PTX has no
    /// such entry; [`Error::Driver`] if the launch fails.
    pub unsafe fn launch_unchecked<'s, P, S, A: KernelArgs<'s, P>>(
        &'s self,
        kernel: Kernel<P, S>,
        cfg: LaunchConfig,
        args: A,
    ) -> Result<()> {
        let name = kernel.name();
        if kernel.info().crate_name() != self.krate || !self.entries.iter().any(|e| e == name) {
            return Err(Error::NotInModule {
                kernel: name,
                krate: self.krate.clone(),
            });
        }
        let f = self.function(name)?;
        // SAFETY: the caller's contract above; `f` is the handle's entry, whose parameters are
        // the handle's (checked when the module was loaded).
        unsafe { crate::kernel::launch_function(self.device.stream(), &f, kernel, cfg, args) }
    }
}
