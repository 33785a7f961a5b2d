//! The `.entry` directives of PTX text and their parameters, and the check that a crate's
//! kernel handles match them ([`check_entries`]): what a loader runs before it launches a
//! handle against a module, so that a stale PTX cannot be launched with the wrong arguments.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use super::KernelInfo;

/// Names of the kernels (`.entry` directives) in PTX text, in order of appearance.
pub fn entry_names(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| {
            let rest = l
                .trim_start()
                .strip_prefix(".visible .entry ")
                .or_else(|| l.trim_start().strip_prefix(".entry "))?;
            Some(rest.split(['(', ' ']).next().unwrap_or(rest).trim())
        })
        .collect()
}

/// One `.param` of a PTX `.entry`: its name and size in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryParam {
    /// The parameter's PTX name (`<entry>_param_<i>`).
    pub name: String,
    /// Size in bytes: the width of a scalar type (`.u64` 8, `.f32` 4, ...), or `N` of a
    /// `.b8 name[N]` byte array (a struct passed by value).
    pub bytes: usize,
}

/// The `.param` list of every `.entry` in `ptx`, in order: `(entry name, parameters)`.
///
/// # Errors
/// A message naming the entry if a parameter line cannot be read.
pub fn entry_params(ptx: &str) -> Result<Vec<(&str, Vec<EntryParam>)>, String> {
    let mut entries = Vec::new();
    let mut lines = ptx.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_start();
        let Some(rest) = line
            .strip_prefix(".visible .entry ")
            .or_else(|| line.strip_prefix(".entry "))
        else {
            continue;
        };
        let name = rest.split(['(', ' ']).next().unwrap_or(rest).trim();
        let mut params = Vec::new();
        if !rest.contains(')') {
            for param in lines.by_ref() {
                let param = param.trim().trim_end_matches(',');
                if param.starts_with(')') {
                    break;
                }
                params.push(parse_param(param).ok_or_else(|| {
                    format!(".entry {name}: cannot read the parameter `{param}`")
                })?);
            }
        }
        entries.push((name, params));
    }
    Ok(entries)
}

/// One `.param` line: `.param .u64 .ptr .align 1 NAME` or `.param .align 4 .b8 NAME[8]`.
fn parse_param(line: &str) -> Option<EntryParam> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.first() != Some(&".param") {
        return None;
    }
    let last = *tokens.last()?;
    if let Some((name, count)) = last.split_once('[') {
        let count: usize = count.strip_suffix(']')?.parse().ok()?;
        let element = tokens.iter().find_map(|t| scalar_bytes(t))?;
        return Some(EntryParam {
            name: name.to_string(),
            bytes: element * count,
        });
    }
    Some(EntryParam {
        name: last.to_string(),
        bytes: scalar_bytes(tokens.get(1)?)?,
    })
}

/// The width in bytes of a PTX fundamental type (`.u64`, `.f32`, `.b8`, ...).
fn scalar_bytes(token: &str) -> Option<usize> {
    let bits = token
        .strip_prefix(".u")
        .or_else(|| token.strip_prefix(".s"))
        .or_else(|| token.strip_prefix(".b"))
        .or_else(|| token.strip_prefix(".f"))?;
    match bits {
        "8" => Some(1),
        "16" => Some(2),
        "32" => Some(4),
        "64" => Some(8),
        _ => None,
    }
}

/// How a PTX disagrees with a kernel handle ([`check_entries`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryMismatch {
    /// The PTX has no `.entry` of the kernel's name.
    Missing {
        /// The kernel.
        kernel: &'static str,
    },
    /// Parameter `index` of the entry differs from the handle's: a different size, or one side
    /// has no such parameter (`None`).
    Parameter {
        /// The kernel.
        kernel: &'static str,
        /// The parameter's position (0-based) in the PTX list.
        index: usize,
        /// Its name in the handle (`x_ptr` / `x_len` for a slice `x`), if the handle has it.
        name: Option<&'static str>,
        /// Its size in bytes in the handle.
        handle_bytes: Option<usize>,
        /// Its size in bytes in the PTX.
        ptx_bytes: Option<usize>,
    },
    /// A parameter line of the PTX cannot be read.
    Unreadable {
        /// What cannot be read.
        reason: String,
    },
}

impl fmt::Display for EntryMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = |b: &Option<usize>| b.map_or("none".to_string(), |b| format!("{b} bytes"));
        match self {
            EntryMismatch::Missing { kernel } => {
                write!(
                    f,
                    "the PTX has no `.entry {kernel}`: it was built from other kernels"
                )
            }
            EntryMismatch::Parameter {
                kernel,
                index,
                name,
                handle_bytes,
                ptx_bytes,
            } => write!(
                f,
                "`.entry {kernel}` parameter {index} ({}) is {} in the PTX but {} in its handle: \
                 the PTX is stale, rebuild it",
                name.unwrap_or("-"),
                bytes(ptx_bytes),
                bytes(handle_bytes),
            ),
            EntryMismatch::Unreadable { reason } => write!(f, "unreadable PTX: {reason}"),
        }
    }
}

impl core::error::Error for EntryMismatch {}

/// Checks every handle of `kernels` against `ptx`: its `.entry` exists and takes the same
/// parameters (count, order, byte sizes). The first disagreement is the error.
///
/// # Errors
/// [`EntryMismatch`], naming the kernel (and the parameter).
pub fn check_entries<'k>(
    ptx: &str,
    kernels: impl IntoIterator<Item = &'k KernelInfo>,
) -> Result<(), EntryMismatch> {
    let entries = entry_params(ptx).map_err(|reason| EntryMismatch::Unreadable { reason })?;
    let sizes: Vec<(&str, Vec<usize>)> = entries
        .iter()
        .map(|(name, params)| (*name, params.iter().map(|p| p.bytes).collect()))
        .collect();
    let sizes: Vec<(&str, &[usize])> = sizes.iter().map(|(n, p)| (*n, &p[..])).collect();
    check_entry_sizes(&sizes, kernels)
}

/// [`check_entries`] against entries already read: `(entry name, byte size of each
/// parameter)`, as a kernel table records them.
///
/// # Errors
/// [`EntryMismatch`], naming the kernel (and the parameter).
pub fn check_entry_sizes<'k>(
    entries: &[(&str, &[usize])],
    kernels: impl IntoIterator<Item = &'k KernelInfo>,
) -> Result<(), EntryMismatch> {
    for kernel in kernels {
        let Some((_, params)) = entries.iter().find(|(name, _)| *name == kernel.name) else {
            return Err(EntryMismatch::Missing {
                kernel: kernel.name,
            });
        };
        for index in 0..params.len().max(kernel.params.len()) {
            let handle = kernel.params.get(index);
            let handle_bytes = handle.map(|p| p.bytes);
            let ptx_bytes = params.get(index).copied();
            if handle_bytes != ptx_bytes {
                return Err(EntryMismatch::Parameter {
                    kernel: kernel.name,
                    index,
                    name: handle.map(|p| p.name),
                    handle_bytes,
                    ptx_bytes,
                });
            }
        }
    }
    Ok(())
}
