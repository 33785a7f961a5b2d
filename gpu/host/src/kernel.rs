//! Typed kernel launches: a [`Kernel`] handle (made by `#[kernel]` from the kernel's signature)
//! and an argument tuple whose elements must match the kernel's parameters one by one:
//!
//! | kernel parameter | argument |
//! |---|---|
//! | `*const T` | `&impl DevicePtr<T>` (a `CudaSlice<T>`, `CudaView<T>`, ...) |
//! | `*mut T` | `&mut impl DevicePtrMut<T>` |
//! | `&[T]` ([`Slice<T>`]) | `&impl DevicePtr<T>`; its length is passed for you |
//! | `DisjointSlice<T>` ([`Disjoint<T>`]) | `&mut impl DevicePtrMut<T>`; its length is passed for you |
//! | a scalar `S` (`DeviceCopy`) | the value, of type `S` exactly |
//! | `*const T`, `&[T]` / `*mut T`, `DisjointSlice<T>` | a [`Bound`] from [`Device::bind`](crate::Device::bind) / [`Device::bind_mut`](crate::Device::bind_mut) (its address read before the launch) |
//!
//! A missing or extra argument, two swapped arguments of different types, a buffer of the wrong
//! element type, or a shared view where the kernel writes does not compile: the error shows the
//! argument tuple beside the kernel's parameter tuple, and a wrong count also as "expected `3`,
//! found `4`" ([`Arguments`]). A safe kernel
//! ([`Kernel<_, Safe>`](Kernel)) is launched without `unsafe` ([`Module::launch`](crate::Module::launch));
//! one buffer passed as an input and an output, or as two outputs, does not compile (the borrows
//! conflict). [`KernelArgs::queue`] is the one place that calls cudarc's launch builder.

use std::marker::PhantomData;
use std::sync::Arc;

use crate::error::{DriverContext, Error, Result};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice,
    DriverError, LaunchArgs, LaunchConfig, PushKernelArg, SyncOnDrop,
    sys::{CUcontext, CUdeviceptr},
};
pub use gpu_std::DeviceCopy;
pub use gpu_std::host::{Disjoint, KERNELS, Kernel, KernelInfo, ParamInfo, Safe, Slice, Unsafe};

/// `len` elements of `T` at a raw device address: memory that is not a cudarc buffer (mapped
/// host memory, through the device pointer `cuMemHostGetDevicePointer` gives), or a part of a
/// buffer whose use the caller records itself (a chunk of a buffer held across several
/// streams). Passing it to a launch records nothing on any stream.
pub struct DeviceAddress<'s, T> {
    ptr: CUdeviceptr,
    len: usize,
    stream: &'s Arc<CudaStream>,
    element: PhantomData<*const T>,
}

impl<'s, T> DeviceAddress<'s, T> {
    /// `len` elements of `T` at `ptr`, used on `stream`.
    ///
    /// # Safety
    /// While the value lives, `ptr` is valid for `len` elements of `T` in `stream`'s context
    /// (aligned for `T`), and the caller orders every use of that memory by other streams and
    /// by the host (nothing is recorded for it).
    pub unsafe fn new(ptr: CUdeviceptr, len: usize, stream: &'s Arc<CudaStream>) -> Self {
        Self {
            ptr,
            len,
            stream,
            element: PhantomData,
        }
    }
}

impl<T> DeviceSlice<T> for DeviceAddress<'_, T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.stream
    }
}

impl<T> DevicePtr<T> for DeviceAddress<'_, T> {
    fn device_ptr<'b>(&'b self, _stream: &'b CudaStream) -> (CUdeviceptr, SyncOnDrop<'b>) {
        (self.ptr, SyncOnDrop::Record(None))
    }
}

impl<T> DevicePtrMut<T> for DeviceAddress<'_, T> {
    fn device_ptr_mut<'b>(&'b mut self, _stream: &'b CudaStream) -> (CUdeviceptr, SyncOnDrop<'b>) {
        (self.ptr, SyncOnDrop::Record(None))
    }
}

