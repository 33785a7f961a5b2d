//! `instantiate(T = f32, f64, B = 128, 256)`: the instances of a generic kernel, and the
//! substitution of one instance's values into the kernel's signature and body.

use std::collections::HashMap;

use proc_macro2::{Group, Punct, Spacing, TokenStream as TokenStream2, TokenTree};
use quote::{ToTokens, format_ident, quote};
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{
    Error, Expr, GenericParam, Generics, Ident, Lit, Path, QSelf, Token, Type, TypeParamBound,
    WherePredicate,
};

/// One generic parameter's list: `T = f32, WideF32 as f32_f64`.
pub struct ParamList {
    pub param: Ident,
    pub values: Vec<Value>,
}

/// One value of a generic parameter, as written, with the suffix its entry names carry.
pub struct Value {
    pub tokens: TokenStream2,
    pub suffix: String,
}

/// Parses the inside of `instantiate(...)`: `P = v, v as name, ..., Q = ...`.
pub fn parse_lists(input: ParseStream) -> syn::Result<Vec<ParamList>> {
    let mut lists: Vec<ParamList> = Vec::new();
    while !input.is_empty() {
        let param: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let mut values = Vec::new();
        loop {
            values.push(parse_value(input)?);
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
            if input.is_empty() || (input.peek(Ident) && input.peek2(Token![=])) {
                break;
            }
        }
        if lists.iter().any(|l| l.param == param) {
            return Err(Error::new(param.span(), "this parameter is listed twice"));
        }
        lists.push(ParamList { param, values });
    }
    Ok(lists)
}

