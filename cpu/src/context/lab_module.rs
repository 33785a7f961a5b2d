//! The lab's PTX module of a context: loaded once per `CUcontext` and shared by every
//! [`Gpu`](super::Gpu) on it, with its function cache, occupancy answers and `__constant__` timeline.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;

use crate::error::{DriverContext, Error, Result};
use crate::ptx;

/// [`Gpu::resident_blocks_per_sm`](super::Gpu::resident_blocks_per_sm) answers of one kernel: `((threads per block, dynamic shared
/// bytes), blocks per SM)`.
pub(super) type Occupancy = Vec<((u32, usize), u32)>;

/// The lab's PTX loaded on one context, with the state of its `__constant__` memory.
#[derive(Debug)]
pub(super) struct Module {
    pub(super) module: Arc<CudaModule>,
    /// Kernels looked up so far, by entry name: each launch reuses its `CUfunction`.
    pub(super) functions: Mutex<HashMap<String, CudaFunction>>,
    /// [`Gpu::resident_blocks_per_sm`](super::Gpu::resident_blocks_per_sm) answers so far, by kernel: the occupancy calculator
    /// runs once per context and launch shape.
    pub(super) occupancy: Mutex<HashMap<String, Occupancy>>,
    pub(super) constants: Mutex<ConstantTimeline>,
}

/// Who used the module's `__constant__` memory last, and what each symbol holds.
#[derive(Debug, Default)]
pub(super) struct ConstantTimeline {
    /// The stream of the last launches that used constant memory (held, so it outlives them).
    pub(super) last_stream: Option<Arc<CudaStream>>,
    /// `(symbol, tag)`: the tagged data each symbol holds (see [`ConstantMemory::write_tagged`](super::ConstantMemory::write_tagged)).
    pub(super) written: Vec<(&'static str, u64)>,
}

/// The embedded PTX for `ctx`'s device: `(sm, text)` for the highest architecture not above
/// its compute capability.
pub(super) fn ptx_for(ctx: &CudaContext) -> Result<(u32, &'static str)> {
    let (major, minor) = ctx
        .compute_capability()
        .during("reading the compute capability")?;
    ptx::for_compute_capability(major, minor).ok_or_else(|| Error::NoCompatiblePtx {
        major,
        minor,
        built: ptx::built_archs(),
    })
}

/// A tag no other caller has: the id of an immutable value written to constant memory with
/// [`ConstantMemory::write_tagged`](super::ConstantMemory::write_tagged).
pub fn new_constant_tag() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// `name`'s function in `module`, looked up once and then kept in `functions` (the cache of
/// the lab's module, and of each [`Module`](crate::Module)).
pub(super) fn cached_function(
    module: &Arc<CudaModule>,
    functions: &Mutex<HashMap<String, CudaFunction>>,
    name: &str,
) -> Result<CudaFunction> {
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

/// Modules loaded so far, by context handle. Weak: a module (and the context it keeps alive)
/// goes when its last [`Gpu`] does.
static MODULES: Mutex<Vec<(usize, Weak<Module>)>> = Mutex::new(Vec::new());

/// The module of `ctx`, loading the PTX for its compute capability on first use.
pub(super) fn module_for(ctx: &Arc<CudaContext>) -> Result<Arc<Module>> {
    let key = ctx.cu_ctx() as usize;
    let mut table = MODULES.lock().unwrap_or_else(|p| p.into_inner());
    table.retain(|(_, m)| m.strong_count() > 0);
    if let Some(module) = table
        .iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, m)| m.upgrade())
    {
        return Ok(module);
    }
    let (ptx_arch, text) = ptx_for(ctx)?;
    let module = Arc::new(Module {
        module: ctx
            .load_module(Ptx::from_src(text))
            .during(format!("loading the sm_{ptx_arch} PTX"))?,
        functions: Mutex::new(HashMap::new()),
        occupancy: Mutex::new(HashMap::new()),
        constants: Mutex::new(ConstantTimeline::default()),
    });
    table.push((key, Arc::downgrade(&module)));
    Ok(module)
}
