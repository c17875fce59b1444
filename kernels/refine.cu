// Mixed-precision iterative refinement on the device (src/plan/refine.rs, src/cuda/refine.rs):
// the f64 residual against the f64 matrix, and the rounding of the residual to f32 and of the
// correction back, so that no vector leaves the GPU between refinement steps. Compiled as a module
// of its own (no BT_* defines): the types are spelled out, f64 data and f32 corrections.
//
// Vectors are dense, column-major per item: v[(item·m + c)·rows + row], rows = N·n. The matrix:
// D_i full symmetric n×n blocks (so D_i[p][k] = D_i[k][p] at k·n + p), E_i = Ψ_{i+1,i} row-major
// (E_i[k][p] at k·n + p) and Et_i the same column-major (E_i[p][k] at k·n + p): every read of
// row p by thread p is coalesced.

// Column maxima of non-negative doubles as integers (their order is the unsigned order of the
// bits); NaN counts as +inf, so a broken column can never look converged.
__device__ __forceinline__ void column_max(unsigned long long* slot, double v, int column) {
    const double a = isnan(v) ? __longlong_as_double(0x7ff0000000000000ll) : fabs(v);
    unsigned long long bits = (unsigned long long)__double_as_longlong(a);
    const unsigned mask = __activemask();
    const int first = __shfl_sync(mask, column, __ffs(mask) - 1);
    if (__all_sync(mask, column == first)) {
        for (int o = 16; o > 0; o /= 2) {
            const unsigned long long other = __shfl_down_sync(mask, bits, o);
            if ((threadIdx.x & 31) + o < 32 && ((mask >> ((threadIdx.x & 31) + o)) & 1)) bits = max(bits, other);
        }
        if ((int)(threadIdx.x & 31) == __ffs(mask) - 1) atomicMax(slot, bits);
    } else {
        atomicMax(slot, bits);  // a warp across two columns: rare
    }
}

// r ← b − Ψx; rmax[column] ← max |r|, xmax[column] ← max |x| (both zeroed by the caller).
extern "C" __global__ void btchol_refine_residual(const double* D, const double* E, const double* Et, const double* x,
                                                  const double* b, double* r, unsigned long long* rmax,
                                                  unsigned long long* xmax, int nb, int n, int m, long long total) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const long long rows = (long long)nb * n;
    const int column = (int)(idx / rows), row = (int)(idx % rows);
    const int item = column / m, i = row / n, p = row % n;
    const double* xc = x + (long long)column * rows;
    const long long bl = (long long)n * n;
    double s = b[idx];
    const double* Di = D + ((long long)item * nb + i) * bl;
    const double* xi = xc + (long long)i * n;
    for (int k = 0; k < n; ++k) s -= Di[k * n + p] * xi[k];
    if (i > 0) {
        const double* L = Et + ((long long)item * (nb - 1) + i - 1) * bl;
        const double* xl = xi - n;
        for (int k = 0; k < n; ++k) s -= L[k * n + p] * xl[k];
    }
    if (i + 1 < nb) {
        const double* U = E + ((long long)item * (nb - 1) + i) * bl;
        const double* xu = xi + n;
        for (int k = 0; k < n; ++k) s -= U[k * n + p] * xu[k];
    }
    r[idx] = s;
    column_max(&rmax[column], s, column);
    column_max(&xmax[column], xc[row], column);
}

// d ← r / rmax[column] rounded to f32: the residual shrinks by ~1e-8 per step and would leave
// the f32 range (or lose digits to subnormals) without the per-column scale.
extern "C" __global__ void btchol_refine_round(const double* r, const unsigned long long* rmax, float* d, long long rows,
                                               long long total) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const double scale = __longlong_as_double((long long)rmax[idx / rows]);
    d[idx] = scale > 0 ? (float)(r[idx] / scale) : 0.0f;
}

// x ← x + d·rmax[column] (the correction the f32 solve made of the scaled residual).
extern "C" __global__ void btchol_refine_update(double* x, const float* d, const unsigned long long* rmax,
                                                long long rows, long long total) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const double scale = __longlong_as_double((long long)rmax[idx / rows]);
    if (scale > 0) x[idx] += (double)d[idx] * scale;
}
