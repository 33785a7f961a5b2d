"""The sort's peers, timed as examples/sort_throughput times the library: CUB's radix sort
through CuPy (ndarray.sort in place on a fresh copy, the copy outside the timed region),
cupy.argsort, torch.sort (values and indices) and torch.argsort of f32; uniform random keys;
before each rep a fresh copy and a 256 MiB write that evicts the L2; CUDA events around the
sort alone; median of 15 after two warm-ups."""
import statistics
import sys

import cupy
import torch

REPS = 15
max_n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 28
dev = torch.device("cuda", 0)
flush = torch.zeros(256 << 20, dtype=torch.uint8, device=dev)


def timed(fresh, sort):
    ms = []
    for rep in range(REPS + 2):
        x = fresh()
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        sort(x)
        e.record()
        e.synchronize()
        if rep >= 2:
            ms.append(s.elapsed_time(e))
    return statistics.median(ms)


print(f"{torch.cuda.get_device_name(0)}: torch {torch.__version__}, cupy {cupy.__version__}")
print("| peer | keys | median ms | Gkeys/s |")
print("|---|---|---|---|")
n = 1 << 20
while n <= max_n:
    g = torch.Generator(device=dev).manual_seed(n)
    u32 = torch.randint(0, 1 << 32, (n,), dtype=torch.int64, device=dev, generator=g).to(torch.uint32)
    f32 = torch.rand(n, device=dev, generator=g) * 2 - 1
    cu = cupy.asarray(u32)
    cf = cupy.asarray(f32)
    rows = [
        ("CUB keys u32 (cupy ndarray.sort)", lambda: cu.copy(), lambda a: a.sort()),
        ("CUB keys f32 (cupy ndarray.sort)", lambda: cf.copy(), lambda a: a.sort()),
        ("cupy.argsort f32", lambda: cf, lambda a: cupy.argsort(a)),
        ("torch.sort f32 (values, indices)", lambda: f32, lambda a: torch.sort(a)),
        ("torch.argsort f32", lambda: f32, lambda a: torch.argsort(a)),
    ]
    for name, fresh, sort in rows:
        ms = timed(fresh, sort)
        print(f"| {name} | {n} | {ms:.4f} | {n / ms / 1e6:.2f} |")
    del u32, f32, cu, cf
    n *= 4
