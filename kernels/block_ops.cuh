// CTA-wide dense operations on n×n column-major blocks (leading dimension LD), in shared or global
// memory. Names follow LAPACK/BLAS; each comment gives the math.

// A ← chol(A), lower, with the block held in registers: thread t owns row t % LD, columns
// t / LD + s·REG_STEP (REG_STEP = NT / LD threads share a row). Column j is published through a
// double-buffered shared vector, so each column costs one barrier and no memory traffic (the
// memory version costs three barriers and a read-modify-write of the trailing matrix per column:
// ~1 ms for n = 128 on an H100). Returns −1, or the first column whose pivot is not positive. All
// threads call; `thr`, `boost`: the pivot policy (common.cuh), boosted pivots are added to
// `nboost` (thread 0's count is the block's). For LD ≤ 64 (larger blocks use the blocked panel).
#define REG_STEP (NT / LD > 0 ? NT / LD : 1)
#define REG_COLS ((LD + REG_STEP - 1) / REG_STEP)
__device__ int potrf_lower_reg(real* A, int n, real thr, real boost, int& nboost) {
    __shared__ real col[2][LD];
    const int row = threadIdx.x % LD, k0 = threadIdx.x / LD;
    const bool owner = threadIdx.x < LD * REG_STEP && row < n;
    __syncthreads(); // A may have just been staged into shared memory by other threads
    real a[REG_COLS];
#pragma unroll
    for (int s = 0; s < REG_COLS; ++s) {
        const int k = k0 + s * REG_STEP;
        a[s] = (owner && k < n && row >= k) ? A[row + k * LD] : real(0);
    }
    int failed = -1;
    for (int j = 0; j < n; ++j) {
        real* c = col[j & 1];
        // Column j has received every update from columns < j: its owners publish it.
#pragma unroll
        for (int s = 0; s < REG_COLS; ++s)
            if (owner && k0 + s * REG_STEP == j && row >= j) c[row] = a[s];
        __syncthreads();
        bool boosted;
        const real d = policy_pivot(c[j], thr, boost, boosted);
        nboost += boosted;
        if (!(d > real(0) && isfinite(d))) { // c[j] is the same for every thread: a uniform exit
            failed = j;
            break;
        }
        const real rs = rsqrt(d);  // (1 / sqrt(d) called two slow-path routines per column)
        const real l_row = (row == j ? d : c[row]) * rs;
#pragma unroll
        for (int s = 0; s < REG_COLS; ++s) {
            const int k = k0 + s * REG_STEP;
            if (!owner || k < j || row < k) continue;
            if (k == j) a[s] = l_row;                  // finished column j (row ≥ j)
            else a[s] -= l_row * (c[k] * rs);          // trailing update, k > j
        }
    }
#pragma unroll
    for (int s = 0; s < REG_COLS; ++s) {
        const int k = k0 + s * REG_STEP;
        if (owner && k < n && row >= k) A[row + k * LD] = a[s];
    }
    __syncthreads();
    return failed;
}

__device__ __forceinline__ int potrf_lower(real* A, int n, real thr, real boost, int& nboost) {
    return potrf_lower_reg(A, n, thr, boost, nboost);
}

// The elimination's potrf and trsm in one sweep over the tall panel [D; X_0; X_1] (paper §4's
// potrf → trsm pair): D = L·Lᵀ, X_c ← X_c·L⁻ᵀ. Thread p holds row p % LD of panel block p / LD
// (0: D, 1 and 2: the couplings) in registers; column j is published unscaled through a
// double-buffered shared vector (one barrier per column), and every row r updates its columns
// k > j by l_r·l_k = v_r·c_k/d, so the trsm is FMAs beside the pivot chain instead of a second
// sweep. (The two sweeps of potrf_lower_reg and trsm_right_lower_trans took ~140 µs of a 163 µs
// level at f64 n = 64: a division per column and a barrier per column twice; ncu, H100.)
// Rows beyond n are identity (D) or zero (couplings) padding. The helpers below work on the
// columns [C0, C0 + W) of a row held in W registers (W ≤ 64: 64 f64 = 128 registers):
// potrf_trsm_panel sweeps all LD ≤ 64 columns at once, potrf_trsm_blocked (LD ≤ 128) sweeps 32
// at a time.
#define PANEL_WIDTH(W, C0) (LD - (C0) < (W) ? LD - (C0) : (W))

// Loads columns [C0, C0 + W) of panel row (blk, i) from global memory (row i's elements are
// coalesced across a warp): D's lower triangle only (the upper one is not stored), identity and
// zero padding beyond n.
template <int W, int C0>
__device__ __forceinline__ void panel_load(real (&a)[W], const real* src, int blk, int i, bool has_row, int n) {
#pragma unroll
    for (int k = 0; k < PANEL_WIDTH(W, C0); ++k) {
        const int col = C0 + k;
        const bool in = has_row && i < n && col < n && (blk > 0 || col <= i);
        a[k] = in ? src[i + col * LD] : real(blk == 0 && i == col ? 1 : 0);
    }
}

// a[k] −= s·v[k] for j < k < WP (v: shared, 16-byte aligned, the same for the whole CTA; pairs
// as one 16-byte broadcast read). j is a compile-time constant where the caller's loop unrolls.
template <int W, int WP>
__device__ __forceinline__ void axpy_after(real (&a)[W], real s, const real* v, int j) {
#pragma unroll
    for (int k = j + 1; k < WP; ++k) {
        if (k % 2 == 0 && k + 1 < WP) {
            const real2 pair = *reinterpret_cast<const real2*>(v + k);
            a[k] = fma(-s, pair.x, a[k]);
            a[k + 1] = fma(-s, pair.y, a[k + 1]);
        } else if ((k % 2 != 0 && k == j + 1) || (k % 2 == 0 && k + 1 == WP)) {
            a[k] = fma(-s, v[k], a[k]);
        }
    }
}

// The register sweep over columns [C0, C0 + W), whose pivot rows are D's rows [C0, C0 + W): the
// rows have received every update from the columns < C0. Returns −1 or the first column (relative
// to C0) whose pivot is not positive (uniform; the sweep runs on harmlessly after it). All
// threads call it; `col`: shared, 16-byte aligned.
template <int W, int C0, int CW = W>
__device__ __forceinline__ int panel_sweep(real (&a)[W], real (*col)[CW], int blk, int i, int n, real thr, real boost,
                                           int& nboost) {
    constexpr int WP = PANEL_WIDTH(W, C0);
    int failed = -1;
#pragma unroll
    for (int j = 0; j < WP; ++j) {
        real* c = col[j & 1];
        if (blk == 0 && i >= C0 + j && i < C0 + WP) c[i - C0] = a[j];
        __syncthreads();
        bool boosted = false;
        const real d = C0 + j < n ? policy_pivot(c[j], thr, boost, boosted) : real(1);
        const bool ok = d > real(0) && isfinite(d);  // (false for NaN)
        nboost += boosted && failed < 0;
        failed = (failed < 0 && !ok) ? j : failed;
        const real piv = ok ? d : real(1);  // sweep on harmlessly; nothing is written
        const real rs = rsqrt(piv);
        const real v = a[j];
        a[j] = (blk == 0 && i == C0 + j) ? piv * rs : v * rs;
        axpy_after<W, WP>(a, v * rs * rs, c, j);
    }
    return failed;
}

// Writes columns [C0, C0 + W) of a finished panel row: D's lower triangle and the couplings to
// global memory, and the couplings (whole LD×LD, padding zero, column stride SLD) to `so`
// (shared, for gemm_nt_neg<true>; null: none).
template <int W, int C0>
__device__ __forceinline__ void panel_store(const real (&a)[W], real* out, real* so, int blk, int i, int n) {
#pragma unroll
    for (int k = 0; k < PANEL_WIDTH(W, C0); ++k) {
        const int col = C0 + k;
        if (i < n && col < n && (blk > 0 || col <= i)) out[i + col * LD] = a[k];
        if (so && blk > 0) so[i + col * SLD] = a[k];
    }
}

// LD ≤ 64: the whole panel row in registers, one sweep. Loads from global memory, writes the
// factor's lower triangle and the couplings there and the couplings to sX0 / sX1 for the fill.
// Returns −1 or the first column whose pivot is not positive (uniform; nothing is written then).
// All threads call it; `thr`, `boost`: the pivot policy (common.cuh), thread 0's `nboost` counts.
#define TALL_PANEL (LD > 32 && LD <= 64 && 3 * LD <= NT)
#if TALL_PANEL
__device__ __forceinline__ int potrf_trsm_panel(real* D, real* X0, real* X1, int ncpl, int n, real* sX0, real* sX1,
                                                real thr, real boost, int& nboost) {
    __shared__ __align__(16) real col[2][LD];
    const int blk = threadIdx.x / LD, i = threadIdx.x % LD;
    const bool has_row = blk <= ncpl && threadIdx.x < 3 * LD;
    real* out = blk == 0 ? D : blk == 1 ? X0 : X1;
    real a[LD];
    panel_load<LD, 0>(a, out, blk, i, has_row, n);
    const int failed = panel_sweep<LD, 0>(a, col, blk, i, n, thr, boost, nboost);
    if (failed >= 0) return failed;
    if (has_row) panel_store<LD, 0>(a, out, blk == 1 ? sX0 : sX1, blk, i, n);
    return -1;
}
#endif

// 64 < LD ≤ 256: left-looking over panels of BLOCK_W columns (a whole row would spill: 128 f64 =
// 256 registers). Panel [C0, C0 + W) of every row still active (couplings, and D's rows ≥ C0)
// first subtracts its finished columns < C0 times D's rows [C0, C0 + W) (staged in shared
// memory; the row's own finished values are re-read from global memory, where this thread wrote
// them; f64: on the tensor cores, panel_update_dmma), then the panel's potrf. f64: the one warp
// that holds D's rows [C0, C0 + W) sweeps alone (panel_sweep_warp), publishing L's diagonal
// block and its pivots' reciprocals, and after one CTA barrier every other row solves its W
// columns against them on its own (the whole CTA sweeping with a CTA barrier per column was about
// half the warp-state samples of the 113 µs f64 n = 128 elimination: 128 barriers over 12 warps,
// 0.26 instructions issued per scheduler cycle; ncu, H100). f32: the whole CTA sweeps like potrf_trsm_panel.
// Same contract as potrf_trsm_panel, except that a failing pivot leaves the panels before it
// written; sX0 / sX1 may be null (couplings only in global memory, for the fill to read there).
#define BLOCKED_PANEL (LD > 64 && LD <= 256 && 3 * LD <= NT)
// The blocked panels' code: the one-CTA blocked elimination's, and the cluster elimination's,
// which also works for 32 < LD ≤ 64 (two panels, in place of the one-CTA sweep of all LD
// columns with a CTA barrier per column); jit.rs KernelSpec::eliminate_cluster says at which LD
// it is compiled in (BT_ELIMINATE_CLUSTER).
#define BLOCKED_PANEL_CODE (BLOCKED_PANEL || (BT_ELIMINATE_CLUSTER && LD > 32 && 3 * LD <= NT))
// Panel width: 32 columns; 16 above LD = 128, whose 3·LD threads may hold ≤ 85 registers each.
#define BLOCK_W (LD > 128 ? 16 : 32)
// Threads per CTA of the blocked elimination's cluster variant (potrf_trsm_blocked_cluster).
#define CLUSTER_ROW_THREADS ((LD + 31) / 32 * 32)
#if BLOCKED_PANEL_CODE
// Panels C0, C0 + BLOCK_W, … of one thread's row (compile-time C0; −1 or the failing column).
// Shared memory of the blocked panel: the sweep's column buffer; D's rows of the panel times the
// finished columns (S[m][k] = L[C0 + k][m], m < C0; sized for the widest C0); the panel's
// diagonal block by columns (T[j][k] = L[C0 + k][C0 + j]) and its pivots' reciprocal square
// roots; the diagonal warp's failing column and the boosted pivots so far. The cluster variant
// (CL, below) keeps every panel's T and rdiag, and S after them, in dynamic shared memory (jit.rs
// eliminate_cluster_smem_bytes: static shared memory stops at 48 KiB), each panel's failing
// column, two mbarriers per panel (S's rows written, T published) and, for the D CTA's look-ahead,
// one per sub-panel but the last (its columns of T and rdiag published).
#define BLOCK_PANELS ((LD + BLOCK_W - 1) / BLOCK_W)
// Whether the diagonal warp sweeps by sub-panels (panel_sweep_warp): where the levels are
// latency-bound, i.e. in the cluster variant (CL: levels of few eliminations) and at LD ≤ 72.
// Where many eliminations share the SMs (one CTA per elimination, LD > 72) the sub-panels' extra
// instructions cost more than the shorter chain gains (f64 n = 96..128, N = 1024: +4–5 %, H100).
// Sub-panels of 4 columns in the cluster variant, 8 elsewhere. Against 8 (H100, f64, N = 64 and
// 256): cluster n = 80 and 100 −1..−2 %, n = 96 and 128 0..−1.5 %, n = 112 and 120 the same (at
// ld 104 the cluster kernel no longer spills); the one-CTA elimination at n = 72 +5 % with 4.
template <bool CL>
constexpr bool SWEEP_SUB_PANELS = CL || LD <= 72;
template <bool CL>
constexpr int SWEEP_SUB = CL ? 4 : 8;
// The cluster variant's D CTA signals each sub-panel of a panel but the last (whose signal is
// ready[1][p]) on one mbarrier each.
constexpr int SUB_SIGNALS = BLOCK_W / SWEEP_SUB<true> - 1;

