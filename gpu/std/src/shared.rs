//! Shared memory: the block's fast on-chip scratchpad (CUDA's `__shared__`).
//!
//! Two forms, as in CUDA:
//! - [`DynamicShared`]: `extern __shared__ T s[];`, sized by the launch's `shared_mem_bytes`.
//! - [`SharedArray`], made by [`static_shared!`](crate::static_shared): `__shared__ T s[N];`,
//!   sized at compile time; the host passes nothing for it.
//!
//! And cuda_std 0.2's raw-pointer forms under its names: [`shared_array!`](crate::shared_array)
//! (`*mut T` to a static array) and [`dynamic_shared_mem`] (`*mut T` to the dynamic one).
//!
//! Shared memory is shared by all threads of a block, so element access is `unsafe`: the caller
//! orders conflicting accesses with [`syncthreads`](super::syncthreads) (or
//! [`syncwarp`](super::syncwarp) inside one warp). Indices are bounds-checked; an out-of-range
//! index traps the kernel instead of touching another array.

use core::marker::PhantomData;

/// The block's dynamic shared memory viewed as an array of `T` (`extern __shared__ T s[];`).
///
/// Its length is the launch's `shared_mem_bytes / size_of::<T>()`, read from PTX's
/// `%dynamic_smem_size`. Loads and stores compile to `ld.shared` / `st.shared`.
#[derive(Clone, Copy)]
pub struct DynamicShared<T> {
    ptr: *mut T,
    len: usize,
}

impl<T: Copy> DynamicShared<T> {
    /// The dynamic shared memory of this launch. Every call in a block returns the same memory.
    #[inline(always)]
    #[crate::gpu_only]
    pub fn get() -> Self {
        let bytes: u32;
        // SAFETY: reading `%dynamic_smem_size` has no side effects.
        unsafe {
            core::arch::asm!("mov.u32 {b}, %dynamic_smem_size;", b = out(reg32) bytes,
                options(pure, nomem, nostack));
        }
        Self {
            ptr: core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>(),
            len: bytes as usize / core::mem::size_of::<T>(),
        }
    }

    /// Elements of `T` that fit in the launch's dynamic shared memory.
    #[inline(always)]
    #[crate::gpu_only]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the launch gave no dynamic shared memory.
    #[inline(always)]
    #[crate::gpu_only]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Generic pointer to element 0.
    #[inline(always)]
    #[crate::gpu_only]
    pub fn as_ptr(&self) -> *mut T {
        self.ptr
    }

    /// The 32-bit shared-window address of element 0 (`cvta.to.shared` of the generic one),
    /// for `ld.shared` / `red.shared` in inline asm: element `i` is at `shared_address() + i *
    /// size_of::<T>()`.
    #[inline(always)]
    #[crate::gpu_only]
    pub fn shared_address(&self) -> u32 {
        let address: u32;
        // SAFETY: converts a generic address of the shared window to its shared-window
        // offset; no memory is accessed.
        unsafe {
            core::arch::asm!(
                "{{ .reg .u64 t; cvta.to.shared.u64 t, {p}; cvt.u32.u64 {a}, t; }}",
                p = in(reg64) self.ptr.addr() as u64,
                a = out(reg32) address,
                options(pure, nomem, nostack),
            );
        }
        address
    }

    /// Reads element `i`.
    ///
    /// # Safety
    /// No other thread may write element `i` between the barriers around this read.
    #[inline(always)]
    #[crate::gpu_only]
    pub unsafe fn read(&self, i: usize) -> T {
        assert!(i < self.len);
        // SAFETY: `i` is in bounds; races are excluded by the caller.
        unsafe { self.ptr.add(i).read() }
    }

    /// Writes element `i`.
    ///
    /// # Safety
    /// No other thread may access element `i` between the barriers around this write.
    #[inline(always)]
    #[crate::gpu_only]
    pub unsafe fn write(&self, i: usize, value: T) {
        assert!(i < self.len);
        // SAFETY: `i` is in bounds; races are excluded by the caller.
        unsafe { self.ptr.add(i).write(value) }
    }

