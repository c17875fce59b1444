#!/usr/bin/env python3
"""Timeline inside the cluster elimination (btchol_factor_eliminate_cluster; f64, ld = 64 or 72 < ld <= 128, sm_90),
from globaltimer stamps taken by lane 0 of every warp.

    python3 scripts/cluster-trace.py instrument DIR [SRC]
        copies SRC (default kernels/) to DIR and adds the stamps to DIR/block_ops.cuh and
        DIR/factor.cu. Asserts if the kernels no longer have the lines it hooks into.
    BTCHOL_KERNEL_DIR=DIR btchol bench --backend cuda --algorithm nd --dtype f64 --n 128 --N 64 \\
        --rhs device --repeats 50 > trace.txt          (on the GPU machine; the cluster CTAs of the
        first elimination of each launch print one `CT ...` line per warp at the end)
    python3 scripts/cluster-trace.py report trace.txt
        the last factor's levels: per warp of the D CTA (blk 0) and of the coupling CTAs (blk 1, 2),
        each event in µs after the D CTA's PDL wait.

Events (slots of a warp's row of stamps; 0 = not reached):
  panel P (0..3)  4P+0 the panel's columns < 32P may be read (D CTA: ready[0][P] passed; coupling
                  CTA: after the barrier that follows it), 4P+1 its update by them done (D CTA:
                  before the wait for T_P's first sub-panel), 4P+2 T_P available (D CTA: the
                  whole of it, ready[1][P]; its sub-panels were solved as they came), 4P+3 the
                  panel solved and stored
  D CTA warp W    16 its own panel's reload and rank-32 update by panel W-1 (accumulated along
                  that panel's solve) start, 17 its sweep starts, 18 the sweep is published
                  (T_W, rdiag, signals)
  every warp      20 kernel start, 21 after the PDL wait, 22 its part done (before the cluster's
                  last barrier), 23 kernel end
The printf at the end of each launch delays the next launch, so only the phases inside a launch
mean anything; run enough repeats for the clocks to settle (see scripts/factor-trace.py).
"""
import collections, shutil, signal, sys

SLOTS = 24


