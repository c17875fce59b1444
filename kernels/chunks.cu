// The chunk steps of partitioned nested dissection (crate::schedule::Schedule::partitioned), BT_LD ≤ 32:
// one warp per chunk sweeps its blocks in order, so the schedule's first `chunk` levels are one
// launch, and each block is read once and each factor block written once, instead of a grid-wide
// level per step that reads and writes every block it touches.
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

// t[k] −= Σ_q s[q]·V[k][q] (V column-major in shared memory, so every lane reads the same
// column: broadcasts).
__device__ __forceinline__ void rows_times_columns(real (&t)[LD], const real (&s)[LD], const real* V) {
#pragma unroll
    for (int q = 0; q < LD; ++q) axpy_tail(t, s[q], V + q * LD, 0);
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

// Dynamic shared memory: chunk_factor_smem_bytes (jit.rs): D_{b+1} and Ψ_{b+2,b+1} staged, the
// step's rows (then L, then X), Y (then the next F), Σ_S.
extern "C" __global__ void __launch_bounds__(CHUNK_THREADS) btchol_factor_chunks_small(
    real* diag, real* slots, real* fact, real* xslots, real* sep_sums, const int* chunks, const int* left_slots,
    int n_chunks, int n_blocks, int n, long long item_diag, long long item_slots, long long item_sums,
    unsigned long long* fail, real piv_thr, real piv_boost, unsigned* boosted) {
    wait_for_previous_kernel();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* stD = reinterpret_cast<real*>(smem_raw);  // D_{b+1}
    real* stE = stD + BS;                            // Ψ_{b+2,b+1}
    real* sL = stE + BS;                             // rows before the sweep, then L, then X
    real* sY = sL + BS;                              // Y_b, then F_{j+1}
    real* sS = sY + BS;                              // Σ_S
    __shared__ __align__(16) real s_col[2 * LD];
    __shared__ real s_invd[LD];
    const int lane = threadIdx.x, chunk = blockIdx.x % n_chunks, item = blockIdx.x / n_chunks;
    if (skip_item(fail[item], 0)) return;  // masked out
    const int* ch = chunks + CH_REC * chunk;
    const int b0 = ch[CH_FIRST], len = ch[CH_LEN], left = ch[CH_LEFT];
    const int* lslot = left_slots + ch[CH_LEFT_SLOTS];
    real* D = diag + item * item_diag;
    real* S = slots + item * item_slots;
    real* F = fact + item * item_diag;
    real* XS = xslots + item * item_slots;

    real a[LD], x[1][LD];
    load_diag_rows(a, D + b0 * BS, n, lane);
    load_coupling_rows(x[0], S, b0, n_blocks, lane);
    if (left >= 0) {
        real f[LD];
        load_row(f, S + lslot[0] * BS, lane);
        store_row(sY, f, lane);
#pragma unroll
        for (int k = 0; k < LD; ++k) f[k] = real(0);
        store_row(sS, f, lane);
    }
    if (b0 + 1 < n_blocks) stage_block(stD, D + (b0 + 1) * BS, LD, lane);
    if (len > 1 && b0 + 2 < n_blocks) stage_block(stE, S + (b0 + 1) * BS, LD, lane);
    commit_async();
    int nboost = 0;
    bool failed = false;
    for (int j = 0; j < len; ++j) {
        const int b = b0 + j;
        const bool has_right = b + 1 < n_blocks, last = j + 1 == len;
        store_row(sL, a, lane);  // (kept for a sweep again with the exact square root)
        const int boosted_before = nboost;
        int f = potrf_panel_warp<1>(a, x, lane, piv_thr, piv_boost, nboost, s_col);
        if (f == PANEL_SUBNORMAL) {  // rare: again with the exact square root, out of line (small.cu)
            nboost = boosted_before;
            __syncwarp();
            real* out_x = has_right ? XS + b * BS : nullptr;  // (its final place; read back below)
            f = panel_exact(sL, has_right ? S + b * BS : nullptr, n, sL, nullptr, nullptr, out_x, piv_thr, piv_boost,
                            &nboost, s_col);
            load_row(a, sL, lane);
#pragma unroll
            for (int k = 0; k < LD; ++k) x[0][k] = (out_x && lane < LD) ? out_x[lane + k * LD] : real(0);
        }
        if (f >= 0) {
            if (lane == 0) atomicMin(&fail[item], fail_key(j, b, f));
            failed = true;
            break;
        }
#pragma unroll
        for (int k = 0; k < LD; ++k)
            if (lane < n && k <= lane) F[b * BS + lane + k * LD] = a[k];
        __syncwarp();  // (every lane has reread its own rows from sL)
        real y[LD];
        if (left >= 0) {
            store_row(sL, a, lane);  // L, for the trsm of Y
            real l_ii = real(1);  // (a[lane] by a select per k: a dynamic index would put a[] in local memory)
#pragma unroll
            for (int k = 0; k < LD; ++k) l_ii = k == lane ? a[k] : l_ii;
            // 1/L_ii = 1/√p as the sweep had it, up to rounding (a division would be a call, and the
            // registers live across it spilled)
            if (lane < LD) s_invd[lane] = rsqrt_pivot<true>(l_ii * l_ii);
            __syncwarp();
            load_row(y, sY, lane);
            trsm_row(y, sL, s_invd);
            store_row(XS + lslot[j] * BS, y, lane);
        }
        if (has_right) store_row(XS + b * BS, x[0], lane);
        __syncwarp();  // (L and F read by every lane)
        if (has_right) store_row(sL, x[0], lane);
        if (left >= 0) store_row(sY, y, lane);
        __syncwarp();
        if (left >= 0) {
            real t[LD];
            load_row(t, sS, lane);
            rows_times_columns(t, y, sY);
            store_row(sS, t, lane);
            if (has_right) {
#pragma unroll
                for (int k = 0; k < LD; ++k) t[k] = real(0);
                rows_times_columns(t, y, sL);  // rows of −Y·Xᵀ
                if (!last) {
                    __syncwarp();  // (Y read by every lane)
                    store_row(sY, t, lane);
                } else if (ch[CH_FILL] >= 0) {
                    real* out = S + ch[CH_FILL] * BS;
#pragma unroll
                    for (int k = 0; k < LD; ++k)
                        if (lane < LD) out[ch[CH_FILL_ROWS] ? lane + k * LD : k + lane * LD] = t[k];
                }
            }
        }
        if (has_right) {
            wait_async<0>();
            __syncwarp();
            load_diag_rows(a, stD, n, lane);
            load_row(x[0], sL, lane);  // (this lane's row of X: kept in shared memory meanwhile)
            rows_times_columns(a, x[0], sL);
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
                if (b + 2 < n_blocks) stage_block(stD, D + (b + 2) * BS, LD, lane);
                if (j + 2 < len && b + 3 < n_blocks) stage_block(stE, S + (b + 2) * BS, LD, lane);
                commit_async();
            }
        }
        __syncwarp();
    }
    wait_async<0>();
    if (!failed && left >= 0) {
        __syncwarp();
        real* out = sep_sums + item * item_sums + (chunk - 1) * BS;  // (chunk ≥ 1: it has a left separator)
        for (int idx = lane; idx < BS; idx += CHUNK_THREADS) out[idx] = sS[idx];
    }
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
#endif
