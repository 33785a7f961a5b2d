//! Barriers and memory fences.

/// Block-wide barrier (`__syncthreads()`, PTX `bar.sync 0`): every thread of the block waits
/// here, and shared- and global-memory writes made before it are visible to the block after it.
///
/// Must be reached by all threads of the block (not inside a branch some threads skip).
#[inline(always)]
#[crate::gpu_only]
pub fn syncthreads() {
    // SAFETY: `bar.sync` has no memory-safety preconditions; a divergent barrier is a
    // correctness bug the caller must avoid, reported by compute-sanitizer's synccheck.
    unsafe { core::arch::nvptx::_syncthreads() }
}

/// Warp-level barrier (`__syncwarp(mask)`, PTX `bar.warp.sync`): the lanes named in `mask`
/// wait for each other and their memory accesses are ordered among them.
///
/// Since Volta (independent thread scheduling) the lanes of a warp are not guaranteed to run in
/// lock step, so warp-synchronous code that exchanges values through shared memory needs this
/// between steps. Every lane named in `mask` must execute it with the same `mask`.
#[inline(always)]
#[crate::gpu_only]
pub fn syncwarp(mask: u32) {
    // SAFETY: `bar.warp.sync` only synchronises; the asm clobbers memory (no `nomem`) so the
    // compiler does not move shared-memory accesses across it.
    unsafe { core::arch::asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
}

/// Block-wide barrier that also tells every thread whether `predicate` held for any thread of
/// the block (`__syncthreads_or(predicate)`, PTX `bar.red.or.pred`). Same rules as
/// [`syncthreads`]: every thread of the block must reach it.
#[inline(always)]
#[crate::gpu_only]
pub fn syncthreads_or(predicate: bool) -> bool {
    let any: u32;
    // SAFETY: as for `syncthreads`; the asm clobbers memory so accesses stay on their side.
    unsafe {
        core::arch::asm!(
            "{{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, {x}, 0;\n\tbar.red.or.pred q, 0, p;\n\tselp.u32 {r}, 1, 0, q;\n\t}}",
            x = in(reg32) predicate as u32, r = out(reg32) any,
            options(nostack));
    }
    any != 0
}

/// Device-wide fence (`__threadfence()`, PTX `membar.gl`, which is `fence.sc.gpu`: a
/// sequentially consistent fence, `MEMBAR.SC.GPU` in SASS): this thread's writes before it are
/// seen by every thread of the grid before its writes after it. To publish data before a flag
/// or ticket, an acquire-release atomic ([`atomic_add_acq_rel`](super::atomic_add_acq_rel)) is
/// cheaper.
#[inline(always)]
#[crate::gpu_only]
pub fn threadfence() {
    // SAFETY: a fence has no preconditions; it clobbers memory so accesses stay on their side.
    unsafe { core::arch::asm!("membar.gl;", options(nostack)) }
}

/// Block-wide fence (`__threadfence_block()`, PTX `membar.cta`).
#[inline(always)]
#[crate::gpu_only]
pub fn threadfence_block() {
    // SAFETY: as for `threadfence`.
    unsafe { core::arch::asm!("membar.cta;", options(nostack)) }
}