def instrument(d, src="kernels"):
    shutil.copytree(src, d, dirs_exist_ok=True)

    def patch(name, edits):
        p = f"{d}/{name}"
        s = open(p).read()
        for old, new in edits:
            assert s.count(old) == 1, f"{name} changed; update cluster-trace.py: {old[:80]!r}"
            s = s.replace(old, new)
        open(p, "w").write(s)

    prelude = (
        "__device__ __forceinline__ unsigned long long ct_time() { unsigned long long t; "
        "asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t; }\n"
        f"__shared__ unsigned long long ct_s[8][{SLOTS}];\n"
        "#define CT_MARK(k) do { if ((threadIdx.x & 31) == 0) ct_s[threadIdx.x / 32][k] = ct_time(); } while (0)\n\n")
    patch("block_ops.cuh", [
        ("#define REG_STEP (NT / LD > 0 ? NT / LD : 1)\n", prelude + "#define REG_STEP (NT / LD > 0 ? NT / LD : 1)\n"),
        # the coupling CTAs' panels (potrf_trsm_blocked_panels, CL)
        ("            __syncthreads();  // the previous panels' stores are visible\n        }\n",
         "            __syncthreads();  // the previous panels' stores are visible\n        }\n"
         "        if constexpr (CL) CT_MARK(4 * P + 0);\n"),
        ("        if constexpr (!BLOCKED_WARP_SWEEP) {  // the whole CTA sweeps",
         "        if constexpr (CL) CT_MARK(4 * P + 1);\n        if constexpr (!BLOCKED_WARP_SWEEP) {  // the whole CTA sweeps"),
        ("            if (threadIdx.x == 0) mbar_wait(&sh.ready[1][P], 0);\n            __syncthreads();\n",
         "            if (threadIdx.x == 0) mbar_wait(&sh.ready[1][P], 0);\n            __syncthreads();\n"
         "            CT_MARK(4 * P + 2);\n"),
        ("        if (active && !diag_warp) panel_store<BLOCK_W, C0>(a, row_out, row_so, blk, i, n);\n",
         "        if (active && !diag_warp) panel_store<BLOCK_W, C0>(a, row_out, row_so, blk, i, n);\n"
         "        if constexpr (CL) CT_MARK(4 * P + 3);\n"),
        # the D CTA's warps (lookahead_solve_panel, lookahead_d_warp)
        ("    if constexpr (C0 > 0) mbar_wait_cta(&sh.ready[0][P], 0);\n    lookahead_rows_update<W * BLOCK_W, C0, 0, C0>(a, D, n);\n",
         "    if constexpr (C0 > 0) mbar_wait_cta(&sh.ready[0][P], 0);\n    CT_MARK(4 * P + 0);\n"
         "    lookahead_rows_update<W * BLOCK_W, C0, 0, C0>(a, D, n);\n    CT_MARK(4 * P + 1);\n"),
        ("            mbar_wait_cta(&sh.ready[1][P], 0);\n            if (sh.panel_failed[P] >= 0) return C0 + sh.panel_failed[P];\n",
         "            mbar_wait_cta(&sh.ready[1][P], 0);\n            CT_MARK(4 * P + 2);\n"
         "            if (sh.panel_failed[P] >= 0) return C0 + sh.panel_failed[P];\n"),
        ("    if (has_row) panel_store<BLOCK_W, C0>(a, D, nullptr, 0, i, n);\n    __syncwarp();  // (the lanes read each other's rows",
         "    if (has_row) panel_store<BLOCK_W, C0>(a, D, nullptr, 0, i, n);\n    CT_MARK(4 * P + 3);\n"
         "    __syncwarp();  // (the lanes read each other's rows"),
        ("        panel_load<BLOCK_W, C0>(own, D, 0, i, has_row, n);\n        dmma_rows_subtract<true>(own, acc);\n",
         "        CT_MARK(16);\n        panel_load<BLOCK_W, C0>(own, D, 0, i, has_row, n);\n"
         "        dmma_rows_subtract<true>(own, acc);\n"),
        ("    int nb = 0;\n    const int fs =\n        panel_sweep_warp<C0, true>(",
         "    CT_MARK(17);\n    int nb = 0;\n    const int fs =\n        panel_sweep_warp<C0, true>("),
        ("    mbar_arrive(&sh.ready[1][W]);\n    if (lane == 0) signal_couplings(&sh.ready[1][W], ncpl);\n",
         "    mbar_arrive(&sh.ready[1][W]);\n    if (lane == 0) signal_couplings(&sh.ready[1][W], ncpl);\n    CT_MARK(18);\n"),
        ("        if (threadIdx.x == 0) nboost = sh.boosted;\n        // The D CTA's shared memory stays",
         "        if (threadIdx.x == 0) nboost = sh.boosted;\n        CT_MARK(22);\n        // The D CTA's shared memory stays"),
    ])
    args = ", ".join(f"ct_s[w][{k}]" for k in range(SLOTS))
    fmt = " ".join(["%llu"] * SLOTS)
    patch("factor.cu", [
        ("    wait_for_previous_kernel();\n#if BLOCKED_PANEL\n    const int x = blockIdx.x / 3, blk = blockIdx.x % 3;\n",
         "    if ((threadIdx.x & 31) == 0)\n"
         f"        for (int k = 0; k < {SLOTS}; ++k) ct_s[threadIdx.x / 32][k] = 0;\n"
         "    CT_MARK(20);\n    wait_for_previous_kernel();\n    CT_MARK(21);\n"
         "#if BLOCKED_PANEL\n    const int x = blockIdx.x / 3, blk = blockIdx.x % 3;\n"),
        ("                                                                 piv_boost, nboost);\n"
         "    if (blk == 0 && threadIdx.x == 0) {\n",
         "                                                                 piv_boost, nboost);\n"
         "    CT_MARK(23);\n"
         "    if (x == 0 && (threadIdx.x & 31) == 0) {\n"
         "        const int w = threadIdx.x / 32;\n"
         f"        printf(\"CT %d %d %d %d {fmt}\\n\", level, (int)gridDim.x, blk, w, {args});\n"
         "    }\n"
         "    if (blk == 0 && threadIdx.x == 0) {\n"),
    ])


def report(path):
    rows = []
    for line in open(path):
        if line.startswith("CT "):
            v = list(map(int, line.split()[1:]))
            rows.append((v[0], v[1], v[2], v[3], v[4:]))
    # A factor's launches come in level order; a level lower than the last starts another factor.
    runs, cur, last = [], [], -1
    for r in rows:
        if r[0] < last and cur:
            runs.append(cur)
            cur = []
        cur.append(r)
        last = r[0]
    if cur:
        runs.append(cur)
    if not runs:
        sys.exit("no CT lines: was the bench run with BTCHOL_KERNEL_DIR set to the instrumented kernels?")
    print(f"{len(runs)} factors traced; the last one, the first elimination of each level (µs after the D CTA's PDL wait)")
    by = collections.defaultdict(dict)
    for lv, grid, blk, w, s in runs[-1]:
        by[lv][(blk, w)] = (grid, s)
    for lv in sorted(by):
        warps = by[lv]
        if (0, 0) not in warps:
            continue
        t0 = warps[(0, 0)][1][21]
        us = lambda t: f"{(t - t0) / 1e3:6.2f}" if t else "     -"
        print(f"level {lv} ({warps[(0, 0)][0] // 3} eliminations): kernel start {us(warps[(0, 0)][1][20])}, "
              f"end {max(s[23] for _, s in warps.values()) / 1e3 - t0 / 1e3:6.2f}")
        print("   CTA warp | panel P: cols<32P ready, updated, T ready, solved  (P = 0..3) | own reload, sweep start, published | done")
        for (blk, w) in sorted(warps):
            s = warps[(blk, w)][1]
            panels = " | ".join(" ".join(us(s[4 * p + k]) for k in range(4)) for p in range(4))
            own = " ".join(us(s[k]) for k in (16, 17, 18)) if blk == 0 else " " * 20
            print(f"   {blk:3d} {w:4d} | {panels} | {own} | {us(s[22])}")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # (report | head)
    {"instrument": instrument, "report": report}[sys.argv[1]](*sys.argv[2:])
