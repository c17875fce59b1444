// Microbenchmark: FP64 tensor-core throughput of the mma.sync shapes, to choose the one the
// kernels' DMMA updates use. sm_80 has m8n8k4 only; sm_90 adds m16n8k4, m16n8k8 and m16n8k16.
// Every warp of a full grid runs ACC independent accumulator chains (so the MMA latency is
// hidden) for ITERS steps; operands are registers (no memory traffic), so this is the pipe's
// ceiling. Reports TFLOP/s per shape (cudaEvent, median of 7 launches) and checks each shape's
// result against the closed form (every product of the same constants).
//   nvcc -arch=sm_90 -O3 -std=c++17 -o dmma_shapes dmma_shapes.cu && ./dmma_shapes
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#define ACC 8
#define ITERS 4096

enum Shape { M8N8K4, M16N8K4, M16N8K8, M16N8K16 };
template <int S>
struct Dims;
template <>
struct Dims<M8N8K4> { static constexpr int m = 8, n = 8, k = 4, a = 1, b = 1, c = 2; };
template <>
struct Dims<M16N8K4> { static constexpr int m = 16, n = 8, k = 4, a = 2, b = 1, c = 4; };
template <>
struct Dims<M16N8K8> { static constexpr int m = 16, n = 8, k = 8, a = 4, b = 2, c = 4; };
template <>
struct Dims<M16N8K16> { static constexpr int m = 16, n = 8, k = 16, a = 8, b = 4, c = 4; };

template <int S>
__device__ __forceinline__ void mma(double (&c)[4], const double (&a)[8], const double (&b)[4]) {
    if constexpr (S == M8N8K4)
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                     : "+d"(c[0]), "+d"(c[1]) : "d"(a[0]), "d"(b[0]));
    else if constexpr (S == M16N8K4)
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                     : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3]) : "d"(a[0]), "d"(a[1]), "d"(b[0]));
    else if constexpr (S == M16N8K8)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
                     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
                     : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
                     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
                       "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
}

// a = 2^-12, b = 2^-12 (exact products): after ITERS steps each C entry is ITERS·k·2^-24.
template <int S>
__global__ void __launch_bounds__(256) run(double* out) {
    double a[8], b[4], c[ACC][4] = {};
    for (int i = 0; i < 8; ++i) a[i] = 1.0 / 4096;
    for (int i = 0; i < 4; ++i) b[i] = 1.0 / 4096;
#pragma unroll 1
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
        for (int q = 0; q < ACC; ++q) mma<S>(c[q], a, b);
    double s = 0;
    for (int q = 0; q < ACC; ++q)
        for (int e = 0; e < Dims<S>::c; ++e) s += c[q][e];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int S>
void measure(const char* name, int sms) {
    using d = Dims<S>;
    const int blocks = sms * 4, threads = 256;
    double* out;
    cudaMalloc(&out, sizeof(double) * blocks * threads);
    run<S><<<blocks, threads>>>(out);  // (warm-up)
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    std::vector<float> ms;
    for (int r = 0; r < 7; ++r) {
        cudaEventRecord(e0);
        run<S><<<blocks, threads>>>(out);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float t;
        cudaEventElapsedTime(&t, e0, e1);
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    std::vector<double> h(blocks * threads);
    cudaMemcpy(h.data(), out, sizeof(double) * h.size(), cudaMemcpyDeviceToHost);
    const double expect = ACC * d::c * double(ITERS) * d::k / (4096.0 * 4096.0);
    int bad = 0;
    for (double v : h) bad += std::fabs(v - expect) > 1e-12 * expect;
    const double flops = 2.0 * d::m * d::n * d::k * ACC * ITERS * (double(blocks) * threads / 32);
    std::printf("%-10s %8.3f ms  %6.1f TFLOP/s  %s\n", name, ms[3], flops / (ms[3] * 1e-3) / 1e12,
                bad ? "WRONG" : "ok");
    cudaFree(out);
}

int main() {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    std::printf("%s, %d SMs; %d warps of %d accumulator chains per SM, %d steps\n", p.name, p.multiProcessorCount,
                32, ACC, ITERS);
    measure<M8N8K4>("m8n8k4", p.multiProcessorCount);
    measure<M16N8K4>("m16n8k4", p.multiProcessorCount);
    measure<M16N8K8>("m16n8k8", p.multiProcessorCount);
    measure<M16N8K16>("m16n8k16", p.multiProcessorCount);
    return cudaGetLastError() != cudaSuccess;
}
