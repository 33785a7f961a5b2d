//! [`Library`]: a kernel crate's [`KernelTable`] on one context, each of its PTX modules loaded
//! the first time one of its kernels (or globals) is used.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;

use crate::error::{DriverContext, Error, Result};
use crate::kernel::{KERNELS, KernelInfo};
use crate::table::{ImageFormat, KernelTable, ModuleTable};

/// A kernel crate's kernels on one context: its [`KernelTable`] checked against every handle of
/// the crate linked into the program, and its modules loaded on first use, once per library,
/// from the best image for the device ([`ModuleTable::pick`]: SASS where the build made it for
/// the device's architecture, so no JIT; else PTX). Thread-safe: two threads that first use one
/// module load it once, and the first use of one module does not wait for another's.
///
/// Set `GPU_HOST_JIT=1` to load PTX even where SASS is embedded (to measure the JIT, or to
/// run PTX the driver compiles itself).
pub struct Library {
    context: Arc<CudaContext>,
    table: &'static KernelTable,
    capability: (i32, i32),
    sass: bool,
    slots: Vec<Mutex<Option<Loaded>>>,
    functions: Mutex<HashMap<String, CudaFunction>>,
}

/// A module once loaded, and which image it was loaded from.
#[derive(Clone)]
struct Loaded {
    module: Arc<CudaModule>,
    image: String,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library")
            .field("crate", &self.table.krate)
            .field("modules", &self.table.modules.len())
            .field("loaded", &self.loaded_modules())
            .finish_non_exhaustive()
    }
}

impl Library {
    /// Checks every handle of `table.krate` linked into this program against the table's
    /// signatures (each has its `.entry`, with the same parameter sizes) and reads the device's
    /// compute capability; loads nothing.
    ///
    /// # Errors
    /// [`Error::StalePtx`] naming the first kernel (and parameter) that disagrees;
    /// [`Error::NoKernels`] if the program links no kernel of the crate; [`Error::Driver`] if
    /// the compute capability cannot be read.
    pub fn new(context: &Arc<CudaContext>, table: &'static KernelTable) -> Result<Self> {
        Self::check(table)?;
        let capability = context
            .compute_capability()
            .during("reading the compute capability")?;
        let sass = std::env::var_os("GPU_HOST_JIT").is_none_or(|v| v.is_empty() || v == "0");
        Ok(Self {
            context: context.clone(),
            table,
            capability,
            sass,
            slots: table.modules.iter().map(|_| Mutex::new(None)).collect(),
            functions: Mutex::new(HashMap::new()),
        })
    }

    /// [`Library::new`]'s check alone, on any machine: every handle of `table.krate` has its
    /// entry in the table with the same parameter sizes.
    ///
    /// # Errors
    /// As [`Library::new`], without the driver.
    pub fn check(table: &KernelTable) -> Result<()> {
        let kernels: Vec<&'static KernelInfo> = KERNELS
            .iter()
            .filter(|k| k.crate_name() == table.krate)
            .collect();
        if kernels.is_empty() {
            return Err(Error::NoKernels {
                krate: table.krate.to_string(),
            });
        }
        let entries: Vec<(&str, &[usize])> = table.entries().map(|e| (e.name, e.params)).collect();
        gpu_std::host::check_entry_sizes(&entries, kernels).map_err(|mismatch| Error::StalePtx {
            krate: table.krate.to_string(),
            mismatch,
        })
    }

