//! The rows of the convolution tables: their headers, the timed cells, and the memory and FMA
//! floors each row is measured against.

use super::*;

/// Columns of the variants tables: the floors of the row's variant (memory: 1 read + 1 write
/// at this run's copy bandwidth; FMA: its FMAs at the FP32 peak), "x floor" = median / the
/// larger floor (1 at the floor), "% of FP32 peak" = its FMA rate over the peak.
pub(super) const HEADER: [&str; 14] = [
    "variant",
    "seed",
    "grid x block",
    "median ms",
    "GB/s",
    "% of memcpy",
    "memory floor ms",
    "FMA floor ms",
    "x floor",
    "% of FP32 peak",
    "access ratio",
    "speedup vs basic",
    "max rel err",
    "verdict",
];

/// Columns of the separable table: as [`HEADER`], with the FMAs per output in place of the
/// seed section and the speed against the dense path on the same mask.
pub(super) const SEPARABLE_HEADER: [&str; 13] = [
    "variant",
    "FMAs per output",
    "grid x block",
    "median ms",
    "GB/s",
    "% of memcpy",
    "memory floor ms",
    "FMA floor ms",
    "x floor",
    "% of FP32 peak",
    "speedup vs dense",
    "max rel err",
    "verdict",
];

/// The cells both tables share, from "grid x block" to "% of FP32 peak".
pub(super) fn timed_cells(
    trial: &Trial<Comparison>,
    ceiling: &Ceiling,
    floor: &Floor,
) -> [String; 8] {
    let ms = trial.timing.median_ms;
    let gbps = trial.gbps();
    [
        trial.grid_block(),
        format!("{ms:.3}"),
        format!("{gbps:.1}"),
        format!("{:.1}%", ceiling.percent(gbps)),
        format!("{:.3}", floor.memory_ms),
        format!("{:.3}", floor.fma_ms),
        format!("{:.2}x", floor.ratio(ms)),
        format!("{:.1}%", 100.0 * floor.fma_ms / ms),
    ]
}

/// Adds a verified, timed variant to a variants table (cells as in [`HEADER`]): `basic` is
/// the median ms of the basic kernel (the speedup's base), `floor` the variant's floors.
pub(super) fn variant_row(
    table: &mut Table,
    ceiling: &Ceiling,
    floor: &Floor,
    trial: Trial<Comparison>,
    seed: &str,
    basic: f64,
    access_ratio: f64,
) {
    let speedup = basic / trial.timing.median_ms;
    let mut cells = vec![trial.measurement.variant.clone(), seed.to_string()];
    cells.extend(timed_cells(&trial, ceiling, floor));
    cells.extend([
        format!("{access_ratio:.2}"),
        format!("{speedup:.2}x"),
        format!("{:.1e}", trial.check.max_relative_error),
        trial.verdict(),
    ]);
    let m = floor_extras(trial.measurement, floor, trial.timing.median_ms)
        .extra("access_ratio", access_ratio)
        .extra("speedup_vs_basic", speedup);
    table.measured_row(cells, m);
}

/// The floors of a measurement as its extras.
pub(super) fn floor_extras(m: Measurement, floor: &Floor, ms: f64) -> Measurement {
    m.extra("floor_ms", floor.ms())
        .extra("memory_floor_ms", floor.memory_ms)
        .extra("fma_floor_ms", floor.fma_ms)
        .extra("ratio_to_floor", floor.ratio(ms))
        .extra("percent_of_fp32_peak", 100.0 * floor.fma_ms / ms)
}

/// The floors of `outputs` outputs of `fmas_per_output` multiply-adds each: 1 read + 1 write
/// at the copy bandwidth, and the FMAs at the FP32 peak.
pub(super) fn floor_of(
    outputs: usize,
    fmas_per_output: u64,
    copy: &Ceiling,
    fp32: &Fp32Throughput,
) -> Floor {
    let memory = timing::conv_floor(outputs, 1, 1, copy, fp32);
    Floor {
        fma_ms: fmas_per_output as f64 * outputs as f64 / fp32.fma_per_second() * 1e3,
        ..memory
    }
}

/// Prints the floors of a table of `outputs` outputs on `mask_width`-wide masks in `dims`
/// dimensions: the memory floor, and the FMA floor of a dense mask (`w^dims` FMAs per output)
/// and, in 2D where `separable`, of a separable one (`2w`). Returns the peak it assumed.
pub(super) fn floor_line(
    gpu: &Gpu,
    out: &mut Out,
    ceiling: &Ceiling,
    outputs: usize,
    mask_width: usize,
    dims: u32,
    separable: bool,
) -> Result<Fp32Throughput> {
    let fp32 = Fp32Throughput::of(gpu)?;
    let fma = timing::fma_ceiling(gpu, 3, 10)?;
    let w = mask_width as u64;
    let dense = floor_of(outputs, w.pow(dims), ceiling, &fp32);
    let separable = if separable && dims == 2 {
        let f = floor_of(outputs, 2 * w, ceiling, &fp32);
        format!(
            "; separable: 2 x {mask_width} x {outputs} FMAs, {:.3} ms (floor {:.3} ms, {}-bound)",
            f.fma_ms,
            f.ms(),
            f.bound()
        )
    } else {
        String::new()
    };
    out.line(format!(
        "floors: memory {:.3} ms (1 read + 1 write at this run's memcpy {:.1} GB/s); FMA at the FP32 peak \
         {:.2} TFMA/s ({} SMs x {} FP32 lanes x {} MHz): dense {mask_width}^{dims} x {outputs} FMAs, {:.3} ms \
         (floor {:.3} ms, {}-bound){separable}; x floor = median / max(memory, FMA floor of the row's variant); \
         FMA rate measured (fma_rate, 16 independent FMA chains a thread, {} x 256): {:.2} TFMA/s, {:.1}% of the peak",
        dense.memory_ms,
        ceiling.gbps,
        fp32.fma_per_second() / 1e12,
        fp32.sm_count,
        fp32.lanes_per_sm,
        fp32.sm_clock_khz / 1000,
        dense.fma_ms,
        dense.ms(),
        dense.bound(),
        fma.launch.grid_dim.0,
        fma.fma_per_second() / 1e12,
        100.0 * fma.fma_per_second() / fp32.fma_per_second(),
    ));
    Ok(fp32)
}
