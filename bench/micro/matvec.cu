// Microbenchmark: one dependent 32×32 matrix-vector product from shared memory, the step the
// cluster solve (kernels/small.cu btchol_solve_cluster_small) chains on its critical path, in
// cycles per product. Each way runs a chain of products v ← A·v (every product waits for the one
// before, as a phase's do); clock64 around the chain, median over CTAs (one per SM):
//   warp         the library's warp_matvec<false>: one warp, a lane per row, 32 FMAs per lane
//   warp-T       the library's warp_matvec<true> (Aᵀ·v), XOR order
//   warp-spin    `warp` while the CTA's 8 other warps spin on an mbarrier that never completes
//                (as idle warps of the solve wait for later phases)
//   split4       4 warps, each 8 columns of A; partial sums through shared memory, one named
//                barrier of the 4 warps per product (partials double-buffered)
//   split8       the same with 8 warps, 4 columns each
//   split4-T     split4 for Aᵀ·v (each warp 8 rows of A)
//   warp-acc8    `warp` with 8 partial sums instead of 4
//   warp-regs    `warp` with the lane's row of A in registers, loaded before the chain (as a
//                block that arrived before the vector could be): only v is read per product
//   warp-shfl    `warp-regs` with v in registers too (lane k's element broadcast by shuffles)
// Checks every way's final vector against the first's.
//   nvcc -arch=sm_90 -O3 -std=c++17 -o matvec matvec.cu && ./matvec
#include <algorithm>
#include <cstdio>
#include <vector>

#define LD 32
#define THREADS 288
#define CHAIN 64

template <typename real>
struct Vec2;
template <>
struct Vec2<double> {
    using T = double2;
};
template <>
struct Vec2<float> {
    using T = float2;
};

template <typename real, bool TRANS>
__device__ __forceinline__ real warp_matvec(const real* A, const real* v, int lane) {
    real s[4] = {0, 0, 0, 0};
    if (!TRANS) {
        const real* a = A + lane;
#pragma unroll
        for (int k = 0; k < LD; k += 2) {
            const typename Vec2<real>::T vk = *reinterpret_cast<const typename Vec2<real>::T*>(v + k);
            s[k & 3] = fma(a[k * LD], vk.x, s[k & 3]);
            s[(k + 1) & 3] = fma(a[(k + 1) * LD], vk.y, s[(k + 1) & 3]);
        }
    } else {
        const real* a = A + lane * LD;
#pragma unroll
        for (int t = 0; t < LD; ++t) {
            const int k = t ^ lane;
            s[t & 3] = fma(a[k], v[k], s[t & 3]);
        }
    }
    return (s[0] + s[1]) + (s[2] + s[3]);
}

// W warps, warp w sums columns (rows with TRANS) [w·LD/W, (w+1)·LD/W) into its partial; every
// warp then adds the W partials of the buffer, so each holds the product.
template <typename real, bool TRANS, int W>
__device__ __forceinline__ real split_matvec(const real* A, const real* v, real* part, int warp, int lane) {
    constexpr int K = LD / W;
    const int k0 = warp * K;
    real s0 = 0, s1 = 0;
#pragma unroll
    for (int k = 0; k < K; k += 2) {
        if (!TRANS) {
            s0 = fma(A[(k0 + k) * LD + lane], v[k0 + k], s0);
            s1 = fma(A[(k0 + k + 1) * LD + lane], v[k0 + k + 1], s1);
        } else {
            s0 = fma(A[lane * LD + ((k0 + k) ^ lane)], v[(k0 + k) ^ lane], s0);
            s1 = fma(A[lane * LD + ((k0 + k + 1) ^ lane)], v[(k0 + k + 1) ^ lane], s1);
        }
    }
    part[warp * LD + lane] = s0 + s1;
    asm volatile("bar.sync 2, %0;" ::"n"(W * 32) : "memory");
    real r = 0;
#pragma unroll
    for (int w = 0; w < W; ++w) r += part[w * LD + lane];
    return r;
}

template <typename real>
__device__ __forceinline__ real warp_matvec8(const real* A, const real* v, int lane) {
    real s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const real* a = A + lane;
#pragma unroll
    for (int k = 0; k < LD; k += 2) {
        const typename Vec2<real>::T vk = *reinterpret_cast<const typename Vec2<real>::T*>(v + k);
        s[k & 7] = fma(a[k * LD], vk.x, s[k & 7]);
        s[(k + 1) & 7] = fma(a[(k + 1) * LD], vk.y, s[(k + 1) & 7]);
    }
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}
template <typename real>
__device__ __forceinline__ real regs_matvec(const real (&row)[LD], const real* v) {
    real s[4] = {0, 0, 0, 0};
#pragma unroll
    for (int k = 0; k < LD; k += 2) {
        const typename Vec2<real>::T vk = *reinterpret_cast<const typename Vec2<real>::T*>(v + k);
        s[k & 3] = fma(row[k], vk.x, s[k & 3]);
        s[(k + 1) & 3] = fma(row[k + 1], vk.y, s[(k + 1) & 3]);
    }
    return (s[0] + s[1]) + (s[2] + s[3]);
}
template <typename real>
__device__ __forceinline__ real shfl_matvec(const real (&row)[LD], real vl) {
    real s[4] = {0, 0, 0, 0};
#pragma unroll
    for (int k = 0; k < LD; ++k) s[k & 3] = fma(row[k], __shfl_sync(0xffffffffu, vl, k), s[k & 3]);
    return (s[0] + s[1]) + (s[2] + s[3]);
}

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

