//! `__constant__` memory: a small read-only array in device memory, cached per SM and broadcast
//! to a warp in one transaction when all its lanes read the same address.
//!
//! Declared once with [`constant_memory!`](crate::constant_memory), which works on both
//! targets: the host sees the symbol name and size (to write it through the driver's
//! `cuModuleGetGlobal`, CUDA's `cudaMemcpyToSymbol`), the device build also gets the PTX
//! `.const` declaration and a `read` function.

/// Declares a `__constant__` array shared by host and device.
///
/// `constant_memory!(pub C_COEFFICIENTS: [f32; 8]);` defines a unit struct `C_COEFFICIENTS` with
/// - `SYMBOL`: the PTX symbol name (here `"C_COEFFICIENTS"`), for the host's symbol copy;
/// - `LEN` (elements) and `BYTES` (size in bytes);
/// - on the device, `C_COEFFICIENTS::read(i) -> f32`, a `ld.const` of element `i`
///   (traps if `i >= LEN`);
/// - an implementation of [`ConstantSymbol`](crate::ConstantSymbol), by which the host writes
///   and reads the array with its types checked (`gpu_host::Module::write_constant`).
///
/// Element types: `f32`, `i32`, `u32`, `f64`, `i64`, `u64`. Total constant memory per module is
/// 64 KiB. The array starts zeroed when the module is loaded.
#[macro_export]
macro_rules! constant_memory {
    ($(#[$meta:meta])* $vis:vis $name:ident : [$t:ty; $n:expr]) => {
        $(#[$meta])*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug)]
        $vis struct $name;

        impl $name {
            /// PTX symbol name, for `cuModuleGetGlobal` (CUDA: `cudaMemcpyToSymbol`).
            pub const SYMBOL: &'static str = stringify!($name);
            /// Number of elements.
            pub const LEN: usize = $n;
            /// Size in bytes.
            pub const BYTES: usize = ($n) * ::core::mem::size_of::<$t>();
        }

        impl $crate::ConstantSymbol for $name {
            type Element = $t;
            const SYMBOL: &'static str = stringify!($name);
            const LEN: usize = $n;
        }

        #[cfg(target_arch = "nvptx64")]
        ::core::arch::global_asm!(
            concat!(".visible .const .align 8 .b8 ", stringify!($name), "[{bytes}];"),
            bytes = const ($n) * ::core::mem::size_of::<$t>(),
        );

        impl $name {
            /// Reads element `i` with `ld.const` (traps if `i >= LEN`).
            #[inline(always)]
            #[$crate::gpu_only]
            pub fn read(i: usize) -> $t {
                assert!(i < $n);
                let base: u64;
                // SAFETY: `mov` of a `.const` variable yields its address in the constant
                // state space; no memory is accessed.
                unsafe {
                    ::core::arch::asm!(
                        concat!("mov.u64 {a}, ", stringify!($name), ";"),
                        a = out(reg64) base,
                        options(pure, nomem, nostack),
                    );
                }
                let address = base + (i * ::core::mem::size_of::<$t>()) as u64;
                // SAFETY: `i < LEN`, so `address` lies inside the declaration above.
                unsafe { <$t as $crate::ConstWord>::load_const(address) }
            }
        }
    };
}

/// A `__constant__` array declared with [`constant_memory!`](crate::constant_memory): its
/// symbol, element type and length, by which the host writes and reads it with types checked
/// (`gpu_host::Module::write_constant(C_COEFFICIENTS, &values)`, CUDA's
/// `cudaMemcpyToSymbol(c_coefficients, values, sizeof values)`).
pub trait ConstantSymbol: Copy {
    /// The element type.
    type Element: ConstWord + crate::DeviceCopy;
    /// The PTX symbol name.
    const SYMBOL: &'static str;
    /// Number of elements.
    const LEN: usize;
    /// Size in bytes.
    const BYTES: usize = Self::LEN * core::mem::size_of::<Self::Element>();
}

/// Element types that [`constant_memory!`](crate::constant_memory) arrays can hold.
pub trait ConstWord: Copy {
    /// `ld.const` of one element.
    ///
    /// # Safety
    /// `address` is a constant-state-space address inside a `.const` declaration, aligned for `Self`.
    unsafe fn load_const(address: u64) -> Self;
}

macro_rules! const_word {
    ($t:ty, $ptx:literal, $class:ident) => {
        impl ConstWord for $t {
            #[inline(always)]
            #[crate::gpu_only]
            unsafe fn load_const(address: u64) -> Self {
                let value: $t;
                // SAFETY: the caller passes an in-bounds, aligned constant-space address;
                // constant memory does not change during a launch, hence `pure, readonly`.
                unsafe {
                    core::arch::asm!(concat!("ld.const.", $ptx, " {v}, [{a}];"),
                        v = out($class) value, a = in(reg64) address,
                        options(pure, readonly, nostack));
                }
                value
            }
        }
    };
}

const_word!(f32, "f32", reg32);
const_word!(i32, "s32", reg32);
const_word!(u32, "u32", reg32);
const_word!(f64, "f64", reg64);
const_word!(i64, "s64", reg64);
const_word!(u64, "u64", reg64);
