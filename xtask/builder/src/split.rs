//! [`split_modules`]: one kernel crate's PTX cut into one self-contained PTX module per
//! top-level Rust module of the crate, so that a loader JIT-compiles (or loads) only the
//! module of the kernel it launches.
//!
//! `#[kernel]` leaves the assembler comment `// kernel_module(<module path>)` in every entry
//! (`gpu_std::kernel_module_marker!`). An entry declared in `my_kernels::sort::kernels` goes
//! into the module `sort`; one at the crate's root into the module named after the crate. Each
//! module holds the header, its entries, and every `.func` and variable they reach, followed
//! through calls, addresses and initialisers, in the order of the whole PTX. Functions and
//! read-only data a module needs are copied into each module that needs them; a host-visible
//! variable (`.visible .global` or `.visible .const`: a `__device__` or `__constant__`
//! symbol the host writes by name) may belong to one module only, since each module would
//! have its own copy.

use std::collections::{BTreeMap, BTreeSet};

/// One PTX module cut from a crate's PTX by [`split_modules`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxModule {
    /// The module's name: the second segment of its kernels' module path (`sort` of
    /// `gpu::sort::kernels`), or the crate's name for kernels at the crate's root.
    pub name: String,
    /// Its `.entry` names, in the order of the PTX.
    pub entries: Vec<String>,
    /// Its host-visible variables (`.visible .global` / `.visible .const`), in the order of
    /// the PTX: the symbols a host reads or writes by name (`cuModuleGetGlobal`).
    pub globals: Vec<String>,
    /// The module's PTX text.
    pub ptx: String,
}

/// What a top-level PTX statement is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `.version`, `.target`, `.address_size`: in every module.
    Header,
    /// A kernel.
    Entry,
    /// A device function (definition or prototype).
    Func,
    /// A variable: `.global`, `.const`, `.shared` (static or `.extern`).
    Var { visible: bool },
    /// Anything else (kept in every module).
    Other,
}

/// One top-level statement of the PTX, with the comments before it.
#[derive(Debug)]
struct Item<'a> {
    text: &'a str,
    kind: Kind,
    name: Option<&'a str>,
}

/// The marker `#[kernel]` leaves in each entry.
pub const MODULE_MARKER: &str = "// kernel_module(";

/// Cuts `ptx`, the PTX of the kernel crate `crate_name` (its library name), into one module per
/// top-level Rust module of its kernels (see the module docs), sorted by name. An entry
/// without a marker (a kernel not declared with `#[kernel]`) goes into the crate's module.
///
/// # Errors
/// A message if the PTX cannot be read (an unbalanced brace, an entry with two markers) or a
/// host-visible variable is reached from two modules (put the kernels that share it in one
/// module).
pub fn split_modules(crate_name: &str, ptx: &str) -> Result<Vec<PtxModule>, String> {
    let items = items(ptx)?;
    // Every item of each name (a function's prototype and its definition).
    let mut all_of: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, it) in items.iter().enumerate() {
        if let (Kind::Func | Kind::Var { .. }, Some(name)) = (it.kind, it.name) {
            all_of.entry(name).or_default().push(i);
        }
    }
    // What each item refers to.
    let refs: Vec<Vec<usize>> = items
        .iter()
        .map(|it| {
            identifiers(it.text)
                .filter(|id| Some(*id) != it.name)
                .filter_map(|id| all_of.get(id))
                .flatten()
                .copied()
                .collect()
        })
        .collect();
    // The module of each entry.
    let mut modules: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, it) in items.iter().enumerate() {
        if it.kind != Kind::Entry {
            continue;
        }
        let mut paths = it
            .text
            .match_indices(MODULE_MARKER)
            .map(|(at, _)| &it.text[at + MODULE_MARKER.len()..])
            .map(|rest| rest.split(')').next().unwrap_or(rest).trim());
        let path = paths.next();
        if let Some(second) = paths.find(|p| Some(*p) != path) {
            return Err(format!(
                ".entry {}: two module markers ({} and {second})",
                it.name.unwrap_or("?"),
                path.unwrap_or_default()
            ));
        }
        let module = path
            .map(|p| module_of_path(crate_name, p))
            .unwrap_or(crate_name);
        modules.entry(module.to_string()).or_default().push(i);
    }
    // Host-visible variables: which module reaches each.
    let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
    let mut out = Vec::new();
    for (module, entries) in &modules {
        let mut keep = BTreeSet::new();
        let mut stack = entries.clone();
        while let Some(i) = stack.pop() {
            if keep.insert(i) {
                stack.extend(refs[i].iter().copied());
            }
        }
        let mut text = String::new();
        let mut names = Vec::new();
        let mut globals = Vec::new();
        for (i, it) in items.iter().enumerate() {
            let always = matches!(it.kind, Kind::Header | Kind::Other);
            if !always && !keep.contains(&i) {
                continue;
            }
            text.push_str(it.text);
            match (it.kind, it.name) {
                (Kind::Entry, Some(name)) => names.push(name.to_string()),
                (Kind::Var { visible: true }, Some(name)) => {
                    if let Some(other) = owner.insert(name, module) {
                        return Err(format!(
                            "the host-visible variable {name} is used by kernels of two modules \
                             ({other} and {module}): each module would have its own copy; \
                             declare those kernels in one module"
                        ));
                    }
                    globals.push(name.to_string());
                }
                _ => {}
            }
        }
        out.push(PtxModule {
            name: module.clone(),
            entries: names,
            globals,
            ptx: text,
        });
    }
    Ok(out)
}