/// A buffer's device address taken once for one launch ([`Device::bind`](crate::Device::bind),
/// [`Device::bind_mut`](crate::Device::bind_mut)): read [`Bound::address`] for the checks a launcher
/// makes (alignment), then pass the `Bound` itself as the argument. Taking the address of a
/// cudarc buffer queues a wait for its last writer and, once the launch is queued, records the
/// use; binding does that once where reading the address and then passing the buffer would do
/// it twice.
pub struct Bound<'s, T, Access> {
    ptr: CUdeviceptr,
    len: usize,
    context: CUcontext,
    guard: SyncOnDrop<'s>,
    access: PhantomData<(*const T, Access)>,
}

/// [`Bound`] for reading: passes as `*const T` or `&[T]`.
pub struct Read;
/// [`Bound`] for writing: passes as `*mut T`.
pub struct Write;

impl<'s, T> Bound<'s, T, Read> {
    /// `buffer` bound for reading by one launch on `stream`.
    pub fn read(buffer: &'s impl DevicePtr<T>, stream: &'s CudaStream) -> Self {
        let len = buffer.len();
        let context = buffer.stream().context().cu_ctx();
        let (ptr, guard) = buffer.device_ptr(stream);
        Self {
            ptr,
            len,
            context,
            guard,
            access: PhantomData,
        }
    }
}

impl<'s, T> Bound<'s, T, Write> {
    /// `buffer` bound for writing by one launch on `stream`.
    pub fn write(buffer: &'s mut impl DevicePtrMut<T>, stream: &'s CudaStream) -> Self {
        let len = buffer.len();
        let context = buffer.stream().context().cu_ctx();
        let (ptr, guard) = buffer.device_ptr_mut(stream);
        Self {
            ptr,
            len,
            context,
            guard,
            access: PhantomData,
        }
    }
}

impl<T, A> Bound<'_, T, A> {
    /// The device address where the buffer starts (the view's offset included).
    pub fn address(&self) -> CUdeviceptr {
        self.ptr
    }

    /// The buffer's length in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One argument of a launch, matching the kernel parameter type `P`.
///
/// Implemented for the forms in the [module table](self) only; [`Module::launch`] takes a tuple
/// of them ([`KernelArgs`]).
///
/// [`Module::launch`]: crate::Module::launch
pub trait KernelArg<'s, P> {
    /// What travels to the launch: the argument's bytes, and the guard that records the
    /// buffer's use on the stream once the launch is queued.
    type Wire: Wire;
    /// The wire form of this argument for a launch on `stream`.
    fn wire(self, stream: &'s CudaStream) -> Self::Wire;
    /// The context of the device memory it names (`None` for a scalar), which a safe launch
    /// checks against its own.
    fn context(&self) -> Option<CUcontext>;
}

/// The bytes of one or more kernel parameters, ready to be pushed onto a launch.
pub trait Wire {
    /// Appends the parameters to `args`, by reference (they live in `self`).
    fn push<'a>(&'a self, args: &mut LaunchArgs<'a>);
}

/// A device pointer and the guard that records its use after the launch.
pub struct PtrWire<'s> {
    ptr: CUdeviceptr,
    _guard: SyncOnDrop<'s>,
}

impl Wire for PtrWire<'_> {
    fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        args.arg(&self.ptr);
    }
}

/// A device pointer and a length (a `&[T]` parameter).
pub struct SliceWire<'s> {
    ptr: CUdeviceptr,
    len: usize,
    _guard: SyncOnDrop<'s>,
}

impl Wire for SliceWire<'_> {
    fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        args.arg(&self.ptr);
        args.arg(&self.len);
    }
}

/// A scalar parameter, copied as it is.
#[repr(transparent)]
pub struct ScalarWire<T>(T);

// SAFETY: `T: DeviceCopy` is plain `#[repr(C)]` (or primitive) data with one layout on host and
// device; `ScalarWire` is transparent over it.
unsafe impl<T: DeviceCopy> DeviceRepr for ScalarWire<T> {}

