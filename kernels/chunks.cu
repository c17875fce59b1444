// The chunk steps of partitioned nested dissection (crate::schedule::Schedule::partitioned), BT_LD ≤ 32:
// each chunk's blocks are swept in order (the factor by a warp pair, the solve's forward and
// backward sweeps by one warp), so the schedule's first `chunk` levels are one launch, and each
// block is read once and each factor block written once, instead of a grid-wide level per step
// that reads and writes every block it touches.
//
// Step j of a chunk eliminates block b (the sequential algorithm's step, plus the "spike": the
// coupling F_j to the chunk's left separator S, which the previous steps filled in):
//   D̂_b ← chol(D_b)            X_b ← Ψ_{b+1,b}·D̂_b⁻ᵀ   (potrf_panel_warp: X rides along)
//   Y_b ← F_j·D̂_b⁻ᵀ            (trsm_row, L from shared memory; off the pivot chain)
//   D_{b+1} ← D_{b+1} − X_b·X_bᵀ   F_{j+1} ← −Y_b·X_bᵀ   Σ_S ← Σ_S − Y_b·Y_bᵀ
// The last step's F is the fill between the separators S and S' (the block after the chunk),
// stored in the separators' slot in the schedule's orientation, and its D_{b+1} is S' (written
// by this chunk, which owns it). Σ_S goes to a scratch block: S's other writer is the chunk to
// its left, so btchol_chunk_separators adds it once both are done (same launch sequence).
//
// Storage as the level kernels (kernels/small.cu): factors to `fact` (lower part), solved
// couplings to `xslots` (rows: the survivor), updated separators to `diag`, fills to `slots`.
// Failure keys carry the step as their level, as the per-level launches of the same schedule would.
#if BT_LD <= 32
#define CHUNK_THREADS 32
// Chunk table, CH_REC int32 per chunk (src/cuda/chunks.rs, from the schedule's chunk levels):
#define CH_REC 6
#define CH_FIRST 0      // first block
#define CH_LEN 1        // blocks (= steps)
#define CH_LEFT 2       // left separator block, −1: none (the first chunk)
#define CH_LEFT_SLOTS 3 // offset of this chunk's per-step left-coupling slots in `left_slots`
#define CH_FILL 4       // slot of the separators' fill made by the last step, −1: none
#define CH_FILL_ROWS 5  // 1: that fill's rows are the left separator's (it is eliminated later)

// t[k] −= Σ_q U[lane][q]·V[k][q], U and V column-major in shared memory: every lane reads the
// same column of V (broadcasts) and its own row of U. The q loop is unrolled by 4 only: fully
// unrolled, the compiler hoisted every column's loads and spilled (NVRTC 13.0, f64 LD = 16).
__device__ __forceinline__ void rows_times_columns(real (&t)[LD], const real* U, const real* V, int lane) {
#pragma unroll 4
    for (int q = 0; q < LD; ++q) axpy_tail(t, lane < LD ? U[lane + q * LD] : real(0), V + q * LD, 0);
}
// Lane's row r[] of a block to column-major storage (all LD columns).
__device__ __forceinline__ void store_row(real* dst, const real (&r)[LD], int lane) {
#pragma unroll
    for (int k = 0; k < LD; ++k)
        if (lane < LD) dst[lane + k * LD] = r[k];
}
__device__ __forceinline__ void load_row(real (&r)[LD], const real* src, int lane) {
#pragma unroll
    for (int k = 0; k < LD; ++k) r[k] = lane < LD ? src[lane + k * LD] : real(0);
}

// Rows of Ψ_{b+1,b} (slot b), zero rows where b is the last block.
__device__ __forceinline__ void load_coupling_rows(real (&r)[LD], const real* slots, int b, int n_blocks, int lane) {
#pragma unroll
    for (int k = 0; k < LD; ++k) r[k] = (b + 1 < n_blocks && lane < LD) ? slots[b * BS + lane + k * LD] : real(0);
}