/// The module of a kernel declared in the module path `path` of the crate `crate_name`.
pub fn module_of_path<'a>(crate_name: &'a str, path: &'a str) -> &'a str {
    path.split("::").nth(1).unwrap_or(crate_name)
}

/// The top-level statements of `ptx`, each with the comment lines and blank lines before it;
/// the text after the last statement joins the last item.
fn items(ptx: &str) -> Result<Vec<Item<'_>>, String> {
    let mut items = Vec::new();
    let mut start = 0;
    let mut depth: i64 = 0;
    let mut pos = 0;
    let mut in_statement = false;
    for line in ptx.split_inclusive('\n') {
        let end = pos + line.len();
        let code = line.split("//").next().unwrap_or("").trim();
        pos = end;
        if depth == 0 && code.is_empty() && !in_statement {
            continue;
        }
        in_statement = true;
        depth += code.matches('{').count() as i64 - code.matches('}').count() as i64;
        if depth < 0 {
            return Err(format!("unbalanced `}}` at byte {end} of the PTX"));
        }
        // One-line directives without a `;`: the header's, and the `.file` table that line
        // info (`Builder::debug`) puts after the functions.
        let directive = [".version", ".target", ".address_size", ".file"]
            .iter()
            .any(|d| depth == 0 && code.starts_with(d));
        if depth == 0 && (code.ends_with(';') || code.ends_with('}') || directive) {
            let text = &ptx[start..end];
            items.push(classify(text));
            start = end;
            in_statement = false;
        }
    }
    if depth != 0 || in_statement {
        return Err("the PTX ends inside a statement".into());
    }
    if start < ptx.len() {
        // Comments and blank lines after the last statement join it.
        match items.last_mut() {
            Some(last) => last.text = &ptx[start - last.text.len()..],
            None => return Err("the PTX holds no statement".into()),
        }
    }
    Ok(items)
}

/// The kind and name of one statement.
fn classify(text: &str) -> Item<'_> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let words: Vec<&str> = code.split_whitespace().collect();
    let first = words.first().copied().unwrap_or("");
    let name_after = |directive: &str| -> Option<&str> {
        // `.entry name(`, `.func name(`, `.func (.param .b32 r) name(`: the first identifier
        // after the directive that is not inside the return-value parentheses.
        let at = text.find(directive)? + directive.len();
        let rest = &text[at..];
        let rest = rest.trim_start();
        let rest = if rest.starts_with('(') {
            &rest[rest.find(')')? + 1..]
        } else {
            rest
        };
        identifiers(rest).next()
    };
    if matches!(first, ".version" | ".target" | ".address_size") {
        return Item {
            text,
            kind: Kind::Header,
            name: None,
        };
    }
    if words.contains(&".entry") {
        return Item {
            text,
            kind: Kind::Entry,
            name: name_after(".entry"),
        };
    }
    if words.contains(&".func") {
        return Item {
            text,
            kind: Kind::Func,
            name: name_after(".func"),
        };
    }
    let space = words
        .iter()
        .position(|w| matches!(*w, ".global" | ".const" | ".shared" | ".local"));
    if let Some(at) = space {
        let visible = words[..at].contains(&".visible");
        // The declared name: the last identifier before `[`, `=` or `;`.
        let decl = code.split(['[', '=', ';']).next().unwrap_or("");
        let start = text.find(decl.trim()).unwrap_or(0);
        let name = identifiers(&text[start..start + decl.trim().len()]).last();
        return Item {
            text,
            kind: Kind::Var { visible },
            name,
        };
    }
    Item {
        text,
        kind: Kind::Other,
        name: None,
    }
}

/// The identifiers of PTX code, comments skipped: words of `[A-Za-z0-9_$]` starting with a
/// letter, `_` or `$`, not preceded by `.` or `%` (directives, types and registers).
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let bytes = code.as_bytes();
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
        let mut i = 0;
        while i < bytes.len() {
            if word(bytes[i]) {
                let begin = i;
                while i < bytes.len() && word(bytes[i]) {
                    i += 1;
                }
                let before = begin.checked_sub(1).map(|b| bytes[b]);
                let starts = !bytes[begin].is_ascii_digit();
                if starts && !matches!(before, Some(b'.' | b'%')) {
                    out.push(&code[begin..i]);
                }
            } else {
                i += 1;
            }
        }
    }
    out.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "//
// Generated by LLVM NVPTX Back-End
//

.version 7.8
.target sm_90
.address_size 64