template <typename real>
__global__ void __launch_bounds__(THREADS, 1) chain(const real* A0, real* out, long long* cycles, int way) {
    __shared__ __align__(16) real A[LD * LD];
    __shared__ __align__(16) real v[2][LD];
    __shared__ __align__(16) real part[2][8 * LD];
    __shared__ __align__(8) unsigned long long never;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int i = threadIdx.x; i < LD * LD; i += THREADS) A[i] = A0[i];
    if (threadIdx.x < LD) v[0][threadIdx.x] = real(1);
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&never)) : "memory");
    __syncthreads();
    const int W = way == 3 ? 4 : way == 4 ? 8 : way == 5 ? 4 : 1;
    if (way == 2 && warp > 0) {  // spin until warp 0 arrives at the end
        asm volatile(
            "{\n\t.reg .pred P1;\n\tLAB_WAIT:\n\t"
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P1, [%0], 0;\n\t"
            "@P1 bra DONE;\n\tbra LAB_WAIT;\n\tDONE:\n\t}" ::"r"(smem_addr(&never))
            : "memory");
        return;
    }
    if (warp >= W) return;
    const real scale = real(1) / real(LD);
    real row[LD];
#pragma unroll
    for (int k = 0; k < LD; ++k) row[k] = A[k * LD + lane];
    real vl = v[0][lane];
    long long t0 = clock64();
    for (int it = 0; it < CHAIN; ++it) {
        const real* vin = v[it & 1];
        real r;
        switch (way) {
            case 0:
            case 2: r = warp_matvec<real, false>(A, vin, lane); break;
            case 1: r = warp_matvec<real, true>(A, vin, lane); break;
            case 3: r = split_matvec<real, false, 4>(A, vin, part[it & 1], warp, lane); break;
            case 4: r = split_matvec<real, false, 8>(A, vin, part[it & 1], warp, lane); break;
            case 5: r = split_matvec<real, true, 4>(A, vin, part[it & 1], warp, lane); break;
            case 6: r = warp_matvec8<real>(A, vin, lane); break;
            case 7: r = regs_matvec<real>(row, vin); break;
            default: r = shfl_matvec<real>(row, vl); vl = r * scale; break;
        }
        if (warp == 0) v[(it + 1) & 1][lane] = r * scale;
        if (W == 1)
            __syncwarp();
        else if (W == 4)
            asm volatile("bar.sync 3, 128;" ::: "memory");
        else
            asm volatile("bar.sync 3, 256;" ::: "memory");
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) {
        cycles[blockIdx.x] = t1 - t0;
        if (way == 2) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(&never)) : "memory");
    }
    if (warp == 0) out[blockIdx.x * LD + lane] = v[CHAIN & 1][lane];
}

template <typename real>
void run(const char* dtype) {
    const char* names[] = {"warp", "warp-T", "warp-spin", "split4", "split8", "split4-T", "warp-acc8", "warp-regs", "warp-shfl"};
    int sms;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    std::vector<real> a(LD * LD);
    for (int i = 0; i < LD * LD; ++i) a[i] = real((i * 37 % 101) / 101.0);
    real *dA, *dout;
    long long* dc;
    cudaMalloc(&dA, sizeof(real) * LD * LD);
    cudaMalloc(&dout, sizeof(real) * LD * sms);
    cudaMalloc(&dc, sizeof(long long) * sms);
    cudaMemcpy(dA, a.data(), sizeof(real) * LD * LD, cudaMemcpyHostToDevice);
    std::vector<real> ref(LD), outv(LD * sms);
    for (int way = 0; way < 9; ++way) {
        std::vector<long long> c(sms);
        for (int rep = 0; rep < 3; ++rep) chain<real><<<sms, THREADS>>>(dA, dout, dc, way);
        cudaMemcpy(c.data(), dc, sizeof(long long) * sms, cudaMemcpyDeviceToHost);
        cudaMemcpy(outv.data(), dout, sizeof(real) * LD * sms, cudaMemcpyDeviceToHost);
        std::sort(c.begin(), c.end());
        if (way == 0) std::copy(outv.begin(), outv.begin() + LD, ref.begin());
        double err = 0;
        const bool trans = way == 1 || way == 5;
        if (!trans)
            for (int i = 0; i < LD; ++i) err = std::max(err, (double)std::abs(outv[i] - ref[i]) / std::abs(ref[i]));
        printf("%s %-9s %7.1f cycles per product%s  (rel. diff to warp %.1e)\n", dtype, names[way],
               (double)c[sms / 2] / CHAIN, cudaGetLastError() ? " ERROR" : "", err);
    }
    cudaFree(dA);
    cudaFree(dout);
    cudaFree(dc);
}

int main() {
    run<double>("f64");
    run<float>("f32");
    return 0;
}