/// A type (`f32`, `my::Pair`), an integer or `bool` literal, or a `{ const expression }`,
/// optionally followed by `as suffix`.
fn parse_value(input: ParseStream) -> syn::Result<Value> {
    let (tokens, default) = if input.peek(syn::token::Brace) {
        let block: syn::Block = input.parse()?;
        (block.to_token_stream(), None)
    } else if input.peek(syn::Lit) || input.peek(Token![-]) {
        let negative = input.parse::<Option<Token![-]>>()?;
        let lit: Lit = input.parse()?;
        let text = match &lit {
            Lit::Int(i) => i.base10_digits().to_string(),
            Lit::Bool(b) => b.value.to_string(),
            other => {
                return Err(Error::new(
                    other.span(),
                    "a const parameter's value is an integer, `true`/`false` or a `{ block }`",
                ));
            }
        };
        let sign = if negative.is_some() { "minus_" } else { "" };
        (quote!(#negative #lit), Some(format!("{sign}{text}")))
    } else {
        let ty: Type = input.parse()?;
        let default = default_suffix(&ty);
        (ty.to_token_stream(), default)
    };
    let suffix = if input.peek(Token![as]) {
        input.parse::<Token![as]>()?;
        let name: Ident = input.parse()?;
        name.to_string()
    } else {
        default.ok_or_else(|| {
            input.error(
                "name this instance's suffix: `VALUE as suffix` (the entry is `name_suffix`)",
            )
        })?
    };
    Ok(Value { tokens, suffix })
}

/// The suffix a type names itself with: its last path segment in snake case, followed by its
/// type arguments' suffixes (`f32` -> `f32`, `WideF32` -> `wide_f32`, `ArgMax<f32>` ->
/// `arg_max_f32`, `Sum<Pair<u8>>` -> `sum_pair_u8`); `None` for other types and other arguments.
fn default_suffix(ty: &Type) -> Option<String> {
    let Type::Path(p) = ty else { return None };
    if p.qself.is_some() {
        return None;
    }
    let last = p.path.segments.last()?;
    let mut out = snake_case(&last.ident.to_string());
    match &last.arguments {
        syn::PathArguments::None => {}
        syn::PathArguments::AngleBracketed(args) => {
            for arg in &args.args {
                let syn::GenericArgument::Type(t) = arg else {
                    return None;
                };
                out.push('_');
                out.push_str(&default_suffix(t)?);
            }
        }
        syn::PathArguments::Parenthesized(_) => return None,
    }
    Some(out)
}

/// `WideF32` -> `wide_f32`; `f32` stays.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// What one generic parameter stands for in an instance.
#[derive(Clone)]
pub enum Binding {
    /// A type parameter: the type, and the trait its `T::Assoc` paths are qualified with (its
    /// one bound that is not a marker trait), if any.
    Type { ty: Type, bound: Option<Path> },
    /// A const parameter: its type and value.
    Const { ty: Type, value: Expr },
}

/// One instance: every generic parameter's binding, and the entry name's suffix.
pub struct Instance {
    pub bindings: Vec<(Ident, Binding)>,
    pub suffix: String,
}

/// The instances of `generics` that `lists` name: the product of the lists, in the order the
/// generics are declared (the last parameter varying fastest).
pub fn instances(generics: &Generics, lists: &[ParamList]) -> syn::Result<Vec<Instance>> {
    let mut per_param: Vec<Vec<(Ident, Binding, String)>> = Vec::new();
    for gp in &generics.params {
        let ident = match gp {
            GenericParam::Type(tp) => &tp.ident,
            GenericParam::Const(cp) => &cp.ident,
            GenericParam::Lifetime(l) => {
                return Err(Error::new(
                    l.span(),
                    "a kernel has no lifetime parameters (its arguments live for the launch)",
                ));
            }
        };
        let list = lists.iter().find(|l| l.param == *ident).ok_or_else(|| {
            Error::new(
                ident.span(),
                format!("list the values of `{ident}` in `#[kernel(instantiate({ident} = ...))]`"),
            )
        })?;
        let mut bindings = Vec::new();
        for v in &list.values {
            bindings.push((ident.clone(), binding(generics, gp, v)?, v.suffix.clone()));
        }
        per_param.push(bindings);
    }
    if let Some(extra) = lists.iter().find(|l| {
        !generics
            .params
            .iter()
            .any(|gp| generic_ident(gp) == Some(&l.param))
    }) {
        return Err(Error::new(
            extra.param.span(),
            "the kernel has no generic parameter of this name",
        ));
    }
    let mut out = vec![Instance {
        bindings: Vec::new(),
        suffix: String::new(),
    }];
    for bindings in per_param {
        let mut next = Vec::new();
        for inst in &out {
            for (ident, binding, suffix) in &bindings {
                let mut b = inst.bindings.clone();
                b.push((ident.clone(), binding.clone()));
                let suffix = if inst.suffix.is_empty() {
                    suffix.clone()
                } else {
                    format!("{}_{suffix}", inst.suffix)
                };
                next.push(Instance {
                    bindings: b,
                    suffix,
                });
            }
        }
        out = next;
    }
    Ok(out)
}

/// What `value` makes of the generic parameter `gp`.
fn binding(generics: &Generics, gp: &GenericParam, value: &Value) -> syn::Result<Binding> {
    Ok(match gp {
        GenericParam::Type(tp) => Binding::Type {
            ty: syn::parse2(value.tokens.clone())?,
            bound: single_bound(generics, &tp.ident),
        },
        GenericParam::Const(cp) => Binding::Const {
            ty: cp.ty.clone(),
            value: syn::parse2(value.tokens.clone())?,
        },
        GenericParam::Lifetime(l) => return Err(Error::new(l.span(), "no lifetime parameters")),
    })
}

fn generic_ident(gp: &GenericParam) -> Option<&Ident> {
    match gp {
        GenericParam::Type(t) => Some(&t.ident),
        GenericParam::Const(c) => Some(&c.ident),
        GenericParam::Lifetime(_) => None,
    }
}

/// Every trait bound of the type parameter `param`, inline and in the `where` clause.
pub fn bounds(generics: &Generics, param: &Ident) -> Vec<Path> {
    let mut out = Vec::new();
    let mut push = |bounds: &syn::punctuated::Punctuated<TypeParamBound, Token![+]>| {
        for b in bounds {
            if let TypeParamBound::Trait(t) = b {
                out.push(t.path.clone());
            }
        }
    };
    for gp in &generics.params {
        if let GenericParam::Type(tp) = gp
            && tp.ident == *param
        {
            push(&tp.bounds);
        }
    }
    if let Some(wc) = &generics.where_clause {
        for pred in &wc.predicates {
            if let WherePredicate::Type(pt) = pred
                && let Type::Path(p) = &pt.bounded_ty
                && p.qself.is_none()
                && p.path.is_ident(param)
            {
                push(&pt.bounds);
            }
        }
    }
    out
}

/// The one bound of `param` that is not a marker trait (`Copy`, `Clone`, `Send`, `Sync`,
/// `Sized`), which `T::Assoc` paths name; `None` if there is not exactly one.
fn single_bound(generics: &Generics, param: &Ident) -> Option<Path> {
    const MARKERS: [&str; 5] = ["Copy", "Clone", "Send", "Sync", "Sized"];
    let traits: Vec<Path> = bounds(generics, param)
        .into_iter()
        .filter(|p| {
            p.segments
                .last()
                .is_none_or(|s| !MARKERS.contains(&s.ident.to_string().as_str()))
        })
        .collect();
    match <[Path; 1]>::try_from(traits) {
        Ok([one]) => Some(one),
        Err(_) => None,
    }
}

/// Replaces the generic parameters in a signature's types: `T` by its type, `T::Assoc` by
/// `<Type as Bound>::Assoc`, a const parameter by its value.
pub struct Substitute<'a> {
    pub bindings: &'a [(Ident, Binding)],
}

impl Substitute<'_> {
    fn binding(&self, ident: &Ident) -> Option<&Binding> {
        self.bindings
            .iter()
            .find(|(i, _)| i == ident)
            .map(|(_, b)| b)
    }
}

