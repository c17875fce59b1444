#!/usr/bin/env python3
"""LAPACK baseline for btchol: banded Cholesky (dpbtrf) of the same kind of matrix.

The SPD block-tridiagonal matrix (N diagonal blocks of n x n) is a band matrix with lower
bandwidth kd = 2n - 1, so LAPACK's dpbtrf (through scipy.linalg.cholesky_banded, lower=True)
factors it without fill outside the band: the textbook way to solve these systems with a
standard library, and the number btchol has to beat. Single-threaded, like `btchol bench
--threads 1`. Output fields follow `btchol bench --json`.

Usage: python3 bench/cpu_baseline.py --N 1024 --n 32 [--repeats R] [--json]
"""

import os

# Pin BLAS to one thread before numpy loads its BLAS: the baseline is single-core by design.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

try:
    import numpy as np  # noqa: E402
    import scipy  # noqa: E402
    import scipy.linalg  # noqa: E402
except ImportError as exc:  # pragma: no cover - environment problem, not a bug
    sys.exit(f"cpu_baseline.py needs numpy and scipy ({exc}); install them with: pip install numpy scipy")


def cpu_model():
    """The CPU's "model name" from /proc/cpuinfo, as btchol reports it; "cpu" where absent."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and value.strip():
                    return " ".join(value.split())
    except OSError:
        pass
    return "cpu"


def random_block_tridiagonal(n_blocks, n, margin=1.0, seed=42):
    """Random SPD block-tridiagonal matrix like btchol's reference::random_problem.

    E_i uniform in [-1, 1); D_i symmetric with uniform off-diagonal entries and a diagonal that
    makes the whole matrix strictly diagonally dominant by `margin`. (The random stream differs
    from btchol's; the distribution, and so the conditioning, is the same.)
    Returns D (N, n, n) and E (N-1, n, n) with E[i] = Psi[i+1, i].
    """
    rng = np.random.default_rng(seed)
    e = rng.uniform(-1.0, 1.0, size=(n_blocks - 1, n, n))
    lower = np.tril(rng.uniform(-1.0, 1.0, size=(n_blocks, n, n)), -1)
    d = lower + lower.transpose(0, 2, 1)
    # Off-diagonal absolute row sums of block row i: D_i, E_{i-1} (row i) and E_i^T (row i).
    rowsum = np.abs(d).sum(axis=2)
    rowsum[1:] += np.abs(e).sum(axis=2)
    rowsum[:-1] += np.abs(e).sum(axis=1)
    idx = np.arange(n)
    d[:, idx, idx] = rowsum + margin
    return d, e


def banded_lower(d, e):
    """LAPACK lower band storage (ab[i - j, j] = A[i, j], i >= j) with kd = 2n - 1, Fortran order
    so that dpbtrf works on it in place without a hidden copy."""
    n_blocks, n, _ = d.shape
    rows = n_blocks * n
    ab = np.zeros((2 * n, rows), order="F")
    r, c = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    low = r >= c
    # Diagonal blocks: element (r, c), r >= c, of block i sits at band row r - c, column i*n + c.
    cols = np.arange(n_blocks)[:, None] * n + c[low][None, :]
    ab[(r - c)[low][None, :], cols] = d[:, r[low], c[low]]
    # Sub-diagonal blocks: element (r, c) of E_i is A[(i+1)n + r, i*n + c]: band row n + r - c.
    if n_blocks > 1:
        cols = np.arange(n_blocks - 1)[:, None] * n + c.ravel()[None, :]
        ab[(n + r - c).ravel()[None, :], cols] = e[:, r.ravel(), c.ravel()]
    return ab


def matvec(d, e, x):
    """Psi x from the blocks (D stored full and symmetric)."""
    n_blocks, n, _ = d.shape
    xb = x.reshape(n_blocks, n)
    y = np.einsum("irc,ic->ir", d, xb)
    if n_blocks > 1:
        y[1:] += np.einsum("irc,ic->ir", e, xb[:-1])
        y[:-1] += np.einsum("icr,ic->ir", e, xb[1:])
    return y.ravel()


def norm_inf(d, e):
    """||Psi||_inf."""
    s = np.abs(d).sum(axis=2)
    if len(e):
        s[1:] += np.abs(e).sum(axis=2)
        s[:-1] += np.abs(e).sum(axis=1)
    return float(s.max())


def sequential_factor_flops(n_blocks, n):
    """btchol's sequential algorithm count, (7/3 N - 2) n^3: the common yardstick of gflops_factor."""
    return (7.0 / 3.0 * n_blocks - 2.0) * n**3


def dpbtrf_flops(rows, kd):
    """Flops dpbtrf actually does: per column j with k = min(kd, rows-1-j) entries below the
    diagonal, one sqrt, k divisions and a symmetric rank-1 update of k(k+1)/2 multiply-adds."""
    k = np.minimum(kd, rows - 1 - np.arange(rows)).astype(np.float64)
    return float(np.sum(1.0 + k + k * (k + 1.0)))


def stats(samples_s):
    s = sorted(samples_s)
    k = len(s)
    median = s[k // 2] if k % 2 else 0.5 * (s[k // 2 - 1] + s[k // 2])
    p90 = s[max(1, min(k, -(-9 * k // 10))) - 1]  # nearest rank, as btchol
    return median * 1e6, s[0] * 1e6, p90 * 1e6


def main():
    p = argparse.ArgumentParser(description="LAPACK dpbtrf/dpbtrs baseline on a random SPD block-tridiagonal matrix")
    p.add_argument("--N", type=int, default=1024, help="number of diagonal blocks N (default 1024)")
    p.add_argument("--n", type=int, default=32, help="block size n (default 32)")
    p.add_argument("--repeats", type=int, default=20, help="timed repeats (default 20)")
    p.add_argument("--warmup", type=int, default=2, help="untimed repeats first (default 2)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json", action="store_true", help="print one JSON line instead of text")
    a = p.parse_args()
    if a.N < 1 or a.n < 1 or a.repeats < 1 or a.warmup < 0:
        p.error("--N, --n and --repeats must be at least 1, --warmup at least 0")

    d, e = random_block_tridiagonal(a.N, a.n, seed=a.seed)
    ab = banded_lower(d, e)
    rows, kd = a.N * a.n, 2 * a.n - 1
    b = np.random.default_rng(a.seed + 1).uniform(-1.0, 1.0, size=rows)

    factor_s, solve_s = [], []
    x = None
    for rep in range(a.warmup + a.repeats):
        work = ab.copy(order="F")  # untimed: dpbtrf overwrites its input
        t0 = time.perf_counter()
        cb = scipy.linalg.cholesky_banded(work, lower=True, overwrite_ab=True, check_finite=False)
        t1 = time.perf_counter()
        rhs = b.copy()
        t2 = time.perf_counter()
        x = scipy.linalg.cho_solve_banded((cb, True), rhs, overwrite_b=True, check_finite=False)
        t3 = time.perf_counter()
        if rep >= a.warmup:
            factor_s.append(t1 - t0)
            solve_s.append(t3 - t2)

    r = np.abs(matvec(d, e, x) - b).max()
    backward_error = float(r / (norm_inf(d, e) * np.abs(x).max() + np.abs(b).max()))
    f_med, f_min, f_p90 = stats(factor_s)
    s_med, s_min, s_p90 = stats(solve_s)
    flops_seq = sequential_factor_flops(a.N, a.n)
    flops_lapack = dpbtrf_flops(rows, kd)
    row = {
        "backend": "lapack-dpbtrf",
        "device": cpu_model(),
        "algorithm": "banded",
        "dtype": "f64",
        "n": a.n,
        "N": a.N,
        "batch": 1,
        "nrhs": 1,
        "threads": 1,
        "repeats": a.repeats,
        "warmup": a.warmup,
        "factor_us_median": round(f_med, 3),
        "factor_us_min": round(f_min, 3),
        "factor_us_p90": round(f_p90, 3),
        "solve_us_median": round(s_med, 3),
        "solve_us_min": round(s_min, 3),
        "solve_us_p90": round(s_p90, 3),
        "gflops_factor": round(flops_seq / (f_med * 1e-6) / 1e9, 3),
        "gflops_schedule": round(flops_lapack / (f_med * 1e-6) / 1e9, 3),
        "flops_seq": round(flops_seq),
        "flops_schedule": round(flops_lapack),
        "bytes_min": 2 * (2 * a.N - 1) * a.n * a.n * 8,
        "backward_error": float(f"{backward_error:.3e}"),
        "lapack": f"scipy {scipy.__version__}, numpy {np.__version__}",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if a.json:
        print(json.dumps(row))
    else:
        print(
            f"dpbtrf N={a.N} n={a.n} (kd={kd}) on {row['device']}, 1 thread: factor {f_med / 1e3:.3f} ms median "
            f"(min {f_min / 1e3:.3f}), {row['gflops_factor']:.2f} GFLOP/s (sequential flop count), "
            f"solve {s_med / 1e3:.3f} ms, backward error {backward_error:.2e}"
        )


if __name__ == "__main__":
    main()
