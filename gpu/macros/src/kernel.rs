//! The expansion of `#[kernel]`: the PTX entry (device build) and the typed handle (host build)
//! of each instance of a kernel.

use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{
    Attribute, Error, FnArg, GenericArgument, GenericParam, Ident, ItemFn, LitInt, Pat, PatType,
    PathArguments, ReturnType, Token, Type, TypePtr, Visibility,
};

use crate::gpu_std_path;
use crate::instances::{self, Binding, Instance, ParamList, Substitute};

/// `#[kernel(launch_bounds(MAX_THREADS, MIN_BLOCKS), instantiate(T = ...), min_sm = SM)]`, each
/// optional.
pub struct KernelArgs {
    launch_bounds: Option<(LitInt, LitInt)>,
    instantiate: Option<(Span, Vec<ParamList>)>,
    min_sm: Option<LitInt>,
}

/// The architectures `min_sm` takes: those rustc's nvptx backend names as a target feature
/// (`target_feature = "sm_80"` is set when building for sm_80 or newer), from sm_70 (the lab's
/// oldest) up.
const MIN_SM_VALUES: [u32; 15] = [
    70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121,
];

impl Parse for KernelArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut args = Self {
            launch_bounds: None,
            instantiate: None,
            min_sm: None,
        };
        while !input.is_empty() {
            let name: Ident = input.parse()?;
            if name == "min_sm" && args.min_sm.is_none() {
                input.parse::<Token![=]>()?;
                args.min_sm = Some(parse_min_sm(input)?);
                if !input.is_empty() {
                    input.parse::<Token![,]>()?;
                }
                continue;
            }
            let inner;
            syn::parenthesized!(inner in input);
            if name == "launch_bounds" && args.launch_bounds.is_none() {
                args.launch_bounds = Some(parse_launch_bounds(&inner)?);
            } else if name == "instantiate" && args.instantiate.is_none() {
                args.instantiate = Some((name.span(), instances::parse_lists(&inner)?));
            } else {
                return Err(Error::new(
                    name.span(),
                    "`#[kernel]` takes `launch_bounds(MAX_THREADS, MIN_BLOCKS)`, \
                     `instantiate(T = ...)` and `min_sm = SM`, each at most once",
                ));
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(args)
    }
}

fn parse_min_sm(input: ParseStream) -> syn::Result<LitInt> {
    let sm: LitInt = input.parse()?;
    let value: u32 = sm.base10_parse()?;
    if !MIN_SM_VALUES.contains(&value) {
        return Err(Error::new(
            sm.span(),
            "`min_sm` is an architecture rustc's nvptx backend knows, as a number: 70, 72, 75, \
             80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120 or 121 (`min_sm = 80` for sm_80)",
        ));
    }
    Ok(sm)
}

