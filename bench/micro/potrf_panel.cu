// Microbenchmark: one warp's register Cholesky panel (kernels/small.cu potrf_panel_warp) against
// candidate variants, in cycles per panel (clock64, one warp per CTA, 132 CTAs), for f32/f64 and
// LD = 8, 16, 32, with NX coupling blocks carried along. Also checks that every variant gives
// the same factor as the library's routine (max relative difference).
//   nvcc -arch=sm_90 -O3 -std=c++17 -o potrf_panel potrf_panel.cu && ./potrf_panel
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#define FULL_MASK 0xffffffffu

// ---- V0: the library's routine (copied from kernels/small.cu at da1e195, pivot policy off) ----
template <typename real, int LD, int NX>
__device__ __forceinline__ int panel_v0(real (&a)[LD], real (&x)[NX > 0 ? NX : 1][LD], int lane) {
    real d = __shfl_sync(FULL_MASK, a[0], 0);
#pragma unroll
    for (int j = 0; j < LD; ++j) {
        const real p = d;
        if (!(p > real(0)) || !isfinite(p)) return j;
        const real inv = rsqrt(p);
        const real l = a[j] * inv;
        a[j] = lane == j ? p * inv : l;
        real xj[NX > 0 ? NX : 1];
#pragma unroll
        for (int c = 0; c < NX; ++c) xj[c] = x[c][j] *= inv;
#pragma unroll
        for (int k = j + 1; k < LD; ++k) {
            const real lk = __shfl_sync(FULL_MASK, l, k);
            if (k == j + 1) d = fma(-lk, lk, __shfl_sync(FULL_MASK, a[k], k));
            a[k] = fma(-l, lk, a[k]);
#pragma unroll
            for (int c = 0; c < NX; ++c) x[c][k] = fma(-xj[c], lk, x[c][k]);
        }
    }
    return -1;
}

// rsqrt without the slow path: exact same result as rsqrt() for normal positive finite p
// (CUDA's double rsqrt fast path: MUFU.RSQ64H then one correction; float: MUFU.RSQ).
__device__ __forceinline__ double rsqrt_normal(double p) {
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(p));
    // one correction of order 2: y += y·e·(0.5 + 0.375e), e = 1 − p·y²  (as libdevice)
    const double e = fma(-p, y * y, 1.0);
    return fma(fma(0.375, e, 0.5), y * e, y);
}
__device__ __forceinline__ float rsqrt_normal(float p) {
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(p));
    return y;
}
template <typename real> __device__ __forceinline__ real min_normal();
template <> __device__ __forceinline__ double min_normal<double>() { return 2.2250738585072014e-308; }
template <> __device__ __forceinline__ float min_normal<float>() { return 1.17549435e-38f; }

// ---- V1: branch-free columns (the first failing column is recorded, the loop runs on with a
// harmless pivot), rsqrt without slow path. ----
template <typename real, int LD, int NX>
__device__ __forceinline__ int panel_v1(real (&a)[LD], real (&x)[NX > 0 ? NX : 1][LD], int lane) {
    real d = __shfl_sync(FULL_MASK, a[0], 0);
    int fail = -1;
#pragma unroll
    for (int j = 0; j < LD; ++j) {
        const bool ok = d >= min_normal<real>() && d < real(INFINITY);
        fail = (fail < 0 && !ok) ? j : fail;
        const real p = ok ? d : real(1);
        const real inv = rsqrt_normal(p);
        const real l = a[j] * inv;
        a[j] = lane == j ? p * inv : l;
        real xj[NX > 0 ? NX : 1];
#pragma unroll
        for (int c = 0; c < NX; ++c) xj[c] = x[c][j] *= inv;
#pragma unroll
        for (int k = j + 1; k < LD; ++k) {
            const real lk = __shfl_sync(FULL_MASK, l, k);
            if (k == j + 1) d = fma(-lk, lk, __shfl_sync(FULL_MASK, a[k], k));
            a[k] = fma(-l, lk, a[k]);
#pragma unroll
            for (int c = 0; c < NX; ++c) x[c][k] = fma(-xj[c], lk, x[c][k]);
        }
    }
    return fail;
}

