#!/usr/bin/env python3
"""Recomputes, with NumPy alone, the arrays `demo scan`, `demo histogram`, `demo conv2d` and
`demo sort` write with `--dump DIR` from the inputs they dump beside them, and compares.

    python3 check_dumps.py [--demo bin/demo] [--work DIR]   # runs the demo, then checks
    python3 check_dumps.py --dir DUMP                       # checks DUMP/{scan,histogram,conv2d,sort}

Without `--dir` it runs (small sizes, every array still written):

    demo scan      --size 100003                        --reps 2 --format json --dump W/a
    demo histogram --size 100003 --bins 64              --reps 2 --format json --dump W/a
    demo conv2d    --rows 517 --cols 1023 --mask gaussian:2 ...  --dump W/a
    demo conv2d    --rows 517 --cols 1023 --mask-width 5 ...     --dump W/b
    demo sort      --size 100003                        --reps 2 --format json --dump W/a

Each DIR/<pattern>/index.json lists the arrays and the table that verified each (see
docs/report.md, "--dump DIR"). What is recomputed:

- scan: the ladder's `output_<variant>` as the wrapping i32 prefix sum of `input` (the block
  scans, each section on its own: the section length is found, 1024, 1024 and 4096 today);
  `output_{inclusive,exclusive}_sum_{i32,u32}` exactly (wrapping), `output_tile_copy_u32` equal
  to `input_u32`; `output_{inclusive,exclusive}_sum_f32` against the f64 prefix sum within the
  library's bound (tile(i) + 64) * 2^-23 * sum|x| (tile(i) = i // 4096) + 2^-126;
  `output_select_if_f32` = the inputs > 0, `output_select_if_i32` = the inputs != 2, in order,
  and their `_count`.
- histogram: the ladder's `output_<variant>` and `output_bytes_<input>` as `bincount` of their
  bytes (`output_bytes_accumulate_uniform`: one more in every bin); every
  `output_even_<type>_<bins>_<counts>` by the rule of `histogram::even` over
  `range_even_<type>` = [lower, upper): integers `(x - lower) * bins // (upper - lower)`, f32 as
  CUB in f32 arithmetic `min(trunc((x - lower) * (bins / (upper - lower))), bins - 1)`, values
  outside and NaN dropped; `image_counts` / `image_output` of `--image` (equalisation).
  `output_shared_atomics_*` (a microbenchmark's sink) is not recomputed.
- conv2d: every `output_<variant>` of the variants table against `mask`, every
  `output_separable_<variant>` against `mask_separable`, `image_output` against `image_input`
  with `image_mask`: SciPy's `correlate(x, mask, mode="constant")` in f64 (zero padding, the
  mask not flipped), within the library's f32 bound terms * 2^-23 * correlate(|x|, |mask|) +
  terms * 2^-126, terms = w^2 for the dense kernels and 2w + 1 for the separable ones.
  `output_separable_fma-stream` (the floor's FMA chain, not a convolution) is not recomputed.
- sort: `output_keys_{u32,u64}` as `np.sort` of `input_keys_<type>`, `output_keys_u32_descending`
  reversed; `output_keys_f32` bit for bit as `input_keys_f32` in NumPy's stable order (NaN last
  and equal to every NaN, -0.0 == +0.0: torch.sort's), `output_argsort_f32` as
  `np.argsort(kind="stable")`; `output_pairs_u32_u32_{keys,values}` as the pairs' inputs in the
  keys' stable order; every `output_ladder_<rung>` as `np.sort(input_ladder)`; every
  `output_segmented_<layout>` as `input_segmented` with each segment of
  `input_segmented_<layout>_offsets` (CSR, checked to be) sorted on its own.

Prints one line per array and exits 1 if any differs (or a demo run fails), 0 otherwise.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

F32_EPS = 2.0**-23
F32_TINY = 2.0**-126
LOOKBACK_MIN_TILE = 4096

RUNS = [
    ("a", ["scan", "--size", "100003"]),
    ("a", ["histogram", "--size", "100003", "--bins", "64"]),
    ("a", ["conv2d", "--rows", "517", "--cols", "1023", "--mask", "gaussian:2"]),
    ("b", ["conv2d", "--rows", "517", "--cols", "1023", "--mask-width", "5"]),
    ("a", ["sort", "--size", "100003"]),
]


class Checker:
    def __init__(self, folder):
        self.folder = folder
        with open(os.path.join(folder, "index.json")) as f:
            self.index = json.load(f)
        self.arrays = {a["name"]: a for a in self.index["arrays"]}
        self.failed = 0
        self.checked = 0

    def load(self, name):
        return np.load(os.path.join(self.folder, name + ".npy"))

    def names(self, table=None, prefix=""):
        return [a["name"] for a in self.index["arrays"]
                if a["name"].startswith(prefix) and (table is None or a["table"] == table)]

    def report(self, name, ok, detail=""):
        self.checked += 1
        self.failed += not ok
        where = os.path.basename(self.folder)
        print(f"{'PASS' if ok else 'FAIL'} {where}/{name}{': ' + detail if detail else ''}")

    def exact(self, name, expected, detail=""):
        got = self.load(name)
        ok = got.shape == expected.shape and bool(np.array_equal(got, expected))
        if not ok and got.shape == expected.shape:
            bad = np.flatnonzero(got.ravel() != expected.ravel())
            detail = f"{len(bad)} differ, first at {bad[0]}: {got.ravel()[bad[0]]} != {expected.ravel()[bad[0]]}"
        elif not ok:
            detail = f"shape {got.shape} != {expected.shape}"
        self.report(name, ok, detail)


# ---- scan -----------------------------------------------------------------------------------

def wrapping_cumsum(x):
    return np.cumsum(x, dtype=x.dtype)


def exclusive(inclusive):
    return np.concatenate([np.zeros(1, inclusive.dtype), inclusive[:-1]]) if len(inclusive) else inclusive


def section_scan(x, section):
    out = np.empty_like(x)
    for start in range(0, len(x), section):
        out[start:start + section] = wrapping_cumsum(x[start:start + section])
    return out


def check_scan(c):
    x = c.load("input")
    full = wrapping_cumsum(x)
    for name in c.names(table="ladder", prefix="output_"):
        got = c.load(name)
        if np.array_equal(got, full):
            c.report(name, True, "the whole input's prefix sum")
            continue
        sections = [s for s in (2**k for k in range(5, 31)) if s < len(x)]
        match = next((s for s in sections if np.array_equal(got, section_scan(x, s))), None)
        c.report(name, match is not None,
                 f"each section of {match} scanned on its own" if match else "no prefix sum matches")
    for ty in ("i32", "u32"):
        xs = c.load(f"input_{ty}")
        inc = wrapping_cumsum(xs)
        c.exact(f"output_inclusive_sum_{ty}", inc)
        if f"output_exclusive_sum_{ty}" in c.arrays:
            c.exact(f"output_exclusive_sum_{ty}", exclusive(inc))
    c.exact("output_tile_copy_u32", c.load("input_u32"))
    xf = c.load("input_f32").astype(np.float64)
    inc = np.cumsum(xf)
    mag = np.cumsum(np.abs(xf))
    tile = np.arange(len(xf)) // LOOKBACK_MIN_TILE
    for kind, expected, magnitude in (("inclusive", inc, mag), ("exclusive", exclusive(inc), exclusive(mag))):
        name = f"output_{kind}_sum_f32"
        got = c.load(name).astype(np.float64)
        bound = (tile + 64) * F32_EPS * magnitude + F32_TINY
        err = np.abs(got - expected)
        ok = got.shape == expected.shape and bool(np.all(err <= bound))
        c.report(name, ok, f"max error / bound {float(np.max(err / bound)) if len(err) else 0:.3f}")
    for ty, keep in (("f32", lambda v: v > 0), ("i32", lambda v: v != 2)):
        xs = c.load(f"input_select_{ty}")
        kept = xs[keep(xs)]
        c.exact(f"output_select_if_{ty}", kept, f"{len(kept)} of {len(xs)} kept")
        c.exact(f"output_select_if_{ty}_count", np.array([len(kept)], np.uint32))


# ---- histogram ------------------------------------------------------------------------------

def bincount(x, bins=256):
    return np.bincount(x.astype(np.int64), minlength=bins)


def even(x, bins, lower, upper):
    """`histogram::even`'s counts of `x` into `bins` bins over [lower, upper)."""
    if x.dtype == np.float32:
        lower, upper = np.float32(lower), np.float32(upper)
        inside = (x >= lower) & (x < upper)  # NaN compares false
        scale = np.float32(bins) / (upper - lower)
        v = x[inside]
        b = np.trunc((v - lower) * scale).astype(np.int64)  # f32 arithmetic, no FMA
        b = np.minimum(b, bins - 1)
    else:
        lower, upper = int(lower), int(upper)
        d = x.astype(np.int64) - lower
        d = d[(d >= 0) & (d < upper - lower)]
        b = d * bins // (upper - lower)
    return np.bincount(b, minlength=bins)


