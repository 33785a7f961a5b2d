//! The attributes of `gpu_std` (re-exported there; use them as `gpu_std::kernel` and
//! `gpu_std::gpu_only`), this project's counterpart of rust-cuda's `cuda_std_macros`.
//!
//! - [`macro@kernel`] turns an `unsafe fn` into a PTX kernel entry in the device build
//!   (`extern "ptx-kernel"`, unmangled: the function's name is the entry's name) and, in the
//!   host build, into a typed handle of the same name that the host launches through.
//! - [`macro@gpu_only`] keeps a function's body in the device build and replaces it with
//!   `unreachable!` on the host, so device-support code type-checks on both sides.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{
    Error, FnArg, Ident, ItemFn, LitInt, Pat, PatType, ReturnType, Token, Type, TypePtr,
    parse_macro_input,
};

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

/// `launch_bounds(MAX_THREADS, MIN_BLOCKS)`, the one argument `#[kernel]` takes.
struct KernelArgs {
    launch_bounds: Option<(LitInt, LitInt)>,
}

impl Parse for KernelArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.is_empty() {
            return Ok(Self {
                launch_bounds: None,
            });
        }
        let name: Ident = input.parse()?;
        if name != "launch_bounds" {
            return Err(Error::new(
                name.span(),
                "expected `launch_bounds(MAX_THREADS, MIN_BLOCKS)`",
            ));
        }
        let inner;
        syn::parenthesized!(inner in input);
        let max_threads: LitInt = inner.parse()?;
        inner.parse::<Token![,]>()?;
        let min_blocks: LitInt = inner.parse()?;
        let _ = inner.parse::<Option<Token![,]>>()?;
        if !inner.is_empty() {
            return Err(inner.error("expected `launch_bounds(MAX_THREADS, MIN_BLOCKS)`"));
        }
        let _ = input.parse::<Option<Token![,]>>()?;
        if !input.is_empty() {
            return Err(input.error("`#[kernel]` takes only `launch_bounds(..)`"));
        }
        let threads: u32 = max_threads.base10_parse()?;
        let blocks: u32 = min_blocks.base10_parse()?;
        if !(1..=1024).contains(&threads) {
            return Err(Error::new(
                max_threads.span(),
                "a block has 1..=1024 threads",
            ));
        }
        if !(1..=64).contains(&blocks) {
            return Err(Error::new(
                min_blocks.span(),
                "launch bounds allow 1..=64 resident blocks per SM",
            ));
        }
        Ok(Self {
            launch_bounds: Some((max_threads, min_blocks)),
        })
    }
}

/// How one kernel parameter travels: as itself, or a `&[T]` as pointer and length.
enum Param {
    /// A scalar (`Copy` plain data) or a raw pointer, passed as written.
    Plain { name: Ident, ty: Type },
    /// `&[T]`: passed as `*const T` and `usize`, rebuilt into the slice in the kernel.
    Slice { name: Ident, elem: Type },
}

