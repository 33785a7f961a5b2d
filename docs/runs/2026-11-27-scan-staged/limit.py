"""What stops the look-back scan short of the copy, measured in one run from the bundle's PTX
(CuPy RawModule, the library's launch: blocks of 256, 32 KiB of dynamic shared memory):
the copy, the tile copy (the scan's ticket, barrier and 16-byte loads and stores, no scan),
the scan without its look-back (scan_no_look_back: every tile's prefix taken as the initial
value, so each tile waits for no other), and the scan (scan_lookback), at 2^26, 2^28 and 2^30
elements (CUDA events, median of 20; inputs past the L2)."""
import sys, numpy as np, cupy as cp

mod = cp.RawModule(path=sys.argv[1])
dev = cp.cuda.Device()
print(f"device: {cp.cuda.runtime.getDeviceProperties(dev.id)['name'].decode()}")

def timed(fn, reps=20):
    fn(); dev.synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    out = []
    for _ in range(reps):
        s.record(); fn(); e.record(); e.synchronize()
        out.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(out))

epoch = [0]
rows = []
print(f"{'kernel':<28} {'n':>11} {'ms':>8} {'GB/s':>7} {'% copy':>7}")
for n in (1 << 26, 1 << 28, 1 << 30):
    x = {"i32": cp.random.randint(-1000, 1000, n, dtype=cp.int32),
         "f32": cp.random.random(n, dtype=cp.float32)}
    y = cp.empty_like(x["f32"])
    copy_ms = timed(lambda: y.__setitem__(slice(None), x["f32"]))
    gbs = lambda ms: 8 * n / ms / 1e6
    print(f"{'memcpy d2d':<28} {n:>11} {copy_ms:8.4f} {gbs(copy_ms):7.1f} {100.0:7.1f}")
    counter = cp.zeros(1, dtype=cp.uint32)
    status = cp.zeros(n // 4096 + 1, dtype=cp.uint64)
    k = mod.get_function("scan_tile_copy")
    ms = timed(lambda: k((n // (256 * 32),), (256,), (x["i32"], y, cp.uint64(n), counter)))
    print(f"{'scan_tile_copy':<28} {n:>11} {ms:8.4f} {gbs(ms):7.1f} {100 * copy_ms / ms:7.1f}")
    rows.append(("scan_tile_copy", n, 100 * copy_ms / ms))
    for op, t, init in (("sum_i32", "i32", cp.int32(0)), ("sum_f32", "f32", cp.float32(0)), ("max_f32", "f32", cp.float32(-np.inf))):
        scan = {"sum_i32": "scan_lookback_i32", "sum_f32": "scan_lookback_f32", "max_f32": "scan_lookback_max_f32"}[op]
        for name in ("scan_no_look_back_" + op, scan):
            k = mod.get_function(name)
            def run():
                epoch[0] += 1
                k((n // (256 * 32),), (256,), (x[t], y, cp.uint64(n), status, counter, cp.uint32(epoch[0]), cp.uint32(0), init), shared_mem=256 * 128)
            ms = timed(run)
            print(f"{name:<28} {n:>11} {ms:8.4f} {gbs(ms):7.1f} {100 * copy_ms / ms:7.1f}")
            rows.append((name, n, 100 * copy_ms / ms))
    del x, y

print("\n% of the copy")
names = list(dict.fromkeys(r[0] for r in rows))
print(f"{'kernel':<28} " + " ".join(f"{'2^' + str(s):>7}" for s in (26, 28, 30)))
for name in names:
    print(f"{name:<28} " + " ".join(f"{p:7.1f}" for r, m, p in rows if r == name))
