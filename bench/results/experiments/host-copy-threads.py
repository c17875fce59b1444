"""How fast the GPU machine's CPU copies host memory, by thread count: NumPy copies (which
release the GIL) of a 132 MB array (the B = 1024, N = 32, n = 16 f64 batch's D and E) into
page-locked memory (cupyx.empty_pinned) and into ordinary memory, split in contiguous stripes
over 1, 2, 4, 8 threads; and the same copy pipelined with the H2D DMA in 8 MB chunks. The
question: what a threaded, pipelined staging of pageable uploads could reach against the
driver's 7-12 GB/s (host-memory-upload.py) and the bus's 51-54 GB/s from page-locked memory.

    python3 host-copy-threads.py
"""
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import cupy
import cupyx
import numpy as np

src = np.random.default_rng(1).standard_normal(132_120_576 // 8)
dst_pinned = cupyx.empty_pinned(src.shape, src.dtype)
dst_plain = np.empty_like(src)
dst_plain[...] = 1.0  # (faulted in)
dev = cupy.empty(src.shape, src.dtype)


def timed(f, reps=9):
    f()
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return statistics.median(t)


for threads in (1, 2, 4, 8, 16):
    with ThreadPoolExecutor(threads) as pool:
        bounds = np.linspace(0, src.size, threads + 1).astype(int)

        def copy(dst):
            list(pool.map(lambda k: np.copyto(dst[bounds[k]:bounds[k + 1]], src[bounds[k]:bounds[k + 1]]), range(threads)))

        for name, dst in (("page-locked", dst_pinned), ("ordinary", dst_plain)):
            t = timed(lambda: copy(dst))
            print(f"{threads:2} threads -> {name:11}: {src.nbytes / t / 1e9:5.1f} GB/s", flush=True)

        # Pipelined: chunk k copied by the threads while chunk k-1's DMA runs (two pinned slots).
        chunk = 1 << 20  # elements (8 MB)
        slots = [cupyx.empty_pinned(chunk, src.dtype) for _ in range(2)]
        events = [None, None]
        stream = cupy.cuda.Stream(non_blocking=True)

        def pipelined():
            for k, lo in enumerate(range(0, src.size, chunk)):
                hi = min(lo + chunk, src.size)
                s = k % 2
                if events[s] is not None:
                    events[s].synchronize()
                b = np.linspace(lo, hi, threads + 1).astype(int)
                list(pool.map(lambda j: np.copyto(slots[s][b[j] - lo:b[j + 1] - lo], src[b[j]:b[j + 1]]), range(threads)))
                dev[lo:hi].set(slots[s][: hi - lo], stream=stream)
                events[s] = stream.record()
            stream.synchronize()

        t = timed(pipelined)
        print(f"{threads:2} threads, pipelined with the DMA: {src.nbytes / t / 1e9:5.1f} GB/s", flush=True)
        assert bool((dev[-5:] == cupy.asarray(src[-5:])).all())
