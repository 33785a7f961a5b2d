//! What the prebuilt PTX's digest reads: the files under the inputs, the manifest's profiles, the
//! lock entries of the kernel crate's closure.

use crate::BuildError;
use std::path::{Path, PathBuf};

/// Every file under `path` (or `path` itself; nothing if it does not exist), hidden files and
/// folders skipped.
pub(crate) fn collect_files(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), BuildError> {
    let io = |source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    };
    if !path.exists() {
        return Ok(());
    }
    if path.is_file() {
        files.push(path.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(path).map_err(io)? {
        let entry = entry.map_err(io)?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        collect_files(&entry.path(), files)?;
    }
    Ok(())
}

/// The `[profile...]` sections of a `Cargo.toml`, as written.
pub(crate) fn profile_sections(manifest: &str) -> String {
    let mut inside = false;
    let mut out = String::new();
    for line in manifest.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            inside = trimmed.starts_with("[profile");
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The `[[package]]` entries of a `Cargo.lock` reachable from the package `root` through their
/// `dependencies` lists (every version of a name, to stay on the safe side), in lock order.
pub(crate) fn lock_closure(lock: &str, root: &str) -> String {
    let blocks: Vec<&str> = lock.split("[[package]]").skip(1).map(str::trim).collect();
    let name_of = |block: &str| -> String {
        block
            .lines()
            .find_map(|l| l.strip_prefix("name = "))
            .unwrap_or("")
            .trim_matches('"')
            .to_string()
    };
    let dependencies_of = |block: &str| -> Vec<String> {
        let Some(start) = block.find("dependencies = [") else {
            return Vec::new();
        };
        let list = &block[start + "dependencies = [".len()..];
        let list = &list[..list.find(']').unwrap_or(list.len())];
        list.split(',')
            .filter_map(|d| {
                d.trim()
                    .trim_matches('"')
                    .split(' ')
                    .next()
                    .map(str::to_string)
            })
            .filter(|d| !d.is_empty())
            .collect()
    };
    let mut wanted = std::collections::BTreeSet::from([root.to_string()]);
    let mut queue = vec![root.to_string()];
    while let Some(name) = queue.pop() {
        for block in blocks.iter().filter(|b| name_of(b) == name) {
            for dep in dependencies_of(block) {
                if wanted.insert(dep.clone()) {
                    queue.push(dep);
                }
            }
        }
    }
    blocks
        .iter()
        .filter(|b| wanted.contains(&name_of(b)))
        .map(|b| format!("{b}\n"))
        .collect()
}
