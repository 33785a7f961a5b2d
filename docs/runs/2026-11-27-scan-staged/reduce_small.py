"""The f64 and i64 sums at 2^20..2^22 (reduce_op_sum_f64 / _i64 launched straight from the
bundle's PTX, CuPy) at each block size and grid, beside cupy.sum (CUB), timed alike: the L2
flushed before each rep, CUDA events around the launch, median of 60."""
import sys, numpy as np, cupy as cp

mod = cp.RawModule(path=sys.argv[1])
dev = cp.cuda.Device()
sms = dev.attributes["MultiProcessorCount"]
flush_buf = cp.empty(512 << 20, dtype=cp.uint8)

def timed(fn, reps=60):
    fn(); dev.synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    out = []
    for _ in range(reps):
        flush_buf.fill(1)
        s.record(); fn(); e.record(); e.synchronize()
        out.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(out))

print(f"device {cp.cuda.runtime.getDeviceProperties(dev.id)['name'].decode()}, {sms} SMs")
print(f"{'what':<34} {'n':>9} {'ms':>8} {'vs CUB':>7}")
for t, name in ((cp.float64, "reduce_op_sum_f64"), (cp.int64, "reduce_op_sum_i64")):
    k = mod.get_function(name)
    for n in (1 << 20, 1 << 21, 1 << 22):
        x = (cp.random.random(n) * 100).astype(t)
        res = cp.zeros(1, dtype=t)
        res0 = cp.zeros((), dtype=t)
        peer = timed(lambda: cp.sum(x, out=res0))
        print(f"{'cupy.sum (CUB)':<34} {n:>9} {peer:8.4f}")
        ref = float(cp.sum(x))
        partials = cp.zeros(8 * sms * 16, dtype=t)
        counter = cp.zeros(1, dtype=cp.uint32)
        for block in (128, 256, 512):
            tiles = -(-n // (block * 2 * 4))
            for per_sm in (2048 // block, 2 * 2048 // block):
                grid = min(tiles, sms * per_sm)
                def run():
                    k((grid,), (block,), (x, cp.uint64(n), partials, counter, res))
                ms = timed(run)
                ok = abs(float(res[0]) - ref) <= 1e-9 * abs(ref) + 1e-6
                print(f"{name + f' {block}x{grid}':<34} {n:>9} {ms:8.4f} {peer / ms:7.3f} {'ok' if ok else 'WRONG'}")