/// Declares a GPU kernel: an `unsafe fn` whose name becomes the PTX entry's name.
///
/// ```ignore
/// use gpu_std::kernel;
///
/// /// `z[i] = x[i] + y[i]`.
/// ///
/// /// # Safety
/// /// `z` is valid for `x.len()` floats and `y.len() >= x.len()`.
/// #[kernel]
/// pub unsafe fn add(x: &[f32], y: &[f32], z: *mut f32) { /* ... */ }
///
/// #[kernel(launch_bounds(256, 3))]
/// pub unsafe fn heavy(input: *const f32, output: *mut f32, n: usize) { /* ... */ }
/// ```
///
/// In the device build (`target_arch = "nvptx64"`) the function is emitted as
/// `#[unsafe(no_mangle)] pub unsafe extern "ptx-kernel" fn`. In the host build the body is
/// dropped and a constant of the same name is emitted instead: a `gpu_std::host::Kernel` whose
/// type records the parameter types in order, which the host's launcher matches argument by
/// argument at compile time; the constant is also listed in `gpu_std::host::KERNELS` for the
/// check of the built PTX against the signatures.
///
/// Parameters may be `Copy` scalars (implementing `gpu_std::DeviceCopy`), raw pointers
/// (`*const T`, `*mut T`), and shared slices `&[T]`, which travel as a pointer and a length
/// (two PTX parameters, `name_ptr` then `name_len`) and are rebuilt in the kernel. Refused at
/// compile time: a return value, a safe `fn`, generics, `self`, `&mut` parameters (every
/// thread would hold the same `&mut`), other references, and parameters that are not `Copy`.
///
/// `launch_bounds(MAX_THREADS, MIN_BLOCKS)` is CUDA's `__launch_bounds__`: the kernel is
/// launched with at most `MAX_THREADS` (1..=1024) threads per block and its registers leave
/// room for `MIN_BLOCKS` (1..=64) resident blocks per SM. It becomes the entry's `.maxntid` and
/// `.minnctapersm` directives (through a marker the PTX builder rewrites: rustc's nvptx backend
/// has no attribute for them).
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = parse_macro_input!(attr as KernelArgs);
    let func = parse_macro_input!(item as ItemFn);
    match expand_kernel(args, func) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand_kernel(args: KernelArgs, func: ItemFn) -> syn::Result<TokenStream2> {
    let sig = &func.sig;
    if sig.unsafety.is_none() {
        return Err(Error::new(
            sig.fn_token.span(),
            "a kernel is an `unsafe fn`: its launch must promise what the types cannot \
             (pointer validity, sizes, launch shape); write `pub unsafe fn`",
        ));
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        return Err(Error::new(
            ty.span(),
            "a kernel returns nothing: write results through a pointer parameter",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(Error::new(
            sig.generics.span(),
            "a kernel cannot be generic: write a generic body and one `#[kernel]` per \
             instance (a `macro_rules!` can stamp them out)",
        ));
    }
    if let Some(abi) = &sig.abi {
        return Err(Error::new(
            abi.span(),
            "`#[kernel]` writes the PTX kernel ABI itself: leave out `extern`",
        ));
    }
    if sig.asyncness.is_some() || sig.constness.is_some() || sig.variadic.is_some() {
        return Err(Error::new(
            sig.span(),
            "a kernel is a plain `unsafe fn` (not async, const or variadic)",
        ));
    }
    if let Some(attr) = func
        .attrs
        .iter()
        .find(|a| a.path().is_ident("no_mangle") || a.path().is_ident("unsafe"))
    {
        return Err(Error::new(
            attr.span(),
            "`#[kernel]` exports the entry itself: remove `#[no_mangle]`",
        ));
    }

    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) => {
                return Err(Error::new(r.span(), "a kernel takes no `self`"));
            }
            FnArg::Typed(pt) => params.push(param(pt)?),
        }
    }

    let gpu_std = gpu_std_path();
    let attrs = &func.attrs;
    let vis = &func.vis;
    let name = &sig.ident;
    let body = &func.block;

    // Device build: the entry, with slices rebuilt from their pointer and length.
    let wire_params = params.iter().map(|p| match p {
        Param::Plain { name, ty } => quote!(#name: #ty),
        Param::Slice { name, elem } => {
            let (ptr, len) = wire_names(name);
            quote!(#ptr: *const #elem, #len: usize)
        }
    });
    let rebuild = params.iter().filter_map(|p| match p {
        Param::Slice { name, elem } => {
            let (ptr, len) = wire_names(name);
            Some(quote! {
                let #name: &[#elem] = if #len == 0 {
                    &[]
                } else {
                    // SAFETY: the launch's contract (`# Safety` above) makes `ptr` valid for
                    // `len` elements of the slice's type for the whole launch, unmodified.
                    unsafe { ::core::slice::from_raw_parts(#ptr, #len) }
                };
            })
        }
        Param::Plain { .. } => None,
    });
    let bounds = args
        .launch_bounds
        .as_ref()
        .map(|(threads, blocks)| quote!(#gpu_std::launch_bounds!(#threads, #blocks);));
    let stmts = &body.stmts;

    // Host build: the handle, typed by the parameters in order.
    let sig_types = params.iter().map(|p| match p {
        Param::Plain { ty, .. } => quote!(#ty),
        Param::Slice { elem, .. } => quote!(#gpu_std::host::Slice<#elem>),
    });
    let infos = params.iter().map(|p| match p {
        Param::Plain { name, ty } => {
            let n = name.to_string();
            quote!(#gpu_std::host::ParamInfo {
                name: #n,
                bytes: ::core::mem::size_of::<#ty>(),
                align: ::core::mem::align_of::<#ty>(),
            })
        }
        Param::Slice { name, elem } => {
            let (ptr, len) = wire_names(name);
            let (p, l) = (ptr.to_string(), len.to_string());
            quote!(
                #gpu_std::host::ParamInfo {
                    name: #p,
                    bytes: ::core::mem::size_of::<*const #elem>(),
                    align: ::core::mem::align_of::<*const #elem>(),
                },
                #gpu_std::host::ParamInfo {
                    name: #l,
                    bytes: ::core::mem::size_of::<usize>(),
                    align: ::core::mem::align_of::<usize>(),
                }
            )
        }
    });
    let copy_checks = params.iter().map(|p| match p {
        Param::Plain { ty, .. } => {
            if matches!(ty, Type::Ptr(_)) {
                quote_spanned!(ty.span()=> __gpu_std_kernel_param_is_copy::<#ty>();)
            } else {
                quote_spanned!(ty.span()=> __gpu_std_kernel_param_is_device_copy::<#ty>();)
            }
        }
        Param::Slice { elem, .. } => {
            quote_spanned!(elem.span()=> __gpu_std_kernel_param_is_copy::<#elem>();)
        }
    });
    let entry = name.to_string();
    let info = format_ident!("__GPU_STD_KERNEL_{}", name);
    let bounds_info = match &args.launch_bounds {
        Some((threads, blocks)) => quote!(::core::option::Option::Some((#threads, #blocks))),
        None => quote!(::core::option::Option::None),
    };

    Ok(quote! {
        #[cfg(target_arch = "nvptx64")]
        #(#attrs)*
        #[unsafe(no_mangle)]
        #vis unsafe extern "ptx-kernel" fn #name(#(#wire_params),*) {
            #bounds
            #(#rebuild)*
            #(#stmts)*
        }

        // Parameters are copied into the launch's parameter space: they must be `Copy`, and
        // scalars plain device data.
        const _: () = {
            fn __gpu_std_kernel_param_is_copy<T: ::core::marker::Copy>() {}
            fn __gpu_std_kernel_param_is_device_copy<T: #gpu_std::DeviceCopy>() {}
            #[allow(dead_code)]
            fn __gpu_std_kernel_params() {
                #(#copy_checks)*
            }
        };

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        #[#gpu_std::host::distributed_slice(#gpu_std::host::KERNELS)]
        #[linkme(crate = #gpu_std::host::linkme)]
        static #info: #gpu_std::host::KernelInfo = #gpu_std::host::KernelInfo {
            name: #entry,
            params: &[#(#infos),*],
            launch_bounds: #bounds_info,
            module: ::core::module_path!(),
        };

        #[cfg(not(target_arch = "nvptx64"))]
        #(#attrs)*
        #[allow(non_upper_case_globals)]
        #vis const #name: #gpu_std::host::Kernel<(#(#sig_types,)*)> =
            // SAFETY: the parameter types are the kernel's, in order, as the device build
            // declares them (generated from the same signature).
            unsafe { #gpu_std::host::Kernel::new(&#info) };
    })
}

/// The PTX parameter names of a slice parameter: `name_ptr` and `name_len`.
fn wire_names(name: &Ident) -> (Ident, Ident) {
    (format_ident!("{}_ptr", name), format_ident!("{}_len", name))
}

fn param(pt: &PatType) -> syn::Result<Param> {
    let name = match &*pt.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
        other => {
            return Err(Error::new(
                other.span(),
                "a kernel parameter is a plain name (`x: *const f32`)",
            ));
        }
    };
    match &*pt.ty {
        Type::Reference(r) => {
            if r.mutability.is_some() {
                return Err(Error::new(
                    r.span(),
                    "a kernel cannot take `&mut`: every thread of the grid would hold the same \
                     `&mut`; take `*mut T` and state in `# Safety` which thread writes where",
                ));
            }
            match &*r.elem {
                Type::Slice(s) => Ok(Param::Slice {
                    name,
                    elem: (*s.elem).clone(),
                }),
                other => Err(Error::new(
                    other.span(),
                    "a kernel takes `&[T]` slices, raw pointers and `Copy` scalars; \
                     for one value pass it by value or as `*const T`",
                )),
            }
        }
        Type::Ptr(TypePtr { .. }) => Ok(Param::Plain {
            name,
            ty: (*pt.ty).clone(),
        }),
        Type::Slice(_) | Type::ImplTrait(_) | Type::TraitObject(_) | Type::Infer(_) => {
            Err(Error::new(
                pt.ty.span(),
                "not a kernel parameter type: use `&[T]`, raw pointers or `Copy` scalars",
            ))
        }
        _ => Ok(Param::Plain {
            name,
            ty: (*pt.ty).clone(),
        }),
    }
}

/// Keeps a function's body in the device build (`target_arch = "nvptx64"`) and gives it an
/// `unreachable!` body on the host, where the device intrinsics it uses do not exist.
///
/// So device-support functions (and kernel helpers built on inline PTX) exist with the same
/// signature in both builds: code that calls them type-checks on the host, and the host build
/// of a kernel crate links (its kernels' bodies are never compiled there; see
/// [`macro@kernel`]). Calling one on the host panics.
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