impl<T: DeviceCopy> Wire for ScalarWire<T> {
    fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        args.arg(self);
    }
}

impl<'s, T, A: DevicePtr<T>> KernelArg<'s, *const T> for &'s A {
    type Wire = PtrWire<'s>;
    fn wire(self, stream: &'s CudaStream) -> PtrWire<'s> {
        let (ptr, guard) = self.device_ptr(stream);
        PtrWire { ptr, _guard: guard }
    }
    fn context(&self) -> Option<CUcontext> {
        Some(self.stream().context().cu_ctx())
    }
}

impl<'s, T, A: DevicePtrMut<T>> KernelArg<'s, *mut T> for &'s mut A {
    type Wire = PtrWire<'s>;
    fn wire(self, stream: &'s CudaStream) -> PtrWire<'s> {
        let (ptr, guard) = self.device_ptr_mut(stream);
        PtrWire { ptr, _guard: guard }
    }
    fn context(&self) -> Option<CUcontext> {
        Some(self.stream().context().cu_ctx())
    }
}

impl<'s, T, A: DevicePtr<T>> KernelArg<'s, Slice<T>> for &'s A {
    type Wire = SliceWire<'s>;
    fn wire(self, stream: &'s CudaStream) -> SliceWire<'s> {
        let len = self.len();
        let (ptr, guard) = self.device_ptr(stream);
        SliceWire {
            ptr,
            len,
            _guard: guard,
        }
    }
    fn context(&self) -> Option<CUcontext> {
        Some(self.stream().context().cu_ctx())
    }
}

impl<'s, T, A: DevicePtrMut<T>> KernelArg<'s, Disjoint<T>> for &'s mut A {
    type Wire = SliceWire<'s>;
    fn wire(self, stream: &'s CudaStream) -> SliceWire<'s> {
        let len = self.len();
        let (ptr, guard) = self.device_ptr_mut(stream);
        SliceWire {
            ptr,
            len,
            _guard: guard,
        }
    }
    fn context(&self) -> Option<CUcontext> {
        Some(self.stream().context().cu_ctx())
    }
}

impl<'s, T> KernelArg<'s, Disjoint<T>> for Bound<'s, T, Write> {
    type Wire = SliceWire<'s>;
    fn wire(self, _stream: &'s CudaStream) -> SliceWire<'s> {
        SliceWire {
            ptr: self.ptr,
            len: self.len,
            _guard: self.guard,
        }
    }
    fn context(&self) -> Option<CUcontext> {
        Some(self.context)
    }
}

impl<'s, T> KernelArg<'s, *const T> for Bound<'s, T, Read> {
    type Wire = PtrWire<'s>;
    fn wire(self, _stream: &'s CudaStream) -> PtrWire<'s> {
        PtrWire {
            ptr: self.ptr,
            _guard: self.guard,
        }
    }
    fn context(&self) -> Option<CUcontext> {
        Some(self.context)
    }
}

impl<'s, T> KernelArg<'s, Slice<T>> for Bound<'s, T, Read> {
    type Wire = SliceWire<'s>;
    fn wire(self, _stream: &'s CudaStream) -> SliceWire<'s> {
        SliceWire {
            ptr: self.ptr,
            len: self.len,
            _guard: self.guard,
        }
    }
    fn context(&self) -> Option<CUcontext> {
        Some(self.context)
    }
}

impl<'s, T> KernelArg<'s, *mut T> for Bound<'s, T, Write> {
    type Wire = PtrWire<'s>;
    fn wire(self, _stream: &'s CudaStream) -> PtrWire<'s> {
        PtrWire {
            ptr: self.ptr,
            _guard: self.guard,
        }
    }
    fn context(&self) -> Option<CUcontext> {
        Some(self.context)
    }
}

impl<'s, T: DeviceCopy> KernelArg<'s, T> for T {
    type Wire = ScalarWire<T>;
    fn wire(self, _stream: &'s CudaStream) -> ScalarWire<T> {
        ScalarWire(self)
    }
    fn context(&self) -> Option<CUcontext> {
        None
    }
}