    /// Volatile read of element `i` (CUDA's `volatile T*` for warp-synchronous code).
    ///
    /// # Safety
    /// As [`read`](Self::read); within a warp, the writer and this read must be separated by
    /// [`syncwarp`](super::syncwarp).
    #[inline(always)]
    #[crate::gpu_only]
    pub unsafe fn read_volatile(&self, i: usize) -> T {
        assert!(i < self.len);
        // SAFETY: in bounds; ordering is the caller's.
        unsafe { self.ptr.add(i).read_volatile() }
    }

    /// Volatile write of element `i`.
    ///
    /// # Safety
    /// As [`write`](Self::write).
    #[inline(always)]
    #[crate::gpu_only]
    pub unsafe fn write_volatile(&self, i: usize, value: T) {
        assert!(i < self.len);
        // SAFETY: in bounds; ordering is the caller's.
        unsafe { self.ptr.add(i).write_volatile(value) }
    }
}

/// A statically sized shared array (`__shared__ T s[N];`), made by
/// [`static_shared!`](crate::static_shared).
#[derive(Clone, Copy)]
pub struct SharedArray<T, const N: usize> {
    ptr: *mut T,
    window: u32,
    _marker: PhantomData<T>,
}

impl<T: Copy, const N: usize> SharedArray<T, N> {
    /// Wraps the generic address `ptr` and the shared-window address `window` of a `.shared`
    /// declaration of at least `N * size_of::<T>()` bytes.
    ///
    /// # Safety
    /// `ptr` and `window` must both address such a declaration, aligned for `T`. Use
    /// [`static_shared!`](crate::static_shared) rather than calling this.
    #[doc(hidden)]
    #[inline(always)]
    #[crate::gpu_only]
    pub unsafe fn from_declaration(ptr: *mut T, window: u32) -> Self {
        Self {
            ptr,
            window,
            _marker: PhantomData,
        }
    }

    /// The 32-bit shared-window address of element 0, for `ld.shared` / `st.shared` in inline
    /// asm (element `i` is at `shared_address() + i * size_of::<T>()`).
    #[inline(always)]
    #[crate::gpu_only]
    pub fn shared_address(&self) -> u32 {
        self.window
    }

    /// Number of elements, `N`.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether `N == 0`.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// Generic pointer to element 0.
    #[inline(always)]
    #[crate::gpu_only]
    pub fn as_ptr(&self) -> *mut T {
        self.ptr
    }

    /// Reads element `i` (traps if `i >= N`).
    ///
    /// # Safety
    /// No other thread may write element `i` between the barriers around this read.
    #[inline(always)]
    #[crate::gpu_only]
    pub unsafe fn read(&self, i: usize) -> T {
        assert!(i < N);
        // SAFETY: in bounds (asserted); races are excluded by the caller.
        unsafe { self.read_unchecked(i) }
    }

    /// Writes element `i` (traps if `i >= N`).
    ///
    /// # Safety
    /// No other thread may access element `i` between the barriers around this write.
    #[inline(always)]
    #[crate::gpu_only]
    pub unsafe fn write(&self, i: usize, value: T) {
        assert!(i < N);
        // SAFETY: in bounds (asserted); races are excluded by the caller.
        unsafe { self.write_unchecked(i, value) }
    }

    /// Reads element `i` without the bounds check (no compare and trap branch: for the inner
    /// loops of kernels whose indices are in bounds by construction).
    ///
    /// # Safety
    /// `i < N`, and as [`read`](Self::read).
    #[inline(always)]
    #[crate::gpu_only]
    pub unsafe fn read_unchecked(&self, i: usize) -> T {
        // SAFETY: in bounds and race-free by the caller's contract.
        unsafe { self.ptr.add(i).read() }
    }

    /// Writes element `i` without the bounds check.
    ///
    /// # Safety
    /// `i < N`, and as [`write`](Self::write).
    #[inline(always)]
    #[crate::gpu_only]
    pub unsafe fn write_unchecked(&self, i: usize, value: T) {
        // SAFETY: in bounds and race-free by the caller's contract.
        unsafe { self.ptr.add(i).write(value) }
    }

