//! Variants of the one-element-per-thread vector add: where the safe kernel's extra time goes.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(not(target_arch = "nvptx64"), allow(unused_imports, dead_code))]
#![allow(missing_docs, clippy::missing_safety_doc)]

use gpu_std::{DisjointSlice, global_index_x, kernel, thread_index};

/// The old unsafe kernel: `blockIdx.x * blockDim.x + threadIdx.x`, one compare.
#[kernel]
pub unsafe fn va_raw(x: *const f32, y: *const f32, z: *mut f32, n: usize) {
    let i = global_index_x();
    if i < n {
        unsafe { *z.add(i) = *x.add(i) + *y.add(i) };
    }
}

/// Slices in, raw out: six parameters, one compare.
#[kernel]
pub unsafe fn va_slices(x: &[f32], y: &[f32], z: *mut f32) {
    let i = global_index_x();
    if i < x.len() {
        unsafe { *z.add(i) = *x.get_unchecked(i) + *y.get_unchecked(i) };
    }
}

/// The thread rank of `thread_index()` (its one-dimensional check), raw pointers, one compare.
#[kernel]
pub unsafe fn va_rank(x: *const f32, y: *const f32, z: *mut f32, n: usize) {
    let i = thread_index().get();
    if i < n {
        unsafe { *z.add(i) = *x.add(i) + *y.add(i) };
    }
}

/// Slices and the rank, raw out, three compares.
#[kernel]
pub unsafe fn va_checks(x: &[f32], y: &[f32], z: *mut f32, n: usize) {
    let k = thread_index().get();
    if k < x.len() && k < y.len() && k < n {
        unsafe { *z.add(k) = x[k] + y[k] };
    }
}

/// The safe kernel (as `gpu::vector_add`).
#[kernel]
pub fn va_safe(x: &[f32], y: &[f32], mut z: DisjointSlice<f32>) {
    let i = thread_index();
    let k = i.get();
    if k < x.len()
        && k < y.len()
        && let Some(out) = z.get_mut(&i)
    {
        *out = x[k] + y[k];
    }
}
