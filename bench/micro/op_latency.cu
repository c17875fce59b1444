// Microbenchmark: the dependent latency, in SM cycles, of the operations on the blocked sweep's
// pivot chain (kernels/block_ops.cuh panel_sweep_warp: one warp per SM sub-partition, one column
// after another): FP64 multiply and FMA, the inline reciprocal square root of common.cuh
// (rsqrt.approx.ftz.f64 and its order-two correction), a 64-bit shuffle, a shared-memory round
// trip through __syncwarp, a compare-and-select, and one whole column of the sweep's chain. One
// warp (or WARPS warps, one per sub-partition) runs a chain of ITERS dependent steps between two
// clock64() reads; the result is cycles per step, the median of 9 launches.
//   nvcc -arch=sm_90 -O3 -std=c++17 -o op_latency op_latency.cu && ./op_latency
#include <algorithm>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#define ITERS 1024

__device__ __forceinline__ double rsqrt_fast(double p) {
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(p));
    const double e = fma(p, -(y * y), 1.0);
    return fma(fma(e, 0.375, 0.5), y * e, y);
}
// As common.cuh rsqrt_pivot_late: both scalings side by side, the subnormal test after.
__device__ __forceinline__ double rsqrt_late(double p) {
    const double ps = p * 18014398509481984.0;
    double y, z;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(p));
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(z) : "d"(ps));
    const double e = fma(p, -(y * y), 1.0), f = fma(ps, -(z * z), 1.0);
    y = fma(fma(e, 0.375, 0.5), y * e, y);
    z = fma(fma(f, 0.375, 0.5), z * f, z);
    return p < 2.2250738585072014e-308 ? z * 134217728.0 : y;
}

enum Op { DMUL, DFMA, RSQRT, SHFL, SMEM, SELECT, COLUMN, COLUMN_SHFL };
const char* const NAMES[] = {"dmul", "dfma", "rsqrt (approx + order-2 correction)", "shfl 64-bit",
                             "shared store, __syncwarp, load", "dsetp + select", "sweep column (no shuffle)",
                             "sweep column (pivot by shuffle)"};

template <int OP>
__global__ void chain(double* out, long long* cycles, double seed) {
    __shared__ double s[4][32];
    const int lane = threadIdx.x & 31, w = threadIdx.x / 32;
    double x = seed + lane * 1e-3, c = 0.999 + lane * 1e-6, pre = 2.0;
    __syncwarp();
    const long long t0 = clock64();
#pragma unroll 8
    for (int i = 0; i < ITERS; ++i) {
        if constexpr (OP == DMUL) {
            x = x * c;
        } else if constexpr (OP == DFMA) {
            x = fma(x, c, 1e-9);
        } else if constexpr (OP == RSQRT) {
            x = rsqrt_fast(x);
        } else if constexpr (OP == SHFL) {
            x = __shfl_sync(0xffffffffu, x, (lane + 1) & 31);
        } else if constexpr (OP == SMEM) {
            s[w][lane] = x;
            __syncwarp();
            x = s[w][(lane + 1) & 31];
            __syncwarp();
        } else if constexpr (OP == SELECT) {
            x = x > 0.5 && x < 1e300 ? x : 1.0;
            x = x * c;  // (a multiply to keep the chain from being folded)
        } else {
            // One column of panel_sweep_warp's chain: d → its reciprocal square root (subnormal
            // and policy selects after it) → next = d' − (c·rs·rs)·c, or (COLUMN_SHFL) lane j+1's
            // own value taken by a shuffle after the FMA, then the select before the square root.
            const double d = OP == COLUMN_SHFL ? (x > 0.0 && x < 1e300 ? x : 1.0) : x;
            const double y = rsqrt_late(d);
            const double rs = OP == COLUMN_SHFL ? y : (x > 0.0 && x < 1e300 ? y : 1.0);
            const double v = fma(-(c * rs * rs), c, pre);
            x = OP == COLUMN_SHFL ? __shfl_sync(0xffffffffu, v, (lane + 1) & 31) : v;
        }
    }
    const long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
    if (lane == 0) cycles[w] = t1 - t0;
}

template <int OP>
double measure(int warps, double* out, long long* cycles) {
    std::vector<double> v;
    for (int r = 0; r < 9; ++r) {
        chain<OP><<<1, 32 * warps>>>(out, cycles, 1.5);
        long long h[4];
        cudaMemcpy(h, cycles, sizeof h, cudaMemcpyDeviceToHost);
        v.push_back(double(*std::max_element(h, h + warps)) / ITERS);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <int OP>
void row(double* out, long long* cycles) {
    printf("%-38s %8.1f %8.1f\n", NAMES[OP], measure<OP>(1, out, cycles), measure<OP>(4, out, cycles));
}

int main() {
    double* out;
    long long* cycles;
    cudaMalloc(&out, 4096 * sizeof(double));
    cudaMalloc(&cycles, 4 * sizeof(long long));
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("%s: dependent latency, SM cycles per step (%d steps, median of 9)\n", p.name, ITERS);
    printf("%-38s %8s %8s\n", "operation", "1 warp", "4 warps");
    row<DMUL>(out, cycles);
    row<DFMA>(out, cycles);
    row<RSQRT>(out, cycles);
    row<SHFL>(out, cycles);
    row<SMEM>(out, cycles);
    row<SELECT>(out, cycles);
    row<COLUMN>(out, cycles);
    row<COLUMN_SHFL>(out, cycles);
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("CUDA error: %s\n", cudaGetErrorString(e));
        return 1;
    }
    return 0;
}
