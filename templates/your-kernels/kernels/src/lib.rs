//! The project's kernels, written against `gpu_std` (the lab's device support, its `cuda_std`).
//!
//! The crate is compiled twice:
//! - for `nvptx64-nvidia-cuda` by `app/build.rs` (through `ptx_builder`, with the nightly of
//!   `rust-toolchain.toml`): each `#[kernel]` becomes a PTX `.entry` of its name;
//! - for the host, as a dependency of `app`: each kernel becomes a typed handle of the same name
//!   (`gpu_std::host::Kernel`), which `gpu_host::Module::launch` takes with arguments the compiler
//!   checks against the signature. The bodies are compiled there too (type-checked, never run),
//!   so `cargo check` and rust-analyzer report an error in a kernel where it is.
//!
//! Five kernels, from the simplest up:
//! - [`add`]: safe (each thread writes only the element of its own thread index);
//! - [`block_sum`]: `unsafe`, with shared memory (a block-wide tree sum) and one write per block;
//! - [`axpy`]: safe and generic, one PTX entry per element type;
//! - [`polynomial`]: safe, its coefficients in `__constant__` memory ([`C_POLYNOMIAL`]);
//! - [`reduce_monoid`]: the kit's device-wide reduction (`gpu_std::reduce`) over a type of this
//!   crate, [`MinMax`], which implements [`Monoid`].
#![no_std]
// `#[kernel]` emits PTX kernel entries (`abi_ptx`); `static_shared!` declares its array with
// inline PTX (`asm_experimental_arch`). Both only in the device build.
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use gpu_std::math::{fmaf32, fmaf64};
use gpu_std::reduce::{Fold, Monoid, device_reduce};
use gpu_std::{
    DeviceCopy, DisjointSlice, block_idx, grid_stride, kernel, static_shared, syncthreads,
    thread_idx, thread_index,
};

/// Threads per block of [`block_sum`]: the length of its shared array, and the number of
/// elements each block sums. The host launches with it (`app` reads it from here).
pub const BLOCK_SUM_THREADS: u32 = 256;

/// `z[i] = x[i] + y[i]`, one element per thread, for every `i < z.len()` the grid covers (and
/// `x` and `y` hold).
///
/// Safe: the output is a [`DisjointSlice`], which a thread can write only at its own
/// [`ThreadIndex`](gpu_std::ThreadIndex) (its rank in the launch), so no launch can make two
/// threads write one element or any thread write out of bounds; the host launches it without
/// `unsafe`.
///
/// Launch: any block size; a grid of `ceil(n / block)` blocks covers `n` elements (elements
/// past the grid are not written).
///
/// Parameters: `x`, `y` the inputs and `z` the output, `n` floats each (a shorter input leaves
/// the elements past its end unwritten).
///
/// Performance: 12 bytes of DRAM traffic per element (two loads, one store) for one add:
/// memory-bound. A warp reads 128 contiguous bytes of each input and writes 128 of the output.
#[kernel]
pub fn add(x: &[f32], y: &[f32], mut z: DisjointSlice<f32>) {
    let i = thread_index();
    if let (Some(a), Some(b), Some(out)) = (x.get(i.get()), y.get(i.get()), z.get_mut(&i)) {
        *out = a + b;
    }
}

