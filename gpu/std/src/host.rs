//! What the host build sees of the kernels: one typed [`Kernel`] handle per
//! [`#[kernel]`](crate::kernel) function, and the list of them all ([`KERNELS`]).
//!
//! The handle carries the entry's name and, in its type parameter, the kernel's parameter types
//! in order (`&[T]` as [`Slice<T>`]). A host launcher (the `cpu` crate's `Gpu::launch`) accepts
//! an argument tuple only if each argument matches its parameter, so a missing, extra, swapped or
//! mistyped argument does not compile. No CUDA library is involved here: the launcher lives in
//! the host crate.
//!
//! A `#[kernel]` function becomes, on the host, a constant of the same name:
//!
//! ```
//! use gpu_std::host::{Kernel, Slice};
//! use gpu_std::kernel;
//!
//! /// `y[i] = a * x[i]` for `i < x.len()`.
//! ///
//! /// # Safety
//! /// `y` is valid for `x.len()` floats.
//! #[kernel(launch_bounds(256, 4))]
//! pub unsafe fn scale(a: f32, x: &[f32], y: *mut f32) {}
//!
//! let handle: Kernel<(f32, Slice<f32>, *mut f32)> = scale;
//! assert_eq!(handle.name(), "scale");
//! let wire: Vec<(&str, usize)> = handle.info().params.iter().map(|p| (p.name, p.bytes)).collect();
//! assert_eq!(wire, [("a", 4), ("x_ptr", 8), ("x_len", 8), ("y", 8)]);
//! assert_eq!(handle.info().launch_bounds, Some((256, 4)));
//! assert_eq!(handle.info().min_sm, None);
//!
//! /// Tensor cores: built for sm_70, the entry is there, but its body traps.
//! ///
//! /// # Safety
//! /// `y` is valid for one float.
//! #[kernel(min_sm = 80)]
//! pub unsafe fn ampere_only(y: *mut f32) {}
//! assert_eq!(ampere_only.info().min_sm, Some(80));
//! ```
//!
//! A safe kernel (parameters only scalars, `&[T]` and [`DisjointSlice<T>`](crate::DisjointSlice))
//! gets a [`Safe`] handle; a generic one, a constant per instance and `name::<T>()`:
//!
//! ```
//! use gpu_std::host::{Disjoint, Kernel, Safe, Slice};
//! use gpu_std::{DisjointSlice, kernel};
//!
//! #[kernel]
//! pub fn add(x: &[f32], y: &[f32], mut z: DisjointSlice<f32>) {}
//! let handle: Kernel<(Slice<f32>, Slice<f32>, Disjoint<f32>), Safe> = add;
//!
//! pub trait Num: Copy {}
//! impl Num for f32 {}
//! impl Num for f64 {}
//! impl Num for i32 {}
//!
//! /// # Safety
//! /// `x` is valid for `n` elements.
//! #[kernel(instantiate(T = f32, i32))]
//! pub unsafe fn fill<T: Num>(x: *mut T, n: usize, value: T) {}
//! let f: Kernel<(*mut i32, usize, i32)> = fill_i32;
//! assert_eq!(fill::<f32>().name(), "fill_f32");
//! assert_eq!(f, fill::<i32>());
//!
//! // An associated type of the parameter (read as `<T as Widen>::Out`), a suffix of one's own,
//! // and a const parameter.
//! pub trait Widen: Copy {
//!     type Out: Copy;
//! }
//! impl Widen for f32 {
//!     type Out = f64;
//! }
//! #[derive(Clone, Copy)]
//! pub struct Narrow;
//! impl Widen for Narrow {
//!     type Out = f32;
//! }
//! /// # Safety
//! /// `out` is valid for one value.
//! #[kernel(instantiate(T = f32, Narrow as same))]
//! pub unsafe fn widen<T: Widen>(out: *mut T::Out) {}
//! let w: Kernel<(*mut f64,)> = widen_f32;
//! let s: Kernel<(*mut f32,)> = widen_same;
//! assert_eq!((w.name(), s.name()), ("widen_f32", "widen_same"));
//!
//! /// # Safety
//! /// Blocks of `B` threads.
//! #[kernel(instantiate(B = 64, 128))]
//! pub unsafe fn tree<const B: usize>(x: *mut f32) {}
//! assert_eq!([tree_64.name(), tree_128.name()], ["tree_64", "tree_128"]);
//! ```
//!
//! A type the list does not name:
//!
//! ```compile_fail,E0277
//! pub trait Num: Copy {}
//! impl Num for f32 {}
//! impl Num for f64 {}
//! /// # Safety
//! /// `x` is valid for `n` elements.
//! #[gpu_std::kernel(instantiate(T = f32))]
//! pub unsafe fn fill<T: Num>(x: *mut T, n: usize, value: T) {}
//! let k = fill::<f64>();
//! ```
//!
//! A generic kernel without its list:
//!
//! ```compile_fail
//! #[gpu_std::kernel]
//! pub unsafe fn fill<T: Copy>(x: *mut T, n: usize, value: T) {}
//! ```
//!
//! What cannot be a kernel does not compile. A safe `fn` with a raw pointer (its launch would
//! have to promise the pointer's validity):
//!
//! ```compile_fail
//! #[gpu_std::kernel]
//! pub fn add(x: *const f32) {}
//! ```
//!
//! A return value:
//!
//! ```compile_fail
//! #[gpu_std::kernel]
//! pub unsafe fn add(x: *const f32) -> f32 { 0.0 }
//! ```
//!
//! A `&mut [T]` parameter (every thread would hold the same `&mut`):
//!
//! ```compile_fail
//! #[gpu_std::kernel]
//! pub unsafe fn add(x: &mut [f32]) {}
//! ```
//!
//! A parameter that is not `Copy` plain data:
//!
//! ```compile_fail
//! struct Owned(Vec<f32>);
//! #[gpu_std::kernel]
//! pub unsafe fn add(x: Owned) {}
//! ```
//!
//! An architecture rustc does not know:
//!
//! ```compile_fail
//! #[gpu_std::kernel(min_sm = 81)]
//! pub unsafe fn add(x: *const f32) {}
//! ```
//!
//! Launch bounds out of range:
//!
//! ```compile_fail
//! #[gpu_std::kernel(launch_bounds(2048, 1))]
//! pub unsafe fn add(x: *const f32) {}
//! ```
//!
//! The body is compiled on the host too (never run there), so `cargo check` reports its errors
//! without a PTX build. A type error inside a kernel:
//!
//! ```compile_fail,E0308
//! use gpu_std::{DisjointSlice, grid_stride};
//! #[gpu_std::kernel]
//! pub fn scale(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
//!     for i in grid_stride(y.len()) {
//!         let xi: u32 = x[i.get()];
//!         if let Some(yi) = y.get_mut(&i) {
//!             *yi = a * xi;
//!         }
//!     }
//! }
//! ```
//!
//! An `unsafe` operation outside an `unsafe` block of a safe kernel:
//!
//! ```compile_fail,E0133
//! #[gpu_std::kernel]
//! pub fn first(x: &[f32], mut y: gpu_std::DisjointSlice<f32>) {
//!     let v = *x.as_ptr();
//! }
//! ```
//!
//! In a generic kernel (checked as its first instance, here `T = f32`):
//!
//! ```compile_fail,E0599
//! pub trait Num: Copy {}
//! impl Num for f32 {}
//! /// # Safety
//! /// `x` is valid for `n` elements.
//! #[gpu_std::kernel(instantiate(T = f32))]
//! pub unsafe fn fill<T: Num>(x: *mut T, n: usize, value: T) {
//!     value.no_such_method();
//! }
//! ```
//!
//! The same kernels written correctly compile on the host:
//!
//! ```
//! use gpu_std::{DisjointSlice, grid_stride};
//! #[gpu_std::kernel]
//! pub fn scale(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
//!     for i in grid_stride(y.len().min(x.len())) {
//!         let xi = x[i.get()];
//!         if let Some(yi) = y.get_mut(&i) {
//!             *yi = a * xi;
//!         }
//!     }
//! }
//! pub trait Num: Copy {}
//! impl Num for f32 {}
//! /// # Safety
//! /// `x` is valid for `n` elements.
//! #[gpu_std::kernel(instantiate(T = f32))]
//! pub unsafe fn fill<T: Num>(x: *mut T, n: usize, value: T) {
//!     for i in 0..n {
//!         // SAFETY: `i < n` (the contract).
//!         unsafe { *x.add(i) = value };
//!     }
//! }
//! ```

