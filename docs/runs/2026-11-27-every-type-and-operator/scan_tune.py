"""The look-back scan's tile shape on this GPU: scan_lookback_f32 / _i32 and scan_tile_copy
launched straight from the bundle's PTX (CuPy RawModule) at each block size, 2^26 and 2^28
elements, beside a device-to-device copy of the same bytes (CUDA events, median of 20)."""
import sys, numpy as np, cupy as cp

ptx = sys.argv[1]
mod = cp.RawModule(path=ptx)
new_sig = len(sys.argv) > 2 and sys.argv[2] == "init"

def timed(fn, reps=20):
    fn(); cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    out = []
    for _ in range(reps):
        s.record(); fn(); e.record(); e.synchronize()
        out.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(out))

epoch = [0]
print(f"{'kernel':<22} {'n':>10} {'block':>5} {'items':>5} {'ms':>8} {'GB/s':>7} {'% copy':>7}")
for n in (1 << 26, 1 << 28):
    x = cp.random.random(n, dtype=cp.float32)
    y = cp.empty_like(x)
    copy_ms = timed(lambda: y.__setitem__(slice(None), x))
    gbs = lambda ms: 8 * n / ms / 1e6
    print(f"{'memcpy d2d':<22} {n:>10} {'-':>5} {'-':>5} {copy_ms:8.4f} {gbs(copy_ms):7.1f} {100.0:7.1f}")
    counter = cp.zeros(1, dtype=cp.uint32)
    for name in ("scan_lookback_f32", "scan_tile_copy"):
        k = mod.get_function(name)
        for block in (128, 256, 512):
            items = 32
            grid = -(-n // (block * items))
            status = cp.zeros(3 * grid, dtype=cp.uint64)
            def run():
                epoch[0] += 1
                if name == "scan_tile_copy":
                    k((grid,), (block,), (x, y, cp.uint64(n), counter))
                elif new_sig:
                    k((grid,), (block,), (x, y, cp.uint64(n), status, counter, cp.uint32(epoch[0]), cp.uint32(0), cp.float32(0)))
                else:
                    k((grid,), (block,), (x, y, cp.uint64(n), status, counter, cp.uint32(epoch[0]), cp.uint32(0)))
            ms = timed(run)
            print(f"{name:<22} {n:>10} {block:>5} {items:>5} {ms:8.4f} {gbs(ms):7.1f} {100 * copy_ms / ms:7.1f}")
        if name == "scan_lookback_f32":
            ref = cp.cumsum(x.astype(cp.float64))
            err = float(cp.max(cp.abs(y.astype(cp.float64) - ref) / (cp.arange(1, n + 1) * 2e-7 + 1)))
            print(f"  check: max |y - cumsum| / (i * 2e-7 + 1) = {err:.3g}")