// ---- V2: V1 with the next pivot computed by lane j+1 from its own l (one shuffle of d instead of
// shuffle + fma), and the column j+1 update issued first. ----
template <typename real, int LD, int NX>
__device__ __forceinline__ int panel_v2(real (&a)[LD], real (&x)[NX > 0 ? NX : 1][LD], int lane) {
    real d = __shfl_sync(FULL_MASK, a[0], 0);
    int fail = -1;
#pragma unroll
    for (int j = 0; j < LD; ++j) {
        const bool ok = d >= min_normal<real>() && d < real(INFINITY);
        fail = (fail < 0 && !ok) ? j : fail;
        const real p = ok ? d : real(1);
        const real inv = rsqrt_normal(p);
        const real l = a[j] * inv;
        a[j] = lane == j ? p * inv : l;
        real xj[NX > 0 ? NX : 1];
#pragma unroll
        for (int c = 0; c < NX; ++c) xj[c] = x[c][j] *= inv;
        if (j + 1 < LD) {
            const real lk = __shfl_sync(FULL_MASK, l, j + 1);
            a[j + 1] = fma(-l, lk, a[j + 1]);
            d = __shfl_sync(FULL_MASK, a[j + 1], j + 1);
#pragma unroll
            for (int c = 0; c < NX; ++c) x[c][j + 1] = fma(-xj[c], lk, x[c][j + 1]);
        }
#pragma unroll
        for (int k = j + 2; k < LD; ++k) {
            const real lk = __shfl_sync(FULL_MASK, l, k);
            a[k] = fma(-l, lk, a[k]);
#pragma unroll
            for (int c = 0; c < NX; ++c) x[c][k] = fma(-xj[c], lk, x[c][k]);
        }
    }
    return fail;
}


// ---- V3: V1 with each column's broadcasts issued together into distinct registers before the
// FMAs that use them (V1's SASS funnels every shuffle through one register pair, serialising
// SHFL -> FMA pairs on the shuffle latency). ----
template <typename real, int LD, int NX>
__device__ __forceinline__ int panel_v3(real (&a)[LD], real (&x)[NX > 0 ? NX : 1][LD], int lane) {
    real d = __shfl_sync(FULL_MASK, a[0], 0);
    int fail = -1;
#pragma unroll
    for (int j = 0; j < LD; ++j) {
        const bool ok = d >= min_normal<real>() && d < real(INFINITY);
        fail = (fail < 0 && !ok) ? j : fail;
        const real p = ok ? d : real(1);
        const real inv = rsqrt_normal(p);
        const real l = a[j] * inv;
        a[j] = lane == j ? p * inv : l;
        real xj[NX > 0 ? NX : 1];
#pragma unroll
        for (int c = 0; c < NX; ++c) xj[c] = x[c][j] *= inv;
        real lk[LD];
#pragma unroll
        for (int k = j + 1; k < LD; ++k) lk[k] = __shfl_sync(FULL_MASK, l, k);
        if (j + 1 < LD) d = fma(-lk[j + 1], lk[j + 1], __shfl_sync(FULL_MASK, a[j + 1], j + 1));
#pragma unroll
        for (int k = j + 1; k < LD; ++k) {
            a[k] = fma(-l, lk[k], a[k]);
#pragma unroll
            for (int c = 0; c < NX; ++c) x[c][k] = fma(-xj[c], lk[k], x[c][k]);
        }
    }
    return fail;
}