// A warp pair per chunk (one warp where the chunk has no left separator): the *chain* warp
// factors D_b with X_b riding along, publishes L_b and X_b, and updates D_{b+1}; the *spike*
// warp meanwhile solves Y_b against L_b, forms F_{j+1} from X_b and accumulates Σ_S, so the
// step's cost is the chain's. Two named barriers (the non-aligned barrier.sync, as
// kernels/sequential.cu's pair): READY (L_b, X_b published) and FREE (the spike warp is done
// reading them, so the chain warp may publish the next ones). A failed pivot still meets READY,
// with s_stop set, and both warps stop there.
// Dynamic shared memory: chunk_factor_smem_bytes (jit.rs): D_{b+1} and Ψ_{b+2,b+1} staged, L_b,
// X_b, Y_b, Σ_S.
#define CHUNK_FACTOR_THREADS 64
#define CHUNK_READY_BAR 1
#define CHUNK_FREE_BAR 2
__device__ __forceinline__ void chunk_bar_sync(int id) {
    asm volatile("barrier.sync %0, %1;" ::"r"(id), "n"(CHUNK_FACTOR_THREADS) : "memory");
}
extern "C" __global__ void __launch_bounds__(CHUNK_FACTOR_THREADS) btchol_factor_chunks_small(
    real* diag, real* slots, real* fact, real* xslots, real* sep_sums, const int* chunks, const int* left_slots,
    int n_chunks, int n_blocks, int n, long long item_diag, long long item_slots, long long item_sums,
    unsigned long long* fail, real piv_thr, real piv_boost, unsigned* boosted) {
    wait_for_previous_kernel();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* stD = reinterpret_cast<real*>(smem_raw);  // D_{b+1}
    real* stE = stD + BS;                            // Ψ_{b+2,b+1}
    real* sL = stE + BS;                             // L_b (column-major)
    real* sX = sL + BS;                              // X_b (column-major)
    real* sY = sX + BS;                              // Y_b (column-major)
    real* sS = sY + BS;                              // Σ_S
    __shared__ __align__(16) real s_col[2 * LD];
    __shared__ real s_invd[LD];
    __shared__ int s_stop;
    const int lane = threadIdx.x & 31, spike = threadIdx.x >> 5;
    const int chunk = blockIdx.x % n_chunks, item = blockIdx.x / n_chunks;
    if (skip_item(fail[item], 0)) return;  // masked out
    const int* ch = chunks + CH_REC * chunk;
    const int b0 = ch[CH_FIRST], len = ch[CH_LEN], left = ch[CH_LEFT];
    const bool pair = left >= 0;
    const int* lslot = left_slots + ch[CH_LEFT_SLOTS];
    real* D = diag + item * item_diag;
    real* S = slots + item * item_slots;
    real* XS = xslots + item * item_slots;
    if (threadIdx.x == 0) s_stop = 0;
    __syncthreads();
    if (spike && !pair) return;

    if (spike) {
        real f[LD], y[LD];
        load_row(f, S + lslot[0] * BS, lane);
#pragma unroll
        for (int k = 0; k < LD; ++k) y[k] = real(0);
        store_row(sS, y, lane);
        // Σ_S −= Y·Yᵀ for the Y in sY: done inside the next step's READY → FREE window, while the
        // chain warp updates and factors its next block, rather than between FREE and the next
        // READY, where the chain warp waited for it (18 % of its time, Nsight Compute, H200,
        // 2026-11-28). Same order of the updates, so the same bits.
        auto sigma_update = [&]() {
            real t[LD];
            load_row(t, sS, lane);
            rows_times_columns(t, sY, sY, lane);
            store_row(sS, t, lane);
        };
        for (int j = 0; j < len; ++j) {
            const int b = b0 + j;
            chunk_bar_sync(CHUNK_READY_BAR);
            if (s_stop) return;
            // 1/L_ii = 1/√p as the chain had it, up to rounding (no division: a call)
            if (lane < LD) s_invd[lane] = rsqrt_pivot<true>(sL[lane + lane * LD] * sL[lane + lane * LD]);
            __syncwarp();
#pragma unroll
            for (int k = 0; k < LD; ++k) y[k] = f[k];
            trsm_row(y, sL, s_invd);
            store_row(XS + lslot[j] * BS, y, lane);
            if (b + 1 < n_blocks) {
#pragma unroll
                for (int k = 0; k < LD; ++k) f[k] = real(0);
#pragma unroll
                for (int q = 0; q < LD; ++q) axpy_tail(f, y[q], sX + q * LD, 0);  // rows of −Y·Xᵀ
                if (j + 1 == len && ch[CH_FILL] >= 0) {
                    real* out = S + ch[CH_FILL] * BS;
#pragma unroll
                    for (int k = 0; k < LD; ++k)
                        if (lane < LD) out[ch[CH_FILL_ROWS] ? lane + k * LD : k + lane * LD] = f[k];
                }
            }
            if (j > 0) sigma_update();  // (Y_{b−1})
            if (j + 1 < len) chunk_bar_sync(CHUNK_FREE_BAR);  // (done with L_b and X_b)
            __syncwarp();  // (Y_{b−1} read by every lane before Y_b replaces it)
            store_row(sY, y, lane);
            __syncwarp();
        }
        sigma_update();  // (the last step's Y)
        __syncwarp();
        real* out = sep_sums + item * item_sums + (chunk - 1) * BS;  // (chunk ≥ 1: it has a left separator)
        for (int idx = lane; idx < BS; idx += 32) out[idx] = sS[idx];
        return;
    }

    real* F = fact + item * item_diag;
    real a[LD], x[1][LD];
    load_diag_rows(a, D + b0 * BS, n, lane);
    load_coupling_rows(x[0], S, b0, n_blocks, lane);
    if (b0 + 1 < n_blocks) stage_block<LD>(stD, D + (b0 + 1) * BS, lane);
    if (len > 1 && b0 + 2 < n_blocks) stage_block<LD>(stE, S + (b0 + 1) * BS, lane);
    commit_async();
    int nboost = 0;
    for (int j = 0; j < len; ++j) {
        const int b = b0 + j;
        const bool has_right = b + 1 < n_blocks, last = j + 1 == len;
        const int boosted_before = nboost;
        int f = potrf_panel_warp<1>(a, x, lane, piv_thr, piv_boost, nboost, s_col);
        if (f == PANEL_SUBNORMAL) {  // rare: the step again with the exact square root (small.cu rsqrt_pivot)
            nboost = boosted_before;
            load_diag_rows(a, D + b * BS, n, lane);  // (an interior block: unchanged in diag)
            if (j > 0) rows_times_columns(a, sX, sX, lane);  // (X_{b−1}, still published)
            load_coupling_rows(x[0], S, b, n_blocks, lane);
            f = potrf_panel_warp<1, true>(a, x, lane, piv_thr, piv_boost, nboost, s_col);
        }
        if (f >= 0) {
            if (lane == 0) atomicMin(&fail[item], fail_key(j, b, f));
            if (lane == 0) s_stop = 1;
        } else {
#pragma unroll
            for (int k = 0; k < LD; ++k)
                if (lane < n && k <= lane) F[b * BS + lane + k * LD] = a[k];
            if (has_right) store_row(XS + b * BS, x[0], lane);
        }
        if (pair && j > 0) chunk_bar_sync(CHUNK_FREE_BAR);
        if (f < 0) {
            if (pair) store_row(sL, a, lane);
            store_row(sX, x[0], lane);
        }
        if (pair) chunk_bar_sync(CHUNK_READY_BAR);
        else __syncwarp();
        if (f >= 0) break;
        if (has_right) {
            wait_async<0>();
            __syncwarp();
            load_diag_rows(a, stD, n, lane);
            rows_times_columns(a, sX, sX, lane);  // D_{b+1} − X_b·X_bᵀ
            if (last) {
#pragma unroll
                for (int k = 0; k < LD; ++k)
                    if (lane < n && k <= lane) D[(b + 1) * BS + lane + k * LD] = a[k];
            } else {
                if (b + 2 < n_blocks) load_row(x[0], stE, lane);
                else
#pragma unroll
                    for (int k = 0; k < LD; ++k) x[0][k] = real(0);
                __syncwarp();  // (the staged blocks read by every lane)
                if (b + 2 < n_blocks) stage_block<LD>(stD, D + (b + 2) * BS, lane);
                if (j + 2 < len && b + 3 < n_blocks) stage_block<LD>(stE, S + (b + 2) * BS, lane);
                commit_async();
            }
        }
    }
    wait_async<0>();
    if (lane == 0 && nboost > 0) atomicAdd(&boosted[item], (unsigned)nboost);
}

