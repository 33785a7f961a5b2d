#!/usr/bin/env python3
"""Times, through PyTorch (and CuPy where installed), the operations the lab's demos time, on
inputs of the same sizes and types, the way the demos time them: CUDA events with timing
enabled, 3 warm-up runs, the median of the timed runs, and the L2 cache flushed (a read of twice
its size) before each run where the demo flushes it (inputs smaller than the L2).

Writes a JSON list of peer timings, each naming the demo measurement it belongs beside
(pattern, table id, measurement key), for `demo all --peers FILE`:

    python3 peers.py OUT.json [--reps 50] [--device 0] [--only multi-gpu] [--max-bytes B]

With --sweep, times the cases of `demo sweep` instead (the same sizes, shapes, mask widths and
types: the demo lists them, `demo sweep [PATTERN]... --list-cases`, so this script keeps no copy),
every timed run preceded by the L2 flush at every size as the sweep does, and writes the object
`demo sweep --peers FILE` reads:
{"kind": "demo-sweep-peers", "device": ..., "rows": [{"pattern", "shape", "width", "peer",
"operation", "library", "median_ms", "reps"}, ...], "skipped": [...], "fp32_gemm": {"operation",
"library", "m", "n", "k", "median_ms", "reps"} or null (cuBLAS SGEMM, when a convolution is swept)}:

    python3 peers.py --sweep OUT.json [--demo PATH] [--reps 50] [--device 0]
                     [--patterns conv1d ...] [--max-elements N]

The demo is --demo, else $GPU_LAB_DEMO, else bin/demo beside this script (the bundle's layout).

Peers of the sweep: cupy.sum (CUB, where CuPy is installed) and torch.sum for the reductions
(i32 and f32), torch.add(x, y, out=z), out.copy_(a.t()) into a preallocated output (the
transpose), F.conv1d(x, w, padding=r) and F.conv2d(img, w, padding=r) with cudnn.benchmark on,
cupyx.scipy.ndimage.correlate(img, mask, output=out, mode="constant") beside F.conv2d for the
dense 2D masks (conv2d), and for the separable sweep (conv2d-separable: the Gaussian of width w,
sigma = (w - 1) / 6) cupyx.scipy.ndimage.gaussian_filter(img, sigma, output=out, mode="constant",
truncate=3.0) and cuDNN's two passes F.conv2d(F.conv2d(img, row, padding=(0, r)), col,
padding=(r, 0)); and for the 256-bin byte histograms (uniform random bytes, and every byte 0): torch.bincount(x,
minlength=256) on the uint8 tensor itself, cupy.histogram(x, 256, (0, 256)), and CUB's
DeviceHistogram::HistogramEven through CuPy's binding (cupy.cuda.cub.device_histogram(x, y, 257),
where the installed CuPy has that form); each histogram peer's counts are checked once against
the byte counts (torch.bincount's against a count by sorting) before it is timed; and for the
radix sort (sort-keys-u32, sort-keys-f32, sort-pairs-u32, sort-argsort-f32): CUB through CuPy's
in-place ndarray.sort on a fresh copy (the copy before the flush, untimed), cupy.argsort,
torch.sort(x, stable=True) and torch.argsort(x, stable=True) (`sort_peers`).
A peer call so slow that --reps runs would take more than PEER_BUDGET_MS (CuPy's correlate of a
31 x 31 mask on 8192^2: about 45 ms a call) is timed with fewer reps, at least MIN_REPS: its row
records the reps it ran. When a convolution is swept, cuBLAS SGEMM (torch.matmul of two 8192 x
8192 f32 matrices, TF32 off) is timed once, and `demo sweep` prints its multiply-add rate as a
share of the FP32 peak beside the convolutions' floors (the ceiling line "FP32 matrix product"
and every convolution table's title).
A case is skipped (and listed) beyond --max-elements, or when its tensors would need more than
80% of the free device memory, or when PyTorch runs out of memory, or when this script has no
peer for its pattern (`sweep_case`: a pattern's sweep runs in the demo before its peer is added
here).

The multi-GPU peer (`demo multi-gpu`'s all-reduce table) is `torch.distributed.all_reduce` over
NCCL, one process per visible GPU (spawned from here, NCCL_NVLS_ENABLE=0 in their environment),
at the demo's sizes (1 KiB to --max-bytes per GPU, powers of two), each rep bracketed by CUDA
events on every rank's stream and counted at the slowest rank, reps back to back, the median
reported with the number of ranks; `--only multi-gpu` times only that.

Exits 0 with a message and no file when neither PyTorch nor CuPy with a GPU is present.
"""

