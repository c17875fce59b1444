"""Plan creation on the GPU, timed through the Python binding: create + destroy of a CUDA plan,
repeated, with and without another plan alive (which keeps the CUDA primary context retained),
for the library BTCHOL_LIB points to. Prints one line per case: the first plan of the process
and the median of the rest, in ms.

    BTCHOL_LIB=path/libbtchol.so PYTHONPATH=bindings/python python3 plan-create-time.py [REPS]
"""
import statistics
import sys
import time

import btchol

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
shapes = [(1, 1024, 32, "nd"), (1, 64, 8, "nd"), (1024, 32, 16, "seq")]


def create(batch, N, n, alg):
    t = time.perf_counter()
    p = btchol.Plan(batch, N, n, backend="cuda", algorithm=alg)
    made = time.perf_counter() - t
    t = time.perf_counter()
    p.close()
    return made * 1e3, (time.perf_counter() - t) * 1e3


first = create(*shapes[0])
print(f"lib {btchol.library_path} first plan of the process: create {first[0]:.1f} ms, destroy {first[1]:.1f} ms")
for keep in (False, True):
    keeper = btchol.Plan(1, 2, 2, backend="cuda") if keep else None
    for shape in shapes:
        times = [create(*shape) for _ in range(reps)]
        c = statistics.median(t[0] for t in times)
        d = statistics.median(t[1] for t in times)
        print(f"  {'another plan alive' if keep else 'no other plan     '} B={shape[0]:4} N={shape[1]:5} n={shape[2]:2} {shape[3]:3}: "
              f"create {c:7.2f} ms, destroy {d:6.2f} ms (median of {reps})")
    if keeper is not None:
        keeper.close()