    /// Volatile read of element `i`, for warp-synchronous code.
    ///
    /// # Safety
    /// As [`read`](Self::read); within a warp, separate writer and reader with
    /// [`syncwarp`](super::syncwarp).
    #[inline(always)]
    #[crate::gpu_only]
    pub unsafe fn read_volatile(&self, i: usize) -> T {
        assert!(i < N);
        // SAFETY: in bounds; ordering is the caller's.
        unsafe { self.ptr.add(i).read_volatile() }
    }

    /// Volatile write of element `i`.
    ///
    /// # Safety
    /// As [`write`](Self::write).
    #[inline(always)]
    #[crate::gpu_only]
    pub unsafe fn write_volatile(&self, i: usize, value: T) {
        assert!(i < N);
        // SAFETY: in bounds; ordering is the caller's.
        unsafe { self.ptr.add(i).write_volatile(value) }
    }
}

/// The generic address of the block's dynamic shared memory, which LLVM knows lies in the
/// shared window: [`static_shared!`](crate::static_shared) offsets it to its own declaration
/// so that LLVM's address-space inference turns every access to the array into `ld.shared` /
/// `st.shared` with 32-bit addresses. A pointer made by inline asm (`cvta.shared`) is opaque
/// to LLVM, and every access through it becomes a generic `ld` / `st` with 64-bit address
/// arithmetic.
#[doc(hidden)]
#[inline(always)]
#[crate::gpu_only]
pub fn shared_window() -> *mut u8 {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u8>()
}

/// The host stand-in of [`static_shared!`](crate::static_shared), which the host build of a
/// kernel crate type-checks but never runs.
#[doc(hidden)]
#[crate::gpu_only]
pub fn static_shared_host<T: Copy, const N: usize>() -> SharedArray<T, N> {
    unreachable!()
}

/// The host stand-in of [`shared_array!`](crate::shared_array).
#[doc(hidden)]
#[crate::gpu_only]
pub fn shared_array_host<T, const N: usize>() -> *mut T {
    unreachable!()
}

/// cuda_std's `dynamic_shared_mem`: a pointer to the block's dynamic shared memory
/// (`extern __shared__ T s[];`), whose size the launch gives (`shared_mem_bytes`); the data is
/// uninitialised. Every call in a block returns the same address, whatever `T`.
///
/// The address is that of [`DynamicShared::get`] (which also knows the length, and
/// bounds-checks): `core::intrinsics::gpu::gpu_launch_sized_workgroup_mem`, aligned at least
/// for `T` (cuda_std always aligns it to 16 bytes; call this with a 16-byte aligned type
/// where that matters). The length is [`mem::dynamic_smem_size`](crate::mem::dynamic_smem_size)
/// bytes.
#[inline(always)]
#[crate::gpu_only]
pub fn dynamic_shared_mem<T>() -> *mut T {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>()
}

/// cuda_std's `shared_array!`: `shared_array![T; N]` declares a statically sized shared array
/// of `N` elements of `T` (`__shared__ T s[N];`) and evaluates to a `*mut T` to its first
/// element, uninitialised. `N` is a constant expression.
///
/// ```ignore
/// use gpu_std::{kernel, shared_array, thread};
///
/// /// Reverses `d[..64]` in place (a block of 64 threads).
/// #[kernel]
/// pub unsafe fn reverse_array(d: *mut i32) {
///     let s = shared_array![i32; 64];
///     let t = thread::thread_idx_x() as usize;
///     unsafe {
///         *s.add(t) = *d.add(t);
///         thread::sync_threads();
///         *d.add(t) = *s.add(63 - t);
///     }
/// }
/// ```
///
/// Each invocation is its own array, as in cuda_std; running one invocation again (in a loop,
/// in a function called twice) yields the same array. Its size counts in the kernel's static
/// shared memory, like [`static_shared!`](crate::static_shared), on whose machinery it is
/// built: the PTX declaration is named `__gpu_std_shared_array_<crate>_L<line>C<column>_<n>`
/// after the place of the invocation's type (the PTX shows which array is which), and a count
/// `n` of the invocations expanded in the crate keeps apart those that one `macro_rules!`
/// expands more than once, so no name is needed. `T` may be any sized type (no `Copy`
/// needed); like every static shared declaration it cannot depend on a generic parameter of
/// the enclosing function.
///
/// Safety, in cuda_std's words: shared memory is shared by the threads of one block only;
/// write an element before reading it; order one thread's writes before another's reads with
/// [`sync_threads`](crate::thread::sync_threads); stay in bounds (the pointer carries no
/// length). The accesses through the pointer are `unsafe`; the macro is not.
#[macro_export]
macro_rules! shared_array {
    ($array_type:ty; $len:expr) => {
        $crate::__shared_array!($crate; $array_type; $len)
    };
}

