#!/usr/bin/env python3
"""Per-level timeline of the narrow factor level kernel (globaltimer stamps inside each CTA).

    python3 scripts/factor-trace.py instrument DIR [SRC]
        copies SRC (default kernels/) to DIR and adds the stamps to DIR/small.cu: kernel start, after the PDL
        wait, panel start (the panel's loads landed) and end (plus its clock64 cycles), after the
        CTA barrier, after the panels' write-out, after the update (and, on the tensor-core path,
        the fills); thread 0 of each CTA prints them (`FT ...` lines) at the end. Asserts if the
        kernel no longer has the lines it hooks into.
    BTCHOL_KERNEL_DIR=DIR btchol bench ... --repeats 200 > trace.txt      (on the GPU machine)
    python3 scripts/factor-trace.py report trace.txt
        the last factor's levels: per phase the latest CTA's time, ns.

The printf after each kernel delays the next launch (so the gaps between levels are meaningless);
the phases inside a CTA are not affected. Run enough repeats for the clocks to settle (at 2 repeats
the panel took 5.7 µs instead of 3.5 at f64 n = 32, H100).
"""
import collections, shutil, sys


def instrument(d, src="kernels"):
    shutil.copytree(src, d, dirs_exist_ok=True)
    p = d + "/small.cu"
    s = open(p).read()

    def rep(old, new):
        nonlocal s
        assert old in s, "small.cu changed; update factor-trace.py: " + old[:70]
        s = s.replace(old, new, 1)

    rep("// Level-CTA record, LREC", "__device__ __forceinline__ unsigned long long gtime() { unsigned long long t; "
        "asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t; }\n"
        "__shared__ unsigned long long s_tr[8];\n// Level-CTA record, LREC")
    rep("    int f = potrf_panel_warp<1>(d, x, lane, thr, boost, nboost, s_col[warp]);",
        "    { real sum = 0; for (int k = 0; k < LD; ++k) sum += d[k] + x[0][k]; if (sum == real(12345.678)) s_col[0][0] = 1; }\n"
        "    if (threadIdx.x == 0) s_tr[2] = gtime();\n    long long c0 = clock64();\n"
        "    int f = potrf_panel_warp<1>(d, x, lane, thr, boost, nboost, s_col[warp]);\n"
        "    if (threadIdx.x == 0) s_tr[3] = gtime(), s_tr[6] = clock64() - c0;")
    rep("    if (!WIDE && PANEL_WRITE_OUT) write_out_panels(r, fact_base, xslot_base, sX, sL, n);",
        "    if (tid == 0) s_tr[4] = gtime();\n"
        "    if (!WIDE && PANEL_WRITE_OUT) write_out_panels(r, fact_base, xslot_base, sX, sL, n);\n"
        "    if (tid == 0) s_tr[5] = gtime();")
    if "        return;\n    }\n#endif" in s:  # the tensor-core update returns early
        rep("        return;\n    }\n#endif", "        if (tid == 0) s_tr[7] = gtime();\n        return;\n    }\n#endif")
    rep("    // Owned fills: Ψ_{r,c} ← −X_r·X_cᵀ.\n", "    if (tid == 0) s_tr[7] = gtime();\n    // Owned fills: Ψ_{r,c} ← −X_r·X_cᵀ.\n")
    tail = "                            fail, piv_thr, piv_boost, boosted);                                                 \\\n    }"
    rep("        wait_for_previous_kernel();                                                                             \\\n"
        "        factor_record<WIDE>",
        "        if (threadIdx.x == 0) s_tr[0] = gtime();                                                                \\\n"
        "        wait_for_previous_kernel();                                                                             \\\n"
        "        if (threadIdx.x == 0) s_tr[1] = gtime();                                                                \\\n"
        "        factor_record<WIDE>")
    rep(tail, "                            fail, piv_thr, piv_boost, boosted);                                                 \\\n"
        "        __syncthreads();                                                                                        \\\n"
        "        if (threadIdx.x == 0) printf(\"FT %d %d %d %llu %llu %llu %llu %llu %llu %llu %llu %llu\\n\", level, blockIdx.x, "
        "r[1], s_tr[0], s_tr[1], s_tr[2], s_tr[3], s_tr[4], s_tr[5], gtime(), s_tr[6], s_tr[7]); \\\n    }")
    open(p, "w").write(s)


def report(path):
    rows = [list(map(int, l.split()[1:])) for l in open(path) if l.startswith("FT ")]
    runs, cur, last = [], [], -1
    for r in rows:  # a factor starts again at level 0
        if r[0] < last:
            runs.append(cur)
            cur = []
        cur.append(r)
        last = r[0]
    runs.append(cur)
    print(f"{len(runs)} factors traced; the last one (ns; per phase the latest CTA):")
    print("level CTAs | loads  panel (cycles) | barrier write-out update(+fills) fills | CTA after wait")
    by = collections.defaultdict(list)
    for r in runs[-1]:
        by[r[0]].append(r)
    for lv in sorted(by):
        rs = by[lv]
        m = lambda f: max(f(x) for x in rs)
        # fields: level blk nelim t_start t_wait t_panel0 t_panel1 t_sync t_wout t_end panel_cycles t_upd
        print(f"L{lv:<3d} {len(rs):4d} | {m(lambda x: x[5] - x[4]):5d} {m(lambda x: x[6] - x[5]):5d} ({m(lambda x: x[10]):5d}) | "
              f"{m(lambda x: x[7] - x[6]):5d} {m(lambda x: x[8] - x[7]):5d} {m(lambda x: x[11] - x[8]):5d} "
              f"{m(lambda x: x[9] - x[11]):5d} | {m(lambda x: x[9] - x[4]):6d}")


if __name__ == "__main__":
    {"instrument": instrument, "report": report}[sys.argv[1]](*sys.argv[2:])