constexpr int BLOCKED_S_ELEMS = (LD - 1) / BLOCK_W * BLOCK_W * BLOCK_W;  // (S for the widest C0)
template <bool CL>
struct BlockedPanelShared {
    real col[2][2 * BLOCK_W];  // (zero past the panel's columns: panel_sweep_warp reads there)
    real S1[CL ? 2 : BLOCKED_S_ELEMS];
    real T1[CL ? 2 : BLOCK_W * BLOCK_W];
    real rdiag1[CL ? 2 : BLOCK_W];
    unsigned long long ready[2][CL ? BLOCK_PANELS : 1];
    // (CL: the D CTA's look-ahead: sub-panel s < last of panel p published, lookahead_solve_panel)
    unsigned long long sub[CL ? BLOCK_PANELS : 1][CL ? SUB_SIGNALS : 1];
    int panel_failed[CL ? BLOCK_PANELS : 1];  // (CL: the coupling CTAs read each panel's from the D CTA)
    int failed, boosted;
    // S (CL: in dynamic shared memory after every panel's T and rdiag, so that a D CTA alone,
    // which never stages S, launches without it: btchol_factor_potrf_split).
    __device__ __forceinline__ real* S() {
        if constexpr (CL) {
            extern __shared__ __align__(16) unsigned char smem_raw[];
            return reinterpret_cast<real*>(smem_raw) + BLOCK_PANELS * (BLOCK_W * BLOCK_W + BLOCK_W);
        } else {
            return S1;
        }
    }
    // Panel p's T and rdiag (the CTA variant: one of each, reused).
    __device__ __forceinline__ real* T(int p) {
        if constexpr (CL) {
            extern __shared__ __align__(16) unsigned char smem_raw[];
            return reinterpret_cast<real*>(smem_raw) + p * BLOCK_W * BLOCK_W;
        } else {
            return T1;
        }
    }
    __device__ __forceinline__ real* rdiag(int p) {
        if constexpr (CL) {
            extern __shared__ __align__(16) unsigned char smem_raw[];
            return reinterpret_cast<real*>(smem_raw) + BLOCK_PANELS * BLOCK_W * BLOCK_W + p * BLOCK_W;
        } else {
            return rdiag1;
        }
    }
};

// acc[I][J] += A_I·B_J over the 4 × 4 tiles of 8 × 8 of a 32 × 32 product, one k-step of 4 (tile
// rows 2P and 2P + 1 in one dmma_16x8x4; av[I], bv[J]: the lane's A and B fragments). LOWER: only
// the tiles J ≤ I.
template <bool LOWER = false>
__device__ __forceinline__ void dmma_tiles_step(double (&acc)[4][4][2], const double (&av)[4], const double (&bv)[4]) {
#pragma unroll
    for (int P = 0; P < 2; ++P)
#pragma unroll
        for (int J = 0; J < (LOWER ? 2 * P + 2 : 4); ++J)
            dmma_16x8x4(acc[2 * P][J], acc[2 * P + 1][J], av[2 * P], av[2 * P + 1], bv[J], LOWER && J > 2 * P);
}

// f64 on sm_80+: the left-looking update of a panel on the FP64 tensor cores (SIMT, it issued 16
// shared loads and 32 FMAs per finished column and row: about half the warp-state samples of the
// 113 µs f64 n = 128 elimination; ncu, H100).
constexpr bool BLOCKED_DMMA = DMMA_ARCH && sizeof(real) == 8 && BLOCK_W == 32;
// The panel's potrf by its diagonal warp alone (panel_sweep_warp), with the tensor-core update;
// f32 keeps the whole-CTA sweep, which measured 4–26 % faster there (H100, n = 72..128).
constexpr bool BLOCKED_WARP_SWEEP = BLOCKED_DMMA;

// a[k] −= U[ρ][k] for lane ρ of the warp, U the 32 × 32 product in the mma C fragments of
// tiles 8 × 8: acc[I][J][e] = U[8I + r][8J + 2c + e] (r = lane / 4, c = lane % 4), so lane ρ's
// U[ρ][8J + 2q + e] is lane 4·(ρ % 8) + q's acc[ρ / 8][J][e]. All 32 lanes call it. LOWER:
// only the tiles J ≤ I (a diagonal block's lower triangle: its upper one is never read).
//
// RS (the cluster's CTAs: the D CTA's warps through its otherwise unused S region,
// lookahead_d_warp; a coupling CTA's warp w through its T_w, potrf_trsm_blocked_panels): through
// the warp's 32 × 32 doubles of shared memory `buf` instead, each lane storing its 16 accumulator
// pairs and loading its row's 16: 32 instructions, not 128 shuffles and their selects. The D
// CTA's code runs about once per elimination and its warps stalled on instruction fetch (ncu,
// f64 n = 128, N = 64: no_inst 60 % of their samples); the same subtractions in the same order:
// the same bits. The pairs of a row
// are swizzled (pair k of row ρ at k ^ s(ρ), s a permutation of the low 3 bits) so that neither
// the stores (8 lanes: 2 rows × 4 pairs) nor the loads (8 rows, one pair) share a bank.
template <bool LOWER = false, bool RS = false>
__device__ __forceinline__ void dmma_rows_subtract(real (&a)[BLOCK_W], const double (&acc)[4][4][2],
                                                   double* buf = nullptr) {
    if constexpr (RS) {
        const int lane = threadIdx.x & 31, r = lane >> 2, c = lane & 3;
        const auto at = [&](int row, int k) {
            return reinterpret_cast<double2*>(buf) + row * 16 + (k ^ (((row & 1) << 2) | ((row >> 1) & 3)));
        };
        __syncwarp();  // (every lane's loads of the last use before this one's stores)
#pragma unroll
        for (int I = 0; I < 4; ++I)
#pragma unroll
            for (int J = 0; J <= (LOWER ? I : 3); ++J) *at(8 * I + r, 4 * J + c) = make_double2(acc[I][J][0], acc[I][J][1]);
        __syncwarp();
#pragma unroll
        for (int k = 0; k < 16; ++k)
            if (!LOWER || k / 4 <= lane / 8) {
                const double2 u = *at(lane, k);
                a[2 * k] -= u.x, a[2 * k + 1] -= u.y;
            }
        return;
    }
    const int lane = threadIdx.x & 31, src = 4 * (lane & 7), mine = lane >> 3;
#pragma unroll
    for (int J = 0; J < 4; ++J)
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                real u = 0;
#pragma unroll
                for (int I = LOWER ? J : 0; I < 4; ++I) {
                    const real v = __shfl_sync(0xffffffffu, acc[I][J][e], src + q);
                    u = I == mine ? v : u;
                }
                a[8 * J + 2 * q + e] -= u;
            }
}

// a[k] −= Σ_{m < C0} L[row][m]·S[m][k] for the rows of this warp (lane ρ: the row of thread
// 32·warp + ρ), as 4 × 4 tiles of 8 × 8 (dmma_16x8x4, k over m in steps of 4). The A fragments are
// the rows' finished values, read back from global memory (D, X0, X1: blocks 0, 1, 2; zero
// for rows not active in this panel and for m ≥ n), the B fragments S (shared, staged by the
// caller). The accumulators are C fragments (row lane/4 of a tile); each lane's row comes back
// by shuffles, after `load` has filled a[] (not before: both live at once spilled). All 32
// lanes call it (mma needs the whole warp). `cta_blk`: −1, thread t holds row t % LD of block
// t / LD; a cluster CTA's (≥ 0), thread t holds row t of that block. RS, rs_buf: the rows come
// back through the warp's 32 × 32 doubles of shared memory instead (dmma_rows_subtract).
template <int C0, bool RS, typename Load>
__device__ __forceinline__ void panel_update_dmma(real (&a)[BLOCK_W], const real* D, const real* X0, const real* X1,
                                                  int ncpl, int n, const real* S, Load load, int cta_blk,
                                                  double* rs_buf) {
    const int lane = threadIdx.x & 31, r = lane >> 2, c = lane & 3;
    const real* arow[4];
    bool aon[4], any = false;
#pragma unroll
    for (int I = 0; I < 4; ++I) {
        const int t = (threadIdx.x & ~31) + 8 * I + r, b = cta_blk < 0 ? t / LD : cta_blk, i = cta_blk < 0 ? t % LD : t;
        aon[I] = (cta_blk < 0 ? t < 3 * LD : t < LD) && b <= ncpl && (b > 0 || i >= C0) && i < n;
        arow[I] = (b == 0 ? D : b == 1 ? X0 : X1) + i;
        any |= aon[I];
    }
    if (!__any_sync(0xffffffffu, any)) return load();  // (warp-uniform: a warp of finished rows)
    double acc[4][4][2] = {};
#pragma unroll 2
    for (int m0 = 0; m0 < C0; m0 += 4) {
        const int m = m0 + c;
        double av[4], bv[4];
#pragma unroll
        for (int I = 0; I < 4; ++I) av[I] = aon[I] && m < n ? arow[I][(long long)m * LD] : 0.0;
#pragma unroll
        for (int J = 0; J < 4; ++J) bv[J] = S[m * BLOCK_W + 8 * J + r];
        dmma_tiles_step(acc, av, bv);
    }
    load();
    dmma_rows_subtract<false, RS>(a, acc, rs_buf);
}