mod entries;

use core::fmt;
use core::marker::PhantomData;

pub use entries::{
    EntryMismatch, EntryParam, check_entries, check_entry_sizes, entry_names, entry_params,
};

/// cudarc's traits for a device buffer's element, implemented by `#[derive(DeviceCopy)]` for a
/// struct of the caller's crate (which cudarc's and the kit's crates cannot implement for it).
#[doc(hidden)]
pub use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
#[doc(hidden)]
pub use linkme::{self, distributed_slice};

/// Every kernel of every crate linked into the program, as [`KernelInfo`] (filled at link time
/// by [`#[kernel]`](crate::kernel)); in no particular order.
#[distributed_slice]
pub static KERNELS: [KernelInfo];

/// A kernel's entry as the PTX declares it: name, parameters in order, launch bounds.
#[derive(Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The `.entry` name (the function's name).
    pub name: &'static str,
    /// The PTX parameters in order (a `&[T]` is two: `x_ptr` and `x_len`).
    pub params: &'static [ParamInfo],
    /// `launch_bounds(max_threads, min_blocks)` if the kernel declares them.
    pub launch_bounds: Option<(u32, u32)>,
    /// `min_sm = SM` if the kernel declares it: the oldest architecture it runs on, as `XX`
    /// of `sm_XX` (80 for compute capability 8.0). Built for an older architecture, its entry
    /// has the same parameters but a body that traps, and the host's launch refuses a device
    /// of a lower compute capability before queuing anything.
    pub min_sm: Option<u32>,
    /// The module path the kernel is declared in (`my_kernels::kernels`); its first segment is
    /// the crate ([`KernelInfo::crate_name`]).
    pub module: &'static str,
}

