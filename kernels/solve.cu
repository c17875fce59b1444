// Nested-dissection solve (paper Algorithm 6). Right-hand sides live in a plan-owned buffer,
// column-major per item: y[item·item_rhs + col·rows + row], rows = N·n.
//   btchol_forward_eliminate (levels up):   y_i ← D̂_i⁻¹·y_i
//   btchol_forward_update    (levels up):   y_a ← y_a − Σ L_{a,i}·y_i
//   btchol_backward_eliminate (levels down): y_i ← D̂_i⁻ᵀ·(y_i − Σ L_{a,i}ᵀ·y_a)

__device__ __forceinline__ bool item_ok(const unsigned long long* fail, int item) { return fail[item] == NO_FAILURE; }

// y_dst −= Σ_p op(L_p)·y_{block_p} over a record's (slot, block) pairs (≤ 2), every row and
// column of the n×m result, where op is the identity (forward update) or the transpose (backward
// solve). `ks` adjacent lanes share one output, each summing the k ≡ h (mod ks) terms, reduced by
// shuffles: with one right-hand side a thread per output left most of the CTA idle and walked a
// 2n-term chain of dependent loads (ncu, H100, f64 n = 64: 29 µs per forward update). All threads
// call it (the loop trip count is uniform, for the shuffles).
template <bool TRANSPOSE>
__device__ __forceinline__ void subtract_products(real* ydst, const real* slot_base, const real* yb, const int* r, int n,
                                                  int m, int rows) {
    int ks = 1;
    while (ks < 32 && 2 * ks * n * m <= NT) ks *= 2;
    const int total = n * m * ks;
    for (int base = 0; base < total; base += NT) {
        const int idx = base + threadIdx.x, h = idx % ks, out = idx / ks, i = out % n, c = out / n;
        const bool active = idx < total;
        real s0 = 0, s1 = 0;  // two partial sums halve the FMA chain
        if (active)
            for (int p = 0; p < r[7]; ++p) {
                const real* L = slot_base + r[1 + 2 * p] * BS;
                const real* yv = yb + (long long)r[2 + 2 * p] * n + (long long)c * rows;
#pragma unroll 2
                for (int k = h; k < n; k += 2 * ks) {
                    s0 += (TRANSPOSE ? L[k + i * LD] : L[i + k * LD]) * yv[k];
                    const int k1 = k + ks;
                    if (k1 < n) s1 += (TRANSPOSE ? L[k1 + i * LD] : L[i + k1 * LD]) * yv[k1];
                }
            }
        real v = s0 + s1;
        for (int o = ks / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (active && h == 0) ydst[i + (long long)c * rows] -= v;
    }
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
// Each thread issues a batch of loads before its stores (as copy_block).
__device__ __forceinline__ void stage_lower(real* __restrict__ sL, real* __restrict__ sInv, const real* __restrict__ L,
                                            int n) {
    for (int base = 0; base < LD * LD; base += NT * COPY_BATCH) {
        real buf[COPY_BATCH];
#pragma unroll
        for (int b = 0; b < COPY_BATCH; ++b) {
            const int idx = base + b * NT + threadIdx.x, i = idx % LD, j = idx / LD;
            buf[b] = idx < LD * LD && i >= j && i < n ? L[idx] : real(0);
        }
#pragma unroll
        for (int b = 0; b < COPY_BATCH; ++b) {
            const int idx = base + b * NT + threadIdx.x, i = idx % LD, j = idx / LD;
            if (idx < LD * LD && i >= j && i < n) sL[i + j * SLDS] = buf[b];
            if (idx < LD * LD && i == j && i < n) sInv[i] = real(1) / buf[b];
        }
    }
    __syncthreads();
}

extern "C" __global__ void __launch_bounds__(NT) btchol_forward_eliminate(
    const real* diag, real* y, const int* recs, int n_work, int n, int m, int rows, long long item_diag, long long item_rhs,
    const unsigned long long* fail) {
    wait_for_previous_kernel();
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
    wait_for_previous_kernel();
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
    wait_for_previous_kernel();
    const int* r = recs + REC * (blockIdx.x % n_work);
    const int item = blockIdx.x / n_work;
    if (!item_ok(fail, item)) return;
    real* yb = y + item * item_rhs;
    const real* slot_base = slots + item * item_slots;
    subtract_products<false>(yb + (long long)r[0] * n, slot_base, yb, r, n, m, rows);
}

extern "C" __global__ void __launch_bounds__(NT) btchol_backward_eliminate(
    const real* diag, const real* slots, real* y, const int* recs, int n_work, int n, int m, int rows, long long item_diag,
    long long item_slots, long long item_rhs, const unsigned long long* fail) {
    wait_for_previous_kernel();
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
    subtract_products<true>(yi, slot_base, yb, r, n, m, rows);
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
