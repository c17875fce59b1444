"""Host-to-device traffic of a GPU plan, timed through the Python binding: `upload` (the
matrix's D and E blocks) and `factor_solve` (upload + factor + solve, one call) from ordinary
pageable NumPy arrays and from the same data in page-locked memory (cupyx.empty_pinned), for
the library BTCHOL_LIB points to. The question: how much of a caller's end-to-end time with a
new host matrix per call is the copy, and what page-locked input buys. Prints one line per shape
and memory kind: medians in µs, the upload's GB/s.

    BTCHOL_LIB=path/libbtchol.so PYTHONPATH=bindings/python python3 host-memory-upload.py [REPS]
"""
import statistics
import sys
import time

import cupy
import cupyx
import numpy as np

import btchol

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
shapes = [  # (B, N, n, algorithm)
    (1, 64, 32, "nd"), (1, 1024, 8, "nd"), (1, 1024, 32, "nd"), (1, 4096, 32, "nd"), (1, 16384, 32, "nd"),
    (1024, 32, 16, "seq"), (256, 128, 32, "seq"),
]


def median_us(f):
    f()
    f()
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return statistics.median(t) * 1e6


def factor_us(p, d, e):
    """The factor alone (each repeat after an untimed upload)."""
    t = []
    for k in range(reps + 2):
        p.upload(d, e)
        s = time.perf_counter()
        p.factor()
        t.append(time.perf_counter() - s)
    return statistics.median(t[2:]) * 1e6


def pinned_copy(a):
    p = cupyx.empty_pinned(a.shape, a.dtype)
    p[...] = a
    return p


rng = np.random.default_rng(7)
print(f"lib {btchol.library_path}")
for B, N, n, alg in shapes:
    D = rng.uniform(-1, 1, (B, N, n, n))
    D = (D + D.transpose(0, 1, 3, 2)) / 2 + 4 * n * np.eye(n)
    E = rng.uniform(-1, 1, (B, N - 1, n, n))
    b = rng.standard_normal((B, N * n, 1))
    mb = (D.nbytes + E.nbytes) / 1e6
    with btchol.Plan(B, N, n, backend="cuda", algorithm=alg) as p:
        p.upload(D, E)
        p.factor()
        x = p.solve(b.copy())
        solve = median_us(lambda: p.solve(b.copy()))
        for kind, (d, e) in (("pageable", (D, E)), ("pinned", (pinned_copy(D), pinned_copy(E)))):
            up = median_us(lambda: p.upload(d, e))
            fs = median_us(lambda: p.factor_solve(d, e, b.copy()))
            fac = factor_us(p, d, e)
            y = p.factor_solve(d, e, b.copy())
            err = np.abs(y - x).max() / np.abs(x).max()
            dev = cupy.empty(d.shape, d.dtype)
            raw = median_us(lambda: (dev.set(d), cupy.cuda.Device().synchronize()))
            print(f"B={B:4} N={N:5} n={n:2} {alg:3} {mb:7.1f} MB {kind:8}: upload {up:8.1f} µs ({mb * 1e3 / up:5.1f} GB/s; "
                  f"CuPy copy of D alone {d.nbytes / 1e3 / raw:5.1f} GB/s), factor {fac:7.1f}, solve {solve:7.1f}, "
                  f"factor_solve {fs:8.1f} µs; |x1 - x2|/|x| {err:.1e}", flush=True)
        reg = median_us(lambda: (cupy.cuda.runtime.hostRegister(D.ctypes.data, D.nbytes, 0),
                                 cupy.cuda.runtime.hostUnregister(D.ctypes.data)))
        print(f"  cudaHostRegister + Unregister of D ({D.nbytes / 1e6:.1f} MB, pageable): {reg:8.1f} µs", flush=True)