impl KernelInfo {
    /// The crate that declares the kernel: the first segment of [`KernelInfo::module`].
    pub fn crate_name(&self) -> &'static str {
        self.module.split("::").next().unwrap_or(self.module)
    }
}

/// One PTX parameter of a kernel: its name, size and alignment in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The parameter's name in the Rust signature (`x_ptr` / `x_len` for a slice `x`).
    pub name: &'static str,
    /// Size in bytes (8 for pointers and `usize`).
    pub bytes: usize,
    /// Alignment in bytes.
    pub align: usize,
}

/// The parameter type of a `&[T]` kernel parameter in a [`Kernel`]'s signature: passed as a
/// device pointer and a length.
pub struct Slice<T>(PhantomData<*const T>);

/// The parameter type of a [`DisjointSlice<T>`](crate::DisjointSlice) kernel parameter in a
/// [`Kernel`]'s signature: passed as a device pointer and a length, from a buffer the launch
/// borrows mutably.
pub struct Disjoint<T>(PhantomData<*mut T>);

/// The mark of a [`Kernel`] whose launch the types make sound: a safe `fn` under
/// [`#[kernel]`](crate::kernel), whose parameters are all `DeviceCopy` scalars, `&[T]` and
/// [`DisjointSlice<T>`](crate::DisjointSlice). A host launcher may launch it without `unsafe`.
#[derive(Debug, Clone, Copy)]
pub enum Safe {}

/// The mark of a [`Kernel`] declared `unsafe fn`: its launch promises what its `# Safety`
/// section says, which the types cannot check.
#[derive(Debug, Clone, Copy)]
pub enum Unsafe {}

/// A typed handle to one kernel, the host-side twin of a [`#[kernel]`](crate::kernel)
/// function: `Params` is the tuple of its parameter types in order (`&[T]` as [`Slice<T>`]).
///
/// `Safety` is [`Unsafe`] (the default) for an `unsafe fn` kernel and [`Safe`] for a safe one.
///
/// Made only by `#[kernel]` (the constructor is `unsafe`): holding a `Kernel<P>` means the PTX
/// entry [`Kernel::name`] takes exactly the parameters `P`; holding a `Kernel<P, Safe>` means
/// also that any launch of it with arguments of those types is sound.
pub struct Kernel<Params, Safety = Unsafe> {
    info: &'static KernelInfo,
    params: PhantomData<(fn(Params), Safety)>,
}

impl<Params, Safety> Kernel<Params, Safety> {
    /// The handle of the kernel described by `info`.
    ///
    /// # Safety
    /// `Params` lists the PTX entry's parameters in order with the types the device build
    /// declares, and `info` describes the same entry; `Safety` is [`Safe`] only for a kernel
    /// that no launch with arguments of these types can make undefined. `#[kernel]` generates
    /// all three from the function's signature.
    #[doc(hidden)]
    pub const unsafe fn new(info: &'static KernelInfo) -> Self {
        Self {
            info,
            params: PhantomData,
        }
    }

    /// The PTX entry's name.
    pub const fn name(&self) -> &'static str {
        self.info.name
    }

    /// The entry's description (name, PTX parameters, launch bounds).
    pub const fn info(&self) -> &'static KernelInfo {
        self.info
    }
}

impl<P> Kernel<P, Safe> {
    /// The same handle, marked as an `unsafe` kernel's (for code that takes only those).
    pub const fn as_unsafe(self) -> Kernel<P, Unsafe> {
        Kernel {
            info: self.info,
            params: PhantomData,
        }
    }
}

impl<P, S> Clone for Kernel<P, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P, S> Copy for Kernel<P, S> {}

impl<P, S> PartialEq for Kernel<P, S> {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self.info, other.info)
    }
}

impl<P, S> Eq for Kernel<P, S> {}

impl<P, S> fmt::Debug for Kernel<P, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kernel({})", self.info.name)
    }
}