// One column j of the diagonal warp's sweep (pivot rows: D's rows [C0, C0 + WP), all in this
// warp; its other lanes solve their rows along): v = this row's value in the column, cjj = the
// pivot row's (every lane's copy, see panel_sweep_warp). Publishes v to c (pivot rows), updates
// `failed` and nboost, and returns the reciprocal square root of the pivot (rs_one, i.e.
// rsqrt_pivot<true>(1), once failed and past n; rs_boost, rsqrt_pivot<true>(boost), for a boosted
// pivot). The pivot policy's tests run beside the reciprocal square root of the raw pivot and
// select after it, so that the chain from one column's pivot to the next's is the square root,
// two multiplies and an FMA. `before_stores` runs after the column buffer is readable and before
// the column's stores to T, rdiag, row_out and row_so (which may alias c for all the compiler
// knows), so the caller's loads from c come first; then the finished value goes out (nothing
// once failed). (Branch-free: ncu put ~37 % of the sweep's samples on branch_resolving at
// rsqrt()'s slow-path test and a branch around the stores, H100; without them f64 n = 100,
// N = 64 factors 2 % faster.)
template <int C0, typename BeforeStores>
__device__ __forceinline__ real sweep_column(int j, real v, real cjj, real rs_one, real rs_boost, real* c, real* T,
                                             real* rdiag, real* row_out, real* row_so, int blk, int i, int k,
                                             bool pivot_row, bool active, int n, real thr, real boost, int& failed,
                                             int& nboost, BeforeStores before_stores) {
    if (pivot_row) c[k] = v;  // (c[WP..] stays zero)
    __syncwarp();
    bool boosted = false;
    const bool in_range = C0 + j < n;
    const real d = in_range ? policy_pivot(cjj, thr, boost, boosted) : real(1);
    const bool ok = d > real(0) && isfinite(d);  // (false for NaN)
    nboost += boosted && failed < 0;
    failed = (failed < 0 && !ok) ? j : failed;
    const real piv = ok ? d : real(1);
    // rsqrt_pivot<true>(piv): d is cjj, boost, or 1 (past n), piv 1 once d fails.
    const real y = rsqrt_pivot_late(cjj);
    const real rs = !ok || !in_range ? rs_one : boosted ? rs_boost : y;
    before_stores(rs);
    const real l = (pivot_row && k == j) ? piv * rs : v * rs;
    const int col = C0 + j;
    const bool go = failed < 0;
    if (go && threadIdx.x == C0) rdiag[j] = rs;  // (D's row C0: the CTA and the cluster variant alike)
    if (go && pivot_row && k >= j) T[j * BLOCK_W + k] = l;
    if (go && active && i < n && col < n && (blk > 0 || col <= i)) row_out[i + col * LD] = l;
    if (go && row_so && active && blk > 0) row_so[i + col * LD] = l;
    return rs;
}

// A sub-panel's rank-SW update of the columns after it, then the registers shifted down SW:
// a[m] −= Σ_{jj < SW} l(jj)·L[C0 + j0 + m][C0 + j0 + jj] for m ∈ [SW, BLOCK_W), the second factor
// from T (T[j][k] = L[C0 + k][C0 + j]), l(jj) this row's L in the sub-panel's column j0 + jj (it
// may read a[jj]: only a[m ≥ SW] are written before the shift). At the full width: past the
// panel's end the columns are junk, never stored (skipping them by a test per group of 8 spilled
// at f64 ld 96). The sweep's (panel_sweep_warp) and the rolled solve's (panel_solve_rolled).
template <int SW, typename L>
__device__ __forceinline__ void sub_panel_update_shift(real (&a)[BLOCK_W], L l, const real* T, int j0) {
    const real* t0 = T + j0 * BLOCK_W + j0;
#pragma unroll
    for (int m = SW; m < BLOCK_W; m += 2) {
        real s0 = a[m], s1 = a[m + 1];
#pragma unroll
        for (int jj = 0; jj < SW; ++jj) {
            const real2 pair = *reinterpret_cast<const real2*>(t0 + jj * BLOCK_W + m);
            s0 = fma(-l(jj), pair.x, s0);
            s1 = fma(-l(jj), pair.y, s1);
        }
        a[m] = s0, a[m + 1] = s1;
    }
#pragma unroll
    for (int m = 0; m + SW < BLOCK_W; ++m) a[m] = a[m + SW];
}

// The diagonal warp's sweep over the panel's WP columns. Returns −1 or the failing column
// (uniform; nothing is written from it on); a[] is consumed; finished values go straight to
// row_out / row_so, the pivot rows' also to T and the pivots' reciprocal square roots to rdiag.
// Every lane keeps its own copy of the next column's pivot, computed as the next pivot row
// computes its own value (the same operands, the same bits: that row's value before the
// column's update, taken by a shuffle off the chain, and its value in the column, from c), so no
// shuffle waits between one pivot's square root and the next; only the first column of a panel or
// sub-panel takes its pivot by a shuffle.
//  - By columns (a loop of identical iterations): each row's remaining columns shift down one
//    register per column, so column j is always a[0]; all 31 FMAs follow the column's chain
//    (~430 cycles a column, ~45 % of an f64 n = 128 elimination; globaltimer, H200). (The
//    unrolled sweep, ~1.6 k instructions of straight-line code per panel, measured the same at
//    f64 n = 128, N = 64 and 11–13 % slower at N = 1024 / 4096; H100.)
//  - By sub-panels of SWEEP_SUB columns (SWEEP_SUB_PANELS): a column's FMAs go into the rest of
//    its sub-panel only; after the sub-panel, the columns after it take its rank-SWEEP_SUB
//    update at once, the second factor from T (just published by the pivot rows), and move down
//    SWEEP_SUB registers, so the loop over sub-panels stays a loop.
template <int C0, bool CL>
__device__ __forceinline__ int panel_sweep_warp(real (&a)[BLOCK_W], BlockedPanelShared<CL>& sh, real* T, real* rdiag,
                                                real* row_out, real* row_so, int blk, int i, bool active, int n,
                                                real thr, real boost, int& nboost) {
    constexpr int WP = PANEL_WIDTH(BLOCK_W, C0), SW = SWEEP_SUB<CL>;
    const int k = i - C0;  // a pivot row's index in the panel
    const bool pivot_row = blk == 0 && k >= 0 && k < WP;
    const real rs_one = rsqrt_pivot<true>(real(1)), rs_boost = rsqrt_pivot<true>(boost > real(0) ? boost : real(1));
    int failed = -1;
    if constexpr (!SWEEP_SUB_PANELS<CL>) {
        real cjj = __shfl_sync(0xffffffffu, a[0], 0);
#pragma unroll 1
        for (int j = 0; j < WP; ++j) {
            real* c = sh.col[j & 1];
            const real v = a[0];
            // The next pivot row's value in the next column, before this column's update (past the
            // panel's last column: junk, unused).
            const real pre = __shfl_sync(0xffffffffu, a[1], (j + 1) & 31);
            // (Column j + 1's value is loaded before the column's stores, so the next column's
            // first FMA does not wait on a shared load issued late.)
            real c1, next;
            const real rs = sweep_column<C0>(j, v, cjj, rs_one, rs_boost, c, T, rdiag, row_out, row_so, blk, i, k,
                                             pivot_row, active, n, thr, boost, failed, nboost, [&](real rs) {
                                                 c1 = c[j + 1];
                                                 next = fma(-(c1 * rs * rs), c1, pre);
                                             });
            const real t = v * rs * rs;
            // Columns j + 1.. move down one (c past the panel is zero).
            a[0] = fma(-t, c1, a[1]);
#pragma unroll
            for (int m = 2; m < BLOCK_W; ++m) a[m - 1] = fma(-t, c[j + m], a[m]);
            cjj = next;
        }
    } else {
        static_assert(WP % SW == 0 && BLOCK_W % SW == 0, "panels of whole sub-panels (LD: a multiple of 8)");
#pragma unroll 1
        for (int j0 = 0; j0 < WP; j0 += SW) {
            real lj[SW];  // this row's L values in the sub-panel's columns
            real cjj = __shfl_sync(0xffffffffu, a[0], j0);
#pragma unroll
            for (int jj = 0; jj < SW; ++jj) {
                const int j = j0 + jj;
                real* c = sh.col[jj & 1];
                const real v = a[jj];
                const real pre = jj + 1 < SW ? __shfl_sync(0xffffffffu, a[jj + 1], j + 1) : real(0);  // (as above)
                real next = 0;
                const real rs = sweep_column<C0>(j, v, cjj, rs_one, rs_boost, c, T, rdiag, row_out, row_so, blk, i, k,
                                                 pivot_row, active, n, thr, boost, failed, nboost, [&](real rs) {
                                                     const real t = v * rs * rs;
#pragma unroll
                                                     for (int m = jj + 1; m < SW; ++m) a[m] = fma(-t, c[j0 + m], a[m]);
                                                     if (jj + 1 < SW) {
                                                         const real c1 = c[j + 1];
                                                         next = fma(-(c1 * rs * rs), c1, pre);
                                                     }
                                                 });
                lj[jj] = v * rs;
                cjj = next;
            }
            if (j0 + SW < WP) {  // (uniform) the columns after the sub-panel
                __syncwarp();    // (T's stores before the other lanes' reads)
#if __CUDA_ARCH__ >= 900
                // The D CTA's look-ahead (CL): the other warps solve their rows of the panel as its
                // sub-panels come (lookahead_solve_panel). Every lane releases its own stores (with
                // lane 0's arrival alone after the __syncwarp, racecheck reported the T reads).
                if constexpr (CL) mbar_arrive(&sh.sub[C0 / BLOCK_W][j0 / SW]);
#endif
                sub_panel_update_shift<SW>(a, [&](int jj) { return lj[jj]; }, T, j0);
            }
        }
    }
    return failed;
}

// Row ← row·L_pp⁻ᵀ for the panel [C0, C0 + WP) of a row below its pivot rows, against the
// published diagonal block T (T[j][k] = L[C0 + k][C0 + j]) and its pivots' reciprocals rdiag
// (right-looking: x_j final, then its FMAs into the columns after it).
template <int C0>
__device__ __forceinline__ void panel_solve(real (&a)[BLOCK_W], const real* T, const real* rdiag) {
    constexpr int WP = PANEL_WIDTH(BLOCK_W, C0);
#pragma unroll
    for (int j = 0; j < WP; ++j) {
        a[j] *= rdiag[j];
        axpy_after<BLOCK_W, WP>(a, a[j], T + j * BLOCK_W, j);
    }
}

// panel_solve, then panel_store of columns [C0, C0 + WP) (out, so, blk, i, n as there; nothing
// stored unless `store`), as a loop over sub-panels of SW columns whose columns shift down SW
// registers per sub-panel (the sweep's structure), each sub-panel stored as it is solved. The
// unrolled solve is straight-line code that runs once per panel and warp: the cluster
// elimination's warps, one to an SM sub-partition, stalled on instruction fetch for most of it
// (ncu, f64 n = 128, N = 64: stall_no_inst 60 % of the D CTA's warp samples, its code executed
// ~2 times per instruction). The same FMAs in the same order per column: the same bits. Columns
// past WP are junk (the full width, as in the sweep), never stored. `before(s)` runs before
// sub-panel s (false: stop there, returns false); `solved()` after it is solved, with its
// columns in a[0 .. SW).
template <int WP, int C0, int SW, typename Before, typename Solved>
__device__ __forceinline__ bool panel_solve_rolled(real (&a)[BLOCK_W], const real* T, const real* rdiag, real* out,
                                                   real* so, int blk, int i, int n, bool store, Before before,
                                                   Solved solved) {
    static_assert(WP % SW == 0 && BLOCK_W % SW == 0 && SW % 2 == 0, "panels of whole sub-panels");
#pragma unroll 1
    for (int j0 = 0; j0 < WP; j0 += SW) {
        if (!before(j0 / SW)) return false;
#pragma unroll
        for (int jj = 0; jj < SW; ++jj) {  // the sub-panel's own triangle
            a[jj] *= rdiag[j0 + jj];
#pragma unroll
            for (int m = jj + 1; m < SW; ++m) a[m] = fma(-a[jj], T[(j0 + jj) * BLOCK_W + j0 + m], a[m]);
        }
#pragma unroll
        for (int jj = 0; jj < SW; ++jj) {
            const int col = C0 + j0 + jj;
            if (store && i < n && col < n && (blk > 0 || col <= i)) out[i + col * LD] = a[jj];
            if (store && so && blk > 0) so[i + col * SLD] = a[jj];
        }
        solved();
        if (j0 + SW < WP) {  // (uniform) the columns after it, at the full width, then down SW registers
            // (Not after the last sub-panel: there the pair loads would run past T's last row, into
            // the next panel's T, which its warp is writing: racecheck's hazards.)
            sub_panel_update_shift<SW>(a, [&](int jj) { return a[jj]; }, T, j0);
        }
    }
    return true;
}