// D_S ← D_S + Σ_S for the left separator S of every chunk but the first (lower part), once the
// chunk kernel is done: its left neighbour wrote D_S − X·Xᵀ meanwhile. One CTA per (item, chunk).
extern "C" __global__ void __launch_bounds__(128) btchol_chunk_separators(
    real* diag, const real* sep_sums, const int* chunks, int n_chunks, int chunk_levels, int n,
    long long item_diag, long long item_sums, const unsigned long long* fail) {
    wait_for_previous_kernel();
    const int k = 1 + blockIdx.x % (n_chunks - 1), item = blockIdx.x / (n_chunks - 1);
    if (skip_item(fail[item], chunk_levels)) return;
    real* Ds = diag + item * item_diag + chunks[CH_REC * k + CH_LEFT] * BS;
    const real* sum = sep_sums + item * item_sums + (k - 1) * BS;
    for (int idx = threadIdx.x; idx < BS; idx += blockDim.x) {
        const int i = idx % LD, c = idx / LD;
        if (i >= c && i < n) Ds[idx] += sum[idx];
    }
}

// ---------------------------------------------------------------------------------------------
// The solve's chunk steps: one warp per chunk again, the step's blocks (L_b⁻¹ from
// btchol_invert_small, X_b, Y_b) staged into shared memory one step ahead (swizzled where
// SEQ_SWIZZLE_OK, else padded to SEQ_SLD: lane i reads row i or column i without bank conflicts
// either way; sequential.cu), every right-hand
// side of the pass against them. Storage as the level kernels: y (right-hand sides, in place for
// survivors), z (eliminated blocks' forward solution, then the solution).
// ---------------------------------------------------------------------------------------------
#define CHS_SWIZZLE SEQ_SWIZZLE_OK
#define CHS_LD (CHS_SWIZZLE ? LD : SEQ_SLD)  // (jit.rs KernelSpec::chunk_block_ld)
#define CHS_BLOCK (LD * CHS_LD)
// L_b⁻¹ staged by its lower triangle only where that measured faster (H100, 2026-11-26, A/B in
// bench/results/ab/README.md): f64 blocks of 32, whose sweeps are bandwidth-bound (f64 n = 32,
// N = 16384 solve 391 → 376 µs). f32 sweeps at N = 4096 were 3–8 % slower with it, f64 n = 16
// the same.
#define CHS_LOWER_LINV (sizeof(real) == 8 && LD == 32)

