// Small-block level kernels (BT_LD ≤ 32): one launch per nested-dissection level, whole blocks in
// registers, no global-memory round trips inside a level.
//
// One CTA per *Schur update* of the level (survivor a and its one or two eliminated neighbours):
// each of its two 128-thread groups eliminates one neighbour (potrf and trsm of its couplings in
// registers, one warp per coupling: potrf_panel_warp), then the whole CTA updates D_a and writes
// the fill, after one CTA barrier. A
// neighbour shared by two updates is eliminated by both CTAs (it costs parallel threads, not
// time) and written by its owner only, so a level needs no second launch and no grid-wide
// synchronisation. Inputs (diag, slots, y) are read-only within a level except for the blocks a
// CTA owns; results go to separate buffers (fact, xslots, z), so the redundant readers never race
// with the owner's writes.
//
// Padding: rows/columns n..LD-1 of a diagonal block are treated as the identity and of a
// coupling as zero, so every loop runs to the compile-time LD and unrolls.
#if BT_LD <= 32
#define SNT 256
#define FULL_MASK 0xffffffffu

// Level-CTA record, LREC int32 each (built by the host from crate::schedule, engine.rs):
//   [0] survivor a updated by this CTA (−1: none)   [1] eliminations in this CTA (1 or 2)
//   per elimination g at 2 + 8g: block, n_couplings, slot_0, slot_1, fill_slot, fill_rows, owned,
//                                coupling index of survivor a (−1: none)
#define LREC 18
#define E_BLOCK 0
#define E_NCPL 1
#define E_SLOT 2
#define E_FILL 4
#define E_FILL_ROWS 5
#define E_OWNED 6
#define E_UPD 7
// The update and the fills are 2×2 register tiles per thread (one tile per product for LD = 32):
// each k costs two 16-byte shared loads for four FMAs.
#define TILE (LD >= 2 ? 2 : 1)
#define TILES_PER_DIM (LD / TILE)
#define TILES (TILES_PER_DIM * TILES_PER_DIM)
#define TILE_PASSES ((TILES + SNT - 1) / SNT)

// The solved couplings sX (one BS-sized slot each) are column-major (i + k·LD), except where the
// update and the fills run on the FP64 tensor cores (SX_DMMA: f64, LD a multiple of 16, sm_80+):
// there row i is contiguous and its element pairs are XOR-swizzled, pair p of row i at
// i·LD + 2·(p ^ sx_swizzle(i)), so that both a panel warp's row stores (lane i: row i) and the
// mma fragment loads (lane: row lane/4, pair lane%4 + 4u) are free of bank conflicts.
constexpr bool SX_DMMA = DMMA_ARCH && sizeof(real) == 8 && LD % 16 == 0;
__device__ __forceinline__ int sx_swizzle(int i) { return ((i & 7) >> 1) | ((i & 1) << 2); }
__device__ __forceinline__ int sx_at(int i, int k) {
    return SX_DMMA ? i * LD + 2 * ((k >> 1) ^ sx_swizzle(i)) + (k & 1) : i + k * LD;
}
// Lane i (< LD) puts its row x[] of a solved coupling into slot sx.
__device__ __forceinline__ void store_sx_row(real* sx, const real (&x)[LD], int lane) {
    if (SX_DMMA) {
#pragma unroll
        for (int p = 0; p < LD / 2; ++p)
            *reinterpret_cast<real2*>(sx + lane * LD + 2 * (p ^ sx_swizzle(lane))) = real2{x[2 * p], x[2 * p + 1]};
    } else {
#pragma unroll
        for (int k = 0; k < LD; ++k) sx[lane + k * LD] = x[k];
    }
}

#if DMMA_ARCH
// acc[v] += tile (I, J) of X_A·X_Bᵀ for X_A, X_B in the SX_DMMA layout: lane's slot c of k-step
// (u, v) is k = 2·(4u + c) + v, the same k in its A and B fragments (the sum runs over all k in
// another order), so each fragment pair is one 16-byte load. Two accumulators (v = 0, 1) keep two
// independent mma chains in flight; their sum is the tile.
__device__ __forceinline__ void dmma_tile_abt(double (&acc)[2][2], const real* XA, const real* XB, int I, int J,
                                              int lane) {
    const int r = lane >> 2, c = lane & 3, ia = 8 * I + r, ib = 8 * J + r;
#pragma unroll
    for (int u = 0; u < LD / 8; ++u) {
        const real2 a = *reinterpret_cast<const real2*>(XA + ia * LD + 2 * ((4 * u + c) ^ sx_swizzle(ia)));
        const real2 b = *reinterpret_cast<const real2*>(XB + ib * LD + 2 * ((4 * u + c) ^ sx_swizzle(ib)));
        dmma_8x8x4(acc[0], a.x, b.x);
        dmma_8x8x4(acc[1], a.y, b.y);
    }
}
#endif

// acc[p][q] += Σ_k A[i0+p, k]·B[j0+q, k] over k < LD (column-major, leading dimension LD).
__device__ __forceinline__ void tile_abt(real (&acc)[TILE][TILE], const real* A, const real* B, int i0, int j0) {
#pragma unroll
    for (int k = 0; k < LD; ++k) {
        real a[TILE], b[TILE];
        if (TILE == 2) {
            const real2 av = *reinterpret_cast<const real2*>(A + i0 + k * LD);
            const real2 bv = *reinterpret_cast<const real2*>(B + j0 + k * LD);
            a[0] = av.x, a[TILE - 1] = av.y, b[0] = bv.x, b[TILE - 1] = bv.y;
        } else {
            a[0] = A[i0 + k * LD], b[0] = B[j0 + k * LD];
        }
#pragma unroll
        for (int p = 0; p < TILE; ++p)
#pragma unroll
            for (int q = 0; q < TILE; ++q) acc[p][q] += a[p] * b[q];
    }
}

// Lane i loads row i of diagonal block D into registers (identity padding beyond n).
__device__ __forceinline__ void load_diag_rows(real (&a)[LD], const real* D, int n, int lane) {
#pragma unroll
    for (int k = 0; k < LD; ++k) a[k] = (lane < n && k < n) ? D[lane + k * LD] : real(lane == k ? 1 : 0);
}

// (rsqrt_pivot: common.cuh.)
// The smallest normal number of the element type (FLT_MIN, DBL_MIN).
#define MIN_NORMAL real(sizeof(real) == 8 ? 2.2250738585072014e-308 : 1.17549435082228751e-38)
// potrf_panel_warp without EXACT: a pivot was subnormal before any failure; sweep again with EXACT.
#define PANEL_SUBNORMAL (-2)

// Register Cholesky of a diagonal block with the rows of NX coupling blocks carried along, in one
// warp (right-looking, the blocked "tall panel" [D; C] of the paper's potrf → trsm pair): lane i
// holds row i of D in a[] and row i of each coupling C in x[c][]. On return a[k] = L_ik for k ≤ i
// and x[c] = rows of C·L⁻ᵀ. Each step publishes column j of L once, through the warp's shared
// scratch `col` (2·LD elements, 16-byte aligned, double-buffered so one __syncwarp per column
// suffices), and both the trailing update and the coupling rows read it back two elements per
// 16-byte load: the trsm is FMAs beside the pivot chain instead of a second sweep. (Shuffles
// measured 1.5x slower at LD = 32: the compiler funnels them through one register pair, so each
// shuffle waits for the previous one's FMA; bench/micro/potrf_panel.cu.) The next pivot comes from
// lane j+1's own row (d ← a_{j+1,j+1} − l_{j+1,j}², the FMA of its trailing update, bit for bit) by
// one shuffle, so the pivot chain does not pass through the shared column and its barrier
// (PIVOT_SHUFFLE: the nested-dissection levels, latency-bound, f64 n = 16, N = 1024 −12 %);
// without PIVOT_SHUFFLE every lane forms it from the column it reads anyway, one instruction fewer
// per column (the batches' per-item sequential factor, throughput-bound: +14 % with the shuffle
// at B = 1024, n = 16; H100, bench/results/ab/README.md). Same bits either way.
// No branch per column, so the compiler overlaps the next pivot's square root with this
// column's update: a failing pivot is recorded and the sweep runs on with a harmless one (its
// results are never used). Returns the first failing column, −1, or (without EXACT, see
// rsqrt_pivot) PANEL_SUBNORMAL; warp-uniform. Pivot policy `thr`, `boost` (common.cuh), pivots
// boosted before a failure added to `nboost` (warp-uniform). Rows of D beyond n are identity
// padding, rows of C beyond n zero. `on_column(j, xj)` runs after column j with this lane's
// final elements X_c[lane][j] (kernels/sequential.cu publishes them to a second warp).
// W < 32: the warp sweeps 32 / W panels side by side, one per segment of W ≥ LD lanes (`lane` the
// lane in its segment, `col` the segment's scratch; results segment-uniform instead of
// warp-uniform): at LD = 8 a quarter of the instructions per panel. NX = 0 (x unused): lanes past
// LD may hold coupling rows in a[] instead (a tall panel, a row a lane: 3·LD ≤ 32), since a row
// below the block gets exactly a coupling row's scaling and update.
struct NoColumnHook {
    __device__ __forceinline__ void operator()(int, const real*) const {}
};
template <int NX, bool EXACT = false, bool PIVOT_SHUFFLE = true, int W = 32, class ColumnHook = NoColumnHook>
__device__ __forceinline__ int potrf_panel_warp(real (&a)[LD], real (&x)[NX > 0 ? NX : 1][LD], int lane, real thr,
                                                real boost, int& nboost, real* col, ColumnHook on_column = ColumnHook()) {
    static_assert(W >= LD && 32 % W == 0, "a segment holds the panel's rows");
    real d = __shfl_sync(FULL_MASK, a[0], 0, W);
    int failed = -1;
    bool subnormal = false;
#pragma unroll
    for (int j = 0; j < LD; ++j) {
        bool boosted;
        real p = policy_pivot(d, thr, boost, boosted);
        const bool ok = p > real(0) && isfinite(p);  // (false for NaN)
        nboost += boosted && failed < 0;
        if (!EXACT) subnormal |= failed < 0 && ok && p < MIN_NORMAL;
        failed = (failed < 0 && !ok) ? j : failed;
        p = ok ? p : real(1);
        const real inv = rsqrt_pivot<EXACT>(p);
        const real l = a[j] * inv;
        a[j] = lane == j ? p * inv : l;
        real xj[NX > 0 ? NX : 1];
#pragma unroll
        for (int c = 0; c < NX; ++c) xj[c] = x[c][j] *= inv;
        real* cj = col + (j & 1) * LD;
        if (lane < LD) cj[lane] = l;
        __syncwarp();
        real lk[LD];
#pragma unroll
        for (int k = 0; k < LD; ++k)
            if (k > j) {
                if (LD % 2 == 0 && k % 2 == 0) {
                    const real2 v = *reinterpret_cast<const real2*>(cj + k);
                    lk[k] = v.x, lk[k + 1] = v.y;  // (k + 1 < LD: LD even)
                } else if (LD % 2 != 0 || k == j + 1) {
                    lk[k] = cj[k];  // (odd LD, or an odd first k)
                }
            }
        if (j + 1 < LD)
            d = PIVOT_SHUFFLE ? __shfl_sync(FULL_MASK, fma(-l, l, a[j + 1]), j + 1, W)  // (lane j+1's own row)
                              : fma(-lk[j + 1], lk[j + 1], __shfl_sync(FULL_MASK, a[j + 1], j + 1, W));
#pragma unroll
        for (int k = j + 1; k < LD; ++k) {
            a[k] = fma(-l, lk[k], a[k]);
#pragma unroll
            for (int c = 0; c < NX; ++c) x[c][k] = fma(-xj[c], lk[k], x[c][k]);
        }
        on_column(j, xj);
    }
    return subnormal ? PANEL_SUBNORMAL : failed;
}

#if LD >= 8
// Cholesky by the four warps of a 128-thread group (LD a multiple of 4): lane i holds row i and
// warp w the columns k ≡ w (mod 4), so each column costs one CTA barrier and a quarter of the trailing
// update per warp. Writes L (column-major, lower part) to sL and 1/diag(L) to invd, and to *s_fail
// the first failing column or −1 (read it after the next __syncthreads). There is no early exit:
// after a failure the loop runs on with garbage that is never written out, so every warp meets
// every barrier and a failure can neither deadlock nor race. All threads of the CTA call it
// (inactive groups only join the barriers). Pivot policy `thr`, `boost` (common.cuh); the
// group's boosted pivots are counted in *s_boost (read it after the next __syncthreads).
__device__ void potrf_group(bool active, const real* D, int n, real* sL, real* invd, int* s_fail, int w, int lane,
                            real thr, real boost, int* s_boost) {
    constexpr int Q = LD / 4;
    real a[Q];
#pragma unroll
    for (int q = 0; q < Q; ++q) {
        const int k = 4 * q + w;
        a[q] = (active && lane < n && k < n) ? D[lane + k * LD] : real(lane == k ? 1 : 0);
    }
    if (w == 0 && lane == 0) *s_fail = -1, *s_boost = 0;
#pragma unroll
    for (int j = 0; j < LD; ++j) {
        if (active && w == j % 4) {
            bool boosted;
            const real d = policy_pivot(__shfl_sync(FULL_MASK, a[j / 4], j), thr, boost, boosted);
            if (lane == 0 && boosted) ++*s_boost;
            if (lane == 0 && (!(d > real(0)) || !isfinite(d)) && *s_fail < 0) *s_fail = j;
            const real inv = rsqrt(d);
            const real v = lane == j ? d * inv : a[j / 4] * inv;
            a[j / 4] = v;
            if (lane < LD) sL[lane + j * LD] = v;
            if (lane == 0) invd[j] = inv;
        }
        __syncthreads();  // (named per-group barriers measured no faster and reserve all 16 ids)
        if (!active) continue;
        const real li = lane < LD ? sL[lane + j * LD] : real(0);
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int k = 4 * q + w;
            if (k > j) a[q] -= li * sL[k + j * LD];
        }
    }
}
#endif

