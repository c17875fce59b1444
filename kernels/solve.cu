// Nested-dissection solve (paper Algorithm 6). Right-hand sides live in a plan-owned buffer,
// column-major per item: y[item·item_rhs + col·rows + row], rows = N·n.
//   btchol_forward_eliminate (levels up):   y_i ← D̂_i⁻¹·y_i
//   btchol_forward_update    (levels up):   y_a ← y_a − Σ L_{a,i}·y_i
//   btchol_backward_eliminate (levels down): y_i ← D̂_i⁻ᵀ·(y_i − Σ L_{a,i}ᵀ·y_a)

__device__ __forceinline__ bool item_ok(const unsigned long long* fail, int item) { return fail[item] == NO_FAILURE; }

// Row i, column c of Σ_p op(L_p)·y_{block_p} over a record's (slot, block) pairs, where op is the
// identity (forward update) or the transpose (backward solve).
template <bool TRANSPOSE>
__device__ __forceinline__ real sum_products(const real* slot_base, const real* yb, const int* r, int n, int rows, int i, int c) {
    real s = 0;
    for (int p = 0; p < r[7]; ++p) {
        const real* L = slot_base + r[1 + 2 * p] * BS;
        const real* yv = yb + (long long)r[2 + 2 * p] * n + (long long)c * rows;
        for (int k = 0; k < n; ++k) s += (TRANSPOSE ? L[k + i * LD] : L[i + k * LD]) * yv[k];
    }
    return s;
}

#if BT_LD > 32 && BT_LD <= 128
// 32 < n ≤ 128: D̂_i (lower triangle, padded leading dimension, reciprocal pivots) is staged in
// shared memory once per CTA, and each warp solves one right-hand-side column with its rows in
// registers (lane l holds rows l, l+32, ...): the serial chain per column is one multiply and one
// shuffle per row, instead of two CTA barriers and a global read-modify-write per row.
#define SOLVE_STAGED 1
#define RPL ((LD + 31) / 32)
#define SLDS (LD + 1)
#define FULL_WARP 0xffffffffu

// One column of n ≤ 32·RPL values spread over a warp: lane i holds rows i, i + 32, ... (zero
// beyond n), the layout of the staged substitutions below.
__device__ __forceinline__ void load_column(real (&v)[RPL], const real* yc, int n, int lane) {
#pragma unroll
    for (int t = 0; t < RPL; ++t) v[t] = lane + 32 * t < n ? yc[lane + 32 * t] : real(0);
}
__device__ __forceinline__ void store_column(real* yc, const real (&v)[RPL], int n, int lane) {
#pragma unroll
    for (int t = 0; t < RPL; ++t)
        if (lane + 32 * t < n) yc[lane + 32 * t] = v[t];
}

// Stages the lower triangle of L (n×n) into sL (leading dimension SLDS) and 1/diag into sInv.
__device__ __forceinline__ void stage_lower(real* sL, real* sInv, const real* L, int n) {
    for (int idx = threadIdx.x; idx < n * n; idx += NT) {
        const int i = idx % n, j = idx / n;
        if (i >= j) sL[i + j * SLDS] = L[i + j * LD];
        if (i == j) sInv[i] = real(1) / L[i + j * LD];
    }
    __syncthreads();
}

extern "C" __global__ void __launch_bounds__(NT) btchol_forward_eliminate(
    const real* diag, real* y, const int* recs, int n_work, int n, int m, int rows, long long item_diag, long long item_rhs,
    const unsigned long long* fail) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* sL = reinterpret_cast<real*>(smem_raw);
    real* sInv = sL + LD * SLDS;
    const int* r = recs + REC * (blockIdx.x % n_work);
    const int item = blockIdx.x / n_work;
    if (!item_ok(fail, item)) return;
    stage_lower(sL, sInv, diag + item * item_diag + r[0] * BS, n);
    real* yi = y + item * item_rhs + (long long)r[0] * n;
    const int lane = threadIdx.x & 31;
    for (int c = threadIdx.x >> 5; c < m; c += NT / 32) {
        real* yc = yi + (long long)c * rows;
        real v[RPL];
        load_column(v, yc, n, lane);
#pragma unroll
        for (int j = 0; j < LD; ++j) {
            if (j >= n) continue;  // (not break: the loop must unroll, v stays in registers)
            if (lane == j % 32) v[j / 32] *= sInv[j];
            const real xj = __shfl_sync(FULL_WARP, v[j / 32], j % 32);
#pragma unroll
            for (int t = j / 32; t < RPL; ++t) {
                const int row = lane + 32 * t;
                if (row > j && row < n) v[t] -= sL[row + j * SLDS] * xj;
            }
        }
        store_column(yc, v, n, lane);
    }
}
#else
extern "C" __global__ void __launch_bounds__(NT) btchol_forward_eliminate(
    const real* diag, real* y, const int* recs, int n_work, int n, int m, int rows, long long item_diag, long long item_rhs,
    const unsigned long long* fail) {
    const int* r = recs + REC * (blockIdx.x % n_work);
    const int item = blockIdx.x / n_work;
    if (!item_ok(fail, item)) return;
    const real* L = diag + item * item_diag + r[0] * BS;
    real* yi = y + item * item_rhs + (long long)r[0] * n;
    for (int j = 0; j < n; ++j) {
        for (int c = threadIdx.x; c < m; c += NT) yi[j + (long long)c * rows] /= L[j + j * LD];
        __syncthreads();
        const int below = n - j - 1;
        for (int idx = threadIdx.x; idx < below * m; idx += NT) {
            int i = j + 1 + idx % below, c = idx / below;
            yi[i + (long long)c * rows] -= L[i + j * LD] * yi[j + (long long)c * rows];
        }
        __syncthreads();
    }
}
#endif

