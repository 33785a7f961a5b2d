//! [`Module`]: a kernel crate's kernels on a [`Device`]'s context and stream, with every one of
//! its kernels' typed handles checked against them.
//!
//! A crate of one's own builds its kernels with `ptx_builder::Builder`, embeds the table it
//! writes (`Built::write_table`), and loads it here:
//!
//! ```no_run
//! # fn main() -> gpu_host::Result<()> {
//! use gpu_host::{Device, KernelTable, LaunchConfig, Module};
//! # static KERNELS: KernelTable = KernelTable { krate: "gpu", modules: &[] };
//! // static KERNELS: KernelTable = gpu_host::include_kernels!("kernels.rs");
//! let device = Device::new(0)?;
//! // Every handle the crate `gpu` declares is checked against the table; nothing is loaded yet.
//! let module = Module::from_table(&device, &KERNELS)?;
//! let x = device.upload(&[1.0f32; 1000])?;
//! let mut y = device.upload(&[2.0f32; 1000])?;
//! let cfg = LaunchConfig::for_num_elems(1000);
//! // `saxpy` is a safe kernel (its threads write only their own elements of `y`); its module
//! // is loaded now, on first use.
//! module.launch(gpu::saxpy::kernels::saxpy, cfg, (2.0f32, &x, &mut y))?;
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaFunction, CudaModule, LaunchConfig};
use cudarc::nvrtc::Ptx;

use crate::error::{DriverContext, Error, Result};
use crate::kernel::{Arity, KERNELS, Kernel, KernelArgs, KernelInfo, Safe};
use crate::{Device, KernelTable, Library};

/// A kernel crate's kernels on one context; launches go to the stream of the [`Device`] it
/// was made with.
pub struct Module {
    device: Device,
    inner: Inner,
}

enum Inner {
    /// A kernel table, its modules loaded on first use.
    Table(Arc<Library>),
    /// One PTX text, loaded at once.
    Ptx {
        krate: String,
        entries: Vec<String>,
        module: Arc<CudaModule>,
        functions: Mutex<HashMap<String, CudaFunction>>,
    },
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("crate", &self.crate_name())
            .field("entries", &self.entries().len())
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

    /// Loads `ptx`, one PTX text of the kernel crate `krate` (its library name), on `device`'s
    /// context at once, after [`Module::check`].
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
            inner: Inner::Ptx {
                krate: krate.to_string(),
                entries: gpu_std::host::entry_names(ptx)
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
                module,
                functions: Mutex::new(HashMap::new()),
            },
        })
    }

    /// The kernels of `table` (what `ptx_builder`'s `Built::write_table` embeds:
    /// `static KERNELS: gpu_host::KernelTable = gpu_host::include_kernels!("kernels.rs");`)
    /// on `device`'s context, every handle of its crate checked against it first
    /// ([`Library::new`]); each PTX module is loaded the first time one of its kernels is
    /// launched, from SASS where the build made it for the device, else from PTX.
    ///
    /// # Errors
    /// As [`Library::new`].
    pub fn from_table(device: &Device, table: &'static KernelTable) -> Result<Self> {
        let library = Library::new(device.context(), table)?;
        Ok(Self::from_library(device, Arc::new(library)))
    }

    /// A module on `device`'s stream over a [`Library`] already made (shared by several
    /// streams of one context, each module loaded once for all of them).
    ///
    /// `library` must be of `device`'s context; launches are refused otherwise
    /// ([`Error::ForeignArgument`] does not apply: the kernels would not be found).
    pub fn from_library(device: &Device, library: Arc<Library>) -> Self {
        Self {
            device: device.clone(),
            inner: Inner::Table(library),
        }
    }

    /// The crate whose kernels it holds.
    pub fn crate_name(&self) -> &str {
        match &self.inner {
            Inner::Table(library) => library.table().krate,
            Inner::Ptx { krate, .. } => krate,
        }
    }

    /// The `.entry` names of its kernels.
    pub fn entries(&self) -> Vec<&str> {
        match &self.inner {
            Inner::Table(library) => library.table().entries().map(|e| e.name).collect(),
            Inner::Ptx { entries, .. } => entries.iter().map(String::as_str).collect(),
        }
    }

    /// The device (and stream) it was loaded with.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Its [`Library`] (which modules are loaded, from which image), for a module made from a
    /// table.
    pub fn library(&self) -> Option<&Arc<Library>> {
        match &self.inner {
            Inner::Table(library) => Some(library),
            Inner::Ptx { .. } => None,
        }
    }

    /// The loaded module that holds the kernel or global `name` (for what the typed handles
    /// do not cover: `get_global`), loaded now if it is not yet.
    ///
    /// # Errors
    /// As [`Library::module_holding`]; [`Error::NotInTable`] if a module made from one PTX
    /// text has no entry `name` (its globals are all in the one module).
    pub fn cuda_module_holding(&self, name: &str) -> Result<Arc<CudaModule>> {
        match &self.inner {
            Inner::Table(library) => library.module_holding(name),
            Inner::Ptx { module, .. } => Ok(module.clone()),
        }
    }

    /// The function of the entry `name`, its module loaded on first use, looked up once and
    /// then kept.
    ///
    /// # Errors
    /// [`Error::NotInTable`] if no module holds it; as [`Library::function`].
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        match &self.inner {
            Inner::Table(library) => library.function(name),
            Inner::Ptx {
                module, functions, ..
            } => {
                let mut functions = functions.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(f) = functions.get(name) {
                    return Ok(f.clone());
                }
                let f = module
                    .load_function(name)
                    .during_with(|| format!("looking up kernel {name}"))?;
                functions.insert(name.to_string(), f.clone());
                Ok(f)
            }
        }
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
    pub fn launch<'s, P: Arity, A: KernelArgs<'s, P> + Arity<Count = P::Count>>(
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
    /// such entry; [`Error::ArchTooOld`] if it declares `min_sm` above the device's
    /// architecture (before the module is loaded); [`Error::Driver`] if the launch fails.
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
        let name = kernel.name();
        let holds = match &self.inner {
            Inner::Table(library) => library.table().module_of(name).is_some(),
            Inner::Ptx { entries, .. } => entries.iter().any(|e| e == name),
        };
        if kernel.info().crate_name() != self.crate_name() || !holds {
            return Err(Error::NotInModule {
                kernel: name,
                krate: self.crate_name().to_string(),
            });
        }
        // Before the module is loaded: a kernel the device is too old for is refused first.
        crate::kernel::check_arch(self.device.context(), kernel.info())?;
        let f = self.function(name)?;
        // SAFETY: the caller's contract above; `f` is the handle's entry, whose parameters are
        // the handle's (checked when the module was loaded).
        unsafe { crate::kernel::launch_function(self.device.stream(), &f, kernel, cfg, args) }
    }
}
