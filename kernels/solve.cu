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
__device__ __forceinline__ void subtract_products_many(real* ydst, const real* slot_base, const real* yb, const int* r,
                                                       int n, int m, int rows) {
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

// The same for m ≤ MC ≤ FEW_RHS right-hand sides, bound by reading the L blocks (n² elements each) with
// few outputs to spread them over: every warp reads whole 32-row segments of L's columns
// (coalesced) and keeps many loads in flight, the y columns come from shared memory.
//   op = identity: warp w takes row group w % RG (32 rows, a lane each) and the columns
//     k ≡ w / RG (mod KW); the KW partial sums of a row meet in shared memory.
//   op = transpose: output i is column i of L: warp w takes outputs i ≡ w (mod NW), OB at a
//     time (their loads issued together), lanes over k, a shuffle reduction per output.
// (One thread per output walked n dependent loads per block with 128 of 384 threads busy: 55 µs
// per forward update at f64 n = 128, N = 64; ncu, H100.) All threads call it.
// FEW_RHS: 8, or fewer where the two buffers (sy: 2·FEW_RHS·LD, part: NW·FEW_RHS·32 elements, about
// 5·LD·FEW_RHS in all) would pass 24 KiB of static shared memory.
__device__ constexpr int FEW_RHS_FOR(int f) { return f == 1 || 5 * LD * f * (int)sizeof(real) <= 24576 ? f : FEW_RHS_FOR(f / 2); }
constexpr int FEW_RHS = FEW_RHS_FOR(8);
template <bool TRANSPOSE, int MC>
__device__ __forceinline__ void subtract_products_few(real* ydst, const real* slot_base, const real* yb, const int* r,
                                                      int n, int m, int rows, real* sy, real* part) {
    constexpr int NW = NT / 32, RPLK = (LD + 31) / 32, OB = RPLK <= 4 ? 4 : 1;  // (OB·RPLK loads live)
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, np = r[7];
    const auto y_at = [&](int p, int c, int k) -> real { return sy[(p * MC + c) * LD + k]; };
    for (int e = threadIdx.x; e < 2 * MC * LD; e += NT) {
        const int p = e / (MC * LD), c = e / LD % MC, k = e % LD;
        sy[e] = p < np && c < m && k < n ? yb[(long long)r[2 + 2 * p] * n + (long long)c * rows + k] : real(0);
    }
    __syncthreads();
    if constexpr (TRANSPOSE) {
        for (int i0 = w; i0 < n; i0 += NW * OB) {
            real acc[OB][MC] = {};
            for (int p = 0; p < np; ++p) {
                const real* L = slot_base + r[1 + 2 * p] * BS;
                real l[OB][RPLK];
#pragma unroll
                for (int o = 0; o < OB; ++o)
#pragma unroll
                    for (int t = 0; t < RPLK; ++t) {
                        const int i = i0 + o * NW, k = lane + 32 * t;
                        l[o][t] = i < n && k < n ? L[k + (long long)i * LD] : real(0);
                    }
#pragma unroll
                for (int t = 0; t < RPLK; ++t) {
                    const int k = min(lane + 32 * t, LD - 1);  // (l is zero past n)
#pragma unroll
                    for (int c = 0; c < MC; ++c) {
                        const real yv = y_at(p, c, k);
#pragma unroll
                        for (int o = 0; o < OB; ++o) acc[o][c] = fma(l[o][t], yv, acc[o][c]);
                    }
                }
            }
#pragma unroll
            for (int o = 0; o < OB; ++o)
#pragma unroll
                for (int c = 0; c < MC; ++c) {
                    real v = acc[o][c];
#pragma unroll
                    for (int s = 16; s > 0; s /= 2) v += __shfl_xor_sync(0xffffffffu, v, s);
                    const int i = i0 + o * NW;
                    if (lane == 0 && c < m && i < n) ydst[i + (long long)c * rows] -= v;
                }
        }
    } else {
        const int rg = (n + 31) / 32, kw = NW / rg, g = w % rg, kq = w / rg, i = 32 * g + lane;
        real acc[MC] = {};
        if (kq < kw) {
            for (int p = 0; p < np; ++p) {
                const real* L = slot_base + r[1 + 2 * p] * BS + i;
#pragma unroll 8
                for (int k = kq; k < n; k += kw) {
                    const real l = i < n ? L[(long long)k * LD] : real(0);
#pragma unroll
                    for (int c = 0; c < MC; ++c) acc[c] = fma(l, y_at(p, c, k), acc[c]);
                }
            }
#pragma unroll
            for (int c = 0; c < MC; ++c) part[(kq * MC + c) * (rg * 32) + i] = acc[c];
        }
        __syncthreads();
        for (int e = threadIdx.x; e < n * m; e += NT) {
            const int ii = e % n, c = e / n;
            real v = 0;
            for (int q = 0; q < kw; ++q) v += part[(q * MC + c) * (rg * 32) + ii];
            ydst[ii + (long long)c * rows] -= v;
        }
    }
}

// The column count rounded up to 1, 2, 4 or 8 (≤ FEW_RHS) picks the variant; more take the loop,
// and so do blocks of columns under 512 bytes (f32 n = 64 measured 2–14 % slower with the
// variants, f64 n = 64 17–28 % faster; H100).
constexpr bool FEW_RHS_VARIANTS = LD * sizeof(real) >= 512;
template <bool TRANSPOSE>
__device__ __forceinline__ void subtract_products(real* ydst, const real* slot_base, const real* yb, const int* r, int n,
                                                  int m, int rows) {
    __shared__ __align__(16) real sy[FEW_RHS_VARIANTS ? 2 * FEW_RHS * LD : 1];  // [source][column][k]
    __shared__ real part[FEW_RHS_VARIANTS ? NT / 32 * FEW_RHS * 32 : 1];
    if constexpr (FEW_RHS_VARIANTS) {
        if (m == 1) return subtract_products_few<TRANSPOSE, 1>(ydst, slot_base, yb, r, n, m, rows, sy, part);
        if constexpr (FEW_RHS >= 2)
            if (m == 2) return subtract_products_few<TRANSPOSE, 2>(ydst, slot_base, yb, r, n, m, rows, sy, part);
        if constexpr (FEW_RHS >= 4)
            if (m <= 4) return subtract_products_few<TRANSPOSE, 4>(ydst, slot_base, yb, r, n, m, rows, sy, part);
        if constexpr (FEW_RHS >= 8)
            if (m <= 8) return subtract_products_few<TRANSPOSE, 8>(ydst, slot_base, yb, r, n, m, rows, sy, part);
    }
    subtract_products_many<TRANSPOSE>(ydst, slot_base, yb, r, n, m, rows);
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
