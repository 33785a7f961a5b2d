#!/usr/bin/env python3
"""Times, through PyTorch (and CuPy where installed), the operations the lab's demos time, on
inputs of the same sizes and types, the way the demos time them: CUDA events with timing
enabled, 3 warm-up runs, the median of the timed runs, and the L2 cache flushed (a read of twice
its size) before each run where the demo flushes it (inputs smaller than the L2).

Writes a JSON list of peer timings, each naming the demo measurement it belongs beside
(pattern, table id, measurement key), for `demo all --peers FILE`:

    python3 peers.py OUT.json [--reps 50] [--device 0]

Exits 0 with a message and no file when neither PyTorch nor CuPy with a GPU is present.
"""

import argparse
import json
import os
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="peers JSON to write")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args()

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

    def timed(fn, flush=False):
        for _ in range(3):
            if flush:
                flush_buf.sum()
            fn()
        torch.cuda.synchronize()
        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(args.reps)
        ]
        for start, end in events:
            if flush:
                flush_buf.sum()
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in events)

    peers = []

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
    del host, devbuf

    # Whole or absent: written beside the destination, then renamed over it.
    tmp = f"{args.out}.partial"
    with open(tmp, "w") as f:
        json.dump(peers, f, indent=1)
    os.replace(tmp, args.out)
    print(f"peers: wrote {len(peers)} timings to {args.out}", file=sys.stderr)
    return 0


def os_env(name, default):
    return os.environ.get(name, default)


if __name__ == "__main__":
    sys.exit(main())
