//! Reading and editing the PTX rustc writes: the checks a build's output must pass
//! ([`validate_ptx`]), the launch bounds ([`apply_launch_bounds`]), and the entries and their
//! parameters ([`entry_names`], [`entry_params`]).

use crate::{Arch, BuildError, entry_names};

/// Checks that PTX text targets `arch` and calls no function it does not define.
pub fn validate_ptx(arch: Arch, ptx: &str) -> Result<(), BuildError> {
    let target = format!(".target {arch}");
    if !ptx.lines().any(|l| l.trim_start().starts_with(&target)) {
        return Err(BuildError::InvalidPtx {
            arch,
            reason: format!("no `{target}` directive"),
        });
    }
    if let Some(line) = ptx.lines().find(|l| l.contains(".extern .func")) {
        return Err(BuildError::InvalidPtx {
            arch,
            reason: format!("unresolved external function: `{}`", line.trim()),
        });
    }
    Ok(())
}

/// The assembler comment `launch_bounds!` leaves in a kernel's body, before its arguments.
pub const LAUNCH_BOUNDS_MARKER: &str = "// launch_bounds(";

/// Launch bounds one kernel declares: CUDA's `__launch_bounds__(max_threads, min_blocks)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// Most threads per block the kernel is launched with (PTX `.maxntid`).
    pub max_threads: u32,
    /// Fewest resident blocks per SM the registers must allow (PTX `.minnctapersm`).
    pub min_blocks: u32,
}

/// Parses the marker line `// launch_bounds(256, 3)` (surrounding whitespace allowed);
/// `None` if the line is not a marker, an error if it is one with bad arguments.
pub(crate) fn parse_marker(line: &str) -> Option<Result<LaunchBounds, String>> {
    let rest = line.trim().strip_prefix(LAUNCH_BOUNDS_MARKER)?;
    let parsed = rest.strip_suffix(')').and_then(|args| {
        let (a, b) = args.split_once(',')?;
        Some((a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?))
    });
    Some(match parsed {
        Some((max_threads @ 1..=1024, min_blocks @ 1..=64)) => Ok(LaunchBounds {
            max_threads,
            min_blocks,
        }),
        _ => Err(format!(
            "bad launch bounds `{}`: expected `{LAUNCH_BOUNDS_MARKER}max_threads, min_blocks)` with 1 <= max_threads <= 1024 and 1 <= min_blocks <= 64",
            line.trim()
        )),
    })
}

/// Moves each kernel's `launch_bounds!` marker into `.maxntid max_threads, 1, 1` and
/// `.minnctapersm min_blocks` after its parameter list. Kernels without a marker are left as
/// they are.
///
/// # Errors
/// A message naming the kernel if a marker is malformed, if one kernel carries two different
/// bounds, if a marker sits outside an `.entry`, or if the entry already has performance
/// directives.
pub fn apply_launch_bounds(ptx: &str) -> Result<String, String> {
    let lines: Vec<&str> = ptx.lines().collect();
    let mut out = String::with_capacity(ptx.len() + 1024);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let is_entry = line.starts_with(".visible .entry ") || line.starts_with(".entry ");
        if !is_entry {
            if let Some(marker) = parse_marker(line) {
                marker?;
                return Err(format!(
                    "launch bounds outside a kernel (line {}): `launch_bounds!` belongs in an `extern \"ptx-kernel\"` function",
                    i + 1
                ));
            }
            out.push_str(line);
            out.push('\n');
            i += 1;
            continue;
        }
        let name = entry_names(line)
            .first()
            .copied()
            .unwrap_or("?")
            .to_string();
        // The parameter list ends at the first line that is `)`; the body is from the `{`
        // after it to the next `}` in column 0.
        let close = (i..lines.len())
            .find(|&j| lines[j].trim_end().ends_with(')'))
            .ok_or_else(|| format!("kernel `{name}`: no end of its parameter list"))?;
        let end = (close..lines.len())
            .find(|&j| lines[j].starts_with('}'))
            .ok_or_else(|| format!("kernel `{name}`: no end of its body"))?;
        let mut bounds: Option<LaunchBounds> = None;
        for body_line in &lines[close + 1..end] {
            if let Some(marker) = parse_marker(body_line) {
                let marker = marker.map_err(|e| format!("kernel `{name}`: {e}"))?;
                if bounds.is_some_and(|b| b != marker) {
                    return Err(format!(
                        "kernel `{name}` declares two launch bounds: {bounds:?} and {marker:?}"
                    ));
                }
                bounds = Some(marker);
            }
        }
        for header_line in &lines[i..=close] {
            out.push_str(header_line);
            out.push('\n');
        }
        if let Some(b) = bounds {
            let directive = lines[close + 1..end]
                .iter()
                .take_while(|l| !l.starts_with('{'))
                .find(|l| {
                    l.trim_start().starts_with(".max")
                        || l.trim_start().starts_with(".min")
                        || l.trim_start().starts_with(".reqntid")
                });
            if let Some(d) = directive {
                return Err(format!(
                    "kernel `{name}` has launch bounds and already carries `{}`",
                    d.trim()
                ));
            }
            out.push_str(&format!(
                ".maxntid {}, 1, 1\n.minnctapersm {}\n",
                b.max_threads, b.min_blocks
            ));
        }
        for body_line in &lines[close + 1..=end] {
            out.push_str(body_line);
            out.push('\n');
        }
        i = end + 1;
    }
    Ok(out)
}