    /// The table it loads from.
    pub fn table(&self) -> &'static KernelTable {
        self.table
    }

    /// The context it loads on.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.context
    }

    /// The loaded module named `module` (a [`ModuleTable::name`]), loaded now if it is not yet.
    ///
    /// # Errors
    /// [`Error::NotInTable`] if the table has no such module; [`Error::NoCompatiblePtx`] if
    /// every image is newer than the device; [`Error::KernelImage`] if its image cannot be read;
    /// [`Error::ModuleLoad`] naming the module and image if the driver refuses it. A failed
    /// load is tried again at the next use.
    pub fn module(&self, module: &str) -> Result<Arc<CudaModule>> {
        let index = self
            .table
            .modules
            .iter()
            .position(|m| m.name == module)
            .ok_or_else(|| self.not_in_table(module))?;
        self.load(index)
    }

    /// The loaded module that holds the kernel or host-visible global `name`, loaded now if it
    /// is not yet.
    ///
    /// # Errors
    /// As [`Library::module`]; [`Error::NotInTable`] if no module holds `name`.
    pub fn module_holding(&self, name: &str) -> Result<Arc<CudaModule>> {
        let module = self
            .table
            .module_of(name)
            .ok_or_else(|| self.not_in_table(name))?;
        self.module(module.name)
    }

    /// The kernel `name`'s function, its module loaded on first use; looked up once per
    /// library and then kept.
    ///
    /// # Errors
    /// As [`Library::module_holding`]; [`Error::Driver`] if the lookup fails.
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        if let Some(f) = self.lock_functions().get(name) {
            return Ok(f.clone());
        }
        let module = self.module_holding(name)?;
        let f = module
            .load_function(name)
            .during_with(|| format!("looking up kernel {name}"))?;
        self.lock_functions().insert(name.to_string(), f.clone());
        Ok(f)
    }

    /// The names of the modules loaded so far, with the image each was loaded from
    /// (`("sort", "sm_90 SASS")`), in the table's order.
    pub fn loaded_modules(&self) -> Vec<(&'static str, String)> {
        self.table
            .modules
            .iter()
            .zip(&self.slots)
            .filter_map(|(m, slot)| {
                let slot = slot.lock().unwrap_or_else(|p| p.into_inner());
                Some((m.name, slot.as_ref()?.image.clone()))
            })
            .collect()
    }

    /// The image a module would be (or was) loaded from on this device (its `Display` reads
    /// `sm_90 SASS`).
    ///
    /// # Errors
    /// [`Error::NotInTable`]; [`Error::NoCompatiblePtx`] if every image is newer than the device.
    pub fn image(&self, module: &str) -> Result<&'static crate::table::Image> {
        let table = self
            .table
            .module(module)
            .ok_or_else(|| self.not_in_table(module))?;
        self.pick(table)
    }

    fn pick(&self, table: &'static ModuleTable) -> Result<&'static crate::table::Image> {
        let (major, minor) = self.capability;
        table
            .pick(major, minor, self.sass)
            .ok_or_else(|| Error::NoCompatiblePtx {
                major,
                minor,
                built: table.ptx_archs(),
            })
    }

    fn load(&self, index: usize) -> Result<Arc<CudaModule>> {
        let mut slot = self.slots[index].lock().unwrap_or_else(|p| p.into_inner());
        if let Some(loaded) = slot.as_ref() {
            return Ok(loaded.module.clone());
        }
        let table = &self.table.modules[index];
        let image = self.pick(table)?;
        let what = format!("{}::{}", self.table.krate, table.name);
        let bytes = image.decode(&what)?;
        let ptx = match image.format {
            ImageFormat::Cubin => Ptx::from_binary(bytes.into_owned()),
            ImageFormat::Ptx => {
                let text =
                    String::from_utf8(bytes.into_owned()).map_err(|_| Error::KernelImage {
                        module: what.clone(),
                        image: image.to_string(),
                        reason: "the PTX is not UTF-8 text".into(),
                    })?;
                if text.contains('\0') {
                    return Err(Error::KernelImage {
                        module: what,
                        image: image.to_string(),
                        reason: "the PTX holds a NUL byte".into(),
                    });
                }
                Ptx::from_src(text)
            }
        };
        let module = self
            .context
            .load_module(ptx)
            .map_err(|source| Error::ModuleLoad {
                module: what,
                image: image.to_string(),
                source,
            })?;
        *slot = Some(Loaded {
            module: module.clone(),
            image: image.to_string(),
        });
        Ok(module)
    }

    fn lock_functions(&self) -> std::sync::MutexGuard<'_, HashMap<String, CudaFunction>> {
        self.functions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn not_in_table(&self, name: &str) -> Error {
        Error::NotInTable {
            name: name.to_string(),
            krate: self.table.krate.to_string(),
        }
    }
}
