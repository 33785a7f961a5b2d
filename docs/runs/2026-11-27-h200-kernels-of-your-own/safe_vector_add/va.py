"""Where the safe one-element-per-thread vector add's time goes: five PTX variants, 2^26 f32,
blocks of 256, CUDA events, 10 warm-up launches, median of 60, variants interleaved."""
import cupy as cp, numpy as np, os
n = 1 << 26
here = os.path.dirname(os.path.abspath(__file__))
mod = cp.RawModule(path=os.path.join(here, 'kernels_sm_90.ptx'))
x = cp.random.random(n, dtype=cp.float32); y = cp.random.random(n, dtype=cp.float32)
z = cp.empty(n, dtype=cp.float32)
N = np.uint64(n)
args = {
    'va_raw': (x, y, z, N),
    'va_slices': (x, N, y, N, z),
    'va_rank': (x, y, z, N),
    'va_checks': (x, N, y, N, z, N),
    'va_safe': (x, N, y, N, z, N),
}
grid, block = (n + 255) // 256, 256
fs = {k: mod.get_function(k) for k in args}
ref = x + y
times = {k: [] for k in args}
for k in args:
    z.fill(np.nan); fs[k]((grid,), (block,), args[k]); cp.cuda.Device().synchronize()
    assert bool(cp.all(z == ref)), k
    for _ in range(10): fs[k]((grid,), (block,), args[k])
s, e = cp.cuda.Event(), cp.cuda.Event()
for rep in range(60):
    for k in args:
        s.record(); fs[k]((grid,), (block,), args[k]); e.record(); e.synchronize()
        times[k].append(cp.cuda.get_elapsed_time(s, e))
# the copy ceiling, same run
c = cp.empty(2 * n, dtype=cp.float32); d = cp.empty(2 * n, dtype=cp.float32); ct = []
for rep in range(30):
    s.record(); d.data.copy_from_device(c.data, c.nbytes); e.record(); e.synchronize(); ct.append(cp.cuda.get_elapsed_time(s, e))
copy_ms = float(np.median(ct)); copy_gbps = 2 * c.nbytes / copy_ms / 1e6
print(cp.cuda.runtime.getDeviceProperties(0)['name'].decode(), f"copy of 512 MiB: {copy_ms:.4f} ms, {copy_gbps:.0f} GB/s")
base = float(np.median(times['va_raw']))
print("| kernel | what it adds to va_raw | median ms | GB/s | % of copy | vs va_raw |")
print("|---|---|---|---|---|---|")
what = {'va_raw': 'the old unsafe kernel', 'va_slices': 'six parameters (slices), one compare',
        'va_rank': "thread_index()'s rank (one-dimensional check)", 'va_checks': 'rank, slices and three compares',
        'va_safe': 'the safe kernel (DisjointSlice)'}
for k in args:
    ms = float(np.median(times[k])); gbps = 12 * n / ms / 1e6
    print(f"| {k} | {what[k]} | {ms:.4f} | {gbps:.0f} | {100*gbps/copy_gbps:.1f}% | {ms/base:.3f} |")
