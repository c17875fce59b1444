// CTA-wide dense operations on n×n column-major blocks (leading dimension LD), in shared or global
// memory. Names follow LAPACK/BLAS; each comment gives the math.

// A ← chol(A), lower. Returns −1, or the first column whose pivot is not positive. All threads call.
__device__ int potrf_lower(real* A, int n) {
    __shared__ int failed_col;
    for (int j = 0; j < n; ++j) {
        __syncthreads();
        if (threadIdx.x == 0) {
            real d = A[j + j * LD];
            failed_col = (d > real(0) && isfinite(d)) ? -1 : j;
            if (failed_col < 0) A[j + j * LD] = sqrt(d);
        }
        __syncthreads();
        if (failed_col >= 0) return failed_col;
        const real inv = real(1) / A[j + j * LD];
        for (int i = j + 1 + threadIdx.x; i < n; i += NT) A[i + j * LD] *= inv;
        __syncthreads();
        const int m = n - j - 1;
        for (int idx = threadIdx.x; idx < m * m; idx += NT) {
            int i = j + 1 + idx % m, k = j + 1 + idx / m;
            if (i >= k) A[i + k * LD] -= A[i + j * LD] * A[k + j * LD];
        }
    }
    __syncthreads();
    return -1;
}

// Row `row` of X ← X·L⁻ᵀ (one thread per row; rows are independent).
__device__ __forceinline__ void trsm_right_lower_trans_row(real* X, const real* L, int n, int row) {
    for (int j = 0; j < n; ++j) {
        real x = X[row + j * LD];
        for (int k = 0; k < j; ++k) x -= X[row + k * LD] * L[j + k * LD];
        X[row + j * LD] = x / L[j + j * LD];
    }
}

// C ← −A·Bᵀ.
__device__ void gemm_nt_neg(real* C, const real* A, const real* B, int n) {
    for (int idx = threadIdx.x; idx < n * n; idx += NT) {
        int i = idx % n, j = idx / n;
        real s = 0;
        for (int k = 0; k < n; ++k) s += A[i + k * LD] * B[j + k * LD];
        C[i + j * LD] = -s;
    }
}

// Lower triangle of D ← D − A·Aᵀ.
__device__ void syrk_lower_sub(real* D, const real* A, int n) {
    for (int idx = threadIdx.x; idx < n * n; idx += NT) {
        int i = idx % n, j = idx / n;
        if (i < j) continue;
        real s = 0;
        for (int k = 0; k < n; ++k) s += A[i + k * LD] * A[j + k * LD];
        D[i + j * LD] -= s;
    }
}
