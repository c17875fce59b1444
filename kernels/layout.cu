// Data movement between caller layouts and the plan's internal storage, on the device, so that
// uploads and solves from device pointers never round-trip through the host.

// Element formats the caller may hand in: the plan's own `real`, or 16-bit f16 / bf16 (raw bits),
// widened exactly (every f16 and bf16 value is a float and a double).
struct f16_bits { unsigned short v; };
struct bf16_bits { unsigned short v; };
__device__ __forceinline__ real widen(real v) { return v; }
__device__ __forceinline__ real widen(f16_bits h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.v));
    return real(f);
}
__device__ __forceinline__ real widen(bf16_bits h) { return real(__uint_as_float((unsigned)h.v << 16)); }

// Where the caller's layout and the stored one run along different axes (row-major into a
// plain block, column-major into a transposed one), one of the two sides strides by a column in
// every thread of a warp: CONVERT_TILE × CONVERT_TILE tiles go through shared memory instead, read
// along the caller's rows or columns and written along the stored ones (element by element, the
// transposed couplings' conversion ran at a third of the bandwidth: f64 n = 64, N = 4096, 194 µs
// against 57 µs for the diagonal blocks, H200).
#define CONVERT_TILE 32
// Stores caller element (r, c) of block `blk`, value v (see convert_blocks).
__device__ __forceinline__ void convert_element(real* d, int n, bool t, int lower_only, real shift,
                                                unsigned long long* nonfinite, int item, int blk, int r, int c, real v) {
    if (r >= n || c >= n || (lower_only && r < c)) return;
    if (!isfinite(v))
        atomicMin(&nonfinite[item], ((unsigned long long)blk << 32) | ((unsigned long long)r << 16) | (unsigned long long)c);
    const real x = r == c ? v + shift : v;
    if (t) d[c + r * LD] = x; else d[r + c * LD] = x;
}

// Caller blocks (row- or column-major n×n, `src_blocks` per item) → internal padded column-major
// blocks at dst + item·dst_item + block·BS. `transposed` (one flag per block, or null) stores the
// block transposed (crate::schedule's factor orientation). `lower_only` reads only r ≥ c.
// `mask` (one byte per item, or null): items with a zero byte are neither read nor written.
// `shift` is added to the diagonal (PlanOptions::diag_shift; 0 for couplings), after the check.
// Non-finite values set nonfinite[item] to min(block·2^32 + r·2^16 + c).
template <typename S>
__device__ __forceinline__ void convert_blocks(const S* src, real* dst, int n, int src_blocks, long long dst_item,
                                               int row_major, const unsigned char* transposed, int lower_only,
                                               const unsigned char* mask, real shift,
                                               unsigned long long* nonfinite) {
    const int blk = blockIdx.x % src_blocks, item = blockIdx.x / src_blocks;
    if (mask != nullptr && !mask[item]) return;
    const S* s = src + ((long long)item * src_blocks + blk) * n * n;
    real* d = dst + item * dst_item + blk * BS;
    const bool t = transposed != nullptr && transposed[blk];
    auto load = [&](int r, int c) {
        return r < n && c < n && !(lower_only && r < c) ? widen(row_major ? s[r * n + c] : s[r + c * n]) : real(0);
    };
    if (t != (row_major != 0)) {
        // Tiles through shared memory: read with r (column-major) or c (row-major) fastest across
        // threads, write with the stored layout's fast axis (c when transposed, r otherwise).
        __shared__ real tile[CONVERT_TILE][CONVERT_TILE + 1];
        constexpr int per_thread = (CONVERT_TILE * CONVERT_TILE + NT - 1) / NT;
        for (int c0 = 0; c0 < n; c0 += CONVERT_TILE)
            for (int r0 = 0; r0 < n; r0 += CONVERT_TILE) {
                real v[per_thread];
#pragma unroll
                for (int b = 0; b < per_thread; ++b) {
                    const int e = b * NT + threadIdx.x, fast = e % CONVERT_TILE, slow = e / CONVERT_TILE;
                    const int r = r0 + (row_major ? slow : fast), c = c0 + (row_major ? fast : slow);
                    v[b] = e < CONVERT_TILE * CONVERT_TILE ? load(r, c) : real(0);
                }
#pragma unroll
                for (int b = 0; b < per_thread; ++b) {
                    const int e = b * NT + threadIdx.x, fast = e % CONVERT_TILE, slow = e / CONVERT_TILE;
                    if (e < CONVERT_TILE * CONVERT_TILE) {
                        if (row_major) tile[slow][fast] = v[b]; else tile[fast][slow] = v[b];  // tile[r − r0][c − c0]
                    }
                }
                __syncthreads();
                for (int e = threadIdx.x; e < CONVERT_TILE * CONVERT_TILE; e += NT) {
                    const int fast = e % CONVERT_TILE, slow = e / CONVERT_TILE;
                    const int dr = t ? slow : fast, dc = t ? fast : slow;
                    convert_element(d, n, t, lower_only, shift, nonfinite, item, blk, r0 + dr, c0 + dc, tile[dr][dc]);
                }
                __syncthreads();
            }
        return;
    }
    // The same axis on both sides: element by element, COPY_BATCH elements per thread loaded
    // before any is stored, so that their memory latencies overlap (one at a time, a 32×32 block
    // took 7 µs, H100). (r fastest when column-major; c when row-major, the stored block transposed.)
    for (int base = 0; base < n * n; base += NT * COPY_BATCH) {
        real v[COPY_BATCH];
#pragma unroll
        for (int b = 0; b < COPY_BATCH; ++b) {
            const int idx = base + b * NT + threadIdx.x, fast = idx % n, slow = idx / n;
            const int r = row_major ? slow : fast, c = row_major ? fast : slow;
            v[b] = idx < n * n ? load(r, c) : real(0);
        }
#pragma unroll
        for (int b = 0; b < COPY_BATCH; ++b) {
            const int idx = base + b * NT + threadIdx.x, fast = idx % n, slow = idx / n;
            if (idx < n * n)
                convert_element(d, n, t, lower_only, shift, nonfinite, item, blk, row_major ? slow : fast,
                                row_major ? fast : slow, v[b]);
        }
    }
}