// acc[k] −= s·v[k] for k in [k0, LD), v in shared memory (16-byte aligned at even offsets):
// pairs of elements per load where LD is even, which halves the shared-memory instructions
// (the bottleneck of a warp that keeps its rows in registers).
__device__ __forceinline__ void axpy_tail(real (&acc)[LD], real s, const real* v, int k0) {
    if (LD % 2 != 0) {
#pragma unroll
        for (int k = 0; k < LD; ++k)
            if (k >= k0) acc[k] -= s * v[k];
        return;
    }
#pragma unroll
    for (int p = 0; p < LD / 2; ++p) {
        const int k = 2 * p;
        if (k >= k0) {
            const real2 pair = *reinterpret_cast<const real2*>(v + k);
            acc[k] -= s * pair.x;
            acc[k + 1] -= s * pair.y;
        } else if (k + 1 >= k0) {
            acc[k + 1] -= s * v[k + 1];
        }
    }
}

// One row x of X ← X·L⁻ᵀ, L in shared memory (column-major, LD), invd = 1/diag(L).
__device__ __forceinline__ void trsm_row(real (&x)[LD], const real* L, const real* invd) {
#pragma unroll
    for (int j = 0; j < LD; ++j) {
        x[j] *= invd[j];
        axpy_tail(x, x[j], L + j * LD, j + 1);
    }
}

// Where the panels' results go: for blocks beyond 16 the panel warps leave them in shared memory
// and the whole CTA stores the owned ones after the barrier (write_out_panels; from the four
// panel warps the stores took ~2.9K of a level's ~17K cycles at n = 32); for smaller blocks the
// panel warps store them directly, which measured faster (H100, f64 n = 8, N = 64: 36 vs 44 µs).
#define PANEL_WRITE_OUT (LD > 16)

// One warp's panel of eliminate_panels with rsqrt_pivot's subnormal handling: loads the rows,
// sweeps, and on success stores them as eliminate_panels does (`sl`: the factor's shared rows,
// `out_l` its owned global block, `sx`, `out_x` the coupling's; any may be null). Out of line:
// such pivots are rare, and inline the second sweep would weigh on the first's registers.
__device__ __noinline__ int panel_exact(const real* D, const real* X, int n, real* sl, real* out_l, real* sx,
                                        real* out_x, real thr, real boost, int* nboost, real* col) {
    const int lane = threadIdx.x & 31;
    real d[LD], x[1][LD];
    load_diag_rows(d, D, n, lane);
#pragma unroll
    for (int k = 0; k < LD; ++k) x[0][k] = (X && lane < LD) ? X[lane + k * LD] : real(0);
    const int f = potrf_panel_warp<1, true>(d, x, lane, thr, boost, *nboost, col);
    if (f < 0 && lane < LD && sx) store_sx_row(sx, x[0], lane);
    if (f < 0 && lane < LD)
#pragma unroll
        for (int k = 0; k < LD; ++k) {
            if (sl) sl[lane + k * LD] = d[k];
            if (out_l && k <= lane && lane < n && k < n) out_l[lane + k * LD] = d[k];
            if (out_x) out_x[lane + k * LD] = x[0][k];
        }
    return f;
}

// Where a level CTA's eliminations read their blocks: the per-level kernels read global memory;
// the factor cluster (btchol_factor_cluster_small) reads what other CTAs pushed into its shared
// memory (`recv`, one slot per input, bit k of `mask` set where input k arrived: k = 1 + g is
// D_e of elimination g, k = 3 + 2g + c its coupling c) and global memory for the rest.
struct GlobalInputs {
    const int* r;
    const real* diag_base;
    const real* slot_base;
    __device__ const real* diag(int g) const { return diag_base + r[2 + 8 * g + E_BLOCK] * BS; }
    __device__ const real* coupling(int g, int c, bool has_x) const {
        return slot_base + (has_x ? r[2 + 8 * g + E_SLOT + c] : 0) * BS;
    }
};
struct ClusterInputs {
    GlobalInputs global;
    const real* recv;
    int mask;
    __device__ const real* diag(int g) const { return mask >> (1 + g) & 1 ? recv + (1 + g) * BS : global.diag(g); }
    __device__ const real* coupling(int g, int c, bool has_x) const {
        const int k = 3 + 2 * g + c;
        return has_x && (mask >> k & 1) ? recv + k * BS : global.coupling(g, c, has_x);
    }
};

// The eliminations of a level CTA by register panels (narrow levels: latency): warp 2g + c of
// warps 0..3 (one per SM sub-partition) factors D_e of elimination g with its coupling c carried
// along (potrf_panel_warp); with two couplings both warps factor D_e, redundantly, so neither
// waits for the other's column of L. Leaves the solved couplings in sX[2g + c] and, per
// PANEL_WRITE_OUT, the factor's rows in sL[g] or the owned factor and couplings in global memory;
// s_fail[g], s_boost[g] (read after the next __syncthreads).
template <typename Inputs>
__device__ __forceinline__ void eliminate_panels(const int* r, const Inputs& in, real* fact_base, real* xslot_base,
                                                 real* sX, real* sL, int* s_fail, int* s_boost, int n, real thr,
                                                 real boost) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = warp >> 1, c = warp & 1;
    const int* e = r + 2 + 8 * g;
    if (threadIdx.x < 2 && threadIdx.x >= r[1]) s_fail[threadIdx.x] = -1, s_boost[threadIdx.x] = 0;
    if (warp >= 4 || g >= r[1]) return;
    const int n_cpl = e[E_NCPL];
    const bool has_x = c < n_cpl;
    if (!has_x && c > 0) return;
    real d[LD], x[1][LD];
    const real* De = in.diag(g);
    load_diag_rows(d, De, n, lane);
    const real* X = in.coupling(g, c, has_x);
#pragma unroll
    for (int k = 0; k < LD; ++k) x[0][k] = (has_x && lane < LD) ? X[lane + k * LD] : real(0);
    int nboost = 0;
    __shared__ __align__(16) real s_col[4][2 * LD];
    int f = potrf_panel_warp<1>(d, x, lane, thr, boost, nboost, s_col[warp]);
    const bool own = e[E_OWNED] && !PANEL_WRITE_OUT;
    real* out_l = own && c == 0 ? fact_base + e[E_BLOCK] * BS : nullptr;
    real* out_x = own && has_x ? xslot_base + e[E_SLOT + c] * BS : nullptr;
    if (f == PANEL_SUBNORMAL) {
        nboost = 0;
        f = panel_exact(De, has_x ? X : nullptr, n,
                        PANEL_WRITE_OUT && c == 0 ? sL + g * BS : nullptr, out_l,
                        has_x ? sX + (2 * g + c) * BS : nullptr, out_x, thr, boost, &nboost, s_col[warp]);
        if (c == 0 && lane == 0) s_fail[g] = f, s_boost[g] = nboost;
        return;
    }
    if (c == 0 && lane == 0) s_fail[g] = f, s_boost[g] = nboost;
    if (f >= 0 || lane >= LD) return;
    if (has_x) store_sx_row(sX + (2 * g + c) * BS, x[0], lane);
#pragma unroll
    for (int k = 0; k < LD; ++k) {
        if (PANEL_WRITE_OUT && c == 0) sL[g * BS + lane + k * LD] = d[k];
        if (out_l && k <= lane && lane < n && k < n) out_l[lane + k * LD] = d[k];
        if (out_x) out_x[lane + k * LD] = x[0][k];
    }
}

// dst ← src for one LD×LD block (shared → global), 16-byte stores by threads t < nt (t: this
// thread's index among them; the whole CTA by default); LOWER: a
// factor (column-major), only the lower triangle of the n×n block, zeros elsewhere (its stored
// form); otherwise a solved coupling in sX's layout (sx_at).
template <bool LOWER>
__device__ __forceinline__ void store_block(real* dst, const real* src, int n, int t, int nt) {
    constexpr int V = 16 / sizeof(real) <= LD ? 16 / sizeof(real) : 1;  // elements per store
    for (int idx = t * V; idx < LD * LD; idx += nt * V) {
        real v[V];
#pragma unroll
        for (int t = 0; t < V; ++t) {
            const int i = (idx + t) % LD, k = (idx + t) / LD;
            v[t] = LOWER ? ((i >= k && i < n && k < n) ? src[idx + t] : real(0)) : src[sx_at(i, k)];
        }
        if (V == 2) *reinterpret_cast<real2*>(dst + idx) = *reinterpret_cast<const real2*>(v);
        else if (V == 4) *reinterpret_cast<float4*>(dst + idx) = *reinterpret_cast<const float4*>(v);
        else dst[idx] = v[0];
    }
}

// Stores the owned factors and couplings that eliminate_panels left in shared memory (PANEL_WRITE_OUT).
__device__ __forceinline__ void write_out_panels(const int* r, real* fact_base, real* xslot_base, const real* sX,
                                                 const real* sL, int n, int t = threadIdx.x, int nt = SNT) {
    for (int g = 0; g < r[1]; ++g) {
        const int* e = r + 2 + 8 * g;
        if (!e[E_OWNED]) continue;
        store_block<true>(fact_base + e[E_BLOCK] * BS, sL + g * BS, n, t, nt);
        for (int c = 0; c < e[E_NCPL]; ++c)
            store_block<false>(xslot_base + e[E_SLOT + c] * BS, sX + (2 * g + c) * BS, n, t, nt);
    }
}

#if LD >= 8
// The same by 128-thread groups (wide levels: throughput): group g factors D_e with its four warps
// (potrf_group, into sL[g]), then solves the couplings one row per thread (trsm_row). Fewer
// registers and no redundant factorization, so more CTAs share an SM. All threads call it (its
// barriers are the CTA's).
__device__ __forceinline__ void eliminate_groups(const int* r, const real* diag_base, const real* slot_base,
                                                 real* fact_base, real* xslot_base, real* sX, real* sL,
                                                 real (*s_invd)[LD], int* s_fail, int* s_boost, int n, real thr,
                                                 real boost) {
    const int tid = threadIdx.x, g = tid >> 7, t = tid & 127, lane = tid & 31;
    const int* e = r + 2 + 8 * g;
    const bool active = g < r[1];
    real x[LD];
    const int n_cpl = active ? e[E_NCPL] : 0, c = t / LD, row = t % LD;
    const bool trsm_thread = t < n_cpl * LD;
    if (trsm_thread) {
        const real* X = slot_base + e[E_SLOT + c] * BS;
#pragma unroll
        for (int k = 0; k < LD; ++k) x[k] = X[row + k * LD];
    }
    potrf_group(active, diag_base + (active ? e[E_BLOCK] : 0) * BS, n, sL + g * BS, s_invd[g], &s_fail[g], t >> 5,
                lane, thr, boost, &s_boost[g]);
    __syncthreads();
    if (s_fail[0] >= 0 || s_fail[1] >= 0) return;
    if (active && e[E_OWNED]) {
        real* out = fact_base + e[E_BLOCK] * BS;
        for (int idx = t; idx < LD * LD; idx += 128) {
            const int i = idx % LD, k = idx / LD;
            if (i >= k && i < n && k < n) out[idx] = sL[g * BS + idx];
        }
    }
    if (trsm_thread) {
        trsm_row(x, sL + g * BS, s_invd[g]);
        real* out = xslot_base + e[E_SLOT + c] * BS;
#pragma unroll
        for (int k = 0; k < LD; ++k) {
            if (!SX_DMMA) sX[(2 * g + c) * BS + row + k * LD] = x[k];  // (store_sx_row after the loop:
            if (e[E_OWNED]) out[row + k * LD] = x[k];                     // f32 n = 32 71 -> 83 registers)
        }
        if (SX_DMMA) store_sx_row(sX + (2 * g + c) * BS, x, row);
    }
}
#endif

// Triangular solves of one column held across a warp (lane i: element i), the shuffles of the
// small-block and sequential solves. rdi = 1 / L_ii of this lane's row; rows beyond n are identity.
// Forward, v ← L⁻¹v: lane i holds row i of L in l[].
__device__ __forceinline__ real trsv_lower_warp(real v, const real (&l)[LD], real rdi, int lane) {
#pragma unroll
    for (int j = 0; j < LD; ++j) {
        if (lane == j) v *= rdi;
        const real zj = __shfl_sync(FULL_MASK, v, j);
        if (lane > j) v -= l[j] * zj;
    }
    return v;
}
// Backward, v ← L⁻ᵀv: lane i holds column i of L (row i of Lᵀ) in lc[].
__device__ __forceinline__ real trsv_lower_trans_warp(real v, const real (&lc)[LD], real rdi, int lane) {
#pragma unroll
    for (int j = LD - 1; j >= 0; --j) {
        if (lane == j) v *= rdi;
        const real xj = __shfl_sync(FULL_MASK, v, j);
        if (lane < j) v -= lc[j] * xj;
    }
    return v;
}
// (A·x)_lane for A in shared memory, A(i, k) at A[i·si + k·sk], x_k held by lane k. Two partial
// sums halve the FMA chain.
__device__ __forceinline__ real matvec_warp(const real* A, int si, int sk, real x, int lane) {
    real s[2] = {0, 0};
#pragma unroll
    for (int k = 0; k < LD; ++k)
        s[k & 1] += (lane < LD ? A[lane * si + k * sk] : real(0)) * __shfl_sync(FULL_MASK, x, k);
    return s[0] + s[1];
}
// Σ_k a[k]·x_k for this lane's row a[] (registers), x_k held by lane k.
__device__ __forceinline__ real rowvec_warp(const real (&a)[LD], real x) {
    real s[2] = {0, 0};
#pragma unroll
    for (int k = 0; k < LD; ++k) s[k & 1] += a[k] * __shfl_sync(FULL_MASK, x, k);
    return s[0] + s[1];
}

