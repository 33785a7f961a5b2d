//! `cargo xtask ptx-report`: per kernel and PTX architecture, the registers per thread, static
//! shared memory per block, stack frame and spills that `ptxas -v` reports, as a Markdown
//! table; with `--check`, a non-zero exit if a kernel spills or uses a stack frame without
//! being one of the kernels that use local memory by design.
//!
//! `ptxas` comes from a CUDA toolkit or, without one (no GPU needed), from PyPI's
//! `nvidia-cuda-nvcc-cu12` wheel: `python3 -m pip install nvidia-cuda-nvcc-cu12`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Kernels that keep data in local memory on purpose, so a stack frame is their point, not a
/// defect: the memory lab's run-time-indexed private array.
pub const LOCAL_MEMORY_BY_DESIGN: &[&str] = &["registers_local_array"];

/// What `ptxas -v` reports for one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelUsage {
    /// Entry name.
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block, bytes.
    pub shared_bytes: u32,
    /// Stack frame per thread, bytes (local memory).
    pub stack_bytes: u32,
    /// Spill stores per thread, bytes.
    pub spill_stores: u32,
    /// Spill loads per thread, bytes.
    pub spill_loads: u32,
}

impl KernelUsage {
    /// Why this kernel fails `--check`, if it does.
    pub fn problem(&self) -> Option<String> {
        if self.spill_stores > 0 || self.spill_loads > 0 {
            return Some(format!(
                "{} spills ({} bytes stored, {} loaded per thread)",
                self.name, self.spill_stores, self.spill_loads
            ));
        }
        if self.stack_bytes > 0 && !LOCAL_MEMORY_BY_DESIGN.contains(&self.name.as_str()) {
            return Some(format!(
                "{} has a {}-byte stack frame (local memory) and is not one of the kernels that use it by design",
                self.name, self.stack_bytes
            ));
        }
        None
    }
}

/// The number just before `unit` in `line` (`"0 bytes stack frame"`, `"Used 32 registers"`).
fn number_before(line: &str, unit: &str) -> Option<u32> {
    let at = line.find(unit)?;
    line[..at].split_whitespace().last()?.parse().ok()
}

/// Parses `ptxas -v` output into one entry per kernel, in the order ptxas reports them.
pub fn parse_ptxas(output: &str) -> Vec<KernelUsage> {
    let mut kernels: Vec<KernelUsage> = Vec::new();
    for line in output.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default().to_string();
            kernels.push(KernelUsage {
                name,
                ..KernelUsage::default()
            });
            continue;
        }
        let Some(kernel) = kernels.last_mut() else {
            continue;
        };
        if line.contains("bytes stack frame") {
            kernel.stack_bytes = number_before(line, "bytes stack frame").unwrap_or(0);
            kernel.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
            kernel.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
        } else if line.contains("Used ") && line.contains("registers") {
            kernel.registers = number_before(line, "registers").unwrap_or(0);
            kernel.shared_bytes = number_before(line, "bytes smem").unwrap_or(0);
        }
    }
    kernels
}

/// `ptxas`: `explicit`, else the builder's ([`ptx_builder::find_ptxas`]: `$PTXAS`, `PATH`, a
/// CUDA toolkit, the Python environment's `nvidia-cuda-nvcc` wheel).
pub fn find_ptxas(explicit: Option<PathBuf>) -> Result<PathBuf> {
    match explicit {
        Some(p) => Ok(p),
        None => Ok(ptx_builder::find_ptxas()?),
    }
}

/// Runs `ptxas -arch=<arch> -v` on `ptx` and parses its report.
pub fn assemble(ptxas: &Path, arch: &str, ptx: &Path) -> Result<Vec<KernelUsage>> {
    let out = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-v")
        .arg(ptx)
        .args(["-o", "/dev/null"])
        .output()
        .with_context(|| format!("running {}", ptxas.display()))?;
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "{} -arch={arch} failed on {}:\n{text}",
            ptxas.display(),
            ptx.display()
        );
    }
    let kernels = parse_ptxas(&text);
    if kernels.is_empty() {
        bail!("ptxas reported no kernels for {}", ptx.display());
    }
    Ok(kernels)
}

/// The Markdown table of one architecture's kernels, sorted by name.
pub fn table(arch: &str, kernels: &[KernelUsage]) -> String {
    let mut sorted: Vec<&KernelUsage> = kernels.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut s = format!(
        "### {arch}\n\n| kernel | registers | shared bytes | stack bytes | spill stores | spill loads |\n|---|---|---|---|---|---|\n"
    );
    for k in sorted {
        s += &format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            k.name, k.registers, k.shared_bytes, k.stack_bytes, k.spill_stores, k.spill_loads
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "ptxas info    : 0 bytes gmem, 4100 bytes cmem[3]
ptxas info    : Compiling entry function 'registers_local_array' for 'sm_90'
ptxas info    : Function properties for registers_local_array
    128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 128 bytes cumulative stack size
ptxas info    : Compiling entry function 'reduce_sum_f32' for 'sm_90'
ptxas info    : Function properties for reduce_sum_f32
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 128 bytes smem
ptxas info    : Compiling entry function 'spilling' for 'sm_70'
ptxas info    : Function properties for spilling
    48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 48 bytes cumulative stack size, 16384 bytes smem
";

    #[test]
    fn parses_every_field() {
        let k = parse_ptxas(SAMPLE);
        assert_eq!(k.len(), 3);
        assert_eq!(
            k[1],
            KernelUsage {
                name: "reduce_sum_f32".into(),
                registers: 32,
                shared_bytes: 128,
                stack_bytes: 0,
                spill_stores: 0,
                spill_loads: 0
            }
        );
        assert_eq!(
            (
                k[2].registers,
                k[2].shared_bytes,
                k[2].stack_bytes,
                k[2].spill_stores,
                k[2].spill_loads
            ),
            (255, 16384, 48, 40, 36)
        );
    }

    #[test]
    fn check_allows_local_memory_by_design_only() {
        let k = parse_ptxas(SAMPLE);
        assert_eq!(
            k[0].problem(),
            None,
            "registers_local_array uses local memory by design"
        );
        assert_eq!(k[1].problem(), None);
        assert!(k[2].problem().unwrap().contains("spills"));
        let stack_only = KernelUsage {
            name: "other".into(),
            stack_bytes: 16,
            ..KernelUsage::default()
        };
        assert!(stack_only.problem().unwrap().contains("stack frame"));
    }

    #[test]
    fn table_lists_kernels_by_name() {
        let t = table("sm_90", &parse_ptxas(SAMPLE));
        let reduce = t.find("reduce_sum_f32").unwrap();
        let spilling = t.find("| spilling").unwrap();
        assert!(reduce < spilling);
    }
}