def equalise(pixels, counts):
    """The equalisation of `reference::equalise_lut`: round half up of
    (cdf(v) - cdf_min) / (N - cdf_min) * 255, levels below the lowest present to 0."""
    cdf = np.cumsum(counts.astype(np.int64))
    n = int(cdf[-1])
    present = np.flatnonzero(counts)
    if n == 0 or len(present) == 0:
        return pixels.copy()
    cdf_min = int(cdf[present[0]])
    if n == cdf_min:
        return pixels.copy()
    num = np.maximum(cdf - cdf_min, 0) * 255
    den = n - cdf_min
    lut = ((2 * num + den) // (2 * den)).astype(np.uint8)
    lut[: present[0]] = 0
    return lut[pixels]


def check_histogram(c):
    x = c.load("input")
    expected = bincount(x)
    for name in c.names(table="ladder", prefix="output_"):
        c.exact(name, expected.astype(np.uint32))
    for name in c.names(prefix="input_bytes_"):
        kind = name[len("input_bytes_"):]
        counts = bincount(c.load(name))
        c.exact(f"output_bytes_{kind}", counts.astype(np.uint32))
        if f"output_bytes_accumulate_{kind}" in c.arrays:
            c.exact(f"output_bytes_accumulate_{kind}", (counts + 1).astype(np.uint32),
                    "Update::Accumulate onto counts of 1")
        if f"output_bytes_u64_{kind}" in c.arrays:
            c.exact(f"output_bytes_u64_{kind}", counts.astype(np.uint64), "into u64 counts")
    for name in c.names(prefix="output_even_"):
        ty, bins, counter = name[len("output_even_"):].split("_")
        lower, upper = c.load(f"range_even_{ty}").tolist()
        counts = even(c.load(f"input_even_{ty}"), int(bins), lower, upper)
        c.exact(name, counts.astype(np.uint32 if counter == "u32" else np.uint64),
                f"[{lower}, {upper})")
    if "image_counts" in c.arrays:
        pixels = c.load("image_input")
        counts = bincount(pixels.ravel())
        c.exact("image_counts", counts.astype(np.uint32))
        c.exact("image_output", equalise(pixels, counts))
    for name in c.names(prefix="output_shared_atomics_"):
        print(f"skip {os.path.basename(c.folder)}/{name}: a microbenchmark's sink")


# ---- conv2d ---------------------------------------------------------------------------------

def correlate(x, mask):
    """scipy.ndimage.correlate(x, mask, mode="constant", cval=0) for an odd square mask, f64."""
    w = mask.shape[0]
    r = w // 2
    rows, cols = x.shape
    padded = np.pad(x, r)
    out = np.zeros((rows, cols))
    for a in range(w):
        for b in range(w):
            if mask[a, b] != 0.0:
                out += mask[a, b] * padded[a:a + rows, b:b + cols]
    return out


def check_convolution(c, name, x, mask):
    got = c.load(name).astype(np.float64)
    m = mask.astype(np.float64)
    w = m.shape[0]
    terms = 2 * w + 1 if "separable-" in name else w * w
    expected = correlate(x, m)
    bound = terms * F32_EPS * correlate(np.abs(x), np.abs(m)) + terms * F32_TINY
    err = np.abs(got - expected)
    ok = got.shape == x.shape and bool(np.all(err <= bound))
    c.report(name, ok, f"{w} x {w}, terms {terms}, max error / bound {float(np.max(err / bound)):.3f}")


def check_conv2d(c):
    x = c.load("input").astype(np.float64)
    for name in c.names(table="variants", prefix="output_"):
        check_convolution(c, name, x, c.load("mask"))
    for name in c.names(table="separable", prefix="output_separable_"):
        if name.endswith("fma-stream"):
            print(f"skip {os.path.basename(c.folder)}/{name}: the floor's FMA chain, not a convolution")
            continue
        check_convolution(c, name, x, c.load("mask_separable"))
    if "image_output" in c.arrays:
        picture = c.load("image_input").astype(np.float64)
        check_convolution(c, "image_output", picture, c.load("image_mask"))


# ---- sort -----------------------------------------------------------------------------------

def check_sort(c):
    for ty in ("u32", "u64"):
        c.exact(f"output_keys_{ty}", np.sort(c.load(f"input_keys_{ty}")))
    c.exact("output_keys_u32_descending", np.sort(c.load("input_keys_u32_descending"))[::-1])
    # NumPy's stable float order is torch.sort's: NaN last and equal to every NaN, -0.0 == +0.0.
    x = c.load("input_keys_f32")
    order = np.argsort(x, kind="stable")
    got = c.load("output_keys_f32")
    ok = got.shape == x.shape and bool(np.array_equal(got.view(np.uint32), x[order].view(np.uint32)))
    c.report("output_keys_f32", ok, "bit for bit in the stable order")
    x = c.load("input_argsort_f32")
    c.exact("output_argsort_f32", np.argsort(x, kind="stable").astype(np.uint32))
    keys, values = c.load("input_pairs_u32_u32_keys"), c.load("input_pairs_u32_u32_values")
    order = np.argsort(keys, kind="stable")
    c.exact("output_pairs_u32_u32_keys", keys[order])
    c.exact("output_pairs_u32_u32_values", values[order], "moved with their keys, stably")
    expected = np.sort(c.load("input_ladder"))
    for name in c.names(prefix="output_ladder_"):
        c.exact(name, expected)
    keys = c.load("input_segmented")
    for name in c.names(prefix="output_segmented_"):
        layout = name[len("output_segmented_"):]
        offsets = c.load(f"input_segmented_{layout}_offsets").astype(np.int64)
        lengths = np.diff(offsets)
        if len(offsets) < 2 or offsets[0] != 0 or offsets[-1] != len(keys) or np.any(lengths < 0):
            c.report(name, False, f"input_segmented_{layout}_offsets: not CSR offsets over {len(keys)} keys")
            continue
        segment = np.repeat(np.arange(len(lengths)), lengths)
        c.exact(name, keys[np.lexsort((keys, segment))], f"{len(lengths)} segments, each sorted")


CHECKS = {"scan": check_scan, "histogram": check_histogram, "conv2d": check_conv2d, "sort": check_sort}


def check_dir(root):
    failed, checked, found = 0, 0, 0
    for pattern, check in CHECKS.items():
        folder = os.path.join(root, pattern)
        if not os.path.isfile(os.path.join(folder, "index.json")):
            continue
        found += 1
        c = Checker(folder)
        check(c)
        failed += c.failed
        checked += c.checked
    return failed, checked, found


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--demo", default=os.path.join(here, "bin", "demo"))
    ap.add_argument("--dir", default=None, help="check this --dump folder instead of running the demo")
    ap.add_argument("--work", default=None, help="folder for the dumps (default: a temporary one)")
    args = ap.parse_args()
    if np is None:
        print("check_dumps: NumPy not found: skipped")
        return 0
    if args.dir:
        roots = [args.dir]
    else:
        work = args.work or tempfile.mkdtemp(prefix="check-dumps-")
        roots = []
        for sub, cmd in RUNS:
            root = os.path.join(work, sub)
            full = [args.demo, *cmd, "--reps", "2", "--format", "json", "--dump", root]
            run = subprocess.run(full, capture_output=True, text=True)
            if run.returncode != 0:
                print(f"FAIL {' '.join(full)} (exit {run.returncode})")
                print(run.stderr[-2000:], file=sys.stderr)
                return 1
            if root not in roots:
                roots.append(root)
    failed = checked = found = 0
    for root in roots:
        f, n, k = check_dir(root)
        failed, checked, found = failed + f, checked + n, found + k
    if found == 0:
        print(f"check_dumps: no scan, histogram, conv2d or sort dump under {', '.join(roots)}")
        return 1
    print(f"check_dumps: {checked - failed} of {checked} arrays recomputed and equal (within the bound)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