/// Declares a statically sized shared array and evaluates to its [`SharedArray`] handle:
/// `let tile = static_shared!(s_tile: [f32; 256]);` is CUDA's `__shared__ float s_tile[256];`.
///
/// The name becomes a module-level PTX `.shared` variable, so it must be unique in the crate
/// (prefix it with `s_` and the kernel's name). Its size counts in the kernel's static shared
/// memory (`ptxas -v`: "smem"), not in the launch's `shared_mem_bytes`.
#[macro_export]
macro_rules! static_shared {
    ($name:ident : [$t:ty; $n:expr]) => {{
        #[cfg(not(target_arch = "nvptx64"))]
        let array = $crate::static_shared_host::<$t, { $n }>();
        #[cfg(target_arch = "nvptx64")]
        let array = $crate::static_shared_device!($name: [$t; $n]);
        array
    }};
}

/// The device expansion of [`static_shared!`](crate::static_shared).
#[doc(hidden)]
#[macro_export]
macro_rules! static_shared_device {
    ($name:ident : [$t:ty; $n:expr]) => {{
        let (window, delta) = $crate::static_shared_declare!($name: [$t; $n]);
        let address: u32;
        // SAFETY: `mov` of a `.shared` variable's name yields its shared-window address.
        unsafe {
            ::core::arch::asm!(
                concat!("mov.u32 {a}, ", stringify!($name), ";"),
                a = out(reg32) address,
                options(pure, nomem, nostack),
            );
        }
        // SAFETY: `window + delta` is the generic address of the declaration above, and
        // `address` its shared-window address; it holds `$n` elements of `$t`, aligned for `$t`.
        unsafe {
            $crate::SharedArray::<$t, { $n }>::from_declaration(
                window.wrapping_add(delta as usize).cast::<$t>(),
                address,
            )
        }
    }};
}

/// Declares the `.shared` array `$name` (module-level PTX, `global_asm!`) and evaluates to
/// `(window, delta)`: the generic address of the dynamic shared memory and the distance from
/// it to the declaration, whose generic address is `window.wrapping_add(delta)`. The common
/// part of [`static_shared!`](crate::static_shared) and [`shared_array!`](crate::shared_array)
/// (device build only).
#[doc(hidden)]
#[macro_export]
macro_rules! static_shared_declare {
    ($name:ident : [$t:ty; $n:expr]) => {{
        ::core::arch::global_asm!(
            concat!(".shared .align {align} .b8 ", stringify!($name), "[{bytes}];"),
            align = const if ::core::mem::align_of::<$t>() < 4 { 4 } else { ::core::mem::align_of::<$t>() },
            bytes = const ($n) * ::core::mem::size_of::<$t>(),
        );
        let delta: u64;
        let window = $crate::shared_window();
        // SAFETY: `cvta.to.shared` of the dynamic array's generic address and `mov` of the
        // `.shared` variable's name yield two shared-window addresses; no memory is accessed.
        unsafe {
            ::core::arch::asm!(
                concat!(
                    "cvta.to.shared.u64 {d}, {w};\n\tmov.u64 {s}, ",
                    stringify!($name),
                    ";\n\tsub.s64 {d}, {s}, {d};"
                ),
                w = in(reg64) window.addr() as u64,
                d = out(reg64) delta,
                s = out(reg64) _,
                options(pure, nomem, nostack),
            );
        }
        (window, delta)
    }};
}

/// The device expansion of [`shared_array!`](crate::shared_array): the declaration's generic
/// address as `*mut $t`.
#[doc(hidden)]
#[macro_export]
macro_rules! shared_array_device {
    ($name:ident : [$t:ty; $n:expr]) => {{
        let (window, delta) = $crate::static_shared_declare!($name: [$t; $n]);
        window.wrapping_add(delta as usize).cast::<$t>()
    }};
}
