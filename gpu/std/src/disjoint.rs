//! Safe kernel outputs: [`DisjointSlice`], an output buffer whose elements a thread can write
//! only at an index that is provably its own, and [`ThreadIndex`], the token that proves it.
//!
//! A kernel such as a vector add, whose thread `i` writes element `i` and nothing else, needs no
//! `unsafe`: no two threads of the launch can hold a `&mut` to the same element, because
//!
//! - a [`ThreadIndex`] is made only by [`thread_index`] and [`grid_stride`], from this thread's
//!   rank in the whole launch (its block's rank in the grid times the threads per block, plus
//!   its rank in the block, over all three dimensions: unique for every grid and block shape);
//!   [`grid_stride`] yields the rank, the rank plus the launch's thread count, and so on, so
//!   every index a thread holds is its rank modulo the thread count, and two threads never hold
//!   the same one;
//! - a [`DisjointSlice`] hands out `&mut T` only for such an index
//!   ([`DisjointSlice::get_mut`]), and only while it is mutably borrowed, so one thread cannot
//!   hold two `&mut` to one element either;
//! - neither type is `Clone` or `Copy`, neither crosses lanes ([`WarpShuffle`](crate::WarpShuffle)
//!   is not implemented for them), and safe code cannot write either through shared memory (its
//!   accessors are `unsafe`): an index stays with the thread that made it;
//! - on the host, `#[kernel]` passes a `DisjointSlice<T>` parameter as a device buffer's address
//!   and its length, from a `&mut` borrow of the buffer, so two parameters (or an input `&[T]`
//!   and an output) cannot name the same buffer.
//!
//! This is cuda-oxide's `DisjointSlice` (NVIDIA, 2025) in this crate's terms. The index is the
//! launch-wide rank rather than `blockIdx.x * blockDim.x + threadIdx.x`, which repeats across a
//! two-dimensional grid and would let two threads write one element; for the one-dimensional
//! launches of element-wise kernels the two are equal.
//!
//! ```ignore
//! use gpu_std::{DisjointSlice, kernel, thread_index};
//!
//! /// `z[i] = x[i] + y[i]` for every `i < z.len()` the grid covers.
//! #[kernel]
//! pub fn vector_add(x: &[f32], y: &[f32], mut z: DisjointSlice<f32>) {
//!     let i = thread_index();
//!     if let (Some(a), Some(b), Some(out)) = (x.get(i.get()), y.get(i.get()), z.get_mut(&i)) {
//!         *out = a + b;
//!     }
//! }
//! ```

//! What the types refuse. Writing at an index that is not a [`ThreadIndex`]:
//!
//! ```compile_fail,E0308
//! fn body(mut z: gpu_std::DisjointSlice<f32>) {
//!     if let Some(out) = z.get_mut(&5usize) {
//!         *out = 1.0;
//!     }
//! }
//! ```
//!
//! Making one by hand:
//!
//! ```compile_fail,E0423
//! let i = gpu_std::ThreadIndex(5);
//! ```
//!
//! Copying one (to hand the same index to a second writer):
//!
//! ```compile_fail,E0599
//! fn body(i: gpu_std::ThreadIndex) -> (gpu_std::ThreadIndex, gpu_std::ThreadIndex) {
//!     (i.clone(), i)
//! }
//! ```
//!
//! Copying the output (two handles to one element in one thread):
//!
//! ```compile_fail,E0599
//! fn body(z: gpu_std::DisjointSlice<f32>) {
//!     let w = z.clone();
//! }
//! ```
//!
//! Holding two elements of one output at once:
//!
//! ```compile_fail,E0499
//! fn body(mut z: gpu_std::DisjointSlice<f32>, i: gpu_std::ThreadIndex, j: gpu_std::ThreadIndex) {
//!     let a = z.get_mut(&i);
//!     let b = z.get_mut(&j);
//!     drop((a, b));
//! }
//! ```
//!
//! The same body written with a token compiles:
//!
//! ```no_run
//! fn body(x: &[f32], mut z: gpu_std::DisjointSlice<f32>) {
//!     for i in gpu_std::grid_stride(z.len()) {
//!         if let (Some(&a), Some(out)) = (x.get(i.get()), z.get_mut(&i)) {
//!             *out = 2.0 * a;
//!         }
//!     }
//! }
//! ```

use core::marker::PhantomData;
use core::ptr::NonNull;

/// An index into a [`DisjointSlice`] that belongs to this thread alone in the whole launch: no
/// other thread of the grid can make an equal one (see the [module docs](self)).
///
/// Made only by [`thread_index`] and [`grid_stride`]. Neither `Clone` nor `Copy`, so it cannot
/// be duplicated to forge a second writer; read its value with [`ThreadIndex::get`] for
/// inputs.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ThreadIndex(usize);

impl ThreadIndex {
    /// The index's value (an element index).
    #[inline(always)]
    pub const fn get(&self) -> usize {
        self.0
    }
}

/// Whether the launch is one-dimensional (`blockDim.y = blockDim.z = gridDim.y = gridDim.z =
/// 1`), read from the launch's constant bank: the common case, whose rank needs two special
/// registers and one multiply-add.
#[inline(always)]
#[crate::gpu_only]
fn one_dimensional() -> (bool, u32, u32) {
    let (nb, ng) = (crate::block_dim(), crate::grid_dim());
    (nb.y == 1 && nb.z == 1 && ng.y == 1 && ng.z == 1, nb.x, ng.x)
}

