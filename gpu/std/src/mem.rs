//! cuda_std 0.2's `mem` functions that read the block's shared-memory sizes (its device
//! allocator, `GLOBAL_ALLOCATOR`, is not offered: see the crate docs).

/// Bytes of dynamic shared memory the launch gave each block (`shared_mem_bytes`, PTX
/// `%dynamic_smem_size`): the size behind
/// [`dynamic_shared_mem`](crate::shared::dynamic_shared_mem).
#[inline(always)]
#[crate::gpu_only]
pub fn dynamic_smem_size() -> u32 {
    let bytes: u32;
    // SAFETY: reading a special register has no side effects.
    unsafe {
        core::arch::asm!("mov.u32 {b}, %dynamic_smem_size;", b = out(reg32) bytes,
            options(pure, nomem, nostack));
    }
    bytes
}

/// Bytes of shared memory each block of this launch holds, static and dynamic together (PTX
/// `%total_smem_size`), rounded up to the allocation unit of the architecture.
#[inline(always)]
#[crate::gpu_only]
pub fn total_smem_size() -> u32 {
    let bytes: u32;
    // SAFETY: reading a special register has no side effects.
    unsafe {
        core::arch::asm!("mov.u32 {b}, %total_smem_size;", b = out(reg32) bytes,
            options(pure, nomem, nostack));
    }
    bytes
}