.visible .const .align 8 .b8 C_MASK[124];
.visible .global .align 4 .b8 DEV_U[16];
.shared .align 4 .b8 s_tile[1024];
.extern .shared .align 16 .b8 dynamic_smem[];
.global .align 1 .b8 __unnamed_1[3] = {1, 2, 3};
.func _panic
(
\t.param .b64 _panic_param_0
)
.noreturn;
\t// .globl\tconv
.visible .entry conv(
\t.param .u64 conv_param_0
)
{
\t// begin inline asm
\t// kernel_module(my_kernels::convolution::kernels)
\t// end inline asm
\tld.const.f32 \t%f1, [C_MASK];
\tmov.u64 \t%rd1, s_tile;
\tcall.uni _panic, (param0);
\tret;
}
\t// .globl\tadd
.visible .entry add(
\t.param .u64 add_param_0
)
{
\t// kernel_module(my_kernels::vector_add)
\tadd.s32 \t%r1, %r2, %r3;
\tmov.u64 \t%rd1, dynamic_smem;
\tld.global.u8 \t%rs1, [__unnamed_1];
\tld.global.u32 \t%r4, [DEV_U];
\tret;
}
.func _panic(
\t.param .b64 _panic_param_0
)
.noreturn
{
\ttrap;
}
\t// .globl\troot
.visible .entry root()
{
\tret;
}
";

    #[test]
    fn each_module_holds_what_its_entries_reach() {
        let modules = split_modules("my_kernels", PTX).unwrap();
        let names: Vec<&str> = modules.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["convolution", "my_kernels", "vector_add"]);
        let conv = &modules[0];
        assert_eq!(conv.entries, ["conv"]);
        assert_eq!(conv.globals, ["C_MASK"]);
        for kept in [
            "C_MASK[124]",
            "s_tile[1024]",
            ".func _panic\n(",
            ".func _panic(",
            ".target sm_90",
        ] {
            assert!(conv.ptx.contains(kept), "{kept} missing:\n{}", conv.ptx);
        }
        for dropped in [
            "DEV_U",
            "dynamic_smem",
            "__unnamed_1",
            ".entry add",
            ".entry root",
        ] {
            assert!(!conv.ptx.contains(dropped), "{dropped} kept:\n{}", conv.ptx);
        }
        let add = &modules[2];
        assert_eq!(add.entries, ["add"]);
        assert_eq!(add.globals, ["DEV_U"]);
        assert!(add.ptx.contains("dynamic_smem[]") && add.ptx.contains("__unnamed_1[3]"));
        assert!(!add.ptx.contains("_panic") && !add.ptx.contains("C_MASK"));
        // `add.s32` is an instruction, not a reference to the entry `add`.
        assert_eq!(modules[1].entries, ["root"]);
        assert!(!modules[1].ptx.contains(".entry add"));
        // Every statement of the whole lands in some module: nothing is lost.
        let total: usize = modules.iter().map(|m| m.entries.len()).sum();
        assert_eq!(total, 3);
    }

    #[test]
    fn a_visible_variable_of_two_modules_is_refused() {
        let shared = PTX.replace("[__unnamed_1];", "[C_MASK];");
        let e = split_modules("my_kernels", &shared).unwrap_err();
        assert!(e.contains("C_MASK") && e.contains("two modules"), "{e}");
    }

    #[test]
    fn unreadable_ptx_is_refused() {
        assert!(split_modules("k", ".visible .entry k()\n{\n").is_err());
        assert!(split_modules("k", "}\n").is_err());
        let two = PTX.replace(
            "\t// kernel_module(my_kernels::vector_add)\n",
            "\t// kernel_module(my_kernels::vector_add)\n\t// kernel_module(my_kernels::sort)\n",
        );
        assert!(
            split_modules("my_kernels", &two)
                .unwrap_err()
                .contains("two module markers")
        );
    }

    /// Line info (`Builder::debug`): `.loc` lines in the bodies, an empty `.debug_macinfo`
    /// section and the `.file` table (one-line directives without `;`) after the functions;
    /// every module keeps the whole table, which its `.loc` lines index.
    #[test]
    fn line_info_stays_in_every_module() {
        let table = "\t.section\t.debug_macinfo\t{\t}\n\
                     \t.file\t1 \"/src/lib.rs\"\n\t.file\t2 \"/core/src/cmp.rs\"\n";
        let with_loc = PTX.replace("\tret;\n", "\t.loc\t1 7 14\n\tret;\n");
        let modules = split_modules("my_kernels", &format!("{with_loc}{table}")).unwrap();
        assert_eq!(modules.len(), 3);
        for m in &modules {
            assert!(m.ptx.ends_with(table), "{}:\n{}", m.name, m.ptx);
            assert!(m.ptx.contains("\t.loc\t1 7 14\n\tret;"), "{}", m.ptx);
        }
        assert_eq!(modules[2].entries, ["add"]);
    }

    #[test]
    fn module_paths() {
        assert_eq!(module_of_path("gpu", "gpu::sort::kernels"), "sort");
        assert_eq!(module_of_path("gpu", "gpu"), "gpu");
    }
}