#if __CUDA_ARCH__ >= 900
// The cluster variant's signals (CL below): lane 0 of a D-CTA warp tells the coupling CTAs
// 1..ncpl that their mbarrier `bar` (its counterpart there) is passed; release at cluster scope,
// so what the warp wrote before its last __syncwarp (global memory and shared) is visible to a
// thread that waits on the barrier.
__device__ __forceinline__ void signal_couplings(unsigned long long* bar, int ncpl) {
    for (int r = 1; r <= ncpl; ++r)
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(
                         cluster_map(smem_addr(bar), r))
                     : "memory");
}
__device__ __forceinline__ void load_cluster_pair(double2& v, unsigned remote) {
    asm volatile("ld.shared::cluster.v2.f64 {%0, %1}, [%2];" : "=d"(v.x), "=d"(v.y) : "r"(remote) : "memory");
}
__device__ __forceinline__ void load_cluster_pair(float2& v, unsigned remote) {
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(remote) : "memory");
}
#endif

// CL: the cluster variant (btchol_factor_eliminate_cluster): CTA `blk` of a cluster of three
// holds block blk's rows (thread i: row i; CLUSTER_ROW_THREADS threads), so the three blocks'
// updates and trsm run on three SMs. The D CTA (blk 0) runs lookahead_d_cta (below), not this:
// it signals each panel twice (signal_couplings): once D's rows of the panel have their columns
// < C0 (S), and once the panel's T and rdiag are published (kept per panel, so nothing is
// overwritten while the coupling CTAs read it). The coupling CTAs stage S from global memory,
// update, then copy T, rdiag and the failing column from the D CTA's shared memory and solve.
// (f64 n = 128, one elimination, globaltimer trace, H200: a panel's D-CTA chain is its update
// 3–7 µs, the diagonal warp's sweep ~7 µs and the trsm of D's rows below ~3 µs; the sweep,
// which the cluster does not shorten, bounds what splitting the rows can gain.)
template <int C0, bool CL, bool SPLIT = false>
__device__ __forceinline__ int potrf_trsm_blocked_panels(const real* D, const real* X0, const real* X1, int ncpl,
                                                       real* row_out, real* row_so, int blk, int i, bool has_row,
                                                       int n, BlockedPanelShared<CL>& sh, real thr, real boost) {
    if constexpr (C0 >= LD) {
        return -1;
    } else {
        constexpr int WP = PANEL_WIDTH(BLOCK_W, C0), THREADS = CL ? CLUSTER_ROW_THREADS : NT;
        constexpr int P = C0 / BLOCK_W, TB = CL ? P : 0;  // (this panel's T and rdiag)
        const bool active = has_row && (blk > 0 || i >= C0);
        real a[BLOCK_W];
        // (Loaded after the barrier: loaded during the previous panel's sweep, it spilled.)
        if constexpr (C0 > 0) {
#if __CUDA_ARCH__ >= 900
            if (CL && !SPLIT && threadIdx.x == 0) mbar_wait(&sh.ready[0][CL ? P : 0], 0);  // S's rows written
#endif
            __syncthreads();  // the previous panels' stores are visible
        }
        const auto load = [&] { panel_load<BLOCK_W, C0>(a, row_out, blk, i, active, n); };
        if constexpr (C0 == 0 || !BLOCKED_DMMA) load();
        if constexpr (C0 > 0) {
            // S[m][k] = L[C0 + k][m], m < C0: D's rows of this panel, finished columns.
            for (int e = threadIdx.x; e < C0 * WP; e += THREADS) {
                const int m = e / WP, k = e % WP;
                sh.S()[m * BLOCK_W + k] = (C0 + k < n && m < n) ? D[C0 + k + m * LD] : real(0);
            }
            __syncthreads();
            if constexpr (BLOCKED_DMMA) {
                // (A coupling CTA's warp w redistributes through its T_w: between the barrier
                // above, after every warp's solve of the panels before, and the one before this
                // panel's T is copied, no warp of the CTA reads any T.)
                constexpr bool RS = CL && !SPLIT;
                panel_update_dmma<C0, RS>(a, D, X0, X1, ncpl, n, sh.S(), load, CL ? blk : -1,
                                          RS ? reinterpret_cast<double*>(sh.T(threadIdx.x / 32)) : nullptr);
            } else if (active && i < n) {
                // The row's finished values come back from global memory, asked into L1 8
                // columns ahead (one L2 latency waited per column took ~60 µs of a 110 µs f64
                // n = 128 elimination, ncu, H100; loading batches in registers spilled).
                const real* own = row_out + i;
                const int mend = C0 < n ? C0 : n;
#pragma unroll
                for (int m = 0; m < 8; ++m)
                    if (m < mend) prefetch_l1(own + m * LD);
#pragma unroll 1
                for (int m = 0; m < mend; ++m) {
                    if (m + 8 < mend) prefetch_l1(own + (m + 8) * LD);
                    const real l = own[m * LD];
                    const real* s = sh.S() + m * BLOCK_W;
#pragma unroll
                    for (int k = 0; k < WP; k += 2) {
                        if (k + 1 < WP) {
                            const real2 pair = *reinterpret_cast<const real2*>(s + k);
                            a[k] = fma(-l, pair.x, a[k]);
                            a[k + 1] = fma(-l, pair.y, a[k + 1]);
                        } else {
                            a[k] = fma(-l, s[k], a[k]);
                        }
                    }
                }
            }
        }
        if constexpr (!BLOCKED_WARP_SWEEP) {  // the whole CTA sweeps (see BLOCKED_WARP_SWEEP)
            static_assert(!CL, "the cluster variant needs the diagonal warp's sweep");  // (CL: f64 only)
            int nb = 0;
            const int f = panel_sweep<BLOCK_W, C0>(a, sh.col, blk, i, n, thr, boost, nb);
            if (threadIdx.x == 0) sh.boosted += nb;
            if (f >= 0) return C0 + f;
            if (active) panel_store<BLOCK_W, C0>(a, row_out, row_so, blk, i, n);
            return potrf_trsm_blocked_panels<C0 + BLOCK_W, CL, SPLIT>(D, X0, X1, ncpl, row_out, row_so, blk, i, has_row, n,
                                                               sh, thr, boost);
        }
        // The diagonal warp: threads [C0, C0 + WP) are D's pivot rows (blk 0); its other lanes
        // (finished rows, rows below) sweep along, which solves their columns of this panel.
        const bool diag_warp = !CL && threadIdx.x / 32 == C0 / 32;  // (CL: a coupling CTA, no pivot rows)
        if (diag_warp) {
            int nb = 0;
            const int f =
                panel_sweep_warp<C0>(a, sh, sh.T(TB), sh.rdiag(TB), row_out, row_so, blk, i, active, n, thr, boost, nb);
            if (threadIdx.x == C0) sh.failed = f, sh.boosted += nb;
        }
        __syncthreads();
#if __CUDA_ARCH__ >= 900
        if constexpr (CL && !SPLIT) {
            if (threadIdx.x == 0) mbar_wait(&sh.ready[1][P], 0);
            __syncthreads();
            // This panel's T (lower triangle by columns) and rdiag, and the failing column.
            static_assert(BLOCK_W * BLOCK_W % 2 == 0 && BLOCK_W % 2 == 0, "pairs");
            for (int e = 2 * threadIdx.x; e < BLOCK_W * BLOCK_W + BLOCK_W; e += 2 * THREADS) {
                real* dst = e < BLOCK_W * BLOCK_W ? sh.T(TB) + e : sh.rdiag(TB) + (e - BLOCK_W * BLOCK_W);
                real2 v;
                load_cluster_pair(v, cluster_map(smem_addr(dst), 0));
                *reinterpret_cast<real2*>(dst) = v;
            }
            if (threadIdx.x == 0) {
                int f;
                const unsigned remote = cluster_map(smem_addr(&sh.panel_failed[P]), 0);
                asm volatile("ld.shared::cluster.s32 %0, [%1];" : "=r"(f) : "r"(remote));
                sh.failed = f;
            }
            __syncthreads();
        }
#endif
        if (sh.failed >= 0) return C0 + sh.failed;
        if constexpr (CL) {  // (the coupling CTAs: no diagonal warp)
            if (active)
                panel_solve_rolled<WP, C0, SWEEP_SUB<true>>(a, sh.T(TB), sh.rdiag(TB), row_out, row_so, blk, i, n, true,
                                                            [](int) { return true; }, [] {});
        } else {
            if (!diag_warp && active) panel_solve<C0>(a, sh.T(TB), sh.rdiag(TB));
            if (active && !diag_warp) panel_store<BLOCK_W, C0>(a, row_out, row_so, blk, i, n);
        }
        return potrf_trsm_blocked_panels<C0 + BLOCK_W, CL, SPLIT>(D, X0, X1, ncpl, row_out, row_so, blk, i, has_row, n, sh,
                                                           thr, boost);
    }
}

__device__ __forceinline__ int potrf_trsm_blocked(real* D, real* X0, real* X1, int ncpl, int n, real* sX0, real* sX1,
                                                  real thr, real boost, int& nboost) {
    __shared__ __align__(16) BlockedPanelShared<false> sh;
    const int blk = threadIdx.x / LD, i = threadIdx.x % LD;
    const bool has_row = blk <= ncpl && threadIdx.x < 3 * LD;
    real* out = blk == 0 ? D : blk == 1 ? X0 : X1;  // (only has_row threads touch it)
    real* so = blk == 0 ? nullptr : blk == 1 ? sX0 : sX1;
    if (threadIdx.x == 0) sh.boosted = 0;  // (thread 0 is panel 0's first pivot row: its first writer)
    for (int e = threadIdx.x; e < 4 * BLOCK_W; e += NT) sh.col[e / (2 * BLOCK_W)][e % (2 * BLOCK_W)] = real(0);
    __syncthreads();
    const int f = potrf_trsm_blocked_panels<0, false>(D, X0, X1, ncpl, out, so, blk, i, has_row, n, sh, thr, boost);
    // Thread 0's count is the CTA's: it wrote the count itself (CTA sweep) or reads it after the
    // last panel's barrier (warp sweep); the other threads' counts are not read.
    if (threadIdx.x == 0) nboost = sh.boosted;
    return f;
}

#if __CUDA_ARCH__ >= 900
// The cluster's D CTA with look-ahead (f64, 72 < LD ≤ 128: three or four panels). Warp w
// holds D's rows [32w, 32w + 32), panel w's pivot rows. Without CTA barriers between panels, each
// warp takes the panels p < w in turn, as soon as they are ready: its columns of panel p are
// updated by the columns < 32p (their other factor is panel p's pivot rows, final once warp p has
// solved its panels < p: the D CTA's own mbarrier ready[0][p]) and solved against T_p as warp p
// sweeps it, by sub-panels of 4 columns (sub[p][s], the last one ready[1][p]). Then it sweeps its
// own panel, which it updated by the columns < 32(w − 1) before T_{w−1} and by panel w − 1's
// columns along that panel's solve: between warp w − 1's sweep and warp w's there remain one
// sub-panel's solve and rank-4 update, the own panel's reload and the accumulators' subtraction,
// where the barrier-separated D CTA had the whole panel's solve, the staging of S and the whole
// update (its chain per panel: update 3–7.5 µs, sweep ~7 µs, solve ~3 µs; globaltimer, f64 n =
// 128, H200). The coupling CTAs are signalled as before: ready[0][p] once panel p's pivot rows
// are final in columns < 32p, ready[1][p] once T_p is published. (The D CTA's chain per panel,
// f64 n = 128, globaltimer, H100, 2026-11-27, before the streaming: the sweep ~5.6 µs, then the
// next warp's solve ~2.8 µs and rank-32 update ~2.8 µs; warp 3's own updates from global memory,
// ~5.4 µs per rank 64, also delay its panel 2.)