// Stages step j's blocks of a chunk: L_b⁻¹ (with CHS_LOWER_LINV its lower triangle, the buffers'
// upper part zeroed once by stage_buffers_init), X_b (where b has an upper neighbour), Y_b (where the chunk has a
// left separator), and `vec_rows` rows of m vectors at `vec` (stride `rows`), into buffer `buf`
// (3 blocks, then m·LD vector elements).
__device__ __forceinline__ void stage_chunk_step(real* buf, const real* linv_b, const real* x_b, const real* y_b,
                                                 const real* vec, int n, int m, int rows, int lane) {
    stage_block<CHS_LD, CHS_LOWER_LINV, CHS_SWIZZLE>(buf, linv_b, lane);
    if (x_b) stage_block<CHS_LD, false, CHS_SWIZZLE>(buf + CHS_BLOCK, x_b, lane);
    if (y_b) stage_block<CHS_LD, false, CHS_SWIZZLE>(buf + 2 * CHS_BLOCK, y_b, lane);
    if (vec && m == 1) {  // (the common case, without the divisions)
        if (lane < n) copy_async(buf + 3 * CHS_BLOCK + lane, vec + lane);
    } else if (vec) {
        for (int idx = lane; idx < n * m; idx += CHUNK_THREADS)
            copy_async(buf + 3 * CHS_BLOCK + (idx / n) * LD + idx % n, vec + (long long)(idx / n) * rows + idx % n);
    }
    commit_async();
}
// The two stage buffers' L⁻¹ blocks above the diagonal, which the lower-part staging never writes.
__device__ __forceinline__ void stage_buffers_init(real* stage, int step_elems, int lane) {
    if (!CHS_LOWER_LINV) return;
    zero_upper<CHS_LD, CHS_SWIZZLE>(stage, lane);
    zero_upper<CHS_LD, CHS_SWIZZLE>(stage + step_elems, lane);
}
// Σ_k B[i][k]·v[k] (lane i; B a staged block, v broadcast from shared memory, by
// load_col). Lanes beyond LD compute row 0's again (so that they read inside the block). Two
// chains, even and odd k.
__device__ __forceinline__ real row_dot(const real* B, const real* v, int lane) {
    lane = lane < LD ? lane : 0;
    real w[LD], s[2] = {real(0), real(0)};
    load_col(w, v, 0);
#pragma unroll
    for (int k = 0; k < LD; ++k) s[k & 1] += B[block_at<CHS_LD, CHS_SWIZZLE>(lane, k)] * w[k];
    return s[0] + s[1];
}
// Σ_k B[k][i]·v[k] (lane i: column i of B, i.e. Bᵀ·v).
__device__ __forceinline__ real col_dot(const real* B, const real* v, int lane) {
    real b[LD], w[LD], s[2] = {real(0), real(0)};
    load_col<CHS_LD, CHS_SWIZZLE>(b, B, lane < LD ? lane : 0);
    load_col(w, v, 0);
#pragma unroll
    for (int k = 0; k < LD; ++k) s[k & 1] += b[k] * w[k];
    return s[0] + s[1];
}