fn parse_launch_bounds(inner: ParseStream) -> syn::Result<(LitInt, LitInt)> {
    let max_threads: LitInt = inner.parse()?;
    inner.parse::<Token![,]>()?;
    let min_blocks: LitInt = inner.parse()?;
    let _ = inner.parse::<Option<Token![,]>>()?;
    if !inner.is_empty() {
        return Err(inner.error("expected `launch_bounds(MAX_THREADS, MIN_BLOCKS)`"));
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
    Ok((max_threads, min_blocks))
}

/// How one kernel parameter travels: as itself, or as a pointer and a length.
#[derive(Clone)]
#[allow(clippy::large_enum_variant)]
enum Param {
    /// A scalar (`Copy` plain data) or a raw pointer, passed as written.
    Plain { name: Ident, ty: Type },
    /// `&[T]`: passed as `*const T` and `usize`, rebuilt into the slice in the kernel.
    Slice { name: Ident, elem: Type },
    /// `DisjointSlice<T>` (`ty`, as written): passed as `*mut T` and `usize`, rebuilt into the
    /// output.
    Disjoint { name: Ident, elem: Type, ty: Type },
}

impl Param {
    fn substitute(&mut self, subst: &mut Substitute) {
        match self {
            Param::Plain { ty, .. } => subst.visit_type_mut(ty),
            Param::Slice { elem, .. } => subst.visit_type_mut(elem),
            Param::Disjoint { elem, ty, .. } => {
                subst.visit_type_mut(elem);
                subst.visit_type_mut(ty);
            }
        }
    }
}

pub fn expand_kernel(args: KernelArgs, func: ItemFn) -> syn::Result<TokenStream2> {
    let sig = &func.sig;
    let safe = sig.unsafety.is_none();
    if let ReturnType::Type(_, ty) = &sig.output {
        return Err(Error::new(
            ty.span(),
            "a kernel returns nothing: write results through a pointer parameter",
        ));
    }
    let generic = !sig.generics.params.is_empty();
    match (&args.instantiate, generic) {
        (None, true) => {
            return Err(Error::new(
                sig.generics.span(),
                "a generic kernel lists its instances: \
                 `#[kernel(instantiate(T = f32, f64, ...))]`",
            ));
        }
        (Some((span, _)), false) => {
            return Err(Error::new(
                *span,
                "`instantiate` is for a generic kernel: this one has no generic parameters",
            ));
        }
        _ => {}
    }
    if sig.generics.where_clause.is_some() && !generic {
        return Err(Error::new(
            sig.generics.span(),
            "a `where` clause belongs to a generic kernel",
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
            "a kernel is a plain `fn` or `unsafe fn` (not async, const or variadic)",
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
    if safe
        && let Some(Param::Plain { ty, .. }) = params.iter().find(|p| {
            matches!(
                p,
                Param::Plain {
                    ty: Type::Ptr(_),
                    ..
                }
            )
        })
    {
        return Err(Error::new(
            ty.span(),
            "a safe kernel takes only `DeviceCopy` scalars, `&[T]` and `DisjointSlice<T>`: \
             with a raw pointer its launch must promise what the types cannot, so write \
             `pub unsafe fn` and a `# Safety` section",
        ));
    }

    let list = match &args.instantiate {
        Some((_, lists)) => instances::instances(&sig.generics, lists)?,
        None => vec![Instance {
            bindings: Vec::new(),
            suffix: String::new(),
        }],
    };
    let gpu_std = gpu_std_path();
    let mut out = TokenStream2::new();
    for (inst_index, inst) in list.iter().enumerate() {
        let name = if inst.suffix.is_empty() {
            sig.ident.clone()
        } else {
            format_ident!("{}_{}", sig.ident, inst.suffix, span = sig.ident.span())
        };
        let mut subst = Substitute {
            bindings: &inst.bindings,
        };
        let mut inst_params = params.clone();
        for p in &mut inst_params {
            p.substitute(&mut subst);
        }
        let stmts = &func.block.stmts;
        let body = quote!(#(#stmts)*);
        let body = if generic {
            let prelude = instances::prelude(&inst.bindings);
            let body = instances::instance_body(body, &inst.bindings, &inst.suffix);
            quote!(#prelude #body)
        } else {
            body
        };
        let one = One {
            gpu_std: &gpu_std,
            attrs: &func.attrs,
            vis: &func.vis,
            name: &name,
            params: &inst_params,
            original: &sig.inputs,
            safe,
            launch_bounds: &args.launch_bounds,
            min_sm: &args.min_sm,
            generic: generic.then_some((&sig.ident, &inst.bindings)),
        };
        if inst_index == 0 {
            out.extend(one.host_check(&body));
        }
        out.extend(one.entry(body));
        out.extend(one.handle());
    }
    if generic {
        out.extend(accessor(&func, &params, &list, safe, &gpu_std)?);
    }
    Ok(out)
}

/// One instance of a kernel (the kernel itself when it is not generic).
struct One<'a> {
    gpu_std: &'a TokenStream2,
    attrs: &'a [Attribute],
    vis: &'a Visibility,
    name: &'a Ident,
    params: &'a [Param],
    original: &'a syn::punctuated::Punctuated<FnArg, Token![,]>,
    safe: bool,
    launch_bounds: &'a Option<(LitInt, LitInt)>,
    /// `min_sm = SM`: below `sm_SM` the entry's body is a trap.
    min_sm: &'a Option<LitInt>,
    /// The generic kernel's name and this instance's bindings.
    generic: Option<(&'a Ident, &'a [(Ident, Binding)])>,
}

impl One<'_> {
    /// The device build's entry, with slices and outputs rebuilt from their pointer and length.
    fn entry(&self, body: TokenStream2) -> TokenStream2 {
        let Self {
            gpu_std,
            attrs,
            vis,
            name,
            ..
        } = self;
        let (wire_params, rebuild) = self.wire(self.params);
        let bounds = self
            .launch_bounds
            .as_ref()
            .map(|(threads, blocks)| quote!(#gpu_std::launch_bounds!(#threads, #blocks);));
        let body = self.safe_body(body);
        let Some(min_sm) = self.min_sm else {
            return quote! {
                #[cfg(target_arch = "nvptx64")]
                #(#attrs)*
                #[unsafe(no_mangle)]
                #vis unsafe extern "ptx-kernel" fn #name(#(#wire_params),*) {
                    #gpu_std::kernel_module_marker!();
                    #bounds
                    #(#rebuild)*
                    #body
                }
            };
        };
        // Built for an architecture below `min_sm`: the same entry (name, parameters, launch
        // bounds, module), so that every architecture's PTX has the same entries, with a body
        // that traps. The body is still compiled there (`cfg!`, not `#[cfg]`: no import or
        // helper of it goes unused), in a branch the compiler removes. The host refuses to
        // launch it there (`KernelInfo::min_sm`); the trap is for a launch that bypasses the
        // host's check.
        let feature = format!("sm_{}", min_sm.base10_digits());
        quote! {
            #[cfg(target_arch = "nvptx64")]
            #(#attrs)*
            #[unsafe(no_mangle)]
            #vis unsafe extern "ptx-kernel" fn #name(#(#wire_params),*) {
                #gpu_std::kernel_module_marker!();
                #bounds
                if ::core::cfg!(target_feature = #feature) {
                    #(#rebuild)*
                    #body
                } else {
                    #gpu_std::__below_min_sm()
                }
            }
        }
    }

    /// The entry's parameters as the PTX sees them (a slice as its pointer and length), and
    /// the statements that rebuild the slices and outputs from them.
    fn wire(&self, params: &[Param]) -> (Vec<TokenStream2>, Vec<TokenStream2>) {
        let gpu_std = self.gpu_std;
        let wire_params = params.iter().map(|p| match p {
            Param::Plain { name, ty } => quote!(#name: #ty),
            Param::Slice { name, elem } => {
                let (ptr, len) = wire_names(name);
                quote!(#ptr: *const #elem, #len: usize)
            }
            Param::Disjoint { name, elem, .. } => {
                let (ptr, len) = wire_names(name);
                quote!(#ptr: *mut #elem, #len: usize)
            }
        });
        let rebuild = params.iter().filter_map(|p| match p {
            Param::Slice { name, elem } => {
                let (ptr, len) = wire_names(name);
                Some(quote! {
                    let #name: &[#elem] = if #len == 0 {
                        &[]
                    } else {
                        // SAFETY: the launch gives `ptr` valid and aligned for `len` elements
                        // of the slice's type for the whole launch, unmodified (an `unsafe`
                        // kernel's contract; for a safe one, the host's `&` borrow of a device
                        // buffer of that length).
                        unsafe { ::core::slice::from_raw_parts(#ptr, #len) }
                    };
                })
            }
            Param::Disjoint { name, ty, .. } => {
                let (ptr, len) = wire_names(name);
                Some(quote! {
                    #[allow(unused_mut)]
                    // SAFETY: the launch gives `ptr` valid and aligned for `len` elements that
                    // no other parameter reaches (the host's `&mut` borrow of a device buffer
                    // of that length), and this thread makes one `DisjointSlice` of them.
                    let mut #name: #ty =
                        unsafe { #gpu_std::DisjointSlice::from_raw_parts(#ptr, #len) };
                })
            }
            Param::Plain { .. } => None,
        });
        (wire_params.collect(), rebuild.collect())
    }

    /// A safe kernel's body as a safe inner `fn` (an `unsafe` kernel's as written).
    fn safe_body(&self, body: TokenStream2) -> TokenStream2 {
        let params = self.params;
        // A safe kernel's body is a safe `fn`, so the compiler refuses any `unsafe` operation
        // in it that is not inside an `unsafe` block of its own.
        if self.safe {
            let inner_params = params.iter().zip(self.original).map(|(p, arg)| {
                let pat = match arg {
                    FnArg::Typed(pt) => pt.pat.to_token_stream(),
                    FnArg::Receiver(_) => unreachable!("refused above"),
                };
                match p {
                    Param::Plain { ty, .. } => quote!(#pat: #ty),
                    Param::Slice { elem, .. } => quote!(#pat: &[#elem]),
                    Param::Disjoint { ty, .. } => quote!(#pat: #ty),
                }
            });
            let names = params.iter().map(|p| match p {
                Param::Plain { name, .. }
                | Param::Slice { name, .. }
                | Param::Disjoint { name, .. } => name,
            });
            quote! {
                #[inline(always)]
                fn __gpu_std_kernel_body(#(#inner_params),*) { #body }
                __gpu_std_kernel_body(#(#names),*)
            }
        } else {
            body
        }
    }

    /// The body as the host build sees it: the entry's function, under a hidden name in an
    /// anonymous `const`, compiled (type-checked, borrow-checked, linted) but never called nor
    /// code-generated, so that `cargo check` and rust-analyzer report an error in a kernel's
    /// body where it is, once, before any PTX build. The device intrinsics it calls exist on the
    /// host as `#[gpu_only]` stubs. A generic kernel is checked as its first instance (the
    /// instance's prelude names its types and constants, as in the device build).
    fn host_check(&self, body: &TokenStream2) -> TokenStream2 {
        let (wire_params, rebuild) = self.wire(self.params);
        let body = self.safe_body(body.clone());
        quote! {
            #[cfg(not(target_arch = "nvptx64"))]
            const _: () = {
                #[allow(
                    dead_code,
                    non_snake_case,
                    clippy::missing_safety_doc,
                    clippy::too_many_arguments
                )]
                unsafe fn __gpu_std_kernel_host_check(#(#wire_params),*) {
                    #(#rebuild)*
                    #body
                }
            };
        }
    }

    /// The host build's handle, typed by the parameters in order, and its entry in `KERNELS`.
    fn handle(&self) -> TokenStream2 {
        let Self {
            gpu_std,
            attrs,
            vis,
            name,
            params,
            ..
        } = self;
        let sig_types = params.iter().map(|p| handle_type(p, gpu_std));
        let infos = params.iter().map(|p| match p {
            Param::Plain { name, ty } => {
                let n = name.to_string();
                quote!(#gpu_std::host::ParamInfo {
                    name: #n,
                    bytes: ::core::mem::size_of::<#ty>(),
                    align: ::core::mem::align_of::<#ty>(),
                })
            }
            Param::Slice { name, elem } | Param::Disjoint { name, elem, .. } => {
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
        let safe = self.safe;
        let copy_checks = params.iter().map(|p| match p {
            Param::Plain { ty, .. } => {
                if matches!(ty, Type::Ptr(_)) {
                    quote_spanned!(ty.span()=> __gpu_std_kernel_param_is_copy::<#ty>();)
                } else {
                    quote_spanned!(ty.span()=> __gpu_std_kernel_param_is_device_copy::<#ty>();)
                }
            }
            // A safe kernel reads and writes its buffers' elements as values of `T`: plain data.
            Param::Slice { elem, .. } | Param::Disjoint { elem, .. } if safe => {
                quote_spanned!(elem.span()=> __gpu_std_kernel_param_is_device_copy::<#elem>();)
            }
            Param::Slice { elem, .. } | Param::Disjoint { elem, .. } => {
                quote_spanned!(elem.span()=> __gpu_std_kernel_param_is_copy::<#elem>();)
            }
        });
        let entry = name.to_string();
        let info = format_ident!("__GPU_STD_KERNEL_{}", name);
        let bounds_info = match self.launch_bounds {
            Some((threads, blocks)) => {
                quote!(::core::option::Option::Some((#threads, #blocks)))
            }
            None => quote!(::core::option::Option::None),
        };
        let min_sm_info = match self.min_sm {
            Some(sm) => quote!(::core::option::Option::Some(#sm)),
            None => quote!(::core::option::Option::None),
        };
        let safety = safety_type(safe, gpu_std);
        let instance_doc = self.generic.map(|(generic, bindings)| {
            let values: Vec<String> = bindings
                .iter()
                .map(|(ident, b)| match b {
                    Binding::Type { ty, .. } => {
                        format!("{ident} = {}", ty.to_token_stream())
                    }
                    Binding::Const { value, .. } => {
                        format!("{ident} = {}", value.to_token_stream())
                    }
                })
                .collect();
            let doc = format!(
                "\n\nThe instance `{}` of the generic kernel `{generic}` (entry `{name}`).",
                values.join(", ")
            );
            quote!(#[doc = #doc])
        });
        quote! {
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
                min_sm: #min_sm_info,
                module: ::core::module_path!(),
            };

            #[cfg(not(target_arch = "nvptx64"))]
            #(#attrs)*
            #instance_doc
            #[allow(non_upper_case_globals)]
            #vis const #name: #gpu_std::host::Kernel<(#(#sig_types,)*), #safety> =
                // SAFETY: the parameter types are the kernel's, in order, as the device build
                // declares them (generated from the same signature); `Safe` only for a safe
                // `fn` whose parameters are scalars, `&[T]` and `DisjointSlice<T>`.
                unsafe { #gpu_std::host::Kernel::new(&#info) };
        }
    }
}

/// A parameter's type in a handle's signature.
fn handle_type(p: &Param, gpu_std: &TokenStream2) -> TokenStream2 {
    match p {
        Param::Plain { ty, .. } => quote!(#ty),
        Param::Slice { elem, .. } => quote!(#gpu_std::host::Slice<#elem>),
        Param::Disjoint { elem, .. } => quote!(#gpu_std::host::Disjoint<#elem>),
    }
}

fn safety_type(safe: bool, gpu_std: &TokenStream2) -> TokenStream2 {
    if safe {
        quote!(#gpu_std::host::Safe)
    } else {
        quote!(#gpu_std::host::Unsafe)
    }
}

/// The host's generic handle of a kernel with one type parameter `T`: `name::<T>()` for any
/// instantiated `T`, through a hidden trait that exactly the instantiated types implement (so
/// another type is a compile error naming the kernel).
fn accessor(
    func: &ItemFn,
    params: &[Param],
    list: &[Instance],
    safe: bool,
    gpu_std: &TokenStream2,
) -> syn::Result<TokenStream2> {
    let sig = &func.sig;
    let mut type_params = sig.generics.params.iter().filter_map(|gp| match gp {
        GenericParam::Type(t) => Some(&t.ident),
        _ => None,
    });
    let (Some(t), None) = (type_params.next(), type_params.next()) else {
        return Ok(TokenStream2::new());
    };
    if sig.generics.params.len() != 1 {
        return Ok(TokenStream2::new());
    }
    let name = &sig.ident;
    let vis = &func.vis;
    let attrs = &func.attrs;
    let bounds = instances::bounds(&sig.generics, t);
    let trait_name = format_ident!("__gpu_std_instance_of_{}", name);
    let types = params.iter().map(|p| handle_type(p, gpu_std));
    // In the trait, `T` is `Self`.
    let self_ty: Type = syn::parse_quote!(Self);
    let self_binding = [(
        t.clone(),
        Binding::Type {
            ty: self_ty,
            bound: None,
        },
    )];
    let self_params: Vec<Param> = params
        .iter()
        .cloned()
        .map(|mut p| {
            p.substitute(&mut Substitute {
                bindings: &self_binding,
            });
            p
        })
        .collect();
    let self_types: Vec<TokenStream2> = self_params
        .iter()
        .map(|p| handle_type(p, gpu_std))
        .collect();
    let safety = safety_type(safe, gpu_std);
    let message = format!("`{{Self}}` is not an instance of the kernel `{name}`");
    let note = format!("`#[kernel(instantiate({t} = ...))]` lists the types `{name}` has");
    let impls = list.iter().map(|inst| {
        let Binding::Type { ty, .. } = &inst.bindings[0].1 else {
            unreachable!("one type parameter")
        };
        let entry = format_ident!("{}_{}", name, inst.suffix);
        let self_types = &self_types;
        quote! {
            #[cfg(not(target_arch = "nvptx64"))]
            impl #trait_name for #ty {
                const KERNEL: #gpu_std::host::Kernel<(#(#self_types,)*), #safety> = #entry;
            }
        }
    });
    // Every bound on `T` (inline or in the `where` clause) becomes a supertrait, so that
    // `T::Assoc` in the signature resolves as in the generic function.
    let bound_list = if bounds.is_empty() {
        quote!()
    } else {
        quote!(: #(#bounds)+*)
    };
    let generic_doc = format!(
        "\n\nGeneric: `{name}::<{t}>()` is the handle of the instance for `{t}`, one of the \
         types its `instantiate` lists (any other does not compile)."
    );
    Ok(quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[diagnostic::on_unimplemented(message = #message, note = #note)]
        #vis trait #trait_name #bound_list {
            /// This type's instance.
            const KERNEL: #gpu_std::host::Kernel<(#(#self_types,)*), #safety>;
        }

        #(#impls)*

        #[cfg(not(target_arch = "nvptx64"))]
        #(#attrs)*
        #[doc = #generic_doc]
        #vis const fn #name<#t: #trait_name>() -> #gpu_std::host::Kernel<(#(#types,)*), #safety> {
            <#t as #trait_name>::KERNEL
        }
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
                     `&mut`; take `DisjointSlice<T>` (each thread writes its own elements) or \
                     `*mut T` and state in `# Safety` which thread writes where",
                ));
            }
            match &*r.elem {
                Type::Slice(s) => Ok(Param::Slice {
                    name,
                    elem: (*s.elem).clone(),
                }),
                other => Err(Error::new(
                    other.span(),
                    "a kernel takes `&[T]` slices, `DisjointSlice<T>` outputs, raw pointers \
                     and `Copy` scalars; for one value pass it by value or as `*const T`",
                )),
            }
        }
        Type::Ptr(TypePtr { .. }) => Ok(Param::Plain {
            name,
            ty: (*pt.ty).clone(),
        }),
        Type::Path(tp)
            if tp.qself.is_none()
                && tp
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "DisjointSlice") =>
        {
            let last = tp.path.segments.last().expect("checked above");
            let elem = match &last.arguments {
                PathArguments::AngleBracketed(a) => a.args.iter().find_map(|arg| match arg {
                    GenericArgument::Type(t) => Some(t.clone()),
                    _ => None,
                }),
                _ => None,
            };
            let elem = elem.ok_or_else(|| {
                Error::new(last.span(), "write the element type: `DisjointSlice<T>`")
            })?;
            Ok(Param::Disjoint {
                name,
                elem,
                ty: (*pt.ty).clone(),
            })
        }
        Type::Slice(_) | Type::ImplTrait(_) | Type::TraitObject(_) | Type::Infer(_) => {
            Err(Error::new(
                pt.ty.span(),
                "not a kernel parameter type: use `&[T]`, `DisjointSlice<T>`, raw pointers or \
                 `Copy` scalars",
            ))
        }
        _ => Ok(Param::Plain {
            name,
            ty: (*pt.ty).clone(),
        }),
    }
}