// a[k] −= Σ_{m ∈ [M0, M1)} L[RA + ρ][m]·L[RB + k][m] for lane ρ of the calling warp, on the FP64
// tensor cores; the rows of D are read from global memory (final in those columns), rows ≥ n as
// zero. All 32 lanes call it.
template <int RA, int RB, int M0, int M1, bool RS>
__device__ __forceinline__ void lookahead_rows_update(real (&a)[BLOCK_W], const real* D, int n, double* rs_buf) {
    if constexpr (M1 > M0) {
        const int lane = threadIdx.x & 31, r = lane >> 2, c = lane & 3;
        double acc[4][4][2] = {};
#pragma unroll 2
        for (int m0 = M0; m0 < M1; m0 += 4) {
            const int m = m0 + c;
            double av[4], bv[4];
#pragma unroll
            for (int I = 0; I < 4; ++I) av[I] = RA + 8 * I + r < n && m < n ? D[RA + 8 * I + r + (long long)m * LD] : 0.0;
#pragma unroll
            for (int J = 0; J < 4; ++J)
                bv[J] = RA == RB ? av[J] : (RB + 8 * J + r < n && m < n ? D[RB + 8 * J + r + (long long)m * LD] : 0.0);
            dmma_tiles_step(acc, av, bv);
        }
        dmma_rows_subtract<false, RS>(a, acc, rs_buf);
    }
}

// acc += A·Aᵀ on the FP64 tensor cores, A the calling warp's rows (lane ρ: row ρ) in columns
// [m0, m0 + 4) of a[] (compile-time m0 where the caller's loop unrolls), the fragments taken from
// the other lanes by shuffles; acc as in lookahead_rows_update, the same sums in the same order
// as its step m0 with A and B both these rows, but only the tiles J ≤ I (for
// dmma_rows_subtract<true>: 40 accumulator registers, not 64). All 32 lanes call it.
__device__ __forceinline__ void dmma_rows_rank4(double (&acc)[4][4][2], const real (&a)[BLOCK_W], int m0) {
    const int lane = threadIdx.x & 31, r = lane >> 2, c = lane & 3;
    double av[4];  // av[I] = A[8I + r][m0 + c]
#pragma unroll
    for (int I = 0; I < 4; ++I) {
        double v = 0;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const double x = __shfl_sync(0xffffffffu, a[m0 + q], 8 * I + r);
            v = c == q ? x : v;
        }
        av[I] = v;
    }
    dmma_tiles_step<true>(acc, av, av);
}

// Warp W's columns of panel P < W: updated by the columns < 32P once panel P's pivot rows are
// final there (ready[0][P]), solved against T_P sub-panel by sub-panel as warp P's sweep
// publishes it (sub[P][s], the last with ready[1][P]: the chain to warp W's own sweep no longer
// waits for the whole of T_P), and stored to D sub-panel by sub-panel (panel_solve_rolled);
// `solved()` runs after each sub-panel is solved, its columns in a[0 .. 4) (lookahead_d_warp: its
// own block's update by panel W − 1, from the solved rows in registers). −1, or the failing
// column if panel P's sweep failed (found at the last sub-panel: the sub-panels before it are
// stored, those after a failing column solved against stale T: the failed item's factor is
// not used).
template <int W, int P, bool RS, typename Solved>
__device__ __forceinline__ int lookahead_solve_panel(real (&a)[BLOCK_W], real* D, int n, int i, bool has_row,
                                                     BlockedPanelShared<true>& sh, double* rs_buf, Solved solved) {
    constexpr int C0 = P * BLOCK_W, SW = SWEEP_SUB<true>, NS = BLOCK_W / SW;
    static_assert(P + 1 < BLOCK_PANELS && SWEEP_SUB_PANELS<true>, "a whole panel, swept by sub-panels");
    panel_load<BLOCK_W, C0>(a, D, 0, i, has_row, n);
    if constexpr (C0 > 0) mbar_wait_cta(&sh.ready[0][P], 0);
    lookahead_rows_update<W * BLOCK_W, C0, 0, C0, RS>(a, D, n, rs_buf);
    const bool done = panel_solve_rolled<BLOCK_W, C0, SW>(a, sh.T(P), sh.rdiag(P), D, nullptr, 0, i, n, has_row,
                                                          [&](int s) {
                                                              if (s + 1 < NS) {
                                                                  mbar_wait_cta(&sh.sub[P][s], 0);
                                                                  return true;
                                                              }
                                                              mbar_wait_cta(&sh.ready[1][P], 0);
                                                              return sh.panel_failed[P] < 0;
                                                          },
                                                          solved);
    if (!done) return C0 + sh.panel_failed[P];
    __syncwarp();  // (the lanes read each other's rows in the updates after this, and lane 0 signals)
    return -1;
}

// Warp W's panels P = 0 .. W − 2 (the panels it only solves, none pending): −1, or the failing
// column of the first panel whose sweep failed.
template <int W, int P, bool RS>
__device__ __forceinline__ int lookahead_solve_panels(real* D, int n, int i, bool has_row, BlockedPanelShared<true>& sh,
                                                      double* rs_buf) {
    if constexpr (P + 1 >= W) {
        return -1;
    } else {
        real a[BLOCK_W];
        const int f = lookahead_solve_panel<W, P, RS>(a, D, n, i, has_row, sh, rs_buf, [] {});
        if (f >= 0) return f;
        return lookahead_solve_panels<W, P + 1, RS>(D, n, i, has_row, sh, rs_buf);
    }
}

// Warp W of the D CTA: its panels before its own, then its own panel's sweep (published as T_W,
// its pivots' reciprocals and panel_failed[W], then signalled). −1 or the failing column.
// RS: the accumulators' redistribution through the warp's 32 × 32 of the (unused) S region
// (dmma_rows_subtract; warp 0 has none).
template <int W, bool RS>
__device__ __forceinline__ int lookahead_d_warp(real* D, int ncpl, int n, BlockedPanelShared<true>& sh, real thr,
                                                real boost) {
    constexpr int C0 = W * BLOCK_W;
    const int i = threadIdx.x, lane = i & 31;
    const bool has_row = i < LD;
    double* rs_buf = RS && W > 0 ? reinterpret_cast<double*>(sh.S()) + (W - 1) * BLOCK_W * BLOCK_W : nullptr;
    const int f = lookahead_solve_panels<W, 0, RS>(D, n, i, has_row, sh, rs_buf);
    if (f >= 0) return f;
    real own[BLOCK_W];
    if constexpr (W > 0) {
        // Its own panel by the columns < CL (its own rows, final) before panel PL's T is ready,
        // kept in D meanwhile (its rows' columns ≥ C0: nobody else reads them; held in registers
        // beside panel PL's row and the tensor-core accumulators, f64, they spilled).
        constexpr int PL = W - 1, CL = PL * BLOCK_W;  // the last panel before W's own
        if constexpr (CL > 0) {
            panel_load<BLOCK_W, C0>(own, D, 0, i, has_row, n);
            lookahead_rows_update<C0, C0, 0, CL, RS>(own, D, n, rs_buf);
            if (has_row) panel_store<BLOCK_W, C0>(own, D, nullptr, 0, i, n);  // (read back by its own thread)
        }
        real a[BLOCK_W];
        double acc[4][4][2] = {};  // its own panel's rank-32 update by panel PL, as PL is solved
        // (its own panel asked into L1 while it waits for T_PL, lane l column C0 + l's two lines;
        // loaded after the solve, whose registers it would share; one prefetch per element kept
        // 32 addresses live across the solve, which spilled at f64 ld 96)
        if (C0 + lane < LD) {
            prefetch_l1(D + C0 + (C0 + lane) * LD);
            if constexpr (C0 + 16 < LD) prefetch_l1(D + C0 + 16 + (C0 + lane) * LD);  // (inside D's LD × LD)
        }
        const int fl =
            lookahead_solve_panel<W, PL, RS>(a, D, n, i, has_row, sh, rs_buf, [&] { dmma_rows_rank4(acc, a, 0); });
        if (fl >= 0) return fl;
        // Its rows are final in the columns < C0: every lane releases its own stores (the D CTA's
        // mbarriers count 32 arrivals), lane 0 the warp's to the coupling CTAs.
        mbar_arrive(&sh.ready[0][W]);
        if (lane == 0) signal_couplings(&sh.ready[0][W], ncpl);
        panel_load<BLOCK_W, C0>(own, D, 0, i, has_row, n);
        dmma_rows_subtract<true, RS>(own, acc, rs_buf);
    }
    if constexpr (W == 0) panel_load<BLOCK_W, C0>(own, D, 0, i, has_row, n);
    int nb = 0;
    const int fs =
        panel_sweep_warp<C0, true>(own, sh, sh.T(W), sh.rdiag(W), D, nullptr, 0, i, has_row, n, thr, boost, nb);
    if (lane == 0) {
        sh.panel_failed[W] = fs;
        if (nb > 0) atomicAdd(&sh.boosted, nb);
    }
    __syncwarp();  // (T, rdiag, panel_failed and the column's stores before lane 0's signals)
    mbar_arrive(&sh.ready[1][W]);
    if (lane == 0) signal_couplings(&sh.ready[1][W], ncpl);
    return fs >= 0 ? C0 + fs : -1;
}

// Warp w of the D CTA runs lookahead_d_warp<w> (W: the first candidate).
template <int W, bool RS>
__device__ __forceinline__ void lookahead_d_dispatch(int w, real* D, int ncpl, int n, BlockedPanelShared<true>& sh,
                                                     real thr, real boost) {
    if constexpr (W < BLOCK_PANELS) {
        if (w == W) lookahead_d_warp<W, RS>(D, ncpl, n, sh, thr, boost);
        else lookahead_d_dispatch<W + 1, RS>(w, D, ncpl, n, sh, thr, boost);
    }
}

// The D CTA (CLUSTER_ROW_THREADS = 32 · BLOCK_PANELS threads): every warp its part; the result,
// the first failing column, is read from panel_failed after a CTA barrier (the same for all).
template <bool ON, bool RS>  // (ON: potrf_trsm_blocked_cluster's, so that it is instantiated only there)
__device__ __forceinline__ int lookahead_d_cta(real* D, int ncpl, int n, BlockedPanelShared<true>& sh, real thr,
                                               real boost) {
    static_assert(!ON || BLOCK_W == 32, "the look-ahead D CTA: warp w holds panel w's pivot rows");
    lookahead_d_dispatch<0, RS>(threadIdx.x / 32, D, ncpl, n, sh, thr, boost);
    __syncthreads();
#pragma unroll
    for (int p = 0; p < BLOCK_PANELS; ++p)
        if (sh.panel_failed[p] >= 0) return p * BLOCK_W + sh.panel_failed[p];
    return -1;
}
#endif