// Forward substitution over the chunk steps, per right-hand side c:
//   z_b ← L_b⁻¹·y_b,   y_{b+1} ← y_{b+1} − X_b·z_b,   Σ ← Σ − Y_b·z_b  (for the left separator)
// y_{b+1} stays in shared memory between steps and is written back only where b+1 is the right
// separator (this chunk owns its update); Σ goes to `sep_rhs`, added to the left separator's y by
// btchol_chunk_solve_separators. Dynamic shared memory: chunk_solve_smem_bytes (jit.rs).
extern "C" __global__ void __launch_bounds__(CHUNK_THREADS) btchol_forward_chunks_small(
    const real* linv, const real* xslots, real* y, real* z, real* sep_rhs, const int* chunks, const int* left_slots,
    int n_chunks, int n_blocks, int n, int m, int rows, long long item_diag, long long item_slots,
    long long item_rhs, const unsigned long long* fail) {
    wait_for_previous_kernel();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int lane = threadIdx.x, chunk = blockIdx.x % n_chunks, item = blockIdx.x / n_chunks;
    if (fail[item] != NO_FAILURE) return;
    const int step_elems = 3 * CHS_BLOCK + m * LD;
    real* stage = reinterpret_cast<real*>(smem_raw);  // [2][step_elems]
    real* sy = stage + 2 * step_elems;                // [m][LD] y of the step's block
    real* ss = sy + m * LD;                           // [m][LD] Σ
    real* sz = ss + m * LD;                           // [LD] z of the column at hand
    const int* ch = chunks + CH_REC * chunk;
    const int b0 = ch[CH_FIRST], len = ch[CH_LEN], left = ch[CH_LEFT];
    const int* lslot = left_slots + ch[CH_LEFT_SLOTS];
    const real* Li = linv + item * item_diag;
    const real* XS = xslots + item * item_slots;
    real* yb = y + item * item_rhs;
    auto stage_step = [&](int j, real* buf) {
        const int b = b0 + j;
        stage_chunk_step(buf, Li + b * BS, b + 1 < n_blocks ? XS + b * BS : nullptr,
                         left >= 0 ? XS + lslot[j] * BS : nullptr, b + 1 < n_blocks ? yb + (long long)(b + 1) * n : nullptr,
                         n, m, rows, lane);
    };
    for (int c = 0; c < m; ++c) {
        if (lane < LD) sy[c * LD + lane] = lane < n ? yb[(long long)b0 * n + (long long)c * rows + lane] : real(0);
        if (lane < LD) ss[c * LD + lane] = real(0);
    }
    stage_buffers_init(stage, step_elems, lane);
    stage_step(0, stage);
    for (int j = 0; j < len; ++j) {
        const int b = b0 + j;
        const bool has_right = b + 1 < n_blocks, last = j + 1 == len;
        real* cur = stage + (j & 1) * step_elems;
        wait_async<0>();
        __syncwarp();
        if (!last) stage_step(j + 1, stage + ((j + 1) & 1) * step_elems);
        for (int c = 0; c < m; ++c) {
            const real zi = row_dot(cur, sy + c * LD, lane);
            if (lane < LD) sz[lane] = zi;
            if (lane < n) z[item * item_rhs + (long long)b * n + (long long)c * rows + lane] = zi;
            __syncwarp();
            if (has_right && lane < LD) {
                const real yn = cur[3 * CHS_BLOCK + c * LD + lane] - row_dot(cur + CHS_BLOCK, sz, lane);
                sy[c * LD + lane] = lane < n ? yn : real(0);
                if (last && lane < n) yb[(long long)(b + 1) * n + (long long)c * rows + lane] = yn;
            }
            if (left >= 0 && lane < LD) ss[c * LD + lane] -= row_dot(cur + 2 * CHS_BLOCK, sz, lane);
            __syncwarp();
        }
    }
    if (left >= 0)
        for (int c = 0; c < m; ++c)
            if (lane < n) sep_rhs[((long long)item * (n_chunks - 1) + chunk - 1) * m * LD + c * LD + lane] = ss[c * LD + lane];
    wait_async<0>();
}