import argparse
import json
import os
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="peers JSON to write (for demo all)")
    ap.add_argument("--sweep", metavar="OUT.json",
                    help="time demo sweep's cases instead, into this file (for demo sweep --peers)")
    ap.add_argument("--patterns", nargs="+",
                    help="with --sweep: only these patterns (default: all the demo sweeps)")
    ap.add_argument("--demo", default=default_demo(),
                    help="with --sweep: the demo executable that lists the cases "
                         "(default: $GPU_LAB_DEMO, else bin/demo beside this script)")
    ap.add_argument("--max-elements", type=int,
                    help="with --sweep: skip cases with more elements (default: all that fit)")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--only", choices=["multi-gpu"],
                    help="time only this pattern's peer")
    ap.add_argument("--max-bytes", type=int,
                    default=int(os_env("GPU_LAB_PEERS_ALLREDUCE_MAX_BYTES", 4 << 30)),
                    help="largest all-reduce, bytes per GPU (demo multi-gpu --max-bytes)")
    args = ap.parse_args()
    if (args.out is None) == (args.sweep is None):
        ap.error("give either OUT.json (peers of demo all) or --sweep OUT.json (peers of demo sweep)")

    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        print("peers: PyTorch with CUDA not found; no peer timings", file=sys.stderr)
        return 0
    torch.cuda.set_device(args.device)
    # Let cuDNN time its convolution algorithms and keep the fastest for each shape (the
    # setting a user tuning for speed turns on); the choice is made during the warm-up runs.
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda", args.device)
    lib = f"torch {torch.__version__}"
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 50 << 20) or (50 << 20)
    flush_buf = torch.zeros(max(2 * l2, 8 << 20) // 4, dtype=torch.int32, device=dev)
    gen = torch.Generator(device="cpu").manual_seed(2026)

    def timed(fn, flush=False, reps=None, setup=None):
        # setup (a fresh copy of an input sorted in place) runs before the flush, untimed.
        reps = reps or args.reps
        for _ in range(3):
            if setup:
                setup()
            if flush:
                flush_buf.sum()
            fn()
        torch.cuda.synchronize()
        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(reps)
        ]
        for start, end in events:
            if setup:
                setup()
            if flush:
                flush_buf.sum()
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in events)

    if args.sweep is not None:
        sweep_peers(torch, args, dev, lib, timed)
        return 0

    peers = []
    if args.only == "multi-gpu":
        all_reduce_peers(torch, args, peers)
        write(peers, args.out)
        return 0

    def peer(pattern, table, variant, operation, ms, library=lib):
        peers.append(
            dict(
                pattern=pattern,
                table=table,
                variant=variant,
                operation=operation,
                library=library,
                median_ms=ms,
                reps=args.reps,
            )
        )
        print(f"peers: {pattern:<12} {operation:<40} {ms:.4f} ms", file=sys.stderr)

    def uniform(n, lo=-1.0, hi=1.0):
        return (torch.rand(n, generator=gen) * (hi - lo) + lo).to(dev)

    # vector-add: z = x + y, 2^26 f32 (demo vector-add's default).
    n = 1 << 26
    x, y = uniform(n), uniform(n)
    z = torch.empty_like(x)
    peer("vector-add", "variants", "vector-add-vec4", "torch.add(x, y, out=z)",
         timed(lambda: torch.add(x, y, out=z)))
    del x, y, z

    # transpose: 8192 x 8192 f32 (demo transpose's default).
    a = torch.rand(8192, 8192, generator=gen).to(dev)
    peer("transpose", "variants", "transpose-tiled-vec4", "a.t().contiguous()",
         timed(lambda: a.t().contiguous()))
    del a

    # reduce: sum of 2^26 f32 (demo reduce's reduce_sum_f32 row at 2^26).
    n = 1 << 26
    x = uniform(n)
    peer("reduce", "reduce-sum", f"reduce_sum_f32 @ {n}", "torch.sum(x)",
         timed(lambda: torch.sum(x)))
    try:
        import cupy
        cx = cupy.asarray(x)
        peer("reduce", "reduce-sum", f"reduce_sum_f32 @ {n}", "cupy.sum(x) (CUB)",
             timed(lambda: cupy.sum(cx)), library=f"cupy {cupy.__version__}")
        del cx
    except ImportError:
        print("peers: CuPy not installed; torch only", file=sys.stderr)
    del x

    # square-sum: sum of x*x over 2^20 i32 in 0..=9 (the seed's DATA_SIZE), L2 flushed as the
    # demo does.
    xi = torch.randint(0, 10, (1 << 20,), generator=gen, dtype=torch.int32).to(dev)
    peer("square-sum", "versions", "square_sum_reduce", "torch.sum(x * x)",
         timed(lambda: torch.sum(xi * xi), flush=True))
    del xi

    # conv1d: 2^26 f32, mask width 7, zero ghost cells (padding 3).
    F = torch.nn.functional
    n = 1 << 26
    x = uniform(n).view(1, 1, n)
    w = uniform(7).view(1, 1, 7)
    with torch.no_grad():
        peer("conv1d", "variants", "convolution-1d-tiled-vec4", "F.conv1d(x, w7, padding=3)",
             timed(lambda: F.conv1d(x, w, padding=3)))
    del x, w

    # conv2d: 4096 x 4096 f32, 5 x 5 mask, zero ghost cells (padding 2).
    img = torch.rand(1, 1, 4096, 4096, generator=gen).to(dev)
    w = uniform(25).view(1, 1, 5, 5)
    with torch.no_grad():
        peer("conv2d", "variants", "convolution-2d-tiled-vec4", "F.conv2d(img, w5x5, padding=2)",
             timed(lambda: F.conv2d(img, w, padding=2)))
    del img, w

    # bandwidth: pinned host-to-device copy of the demo's largest sweep size (1 GiB by default;
    # set GPU_LAB_PEERS_H2D_BYTES to match `demo bandwidth --max-size`).
    size = int(os_env("GPU_LAB_PEERS_H2D_BYTES", 1 << 30))
    host = torch.empty(size // 4, dtype=torch.float32).pin_memory()
    devbuf = torch.empty(size // 4, dtype=torch.float32, device=dev)
    peer("bandwidth", "h2d-sweep", f"host to device [pinned] @ {size}",
         "dev.copy_(pinned_host, non_blocking=True)",
         timed(lambda: devbuf.copy_(host, non_blocking=True)))
    del host, devbuf, flush_buf
    torch.cuda.empty_cache()

    # multi-gpu: all-reduce over every visible GPU (its own processes; a failure there loses
    # only these timings).
    try:
        all_reduce_peers(torch, args, peers)
    except Exception as e:  # noqa: BLE001 - reported, the other peers are kept
        print(f"peers: multi-gpu all-reduce skipped: {e}", file=sys.stderr)

    write(peers, args.out)
    return 0


def default_demo():
    """$GPU_LAB_DEMO, else bin/demo beside this script (where the bundle puts them)."""
    return os.environ.get("GPU_LAB_DEMO") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "bin", "demo")


def sweep_cases(demo, patterns):
    """The cases of `demo sweep` for `patterns` (None: all), in its order, as the demo lists
    them: [(pattern, shape, width)]. The demo refuses an unknown pattern in one sentence."""
    import subprocess
    cmd = [demo, "sweep", *(patterns or []), "--list-cases"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise SystemExit(f"peers: cannot run the demo ({e}); give its path with --demo")
    if done.returncode != 0:
        raise SystemExit(f"peers: {' '.join(cmd)} failed: {done.stderr.strip()}")
    return [(c["pattern"], c["shape"], c.get("width")) for c in json.loads(done.stdout)]


def sweep_peers(torch, args, dev, lib, timed):
    """Times every peer of every `demo sweep` case that fits and writes --sweep's file."""
    F = torch.nn.functional
    try:
        import cupy
        cupy_lib = f"cupy {cupy.__version__}"
    except ImportError:
        cupy = None
        print("peers: CuPy not installed; torch only", file=sys.stderr)
    gen = torch.Generator(device=dev).manual_seed(2026)
    rows, skipped = [], []

    def uniform(*shape):
        return torch.rand(*shape, generator=gen, device=dev) * 2 - 1

    def row(pattern, shape, width, peer, operation, ms, library=lib, reps=None):
        rows.append(dict(pattern=pattern, shape=shape, width=width, peer=peer,
                         operation=operation, library=library, median_ms=ms,
                         reps=reps or args.reps))
        label = "x".join(str(d) for d in shape) + (f" w{width}" if width else "")
        print(f"peers: sweep {pattern:<10} {label:<18} {peer:<16} {ms:.4f} ms", file=sys.stderr)

    cases = sweep_cases(args.demo, args.patterns)
    for pattern, shape, width in cases:
        n = 1
        for d in shape:
            n *= d
        # Bytes of the tensors (conv: room for cuDNN's workspace too).
        need = {"vector-add": 12 * n, "transpose": 8 * n, "conv1d": 12 * n,
                "conv2d": 12 * n, "conv2d-separable": 16 * n, "scan-i32": 20 * n, "scan-f32": 8 * n,
                "scan-max-f32": 16 * n,
                "select-f32": 12 * n, "histogram-bytes": 4 * n,
                "histogram-bytes-constant": 4 * n, "reduce-sum-i64": 8 * n,
                "reduce-sum-f64": 12 * n, "sort-keys-u32": 16 * n,
                "sort-keys-f32": 16 * n, "sort-pairs-u32": 48 * n,
                "sort-argsort-f32": 40 * n}.get(pattern, 4 * n)
        why = None
        if args.max_elements is not None and n > args.max_elements:
            why = f"more than --max-elements {args.max_elements}"
        elif need > 0.8 * torch.cuda.mem_get_info(dev)[0]:
            why = f"needs {need} bytes, more than 80% of the free device memory"
        if why is None and pattern not in PEER_PATTERNS:
            why = "peers.py has no peer for this pattern"
        if why is None:
            try:
                with torch.no_grad():
                    sweep_case(torch, F, cupy, pattern, shape, width, n, uniform, timed,
                               lambda *a, **k: row(pattern, shape, width, *a, **k),
                               cupy_lib if cupy else None, gen, dev,
                               budgeted(torch, timed, args.reps))
            except torch.cuda.OutOfMemoryError as e:
                why = f"out of memory: {str(e).splitlines()[0]}"
        if why is not None:
            skipped.append(dict(pattern=pattern, shape=shape, width=width, reason=why))
            print(f"peers: sweep {pattern} {shape} w{width}: skipped: {why}", file=sys.stderr)
        torch.cuda.empty_cache()
    gemm = None
    # A convolution (a case with a mask width) is swept: its FMA floor gets the vendor's rate.
    if any(width is not None for _, _, width in cases):
        gemm = fp32_gemm(torch, dev, lib, timed, uniform, args.reps)
    out = dict(kind="demo-sweep-peers", device=torch.cuda.get_device_name(dev), reps=args.reps,
               rows=rows, skipped=skipped, fp32_gemm=gemm)
    tmp = f"{args.sweep}.partial"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, args.sweep)
    print(f"peers: wrote {len(rows)} sweep timings ({len(skipped)} cases skipped) to {args.sweep}",
          file=sys.stderr)


# A peer whose --reps runs would take longer than this is timed with fewer reps (MIN_REPS at least).
PEER_BUDGET_MS = 3000.0
MIN_REPS = 10


def budgeted(torch, timed, reps):
    """`timed`, returning (median ms, reps run): two untimed calls first (the first one pays for
    cuDNN's algorithm search under cudnn.benchmark, or CuPy's kernel compilation; the second is
    the estimate), and where `reps` calls of that length would pass PEER_BUDGET_MS, fewer reps
    (at least MIN_REPS). Calls of a few ms or less run `reps` times, as every other peer."""
    import time

    def run(fn, flush=False):
        fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        one_ms = (time.perf_counter() - t0) * 1e3
        n = reps
        if one_ms * reps > PEER_BUDGET_MS:
            n = max(MIN_REPS, min(reps, int(PEER_BUDGET_MS / one_ms)))
        return timed(fn, flush=flush, reps=n), n
    return run


def fp32_gemm(torch, dev, lib, timed, uniform, reps, k=8192):
    """cuBLAS SGEMM (torch.matmul on FP32 with TF32 off) of k x k by k x k, timed as every peer
    (median, no flush: 768 MiB of operands, and a launch of tens of ms): the multiply-add rate
    a vendor's FMA-bound kernel reaches in this run, which `demo sweep` prints beside the peak
    it takes the convolutions' FMA floor from."""
    if 3 * 4 * k * k > 0.8 * torch.cuda.mem_get_info(dev)[0]:
        return None
    allow = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        a, b = uniform(k, k), uniform(k, k)
        c = torch.empty(k, k, device=dev)
        ms = timed(lambda: torch.matmul(a, b, out=c))
        del a, b, c
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow
    print(f"peers: sweep fp32 gemm {k}^3 torch.matmul {ms:.3f} ms, {k ** 3 / ms / 1e9:.1f} TFMA/s",
          file=sys.stderr)
    return dict(operation=f"torch.matmul(a, b, out=c), FP32 with TF32 off (cuBLAS SGEMM), {k}^3",
                library=lib, m=k, n=k, k=k, median_ms=ms, reps=reps)


# The sweeps this script has a peer for (`sweep_case`); the demo's other sweeps are listed as
# skipped.
PEER_PATTERNS = ("reduce-i32", "reduce-f32", "vector-add", "transpose", "conv1d", "conv2d",
                 "conv2d-separable", "scan-i32", "scan-f32", "select-f32", "histogram-bytes",
                 "histogram-bytes-constant", "reduce-max-f32", "reduce-min-f32",
                 "reduce-argmax-f32", "reduce-prod-f32", "reduce-max-i32", "reduce-min-i32",
                 "reduce-argmax-i32", "reduce-prod-i32", "reduce-sum-i64", "reduce-sum-f64",
                 "scan-max-f32", "sort-keys-u32", "sort-keys-f32", "sort-pairs-u32",
                 "sort-argsort-f32")

# The operator sweeps (`demo sweep reduce-<op>-<type>`): the torch and CuPy (CUB) calls of each
# operator; the input type is the pattern's last word.
OPERATOR_PEERS = {
    "max": (("torch.amax", "torch.amax(x)", lambda torch, x: torch.amax(x)),
            ("cupy.max (CUB)", "cupy.max(x)", lambda cupy, x: cupy.max(x))),
    "min": (("torch.amin", "torch.amin(x)", lambda torch, x: torch.amin(x)),
            ("cupy.min (CUB)", "cupy.min(x)", lambda cupy, x: cupy.min(x))),
    "argmax": (("torch.argmax", "torch.argmax(x)", lambda torch, x: torch.argmax(x)),
               ("cupy.argmax (CUB)", "cupy.argmax(x)", lambda cupy, x: cupy.argmax(x))),
    "prod": (("torch.prod", "torch.prod(x)", lambda torch, x: torch.prod(x)),
             ("cupy.prod (CUB)", "cupy.prod(x)", lambda cupy, x: cupy.prod(x))),
    "sum": (("torch.sum", "torch.sum(x)", lambda torch, x: torch.sum(x)),
            ("cupy.sum (CUB)", "cupy.sum(x)", lambda cupy, x: cupy.sum(x))),
}


def sweep_case(torch, F, cupy, pattern, shape, width, n, uniform, timed, row, cupy_lib, gen, dev,
               slow):
    """One case: its inputs, then each peer timed with the L2 flushed before every run (`slow`:
    the convolutions' peers, timed with fewer reps where a call is slow, `budgeted`)."""
    def slow_peer(name, operation, fn, library=None):
        ms, reps = slow(fn, flush=True)
        row(name, operation, ms, reps=reps, **({"library": library} if library else {}))

    if pattern in ("reduce-i32", "reduce-f32"):
        if pattern == "reduce-i32":
            x = torch.randint(-1000, 1000, (n,), generator=gen, device=dev, dtype=torch.int32)
        else:
            x = uniform(n)
        # The i32 peers sum in i32 as reduce_sum_i32 does (wrapping); without `dtype` both
        # libraries widen an int32 sum to int64, a different (and slower) operation.
        i32 = pattern == "reduce-i32"
        if cupy is not None:
            cx = cupy.asarray(x)  # the same memory (__cuda_array_interface__)
            if i32:
                row("cupy.sum (CUB)", "cupy.sum(x, dtype=int32)",
                    timed(lambda: cupy.sum(cx, dtype=cupy.int32), flush=True), library=cupy_lib)
            else:
                row("cupy.sum (CUB)", "cupy.sum(x)", timed(lambda: cupy.sum(cx), flush=True),
                    library=cupy_lib)
            del cx
        if i32:
            row("torch.sum", "torch.sum(x, dtype=torch.int32)",
                timed(lambda: torch.sum(x, dtype=torch.int32), flush=True))
        else:
            row("torch.sum", "torch.sum(x)", timed(lambda: torch.sum(x), flush=True))
    elif pattern in ("scan-i32", "scan-f32"):
        # Inclusive prefix sums into a preallocated output. torch.cumsum of int32 returns
        # int64 (8 bytes written per element, not 4): its only int32 form; CuPy's int32 cumsum
        # stays int32 (CUB's DeviceScan when CuPy's CUB accelerator is on).
        if pattern == "scan-i32":
            x = torch.randint(-1000, 1000, (n,), generator=gen, device=dev, dtype=torch.int32)
            out = torch.empty(n, device=dev, dtype=torch.int64)
            row("torch.cumsum", "torch.cumsum(x, 0, out=out) (int32 -> int64)",
                timed(lambda: torch.cumsum(x, 0, out=out), flush=True))
            del out
        else:
            x = uniform(n)
            out = torch.empty_like(x)
            row("torch.cumsum", "torch.cumsum(x, 0, out=out)",
                timed(lambda: torch.cumsum(x, 0, out=out), flush=True))
            del out
        if cupy is not None:
            cx = cupy.asarray(x)
            cout = cupy.empty_like(cx)
            row("cupy.cumsum", "cupy.cumsum(x, out=out)",
                timed(lambda: cupy.cumsum(cx, out=cout), flush=True), library=cupy_lib)
            del cx, cout
    elif pattern in PEER_PATTERNS and pattern.startswith("reduce-") and pattern.count("-") == 2:
        # reduce-<op>-<type>: the same operator on the same type, into each library's own
        # result (torch.prod and cupy.prod of int32 accumulate in int64, as reduce::product).
        _, op, dtype = pattern.split("-")
        if dtype in ("i32", "i64"):
            info = torch.iinfo(torch.int32 if dtype == "i32" else torch.int64)
            x = torch.randint(info.min, info.max, (n,), generator=gen, device=dev,
                              dtype=torch.int32 if dtype == "i32" else torch.int64)
        else:
            x = uniform(n)
            if dtype == "f64":
                x = x.to(torch.float64)
        (t_name, t_op, t_fn), (c_name, c_op, c_fn) = OPERATOR_PEERS[op]
        row(t_name, t_op, timed(lambda: t_fn(torch, x), flush=True))
        if cupy is not None:
            cx = cupy.asarray(x)
            row(c_name, c_op, timed(lambda: c_fn(cupy, cx), flush=True), library=cupy_lib)
            del cx
        del x
    elif pattern == "scan-max-f32":
        # torch.cummax (values and indices: the only form) moves about 3 GB/s: timed up to
        # 2^24 elements, past which one call takes seconds. CuPy has no cummax.
        if n <= 1 << 24:
            x = uniform(n)
            row("torch.cummax", "torch.cummax(x, 0)",
                timed(lambda: torch.cummax(x, 0), flush=True))
    elif pattern == "select-f32":
        # Stream compaction of x > 0 (about half kept): the comparison and the selection, as
        # the demo's select_if does both in its one pass.
        x = uniform(n)
        row("torch.masked_select", "torch.masked_select(x, x > 0)",
            timed(lambda: torch.masked_select(x, x > 0), flush=True))
        row("torch x[x > 0]", "x[x > 0] (boolean indexing)",
            timed(lambda: x[x > 0], flush=True))
    elif pattern.startswith("sort-"):
        sort_peers(torch, cupy, pattern, n, timed, row, cupy_lib, gen, dev)
    elif pattern in ("histogram-bytes", "histogram-bytes-constant"):
        histogram_peers(torch, cupy, pattern, n, timed, row, cupy_lib, gen, dev)
    elif pattern == "vector-add":
        x, y = uniform(n), uniform(n)
        z = torch.empty_like(x)
        row("torch.add", "torch.add(x, y, out=z)",
            timed(lambda: torch.add(x, y, out=z), flush=True))
    elif pattern == "transpose":
        rows_, cols = shape
        a = uniform(rows_, cols)
        out = torch.empty(cols, rows_, device=dev)
        row("torch copy_(a.t())", "out.copy_(a.t())", timed(lambda: out.copy_(a.t()), flush=True))
    elif pattern == "conv1d":
        r = width // 2
        x = uniform(n).view(1, 1, n)
        w = uniform(width).view(1, 1, width)
        row("F.conv1d (cuDNN)", f"F.conv1d(x, w{width}, padding={r})",
            timed(lambda: F.conv1d(x, w, padding=r), flush=True))
    elif pattern == "conv2d":
        rows_, cols = shape
        r = width // 2
        img = uniform(rows_, cols).view(1, 1, rows_, cols)
        w = uniform(width * width).view(1, 1, width, width)
        slow_peer("F.conv2d (cuDNN)", f"F.conv2d(img, w{width}x{width}, padding={r})",
                  lambda: F.conv2d(img, w, padding=r))
        if cupy is not None:
            import cupyx.scipy.ndimage as ndi
            cimg = cupy.asarray(img.view(rows_, cols))  # the same memory
            cmask = cupy.asarray(w.view(width, width))
            cout = cupy.empty_like(cimg)
            slow_peer("cupyx correlate",
                      f"cupyx.scipy.ndimage.correlate(img, w{width}x{width}, output=out, "
                      f"mode=\"constant\")",
                      lambda: ndi.correlate(cimg, cmask, output=cout, mode="constant"),
                      library=cupy_lib)
            del cimg, cmask, cout
    elif pattern == "conv2d-separable":
        # The demo's Gaussian of width w: sigma = (w - 1) / 6, radius int(3 sigma + 0.5) =
        # (w - 1) / 2 (SciPy's truncate=3.0), weights normalised to sum 1 per axis.
        rows_, cols = shape
        r = width // 2
        sigma = (width - 1) / 6
        if int(3.0 * sigma + 0.5) != r:
            print(f"peers: sweep {pattern} w{width}: sigma {sigma} has another radius: not timed",
                  file=sys.stderr)
            return
        img = uniform(rows_, cols).view(1, 1, rows_, cols)
        x = torch.arange(-r, r + 1, device=dev, dtype=torch.float64)
        g = torch.exp(-0.5 * (x / sigma) ** 2)
        g = (g / g.sum()).to(torch.float32)
        grow, gcol = g.view(1, 1, 1, width), g.view(1, 1, width, 1)
        slow_peer("F.conv2d x2 (cuDNN)",
                  f"F.conv2d(F.conv2d(img, g1x{width}, padding=(0, {r})), g{width}x1, "
                  f"padding=({r}, 0)) (two passes through a temporary)",
                  lambda: F.conv2d(F.conv2d(img, grow, padding=(0, r)), gcol, padding=(r, 0)))
        if cupy is not None:
            import cupyx.scipy.ndimage as ndi
            cimg = cupy.asarray(img.view(rows_, cols))
            cout = cupy.empty_like(cimg)
            slow_peer("cupyx gaussian_filter",
                      f"cupyx.scipy.ndimage.gaussian_filter(img, {sigma:.6g}, output=out, "
                      f"mode=\"constant\", truncate=3.0)",
                      lambda: ndi.gaussian_filter(cimg, sigma, output=cout, mode="constant",
                                                  truncate=3.0),
                      library=cupy_lib)
            del cimg, cout


def sort_peers(torch, cupy, pattern, n, timed, row, cupy_lib, gen, dev):
    """The radix sort's peers (`demo sweep sort-*`), each sorting uniform random keys with the
    L2 flushed before every run: CUB's DeviceRadixSort through CuPy's in-place ndarray.sort on a
    fresh copy of the keys (the copy made before the flush, outside the timed region; CuPy's
    sort is thrust::sort, which runs CUB's radix sort for primitive keys); cupy.argsort
    (thrust::stable_sort_by_key: CUB's radix sort of pairs, int64 indices) as the pairs' and the
    argsort's CUB peer; torch.sort (values and indices) and torch.argsort(stable=True) of f32."""
    if pattern in ("sort-keys-u32", "sort-pairs-u32"):
        x = torch.randint(0, 1 << 32, (n,), dtype=torch.int64, device=dev,
                          generator=gen).to(torch.uint32)
    else:
        x = torch.rand(n, generator=gen, device=dev) * 2 - 1
    if cupy is not None:
        cx = cupy.asarray(x)
        if pattern in ("sort-keys-u32", "sort-keys-f32"):
            holder = [cx.copy()]

            def fresh():
                holder[0][...] = cx
            holder[0].sort()
            want = torch.sort(x).values if pattern == "sort-keys-f32" else None
            if want is None or torch.equal(torch.as_tensor(holder[0], device=dev), want):
                row("CUB (cupy sort)", "a.sort() in place on a fresh copy a[...] = x "
                    "(thrust::sort: CUB DeviceRadixSort keys)",
                    timed(lambda: holder[0].sort(), flush=True, setup=fresh), library=cupy_lib)
            del holder
        else:
            row("CUB (cupy.argsort)", "cupy.argsort(x) (thrust::stable_sort_by_key: CUB "
                "DeviceRadixSort pairs, int64 indices)",
                timed(lambda: cupy.argsort(cx), flush=True), library=cupy_lib)
        del cx
    if pattern in ("sort-keys-f32", "sort-argsort-f32"):
        row("torch.sort", "torch.sort(x, stable=True) (values and int64 indices)",
            timed(lambda: torch.sort(x, stable=True), flush=True))
        row("torch.argsort", "torch.argsort(x, stable=True) (int64 indices)",
            timed(lambda: torch.argsort(x, stable=True), flush=True))
    del x


def histogram_peers(torch, cupy, pattern, n, timed, row, cupy_lib, gen, dev):
    """256-bin histograms of n bytes (`demo sweep`'s histogram-bytes: uniform random bytes;
    histogram-bytes-constant: every byte 0, the demo's CONSTANT_BYTE), each peer's counts checked
    once, then timed with the L2 flushed before every run.

    - torch.bincount(x, minlength=256) on the uint8 tensor: bincount's CUDA kernel takes every
      integral dtype (uint8 included), so no cast (a cast to int64 would write and read 8 bytes
      per element more); the counts are int64. It reads the input's minimum and maximum to the
      host first (two more passes and two synchronisations per call): part of the call.
    - cupy.histogram(x, 256, (0, 256)): builds the 257 bin edges (linspace) each call; with
      CuPy's CUB routine accelerator on (CUPY_ACCELERATORS=cub) it calls CUB's
      DeviceHistogram::HistogramRange over those edges, else CuPy's own kernel (a binary search
      over the edges and one global atomicAdd per element). The operation names which ran.
    - cupy.cuda.cub.device_histogram(x, y, 257): CUB's DeviceHistogram::HistogramEven itself
      (levels 0..256, int64 counts), through the binding cupy.bincount uses, where the installed
      CuPy has this form (skipped otherwise, with a note).
    """
    if pattern == "histogram-bytes":
        x = torch.randint(0, 256, (n,), generator=gen, device=dev, dtype=torch.uint8)
    else:
        x = torch.zeros(n, device=dev, dtype=torch.uint8)
    # The check: the counts by sorting (no atomics), for torch.bincount's; bincount's for the
    # others.
    values, counts = torch.unique(x, return_counts=True)
    want = torch.zeros(256, dtype=torch.int64, device=dev)
    want[values.long()] = counts
    del values, counts
    got = torch.bincount(x, minlength=256)
    if not torch.equal(got, want):
        print(f"peers: sweep {pattern} {n}: torch.bincount miscounts: not timed", file=sys.stderr)
        return
    del got
    row("torch.bincount", "torch.bincount(x, minlength=256) (x uint8, no cast; int64 counts)",
        timed(lambda: torch.bincount(x, minlength=256), flush=True))
    if cupy is None:
        return
    import numpy
    want_host = want.cpu().numpy()
    cx = cupy.asarray(x)  # the same memory (__cuda_array_interface__)
    try:
        from cupy._core import _accelerator
        cub_on = _accelerator.ACCELERATOR_CUB in _accelerator.get_routine_accelerators()
    except (ImportError, AttributeError):
        cub_on = None
    how = {True: "CUB DeviceHistogram::HistogramRange (CUPY_ACCELERATORS=cub)",
           False: "CuPy's binary-search kernel, global atomics (CUB accelerator off)",
           None: "accelerator unknown"}[cub_on]
    if numpy.array_equal(cupy.asnumpy(cupy.histogram(cx, 256, (0, 256))[0]), want_host):
        row("cupy.histogram", f"cupy.histogram(x, 256, (0, 256)) ({how})",
            timed(lambda: cupy.histogram(cx, 256, (0, 256)), flush=True), library=cupy_lib)
    else:
        print(f"peers: sweep {pattern} {n}: cupy.histogram miscounts: not timed", file=sys.stderr)
    try:
        from cupy.cuda import cub as cupy_cub
        # Poisoned, and called twice: the counts must be overwritten, not added to.
        y = cupy.full(256, 7, dtype=cupy.int64)
        cupy_cub.device_histogram(cx, y, 257)
        cupy_cub.device_histogram(cx, y, 257)
        ok = numpy.array_equal(cupy.asnumpy(y), want_host)
    except Exception as e:  # noqa: BLE001 - an older binding (x, bins, y), or none: skipped
        print(f"peers: sweep {pattern}: CUB HistogramEven through CuPy not available ({e})",
              file=sys.stderr)
        return
    if ok:
        row("CUB HistogramEven", "cupy.cuda.cub.device_histogram(x, y, 257) "
            "(CUB DeviceHistogram::HistogramEven, levels 0..256)",
            timed(lambda: cupy_cub.device_histogram(cx, y, 257), flush=True), library=cupy_lib)
    else:
        print(f"peers: sweep {pattern} {n}: CUB HistogramEven miscounts: not timed",
              file=sys.stderr)


def write(peers, out):
    """Whole or absent: written beside the destination, then renamed over it."""
    tmp = f"{out}.partial"
    with open(tmp, "w") as f:
        json.dump(peers, f, indent=1)
    os.replace(tmp, out)
    print(f"peers: wrote {len(peers)} timings to {out}", file=sys.stderr)


def sweep_sizes(max_bytes):
    """`demo multi-gpu`'s all-reduce sizes: powers of two from 1 KiB to max_bytes."""
    sizes, b = [], 1 << 10
    while b <= max_bytes:
        sizes.append(b)
        b *= 2
    return sizes


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def all_reduce_peers(torch, args, peers):
    """torch.distributed.all_reduce (sum, f32) over NCCL, one process per visible GPU."""
    import tempfile
    import torch.distributed as dist
    import torch.multiprocessing as mp
    if not dist.is_available() or not dist.is_nccl_available():
        print("peers: torch.distributed without NCCL; no all-reduce timings", file=sys.stderr)
        return
    world = torch.cuda.device_count()
    # NVLink SHARP (multicast in the switches) stays off, as in the demo; the children inherit it.
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    sizes = sweep_sizes(args.max_bytes)
    if not sizes:
        return
    # Memory: one buffer of the largest size per GPU (in place), with some room for NCCL.
    free = min(torch.cuda.mem_get_info(d)[0] for d in range(world))
    sizes = [b for b in sizes if b <= free - (2 << 30)] or sizes[:1]
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "all_reduce.json")
        mp.spawn(_all_reduce_rank, args=(world, free_port(), sizes, args.reps, result),
                 nprocs=world, join=True)
        with open(result) as f:
            rows = json.load(f)
    library = f"torch {torch.__version__}, NCCL {rows['nccl']}"
    operation = f"torch.distributed.all_reduce (NCCL, {world} process(es))"
    for bytes_, ms in rows["median_ms"]:
        peers.append(dict(pattern="multi-gpu", table="all-reduce", variant=f"nccl @ {bytes_}",
                          operation=operation, library=library, median_ms=ms,
                          reps=args.reps, ranks=world))
        busbw = bytes_ / (ms * 1e-3) / 1e9 * (2 * (world - 1) / world)
        print(f"peers: multi-gpu    all_reduce {bytes_:>12} B  {ms * 1e3:10.2f} us  "
              f"busbw {busbw:8.2f} GB/s", file=sys.stderr)