// The cluster variant (sm_90, f64: the diagonal warp's sweep; ON false: not compiled, returns
// −1): CTA `blk` of the elimination's cluster of three, CLUSTER_ROW_THREADS threads. Every CTA of
// the cluster calls it and gets the same result; the couplings are written to global memory
// only (split levels). Thread 0 of the D CTA gets the boosted pivots' count. RS: the D CTA's
// accumulators redistributed through S's shared memory (lookahead_d_warp), where it has any (not
// btchol_factor_potrf_split's D CTA alone, which launches without S).
template <bool ON, bool RS>
__device__ __forceinline__ int potrf_trsm_blocked_cluster(real* D, real* X0, real* X1, int ncpl, int n, int blk,
                                                          real thr, real boost, int& nboost) {
#if __CUDA_ARCH__ >= 900
    if constexpr (ON) {
        __shared__ __align__(16) BlockedPanelShared<true> sh;
        const int i = threadIdx.x;
        const bool has_row = blk <= ncpl && i < LD;
        real* out = blk == 0 ? D : blk == 1 ? X0 : X1;
        if (threadIdx.x == 0) {
            sh.boosted = 0;
            for (int p = 0; p < BLOCK_PANELS; ++p) {
                // (the D CTA's: its 32 lanes of the panel's warp; a coupling CTA's: the D CTA's thread 0)
                const unsigned arrivals = blk == 0 ? 32 : 1;
                mbar_init(&sh.ready[0][p], arrivals), mbar_init(&sh.ready[1][p], arrivals);
                for (int s = 0; s < SUB_SIGNALS; ++s) mbar_init(&sh.sub[p][s], 32);  // (D CTA)
                sh.panel_failed[p] = -1;  // (panels after a failing one are never swept)
            }
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
        for (int e = threadIdx.x; e < 4 * BLOCK_W; e += CLUSTER_ROW_THREADS)
            sh.col[e / (2 * BLOCK_W)][e % (2 * BLOCK_W)] = real(0);
        cluster_barrier_relaxed();  // (every mbarrier initialised before the D CTA signals one)
        __syncthreads();            // (the relaxed barrier orders no memory: col's zeros)
        // A coupling CTA beyond the elimination's couplings has nothing to do (nothing signals it).
        const int f = blk == 0      ? lookahead_d_cta<ON, RS>(D, ncpl, n, sh, thr, boost)
                      : blk <= ncpl ? potrf_trsm_blocked_panels<0, true>(D, X0, X1, ncpl, out, nullptr, blk, i,
                                                                         has_row, n, sh, thr, boost)
                                    : -1;
        if (threadIdx.x == 0) nboost = sh.boosted;
        // The D CTA's shared memory stays until the couplings have read their last T from it.
        cluster_barrier_relaxed();
        return f;
    }
#endif
    return -1;
}

// The split elimination's coupling CTA (kernels/factor.cu btchol_factor_trsm_split): X ← X·L⁻ᵀ
// for coupling `blk` (1 or 2; thread i: row i, CLUSTER_ROW_THREADS threads) of an elimination
// whose D is factored already, as the cluster variant's coupling CTAs do it, but with every
// panel's diagonal block T and pivot reciprocals staged from the finished factor in global memory
// at the start instead of waiting on the D CTA for them. All threads call it.
template <bool ON>  // (as potrf_trsm_blocked_cluster's)
__device__ __forceinline__ void trsm_blocked_split(const real* D, real* X0, real* X1, int ncpl, int n, int blk) {
#if __CUDA_ARCH__ >= 900
    if constexpr (ON) {
        __shared__ __align__(16) BlockedPanelShared<true> sh;
        constexpr int BW2 = BLOCK_W * BLOCK_W;
        for (int e = threadIdx.x; e < BLOCK_PANELS * BW2; e += CLUSTER_ROW_THREADS) {
            const int p = e / BW2, j = e / BLOCK_W % BLOCK_W, k = e % BLOCK_W, r = p * BLOCK_W + k, c = p * BLOCK_W + j;
            sh.T(p)[j * BLOCK_W + k] = k >= j && r < n ? D[r + c * LD] : real(0);  // (T[j][k] = L[C0 + k][C0 + j])
        }
        for (int e = threadIdx.x; e < BLOCK_PANELS * BLOCK_W; e += CLUSTER_ROW_THREADS)
            sh.rdiag(e / BLOCK_W)[e % BLOCK_W] = e < n ? real(1) / D[e + e * LD] : real(1);
        if (threadIdx.x == 0) sh.failed = -1;
        __syncthreads();
        const int i = threadIdx.x;
        potrf_trsm_blocked_panels<0, true, true>(D, X0, X1, ncpl, blk == 1 ? X0 : X1, nullptr, blk, i, i < LD, n, sh,
                                                 real(0), real(0));
    }
#endif
}
#endif

// Row `row` of X ← X·L⁻ᵀ (one thread per row; rows are independent).
__device__ __forceinline__ void trsm_right_lower_trans_row(real* X, const real* L, int n, int row) {
    for (int j = 0; j < n; ++j) {
        real x = X[row + j * LD];
        for (int k = 0; k < j; ++k) x -= X[row + k * LD] * L[j + k * LD];
        X[row + j * LD] = x / L[j + j * LD];
    }
}

// X_c ← X_c·L⁻ᵀ for the ncpl ≤ 2 coupling blocks of an elimination, by the whole CTA with the rows
// in registers (right-looking): TRSM_TPR threads share a row, thread h of a row owning columns
// k ≡ h (mod TRSM_TPR). Column j is final once divided by L_jj; its owner publishes it through a
// double-buffered shared vector (one barrier per column) and every owner of a column k > j
// subtracts x_j·L_kj, independent FMAs where the row version walks a chain of n²/2 dependent
// ones (ncu, H100, n = 64: ~30 µs of a 120 µs elimination). Used where the row fits in
// TRSM_COLS ≤ 32 registers (LD = 40..64 with 256 threads); all threads call it.
#define TRSM_TPR (NT / (2 * LD) >= 1 ? NT / (2 * LD) : 1)
#define TRSM_COLS ((LD + TRSM_TPR - 1) / TRSM_TPR)
#define TRSM_IN_REGISTERS (LD > 32 && TRSM_COLS <= 32)
__device__ void trsm_right_lower_trans(real* X0, real* X1, int ncpl, const real* L, int n) {
    __shared__ real xcol[2][2 * LD];
    const int r = threadIdx.x / TRSM_TPR, h = threadIdx.x % TRSM_TPR, c = r / LD, i = r % LD;
    const bool active = threadIdx.x < 2 * LD * TRSM_TPR && c < ncpl && i < n;
    real* X = c == 0 ? X0 : X1;
    real x[TRSM_COLS];
#pragma unroll
    for (int s = 0; s < TRSM_COLS; ++s) {
        const int k = h + s * TRSM_TPR;
        x[s] = (active && k < n) ? X[i + k * LD] : real(0);
    }
    for (int j = 0; j < n; ++j) {
        real* xc = xcol[j & 1];
#pragma unroll
        for (int s = 0; s < TRSM_COLS; ++s)
            if (active && h + s * TRSM_TPR == j) xc[r] = x[s] = x[s] / L[j + j * LD];
        __syncthreads();
        if (!active) continue;
        const real xj = xc[r];
#pragma unroll
        for (int s = 0; s < TRSM_COLS; ++s) {
            const int k = h + s * TRSM_TPR;
            if (k > j && k < n) x[s] -= xj * L[k + j * LD];
        }
    }
#pragma unroll
    for (int s = 0; s < TRSM_COLS; ++s) {
        const int k = h + s * TRSM_TPR;
        if (active && k < n) X[i + k * LD] = x[s];
    }
}

// C ← α·A·Bᵀ (ACCUM: C ← C + α·A·Bᵀ); LOWER: only the lower triangle of C. Each thread owns
// MT×MT outputs, so every element it loads feeds MT FMAs (one output per thread needed two loads
// per FMA and was bound by L1 bandwidth: ~150 µs for one n = 128 update on an H100).
#define MT 4
// A second product A2·B2ᵀ (A2 non-null) joins the same accumulators: one pass over C. The
// operands' column stride is OPLD (C's is LD).
template <bool LOWER, bool ACCUM, int OPLD = LD>
__device__ void gemm_nt_tiled(real* C, const real* A, const real* B, const real* A2, const real* B2, int n,
                              real alpha) {
    // With LD a multiple of MT every tile row is inside the block (padding rows are read, never
    // written); otherwise rows ≥ n are not read.
    constexpr bool whole_tiles = LD % MT == 0;
    const int nt = (n + MT - 1) / MT;
    for (int t = threadIdx.x; t < nt * nt; t += NT) {
        const int i0 = (t % nt) * MT, j0 = (t / nt) * MT;
        if (LOWER && j0 > i0 + MT - 1) continue; // tile strictly above the diagonal
        real acc[MT][MT] = {};
        for (int pass = 0; pass < 2; ++pass) {
            const real* PA = pass == 0 ? A : A2;
            const real* PB = pass == 0 ? B : B2;
            if (!PA) break;
            for (int k = 0; k < n; ++k) {
                real a[MT], b[MT];
#pragma unroll
                for (int u = 0; u < MT; ++u) {
                    a[u] = (whole_tiles || i0 + u < n) ? PA[i0 + u + k * OPLD] : real(0);
                    b[u] = (whole_tiles || j0 + u < n) ? PB[j0 + u + k * OPLD] : real(0);
                }
#pragma unroll
                for (int u = 0; u < MT; ++u)
#pragma unroll
                    for (int v = 0; v < MT; ++v) acc[u][v] += a[u] * b[v];
            }
        }
#pragma unroll
        for (int u = 0; u < MT; ++u)
#pragma unroll
            for (int v = 0; v < MT; ++v) {
                const int i = i0 + u, j = j0 + v;
                if (i < n && j < n && (!LOWER || i >= j))
                    C[i + j * LD] = ACCUM ? C[i + j * LD] + alpha * acc[u][v] : alpha * acc[u][v];
            }
    }
}

// Split level gemm (BT_SPLIT): one CTA of GEMM_TILE_THREADS per GEMM_TILE × GEMM_TILE tile of C,
// C ← α·A·Bᵀ (ACCUM: C ← C + α·(A·Bᵀ + A2·B2ᵀ), A2 may be null); LOWER: C's elements below the
// diagonal only. One CTA per whole product left most SMs idle at the deep levels (f64 n = 128,
// N = 64 on the H100: 88 µs per update and ~50 µs per fill, one CTA each). The operands come
// from global memory GEMM_TILE_KC columns at a time, the next chunk's loads in flight while the
// current one is multiplied; GEMM_KSPLIT groups of 64 threads each take a quarter of a chunk's
// columns (with one group of 2 warps per tile, the ~20 µs per tile was load latency), MT × MT
// outputs per thread, and sum their partial tiles through shared memory at the end.
#define GEMM_TILE 32
#define GEMM_KSPLIT 4
#define GEMM_GROUP ((GEMM_TILE / MT) * (GEMM_TILE / MT))
#define GEMM_TILE_THREADS (GEMM_KSPLIT * GEMM_GROUP)                       // jit.rs GEMM_TILE_THREADS
#define GEMM_TILE_KC 64
// 16-byte pieces where LD allows (always when BT_SPLIT: 64 < LD is a multiple of 64 bytes).
#define GEMM_V (LD % (16 / sizeof(real)) == 0 ? 16 / sizeof(real) : 1)
#define GEMM_PIECES (2 * GEMM_TILE_KC * GEMM_TILE / GEMM_V / GEMM_TILE_THREADS)  // per thread and chunk
// f64 on sm_80+: the tile's products on the FP64 tensor cores (GemmDmma below).
constexpr bool GEMM_DMMA = DMMA_ARCH && sizeof(real) == 8 && GEMM_GROUP == 64;
// Row stride of a staged column (elements). GemmDmma: 8 past the tile, so that its fragment loads
// (four columns k, eight rows each) fall in distinct shared-memory banks (with 32, every one was
// a 4-way conflict: f64 n = 128, N = 4096 7859 → 7310 µs, H100).
#define GEMM_STAGE_LD (GEMM_TILE + (GEMM_DMMA ? 8 : 0))

// A chunk: rows [i0, i0 + GEMM_TILE) of A and [j0, …) of B (B skipped when `same`), columns
// [k0, k0 + GEMM_TILE_KC), as pieces into registers (rows or columns past LD as zero; columns
// past n are loaded but not used), then into s[operand][k][row] (row stride GEMM_STAGE_LD).
template <int V>
__device__ __forceinline__ void gemm_chunk_load(typename vec_of<V>::type (&buf)[GEMM_PIECES], const real* A,
                                                const real* B, bool same, int i0, int j0, int k0) {
    constexpr int per_col = GEMM_TILE / V, per_operand = GEMM_TILE_KC * per_col;
#pragma unroll
    for (int p = 0; p < GEMM_PIECES; ++p) {
        const int e = threadIdx.x + p * GEMM_TILE_THREADS, op = e / per_operand;
        const int k = e % per_operand / per_col, r = e % per_col * V, r0 = op == 0 ? i0 : j0;
        const real* P = op == 0 ? A : B;
        if (r0 + r < LD && k0 + k < LD && !(op == 1 && same))
            buf[p] = *reinterpret_cast<const typename vec_of<V>::type*>(P + r0 + r + (long long)(k0 + k) * LD);
        else
            buf[p] = typename vec_of<V>::type{};
    }
}
template <int V>
__device__ __forceinline__ void gemm_chunk_store(const typename vec_of<V>::type (&buf)[GEMM_PIECES], real* s) {
    constexpr int per_col = GEMM_TILE / V, per_operand = GEMM_TILE_KC * per_col;
#pragma unroll
    for (int p = 0; p < GEMM_PIECES; ++p) {
        const int e = threadIdx.x + p * GEMM_TILE_THREADS, op = e / per_operand;
        const int k = op * GEMM_TILE_KC + e % per_operand / per_col, r = e % per_col * V;
        *reinterpret_cast<typename vec_of<V>::type*>(s + k * GEMM_STAGE_LD + r) = buf[p];
    }
}

// The tile's products, two ways; both sum their k-groups' partial tiles through `stage` at the
// end and write C (`finish`). k counts the staged chunk's columns, [k_begin, k_end) this group's.
// SIMT: thread lt of a group owns the MT × MT outputs at (ti, tj).
struct GemmSimt {
    int g, lt, ti, tj;
    bool idle;  // outputs all above the diagonal
    real acc[MT][MT];
    __device__ __forceinline__ GemmSimt(bool lower_diag) {
        g = threadIdx.x / GEMM_GROUP, lt = threadIdx.x % GEMM_GROUP;
        ti = lt % (GEMM_TILE / MT) * MT, tj = lt / (GEMM_TILE / MT) * MT;
        idle = lower_diag && tj > ti + MT - 1;
#pragma unroll
        for (int u = 0; u < MT; ++u)
#pragma unroll
            for (int v = 0; v < MT; ++v) acc[u][v] = 0;
    }
    __device__ __forceinline__ void chunk(const real* sA, const real* sB, int k_begin, int k_end) {
        if (idle) return;
#pragma unroll 2
        for (int k = k_begin; k < k_end; ++k) {
            real a[MT], b[MT];
#pragma unroll
            for (int u = 0; u < MT; ++u) {
                a[u] = sA[k * GEMM_STAGE_LD + ti + u];
                b[u] = sB[k * GEMM_STAGE_LD + tj + u];
            }
#pragma unroll
            for (int u = 0; u < MT; ++u)
#pragma unroll
                for (int v = 0; v < MT; ++v) acc[u][v] += a[u] * b[v];
        }
    }
    template <bool LOWER, bool ACCUM>
    __device__ __forceinline__ void finish(real* stage, real* C, int n, int i0, int j0, real alpha) {
        // Groups 1.. leave their partial tiles in `stage` (3 · 16 · 64 ≤ 2 · 64 · 32 elements).
        __syncthreads();
        if (g > 0 && !idle) {
#pragma unroll
            for (int u = 0; u < MT; ++u)
#pragma unroll
                for (int v = 0; v < MT; ++v) stage[((g - 1) * MT * MT + u * MT + v) * GEMM_GROUP + lt] = acc[u][v];
        }
        __syncthreads();
        if (g > 0 || idle) return;
#pragma unroll
        for (int u = 0; u < MT; ++u)
#pragma unroll
            for (int v = 0; v < MT; ++v) {
                real sum = acc[u][v];
#pragma unroll
                for (int h = 1; h < GEMM_KSPLIT; ++h) sum += stage[((h - 1) * MT * MT + u * MT + v) * GEMM_GROUP + lt];
                const int i = i0 + ti + u, j = j0 + tj + v;
                if (i < n && j < n && (!LOWER || i >= j))
                    C[i + j * LD] = ACCUM ? C[i + j * LD] + alpha * sum : alpha * sum;
            }
    }
};

// f64 on sm_80+, the FP64 tensor cores: warp h of a group (2 warps) owns the 8 × 8 tiles of rows
// 8·(2h + ii), ii = 0, 1, and every column; dmma_16x8x4 over the group's columns in steps of 4
// (columns at or past k_end as zero: a chunk's columns past n may hold anything). SIMT, the
// 4 × 4 outputs per thread were FMA-bound: 7.5 TFLOP/s at f64 n = 128, N = 4096's first level.
struct GemmDmma {
    int g, h, lane;
    bool lower_diag;
    double acc[2][4][2];
    __device__ __forceinline__ GemmDmma(bool lower_diag_) {
        g = threadIdx.x / GEMM_GROUP, h = threadIdx.x / 32 % 2, lane = threadIdx.x % 32, lower_diag = lower_diag_;
#pragma unroll
        for (int ii = 0; ii < 2; ++ii)
#pragma unroll
            for (int J = 0; J < 4; ++J) acc[ii][J][0] = acc[ii][J][1] = 0;
    }
    // Tile (2h + ii, J) is all above the diagonal of a diagonal tile of a syrk.
    __device__ __forceinline__ bool skip(int ii, int J) const { return lower_diag && J > 2 * h + ii; }
    __device__ __forceinline__ void chunk(const real* sA, const real* sB, int k_begin, int k_end) {
        if (k_begin >= k_end) return;  // (warp-uniform: a group past n)
        const int r = lane >> 2, c = lane & 3;
#pragma unroll
        for (int k0 = k_begin; k0 < k_begin + GEMM_TILE_KC / GEMM_KSPLIT; k0 += 4) {
            const int k = k0 + c;
            const bool in = k < k_end;
            double a[2], b[4];
#pragma unroll
            for (int ii = 0; ii < 2; ++ii) a[ii] = in ? sA[k * GEMM_STAGE_LD + 8 * (2 * h + ii) + r] : 0.0;
#pragma unroll
            for (int J = 0; J < 4; ++J) b[J] = in ? sB[k * GEMM_STAGE_LD + 8 * J + r] : 0.0;
#pragma unroll
            for (int J = 0; J < 4; ++J) dmma_16x8x4(acc[0][J], acc[1][J], a[0], a[1], b[J], skip(0, J), skip(1, J));
        }
    }
    template <bool LOWER, bool ACCUM>
    __device__ __forceinline__ void finish(real* stage, real* C, int n, int i0, int j0, real alpha) {
        const int t = threadIdx.x % GEMM_GROUP;
        __syncthreads();
        if (g > 0) {
#pragma unroll
            for (int ii = 0; ii < 2; ++ii)
#pragma unroll
                for (int J = 0; J < 4; ++J)
#pragma unroll
                    for (int e = 0; e < 2; ++e) stage[((g - 1) * 16 + ii * 8 + J * 2 + e) * GEMM_GROUP + t] = acc[ii][J][e];
        }
        __syncthreads();
        if (g > 0) return;
#pragma unroll
        for (int ii = 0; ii < 2; ++ii)
#pragma unroll
            for (int J = 0; J < 4; ++J)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    real sum = acc[ii][J][e];
#pragma unroll
                    for (int q = 1; q < GEMM_KSPLIT; ++q) sum += stage[((q - 1) * 16 + ii * 8 + J * 2 + e) * GEMM_GROUP + t];
                    // C fragment: row lane/4, columns 2·(lane%4) + e of the tile.
                    const int i = i0 + 8 * (2 * h + ii) + (lane >> 2), j = j0 + 8 * J + 2 * (lane & 3) + e;
                    if (i < n && j < n && (!LOWER || i >= j))
                        C[i + j * LD] = ACCUM ? C[i + j * LD] + alpha * sum : alpha * sum;
                }
    }
};

