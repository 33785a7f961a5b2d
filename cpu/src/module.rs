//! [`Module`]: the PTX of a kernel crate of one's own, loaded on a [`Gpu`]'s context, with its
//! kernels' typed handles checked against it.
//!
//! The lab's own kernels live in the module every [`Gpu`] loads for itself. A crate of one's
//! own builds its kernels with `ptx_builder::Builder`, embeds the PTX, and loads it here:
//!
//! ```no_run
//! # fn main() -> cpu::Result<()> {
//! use cpu::{Gpu, Module};
//! # let ptx: &str = "";
//! let gpu = Gpu::new(0)?;
//! // Every handle the crate `gpu` declares is checked against its `.entry` before the load.
//! let module = Module::from_ptx(&gpu, "gpu", ptx)?;
//! let x = gpu.upload(&[1.0f32; 1000])?;
//! let mut y = gpu.upload(&[2.0f32; 1000])?;
//! let cfg = cpu::cudarc::driver::LaunchConfig::for_num_elems(1000);
//! // SAFETY: `y` holds as many floats as `x`, and the two do not overlap.
//! unsafe { module.launch(gpu::saxpy::kernels::saxpy, cfg, (2.0f32, &x, &mut y))? };
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaFunction, CudaModule, LaunchConfig};
use cudarc::nvrtc::Ptx;

use crate::Gpu;
use crate::context::cached_function;
use crate::error::{DriverContext, Error, Result};
use crate::kernel::{KERNELS, Kernel, KernelArgs, KernelInfo};

/// A kernel crate's PTX loaded on one context; launches go to the stream of the [`Gpu`] it was
/// loaded with.
pub struct Module {
    gpu: Gpu,
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
    /// `Built::lib_name` gives it), on `gpu`'s context, after [`Module::check`].
    ///
    /// # Errors
    /// As [`Module::check`]; [`Error::Driver`] if the driver refuses the PTX (an architecture
    /// newer than the device).
    pub fn from_ptx(gpu: &Gpu, krate: &str, ptx: &str) -> Result<Self> {
        Self::check(krate, ptx)?;
        let module = gpu
            .context()
            .load_module(Ptx::from_src(ptx))
            .during_with(|| format!("loading the PTX of {krate}"))?;
        Ok(Self {
            gpu: gpu.clone(),
            krate: krate.to_string(),
            entries: gpu_std::host::entry_names(ptx)
                .into_iter()
                .map(str::to_string)
                .collect(),
            module,
            functions: Mutex::new(HashMap::new()),
        })
    }

    /// The crate whose kernels it holds.
    pub fn crate_name(&self) -> &str {
        &self.krate
    }

    /// The `.entry` names of its PTX.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Queues `kernel` on the stream of the [`Gpu`] the module was loaded with, as
    /// [`Gpu::launch`] does (the same argument forms, checked at compile time).
    ///
    /// # Safety
    /// As [`Gpu::launch`]: the kernel's own contract (its `# Safety` section) holds for these
    /// arguments and `cfg`.
    ///
    /// # Errors
    /// [`Error::NotInModule`] if `kernel` is not one of this module's crate or its PTX has no
    /// such entry; [`Error::Driver`] if the launch fails.
    pub unsafe fn launch<'s, P, A: KernelArgs<'s, P>>(
        &'s self,
        kernel: Kernel<P>,
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
        let f = cached_function(&self.module, &self.functions, name)?;
        // SAFETY: the caller's contract above; the entry's parameters are the handle's
        // (checked when the module was loaded).
        unsafe { args.queue(self.gpu.stream(), &f, cfg) }
            .during_with(|| format!("launching {name}"))
    }
}
