#!/usr/bin/env python3
# Numerical model of the look-ahead D CTA's order of operations (which column ranges each update
# takes), against numpy's Cholesky. Rows >= n are identity padding; the upper triangle is not stored.
import numpy as np
def run(n, LD, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)); A = A @ A.T + n * np.eye(n)
    Dm = np.zeros((LD, LD)); Dm[:n, :n] = np.tril(A)        # global memory: lower triangle only
    P = (LD + 31) // 32; T = {}; rdiag = {}
    def load(rows, C0):   # panel_load: lower triangle of rows, identity / zero padding
        WP = min(32, LD - C0); a = np.zeros((32, 32))
        for r in range(32):
            i = rows + r
            for k in range(WP):
                col = C0 + k
                if i < LD:
                    a[r, k] = Dm[i, col] if (i < n and col < n and col <= i) else (1.0 if i == col else 0.0)
        return a
    def store(a, rows, C0):
        WP = min(32, LD - C0)
        for r in range(32):
            i = rows + r
            for k in range(WP):
                col = C0 + k
                if i < n and col < n and col <= i: Dm[i, col] = a[r, k]
    def upd(a, RA, RB, M0, M1):   # lookahead_rows_update
        def rowsval(R):
            m = np.zeros((32, LD))
            for r in range(32):
                if R + r < n: m[r, :n] = Dm[R + r, :n]
            return m
        Av, Bv = rowsval(RA), rowsval(RB)
        a -= Av[:, M0:M1] @ Bv[:, M0:M1].T
    def solve(a, C0):   # panel_solve
        WP = min(32, LD - C0)
        for j in range(WP):
            a[:, j] *= rdiag[C0][j]
            for k in range(j + 1, WP): a[:, k] -= a[:, j] * T[C0][j, k]
    def sweep(a, W):    # panel_sweep_warp on the diagonal warp
        C0 = 32 * W; WP = min(32, LD - C0); Tm = np.zeros((32, 32)); rd = np.zeros(32)
        for j in range(WP):
            d = a[j, j] if C0 + j < n else 1.0
            assert d > 0
            rs = 1 / np.sqrt(d); v = a[:, j].copy()
            l = v * rs; l[j] = d * rs
            t = v * rs * rs; rd[j] = rs
            for k in range(j, WP): Tm[j, k] = l[k]     # T[j][k] = L[C0+k][C0+j]
            a[:, j] = l
            for m in range(j + 1, WP): a[:, m] -= t * v[m]   # c[j+m] = v of pivot row j+m
        T[C0] = Tm; rdiag[C0] = rd
        store(a, C0, C0)
    # time order consistent with the mbarriers: stage p = warp p sweeps; warps w > p solve panel p
    own_pending = {}
    for p in range(P):
        W = p
        C0 = 32 * W
        if W == 0:
            own = load(C0, C0)
        else:
            own = load(C0, C0); upd(own, C0, C0, C0 - 32, C0)   # rank 32 after the solve of panel W-1
        sweep(own, W)
        for w in range(p + 1, P):
            rows = 32 * w
            if p == w - 1 and p > 0:   # early own update (cols < 32(w-1)) stored before panel p's T
                o = load(rows, rows); upd(o, rows, rows, 0, 32 * p); store(o, rows, rows)
            a = load(rows, 32 * p)
            upd(a, rows, 32 * p, 0, 32 * p)
            solve(a, 32 * p); store(a, rows, 32 * p)
    L = np.tril(Dm[:n, :n]); ref = np.linalg.cholesky(A)
    return np.abs(L - ref).max() / np.abs(ref).max()
for n, LD in [(128, 128), (100, 104), (104, 104), (97, 104), (120, 120), (113, 120), (72, 72), (96, 96), (65, 72)]:
    print(n, LD, "%.2e" % run(n, LD, n))