/// Per-block sums: block `b` writes `sums[b] = x[256 b] + ... + x[256 b + 255]` (elements past
/// `x.len()` count as 0).
///
/// Algorithm: each thread loads one element into the block's shared array `s`; then 8 steps
/// of a tree, each halving the active threads: thread `t < stride` adds `s[t + stride]` into
/// `s[t]`, with a barrier after each step (cuda-samples' `reduce2`, sequential addressing: the
/// active threads are the first warps, and consecutive threads touch consecutive banks).
/// Thread 0 writes the block's total. The host adds the `gridDim.x` partial sums.
///
/// Launch: blocks of [`BLOCK_SUM_THREADS`] threads, a one-dimensional grid of
/// `ceil(x.len() / 256)` blocks, no dynamic shared memory (the 1 KiB array is static).
///
/// Parameters: `x` the input floats; `sums` one float per block.
///
/// # Safety
/// The caller guarantees:
/// - the block is exactly `(BLOCK_SUM_THREADS, 1, 1)`: the tree reads every slot of `s`, so a
///   smaller block would read slots no thread wrote, and the threads of a two- or
///   three-dimensional block would share slots (`threadIdx.x` alone names a slot) and race;
/// - the grid is one-dimensional (`gridDim.y == gridDim.z == 1`): blocks are told apart by
///   `blockIdx.x` alone, so two blocks of another row would write the same `sums[b]`;
/// - `sums` is valid for writes of `gridDim.x` floats (4-byte aligned), which no other
///   parameter, and no work running at the same time, reads or writes.
///
/// A block larger than 256 threads traps on the shared array's bound (the launch fails)
/// before anything is written.
///
/// Performance: 4 bytes read per element; the tree costs 8 barriers per block, so the kernel
/// is memory-bound only for long inputs (`cpu::reduce` has the fast one-launch sum).
#[kernel]
pub unsafe fn block_sum(x: &[f32], sums: *mut f32) {
    const B: usize = BLOCK_SUM_THREADS as usize;
    let s = static_shared!(s_block_sum: [f32; B]);
    let t = thread_idx().x as usize;
    let block = block_idx().x as usize;
    let value = x.get(block * B + t).copied().unwrap_or(0.0);
    // SAFETY: thread `t` alone writes slot `t` (the block is one-dimensional; `t < B` or the
    // bound traps), and no thread reads `s` before the barrier below.
    unsafe { s.write(t, value) };
    syncthreads();
    let mut stride = B / 2;
    while stride > 0 {
        if t < stride {
            // SAFETY: in this step thread `t` alone writes slot `t`, and the slots it reads,
            // `t` and `t + stride >= stride`, are written by no other thread (the writers are
            // the threads below `stride`, each to its own slot); every slot below `2 stride`
            // was written before the last barrier, since the block has `B` threads (contract).
            unsafe { s.write(t, s.read(t) + s.read(t + stride)) };
        }
        // Every thread of the block reaches each barrier: `stride` is the same for all.
        syncthreads();
        stride /= 2;
    }
    if t == 0 {
        // SAFETY: slot 0 holds the block's total since the last barrier, and nobody writes it
        // any more; `block < gridDim.x`, and `sums` holds `gridDim.x` floats no other thread
        // or parameter reaches (contract), of which this block's thread 0 alone writes
        // `sums[block]`.
        unsafe { *sums.add(block) = s.read(0) };
    }
}

/// An element type of [`axpy`]: how `a * x + y` is computed for it. Implemented for `f32` and
/// `f64` (one fused multiply-add, rounded once, as the host's `mul_add`) and for `i32` and
/// `u32` (two's complement, wrapping on overflow, as `wrapping_mul` then `wrapping_add`).
pub trait Axpy: DeviceCopy {
    /// `a * x + y`.
    fn axpy(a: Self, x: Self, y: Self) -> Self;
}

impl Axpy for f32 {
    #[inline(always)]
    fn axpy(a: f32, x: f32, y: f32) -> f32 {
        fmaf32(a, x, y)
    }
}

impl Axpy for f64 {
    #[inline(always)]
    fn axpy(a: f64, x: f64, y: f64) -> f64 {
        fmaf64(a, x, y)
    }
}

impl Axpy for i32 {
    #[inline(always)]
    fn axpy(a: i32, x: i32, y: i32) -> i32 {
        a.wrapping_mul(x).wrapping_add(y)
    }
}

impl Axpy for u32 {
    #[inline(always)]
    fn axpy(a: u32, x: u32, y: u32) -> u32 {
        a.wrapping_mul(x).wrapping_add(y)
    }
}

/// `y[i] = a * x[i] + y[i]` ([`Axpy::axpy`]) for every `i < y.len()` (and `x.len()`), with a
/// grid-stride loop, for `T` = `f32`, `f64`, `i32`, `u32`: one PTX entry per type
/// (`axpy_f32`, `axpy_f64`, `axpy_i32`, `axpy_u32`), and on the host one handle per type of
/// the same names, or `axpy::<T>()`.
///
/// Safe, as [`add`]: `y` is a [`DisjointSlice`], each thread updates only its own elements.
///
/// Algorithm: thread `r` (its rank in the launch) handles elements `r`, `r + threads`,
/// `r + 2 threads`, ... with `threads` the launch's thread count (CUDA's grid-stride loop), so
/// any grid covers any length.
///
/// Launch: any block size, any grid.
///
/// Parameters: `a` the scale; `x` the input and `y` the vector updated in place, `n` elements
/// each.
///
/// Performance: `3 size_of::<T>()` bytes of DRAM traffic per element (two loads, one store)
/// for one multiply-add: memory-bound.
#[kernel(instantiate(T = f32, f64, i32, u32))]
pub fn axpy<T: Axpy>(a: T, x: &[T], mut y: DisjointSlice<T>) {
    for i in grid_stride(y.len()) {
        if let Some(&xi) = x.get(i.get())
            && let Some(yi) = y.get_mut(&i)
        {
            *yi = T::axpy(a, xi, *yi);
        }
    }
}

