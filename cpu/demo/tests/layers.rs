//! The demo's layers, read from its source: every path into the crate (`crate::`, `$crate::`,
//! `super::`, in code and in doc links) of every file under `src/` is resolved to the unit it
//! names, and the edges between units must point down:
//!
//! - the crate root (`lib.rs`, `main.rs`, `src/tests/`) may name anything: it holds `PATTERNS`,
//!   the one list of every pattern;
//! - a pattern (`src/patterns/<pattern>/`) names the engine and its own folder, never another
//!   pattern or the root;
//! - an engine module (`src/engine/<module>`) names only engine modules of lower layers
//!   ([`ENGINE_LAYERS`], the order `src/engine/mod.rs` documents), never a pattern or the root.
//!
//! Within one unit (a pattern's folder, an engine module's folder) files may name each other, as
//! a Rust module and its children do. No GPU needed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The engine's modules, lowest first: each may import only those before it.
const ENGINE_LAYERS: &[&str] = &[
    "options",
    "args",
    "timing",
    "report",
    "device",
    "out",
    "harness",
    "sweep",
    "registry",
    "cli",
    "report_files",
    "run",
];

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Root,
    /// `engine/mod.rs` or `patterns/mod.rs`: module declarations only.
    Facade(&'static str),
    Engine(String),
    Pattern(String),
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file (`engine/sweep/output.rs` is `[engine, sweep, output]`,
/// `engine/sweep/mod.rs` is `[engine, sweep]`).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The unit an absolute module path (from the crate root) belongs to.
fn unit_of(path: &[String]) -> Unit {
    match path {
        [] => Unit::Root,
        [top] if top == "engine" => Unit::Facade("engine"),
        [top] if top == "patterns" => Unit::Facade("patterns"),
        [top, m, ..] if top == "engine" => Unit::Engine(m.clone()),
        [top, p, ..] if top == "patterns" => Unit::Pattern(p.clone()),
        _ => Unit::Root,
    }
}

fn ident(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// The first segments of each path in `rest` (what follows `prefix::`): one segment, or each
/// top-level item of a `{...}` group, with the segment after it where there is one.
fn heads(rest: &str) -> Vec<Vec<String>> {
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0;
        let mut items = Vec::new();
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    items.push(&group[start..i]);
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&group[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return items
            .into_iter()
            .filter_map(|item| heads(item.trim()).into_iter().next())
            .collect();
    }
    let (first, after) = ident(rest);
    if first.is_empty() {
        return Vec::new();
    }
    let head = vec![first.to_string()];
    match after.strip_prefix("::").map(heads) {
        Some(tails) if !tails.is_empty() => tails
            .into_iter()
            .map(|tail| head.iter().cloned().chain(tail).collect())
            .collect(),
        _ => vec![head],
    }
}

/// Every module path `text` names, resolved from the file's own module path `here`.
fn references(text: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for (i, _) in text.match_indices("crate::") {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        found.extend(heads(&text[i + "crate::".len()..]));
    }
    for (i, _) in text.match_indices("super::") {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue; // not the first `super` of a chain
        }
        let mut rest = &text[i..];
        let mut base = here.to_vec();
        // Inside the file's `mod tests`, `super` is the file's module.
        if text[..i].contains("\nmod tests {") {
            base.push("tests".into());
        }
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        for tail in heads(rest) {
            let mut full = base.clone();
            full.extend(tail);
            found.push(full);
        }
    }
    found
}

#[test]
fn every_import_points_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 20, "read {} files", files.len());
    let mut wrong = Vec::new();
    let mut edges = BTreeSet::new();
    let mut units = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        let here = module_path(rel);
        let from = if rel.starts_with("tests") {
            Unit::Root
        } else {
            unit_of(&here)
        };
        units.insert(from.clone());
        let text = std::fs::read_to_string(file).expect("read a source file");
        for path in references(&text, &here) {
            let to = unit_of(&path);
            if to == from {
                continue;
            }
            let allowed = match (&from, &to) {
                (Unit::Root, _) => true,
                // Module declarations, and their doc links.
                (Unit::Facade(_), _) => !text.contains("\nuse "),
                (Unit::Pattern(_), Unit::Engine(_)) => true,
                (Unit::Engine(a), Unit::Engine(b)) => {
                    let layer = |m: &str| ENGINE_LAYERS.iter().position(|l| *l == m);
                    match (layer(a), layer(b)) {
                        (Some(x), Some(y)) => y < x,
                        _ => false,
                    }
                }
                _ => false,
            };
            edges.insert((from.clone(), to.clone()));
            if !allowed {
                wrong.push(format!(
                    "{}: {:?} names {:?} (`{}`)",
                    rel.display(),
                    from,
                    to,
                    path.join("::")
                ));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports that do not point down:\n{}",
        wrong.join("\n")
    );
    // Every engine module is in the layer list, and the list has no module that is not.
    let engine: BTreeSet<String> = units
        .iter()
        .filter_map(|u| match u {
            Unit::Engine(m) => Some(m.clone()),
            _ => None,
        })
        .collect();
    let listed: BTreeSet<String> = ENGINE_LAYERS.iter().map(|s| s.to_string()).collect();
    assert_eq!(engine, listed, "the engine's modules and ENGINE_LAYERS");
    // The test reads what it should: patterns import the engine, the root imports patterns.
    assert!(
        edges
            .iter()
            .any(|(a, b)| matches!((a, b), (Unit::Pattern(_), Unit::Engine(_)))),
        "no pattern imports the engine: the parser read nothing"
    );
    assert!(
        edges
            .iter()
            .any(|(a, b)| matches!((a, b), (Unit::Root, Unit::Pattern(_)))),
        "the root names no pattern: the parser read nothing"
    );
}

/// The parser resolves the forms the demo writes.
#[test]
fn references_resolve() {
    let here: Vec<String> = ["engine", "sweep", "output"].map(String::from).to_vec();
    let found = references(
        "use crate::engine::{harness::X, report::{A, B}};\n\
         use super::super::timing::Y; let z = super::Case;\n\
         [`P`](crate::PATTERNS) $crate::engine::args::refuse!",
        &here,
    );
    let units: Vec<Unit> = found.iter().map(|p| unit_of(p)).collect();
    assert_eq!(
        units,
        [
            Unit::Engine("harness".into()),
            Unit::Engine("report".into()),
            Unit::Root,
            Unit::Engine("args".into()),
            Unit::Engine("timing".into()),
            Unit::Engine("sweep".into()),
        ]
    );
}