/// Checks that every buffer among `args` is device memory of `context`: what a safe launch
/// checks before it queues a [`Kernel<_, Safe>`](Kernel) ([`Module::launch`](crate::Module::launch)).
///
/// # Errors
/// [`Error::ForeignArgument`] naming `kernel` and the first argument of another context.
pub fn check_arguments<'s, P, S, A: KernelArgs<'s, P>>(
    kernel: Kernel<P, S>,
    context: CUcontext,
    args: &A,
) -> Result<()> {
    match args.foreign_argument(context) {
        Some(position) => Err(Error::ForeignArgument {
            kernel: kernel.name(),
            position,
        }),
        None => Ok(()),
    }
}

/// Queues `kernel`, whose function on `stream`'s context is `f`, with `cfg` and `args`, then
/// records the buffers' use: the typed launch every launcher ends in (a [`Module`]'s, and a host
/// library's over a module it keeps itself).
///
/// # Safety
/// `f` is the function of `kernel`'s entry in a PTX whose parameters are the handle's; every
/// buffer is device memory of `stream`'s context; and the launch meets the kernel's contract
/// (nothing more for a [`Kernel<_, Safe>`](Kernel): its types prove it).
///
/// # Errors
/// [`Error::ArchTooOld`] for a kernel the device is too old for ([`check_arch`]);
/// [`Error::Driver`] naming the kernel if the driver refuses the launch (a `cfg` beyond the
/// device's limits).
///
/// [`Module`]: crate::Module
pub unsafe fn launch_function<'s, P, S, A: KernelArgs<'s, P>>(
    stream: &'s CudaStream,
    f: &CudaFunction,
    kernel: Kernel<P, S>,
    cfg: LaunchConfig,
    args: A,
) -> Result<()> {
    check_arch(stream.context(), kernel.info())?;
    // SAFETY: the caller's contract above.
    unsafe { args.queue(stream, f, cfg) }.during_with(|| format!("launching {}", kernel.name()))
}

/// Refuses a kernel declared `#[kernel(min_sm = SM)]` ([`KernelInfo::min_sm`]) on a device of
/// a lower compute capability, whose entry is a trap there; every launch of this crate checks it
/// before queuing anything. A kernel without `min_sm` costs nothing (no driver call).
///
/// # Errors
/// [`Error::ArchTooOld`] naming the kernel, its minimum and the device's architecture;
/// [`Error::Driver`] if the compute capability cannot be read.
pub fn check_arch(context: &CudaContext, info: &KernelInfo) -> Result<()> {
    let Some(min_sm) = info.min_sm else {
        return Ok(());
    };
    let (major, minor) = context
        .compute_capability()
        .during("reading the compute capability")?;
    let device_sm = (major.max(0) * 10 + minor.max(0)) as u32;
    if device_sm < min_sm {
        return Err(Error::ArchTooOld {
            kernel: info.name,
            min_sm,
            device_sm,
        });
    }
    Ok(())
}

/// The whole argument list of a launch: a tuple whose elements match the kernel's parameters
/// `P` (a tuple of the same length) one by one.
#[diagnostic::on_unimplemented(
    message = "these launch arguments do not match the kernel's parameters",
    label = "the arguments `{Self}` for a kernel whose parameters are `{P}`",
    note = "a launch passes one argument per kernel parameter, in order, as a tuple of as many \
            elements: `&buffer` for `&[T]` and `*const T`, `&mut buffer` for `DisjointSlice<T>` \
            and `*mut T`, the value for a scalar of exactly its type (`gpu_host::kernel`); \
            count the elements of both tuples above, then compare them one by one"
)]
pub trait KernelArgs<'s, P> {
    /// The position of the first argument whose device memory is not in `context` (a safe
    /// launch refuses it: [`Error::ForeignArgument`]).
    fn foreign_argument(&self, context: CUcontext) -> Option<usize>;

    /// Queues `f`, the function of the kernel whose parameters are `P`, with these arguments on
    /// `stream` (the one generic launch path: [`Module::launch`](crate::Module::launch),
    /// [`Module::launch_unchecked`](crate::Module::launch_unchecked) and a host library's own
    /// launches come here), then records the buffers' use.
    ///
    /// # Safety
    /// `f` is the entry of a kernel whose parameters are `P`, and the launch meets that kernel's
    /// contract (as [`Module::launch_unchecked`](crate::Module::launch_unchecked)).
    unsafe fn queue(
        self,
        stream: &'s CudaStream,
        f: &CudaFunction,
        cfg: LaunchConfig,
    ) -> Result<(), DriverError>;
}