// y_S ← y_S + Σ for the left separator S of every chunk but the first, after the forward chunk
// kernel (whose left neighbour wrote y_S − X·z meanwhile). One warp per (item, chunk).
extern "C" __global__ void __launch_bounds__(CHUNK_THREADS) btchol_chunk_solve_separators(
    real* y, const real* sep_rhs, const int* chunks, int n_chunks, int n, int m, int rows, long long item_rhs,
    const unsigned long long* fail) {
    wait_for_previous_kernel();
    const int k = 1 + blockIdx.x % (n_chunks - 1), item = blockIdx.x / (n_chunks - 1), lane = threadIdx.x;
    if (fail[item] != NO_FAILURE || lane >= n) return;
    const int s = chunks[CH_REC * k + CH_LEFT];
    for (int c = 0; c < m; ++c)
        y[item * item_rhs + (long long)s * n + (long long)c * rows + lane] +=
            sep_rhs[((long long)item * (n_chunks - 1) + k - 1) * m * LD + c * LD + lane];
}

// Backward substitution over the chunk steps, last step first, once the separators' solution
// is final in z:
//   x_b ← L_b⁻ᵀ·(z_b − X_bᵀ·x_{b+1} − Y_bᵀ·x_S),  in place in z.
// x_{b+1} stays in shared memory between steps (the right separator's comes from z).
extern "C" __global__ void __launch_bounds__(CHUNK_THREADS) btchol_backward_chunks_small(
    const real* linv, const real* xslots, real* z, const int* chunks, const int* left_slots, int n_chunks,
    int n_blocks, int n, int m, int rows, long long item_diag, long long item_slots, long long item_rhs,
    const unsigned long long* fail) {
    wait_for_previous_kernel();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int lane = threadIdx.x, chunk = blockIdx.x % n_chunks, item = blockIdx.x / n_chunks;
    if (fail[item] != NO_FAILURE) return;
    const int step_elems = 3 * CHS_BLOCK + m * LD;
    real* stage = reinterpret_cast<real*>(smem_raw);  // [2][step_elems]
    real* sx = stage + 2 * step_elems;                // [m][LD] x_{b+1}
    real* sxs = sx + m * LD;                          // [m][LD] x_S
    real* sw = sxs + m * LD;                          // [LD] the column at hand
    const int* ch = chunks + CH_REC * chunk;
    const int b0 = ch[CH_FIRST], len = ch[CH_LEN], left = ch[CH_LEFT];
    const int* lslot = left_slots + ch[CH_LEFT_SLOTS];
    const real* Li = linv + item * item_diag;
    const real* XS = xslots + item * item_slots;
    real* zb = z + item * item_rhs;
    auto stage_step = [&](int j, real* buf) {
        const int b = b0 + j;
        stage_chunk_step(buf, Li + b * BS, b + 1 < n_blocks ? XS + b * BS : nullptr,
                         left >= 0 ? XS + lslot[j] * BS : nullptr, zb + (long long)b * n, n, m, rows, lane);
    };
    stage_buffers_init(stage, step_elems, lane);
    stage_step(len - 1, stage + ((len - 1) & 1) * step_elems);
    const int last_b = b0 + len - 1;
    for (int c = 0; c < m; ++c) {
        if (lane < LD) sx[c * LD + lane] = real(0), sxs[c * LD + lane] = real(0);
        if (lane < n && last_b + 1 < n_blocks) sx[c * LD + lane] = zb[(long long)(last_b + 1) * n + (long long)c * rows + lane];
        if (lane < n && left >= 0) sxs[c * LD + lane] = zb[(long long)left * n + (long long)c * rows + lane];
    }
    for (int j = len - 1; j >= 0; --j) {
        const int b = b0 + j;
        real* cur = stage + (j & 1) * step_elems;
        wait_async<0>();
        __syncwarp();
        if (j > 0) stage_step(j - 1, stage + ((j - 1) & 1) * step_elems);
        for (int c = 0; c < m; ++c) {
            real w = lane < LD ? cur[3 * CHS_BLOCK + c * LD + lane] : real(0);
            if (b + 1 < n_blocks) w -= col_dot(cur + CHS_BLOCK, sx + c * LD, lane);
            if (left >= 0) w -= col_dot(cur + 2 * CHS_BLOCK, sxs + c * LD, lane);
            if (lane < LD) sw[lane] = lane < n ? w : real(0);
            __syncwarp();
            const real xi = col_dot(cur, sw, lane);
            __syncwarp();  // (sx of this column read by every lane)
            if (lane < LD) sx[c * LD + lane] = lane < n ? xi : real(0);
            if (lane < n) zb[(long long)b * n + (long long)c * rows + lane] = xi;
        }
    }
    wait_async<0>();
}
#endif