#if DMMA_ARCH
// The update's lower 8×8 tiles, D_a − Σ_e X_{a,e}·X_{a,e}ᵀ (only i ≥ j), and every tile of the
// owned fills, −X_r·X_cᵀ, on the tensor cores, one tile per warp at a time (the DFMA tiles were
// bound by their shared-memory loads: 2.9 of a level's ~9.5 µs at f64 n = 32, H100). Results go
// to emit(g, i, j, v[2], count): g = −1 for D_a, else the elimination whose fill it is; v[t] is
// element (i + t, j) (column-major neighbours), t < count (i ≥ j: one or two elements; an update
// element above the diagonal is never emitted). Each lane's mma accumulator holds a row pair
// (i, j), (i, j + 1) of the product it computes, so the product is computed transposed
// (operands swapped; D_a's product is symmetric) to make its pairs neighbours in the result's
// column-major storage. D_a is read at Da (shared memory, column-major).
template <typename Emit>
__device__ __forceinline__ void update_on_tensor_cores(const int* r, const real* sX, const real* Da, Emit emit) {
    constexpr int T = LD / 8, T_UPD = T * (T + 1) / 2;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, a = r[0], n_elim = r[1];
    int fill_of[2], n_fill = 0;
    for (int gg = 0; gg < n_elim; ++gg)
        if (r[2 + 8 * gg + E_FILL] >= 0 && r[2 + 8 * gg + E_OWNED]) fill_of[n_fill++] = gg;
    const int n_upd = a >= 0 ? T_UPD : 0;
    for (int task = warp; task < n_upd + n_fill * T * T; task += SNT / 32) {
        double acc[2][2] = {};
        int P, Q, g = -1;  // output tile (P, Q): rows 8P.., columns 8Q..
        if (task < n_upd) {
            P = 0, Q = task;  // the task-th tile of the lower triangle, row by row
            while (Q > P) Q -= ++P;
            for (int gg = 0; gg < n_elim; ++gg) {
                const real* X = sX + (2 * gg + r[2 + 8 * gg + E_UPD]) * BS;
                dmma_tile_abt(acc, X, X, Q, P, lane);
            }
        } else {
            const int f = (task - n_upd) / (T * T), t = (task - n_upd) % (T * T);
            g = fill_of[f];
            const int* eg = r + 2 + 8 * g;
            P = t % T, Q = t / T;
            dmma_tile_abt(acc, sX + (2 * g + 1 - eg[E_FILL_ROWS]) * BS, sX + (2 * g + eg[E_FILL_ROWS]) * BS, Q, P,
                          lane);
        }
        const int i = 8 * P + 2 * (lane & 3), j = 8 * Q + (lane >> 2);
        real v[2];
#pragma unroll
        for (int t = 0; t < 2; ++t) v[t] = acc[0][t] + acc[1][t];
        if (g >= 0) {
            v[0] = -v[0], v[1] = -v[1];
            emit(g, i, j, v, 2);
        } else if (i >= j) {
            v[0] = Da[i + j * LD] - v[0], v[1] = Da[i + 1 + j * LD] - v[1];
            emit(-1, i, j, v, 2);
        } else if (i + 1 == j) {
            v[0] = Da[j + j * LD] - v[1];
            emit(-1, j, j, v, 1);
        }
    }
}
#endif

// Factorization of one level-CTA record r of item `item`: D̂_e ← chol(D_e), X_{s,e} ← Ψ_{s,e}·D̂_e⁻ᵀ,
// fill Ψ_{r,c} ← −X_r·X_cᵀ, D_a ← D_a − Σ_e X_{a,e}·X_{a,e}ᵀ. WIDE picks the eliminations' kernel:
// eliminate_groups for levels with CTAs enough to fill the device, eliminate_panels for the narrow
// levels (engine.rs decides).
// Dynamic shared memory: small_factor_smem_bytes (jit.rs): sX [2][2][BS], sL [2][BS], then sDa [BS]
// (D_a, copied in while the panels run; only with SX_DMMA).
template <bool WIDE>
__device__ __forceinline__ void factor_record(const int* r, int item, int level, real* diag, real* slots, real* fact,
                                              real* xslots, int n, long long item_diag, long long item_slots,
                                              unsigned long long* fail, real piv_thr, real piv_boost,
                                              unsigned* boosted) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* sX = reinterpret_cast<real*>(smem_raw);  // [2][2][BS] solved couplings
    real* sL = sX + 4 * BS;                         // [2][BS] factors
    real* sDa = sL + 2 * BS;                        // [BS] D_a (SX_DMMA)
    __shared__ int s_fail[2], s_boost[2];
    if (skip_item(fail[item], level)) return;
    const int tid = threadIdx.x;
    const int a = r[0], n_elim = r[1];
    real* item_diag_base = diag + item * item_diag;
    // Fills go to slots of the next level, which no CTA of this level reads.
    const real* item_slot_base = slots + item * item_slots;

    // This thread's tiles of D_a, only needed at the end: loaded into registers now, except by
    // the panel kernel for blocks beyond 16, whose sweep needs every register: it only pulls D_a
    // into L1 now and loads it after the sweep (held across the sweep, the tiles were spilled,
    // and the spill stores waited for the loads: a memory latency before the sweep could start;
    // at n = 8 the late load measured 14 % slower, H100, f64 N = 1024).
    real da[TILE_PASSES][TILE][TILE];
    const real* Da = item_diag_base + (a >= 0 ? a : 0) * BS;
    auto load_da = [&]() {
#pragma unroll
        for (int u = 0; u < TILE_PASSES; ++u) {
            const int tt = tid + u * SNT, i0 = TILE * (tt % TILES_PER_DIM), j0 = TILE * (tt / TILES_PER_DIM);
#pragma unroll
            for (int p = 0; p < TILE; ++p)
#pragma unroll
                for (int q = 0; q < TILE; ++q) da[u][p][q] = tt < TILES ? Da[i0 + p + (j0 + q) * LD] : real(0);
        }
    };
    constexpr int DA_LINES = (int)((BS * sizeof(real) + 127) / 128);
    // With SX_DMMA, D_a is copied into shared memory (sDa) while the panels run: read after them
    // from global memory it cost a memory latency (a prefetch into L1 did not survive the sweep).
    constexpr bool DA_LATE = !WIDE && LD > 16;
    if (SX_DMMA && a >= 0) {
        constexpr int V = 16 / sizeof(real);
        for (int k = V * tid; k < BS; k += V * SNT) copy_async_16(sDa + k, Da + k);
        commit_async();
    } else if (a >= 0 && !DA_LATE) load_da();
    else if (a >= 0 && DA_LATE)
        for (int k = tid; k < DA_LINES; k += SNT) prefetch_l1(Da + k * (128 / sizeof(real)));
    real* fact_base = fact + item * item_diag;
    real* xslot_base = xslots + item * item_slots;
#if LD >= 8
    if (WIDE) {
        __shared__ real s_invd[2][LD];
        eliminate_groups(r, item_diag_base, item_slot_base, fact_base, xslot_base, sX, sL, s_invd, s_fail, s_boost, n,
                         piv_thr, piv_boost);
    } else
#endif
        eliminate_panels(r, GlobalInputs{r, item_diag_base, item_slot_base}, fact_base, xslot_base, sX, sL, s_fail,
                         s_boost, n, piv_thr, piv_boost);
    if (SX_DMMA) wait_async<0>();  // (sDa)
    __syncthreads();
    // Boosted pivots count once, in the CTA that owns the elimination.
    if (tid < 2 && tid < n_elim && r[2 + 8 * tid + E_OWNED] && s_boost[tid] > 0)
        atomicAdd(&boosted[item], (unsigned)s_boost[tid]);
    if (s_fail[0] >= 0 || s_fail[1] >= 0) {
        if (tid < 2 && s_fail[tid] >= 0) atomicMin(&fail[item], fail_key(level, r[2 + 8 * tid + E_BLOCK], s_fail[tid]));
        return;
    }
    if (!WIDE && PANEL_WRITE_OUT) write_out_panels(r, fact_base, xslot_base, sX, sL, n);
#if DMMA_ARCH
    if constexpr (SX_DMMA) {
        real* Da_out = item_diag_base + (a >= 0 ? a : 0) * BS;
        real* item_slots_out = slots + item * item_slots;
        update_on_tensor_cores(r, sX, sDa, [&](int g, int i, int j, const real (&v)[2], int count) {
            real* out = (g < 0 ? Da_out : item_slots_out + r[2 + 8 * g + E_FILL] * BS) + i + j * LD;
            if (count == 2) *reinterpret_cast<real2*>(out) = real2{v[0], v[1]};
            else out[0] = v[0];
        });
        return;
    }
#endif
    // D_a ← D_a − Σ X_{a,e}·X_{a,e}ᵀ (lower triangle), summed in a fixed order.
    if (a >= 0) {
        if (DA_LATE) load_da();
#pragma unroll
        for (int u = 0; u < TILE_PASSES; ++u) {
            const int tt = tid + u * SNT, i0 = TILE * (tt % TILES_PER_DIM), j0 = TILE * (tt / TILES_PER_DIM);
            if (tt >= TILES || i0 + TILE - 1 < j0) continue;  // tiles wholly above the diagonal
            real acc[TILE][TILE] = {};
            for (int gg = 0; gg < n_elim; ++gg) {
                const real* X = sX + (2 * gg + r[2 + 8 * gg + E_UPD]) * BS;
                tile_abt(acc, X, X, i0, j0);
            }
#pragma unroll
            for (int p = 0; p < TILE; ++p)
#pragma unroll
                for (int q = 0; q < TILE; ++q)
                    if (i0 + p >= j0 + q) item_diag_base[a * BS + i0 + p + (j0 + q) * LD] = da[u][p][q] - acc[p][q];
        }
    }
    // Owned fills: Ψ_{r,c} ← −X_r·X_cᵀ.
    for (int gg = 0; gg < n_elim; ++gg) {
        const int* eg = r + 2 + 8 * gg;
        if (eg[E_FILL] < 0 || !eg[E_OWNED]) continue;
        const real* Xr = sX + (2 * gg + eg[E_FILL_ROWS]) * BS;
        const real* Xc = sX + (2 * gg + 1 - eg[E_FILL_ROWS]) * BS;
        real* F = slots + item * item_slots + eg[E_FILL] * BS;
        for (int tt = tid; tt < TILES; tt += SNT) {
            const int i0 = TILE * (tt % TILES_PER_DIM), j0 = TILE * (tt / TILES_PER_DIM);
            real acc[TILE][TILE] = {};
            tile_abt(acc, Xr, Xc, i0, j0);
#pragma unroll
            for (int p = 0; p < TILE; ++p)
#pragma unroll
                for (int q = 0; q < TILE; ++q) F[i0 + p + (j0 + q) * LD] = -acc[p][q];
        }
    }
}

// One level of the factorization, one CTA per (level-CTA record, item). CTAS_PER_SM is the
// launch bound's minimum (0: none). Register allocation follows it closely, so it is set only
// where measured: the f32 panels beyond 16 are held to 128 registers, two CTAs per SM (NVRTC 13.0
// gave them 157, one CTA per SM, and the wide levels of f32 n = 32, N = 16384 took 930 µs
// instead of ~700), those of 9..16 to 64, four per SM (97 registers otherwise, two per SM:
// n = 16, N = 16384 took 339 µs instead of 268, despite 48 bytes of spills; at n = 8 the same
// bound cost 4 %, H100, 2026-11-24); the f64 panels of 9..16 to 128, two per SM (the tensor-core
// update took them to 144, one per SM: f64 n = 16, N = 1024 81 µs instead of 71); an explicit 1
// elsewhere let ptxas spend all 255 registers for nothing.
// scripts/kernel-resources.sh prints a build's registers.
#define FACTOR_LEVEL_KERNEL(NAME, WIDE, CTAS_PER_SM)                                                       \
    extern "C" __global__ void __launch_bounds__(SNT, CTAS_PER_SM)                                             \
        NAME(real* diag, real* slots, real* fact, real* xslots, const int* recs, int n_work, int n,             \
             long long item_diag, long long item_slots, unsigned long long* fail, int level, real piv_thr,      \
             real piv_boost, unsigned* boosted) {                                                               \
        const int* r = recs + LREC * (blockIdx.x % n_work);                                                     \
        prefetch_l1(r), prefetch_l1(r + LREC - 1); /* (constant: fetched while the previous level runs) */      \
        wait_for_previous_kernel();                                                                             \
        factor_record<WIDE>(r, blockIdx.x / n_work, level, diag, slots, fact, xslots, n, item_diag, item_slots, \
                            fail, piv_thr, piv_boost, boosted);                                                 \
    }
FACTOR_LEVEL_KERNEL(btchol_factor_level_small, false, sizeof(real) == 4 ? (LD > 16 ? 2 : LD > 8 ? 4 : 0) : (LD > 8 && LD <= 16 ? 2 : 0))
FACTOR_LEVEL_KERNEL(btchol_factor_level_small_wide, true, 0)