// f64 on sm_80+, 64 × 64 tiles of C (BT_GEMM_WIDE, jit.rs KernelSpec::wide_gemm): warp w of
// the 8 owns the 16 × 32 block at rows 16·(w % 4), columns 32·(w / 4), as 2 × 4 tiles of 8 × 8
// (dmma_16x8x4 over the whole chunk: no k split, no partial sums to add), so each staged byte
// feeds twice the products of a 32 × 32 tile. The chunks of GEMM64_KC columns come in with
// cp.async, GEMM64_STAGES deep in dynamic shared memory (jit.rs wide_gemm_smem_bytes): the register
// staging of the 32 × 32 tiles, at 64 rows, spilled. Row stride of a staged column 64 + 4, so
// that a fragment's loads (four columns of eight rows) are conflict-free. Its warp block is
// gemm_nt_staged_dmma's (below), written out twice on purpose: one shared helper
// (bench/results/experiments/2026-12-02-dmma-warp-block.patch) changed both kernels' code and
// made f64 n = 64 and 128 1–3 % slower (H200 A/B, bench/results/ab/README.md).
#define GEMM64_KC 32
#define GEMM64_SL (64 + 4)
#define GEMM64_STAGES 2
struct GemmDmma64 {
    int I0, J0, lane;  // the warp's first 8 × 8 tile row and column
    bool lower_diag, idle;
    double acc[2][4][2];
    __device__ __forceinline__ GemmDmma64(bool lower_diag_) {
        const int w = threadIdx.x / 32;
        I0 = 2 * (w % 4), J0 = 4 * (w / 4), lane = threadIdx.x % 32, lower_diag = lower_diag_;
        idle = lower_diag && J0 > I0 + 1;  // all above the diagonal of a syrk's diagonal tile
#pragma unroll
        for (int ii = 0; ii < 2; ++ii)
#pragma unroll
            for (int J = 0; J < 4; ++J) acc[ii][J][0] = acc[ii][J][1] = 0;
    }
    // Columns [0, k_valid) of the staged chunk (those past n as zero: they may hold anything).
    __device__ __forceinline__ void chunk(const real* sA, const real* sB, int k_valid) {
        if (idle) return;  // (warp-uniform)
        const int r = lane >> 2, c = lane & 3;
#pragma unroll 2
        for (int k0 = 0; k0 < GEMM64_KC; k0 += 4) {
            const int k = k0 + c;
            const bool in = k < k_valid;
            double a[2], b[4];
#pragma unroll
            for (int ii = 0; ii < 2; ++ii) a[ii] = in ? sA[k * GEMM64_SL + 8 * (I0 + ii) + r] : 0.0;
#pragma unroll
            for (int J = 0; J < 4; ++J) b[J] = in ? sB[k * GEMM64_SL + 8 * (J0 + J) + r] : 0.0;
#pragma unroll
            for (int J = 0; J < 4; ++J)
                dmma_16x8x4(acc[0][J], acc[1][J], a[0], a[1], b[J], lower_diag && J0 + J > I0,
                            lower_diag && J0 + J > I0 + 1);
        }
    }
    template <bool LOWER, bool ACCUM>
    __device__ __forceinline__ void finish(real* C, int n, int i0, int j0, real alpha) {
        if (idle) return;
#pragma unroll
        for (int ii = 0; ii < 2; ++ii)
#pragma unroll
            for (int J = 0; J < 4; ++J)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    // C fragment: row lane/4, columns 2·(lane%4) + e of the tile.
                    const int i = i0 + 8 * (I0 + ii) + (lane >> 2), j = j0 + 8 * (J0 + J) + 2 * (lane & 3) + e;
                    if (i < n && j < n && (!LOWER || i >= j))
                        C[i + j * LD] = ACCUM ? C[i + j * LD] + alpha * acc[ii][J][e] : alpha * acc[ii][J][e];
                }
    }
};
// Stage s of the 64 × 64 tile's chunks: s[operand][k][row].
#define GEMM64_STAGE_ELEMS (2 * GEMM64_KC * GEMM64_SL)
constexpr int GEMM64_SMEM_BYTES = GEMM64_STAGES * GEMM64_STAGE_ELEMS * (int)sizeof(real);  // jit.rs wide_gemm_smem_bytes