gpu_std::constant_memory!(
    /// The coefficients `c0, c1, c2, c3` of [`polynomial`], in `__constant__` memory: every
    /// thread reads the same one at a time, which the constant cache broadcasts to the warp.
    /// The host writes them with `module.write_constant(C_POLYNOMIAL, &c)`.
    pub C_POLYNOMIAL: [f32; 4]
);

/// `y[i] = c0 + c1 x[i] + c2 x[i]^2 + c3 x[i]^3` for every `i < y.len()` (and `x.len()`), the
/// coefficients read from [`C_POLYNOMIAL`] in constant memory (Horner's rule: three fused
/// multiply-adds), with a grid-stride loop.
///
/// Safe, as [`add`]: `y` is a [`DisjointSlice`]; constant memory is only read.
///
/// Launch: any block size, any grid; the coefficients written before the launch, on its stream.
///
/// Parameters: `x` the input and `y` the output, `n` floats each.
///
/// Performance: 8 bytes of DRAM traffic per element, 3 FMAs: memory-bound.
#[kernel]
pub fn polynomial(x: &[f32], mut y: DisjointSlice<f32>) {
    for i in grid_stride(y.len()) {
        if let Some(&xi) = x.get(i.get())
            && let Some(yi) = y.get_mut(&i)
        {
            let c = |k| C_POLYNOMIAL::read(k);
            *yi = fmaf32(fmaf32(fmaf32(c(3), xi, c(2)), xi, c(1)), xi, c(0));
        }
    }
}

/// Threads per block of [`reduce_monoid`] launches (`gpu_std::reduce::REDUCE_BLOCK`).
pub const REDUCE_MONOID_BLOCK: u32 = gpu_std::reduce::REDUCE_BLOCK;

/// The smallest and the largest of a run of floats: a commutative monoid ([`Monoid`]) whose
/// reduction gives both in one pass. `#[repr(C)]`, so the host and the device agree on its
/// layout; [`DeviceCopy`] by its derive, so it is the element of device buffers on the host
/// (`device.upload(&pairs)`, `device.zeros::<MinMax>(n)`) with no `unsafe`; and
/// [`Pod`](gpu_std::Pod) (two `f32`s, no padding), so it crosses lanes in warp shuffles word by
/// word.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
pub struct MinMax {
    /// The smallest value.
    pub min: f32,
    /// The largest value.
    pub max: f32,
}

// SAFETY: two `f32`s: 8 bytes, 4-byte aligned, no padding, any bits are a value.
unsafe impl gpu_std::Pod for MinMax {}

impl Monoid for MinMax {
    /// Above every value as a minimum, below every value as a maximum.
    const IDENTITY: Self = MinMax {
        min: f32::INFINITY,
        max: f32::NEG_INFINITY,
    };

    /// Both sides' extremes (`f32::min`/`f32::max`: a NaN loses to a number). Associative and
    /// commutative, as `device_reduce` needs.
    #[inline(always)]
    fn combine(a: Self, b: Self) -> Self {
        MinMax {
            min: a.min.min(b.min),
            max: a.max.max(b.max),
        }
    }
}

/// `*result` = the [`Monoid::combine`] of `input[0..n]` (the identity for `n = 0`), in one
/// launch: the kit's device-wide reduction (`gpu_std::reduce::device_reduce`) over a monoid of
/// your own, instantiated here for [`MinMax`] (entry `reduce_monoid_min_max`); add your own types
/// to the list.
///
/// Algorithm (`device_reduce`): each block reads an even share of the input, each thread combines
/// its elements, a warp-shuffle tree and shared memory combine a block's, and the last block to
/// finish (an atomic ticket) combines the blocks' partials.
///
/// Launch: blocks of `gpu_std::reduce::REDUCE_BLOCK` (512) threads, any one-dimensional grid of
/// at least one block (one wave of resident blocks is the fastest).
///
/// # Safety
/// `input` is valid for `n` elements and not written during the launch; `partials` holds
/// `gridDim.x` elements; `counter` points to a `u32` that is 0 and used by no concurrent launch
/// (0 again when the kernel ends); `result` points to one element.
#[kernel(instantiate(M = MinMax))]
pub unsafe fn reduce_monoid<M: Monoid>(
    input: *const M,
    n: usize,
    partials: *mut M,
    counter: *mut u32,
    result: *mut M,
) {
    let warp_totals = static_shared!(s_reduce_monoid: [M; 32]);
    // SAFETY: forwarded to the caller's contract.
    unsafe { device_reduce::<Fold<M>>(input, n, partials, counter, result, &warp_totals) }
}