// The deep levels of the factorization on one thread-block cluster per item (sm_90, f64 blocks
// padded to 16 or 32: the tensor-core update, whose result elements each lane sends): rank j takes
// the j-th level-CTA record of each level, and the blocks a level produces (the updated D_a, the
// owned fills) go from the producer's registers straight into the shared memory of the CTAs that
// read them at the next level (st.async, counted on the reader's mbarrier of that level), instead
// of through global memory and a kernel boundary. What stays on a level's critical path is its
// own chain: the panels (from shared memory), one CTA barrier, the update and its pushes. The
// factor blocks and solved couplings still go to global memory (for the solve), after the pushes.
//
// The host compiles the program (src/cuda/factor_cluster.rs), FC_UNIT ints per (level, rank),
// each followed by its level-CTA record (LREC ints):
//   [0] record index (−1: idle at this level)   [1] mask of the inputs that arrive in
//   shared memory (bit k: input k, ClusterInputs; bit 0: D_a)   [2] bytes that arrive
//   [3..4] where the updated D_a goes, [5 + 2g .. 6 + 2g] where the fill of elimination g goes:
//   rank | input << 5 of the reader at the next level (−1: nobody)
// A level's inputs sit in receive buffer (level & 1). A CTA pushes into a buffer last read two
// levels before only after the cluster barrier that every CTA arrives at once it has read its
// inputs of the previous level (split arrive / wait: a wait one level later rarely waits).
// A failed pivot is recorded and the program runs on (garbage, never used), so no CTA waits for
// blocks that never come; the item is then skipped by every later kernel.
#define FC_UNIT 9
#define FC_INPUTS 7
#define FC_MAX_LEVELS 32
extern "C" __global__ void __launch_bounds__(SNT, 1) btchol_factor_cluster_small(
    real* diag, real* slots, real* fact, real* xslots, const int* prog, int from, int n_levels, int n,
    long long item_diag, long long item_slots, unsigned long long* fail, real piv_thr, real piv_boost,
    unsigned* boosted) {
#if __CUDA_ARCH__ >= 900
    if constexpr (SX_DMMA) {
        extern __shared__ __align__(128) unsigned char smem_raw[];
        // Per level parity: sX [2][2][BS] solved couplings and sL [2][BS] factors (a level's are
        // written to global memory during the next level's panels), then sDa [BS] (D_a read from
        // global memory) and the receive buffers [2][FC_INPUTS][BS].
        real* const sX_base = reinterpret_cast<real*>(smem_raw);
        real* const sDa = sX_base + 12 * BS;
        real* const recv = sDa + BS;
        __shared__ unsigned long long bars[FC_MAX_LEVELS];
        __shared__ int s_fail[2][2], s_boost[2][2];
        const int rank = (int)cluster_rank(), csize = (int)cluster_size(), item = blockIdx.x / csize;
        const int tid = threadIdx.x, warp = tid >> 5;
        // This rank's program and records in shared memory, copied while the previous kernel
        // runs (read from global memory at each level, their dependent loads cost ~1.5 µs of
        // each level's ~8.5, f64 n = 32, H100). Entry FC_MAX_LEVELS is the warm-up's record.
        __shared__ int s_prog[FC_MAX_LEVELS + 1][FC_UNIT + LREC];
        for (int k = tid; k < n_levels * (FC_UNIT + LREC); k += SNT) {
            const int l = k / (FC_UNIT + LREC), f = k % (FC_UNIT + LREC);
            s_prog[l][f] = prog[(l * csize + rank) * (FC_UNIT + LREC) + f];
        }
        if (tid < FC_UNIT + LREC) {
            // Two eliminations of two couplings each, owned by nobody: the panels only.
            const int f = tid - FC_UNIT - 2;
            s_prog[FC_MAX_LEVELS][tid] = tid == 0 ? 0 : tid == 1 ? 0x7e : tid == FC_UNIT ? -1 : tid == FC_UNIT + 1 ? 2
                                         : f < 0 ? 0 : (f % 8 == E_NCPL ? 2 : f % 8 == E_FILL ? -1 : 0);
        }
        __syncthreads();
        if (tid == 0) {
            for (int l = 0; l < n_levels; ++l) {
                mbar_init(&bars[l], 1);
                mbar_arrive_expect_tx(&bars[l], (unsigned)s_prog[l][2]);
            }
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
        const real* item_diag_base = diag + item * item_diag;
        const real* item_slot_base = slots + item * item_slots;
        real* fact_base = fact + item * item_diag;
        real* xslot_base = xslots + item * item_slots;
        // The previous level's record whose factor and couplings are still to be written out.
        const int* pending = nullptr;
        auto write_out = [&](int l, int t, int nt) {  // (of level l − 1, by threads t < nt)
            real* sX = sX_base + ((l - 1) & 1) * 6 * BS;
            if (pending) write_out_panels(pending, fact_base, xslot_base, sX, sX + 4 * BS, n, t, nt);
        };
        // Iteration −1 is a warm-up, before waiting for the previous kernel: the panels of the
        // first level on whatever the receive buffers hold, written nowhere but this CTA's
        // scratch, so that the first real sweep runs from a warm instruction cache (cold, it took
        // 7.1 µs instead of 3.3, f64 n = 32, H100). The start is opaque to the compiler so that
        // the iteration is not peeled off into a copy of its own.
        int l_first;
        asm("mov.s32 %0, -1;" : "=r"(l_first));
        for (int l = l_first; l < n_levels; ++l) {
            const bool warm_up = l < 0;
            const int* u = s_prog[warm_up ? FC_MAX_LEVELS : l];
            const int rec = u[0];
            if (rec < 0) {
                if (PANEL_WRITE_OUT && pending) {
                    write_out(l, tid, SNT);
                    __syncthreads();  // (before the next level's panels rewrite those buffers)
                }
                pending = nullptr;
                if (l > 0) cluster_wait();
                cluster_arrive_relaxed();
                continue;
            }
            const int* r = u + FC_UNIT;
            const int a = r[0], n_elim = r[1], mask = u[1];
            real* sX = sX_base + (l & 1) * 6 * BS;
            real* sL = sX + 4 * BS;
            int* fails = s_fail[l & 1];
            const real* in = recv + (l & 1) * FC_INPUTS * BS;
            const real* Da = in;
            if (a >= 0 && !(mask & 1)) {
                constexpr int V = 16 / sizeof(real);
                for (int k = V * tid; k < BS; k += V * SNT) copy_async_16(sDa + k, item_diag_base + a * BS + k);
                commit_async();
                Da = sDa;
            }
            if (warp < 4) {
                if (u[2] > 0) mbar_wait(&bars[l], 0);
                eliminate_panels(r, ClusterInputs{GlobalInputs{r, item_diag_base, item_slot_base}, in, mask}, fact_base,
                                 xslot_base, sX, sL, fails, s_boost[l & 1], n, piv_thr, piv_boost);
            } else {
                if (PANEL_WRITE_OUT) write_out(l, tid - 128, SNT - 128);
                if (u[2] > 0) mbar_wait(&bars[l], 0);  // (D_a, read by every warp's update)
            }
            wait_async<0>();
            __syncthreads();
            if (warm_up) {
                wait_for_previous_kernel();
                // Read before the cluster meets, hence before any CTA of this item can change
                // it: every rank makes the same choice.
                const unsigned long long key = fail[item];
                cluster_barrier_relaxed();  // (no push reaches a barrier not yet initialised)
                if (skip_item(key, from)) return;
                continue;
            }
            const bool failed = fails[0] >= 0 || fails[1] >= 0;
            if (tid < 2 && tid < n_elim) {
                if (fails[tid] >= 0) atomicMin(&fail[item], fail_key(from + l, r[2 + 8 * tid + E_BLOCK], fails[tid]));
                // (after a failure at an earlier level the pivots are garbage: not counted)
                else if (r[2 + 8 * tid + E_OWNED] && s_boost[l & 1][tid] > 0 &&
                         *(volatile unsigned long long*)&fail[item] == NO_FAILURE)
                    atomicAdd(&boosted[item], (unsigned)s_boost[l & 1][tid]);
            }
            pending = failed ? nullptr : r;
            if (l > 0) cluster_wait();  // (every CTA has read its inputs of level l − 1)
            // Where this level's blocks go: the receivers' buffer and barrier of the next level.
            const unsigned next = smem_addr(recv + ((l + 1) & 1) * FC_INPUTS * BS);
            const unsigned next_bar = smem_addr(&bars[l + 1 < FC_MAX_LEVELS ? l + 1 : 0]);
            update_on_tensor_cores(r, sX, Da, [&](int g, int i, int j, const real (&v)[2], int count) {
                const int* sends = u + (g < 0 ? 3 : 5 + 2 * g);
#pragma unroll
                for (int k = 0; k < 2; ++k)
                    if (sends[k] >= 0) {
                        const unsigned to = sends[k] & 31, slot = sends[k] >> 5;
                        const unsigned at = cluster_map(next + (unsigned)((slot * BS + i + j * LD) * sizeof(real)), to);
                        const unsigned bar = cluster_map(next_bar, to);
                        if (count == 2) store_async_pair(at, v[0], v[1], bar);
                        else store_async(at, v[0], bar);
                    }
            });
            cluster_arrive_relaxed();  // (this thread's reads of level l's inputs are done)
            if (!PANEL_WRITE_OUT) pending = nullptr;
        }
        if (PANEL_WRITE_OUT) {
            __syncthreads();  // (the last level's panels are in shared memory)
            write_out(n_levels, tid, SNT);
        }
        cluster_wait();  // no CTA leaves while another may still push into it
    }
#endif
}

// L⁻¹ of every diagonal block of the factor, the form the solve reads (forward_record,
// backward_record: products instead of substitution chains; they read only the lower triangle,
// the cluster solve reads whole blocks, so the block is written whole, zero outside the lower
// triangle of its n×n part). One warp per block; lane j solves L·x = e_j (column j of L⁻¹) with x in registers, a
// window that shifts down one row per step (invert_window_chunks), against L in shared memory
// that every lane reads at the same address (16-byte broadcasts; INV_SLD keeps each column's
// start aligned). All of a warp's loads are issued before the first use: one memory latency per
// block. One launch after the last level (engine.rs enqueue_inverse): 6 µs at N = 64, 76 µs at
// N = 16384 (f64, n = 32, H100: 67 % of the bandwidth of reading L and writing L⁻¹). Items that
// failed (or that a mask leaves out) are skipped: their blocks are not all factored, and no solve
// reads them.
#define INV_WARPS 4
#define INV_THREADS (32 * INV_WARPS)
#define INV_V VEC16_ELEMS
#define INV_ROUND(x) (((x) + INV_V - 1) / INV_V * INV_V)
#define INV_SLD (INV_ROUND(LD + 2) - 1)                                      // > LD; INV_SLD + 1 ≡ 0 mod INV_V
#define INV_BUF INV_ROUND(LD * INV_SLD + INV_ROUND(LD))                       // per warp
#define INV_CHUNK (LD < 4 ? LD : 4)                                          // steps per window width
// Steps k = C·INV_CHUNK .. (C + 1)·INV_CHUNK − 1 of btchol_invert_small, then the next chunks.
// x[0..W) holds rows k..k+W−1 of the lane's column, W = LD − C·INV_CHUNK; a step finishes row k
// (x[0] / L(k, k)), updates the rows below it while shifting them up one slot, and puts row k in
// the freed slot x[W − 1], above the window; the rows finished by earlier chunks sit above that,
// untouched. The window narrows with the triangle (Σ W ≈ LD²/2 FMAs instead of LD²), and the
// steps of a chunk are one rolled loop body (the kernel stays a few hundred instructions; fully
// unrolled it took 19 µs at N = 64). Window rows past the block read L's zero upper triangle or
// the zero padding of s_blk, so they stay inert. A template recursion, not a loop over C: that
// loop was not unrolled and put x in local memory. All LD steps run whatever n (the identity
// extension makes the steps past n inert), so where each row ends is known at compile time.
template <int C>
__device__ __forceinline__ void invert_window_chunks(real (&x)[LD], const real* sb, const real* rdiag) {
    if constexpr (C < LD / INV_CHUNK) {
        constexpr int W = LD - C * INV_CHUNK;
#pragma unroll 1
        for (int k = C * INV_CHUNK; k < (C + 1) * INV_CHUNK; ++k) {
            real col[INV_ROUND(W)];  // L(k + t, k)
#pragma unroll
            for (int q = 0; q < INV_ROUND(W) / INV_V; ++q)
                *reinterpret_cast<vec16*>(col + q * INV_V) = reinterpret_cast<const vec16*>(sb + k * (INV_SLD + 1))[q];
            const real xk = x[0] * rdiag[k];
#pragma unroll
            for (int t = 0; t < W - 1; ++t) x[t] = fma(-col[t + 1], xk, x[t + 1]);
            x[W - 1] = xk;
        }
        invert_window_chunks<C + 1>(x, sb, rdiag);
    }
}
// L⁻¹ of one block by one warp: L's lower triangle (n×n part) from `L` (leading dimension LD, in
// global or shared memory), the result to `out` (global memory), zero outside the lower triangle of
// its n×n part; `sb` (INV_BUF elements, 16-byte aligned) and `rdiag` (LD) the warp's shared scratch.
// W < 32: one block per segment of W ≥ LD lanes (`lane` the lane in it, the scratch the
// segment's), 32 / W blocks per warp side by side; `store` false: nothing written (a segment with no block).
template <int W = 32>
__device__ __forceinline__ void invert_block_warp(const real* L, real* out, int n, real* sb, real* rdiag, int lane,
                                                  bool store = true) {
    static_assert(W >= LD && 32 % W == 0, "a segment holds the block's columns");
    constexpr int PER_LANE = (LD * LD + W - 1) / W;
    // L's lower triangle, extended by the identity past n (rows and columns ≥ n are then inert).
    real v[PER_LANE];
#pragma unroll
    for (int p = 0; p < PER_LANE; ++p) {
        const int idx = lane + W * p, i = idx % LD, j = idx / LD;
        v[p] = (idx < LD * LD && i >= j && i < n) ? L[idx] : real(i == j);
    }
#pragma unroll
    for (int p = 0; p < PER_LANE; ++p) {
        const int idx = lane + W * p, i = idx % LD, j = idx / LD;
        if (idx < LD * LD) sb[i + j * INV_SLD] = v[p];
    }
    constexpr int pad_rows = INV_SLD - LD, pads = LD * pad_rows + INV_BUF - LD * INV_SLD;
    for (int c = lane; c < pads; c += W)
        sb[c < LD * pad_rows ? LD + c % pad_rows + c / pad_rows * INV_SLD : LD * INV_SLD + c - LD * pad_rows] = real(0);
    __syncwarp();
    if (lane < LD) rdiag[lane] = real(1) / sb[lane + lane * INV_SLD];
    __syncwarp();
    real x[LD];
#pragma unroll
    for (int t = 0; t < LD; ++t) x[t] = real(t == lane);
    invert_window_chunks<0>(x, sb, rdiag);
    // Row C·c + i ended in slot LD − C·(c + 1) + i; through shared memory (every lane is done with
    // L) so that the stores are coalesced.
    __syncwarp();
    if (lane < LD)
#pragma unroll
        for (int t = 0; t < LD; ++t) {
            const int c = (LD - 1 - t) / INV_CHUNK, row = c * INV_CHUNK + t - (LD - INV_CHUNK * (c + 1));
            sb[row + lane * INV_SLD] = x[t];
        }
    __syncwarp();
#pragma unroll
    for (int p = 0; p < PER_LANE; ++p) {
        const int idx = lane + W * p, i = idx % LD, j = idx / LD;
        if (store && idx < LD * LD) out[idx] = i >= j && i < n ? sb[i + j * INV_SLD] : real(0);
    }
}
// The factor's last kernel: it also reports each item's failure key in `report`, page-locked host
// memory, so that the host reads the status after its wait with no copy.
extern "C" __global__ void __launch_bounds__(INV_THREADS) btchol_invert_small(
    const real* fact, real* linv, int n_blocks, int batch, int n, long long item_diag,
    const unsigned long long* fail, unsigned long long* report) {
    wait_for_previous_kernel();
    __shared__ __align__(16) real s_blk[INV_WARPS][INV_BUF];  // L, then L⁻¹; column-major, zero-padded
    __shared__ real s_rdiag[INV_WARPS][LD];                   // 1 / L(k, k)
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const long long w = (long long)blockIdx.x * INV_WARPS + warp;
    const int item = (int)(w / n_blocks), blk = (int)(w % n_blocks);
    if (item < batch && blk == 0 && lane == 0) report[item] = fail[item];
    if (item >= batch || fail[item] != NO_FAILURE) return;
    invert_block_warp(fact + item * item_diag + (long long)blk * BS, linv + item * item_diag + (long long)blk * BS, n,
                      s_blk[warp], s_rdiag[warp], lane);
}

// Forward substitution of one level-CTA record r (the factorization's records) by a group of SNT
// threads (thread `t` of the group):
//   z_e ← L_e⁻¹·y_e (owned ones written to z), y_a ← y_a − Σ_e X_{a,e}·z_e.
// One warp per (elimination, column): lane i holds row i of L_e⁻¹ (`linv`, btchol_invert_small)
// and y_i, so z_e is a product (no substitution chain, no division). Columns go in passes of
// `cols` (warps per pass = cols · `slots`, eliminations per pass `slots` ≥ r's); every pass has
// two CTA barriers, so groups sharing a CTA must agree on m and cols. r = nullptr: only the
// barriers (an idle group). `sz`: the group's [SNT/32][LD] shared scratch.
__device__ __forceinline__ void forward_record(const int* r, const real* linv, const real* xslots, real* y, real* z,
                                               int item, int n, int m, int rows, long long item_diag,
                                               long long item_slots, long long item_rhs, real (*sz)[LD], int t,
                                               int cols, int slots) {
    const int a = r ? r[0] : -1, n_elim = r ? r[1] : 0, warp = t >> 5, lane = t & 31;
    real* yb = y + item * item_rhs;
    // Warm L1 with the couplings the update reads, while the substitution runs (one 128-byte line
    // per thread and pass).
    constexpr int LINES = (int)((BS * sizeof(real) + 127) / 128);
    if (a >= 0)
        for (int idx = t; idx < n_elim * LINES; idx += SNT) {
            const int* e = r + 2 + 8 * (idx / LINES);
            prefetch_l1(xslots + item * item_slots + e[E_SLOT + e[E_UPD]] * BS + (idx % LINES) * (128 / sizeof(real)));
        }
    for (int c0 = 0; c0 < m; c0 += cols) {
        const int g = warp % slots, c = c0 + warp / slots;
        const bool busy = g < n_elim && warp < cols * slots && c < m;
        if (busy) {
            const int* e = r + 2 + 8 * g;
            const real* Li = linv + item * item_diag + e[E_BLOCK] * BS;
            real l[LD];
#pragma unroll
            for (int k = 0; k < LD; ++k) l[k] = (lane < n && k <= lane) ? Li[lane + k * LD] : real(0);
            real* ye = yb + (long long)e[E_BLOCK] * n + (long long)c * rows;
            const real v = rowvec_warp(l, lane < n ? ye[lane] : real(0));
            if (lane < LD) sz[warp][lane] = v;
            if (e[E_OWNED] && lane < n) z[item * item_rhs + (long long)e[E_BLOCK] * n + (long long)c * rows + lane] = v;
        }
        __syncthreads();
        if (a >= 0) {
            const int n_cols = min(cols, m - c0);
            for (int idx = t; idx < n * n_cols; idx += SNT) {
                const int i = idx % n, cc = idx / n;
                real s = 0;
                for (int gg = 0; gg < n_elim; ++gg) {
                    const int* e = r + 2 + 8 * gg;
                    const real* X = xslots + item * item_slots + e[E_SLOT + e[E_UPD]] * BS;
                    const real* zv = sz[cc * slots + gg];
#pragma unroll
                    for (int k = 0; k < LD; ++k) s += X[i + k * LD] * zv[k];
                }
                yb[(long long)a * n + (long long)(c0 + cc) * rows + i] -= s;
            }
        }
        __syncthreads();
    }
}

// Backward substitution of one elimination record r (records of kernels/common.cuh) by a group of
// SNT threads (thread `t`):
//   x_e ← L_e⁻ᵀ·(z_e − Σ_s X_{s,e}ᵀ·x_s), in place in z (the survivors' x_s are final).
// One warp per column; L_e⁻¹ and the couplings staged in the group's shared `sL` (LD·SLD) and `sX`
// (2·LD·SLD) with a padded leading dimension so that lane i reading column i is free of bank
// conflicts. One CTA barrier; r = nullptr: only the barrier (an idle group).
#define SLD (LD + 1)
__device__ __forceinline__ void backward_record(const int* r, const real* linv, const real* xslots, real* z, int item,
                                                int n, int m, int rows, long long item_diag, long long item_slots,
                                                long long item_rhs, real* sL, real* sX, int t) {
    const int ncpl = r ? r[7] : 0, warp = t >> 5, lane = t & 31;
    if (r) {
        const real* Li = linv + item * item_diag + r[0] * BS;
#pragma unroll
        for (int p = 0; p < (LD * LD + SNT - 1) / SNT; ++p) {
            const int idx = t + p * SNT, i = idx % LD, j = idx / LD;
            if (idx >= LD * LD) break;
            sL[i + j * SLD] = (i >= j && i < n) ? Li[idx] : real(0);  // (L⁻¹'s lower triangle)
#pragma unroll
            for (int cc = 0; cc < 2; ++cc)
                if (cc < ncpl) sX[cc * LD * SLD + i + j * SLD] = xslots[item * item_slots + r[1 + 2 * cc] * BS + idx];
        }
    }
    __syncthreads();
    if (!r) return;
    real* zb = z + item * item_rhs;
    for (int c = warp; c < m; c += SNT / 32) {
        real v = lane < n ? zb[(long long)r[0] * n + (long long)c * rows + lane] : real(0);
        for (int cc = 0; cc < ncpl; ++cc) {
            const real* xs = zb + (long long)r[2 + 2 * cc] * n + (long long)c * rows;
            const real xk = lane < n ? xs[lane] : real(0);
            v -= matvec_warp(sX + cc * LD * SLD, SLD, 1, xk, lane);  // (X_{s,e}ᵀ·x_s)_lane
        }
        v = matvec_warp(sL, SLD, 1, v, lane);  // (L_e⁻ᵀ·v)_lane
        if (lane < n) zb[(long long)r[0] * n + (long long)c * rows + lane] = v;
    }
}

// One level of the forward substitution, one CTA per level-CTA record.
extern "C" __global__ void __launch_bounds__(SNT) btchol_forward_level_small(
    const real* linv, const real* xslots, real* y, real* z, const int* recs, int n_work, int n, int m, int rows,
    long long item_diag, long long item_slots, long long item_rhs, const unsigned long long* fail) {
    wait_for_previous_kernel();
    __shared__ real sz[SNT / 32][LD];
    const int* r = recs + LREC * (blockIdx.x % n_work);
    const int item = blockIdx.x / n_work;
    if (fail[item] != NO_FAILURE) return;
    const int n_elim = r[1];  // all warps in use: (SNT/32)/n_elim columns per pass
    forward_record(r, linv, xslots, y, z, item, n, m, rows, item_diag, item_slots, item_rhs, sz, threadIdx.x,
                   (SNT / 32) / n_elim, n_elim);
}

// One level of the backward substitution, one CTA per elimination.
extern "C" __global__ void __launch_bounds__(SNT) btchol_backward_level_small(
    const real* linv, const real* xslots, real* z, const int* recs, int n_work, int n, int m, int rows,
    long long item_diag, long long item_slots, long long item_rhs, const unsigned long long* fail) {
    wait_for_previous_kernel();
    __shared__ real sL[LD * SLD];
    __shared__ real sX[2 * LD * SLD];
    const int* r = recs + REC * (blockIdx.x % n_work);
    const int item = blockIdx.x / n_work;
    if (fail[item] != NO_FAILURE) return;
    backward_record(r, linv, xslots, z, item, n, m, rows, item_diag, item_slots, item_rhs, sL, sX, threadIdx.x);
}

// The deep levels of a solve in one launch, one CTA per item (the issue's "merge the deep levels
// where only a few blocks remain"): forward levels of `tail` in order, then their backward levels
// in reverse, separated by CTA barriers instead of kernel boundaries. A level there has few
// records, so a per-level launch would cost more in launch and memory latency than its work.
// TAIL_GROUPS groups of SNT threads take the records of a level in rounds. `tail`: per merged
// level, [first level-CTA record, count, first elimination record, count] (engine.rs).
// Dynamic shared memory: tail_solve_smem_bytes (jit.rs).
#define TAIL_GROUPS 2
#define TAIL_GROUP_SMEM (SNT / 32 * LD + 3 * LD * SLD)
extern "C" __global__ void __launch_bounds__(TAIL_GROUPS * SNT, 1) btchol_solve_tail_small(
    const real* linv, const real* xslots, real* y, real* z, const int* lrecs, const int* erecs, const int* tail,
    int n_tail, int n, int m, int rows, long long item_diag, long long item_slots, long long item_rhs,
    const unsigned long long* fail) {
    wait_for_previous_kernel();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int item = blockIdx.x, grp = threadIdx.x / SNT, t = threadIdx.x % SNT;
    if (fail[item] != NO_FAILURE) return;
    real* own = reinterpret_cast<real*>(smem_raw) + grp * TAIL_GROUP_SMEM;
    real(*sz)[LD] = reinterpret_cast<real(*)[LD]>(own);
    real* sL = own + SNT / 32 * LD;
    for (int lv = 0; lv < n_tail; ++lv) {
        const int first = tail[4 * lv], count = tail[4 * lv + 1];
        for (int w0 = 0; w0 < count; w0 += TAIL_GROUPS) {
            const int w = w0 + grp;
            forward_record(w < count ? lrecs + LREC * (first + w) : nullptr, linv, xslots, y, z, item, n, m, rows,
                           item_diag, item_slots, item_rhs, sz, t, (SNT / 32) / 2, 2);
        }
        __syncthreads();  // this level's updates of y before the next level reads them
    }
    for (int lv = n_tail - 1; lv >= 0; --lv) {
        const int first = tail[4 * lv + 2], count = tail[4 * lv + 3];
        for (int w0 = 0; w0 < count; w0 += TAIL_GROUPS) {
            const int w = w0 + grp;
            backward_record(w < count ? erecs + REC * (first + w) : nullptr, linv, xslots, z, item, n, m, rows,
                            item_diag, item_slots, item_rhs, sL, sL + LD * SLD, t);
            __syncthreads();  // the group's shared blocks are free again
        }
    }
}
// The whole solve of a small system in one CTA per item: every level, forward then backward, with
// CTA barriers between levels instead of kernel boundaries, and everything it reads on chip: the
// item's factor (L⁻¹ of the diagonal blocks, the solved couplings) and right-hand sides are copied
// into shared memory once, at the start, so no level waits for L2 (the tail kernel above reads
// them from global memory at every level and spends a 256-thread group per record: ~1.8 µs a level
// at n = 8; reading the factor through L1, warmed by prefetches, this kernel took ~1.4, H200,
// 2026-12-01). Shared blocks keep only their n×n part, with an odd leading dimension SN ≥ n, so
// that lanes reading a row or a column of a block hit distinct banks. A level's work is dealt out
// as units (record, column) to segments of WS_W lanes, WS_UNITS per warp (four of 8 lanes at
// LD = 8): lane i of a segment holds row i, and a unit's shuffles stay in its segment. Forward,
// per level-CTA record r (the arithmetic of forward_record):
//   z_e ← L_e⁻¹·y_e for its one or two eliminations (the owner stores z_e),
//   y_a ← y_a − Σ_e X_{a,e}·z_e;
// backward, per elimination record (that of backward_record), in place in z:
//   x_e ← L_e⁻ᵀ·(z_e − Σ_s X_{s,e}ᵀ·x_s).
// `prog` (src/cuda/whole_solve.rs): per level [first level-CTA record, count, first elimination
// record, count] (offsets in ints into prog), then the records. Dynamic shared memory
// (jit.rs whole_solve_smem_bytes): the program, the N diagonal blocks' L⁻¹ and the n_slots
// couplings (n·SN each), then y and z (rows·m each, plus LD of padding).
#define WS_THREADS 512
#define WS_W (LD <= 8 ? 8 : LD <= 16 ? 16 : 32)  // lanes per unit: a power of two ≥ LD
#define WS_UNITS (32 / WS_W)                     // units per warp
extern "C" __global__ void __launch_bounds__(WS_THREADS, 1) btchol_solve_whole_small(
    const real* __restrict__ linv, const real* __restrict__ xslots, const real* __restrict__ y, real* __restrict__ z,
    const int* __restrict__ prog, int n_levels, int prog_len, int n, int m, int rows, long long item_diag,
    long long item_slots, long long item_rhs, const unsigned long long* fail, int n_blocks, int n_slots) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int SN = n | 1, SB = n * SN;  // shared blocks: leading dimension, size
    int* s_prog = reinterpret_cast<int*>(smem_raw);
    real* sL = reinterpret_cast<real*>(smem_raw + (prog_len * 4 + 15) / 16 * 16);
    real* sX = sL + n_blocks * SB;
    real* sY = sX + n_slots * SB;
    real* sZ = sY + rows * m + LD;
    const int tid = threadIdx.x, item = blockIdx.x, warp = tid >> 5, lane = tid & 31;
    const int sub = lane / WS_W, i = lane % WS_W;
    constexpr int WARPS = WS_THREADS / 32;
    for (int k = tid; k < prog_len; k += WS_THREADS) s_prog[k] = prog[k];  // (constant: before the wait)
    wait_for_previous_kernel();
    // The factor's columns, n elements each (block b < n_blocks: L⁻¹, then the couplings), and
    // the right-hand sides, all requested before any is waited for.
    for (int bc = tid; bc < (n_blocks + n_slots) * n; bc += WS_THREADS) {
        const int b = bc / n, c = bc % n;
        const real* src = b < n_blocks ? linv + item * item_diag + b * BS : xslots + item * item_slots + (b - n_blocks) * BS;
        for (int r = 0; r < n; ++r) copy_async(sL + b * SB + c * SN + r, src + c * LD + r);
    }
    commit_async();
    const real* yb = y + item * item_rhs;
    for (int k = tid; k < rows * m; k += WS_THREADS) sY[k] = yb[k];
    if (tid < LD) sY[rows * m + tid] = real(0), sZ[rows * m + tid] = real(0);  // (read, times zero, past the end)
    wait_async<0>();
    __syncthreads();
    if (fail[item] != NO_FAILURE) return;  // the whole CTA, after its only pending copies
    const bool row = i < n;
    for (int lv = 0; lv < n_levels; ++lv) {
        const int first = s_prog[4 * lv], count = s_prog[4 * lv + 1], units = count * m;
        // (u0 is warp-uniform, so every lane of a warp meets every shuffle.)
        for (int u0 = warp * WS_UNITS; u0 < units; u0 += WARPS * WS_UNITS) {
            const int u = u0 + sub;
            const bool act = u < units;
            const int* r = s_prog + first + LREC * (act ? u % count : 0);
            const int c = act ? u / count : 0, a = act ? r[0] : -1, n_elim = act ? r[1] : 0;
            real acc[2] = {real(0), real(0)};
            for (int g = 0; g < 2; ++g) {
                const int* e = r + 2 + 8 * g;
                const bool use = g < n_elim;
                const real* Li = sL + (use ? e[E_BLOCK] : 0) * SB;
                const real* ye = sY + (use ? e[E_BLOCK] : 0) * n + c * rows;
                real s[2] = {real(0), real(0)};
#pragma unroll
                for (int k = 0; k < LD; ++k)
                    if (use && row && k <= i) s[k & 1] += Li[i + k * SN] * ye[k];
                const real v = s[0] + s[1];
                if (use && row && e[E_OWNED]) sZ[e[E_BLOCK] * n + c * rows + i] = v;
                const bool upd = use && a >= 0;
                const real* X = sX + (upd ? e[E_SLOT + e[E_UPD]] : 0) * SB;
#pragma unroll
                for (int k = 0; k < LD; ++k) {
                    const real zk = __shfl_sync(FULL_MASK, v, k, WS_W);
                    if (upd && row && k < n) acc[k & 1] += X[i + k * SN] * zk;
                }
            }
            if (a >= 0 && row) sY[a * n + c * rows + i] -= acc[0] + acc[1];
        }
        __syncthreads();
    }
    for (int lv = n_levels - 1; lv >= 0; --lv) {
        const int first = s_prog[4 * lv + 2], count = s_prog[4 * lv + 3], units = count * m;
        for (int u0 = warp * WS_UNITS; u0 < units; u0 += WARPS * WS_UNITS) {
            const int u = u0 + sub;
            const bool act = u < units;
            const int* r = s_prog + first + REC * (act ? u % count : 0);
            const int c = act ? u / count : 0, e = act ? r[0] : 0, ncpl = act ? r[7] : 0;
            real v = act && row ? sZ[e * n + c * rows + i] : real(0);
            for (int cc = 0; cc < ncpl; ++cc) {  // (X_{s,e}ᵀ·x_s)_i = Σ_k X(k, i)·x_s[k]
                const real* X = sX + r[1 + 2 * cc] * SB;
                const real* xs = sZ + r[2 + 2 * cc] * n + c * rows;
                real s[2] = {real(0), real(0)};
#pragma unroll
                for (int k = 0; k < LD; ++k)
                    if (row && k < n) s[k & 1] += X[k + i * SN] * xs[k];
                v -= s[0] + s[1];
            }
            const real* Li = sL + e * SB;  // (L_e⁻ᵀ·v)_i = Σ_{k ≥ i} L⁻¹(k, i)·v_k
            real s[2] = {real(0), real(0)};
#pragma unroll
            for (int k = 0; k < LD; ++k) {
                const real vk = __shfl_sync(FULL_MASK, v, k, WS_W);
                if (act && row && k >= i && k < n) s[k & 1] += Li[k + i * SN] * vk;
            }
            if (act && row) sZ[e * n + c * rows + i] = s[0] + s[1];
        }
        __syncthreads();
    }
    real* zb = z + item * item_rhs;
    for (int k = tid; k < rows * m; k += WS_THREADS) zb[k] = sZ[k];
}