// Chunk q's columns [k0, k0 + GEMM64_KC) of rows [i0, i0 + 64) of A and [j0, …) of B (B not
// when `same`) into stage `s`, 16 bytes per cp.async; rows past LD as zero, columns past LD not
// copied (never used).
__device__ __forceinline__ void gemm64_chunk_async(real* s, const real* A, const real* B, bool same, int i0, int j0,
                                                   int k0) {
    constexpr int V = 16 / sizeof(real), per_col = 64 / V, per_operand = GEMM64_KC * per_col;
    for (int e = threadIdx.x; e < (same ? 1 : 2) * per_operand; e += GEMM_TILE_THREADS) {
        const int op = e / per_operand, k = e % per_operand / per_col, r = e % per_col * V;
        const int row = (op == 0 ? i0 : j0) + r;
        real* dst = s + (op * GEMM64_KC + k) * GEMM64_SL + r;
        if (k0 + k >= LD) continue;
        if (row < LD)
            copy_async_16(dst, (op == 0 ? A : B) + row + (long long)(k0 + k) * LD);
        else
            *reinterpret_cast<vec16*>(dst) = vec16{};
    }
}

// The 64 × 64 tile of C at (i0, j0), as gemm_tile_nt (below) does the 32 × 32 ones. `stage`:
// GEMM64_SMEM_BYTES of dynamic shared memory. All GEMM_TILE_THREADS threads call it.
template <bool LOWER, bool ACCUM>
__device__ void gemm_tile64_nt(real* C, const real* A, const real* B, const real* A2, const real* B2, int n, int i0,
                               int j0, real alpha, real* stage) {
    GemmDmma64 prod(LOWER && i0 == j0);
    const int per_pass = (n + GEMM64_KC - 1) / GEMM64_KC, chunks = (A2 ? 2 : 1) * per_pass;
    // Chunk q: its operands, whether it is a diagonal tile of a syrk (one operand), its columns.
    auto issue = [&](int q) {
        if (q < chunks) {
            const bool second = q >= per_pass;
            const real* PA = second ? A2 : A;
            const real* PB = second ? B2 : B;
            gemm64_chunk_async(stage + q % GEMM64_STAGES * GEMM64_STAGE_ELEMS, PA, PB, PA == PB && i0 == j0, i0, j0,
                               (q - (second ? per_pass : 0)) * GEMM64_KC);
        }
        commit_async();  // (an empty group past the end: the waits below count groups)
    };
#pragma unroll
    for (int q = 0; q < GEMM64_STAGES - 1; ++q) issue(q);
    for (int c = 0; c < chunks; ++c) {
        issue(c + GEMM64_STAGES - 1);
        wait_async<GEMM64_STAGES - 1>();  // chunk c is in
        __syncthreads();
        const bool second = c >= per_pass;
        const bool same = (second ? A2 == B2 : A == B) && i0 == j0;
        const real* sA = stage + c % GEMM64_STAGES * GEMM64_STAGE_ELEMS;
        prod.chunk(sA, same ? sA : sA + GEMM64_KC * GEMM64_SL, n - (c - (second ? per_pass : 0)) * GEMM64_KC);
        __syncthreads();  // stage c % STAGES is consumed before chunk c + STAGES overwrites it
    }
    prod.template finish<LOWER, ACCUM>(C, n, i0, j0, alpha);
}

// The wide levels' split gemm (kernels/factor.cu btchol_factor_gemm_wide) has 64 × 64 tiles in
// f64 on the FP64 tensor cores (BT_GEMM_WIDE = 1 from jit.rs KernelSpec::wide_gemm_tile, where
// LD > 64); elsewhere it is the 32 × 32 one, and not launched.
#ifndef BT_GEMM_WIDE
#define BT_GEMM_WIDE 0
#endif
static_assert(!BT_GEMM_WIDE || (DMMA_ARCH && sizeof(real) == 8 && LD % 8 == 0),
              "64 × 64 split gemm tiles: f64 blocks of 8-row multiples on the FP64 tensor cores");

// stage: shared, 2 · GEMM_TILE_KC · GEMM_STAGE_LD elements (declared by the caller, once for every
// instantiation). All GEMM_TILE_THREADS threads call it.
template <bool LOWER, bool ACCUM>
__device__ void gemm_tile_nt(real* C, const real* A, const real* B, const real* A2, const real* B2, int n, int i0,
                             int j0, real alpha, real* stage) {
    constexpr int V = GEMM_V, KG = GEMM_TILE_KC / GEMM_KSPLIT;
    typedef typename vec_of<V>::type piece;
    typedef typename type_if<GEMM_DMMA, GemmDmma, GemmSimt>::type Product;
    const int g = threadIdx.x / GEMM_GROUP;
    Product prod(LOWER && i0 == j0);
    const int chunks_per_pass = (n + GEMM_TILE_KC - 1) / GEMM_TILE_KC, chunks = (A2 ? 2 : 1) * chunks_per_pass;
    piece buf[GEMM_PIECES];
    gemm_chunk_load<V>(buf, A, B, A == B && i0 == j0, i0, j0, 0);
    for (int c = 0; c < chunks; ++c) {
        const bool second = c >= chunks_per_pass;
        const real* PA = second ? A2 : A;
        const bool same = PA == (second ? B2 : B) && i0 == j0;  // a diagonal tile of a syrk: one operand
        const int k0 = (c - (second ? chunks_per_pass : 0)) * GEMM_TILE_KC;
        __syncthreads();  // the previous chunk is consumed
        gemm_chunk_store<V>(buf, stage);
        __syncthreads();
        if (c + 1 < chunks) {  // the next chunk's loads, in flight during this one's products
            const bool s2 = c + 1 >= chunks_per_pass;
            const real* NA = s2 ? A2 : A;
            const real* NB = s2 ? B2 : B;
            gemm_chunk_load<V>(buf, NA, NB, NA == NB && i0 == j0, i0, j0,
                               (c + 1 - (s2 ? chunks_per_pass : 0)) * GEMM_TILE_KC);
        }
        const real* sB = same ? stage : stage + GEMM_TILE_KC * GEMM_STAGE_LD;
        prod.chunk(stage, sB, KG * g, min(KG * (g + 1), n - k0));
    }
    prod.template finish<LOWER, ACCUM>(stage, C, n, i0, j0, alpha);
}

// The split gemm's TILE × TILE tile of C at (i0, j0).
template <int TILE, bool LOWER, bool ACCUM>
__device__ __forceinline__ void gemm_out_tile(real* C, const real* A, const real* B, const real* A2, const real* B2,
                                              int n, int i0, int j0, real alpha, real* stage) {
    if constexpr (TILE == 64)
        gemm_tile64_nt<LOWER, ACCUM>(C, A, B, A2, B2, n, i0, j0, alpha, stage);
    else
        gemm_tile_nt<LOWER, ACCUM>(C, A, B, A2, B2, n, i0, j0, alpha, stage);
}

// f64 on sm_80+, both operands staged in shared memory with column stride SLD (the fused factor
// kernels): the products on the FP64 tensor cores, one warp per 16 × 32 block of C (2 × 4 tiles
// of 8 × 8, dmma_16x8x4 over k in steps of 4, columns ≥ n as zero: the padding may hold anything).
// SLD = LD + 4 puts a fragment's loads (four columns, eight rows) in distinct banks. SIMT
// (gemm_nt_tiled) the f64 n = 64 update ran at ~12 % of the FP64 rate (H200, N = 4096, the first
// level's updates 264 µs); outputs are as gemm_nt_tiled's.
constexpr bool STAGED_DMMA = DMMA_ARCH && sizeof(real) == 8 && LD % 8 == 0;
template <bool LOWER, bool ACCUM>
__device__ void gemm_nt_staged_dmma(real* C, const real* A, const real* B, const real* A2, const real* B2, int n,
                                    real alpha) {
    constexpr int T = LD / 8, P = (T + 1) / 2, Q = (T + 3) / 4;  // tiles per side; blocks of 2 × 4
    const int lane = threadIdx.x % 32, r = lane >> 2, c = lane & 3;
    for (int u = threadIdx.x / 32; u < P * Q; u += NT / 32) {
        const int I0 = 2 * (u % P), J0 = 4 * (u / P);
        if (LOWER && J0 > I0 + 1) continue;  // (warp-uniform) all above the diagonal
        double acc[2][4][2];
#pragma unroll
        for (int ii = 0; ii < 2; ++ii)
#pragma unroll
            for (int J = 0; J < 4; ++J) acc[ii][J][0] = acc[ii][J][1] = 0;
        for (int pass = 0; pass < 2; ++pass) {
            const real* PA = pass == 0 ? A : A2;
            const real* PB = pass == 0 ? B : B2;
            if (!PA) break;
#pragma unroll 2
            for (int k0 = 0; k0 < n; k0 += 4) {
                const int k = k0 + c;
                const bool in = k < n;
                double a[2], b[4];
#pragma unroll
                for (int ii = 0; ii < 2; ++ii) a[ii] = in && I0 + ii < T ? PA[8 * (I0 + ii) + r + k * SLD] : 0.0;
#pragma unroll
                for (int J = 0; J < 4; ++J) b[J] = in && J0 + J < T ? PB[8 * (J0 + J) + r + k * SLD] : 0.0;
#pragma unroll
                for (int J = 0; J < 4; ++J) {
                    const auto skip = [&](int ii) { return !(I0 + ii < T && J0 + J < T && !(LOWER && J0 + J > I0 + ii)); };
                    dmma_16x8x4(acc[0][J], acc[1][J], a[0], a[1], b[J], skip(0), skip(1));
                }
            }
        }
#pragma unroll
        for (int ii = 0; ii < 2; ++ii)
#pragma unroll
            for (int J = 0; J < 4; ++J)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    // C fragment: row lane/4, columns 2·(lane%4) + e of the tile.
                    const int i = 8 * (I0 + ii) + r, j = 8 * (J0 + J) + 2 * c + e;
                    if (i < n && j < n && (!LOWER || i >= j))
                        C[i + j * LD] = ACCUM ? C[i + j * LD] + alpha * acc[ii][J][e] : alpha * acc[ii][J][e];
                }
    }
}

// C ← −A·Bᵀ (fill-in of an elimination). STAGED: A and B in shared memory, column stride SLD.
template <bool STAGED>
__device__ __forceinline__ void gemm_nt_neg(real* C, const real* A, const real* B, int n) {
    if constexpr (STAGED && STAGED_DMMA)
        gemm_nt_staged_dmma<false, false>(C, A, B, nullptr, nullptr, n, real(-1));
    else
        gemm_nt_tiled<false, false, STAGED ? SLD : LD>(C, A, B, nullptr, nullptr, n, real(-1));
}

// Lower triangle of D ← D − A·Aᵀ − A2·A2ᵀ (A2 may be null), in one pass over D. STAGED: as above.
template <bool STAGED>
__device__ __forceinline__ void syrk_lower_sub(real* D, const real* A, const real* A2, int n) {
    if constexpr (STAGED && STAGED_DMMA)
        gemm_nt_staged_dmma<true, true>(D, A, A, A2, A2, n, real(-1));
    else
        gemm_nt_tiled<true, true, STAGED ? SLD : LD>(D, A, A, A2, A2, n, real(-1));
}
