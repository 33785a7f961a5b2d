#!/usr/bin/env python3
"""Checks the lab's 2D convolution on photographs against SciPy: for every PNG in the data
folder and every mask below, runs

    demo conv2d --image PHOTO --mask MASK --dump DIR --format json (small timed tables)

which filters the photograph (read as grayscale, f32 in [0, 1]) on the GPU through the kernel
`cpu::convolution::conv2d` picks for the mask and dumps the picture, the mask and the GPU's
output as .npy, then computes `scipy.ndimage.correlate(picture, mask, mode="constant",
cval=0.0)` in float64 and compares:

    |gpu - scipy| <= terms * 2^-23 * correlate(|picture|, |mask|) + terms * 2^-126

the library's stated f32 bound (`cpu::convolution::f32_error_bound`), with terms = w^2 for a
dense mask and 2w + 1 for a separable one: the kernel's two passes (2w products) plus one for
the rounding of the f32 2D mask SciPy is given (each entry the f32 product of the factors, off
from the factors' exact product by at most 2^-24 of it).

Masks: gaussian:2 (13 x 13, separable), gaussian:5 (31 x 31, separable), box:31 (separable),
and dense random masks (uniform in [-1, 1], seeded, not rank 1) of widths 5, 11 and 31, so that
the vec4, wide and separable kernels each filter each photograph.

    python3 scipy_check.py [--demo bin/demo] [--data data] [--work DIR]

Prints one row per photograph and mask and exits 1 if any is outside the bound (or a demo run
fails), 0 otherwise.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--demo", default=os.path.join(here, "bin", "demo"))
    ap.add_argument("--data", default=os.path.join(here, "data"))
    ap.add_argument("--work", default=None, help="folder for the dumps (default: a temporary one)")
    args = ap.parse_args()
    try:
        import numpy as np
        from scipy import ndimage
    except ImportError as e:
        print(f"scipy_check: NumPy or SciPy not found ({e}): skipped")
        return 0
    work = args.work or tempfile.mkdtemp(prefix="scipy-check-")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(20261125)
    masks = ["gaussian:2", "gaussian:5", "box:31"]
    for w in (5, 11, 31):
        path = os.path.join(work, f"dense{w}.npy")
        np.save(path, rng.uniform(-1.0, 1.0, size=(w, w)).astype(np.float32))
        masks.append(path)
    photos = sorted(f for f in os.listdir(args.data) if f.endswith(".png"))
    if not photos:
        print(f"scipy_check: no PNG in {args.data}")
        return 1
    print("| photograph | rows x cols | mask | kernel | terms | max abs err | max err / bound | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    failed = 0
    for photo in photos:
        for mask in masks:
            dump = os.path.join(work, "dump")
            cmd = [args.demo, "conv2d", "--rows", "128", "--cols", "136", "--reps", "2",
                   "--image", os.path.join(args.data, photo), "--mask", mask,
                   "--dump", dump, "--format", "json"]
            run = subprocess.run(cmd, capture_output=True, text=True)
            name = os.path.basename(mask).removesuffix(".npy")
            if run.returncode != 0:
                print(f"| {photo} | | {name} | demo failed (exit {run.returncode}) | | | | FAIL |")
                print(run.stderr[-2000:], file=sys.stderr)
                failed += 1
                continue
            kernel = image_kernel(json.loads(run.stdout))
            d = os.path.join(dump, "conv2d")
            picture = np.load(os.path.join(d, "image_input.npy")).astype(np.float64)
            got = np.load(os.path.join(d, "image_output.npy")).astype(np.float64)
            m = np.load(os.path.join(d, "mask.npy")).astype(np.float64)
            w = m.shape[0]
            expected = ndimage.correlate(picture, m, mode="constant", cval=0.0)
            scale = ndimage.correlate(np.abs(picture), np.abs(m), mode="constant", cval=0.0)
            terms = 2 * w + 1 if "separable" in kernel else w * w
            bound = terms * 2.0**-23 * scale + terms * 2.0**-126
            err = np.abs(got - expected)
            ok = bool(np.all(err <= bound)) and got.shape == picture.shape
            ratio = float(np.max(err / bound))
            failed += not ok
            rows, cols = picture.shape
            print(f"| {photo} | {rows} x {cols} | {name} ({w} x {w}) | {kernel} | {terms} "
                  f"| {float(err.max()):.3e} | {ratio:.3f} | {'PASS' if ok else 'FAIL'} |")
    print(f"scipy_check: {len(photos) * len(masks) - failed} of {len(photos) * len(masks)} "
          f"within the bound")
    return 1 if failed else 0


def image_kernel(report):
    """The kernel of the `image` table of demo conv2d's JSON report."""
    for section in report["sections"]:
        for block in section.get("blocks", []):
            table = block.get("table")
            if table and table["id"] == "image":
                return table["rows"][0][table["header"].index("kernel")]
    raise SystemExit("scipy_check: the demo's report has no image table")


if __name__ == "__main__":
    sys.exit(main())
