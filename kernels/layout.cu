// Data movement between caller layouts and the plan's internal storage, on the device, so that
// uploads and solves from device pointers never round-trip through the host.

// Caller blocks (row- or column-major n×n, `src_blocks` per item) → internal padded column-major
// blocks at dst + item·dst_item + block·BS. `transposed` (one flag per block, or null) stores the
// block transposed (crate::schedule's factor orientation). `lower_only` reads only r ≥ c.
// Non-finite values set nonfinite[item] to min(block·2^32 + r·2^16 + c).
extern "C" __global__ void __launch_bounds__(NT) btchol_convert_blocks(
    const real* src, real* dst, int n, int src_blocks, long long dst_item, int row_major,
    const unsigned char* transposed, int lower_only, unsigned long long* nonfinite) {
    const int blk = blockIdx.x % src_blocks, item = blockIdx.x / src_blocks;
    const real* s = src + ((long long)item * src_blocks + blk) * n * n;
    real* d = dst + item * dst_item + blk * BS;
    const bool t = transposed != nullptr && transposed[blk];
    for (int idx = threadIdx.x; idx < n * n; idx += NT) {
        int r = idx % n, c = idx / n;
        if (lower_only && r < c) continue;
        real v = row_major ? s[r * n + c] : s[r + c * n];
        if (!isfinite(v))
            atomicMin(&nonfinite[item], ((unsigned long long)blk << 32) | ((unsigned long long)r << 16) | (unsigned long long)c);
        if (t) d[c + r * LD] = v; else d[r + c * LD] = v;
    }
}

// Right-hand sides: caller element (item, row, col) at src + item·item_stride + row·rs + col·cs
// ↔ internal y[item·item_rhs + col·rows + row]. to_internal = 1 packs, 0 unpacks (only items with
// no failure, so failed items keep their right-hand side). Packing checks for non-finite values.
extern "C" __global__ void __launch_bounds__(NT) btchol_pack_rhs(
    real* caller, real* y, int rows, int m, long long rs, long long cs, long long item_stride,
    long long item_rhs, int to_internal, const unsigned long long* fail, unsigned long long* nonfinite, int ctas_per_item) {
    const int item = blockIdx.x / ctas_per_item, part = blockIdx.x % ctas_per_item;
    if (!to_internal && fail[item] != NO_FAILURE) return;
    for (long long idx = part * (long long)NT + threadIdx.x; idx < (long long)rows * m; idx += (long long)ctas_per_item * NT) {
        int r = idx % rows, c = idx / rows;
        real* p = caller + item * item_stride + r * rs + c * cs;
        real* q = y + item * item_rhs + (long long)c * rows + r;
        if (to_internal) {
            real v = *p;
            if (!isfinite(v)) atomicMin(&nonfinite[item], ((unsigned long long)r << 32) | (unsigned long long)c);
            *q = v;
        } else {
            *p = *q;
        }
    }
}

// log det of each factored item: 2 Σ log diag(D̂_i), one CTA per item, accumulated in double.
extern "C" __global__ void __launch_bounds__(NT) btchol_logdet(
    const real* diag, int n, int n_blocks, long long item_diag, const unsigned long long* fail, double* out) {
    __shared__ double partial[NT];
    const int item = blockIdx.x;
    double s = 0;
    for (long long idx = threadIdx.x; idx < (long long)n_blocks * n; idx += NT) {
        long long b = idx / n; int k = idx % n;
        s += log((double)diag[item * item_diag + b * BS + k + k * LD]);
    }
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int w = NT / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[item] = fail[item] == NO_FAILURE ? 2 * partial[0] : nan("");
}