// The whole factorization of a small system in one CTA per item: every level's eliminations and
// updates with CTA barriers between them, the item's blocks in shared memory from the start (D and
// the couplings copied in once, the fills made there), then L⁻¹ of every diagonal block: one kernel
// instead of a launch per level and the inverse's (~2.6 µs a level at n = 8 on the H200, most of it
// the launches' and the blocks' round trips). A level: one warp per elimination (potrf_panel_warp
// with both couplings carried along: D̂_e, X_{a,e} and X_{c,e} in one sweep), a barrier, then the
// updates D_a −= Σ_e X_{a,e}·X_{a,e}ᵀ (lower triangle) and the fills −X_r·X_cᵀ element by element
// over the whole CTA, a barrier. It writes what the level launches write for the solve: the factor
// (fact), the solved couplings (xslots), L⁻¹ (linv), the failure key (fail, and `report` as
// btchol_invert_small does, being the factor's last kernel) and the boosted pivots; the updated D
// and the fills stay in shared memory (nothing reads diag or slots after a factor). A failing pivot
// is recorded like the level kernels' (the level's smallest key, fail_key(level, block, column)),
// and the item stops after that level. Same program as btchol_solve_whole_small.
// Dynamic shared memory (jit.rs whole_factor_smem_bytes): the program, D (n_blocks blocks of
// LD×LD), the couplings (n_slots), then per warp segment the inversion's scratch (WF_INV elements).
// (A lane's rows of the sweep are 3·LD values: at 512 threads, 128 registers, f32 LD = 16 spilled.)
#define WF_THREADS (LD <= 8 ? 512 : 256)
#define WF_WARPS (WF_THREADS / 32)
#define WF_W (LD <= 8 ? 8 : LD <= 16 ? 16 : 32)  // lanes per panel sweep and per inversion (jit.rs segment_lanes)
#define WF_SEGS (32 / WF_W)                      // sweeps (inversions) side by side in a warp
#define WF_TALL (3 * LD <= 32)  // a warp per elimination, a row of [D_e; X_{a,e}; X_{c,e}] a lane
#define WF_INV INV_ROUND(INV_BUF + LD)
// count elements from global to shared memory, asynchronously, by the whole CTA (16-byte copies
// where the item's blocks are 16-byte multiples).
__device__ __forceinline__ void stage_elems(real* dst, const real* src, long long count) {
    constexpr int V = (BS * sizeof(real)) % 16 == 0 ? 16 / sizeof(real) : 1;
    for (long long k = (long long)threadIdx.x * V; k < count; k += (long long)WF_THREADS * V) {
        if (V > 1) copy_async_16(dst + k, src + k);
        else copy_async(dst + k, src + k);
    }
}
// acc[i] += Σ_k A(i, k)·B(j, k): column j of A·Bᵀ, A and B LD×LD column-major shared blocks
// (16-byte aligned), A's columns in 16-byte loads.
__device__ __forceinline__ void gemm_nt_column(real (&acc)[LD], const real* A, const real* B, int j) {
    constexpr int V = LD % VEC16_ELEMS == 0 ? VEC16_ELEMS : 1;
#pragma unroll
    for (int k = 0; k < LD; ++k) {
        const real b = B[j + k * LD];
        real col[LD];
#pragma unroll
        for (int q = 0; q < LD / V; ++q) {
            if (V > 1) *reinterpret_cast<vec16*>(col + q * V) = reinterpret_cast<const vec16*>(A + k * LD)[q];
            else col[q] = A[q + k * LD];
        }
#pragma unroll
        for (int i = 0; i < LD; ++i) acc[i] = fma(col[i], b, acc[i]);
    }
}
// Row r of part `part` of elimination record er's tall panel [D_e; X_{a,e}; X_{c,e}] (WF_TALL: a
// lane each): D_e's rows identity-padded past n; a coupling's row (its shared slot `slot`) where
// the record has it (`mine`), zero otherwise, as the lanes past the panel.
__device__ __forceinline__ void load_tall_row(real (&a)[LD], const real* sD, const real* sS, const int* er, int n,
                                              int part, int r, bool mine, int slot) {
    // (Every lane loads from a valid address and selects: no branch per element.)
    const real* src = part == 0 ? sD + er[0] * BS : sS + slot * BS;
#pragma unroll
    for (int k = 0; k < LD; ++k) {
        const real v = src[r + k * LD];
        const bool keep = part == 0 ? r < n && k < n : mine;
        a[k] = keep ? v : real(part == 0 && r == k);
    }
}
// Lane `lane`'s rows of elimination record er's D_e and couplings (shared blocks of LD×LD).
__device__ __forceinline__ void load_elimination(real (&d)[LD], real (&x)[2][LD], const real* sD, const real* sS,
                                                 const int* er, int n, int lane) {
    load_diag_rows(d, sD + er[0] * BS, n, lane);
#pragma unroll
    for (int c = 0; c < 2; ++c) {
        const real* C = sS + (c < er[7] ? er[1 + 2 * c] : 0) * BS;
#pragma unroll
        for (int k = 0; k < LD; ++k) x[c][k] = (c < er[7] && lane < LD) ? C[lane + k * LD] : real(0);
    }
}
extern "C" __global__ void __launch_bounds__(WF_THREADS, 1) btchol_factor_whole_small(
    const real* __restrict__ diag, const real* __restrict__ slots, real* fact, real* xslots, real* linv,
    const int* __restrict__ prog, int n_levels, int prog_len, int n, long long item_diag, long long item_slots,
    unsigned long long* fail, real piv_thr, real piv_boost, unsigned* boosted, int n_blocks, int n_slots,
    unsigned long long* report) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    int* s_prog = reinterpret_cast<int*>(smem_raw);
    real* sD = reinterpret_cast<real*>(smem_raw + (prog_len * 4 + 15) / 16 * 16);
    real* sS = sD + n_blocks * BS;
    real* s_inv = reinterpret_cast<real*>(
        reinterpret_cast<unsigned char*>(sS) + ((n_slots * BS * sizeof(real) + 15) / 16 * 16));
    __shared__ __align__(16) real s_col[WF_WARPS][WF_SEGS][2 * LD];
    __shared__ unsigned long long s_key;
    __shared__ int s_boost;
    const int tid = threadIdx.x, item = blockIdx.x, warp = tid >> 5, seg = (tid & 31) / WF_W, lane = tid % WF_W;
    for (int k = tid; k < prog_len; k += WF_THREADS) s_prog[k] = prog[k];  // (constant: before the wait)
    wait_for_previous_kernel();
    const unsigned long long key0 = fail[item];
    if (skip_item(key0, 0)) {  // masked out
        if (tid == 0) report[item] = key0;
        return;
    }
    stage_elems(sD, diag + item * item_diag, n_blocks * BS);
    stage_elems(sS, slots + item * item_slots, n_slots * BS);
    commit_async();
    if (tid == 0) s_key = NO_FAILURE, s_boost = 0;
    wait_async<0>();
    __syncthreads();
    real* fact_b = fact + item * item_diag;
    real* xslot_b = xslots + item * item_slots;
    for (int lv = 0; lv < n_levels; ++lv) {
        const int* h = s_prog + 4 * lv;
#if WF_TALL
        // A level of one round (deep levels, where the sweep is the level's critical path): one
        // warp per elimination, a row of the tall panel a lane, a third of a segment's chain of
        // instructions (w is warp-uniform: the sweep's shuffles and its failure are the warp's).
        // Wider levels: a segment per elimination, four in a warp (fewer instructions in all).
        if (h[3] <= WF_WARPS) {
            for (int w = warp; w < h[3]; w += WF_WARPS) {
                const int* er = s_prog + h[2] + REC * w;
                const int e = er[0], part = tid % 32 / LD, r = tid % 32 % LD;  // part 0: D_e, 1 and 2: couplings
                const bool mine = part == 0 || (part <= 2 && part - 1 < er[7]);
                const int slot = mine && part > 0 ? er[1 + 2 * (part - 1)] : 0;  // (0: a valid address, unused)
                real a[LD], none[1][LD];
                load_tall_row(a, sD, sS, er, n, part, r, mine, slot);
                int nb = 0;
                int f = potrf_panel_warp<0>(a, none, tid % 32, piv_thr, piv_boost, nb, s_col[warp][0]);
                if (f == PANEL_SUBNORMAL) {  // rare: the sweep again with the exact square root (rsqrt_pivot)
                    load_tall_row(a, sD, sS, er, n, part, r, mine, slot);
                    nb = 0;
                    f = potrf_panel_warp<0, true>(a, none, tid % 32, piv_thr, piv_boost, nb, s_col[warp][0]);
                }
                if (tid % 32 == 0 && nb > 0) atomicAdd(&s_boost, nb);  // (the level kernels count a failing level's too)
                if (f >= 0) {
                    if (tid % 32 == 0) atomicMin(&s_key, fail_key(lv, e, f));
                    continue;
                }
                // In place: D̂_e's rows (lower triangle) and the solved couplings' rows, each lane its own
                // (which only this warp reads at this level).
                if (part == 0 && r < n) {
#pragma unroll
                    for (int k = 0; k < LD; ++k)
                        if (k <= r) sD[e * BS + r + k * LD] = a[k], fact_b[e * BS + r + k * LD] = a[k];
                } else if (part > 0 && mine) {
#pragma unroll
                    for (int k = 0; k < LD; ++k) sS[slot * BS + r + k * LD] = a[k], xslot_b[slot * BS + r + k * LD] = a[k];
                }
            }
        } else
#endif
        // Elimination w0 + seg in this warp's segment seg (w0 is warp-uniform, so every lane meets
        // every shuffle of the sweep; a segment past the level's end sweeps a record's blocks too and
        // writes nothing).
        for (int w0 = warp * WF_SEGS; w0 < h[3]; w0 += WF_WARPS * WF_SEGS) {
            const bool act = w0 + seg < h[3];
            const int* er = s_prog + h[2] + REC * (act ? w0 + seg : w0);
            const int e = er[0], ncpl = er[7];
            real d[LD], x[2][LD];
            load_elimination(d, x, sD, sS, er, n, lane);
            // The segment's results: its failure or boosted pivots, else D̂_e and the solved couplings
            // in place (each lane its own rows, which only this segment reads at this level).
            auto finish = [&](int f, int nb) {
                if (lane == 0 && nb > 0) atomicAdd(&s_boost, nb);  // (the level kernels count a failing level's too)
                if (f >= 0) {
                    if (lane == 0) atomicMin(&s_key, fail_key(lv, e, f));
                    return;
                }
#pragma unroll
                for (int k = 0; k < LD; ++k)
                    if (lane < n && k <= lane) sD[e * BS + lane + k * LD] = d[k], fact_b[e * BS + lane + k * LD] = d[k];
#pragma unroll
                for (int c = 0; c < 2; ++c) {
                    if (c >= ncpl || lane >= LD) continue;
                    const int slot = er[1 + 2 * c];
#pragma unroll
                    for (int k = 0; k < LD; ++k)
                        sS[slot * BS + lane + k * LD] = x[c][k], xslot_b[slot * BS + lane + k * LD] = x[c][k];
                }
            };
            int nb = 0;
            const int f = potrf_panel_warp<2, false, true, WF_W>(d, x, lane, piv_thr, piv_boost, nb, s_col[warp][seg]);
            const bool redo = act && f == PANEL_SUBNORMAL;
            if (act && !redo) finish(f, nb);
            if (__any_sync(FULL_MASK, redo)) {  // rare: the sweep again with the exact square root (rsqrt_pivot)
                if (redo) load_elimination(d, x, sD, sS, er, n, lane);  // (the others sweep what they hold, unused)
                nb = 0;
                const int f2 = potrf_panel_warp<2, true, true, WF_W>(d, x, lane, piv_thr, piv_boost, nb, s_col[warp][seg]);
                if (redo) finish(f2, nb);
            }
        }
        __syncthreads();
        if (s_key != NO_FAILURE) break;
        // The updates (level-CTA records: survivor a and its eliminations) and the fills
        // (elimination records), a column j a thread: LD FMAs per element, A's columns read as
        // 16-byte broadcasts (the record's threads read the same ones).
        const int* lrecs = s_prog + h[0];
        const int* erecs = s_prog + h[2];
        const int upd = h[1] * LD, all = upd + h[3] * LD;
        for (int t = tid; t < all; t += WF_THREADS) {
            const int u = t < upd ? t : t - upd, j = u % LD;
            real acc[LD];
#pragma unroll
            for (int i = 0; i < LD; ++i) acc[i] = real(0);
            if (t < upd) {
                const int* r = lrecs + LREC * (u / LD);
                const int a = r[0];
                if (a < 0 || j >= n) continue;
                for (int g = 0; g < r[1]; ++g) {
                    const int* e = r + 2 + 8 * g;
                    const real* X = sS + e[E_SLOT + e[E_UPD]] * BS;
                    gemm_nt_column(acc, X, X, j);
                }
#pragma unroll
                for (int i = 0; i < LD; ++i)
                    if (i >= j && i < n) sD[a * BS + i + j * LD] -= acc[i];
            } else {
                const int* er = erecs + REC * (u / LD);
                const int fs = er[5], fr = er[6];
                if (fs < 0) continue;
                gemm_nt_column(acc, sS + er[1 + 2 * fr] * BS, sS + er[3 - 2 * fr] * BS, j);
#pragma unroll
                for (int i = 0; i < LD; ++i) sS[fs * BS + i + j * LD] = -acc[i];
            }
        }
        __syncthreads();
    }
    if (tid == 0 && s_boost > 0) atomicAdd(&boosted[item], (unsigned)s_boost);
    if (s_key != NO_FAILURE) {
        if (tid == 0) atomicMin(&fail[item], s_key), report[item] = s_key;
        return;
    }
    real* sb = s_inv + (warp * WF_SEGS + seg) * WF_INV;
    for (int b0 = warp * WF_SEGS; b0 < n_blocks; b0 += WF_WARPS * WF_SEGS) {  // (b0 warp-uniform: __syncwarp)
        const int b = min(b0 + seg, n_blocks - 1);  // (a segment past the end inverts the last block, unstored)
        invert_block_warp<WF_W>(sD + b * BS, linv + item * item_diag + b * BS, n, sb, sb + INV_BUF, lane,
                                b0 + seg < n_blocks);
    }
    if (tid == 0) report[item] = NO_FAILURE;
}