/// This thread's rank in the whole launch: `block rank * threads per block + thread rank`, with
/// the block rank `(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x` and the
/// thread rank likewise over `threadIdx` and `blockDim` (for a one-dimensional launch,
/// `blockIdx.x * blockDim.x + threadIdx.x`). Traps if the launch's thread count does not fit a
/// `usize` (more than 2^64 threads, which no GPU runs but the launch limits allow), where
/// ranks could repeat.
#[inline(always)]
#[crate::gpu_only]
fn rank() -> usize {
    let (linear, block_x, _) = one_dimensional();
    if linear {
        // At most 2^31 blocks of 1024 threads: no overflow.
        // SAFETY: reading `%ctaid.x` and `%tid.x` has no side effects.
        let (b, t) = unsafe {
            (
                core::arch::nvptx::_block_idx_x() as usize,
                core::arch::nvptx::_thread_idx_x() as usize,
            )
        };
        return b * block_x as usize + t;
    }
    let (t, b, nb, ng) = (
        crate::thread_idx(),
        crate::block_idx(),
        crate::block_dim(),
        crate::grid_dim(),
    );
    // Traps where ranks could repeat (more threads than a `usize` counts).
    let _ = count();
    let per_block = nb.x as usize * nb.y as usize * nb.z as usize;
    let thread = (t.z as usize * nb.y as usize + t.y as usize) * nb.x as usize + t.x as usize;
    let block = (b.z as usize * ng.y as usize + b.y as usize) * ng.x as usize + b.x as usize;
    // `block < blocks` and `thread < per_block`, and their product fits (`count`).
    block * per_block + thread
}

/// The launch's thread count, `blockDim.x * blockDim.y * blockDim.z * gridDim.x * gridDim.y *
/// gridDim.z`. Traps if it does not fit a `usize`.
#[inline(always)]
#[crate::gpu_only]
fn count() -> usize {
    let (linear, block_x, grid_x) = one_dimensional();
    if linear {
        return block_x as usize * grid_x as usize;
    }
    let (nb, ng) = (crate::block_dim(), crate::grid_dim());
    // At most 1024 threads per block and 2^31 * 2^16 * 2^16 blocks: both products fit in
    // 64 bits, and only their product can overflow.
    let per_block = nb.x as usize * nb.y as usize * nb.z as usize;
    let blocks = ng.x as usize * ng.y as usize * ng.z as usize;
    // A panic traps (the crate's panic handler): the launch fails.
    per_block
        .checked_mul(blocks)
        .expect("a launch of at most usize::MAX threads")
}

/// This thread's [`ThreadIndex`]: its rank in the whole launch, `0..` the launch's thread count
/// (for a one-dimensional launch, `blockIdx.x * blockDim.x + threadIdx.x`).
#[inline(always)]
#[crate::gpu_only]
pub fn thread_index() -> ThreadIndex {
    ThreadIndex(rank())
}

/// The indices below `len` that belong to this thread, for a grid-stride loop: its rank, then
/// the rank plus the launch's thread count, and so on (CUDA's
/// `for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)`, over
/// every dimension of the launch).
#[inline(always)]
#[crate::gpu_only]
pub fn grid_stride(len: usize) -> GridStride {
    GridStride {
        next: rank(),
        step: count(),
        len,
    }
}

/// The iterator of [`grid_stride`].
#[derive(Debug)]
pub struct GridStride {
    next: usize,
    step: usize,
    len: usize,
}

impl Iterator for GridStride {
    type Item = ThreadIndex;

    #[inline(always)]
    fn next(&mut self) -> Option<ThreadIndex> {
        if self.next >= self.len {
            return None;
        }
        let index = self.next;
        // Past `usize::MAX` means past `len`: the loop ends.
        self.next = self.next.saturating_add(self.step);
        Some(ThreadIndex(index))
    }
}

/// A kernel's output buffer of `len` elements of `T`, each of which only the thread holding its
/// [`ThreadIndex`] can write (see the [module docs](self)). As a `#[kernel]` parameter,
/// `mut out: DisjointSlice<T>`, it travels as two PTX parameters, `out_ptr` (`*mut T`) and
/// `out_len` (`usize`); the host passes a `&mut` device buffer, whose length becomes `len`.
pub struct DisjointSlice<'a, T> {
    /// Never null (dangling when `len` is 0), so an element's `&mut` needs no null check.
    ptr: NonNull<T>,
    len: usize,
    buffer: PhantomData<&'a mut [T]>,
}

impl<T> DisjointSlice<'_, T> {
    /// The output `ptr[0..len]`; `#[kernel]` rebuilds the parameter with it.
    ///
    /// # Safety
    /// `ptr` is valid for reads and writes of `len` elements of `T` (aligned) for the whole
    /// launch; no other parameter of the launch reaches them; and every thread of the launch
    /// makes at most one `DisjointSlice` of them, from the same `ptr` and `len`.
    #[doc(hidden)]
    #[inline(always)]
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        let ptr = if len == 0 {
            NonNull::dangling()
        } else {
            // SAFETY: valid for `len > 0` elements (the contract), so not null.
            unsafe { NonNull::new_unchecked(ptr) }
        };
        Self {
            ptr,
            len,
            buffer: PhantomData,
        }
    }

    /// Its length in elements.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element at `index`, which only this thread can reach, or `None` past the end.
    #[inline(always)]
    pub fn get_mut(&mut self, index: &ThreadIndex) -> Option<&mut T> {
        if index.0 < self.len {
            // SAFETY: `index < len`, so the element is inside the buffer (`from_raw_parts`);
            // no other thread holds an equal index (`ThreadIndex`), and this thread's `&mut`
            // borrows `self`, so it is the only reference to the element while it lives.
            Some(unsafe { self.ptr.add(index.0).as_mut() })
        } else {
            None
        }
    }
}