// Right-hand sides: caller element (item, row, col) at src + item·item_stride + row·rs + col·cs
// → internal y[item·item_rhs + col·rows + row], checking for non-finite values: one sets
// nonfinite[item] to min(row·2^32 + col0 + col) and clears *any (all ones while every value seen
// is finite), which btchol_unpack_rhs reads so that no solution is written (engine.rs reads the
// keys once, after the whole solve, instead of waiting between the check and the solve).
template <typename S>
__device__ __forceinline__ void pack_rhs(const S* caller, real* y, int rows, int m, long long rs, long long cs,
                                         long long item_stride, long long item_rhs, unsigned long long* nonfinite,
                                         int ctas_per_item, int col0, unsigned long long* any) {
    const int item = blockIdx.x / ctas_per_item, part = blockIdx.x % ctas_per_item;
    for (long long idx = part * (long long)NT + threadIdx.x; idx < (long long)rows * m; idx += (long long)ctas_per_item * NT) {
        int r = idx % rows, c = idx / rows;
        const real v = widen(caller[item * item_stride + r * rs + c * cs]);
        if (!isfinite(v)) {
            atomicMin(&nonfinite[item], ((unsigned long long)r << 32) | (unsigned long long)(col0 + c));
            *any = 0;
        }
        y[item * item_rhs + (long long)c * rows + r] = v;
    }
}

// 1536 threads per SM (≤ 42 registers; 1280 at 128 threads, which spilled at 1536): with the
// tiles' code beside the element loop the conversion took 64 registers, and the diagonal blocks'
// (element by element) 11 % longer (f64 n = 64, N = 4096: 57.5 → 64.1 µs, H200).
#define CONVERT_MIN_CTAS (NT <= 128 ? 10 : 1536 / NT > 0 ? 1536 / NT : 1)
#define CONVERT_ENTRY(NAME, S)                                                                                        \
    extern "C" __global__ void __launch_bounds__(NT, CONVERT_MIN_CTAS) NAME(                                           \
        const S* src, real* dst, int n, int src_blocks, long long dst_item, int row_major,                           \
        const unsigned char* transposed, int lower_only, const unsigned char* mask, real shift,                       \
        unsigned long long* nonfinite) {                                                                              \
        wait_for_previous_kernel();                                                                                   \
        convert_blocks<S>(src, dst, n, src_blocks, dst_item, row_major, transposed, lower_only, mask, shift,          \
                          nonfinite);                                                                                 \
    }                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(NT) NAME##_rhs(                                                       \
        const S* caller, real* y, int rows, int m, long long rs, long long cs, long long item_stride,                 \
        long long item_rhs, unsigned long long* nonfinite, int ctas_per_item, int col0,                                \
        unsigned long long* any) {                                                                                     \
        wait_for_previous_kernel();                                                                                   \
        pack_rhs<S>(caller, y, rows, m, rs, cs, item_stride, item_rhs, nonfinite, ctas_per_item, col0, any);          \
    }