// The deep levels of a solve in one launch on a thread-block cluster per item (sm_90): the forward
// levels of the tail in order, then their backward levels in reverse, one phase each. A level's
// records are dealt round-robin to the cluster's CTAs; in a CTA a forward record takes two warps
// (one per elimination, z_e = L_e⁻¹·y_e and u_e = X_{a,e}·z_e, then y_a −= u_0 + u_1 after a
// barrier of the compute warps) and a backward record one warp (x_e = L_e⁻ᵀ·(z_e − Σ_s X_{s,e}ᵀ·x_s)).
//
// No cluster-wide barrier between phases: the right-hand sides live in the CTAs' shared memory,
// and a vector is pushed, as soon as it is computed, into the shared memory of each CTA that
// reads it next (st.async), counted on that CTA's mbarrier of the phase that reads it. A phase
// waits on its own mbarrier only: for its vectors, and for the factor's blocks, which a producer
// warp stages into a shared-memory ring with bulk copies ahead of use (all at once where they
// fit). (A cluster barrier with release/acquire is a GPU-scope fence, ~730 ns a phase on the
// H100, and the vectors' round trip through L2 came on top; bench/micro/cluster_phase.cu.) Only
// the first values of the tail's right-hand sides come from global memory, loaded at the start,
// and only the solutions x_e go back to it.
//
// Each CTA runs a program the host compiles from the schedule's records (src/cuda/cluster.rs,
// whose tests run the programs with each CTA as slow as it can be), copied to shared memory
// first so that no phase waits on a chain of dependent loads of records: for rank r at
// plan[plan[r]] .. plan[plan[r + 1]],
//   [units' start per phase, and the end][first list index per phase, and the end]
//   [vectors received per phase (each m columns of LD elements)][n_init][n_init × (slot, block):
//    vectors loaded from y at the start][the blocks it reads in order of use: (code, phase),
//    code ≥ 0 a diagonal block of L⁻¹, −1 − s coupling slot s][units, CL_UNIT ints each][sends]
//   forward unit   a, n_elim, slot of y_a, first send of y_a, its sends, then per elimination:
//                  slot of y_e, coupling slot to a (−1: a < 0), q, send of z_e (−1: not owned)
//   backward unit  block e, n_couplings, q, slot of z_e, first send of x_e, its sends, then per
//                  coupling: slot, slot of the survivor's x_s
//   send           CTA rank | phase << 5 | slot << 11: where a vector goes and which phase reads it
// where q is the list index of the unit's (elimination's) first block; its couplings follow.
// Block q sits in ring slot q mod K and is copied once every block of a phase before q − K's has
// been used (the host sizes the tail so that no CTA reads more than K blocks in one phase). A
// vector slot s holds m columns of LD elements (rows past n zero) at vecs + s·m·LD.
#define CL_WARPS (SNT / 32)         // compute warps per CTA
#define CL_PAIRS (CL_WARPS / 2)     // forward records per round
#define CL_THREADS (SNT + 32)      // and the producer warp
#define CL_MAX_PHASES 64
#define CL_LOOKAHEAD 2  // phases whose blocks are on their way
#define CL_UNIT 13
#define CL_SEND_RANK(s) ((s) & 31)
#define CL_SEND_PHASE(s) (((s) >> 5) & 63)
#define CL_SEND_SLOT(s) ((s) >> 11)
#define CL_MAX_SIZE 16  // CTAs per cluster at most (src/cuda/cluster.rs CLUSTER_MAX_SIZE)
// The fused solve's non-finite keys after the phase barriers: one received from each rank, this
// CTA's own, and the barrier that counts the received ones (src/cuda/cluster.rs CLUSTER_KEY_WORDS).
#define CL_KEYS_OFFSET (CL_MAX_PHASES * 8)
#define CL_KEY_OWN CL_MAX_SIZE
#define CL_KEY_BAR (CL_MAX_SIZE + 1)
#define CL_VEC_OFFSET (CL_KEYS_OFFSET + (CL_MAX_SIZE + 2) * 8)
#define CL_PROG_OFFSET (CL_VEC_OFFSET + CL_WARPS * 2 * LD * (int)sizeof(real))
// A barrier of the compute warps only (named barrier 1: the producer warp never joins it).
__device__ __forceinline__ void compute_warps_sync() { asm volatile("bar.sync 1, %0;" ::"n"(SNT) : "memory"); }

