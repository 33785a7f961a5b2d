//! The peers file of a sweep: `peers.py --sweep OUT.json` times PyTorch and CuPy calls on the
//! sweep's cases (same sizes, shapes, mask widths and types; same timing method), one row per
//! case and peer, keyed by `(pattern, shape, width)` as [`Case`] is.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::Case;

/// The `kind` a sweep peers file declares.
pub const KIND: &str = "demo-sweep-peers";

/// One peer's timing of one case.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PeerTiming {
    /// Short name for the tables: `"torch.sum"`, `"cupy.sum (CUB)"`.
    pub peer: String,
    /// The call timed, in full: `"torch.add(x, y, out=z)"`.
    pub operation: String,
    /// Library and version: `"torch 2.9.0+cu130"`.
    pub library: String,
    /// Median time, ms.
    pub median_ms: f64,
    /// Timed repetitions.
    pub reps: usize,
}

/// A row of the peers file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PeerRow {
    /// The case timed.
    #[serde(flatten)]
    pub case: Case,
    /// The timing.
    #[serde(flatten)]
    pub timing: PeerTiming,
}

/// A peer's FP32 matrix product, timed in the same run: cuBLAS SGEMM (`torch.mm` with TF32
/// off), `m x k` by `k x n`. Its multiply-add rate is what a vendor's FMA-bound kernel
/// reaches on this device, printed beside the peak rate the convolutions' FMA floor assumes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GemmTiming {
    /// The call timed, in full.
    pub operation: String,
    /// Library and version.
    pub library: String,
    /// Rows of the product.
    pub m: u64,
    /// Columns of the product.
    pub n: u64,
    /// The inner dimension.
    pub k: u64,
    /// Median time, ms.
    pub median_ms: f64,
    /// Timed repetitions.
    pub reps: usize,
}

impl GemmTiming {
    /// Multiply-adds per second: `m x n x k` over the median.
    pub fn fma_per_second(&self) -> f64 {
        (self.m as f64) * (self.n as f64) * (self.k as f64) / (self.median_ms * 1e-3)
    }
}

/// What `peers.py --sweep` writes.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PeersFile {
    /// [`KIND`].
    pub kind: String,
    /// The GPU the peers ran on.
    #[serde(default)]
    pub device: Option<String>,
    /// One row per case and peer.
    pub rows: Vec<PeerRow>,
    /// cuBLAS SGEMM's timing, when a convolution was swept.
    #[serde(default)]
    pub fp32_gemm: Option<GemmTiming>,
}

impl PeersFile {
    /// Reads and checks a peers file.
    ///
    /// # Errors
    /// One sentence if the file cannot be read, is not JSON of this layout, or is another
    /// kind of peers file (`run.sh peers` writes a list for `demo all`).
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("{}", path.display()))
    }

    /// Parses the text of a peers file.
    ///
    /// # Errors
    /// As [`PeersFile::read`].
    pub fn parse(text: &str) -> Result<Self> {
        let value: serde_json::Value = serde_json::from_str(text).context("not JSON")?;
        if value.is_array() {
            bail!(
                "a peers list for `demo all` (`peers.py OUT.json`), not a sweep's (`peers.py --sweep OUT.json`)"
            );
        }
        let file: PeersFile = serde_json::from_value(value)
            .context("not a sweep peers file (`peers.py --sweep OUT.json` writes one)")?;
        if file.kind != KIND {
            bail!("kind is `{}`, expected `{KIND}`", file.kind);
        }
        Ok(file)
    }
}

/// The peer timings of `case`, fastest first.
pub fn matching(rows: &[PeerRow], case: &Case) -> Vec<PeerTiming> {
    let mut found: Vec<PeerTiming> = rows
        .iter()
        .filter(|r| r.case == *case)
        .map(|r| r.timing.clone())
        .collect();
    found.sort_by(|a, b| a.median_ms.total_cmp(&b.median_ms));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_on_pattern_shape_and_width() {
        let text = r#"{"kind": "demo-sweep-peers", "device": "NVIDIA H200", "rows": [
            {"pattern": "conv1d", "shape": [67108864], "width": 7, "peer": "F.conv1d",
             "operation": "F.conv1d(x, w, padding=3)", "library": "torch 2.9", "median_ms": 0.5, "reps": 50},
            {"pattern": "conv1d", "shape": [67108864], "width": 9, "peer": "F.conv1d",
             "operation": "F.conv1d(x, w, padding=4)", "library": "torch 2.9", "median_ms": 0.6, "reps": 50},
            {"pattern": "reduce-f32", "shape": [1024], "width": null, "peer": "torch.sum",
             "operation": "torch.sum(x)", "library": "torch 2.9", "median_ms": 0.02, "reps": 50},
            {"pattern": "reduce-f32", "shape": [1024], "peer": "cupy.sum (CUB)",
             "operation": "cupy.sum(x)", "library": "cupy 13", "median_ms": 0.01, "reps": 50}
        ], "fp32_gemm": {"operation": "torch.mm(a, b, out=c)", "library": "torch 2.9",
             "m": 1024, "n": 2048, "k": 512, "median_ms": 0.5, "reps": 50}}"#;
        let file = PeersFile::parse(text).unwrap();
        assert_eq!(file.device.as_deref(), Some("NVIDIA H200"));
        let gemm = file.fp32_gemm.as_ref().unwrap();
        assert_eq!(gemm.fma_per_second(), 1024.0 * 2048.0 * 512.0 / 0.5e-3);
        let conv = Case {
            pattern: "conv1d".into(),
            shape: vec![1 << 26],
            width: Some(7),
        };
        let m = matching(&file.rows, &conv);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].median_ms, 0.5);
        let sum = Case {
            pattern: "reduce-f32".into(),
            shape: vec![1024],
            width: None,
        };
        let m = matching(&file.rows, &sum);
        assert_eq!(
            m.iter().map(|p| p.peer.as_str()).collect::<Vec<_>>(),
            ["cupy.sum (CUB)", "torch.sum"],
            "fastest first"
        );
        let other = Case {
            shape: vec![2048],
            ..sum
        };
        assert!(matching(&file.rows, &other).is_empty());
    }

    #[test]
    fn other_files_are_refused_in_one_sentence() {
        let e = format!("{:#}", PeersFile::parse("[]").unwrap_err());
        assert!(e.contains("not a sweep's"), "{e}");
        let e = format!(
            "{:#}",
            PeersFile::parse(r#"{"kind": "x", "rows": []}"#).unwrap_err()
        );
        assert!(e.contains("expected `demo-sweep-peers`"), "{e}");
        assert!(PeersFile::parse("{").is_err());
        let without = PeersFile::parse(r#"{"kind": "demo-sweep-peers", "rows": []}"#).unwrap();
        assert_eq!(
            without.fp32_gemm, None,
            "files of earlier runs have no fp32_gemm"
        );
    }
}