macro_rules! kernel_args {
    ($(($p:ident, $a:ident, $w:ident)),*) => {
        impl<'s, $($p, $a: KernelArg<'s, $p>),*> KernelArgs<'s, ($($p,)*)> for ($($a,)*) {
            #[allow(non_snake_case, unused_variables, unused_mut, unused_assignments)]
            fn foreign_argument(&self, context: CUcontext) -> Option<usize> {
                let ($($a,)*) = self;
                let mut position = 0;
                $(
                    if $a.context().is_some_and(|c| c != context) {
                        return Some(position);
                    }
                    position += 1;
                )*
                None
            }

            #[allow(non_snake_case, unused_variables, unused_mut)]
            unsafe fn queue(
                self,
                stream: &'s CudaStream,
                f: &CudaFunction,
                cfg: LaunchConfig,
            ) -> Result<(), DriverError> {
                let ($($a,)*) = self;
                // The wires (and their guards) outlive the launch: the guards record the
                // buffers' use on the stream when they drop, after the launch is queued.
                $(let $w = $a.wire(stream);)*
                let mut args = stream.launch_builder(f);
                $($w.push(&mut args);)*
                // SAFETY: the caller's contract (`KernelArgs::queue`); the argument list matches the
                // kernel's parameters by construction of `KernelArg`.
                unsafe { args.launch(cfg) }.map(|_| ())
            }
        }
    };
}

/// [`KernelArgs`] for tuples of every length up to the list's: the whole list, then its tail.
/// A number of launch arguments or kernel parameters as a type, for the launch's count check:
/// a launch of 4 arguments to a kernel of 3 parameters fails to compile with "expected
/// `Arguments<3>`, found `Arguments<4>`" beside the [`KernelArgs`] error.
pub struct Arguments<const N: usize>;

/// The number of elements of a tuple of kernel parameters or launch arguments
/// ([`Arguments<N>`](Arguments)).
pub trait Arity {
    /// `Arguments<N>` for a tuple of `N` elements.
    type Count;
}

macro_rules! arity {
    ($n:expr; $($t:ident),*) => {
        impl<$($t),*> Arity for ($($t,)*) {
            type Count = Arguments<$n>;
        }
    };
}
arity!(0;);
arity!(1; T0);
arity!(2; T0, T1);
arity!(3; T0, T1, T2);
arity!(4; T0, T1, T2, T3);
arity!(5; T0, T1, T2, T3, T4);
arity!(6; T0, T1, T2, T3, T4, T5);
arity!(7; T0, T1, T2, T3, T4, T5, T6);
arity!(8; T0, T1, T2, T3, T4, T5, T6, T7);
arity!(9; T0, T1, T2, T3, T4, T5, T6, T7, T8);
arity!(10; T0, T1, T2, T3, T4, T5, T6, T7, T8, T9);
arity!(11; T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10);
arity!(12; T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11);

macro_rules! kernel_args_up_to {
    () => {
        kernel_args!();
    };
    ($head:tt $(, $tail:tt)*) => {
        kernel_args!($head $(, $tail)*);
        kernel_args_up_to!($($tail),*);
    };
}

kernel_args_up_to!(
    (P11, A11, W11),
    (P10, A10, W10),
    (P9, A9, W9),
    (P8, A8, W8),
    (P7, A7, W7),
    (P6, A6, W6),
    (P5, A5, W5),
    (P4, A4, W4),
    (P3, A3, W3),
    (P2, A2, W2),
    (P1, A1, W1),
    (P0, A0, W0)
);