// (A·v)_lane, or (Aᵀ·v)_lane with TRANS, for the LD×LD column-major block A and the LD-vector v,
// both in shared memory, LD = 32 (a lane per row). No element is tested: the factor's blocks are
// zero outside their n×n part and L⁻¹ above its diagonal (btchol_invert_small writes the zeros),
// the vectors beyond n, so rows beyond n come out zero. A row is read down the block with
// immediate offsets, v two elements per (broadcast) load; a column is read in XOR order (lane i
// reads element t ^ i at step t) so that the warp's lanes hit distinct banks. Four partial sums
// shorten the FMA chain.
template <bool TRANS>
__device__ __forceinline__ real warp_matvec(const real* A, const real* v, int lane) {
    real s[4] = {0, 0, 0, 0};
    if (!TRANS) {
        const real* a = A + lane;
#pragma unroll
        for (int k = 0; k < LD; k += 2) {
            const real2 vk = *reinterpret_cast<const real2*>(v + k);
            s[k & 3] = fma(a[k * LD], vk.x, s[k & 3]);
            s[(k + 1) & 3] = fma(a[(k + 1) * LD], vk.y, s[(k + 1) & 3]);
        }
    } else {
        const real* a = A + lane * LD;
#pragma unroll
        for (int t = 0; t < LD; ++t) {
            const int k = t ^ lane;
            s[t & 3] = fma(a[k], v[k], s[t & 3]);
        }
    }
    return (s[0] + s[1]) + (s[2] + s[3]);
}