def _all_reduce_rank(rank, world, port, sizes, reps, result):
    """One rank: checks one all-reduce of rank-dependent small integers exactly, then times
    each size (5 warm-up runs, `reps` runs back to back between CUDA events)."""
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    # Verified once: rank r holds (i % 7) + r, the sum is world * (i % 7) + world (world-1) / 2.
    n = (1 << 20) + 3
    i = torch.arange(n, device=dev, dtype=torch.float32) % 7
    x = i + rank
    dist.all_reduce(x)
    want = world * i + world * (world - 1) / 2
    if not torch.equal(x, want):
        raise RuntimeError(f"rank {rank}: torch.distributed.all_reduce result is wrong")
    buf = torch.zeros(sizes[-1] // 4, dtype=torch.float32, device=dev)
    medians = []
    for b in sizes:
        view = buf[: b // 4]
        for _ in range(5):
            dist.all_reduce(view)
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(reps)]
        for start, end in events:
            start.record()
            dist.all_reduce(view)
            end.record()
        torch.cuda.synchronize()
        mine = [s.elapsed_time(e) for s, e in events]
        every = [None] * world
        dist.all_gather_object(every, mine)
        # Each rep counts at its slowest rank, as the demo counts it.
        slowest = [max(ts[k] for ts in every) for k in range(reps)]
        medians.append((b, statistics.median(slowest)))
    if rank == 0:
        v = torch.cuda.nccl.version()
        nccl = ".".join(str(p) for p in v) if isinstance(v, tuple) else str(v)
        with open(result, "w") as f:
            json.dump(dict(median_ms=medians, nccl=nccl), f)
    dist.barrier()
    dist.destroy_process_group()


def os_env(name, default):
    return os.environ.get(name, default)


if __name__ == "__main__":
    sys.exit(main())