// ---- V4: V1 with column j broadcast through shared memory (each lane stores its l, the warp
// reads the column back two elements per 16-byte load). `col`: this warp's [2][LD] scratch. ----
template <typename T> struct pair2;
template <> struct pair2<double> { typedef double2 type; };
template <> struct pair2<float> { typedef float2 type; };
template <typename real, int LD, int NX>
__device__ __forceinline__ int panel_v4(real (&a)[LD], real (&x)[NX > 0 ? NX : 1][LD], int lane, real* col) {
    typedef typename pair2<real>::type real2;
    real d = __shfl_sync(FULL_MASK, a[0], 0);
    int fail = -1;
#pragma unroll
    for (int j = 0; j < LD; ++j) {
        const bool ok = d >= min_normal<real>() && d < real(INFINITY);
        fail = (fail < 0 && !ok) ? j : fail;
        const real p = ok ? d : real(1);
        const real inv = rsqrt_normal(p);
        const real l = a[j] * inv;
        a[j] = lane == j ? p * inv : l;
        real xj[NX > 0 ? NX : 1];
#pragma unroll
        for (int c = 0; c < NX; ++c) xj[c] = x[c][j] *= inv;
        real* cj = col + (j & 1) * LD;   // double-buffered: no second __syncwarp per column
        if (lane < LD) cj[lane] = l;
        __syncwarp();
        real lk[LD];
#pragma unroll
        for (int k = 0; k < LD; k += 2)
            if (k + 1 > j) {
                const real2 v = *reinterpret_cast<const real2*>(cj + k);
                lk[k] = v.x, lk[k + 1] = v.y;
            }
        if (j + 1 < LD) d = fma(-lk[j + 1], lk[j + 1], __shfl_sync(FULL_MASK, a[j + 1], j + 1));
#pragma unroll
        for (int k = j + 1; k < LD; ++k) {
            a[k] = fma(-l, lk[k], a[k]);
#pragma unroll
            for (int c = 0; c < NX; ++c) x[c][k] = fma(-xj[c], lk[k], x[c][k]);
        }
    }
    return fail;
}