#if __CUDA_ARCH__ >= 900 && LD == 32
// Lane i's element of column c of a vector to every CTA in `sends` (count of them): into the
// same slot offset of the receiver's shared memory, counted on its mbarrier of the reading phase.
__device__ __forceinline__ void send_vector(real v, const int* sends, int count, int c, int m, const real* vecs,
                                            const unsigned long long* bars, int lane) {
    for (int k = 0; k < count; ++k) {
        const int s = sends[k];
        const unsigned rank = CL_SEND_RANK(s);
        const unsigned at = smem_addr(vecs + ((long long)CL_SEND_SLOT(s) * m + c) * LD + lane);
        store_async(cluster_map(at, rank), v, cluster_map(smem_addr(&bars[CL_SEND_PHASE(s)]), rank));
    }
}
#endif

// `stage_early`: the kernel before this one does not write the factor or the failure keys (the
// host knows: not the factor's last kernel, not a batch mask's), so the blocks of the first
// phases are staged, and a failed item is skipped, before waiting for that kernel.
//
// The right-hand sides are read from y and the solutions written to z with element strides
// (row, column, item): the packed buffers of the per-level kernels (1, rows, rows·m), or, fused
// (`keys` not null: a one-pass device solve of a single system whose levels are all in this
// kernel), the caller's own array, so that the solve is this one launch instead of a reset, a
// pack, this and an unpack. Fused, the kernel does what those did: each CTA keeps the first
// non-finite (row, column) it loads and sends it to every CTA of the cluster (st.async on their
// key barriers, waited for only before the first solution is written); no CTA writes a solution
// unless every key is clean and the factor did not fail, and rank 0 reports the key in
// keys[item] (page-locked host memory: the host reads it without a copy). y may be z (the caller
// solves in place): every load precedes the cluster barrier at the start, every store follows it.
extern "C" __global__ void __launch_bounds__(CL_THREADS, 1) btchol_solve_cluster_small(
    const real* linv, const real* xslots, const real* y, long long y_rs, long long y_cs, long long y_item, real* z,
    long long z_rs, long long z_cs, long long z_item, const int* plan, int n_phases, int prog_ints, int vec_slots,
    int ring_slots, int n, int m, long long item_diag, long long item_slots, const unsigned long long* fail,
    int stage_early, unsigned long long* keys) {
#if __CUDA_ARCH__ >= 900 && LD == 32  // (one lane per row: the host plans clusters for LD = 32 only)
    extern __shared__ __align__(128) unsigned char smem_raw[];
    unsigned long long* bars = reinterpret_cast<unsigned long long*>(smem_raw);  // one per phase
    int* prog = reinterpret_cast<int*>(smem_raw + CL_PROG_OFFSET);
    // (src/cuda/cluster.rs SharedLayout::ring_offset: the same offsets)
    const int vec_offset = (CL_PROG_OFFSET + 4 * prog_ints + 15) / 16 * 16;
    real* vecs = reinterpret_cast<real*>(smem_raw + vec_offset);
    real* ring = reinterpret_cast<real*>(smem_raw + (vec_offset + vec_slots * m * LD * (int)sizeof(real) + 127) / 128 * 128);
    const int rank = (int)cluster_rank(), csize = (int)cluster_size();
    const int item = blockIdx.x / csize;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const bool fused = keys != nullptr;
    unsigned long long* cl_keys = reinterpret_cast<unsigned long long*>(smem_raw + CL_KEYS_OFFSET);
    // The program and the barriers depend on nothing a previous kernel writes: set up before the
    // wait, while that kernel runs. Each phase's barrier expects the producer's arrival, the bytes
    // of its bulk copies (added as they are issued) and those of the vectors it receives; the
    // cluster meets once so that no CTA sends to a barrier not yet initialised.
    const int prog_begin = plan[rank], prog_len = plan[rank + 1] - prog_begin;
    for (int k = threadIdx.x; k < prog_len; k += CL_THREADS) prog[k] = plan[prog_begin + k];
    if (threadIdx.x == 0) cl_keys[CL_KEY_OWN] = NO_FAILURE;
    __syncthreads();
    const int* unit_start = prog;
    const int* first_q = prog + n_phases + 1;
    const int* received = first_q + n_phases + 1;
    const int n_init = received[n_phases];
    const int* init = received + n_phases + 1;
    const int* stage = init + 2 * n_init;
    const int n_stage = first_q[n_phases];
    const int* units = stage + 2 * n_stage;
    const int* sends = units + CL_UNIT * unit_start[n_phases];
    if (threadIdx.x == 0) {
        for (int p = 0; p < n_phases; ++p) {
            mbar_init(&bars[p], 1);
            if (received[p] > 0) mbar_expect_tx(&bars[p], (unsigned)(received[p] * m * LD * sizeof(real)));
        }
        if (fused) {
            mbar_init(&cl_keys[CL_KEY_BAR], 1);
            mbar_arrive_expect_tx(&cl_keys[CL_KEY_BAR], (unsigned)(csize * sizeof(unsigned long long)));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    const real* yb = y + item * y_item;
    // The tail's right-hand sides as the earlier levels left them (fused: the caller's b), where
    // this CTA reads them first; fused, checked as btchol_pack_rhs checks them.
    auto load_rhs = [&](int threads) {  // (by threads 0 .. threads − 1)
        for (int idx = threadIdx.x; idx < n_init * m * LD; idx += threads) {
            const int i = idx % LD, c = idx / LD % m, v = idx / (LD * m);
            const long long row = (long long)init[2 * v + 1] * n + i;
            const real val = i < n ? __ldcg(yb + row * y_rs + c * y_cs) : real(0);
            if (fused && !isfinite(val)) atomicMin(&cl_keys[CL_KEY_OWN], ((unsigned long long)row << 32) | (unsigned)c);
            vecs[((long long)init[2 * v] * m + c) * LD + i] = val;
        }
    };
    const real* linv_item = linv + item * item_diag;
    const real* x_item = xslots + item * item_slots;
    // The producer (warp CL_WARPS, lane 0) stages the blocks of phases ph .. ph + CL_LOOKAHEAD − 1
    // that fit the ring into it and arrives on the barrier of every phase whose blocks are then
    // all on their way, so that a phase waits for its data only. (Everything at once measured
    // slower: the first phase's blocks then shared the SM's bandwidth with all the others and
    // took ~3 µs, f64 n = 32, N = 64, H100.)
    int issued = 0, armed = 0;
    auto produce = [&](int ph) {
        const int window_end = min(first_q[min(ph + CL_LOOKAHEAD, n_phases)], first_q[ph] + ring_slots);
        // (Ring slots refilled now were last read by the generic proxy before the CTA barrier
        // that preceded this; bulk copies write through the async proxy.)
        if (issued >= ring_slots) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        for (; issued < n_stage && issued < window_end; ++issued) {
            const int code = stage[2 * issued], p = stage[2 * issued + 1];
            const real* src = code >= 0 ? linv_item + code * BS : x_item + (-1 - code) * BS;
            mbar_expect_tx(&bars[p], (unsigned)(BS * sizeof(real)));
            bulk_copy_to_shared(ring + (long long)(issued % ring_slots) * BS, src, (unsigned)(BS * sizeof(real)), &bars[p]);
        }
        for (; armed < n_phases && first_q[armed + 1] <= issued; ++armed) mbar_arrive(&bars[armed]);
    };
    const bool producer = warp == CL_WARPS && lane == 0;
    // A failed item is skipped by the whole cluster (one item; nothing was sent), except fused:
    // its b is still checked, so the run goes on and writes nothing.
    const bool skip_early = stage_early && !fused && fail[item] != NO_FAILURE;
    // Staged early, the first phases' blocks are issued while the compute warps load b and the
    // cluster meets: the producer arrives at the cluster barrier first and waits after issuing, so
    // the ~1–2 µs its bulk copies take to issue hold nobody back (measured: issued after the
    // barrier, phase 0 waited ~2 µs for them; issued before it, the barrier waited instead).
    __syncthreads();  // (the barriers are initialised before the producer counts copies on them)
    if (warp == CL_WARPS) {
        cluster_arrive_relaxed();
        if (producer && stage_early && !skip_early) produce(0);
        cluster_wait();
    } else {
        // (Fused, b is the caller's array or the host's staging buffer: no kernel of the launch
        // sequence writes it, and the host starts the device solve without programmatic early
        // launch, so no earlier kernel on the stream is still writing it. See above for y = z.)
        if (fused) load_rhs(SNT);
        cluster_barrier_relaxed();
    }
    if (skip_early) return;
    wait_for_previous_kernel();
    if (!fused && !stage_early && fail[item] != NO_FAILURE) return;
    bool write_ok = !fused || fail[item] == NO_FAILURE;
    real* zb = z + item * z_item;
    if (!fused) load_rhs(CL_THREADS);
    __syncthreads();
    if (fused && warp == 0 && lane < csize) {
        const unsigned at = smem_addr(&cl_keys[rank]);
        store_async(cluster_map(at, lane), cl_keys[CL_KEY_OWN], cluster_map(smem_addr(&cl_keys[CL_KEY_BAR]), lane));
    }
    // This warp's vectors: the output of its first product, and of its second.
    real* vz = reinterpret_cast<real*>(smem_raw + CL_VEC_OFFSET) + 2 * LD * (warp < CL_WARPS ? warp : 0);
    real* vu = vz + LD;
#define CL_VEC(slot, c) (vecs + ((long long)(slot) * m + (c)) * LD)
#define CL_BLOCK(q) (ring + (long long)((q) % ring_slots) * BS)
    const int n_tail = n_phases / 2;
    // Where every block fits the ring at once, nothing is refilled and the warps run through the
    // phases without meeting (a unit waits for its data only); otherwise the CTA meets after each
    // phase, before the producer refills the slots that phase read.
    const bool refill = n_stage > ring_slots;
    for (int ph = 0; ph < n_phases; ++ph) {
        const int u0 = unit_start[ph], mine = unit_start[ph + 1] - u0;
        if (warp == CL_WARPS) {
            if (producer) {
                produce(ph);
                if (!refill) mbar_wait(&bars[ph], 0);  // (paced by the phases, not by a CTA barrier)
            }
        } else if (ph < n_tail) {
            if (mine > 0) mbar_wait(&bars[ph], 0);
            const int rounds = (mine + CL_PAIRS - 1) / CL_PAIRS;
            for (int rd = 0; rd < rounds; ++rd) {
                const int j = rd * CL_PAIRS + (warp >> 1), g = warp & 1;
                const int* u = j < mine ? units + CL_UNIT * (u0 + j) : nullptr;
                const int a = u ? u[0] : -1;
                const bool busy = u != nullptr && g < u[1];
                const int* e = busy ? u + 5 + 4 * g : nullptr;  // slot of y_e, coupling slot, q, send of z_e
                const bool combine = busy && g == 0 && a >= 0;
                for (int c = 0; c < m; ++c) {
                    const real ya = combine ? CL_VEC(u[2], c)[lane] : real(0);
                    if (busy) {
                        const real zv = warp_matvec<false>(CL_BLOCK(e[2]), CL_VEC(e[0], c), lane);
                        vz[lane] = zv;
                        if (e[3] >= 0) send_vector(zv, e + 3, 1, c, m, vecs, bars, lane);
                        __syncwarp();
                        if (a >= 0) vu[lane] = warp_matvec<false>(CL_BLOCK(e[2] + 1), vz, lane);
                    }
                    compute_warps_sync();
                    if (combine) {
                        const real yn = ya - (u[1] > 1 ? vu[lane] + vu[2 * LD + lane] : vu[lane]);  // (+ warp + 1's)
                        send_vector(yn, sends + u[3], u[4], c, m, vecs, bars, lane);
                    }
                    compute_warps_sync();  // (vu is read by the pair's other warp: reused only after)
                }
            }
        } else {
            if (fused && ph == n_tail) {  // (before this warp's first solution: every CTA's key)
                mbar_wait(&cl_keys[CL_KEY_BAR], 0);
                unsigned long long key = lane < csize ? cl_keys[lane] : NO_FAILURE;
                for (int o = 16; o > 0; o >>= 1) key = min(key, __shfl_xor_sync(FULL_MASK, key, o));
                write_ok = write_ok && key == NO_FAILURE;
                if (rank == 0 && warp == 0 && lane == 0) keys[item] = key;
            }
            if (warp < mine) mbar_wait(&bars[ph], 0);
            for (int j = warp; j < mine; j += CL_WARPS) {
                const int* u = units + CL_UNIT * (u0 + j);  // see the program's format above
                const int ncpl = u[1], q = u[2];
                for (int c = 0; c < m; ++c) {
                    real v = CL_VEC(u[3], c)[lane];
                    for (int cc = 0; cc < ncpl; ++cc)
                        v -= warp_matvec<true>(CL_BLOCK(q + 1 + cc), CL_VEC(u[7 + 2 * cc], c), lane);
                    vz[lane] = v;
                    __syncwarp();
                    const real x = warp_matvec<true>(CL_BLOCK(q), vz, lane);
                    if (lane < n && write_ok) __stcg(zb + ((long long)u[0] * n + lane) * z_rs + c * z_cs, x);
                    send_vector(x, sends + u[4], u[5], c, m, vecs, bars, lane);
                    __syncwarp();
                }
            }
        }
        if (refill) __syncthreads();  // (this phase's ring slots are free for the producer)
    }
    // No CTA leaves while another may still push vectors into its shared memory.
    cluster_barrier_relaxed();
#undef CL_VEC
#undef CL_BLOCK
#endif
}
#endif
