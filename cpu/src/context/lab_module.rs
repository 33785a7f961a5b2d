//! The lab's kernels on a context (one PTX module per pattern, each loaded on first use), shared by every
//! [`Gpu`](super::Gpu) on it, with its function cache, occupancy answers and `__constant__` timeline.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use cudarc::driver::{CudaContext, CudaFunction, CudaStream};
use gpu_host::Library;

use crate::error::Result;
use crate::ptx;

/// [`Gpu::resident_blocks_per_sm`](super::Gpu::resident_blocks_per_sm) answers of one kernel: `((threads per block, dynamic shared
/// bytes), blocks per SM)`.
pub(super) type Occupancy = Vec<((u32, usize), u32)>;

/// The lab's kernels on one context (the kit's [`Library`] over [`ptx::KERNELS`]: each PTX
/// module loaded on first use), with the state of their `__constant__` memory.
#[derive(Debug)]
pub(super) struct Module {
    pub(super) library: Library,
    /// The image this device loads every module from (each module has the same
    /// architectures): picked once, when the context's kernels are first made.
    pub(super) image: &'static gpu_host::Image,
    /// [`Gpu::resident_blocks_per_sm`](super::Gpu::resident_blocks_per_sm) answers so far, by kernel: the occupancy calculator
    /// runs once per context and launch shape.
    pub(super) occupancy: Mutex<HashMap<String, Occupancy>>,
    pub(super) constants: Mutex<ConstantTimeline>,
}

impl Module {
    /// The kernel `name`'s function, its module loaded on first use.
    pub(super) fn function(&self, name: &str) -> Result<CudaFunction> {
        Ok(self.library.function(name)?)
    }
}

/// Who used the modules' `__constant__` memory last, and what each symbol holds: one timeline
/// for every module of the context (a symbol belongs to one module, and one lock orders them
/// all).
#[derive(Debug, Default)]
pub(super) struct ConstantTimeline {
    /// The stream of the last launches that used constant memory (held, so it outlives them).
    pub(super) last_stream: Option<Arc<CudaStream>>,
    /// `(symbol, tag)`: the tagged data each symbol holds (see [`ConstantMemory::write_constant_tagged`](super::ConstantMemory::write_constant_tagged)).
    pub(super) written: Vec<(&'static str, u64)>,
}

/// A tag no other caller has: the id of an immutable value written to constant memory with
/// [`ConstantMemory::write_constant_tagged`](super::ConstantMemory::write_constant_tagged).
pub fn new_constant_tag() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The lab's modules, by context handle. Weak: a library (and the context it keeps alive) goes
/// when its last [`Gpu`](super::Gpu) does.
static MODULES: Mutex<Vec<(usize, Weak<Module>)>> = Mutex::new(Vec::new());

/// The lab's kernels on `ctx`: checked against every handle and shared by every handle of the
/// context; nothing is loaded until a kernel is first used.
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
    let library = Library::new(ctx, &ptx::KERNELS)?;
    let first = ptx::KERNELS.modules.first().map_or("", |m| m.name);
    let module = Arc::new(Module {
        image: library.image(first)?,
        library,
        occupancy: Mutex::new(HashMap::new()),
        constants: Mutex::new(ConstantTimeline::default()),
    });
    table.push((key, Arc::downgrade(&module)));
    Ok(module)
}