extern "C" __global__ void __launch_bounds__(NT) btchol_forward_update(
    const real* slots, real* y, const int* recs, int n_work, int n, int m, int rows, long long item_slots, long long item_rhs,
    const unsigned long long* fail) {
    const int* r = recs + REC * (blockIdx.x % n_work);
    const int item = blockIdx.x / n_work;
    if (!item_ok(fail, item)) return;
    real* yb = y + item * item_rhs;
    const real* slot_base = slots + item * item_slots;
    for (int idx = threadIdx.x; idx < n * m; idx += NT) {
        int i = idx % n, c = idx / n;
        yb[(long long)r[0] * n + i + (long long)c * rows] -= sum_products<false>(slot_base, yb, r, n, rows, i, c);
    }
}

extern "C" __global__ void __launch_bounds__(NT) btchol_backward_eliminate(
    const real* diag, const real* slots, real* y, const int* recs, int n_work, int n, int m, int rows, long long item_diag,
    long long item_slots, long long item_rhs, const unsigned long long* fail) {
    const int* r = recs + REC * (blockIdx.x % n_work);
    const int item = blockIdx.x / n_work;
    if (!item_ok(fail, item)) return;
    real* yb = y + item * item_rhs;
    real* yi = yb + (long long)r[0] * n;
    const real* slot_base = slots + item * item_slots;
#if SOLVE_STAGED
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* sL = reinterpret_cast<real*>(smem_raw);
    real* sInv = sL + LD * SLDS;
    stage_lower(sL, sInv, diag + item * item_diag + r[0] * BS, n);
#endif
    for (int idx = threadIdx.x; idx < n * m; idx += NT) {
        int i = idx % n, c = idx / n;
        yi[i + (long long)c * rows] -= sum_products<true>(slot_base, yb, r, n, rows, i, c);
    }
    __syncthreads();
#if SOLVE_STAGED
    // D̂_iᵀ x = y per column, one warp each: x_j final, then y_r −= L[j][r]·x_j for r < j.
    const int lane = threadIdx.x & 31;
    for (int c = threadIdx.x >> 5; c < m; c += NT / 32) {
        real* yc = yi + (long long)c * rows;
        real v[RPL];
        load_column(v, yc, n, lane);
#pragma unroll
        for (int j = LD - 1; j >= 0; --j) {
            if (j >= n) continue;
            if (lane == j % 32) v[j / 32] *= sInv[j];
            const real xj = __shfl_sync(FULL_WARP, v[j / 32], j % 32);
#pragma unroll
            for (int t = 0; t <= j / 32; ++t) {
                const int row = lane + 32 * t;
                if (row < j) v[t] -= sL[j + row * SLDS] * xj;
            }
        }
        store_column(yc, v, n, lane);
    }
#else
    const real* L = diag + item * item_diag + r[0] * BS;
    for (int j = n - 1; j >= 0; --j) {
        for (int c = threadIdx.x; c < m; c += NT) yi[j + (long long)c * rows] /= L[j + j * LD];
        __syncthreads();
        for (int idx = threadIdx.x; idx < j * m; idx += NT) {
            int i = idx % j, c = idx / j;
            yi[i + (long long)c * rows] -= L[j + i * LD] * yi[j + (long long)c * rows];
        }
        __syncthreads();
    }
#endif
}