impl VisitMut for Substitute<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(tp) = ty
            && tp.qself.is_none()
            && let Some(first) = tp.path.segments.first()
            && first.arguments.is_empty()
            && tp.path.leading_colon.is_none()
            && let Some(Binding::Type {
                ty: concrete,
                bound,
            }) = self.binding(&first.ident)
        {
            if tp.path.segments.len() == 1 {
                *ty = concrete.clone();
                return;
            }
            // `T::Assoc` -> `<Concrete as Bound>::Assoc` (or `<Concrete>::Assoc` without one
            // bound, which the compiler then asks to qualify).
            let rest: Vec<_> = tp.path.segments.iter().skip(1).cloned().collect();
            let mut path = bound.clone().unwrap_or_else(|| Path {
                leading_colon: None,
                segments: Default::default(),
            });
            let position = path.segments.len();
            path.segments.extend(rest);
            tp.qself = Some(QSelf {
                lt_token: Default::default(),
                ty: Box::new(concrete.clone()),
                position,
                as_token: bound.as_ref().map(|_| Default::default()),
                gt_token: Default::default(),
            });
            tp.path = path;
            if bound.is_none() {
                tp.path.leading_colon = Some(Default::default());
            }
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::Path(ep) = expr
            && ep.qself.is_none()
            && let Some(ident) = ep.path.get_ident()
            && let Some(Binding::Const { value, .. }) = self.binding(ident)
        {
            *expr = value.clone();
            return;
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

/// The statements that open an instance's body: `type T = f32;`, `const B: u32 = 256;`.
pub fn prelude(bindings: &[(Ident, Binding)]) -> TokenStream2 {
    let items = bindings.iter().map(|(ident, b)| match b {
        Binding::Type { ty, .. } => quote!(#[allow(dead_code)] type #ident = #ty;),
        Binding::Const { ty, value } => quote!(#[allow(dead_code)] const #ident: #ty = #value;),
    });
    quote!(#(#items)*)
}

/// An instance's body, from the generic one: `T::item` at the start of a path becomes
/// `<T as Bound>::item` (the prelude's `type T = ...` then names the type, and the bound its
/// associated items), and the name of each `static_shared!(NAME: ...)` gets the instance's
/// suffix, so that every instance declares its own `.shared` arrays.
pub fn instance_body(
    body: TokenStream2,
    bindings: &[(Ident, Binding)],
    suffix: &str,
) -> TokenStream2 {
    let bounds: HashMap<String, Path> = bindings
        .iter()
        .filter_map(|(ident, b)| match b {
            Binding::Type {
                bound: Some(bound), ..
            } => Some((ident.to_string(), bound.clone())),
            _ => None,
        })
        .collect();
    rewrite(body, &bounds, suffix)
}

fn rewrite(tokens: TokenStream2, bounds: &HashMap<String, Path>, suffix: &str) -> TokenStream2 {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out: Vec<TokenTree> = Vec::with_capacity(trees.len());
    let mut i = 0;
    while i < trees.len() {
        let tree = &trees[i];
        match tree {
            TokenTree::Ident(ident) => {
                let path_start = !matches!(
                    out.last(),
                    Some(TokenTree::Punct(p)) if p.as_char() == ':' || p.as_char() == '.'
                );
                let followed_by_path = matches!(
                    (trees.get(i + 1), trees.get(i + 2)),
                    (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                        if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
                );
                if path_start
                    && followed_by_path
                    && let Some(bound) = bounds.get(&ident.to_string())
                {
                    // `<T as Bound>`, then the `::` that follows.
                    out.push(TokenTree::Punct(Punct::new('<', Spacing::Alone)));
                    out.push(TokenTree::Ident(ident.clone()));
                    out.push(TokenTree::Ident(Ident::new("as", ident.span())));
                    out.extend(bound.to_token_stream());
                    out.push(TokenTree::Punct(Punct::new('>', Spacing::Alone)));
                    i += 1;
                    continue;
                }
                if ident == "static_shared"
                    && let (Some(TokenTree::Punct(bang)), Some(TokenTree::Group(g))) =
                        (trees.get(i + 1), trees.get(i + 2))
                    && bang.as_char() == '!'
                {
                    out.push(tree.clone());
                    out.push(trees[i + 1].clone());
                    out.push(TokenTree::Group(rename_shared(g, bounds, suffix)));
                    i += 3;
                    continue;
                }
                out.push(tree.clone());
            }
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), rewrite(g.stream(), bounds, suffix));
                group.set_span(g.span());
                out.push(TokenTree::Group(group));
            }
            _ => out.push(tree.clone()),
        }
        i += 1;
    }
    out.into_iter().collect()
}

/// `(NAME: [T; N])` -> `(NAME_suffix: [T; N])`.
fn rename_shared(g: &Group, bounds: &HashMap<String, Path>, suffix: &str) -> Group {
    let mut trees: Vec<TokenTree> = rewrite(g.stream(), bounds, suffix).into_iter().collect();
    if let Some(TokenTree::Ident(name)) = trees.first() {
        let renamed = format_ident!("{}_{}", name, suffix, span = name.span());
        trees[0] = TokenTree::Ident(renamed);
    }
    let mut group = Group::new(g.delimiter(), trees.into_iter().collect());
    group.set_span(g.span());
    group
}
