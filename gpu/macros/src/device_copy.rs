//! The expansion of `#[derive(DeviceCopy)]`: a `#[repr(C)]` struct of plain device data as a
//! kernel parameter and a device buffer's element.

use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Fields};

use crate::gpu_std_path;

pub fn expand(input: DeriveInput) -> syn::Result<TokenStream2> {
    let name = &input.ident;
    let data = match &input.data {
        Data::Struct(s) => s,
        Data::Enum(e) => {
            return Err(Error::new(
                e.enum_token.span(),
                "`DeviceCopy` is for structs: an enum has bit patterns that are not values, and \
                 a device write could produce one (use an integer and constants)",
            ));
        }
        Data::Union(u) => {
            return Err(Error::new(
                u.union_token.span(),
                "`DeviceCopy` is for structs (a union's valid field is not known to the device)",
            ));
        }
    };
    let mut repr_ok = false;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("repr")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("C") || meta.path.is_ident("transparent") {
                repr_ok = true;
            } else if meta.input.peek(syn::token::Paren) {
                // `align(N)`, `packed(N)`: allowed beside `C`.
                let content;
                syn::parenthesized!(content in meta.input);
                let _: TokenStream2 = content.parse()?;
            }
            Ok(())
        })?;
    }
    if !repr_ok {
        return Err(Error::new(
            name.span(),
            "`DeviceCopy` needs `#[repr(C)]` (or `#[repr(transparent)]`): the host and the \
             device must lay the struct out alike, and Rust's default layout is not promised \
             to be the same on both targets",
        ));
    }
    let field_types: Vec<_> = match &data.fields {
        Fields::Named(f) => f.named.iter().map(|f| &f.ty).collect(),
        Fields::Unnamed(f) => f.unnamed.iter().map(|f| &f.ty).collect(),
        Fields::Unit => Vec::new(),
    };
    let gpu_std = gpu_std_path();
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let predicates = where_clause.map(|w| {
        let p = &w.predicates;
        quote!(#p,)
    });
    let copy_bounds = field_types
        .iter()
        .map(|ty| quote!(#ty: #gpu_std::DeviceCopy));
    let repr_bounds = field_types
        .iter()
        .map(|ty| quote!(#ty: #gpu_std::DeviceCopy));
    let zero_bounds = field_types
        .iter()
        .map(|ty| quote!(#ty: #gpu_std::host::ValidAsZeroBits));
    Ok(quote! {
        // SAFETY: a `#[repr(C)]` (or transparent) struct, laid out alike on host and device,
        // whose every field is `DeviceCopy` (the bounds): `Copy`, no pointer the device cannot
        // follow, every bit pattern the host writes a valid value. So is the struct (padding
        // bytes are copied as they are and never read as values).
        unsafe impl #impl_generics #gpu_std::DeviceCopy for #name #ty_generics
        where #predicates #(#copy_bounds),*
        {}

        // SAFETY: as above: the driver copies the struct's bytes, and every field is plain
        // device data.
        #[cfg(not(target_arch = "nvptx64"))]
        unsafe impl #impl_generics #gpu_std::host::DeviceRepr for #name #ty_generics
        where #predicates #(#repr_bounds),*
        {}

        // SAFETY: all-zero bytes are a valid value of every field (the bounds), so of the
        // struct.
        #[cfg(not(target_arch = "nvptx64"))]
        unsafe impl #impl_generics #gpu_std::host::ValidAsZeroBits for #name #ty_generics
        where #predicates #(#zero_bounds),*
        {}
    })
}