CONVERT_ENTRY(btchol_convert_blocks, real)
CONVERT_ENTRY(btchol_convert_blocks_f16, f16_bits)
CONVERT_ENTRY(btchol_convert_blocks_bf16, bf16_bits)

// Internal y → caller element (item, row, col) of x (the plan's precision), for items with no
// failure (failed and masked items keep their right-hand side); nothing at all once pack_rhs has
// seen a non-finite value (*any cleared): the caller's array stays as it was. Also reports the
// item's non-finite key (pack_rhs's, of every pass so far) in `report`, page-locked host memory:
// the host reads it after its wait, with no copy.
extern "C" __global__ void __launch_bounds__(NT) btchol_unpack_rhs(
    real* caller, const real* y, int rows, int m, long long rs, long long cs, long long item_stride,
    long long item_rhs, const unsigned long long* fail, int ctas_per_item, const unsigned long long* any,
    const unsigned long long* nonfinite, unsigned long long* report) {
    wait_for_previous_kernel();
    const int item = blockIdx.x / ctas_per_item, part = blockIdx.x % ctas_per_item;
    if (part == 0 && threadIdx.x == 0) report[item] = nonfinite[item];
    if (fail[item] != NO_FAILURE || *any != NO_FAILURE) return;
    for (long long idx = part * (long long)NT + threadIdx.x; idx < (long long)rows * m; idx += (long long)ctas_per_item * NT) {
        int r = idx % rows, c = idx / rows;
        caller[item * item_stride + r * rs + c * cs] = y[item * item_rhs + (long long)c * rows + r];
    }
}

// Batch masks (Plan::factor_masked / solve_masked), one thread per item. Before the launches,
// items the mask leaves out save their key and get MASKED_ITEM (every kernel skips them); for a
// factor the selected items start with NO_FAILURE and no boosted pivots. After, the left-out
// items get their own key back, so their status and factor are as before.
extern "C" __global__ void btchol_mask_begin(unsigned long long* fail, unsigned long long* saved,
                                             const unsigned char* mask, int batch, int factor, unsigned* boosted) {
    wait_for_previous_kernel();
    const int item = blockIdx.x * blockDim.x + threadIdx.x;
    if (item >= batch) return;
    if (!mask[item]) {
        saved[item] = fail[item];
        fail[item] = MASKED_ITEM;
    } else if (factor) {
        fail[item] = NO_FAILURE;
        boosted[item] = 0;
    }
}
extern "C" __global__ void btchol_mask_end(unsigned long long* fail, const unsigned long long* saved,
                                           const unsigned char* mask, int batch) {
    wait_for_previous_kernel();
    const int item = blockIdx.x * blockDim.x + threadIdx.x;
    if (item < batch && !mask[item]) fail[item] = saved[item];
}

// log det of each factored item: 2 Σ log diag(D̂_i), one CTA per item, accumulated in double.
extern "C" __global__ void __launch_bounds__(NT) btchol_logdet(
    const real* diag, int n, int n_blocks, long long item_diag, const unsigned long long* fail, double* out) {
    wait_for_previous_kernel();
    __shared__ double partial[NT];
    const int item = blockIdx.x;
    double s = 0;
    for (long long idx = threadIdx.x; idx < (long long)n_blocks * n; idx += NT) {
        long long b = idx / n; int k = idx % n;
        s += log((double)diag[item * item_diag + b * BS + k + k * LD]);
    }
    partial[threadIdx.x] = s;
    __syncthreads();
    int top = 1;  // the largest power of two below NT (NT need not be one: 384 for ld 72..128)
    while (2 * top < NT) top *= 2;
    for (int w = top; w > 0; w /= 2) {
        if (threadIdx.x < w && threadIdx.x + w < NT) partial[threadIdx.x] += partial[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[item] = fail[item] == NO_FAILURE ? 2 * partial[0] : nan("");
}
