//! The attributes of `gpu_std` (re-exported there; use them as `gpu_std::kernel` and
//! `gpu_std::gpu_only`), this project's counterpart of rust-cuda's `cuda_std_macros`.
//!
//! - [`macro@kernel`] turns a `fn` or `unsafe fn` (generic or not) into a PTX kernel entry in the device build
//!   (`extern "ptx-kernel"`, unmangled: the function's name is the entry's name) and, in the
//!   host build, into a typed handle of the same name that the host launches through.
//! - [`macro@gpu_only`] keeps a function's body in the device build and replaces it with
//!   `unreachable!` on the host, so device-support code type-checks on both sides.

mod device_copy;
mod instances;
mod kernel;

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{ToTokens, format_ident, quote};
use syn::{DeriveInput, Error, FnArg, Ident, ItemFn, Pat, Type, parse_macro_input};

/// The path under which the `gpu_std` crate is visible where a macro expands: `::gpu_std` by
/// default (inside `gpu_std` too), or the name a dependency line gave it
/// (`cuda_std = { package = "gpu_std", ... }`).
fn gpu_std_path() -> TokenStream2 {
    use proc_macro_crate::{FoundCrate, crate_name};
    match crate_name("gpu_std") {
        // `gpu_std` names itself `gpu_std` (`extern crate self as gpu_std`), which also covers
        // its doctests, where the package is "itself" but `crate` is the doctest.
        Ok(FoundCrate::Itself) => quote!(::gpu_std),
        Ok(FoundCrate::Name(name)) => {
            let ident = Ident::new(&name, Span::call_site());
            quote!(::#ident)
        }
        Err(_) => quote!(::gpu_std),
    }
}

/// Declares a GPU kernel: a `fn` (safe) or `unsafe fn` whose name becomes the PTX entry's
/// name, or a generic one with the list of its instances.
///
/// ```ignore
/// use gpu_std::{DisjointSlice, kernel, thread_index};
///
/// /// `z[i] = x[i] + y[i]`: safe, every thread writes only its own element.
/// #[kernel]
/// pub fn add(x: &[f32], y: &[f32], mut z: DisjointSlice<f32>) { /* ... */ }
///
/// /// `z[i] = x[i] + y[i]` through a raw output.
/// ///
/// /// # Safety
/// /// `z` is valid for `x.len()` floats and `y.len() >= x.len()`.
/// #[kernel(launch_bounds(256, 3))]
/// pub unsafe fn add_raw(x: &[f32], y: &[f32], z: *mut f32) { /* ... */ }
///
/// /// One entry per type: `sum_f32`, `sum_f64`, `sum_i32`; `sum::<T>()` on the host.
/// #[kernel(instantiate(T = f32, f64, i32))]
/// pub unsafe fn sum<T: Summand>(x: &[T], out: *mut T) { /* ... */ }
/// ```
///
/// In the device build (`target_arch = "nvptx64"`) the function is emitted as
/// `#[unsafe(no_mangle)] pub unsafe extern "ptx-kernel" fn`. In the host build a constant of
/// the same name is emitted instead: a `gpu_std::host::Kernel` whose type records the parameter
/// types in order, which the host's launcher matches argument by argument at compile time; the
/// constant is also listed in `gpu_std::host::KERNELS` for the check of the built PTX against
/// the signatures.
///
/// **Checked on the host.** The host build also compiles the body, as a hidden function in an
/// anonymous `const` that is never called and never code-generated: `cargo check`, `cargo
/// clippy` and rust-analyzer report an error or a lint inside a kernel where it is written,
/// once, without a PTX build. The device functions it calls exist on the host with the same
/// signatures (`#[gpu_only]`, whose host bodies are unreachable). A generic kernel is checked as
/// its first instance; an error only another instance has shows in the device build.
///
/// **Parameters** may be `Copy` scalars (implementing `gpu_std::DeviceCopy`), raw pointers
/// (`*const T`, `*mut T`), shared slices `&[T]` and outputs `DisjointSlice<T>` (recognised by
/// that name), the last two travelling as a pointer and a length (two PTX parameters,
/// `name_ptr` then `name_len`) rebuilt in the kernel. Refused at compile time: a return value,
/// `self`, `&mut` parameters (every thread would hold the same `&mut`), other references,
/// lifetimes, and parameters that are not `Copy`.
///
/// **Safe kernels.** A safe `fn` is allowed when every parameter is a `DeviceCopy` scalar, a
/// `&[T]` or a `DisjointSlice<T>` (with `T: DeviceCopy`): through those types no launch can make
/// the kernel read or write memory it does not own, so its handle is a
/// `Kernel<_, gpu_std::host::Safe>`, which a host launcher launches without `unsafe`. Its body
/// is compiled as a safe function: an `unsafe` operation in it needs an `unsafe` block, whose
/// soundness is then the author's to argue. A raw pointer parameter makes the kernel an
/// `unsafe fn`.
///
/// **Generic kernels.** `instantiate(T = f32, f64, B = 128, 256)` lists the values of every
/// generic parameter (types; integers, `true`/`false` or `{ blocks }` for const parameters);
/// the kernel is emitted once per combination, as the entry `name_<suffix>` and a host constant
/// of that name. A value's suffix is its type's name in snake case (`WideF32` -> `wide_f32`) or
/// the integer, or names itself: `WideF32 as f32_f64`. With one type parameter, the host also
/// gets `const fn name::<T>()`, the handle of `T`'s instance, and any type not in the list is a
/// compile error naming the kernel. Each instance's body is the generic body with `type T =
/// f32;` (or `const B: u32 = 128;`) in front: a `T::Assoc` at the start of a path is read as
/// `<T as Bound>::Assoc` with `T`'s one bound besides the marker traits, and the name of every
/// `static_shared!(NAME: ...)` gets the instance's suffix, so each instance declares its own
/// shared arrays (which can therefore depend on `T`), as a C++ template's `__shared__` does.
///
/// `launch_bounds(MAX_THREADS, MIN_BLOCKS)` is CUDA's `__launch_bounds__`: the kernel is
/// launched with at most `MAX_THREADS` (1..=1024) threads per block and its registers leave
/// room for `MIN_BLOCKS` (1..=64) resident blocks per SM. It becomes the entry's `.maxntid` and
/// `.minnctapersm` directives (through a marker the PTX builder rewrites: rustc's nvptx backend
/// has no attribute for them).
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = parse_macro_input!(attr as kernel::KernelArgs);
    let func = parse_macro_input!(item as ItemFn);
    match kernel::expand_kernel(args, func) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Derives `gpu_std::DeviceCopy` for a `#[repr(C)]` struct of the caller's crate whose every
/// field is `DeviceCopy` (primitives, arrays of them, other derived structs): the struct can then
/// be a kernel's scalar parameter, the element of a `&[T]` / `DisjointSlice<T>` parameter, and,
/// in the host build, the element of device buffers (`gpu_host::Device::upload`, `zeros`,
/// `download`: the derive also implements cudarc's `DeviceRepr` and `ValidAsZeroBits`), all
/// without `unsafe`.
///
/// ```ignore
/// #[derive(Clone, Copy, Debug, Default, PartialEq, gpu_std::DeviceCopy)]
/// #[repr(C)]
/// pub struct Particle {
///     pub position: [f32; 3],
///     pub mass: f32,
/// }
/// ```
///
/// Refused at compile time (the examples are in `gpu_std::DeviceCopy`'s docs): a struct
/// without `#[repr(C)]` or `#[repr(transparent)]`, an enum or a union, and a field that is not
/// `DeviceCopy`.
#[proc_macro_derive(DeviceCopy)]
pub fn derive_device_copy(item: TokenStream) -> TokenStream {
    let input = parse_macro_input!(item as DeriveInput);
    match device_copy::expand(input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Keeps a function's body in the device build (`target_arch = "nvptx64"`) and gives it an
/// `unreachable!` body on the host, where the device intrinsics it uses do not exist.
///
/// So device-support functions (and kernel helpers built on inline PTX) exist with the same
/// signature in both builds: code that calls them type-checks on the host, and the host build
/// of a kernel crate type-checks its kernels' bodies (see [`macro@kernel`]) and links. Calling
/// one on the host panics.
#[proc_macro_attribute]
pub fn gpu_only(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        return Error::new(Span::call_site(), "`#[gpu_only]` takes no arguments")
            .to_compile_error()
            .into();
    }
    let func = parse_macro_input!(item as ItemFn);
    let ItemFn {
        attrs, vis, sig, ..
    } = &func;
    let name = sig.ident.to_string();
    let message = format!("`{name}` runs only on the GPU");
    let mut host_sig = sig.clone();
    // The host body ignores the parameters: name them `_` where they are plain names.
    for input in host_sig.inputs.iter_mut() {
        if let FnArg::Typed(pt) = input
            && let Pat::Ident(p) = &mut *pt.pat
        {
            p.mutability = None;
        }
    }
    let host_attrs = attrs.iter().filter(|a| !a.path().is_ident("inline"));
    let device = func.to_token_stream();
    quote! {
        #[cfg(target_arch = "nvptx64")]
        #device

        #[cfg(not(target_arch = "nvptx64"))]
        #(#host_attrs)*
        #[allow(unused_variables, clippy::missing_safety_doc)]
        #vis #host_sig {
            ::core::unreachable!(#message)
        }
    }
    .into()
}

/// The expansion of `gpu_std::shared_array![T; N]` (which calls it as
/// `__shared_array!($crate; T; N)`): a static shared declaration with a generated name,
/// evaluating to `*mut T`.
///
/// The name is `__gpu_std_shared_array_<crate>_L<line>C<column>_<n>`: the crate and the
/// place of the type as written make it readable in the PTX and distinct across crates, and
/// `n`, a count of the expansions in this compilation of the crate, keeps apart two expansions
/// of one place (a `shared_array!` inside a `macro_rules!` invoked twice), which would
/// otherwise declare the same PTX name twice.
#[doc(hidden)]
#[proc_macro]
pub fn __shared_array(input: TokenStream) -> TokenStream {
    match expand_shared_array(input) {
        Ok(tokens) => tokens,
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand_shared_array(input: TokenStream) -> syn::Result<TokenStream> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static EXPANSIONS: AtomicUsize = AtomicUsize::new(0);

    // `$crate ; T ; N`, split at the top-level semicolons (`$crate` is not a path syn parses).
    let mut parts: Vec<TokenStream2> = vec![TokenStream2::new()];
    for tree in TokenStream2::from(input) {
        match &tree {
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ';' && parts.len() < 3 => {
                parts.push(TokenStream2::new());
            }
            _ => parts.last_mut().expect("one part at least").extend([tree]),
        }
    }
    let [krate, ty, len] = <[TokenStream2; 3]>::try_from(parts)
        .map_err(|_| Error::new(Span::call_site(), "expected `shared_array![TYPE; LENGTH]`"))?;
    // Where the invocation is: the span of the type's first token as the user wrote it (the
    // call site of this macro, and the invisible group `shared_array!` wraps the type in, are
    // in `shared_array!`'s definition).
    let site = first_span(ty.clone())
        .unwrap_or_else(Span::call_site)
        .unwrap();
    let ty: Type = syn::parse2(ty)?;
    let len: syn::Expr = syn::parse2(len)?;

    let crate_name = std::env::var("CARGO_CRATE_NAME")
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect::<String>();
    let n = EXPANSIONS.fetch_add(1, Ordering::Relaxed);
    let name = format_ident!(
        "__gpu_std_shared_array_{}_L{}C{}_{}",
        crate_name,
        site.line(),
        site.column(),
        n
    );
    Ok(quote! {{
        #[cfg(not(target_arch = "nvptx64"))]
        let pointer = #krate::shared::shared_array_host::<#ty, { #len }>();
        #[cfg(target_arch = "nvptx64")]
        let pointer = #krate::shared_array_device!(#name: [#ty; #len]);
        pointer
    }}
    .into())
}

/// The span of the first token of `tokens`, looking inside invisible groups (the ones a
/// `macro_rules!` fragment such as `$t:ty` is forwarded in).
fn first_span(tokens: TokenStream2) -> Option<Span> {
    match tokens.into_iter().next()? {
        proc_macro2::TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::None => {
            first_span(g.stream()).or_else(|| Some(g.span()))
        }
        tree => Some(tree.span()),
    }
}