template <typename real, int LD, int NX, int V>
__global__ void bench(const real* A, const real* X, real* outA, real* outX, long long* cycles, int* fails) {
    const int lane = threadIdx.x;
    const long long base = (long long)blockIdx.x * LD * LD;
    real a[LD], x[NX > 0 ? NX : 1][LD];
#pragma unroll
    for (int k = 0; k < LD; ++k) a[k] = A[base + lane + k * LD];
#pragma unroll
    for (int c = 0; c < NX; ++c)
#pragma unroll
        for (int k = 0; k < LD; ++k) x[c][k] = X[(base + lane + k * LD) * (NX > 0 ? NX : 1) + c];
    // make sure the loads have landed before the clock starts
    real s = a[LD - 1] + a[0];
#pragma unroll
    for (int c = 0; c < NX; ++c) s += x[c][LD - 1];
    asm volatile("" ::"r"((int)(s != s)));
    __syncwarp();
    const long long t0 = clock64();
    int f;
    if (V == 0) f = panel_v0<real, LD, NX>(a, x, lane);
    else if (V == 1) f = panel_v1<real, LD, NX>(a, x, lane);
    else if (V == 2) f = panel_v2<real, LD, NX>(a, x, lane);
    else if (V == 3) f = panel_v3<real, LD, NX>(a, x, lane);
    else { __shared__ __align__(16) real col[2 * LD]; f = panel_v4<real, LD, NX>(a, x, lane, col); }
    real t = a[LD - 1];
#pragma unroll
    for (int c = 0; c < NX; ++c) t += x[c][LD - 1];
    asm volatile("" ::"r"((int)(t != t)));
    const long long t1 = clock64();
    if (lane == 0) cycles[blockIdx.x] = t1 - t0, fails[blockIdx.x] = f;
    if (lane < LD) {
#pragma unroll
        for (int k = 0; k < LD; ++k) outA[base + lane + k * LD] = a[k];
#pragma unroll
        for (int c = 0; c < NX; ++c)
#pragma unroll
            for (int k = 0; k < LD; ++k) outX[(base + lane + k * LD) * (NX > 0 ? NX : 1) + c] = x[c][k];
    }
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

template <typename real, int LD, int NX>
void run_shape(const char* tname) {
    const int B = 132;
    const int nxm = NX > 0 ? NX : 1;
    std::vector<real> hA((size_t)B * LD * LD), hX((size_t)B * LD * LD * nxm);
    srand(1234 + LD * 7 + NX);
    for (int b = 0; b < B; ++b) {
        // SPD: M Mᵀ/LD + I
        std::vector<double> M(LD * LD);
        for (auto& v : M) v = (double)rand() / RAND_MAX - 0.5;
        for (int i = 0; i < LD; ++i)
            for (int j = 0; j < LD; ++j) {
                double s = (i == j) ? 1.0 : 0.0;
                for (int k = 0; k < LD; ++k) s += M[i * LD + k] * M[j * LD + k] / LD;
                hA[(size_t)b * LD * LD + i + j * LD] = (real)s;
            }
    }
    for (auto& v : hX) v = (real)((double)rand() / RAND_MAX - 0.5);
    real *dA, *dX, *oA, *oX; long long* cyc; int* fl;
    CK(cudaMalloc(&dA, hA.size() * sizeof(real))); CK(cudaMalloc(&dX, hX.size() * sizeof(real)));
    CK(cudaMalloc(&oA, hA.size() * sizeof(real))); CK(cudaMalloc(&oX, hX.size() * sizeof(real)));
    CK(cudaMalloc(&cyc, B * sizeof(long long))); CK(cudaMalloc(&fl, B * sizeof(int)));
    CK(cudaMemcpy(dA, hA.data(), hA.size() * sizeof(real), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dX, hX.data(), hX.size() * sizeof(real), cudaMemcpyHostToDevice));
    std::vector<real> refA(hA.size()), refX(hX.size()), gA(hA.size()), gX(hX.size());
    std::vector<long long> hc(B); std::vector<int> hf(B);
    for (int v = 0; v < 5; ++v) {
        std::vector<long long> med;
        for (int rep = 0; rep < 5; ++rep) {
            if (v == 0) bench<real, LD, NX, 0><<<B, 32>>>(dA, dX, oA, oX, cyc, fl);
            else if (v == 1) bench<real, LD, NX, 1><<<B, 32>>>(dA, dX, oA, oX, cyc, fl);
            else if (v == 2) bench<real, LD, NX, 2><<<B, 32>>>(dA, dX, oA, oX, cyc, fl);
            else if (v == 3) bench<real, LD, NX, 3><<<B, 32>>>(dA, dX, oA, oX, cyc, fl);
            else bench<real, LD, NX, 4><<<B, 32>>>(dA, dX, oA, oX, cyc, fl);
            CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hc.data(), cyc, B * sizeof(long long), cudaMemcpyDeviceToHost));
            std::sort(hc.begin(), hc.end());
            med.push_back(hc[B / 2]);
        }
        std::sort(med.begin(), med.end());
        CK(cudaMemcpy(hf.data(), fl, B * sizeof(int), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(gA.data(), oA, gA.size() * sizeof(real), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(gX.data(), oX, gX.size() * sizeof(real), cudaMemcpyDeviceToHost));
        if (v == 0) refA = gA, refX = gX;
        double md = 0;
        for (int b = 0; b < B; ++b)
            for (int i = 0; i < LD; ++i)
                for (int k = 0; k <= i; ++k) {
                    size_t q = (size_t)b * LD * LD + i + k * LD;
                    md = std::max(md, std::fabs((double)gA[q] - (double)refA[q]) / (std::fabs((double)refA[q]) + 1e-30));
                }
        for (size_t q = 0; q < gX.size(); ++q)
            md = std::max(md, std::fabs((double)gX[q] - (double)refX[q]) / (std::fabs((double)refX[q]) + 1e-30));
        int nf = 0; for (int b = 0; b < B; ++b) nf += hf[b] >= 0;
        printf("%s LD=%2d NX=%d V%d: %6lld cycles (%5.1f per column), fails %d, max rel diff vs V0 %.2e\n", tname, LD, NX, v,
               med[2], (double)med[2] / LD, nf, md);
    }
    cudaFree(dA); cudaFree(dX); cudaFree(oA); cudaFree(oX); cudaFree(cyc); cudaFree(fl);
}

int main() {
    run_shape<double, 8, 1>("f64");
    run_shape<double, 16, 1>("f64");
    run_shape<double, 32, 0>("f64");
    run_shape<double, 32, 1>("f64");
    run_shape<double, 32, 2>("f64");
    run_shape<float, 8, 1>("f32");
    run_shape<float, 16, 1>("f32");
    run_shape<float, 32, 1>("f32");
    run_shape<float, 32, 2>("f32");
    return 0;
}
