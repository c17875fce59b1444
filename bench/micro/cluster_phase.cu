// Microbenchmark: the fixed cost of one phase of a cluster solve (kernels/small.cu
// btchol_solve_cluster_small), i.e. how long it takes for a vector that one CTA of a 16-CTA
// cluster writes in phase p to be readable by another CTA in phase p + 1, for ways of moving it:
//   bar-relaxed   cluster barrier without release/acquire (no data: the barrier's own floor)
//   bar           cluster barrier with release/acquire (no data)
//   l2            the library's way: __stcg to global, barrier (release/acquire), __ldcg in the
//                 next phase (the vector goes through L2)
//   dsmem-bar     st.shared::cluster of the vector into every CTA's replica, barrier
//                 (release/acquire), ld.shared in the next phase
//   dsmem-mbar    st.async of the vector into every CTA's replica, completing on the receiver's
//                 mbarrier (complete_tx), which each CTA waits on instead of a cluster barrier
// Each phase, warp 0 of every CTA reads the 32-element vector that CTA (rank + phase) mod 16 wrote
// in the phase before, adds one and publishes its own; the other warps only join the barriers.
// Prints ns per phase (median of launches) and checks the final vectors.
//   nvcc -arch=sm_90 -O3 -std=c++17 -o cluster_phase cluster_phase.cu && ./cluster_phase
#include <cstdio>
#include <vector>
#include <algorithm>

#define CS 16
#define THREADS 288
#define PHASES 256
#define VEC 32

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned rank_in_cluster() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void bar_acqrel() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void bar_relaxed() {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
}
__device__ __forceinline__ unsigned remote(unsigned local, unsigned rank) {
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(local), "r"(rank));
    return r;
}
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(n) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect(unsigned long long* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait_cluster(unsigned long long* bar, unsigned parity) {
    asm volatile(
        "{\n\t.reg .pred P1;\n\tLAB_WAIT:\n\t"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P1, [%0], %1;\n\t"
        "@P1 bra DONE;\n\tbra LAB_WAIT;\n\tDONE:\n\t}" ::"r"(smem_addr(bar)),
        "r"(parity)
        : "memory");
}

template <int MODE>
__global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(THREADS, 1) phases(double* y, double* out, long long* ns) {
    __shared__ __align__(16) double rep[2][CS][VEC];
    __shared__ __align__(8) unsigned long long bars[2];
    const unsigned rank = rank_in_cluster();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    double* yc = y + (blockIdx.x / CS) * 2 * CS * VEC;  // [2][CS][VEC] per cluster
    if (threadIdx.x == 0) {
        mbar_init(&bars[0], 1), mbar_init(&bars[1], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    for (int i = threadIdx.x; i < 2 * CS * VEC; i += THREADS) (&rep[0][0][0])[i] = 0;
    bar_acqrel();
    if (MODE == 4 && threadIdx.x == 0) mbar_arrive_expect(&bars[0], 0), mbar_arrive_expect(&bars[1], CS * VEC * 8);
    bar_acqrel();
    long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    double v = 0;
    for (int ph = 0; ph < PHASES; ++ph) {
        const int src = (rank + ph) % CS, buf = ph & 1;
        if (MODE == 4) mbar_wait_cluster(&bars[buf], (ph >> 1) & 1);
        if (warp == 0) {
            if (MODE == 2) v = __ldcg(yc + (buf * CS + src) * VEC + lane) + 1;
            if (MODE == 3 || MODE == 4) v = rep[buf][src][lane] + 1;
            if (MODE == 2) __stcg(yc + ((buf ^ 1) * CS + rank) * VEC + lane, v);
            if (MODE == 3) {
                const unsigned a = smem_addr(&rep[buf ^ 1][rank][lane]);
#pragma unroll
                for (unsigned r = 0; r < CS; ++r)
                    asm volatile("st.shared::cluster.f64 [%0], %1;" ::"r"(remote(a, r)), "d"(v) : "memory");
            }
            if (MODE == 4) {
                const unsigned a = smem_addr(&rep[buf ^ 1][rank][lane]), b = smem_addr(&bars[buf ^ 1]);
#pragma unroll
                for (unsigned r = 0; r < CS; ++r)
                    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];" ::"r"(
                                     remote(a, r)),
                                 "l"(__double_as_longlong(v)), "r"(remote(b, r))
                                 : "memory");
            }
        }
        if (MODE == 0) bar_relaxed();
        if (MODE == 1 || MODE == 2 || MODE == 3) bar_acqrel();
        if (MODE == 4) {
            __syncthreads();  // (every warp past this phase's wait before the barrier is re-armed)
            if (threadIdx.x == 0) mbar_arrive_expect(&bars[buf], CS * VEC * 8);
        }
    }
    long long t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (warp == 0) out[blockIdx.x * VEC + lane] = v;
    if (threadIdx.x == 0) ns[blockIdx.x] = t1 - t0;
    bar_acqrel();  // (no CTA leaves while others may still write its shared memory)
}

int main() {
    const char* names[] = {"bar-relaxed", "bar", "l2", "dsmem-bar", "dsmem-mbar"};
    const int clusters = 8, grid = clusters * CS;
    double *y, *out;
    long long* ns;
    cudaMalloc(&y, clusters * 2 * CS * VEC * 8);
    cudaMalloc(&out, grid * VEC * 8);
    cudaMalloc(&ns, grid * 8);
    void (*k[])(double*, double*, long long*) = {phases<0>, phases<1>, phases<2>, phases<3>, phases<4>};
    for (int mode = 0; mode < 5; ++mode) {
        // (16 CTAs per cluster is beyond the portable 8: allowed per kernel.)
        cudaFuncSetAttribute(k[mode], cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
        std::vector<double> per;
        double expect_ok = 1;
        for (int rep = 0; rep < 21; ++rep) {
            cudaMemset(y, 0, clusters * 2 * CS * VEC * 8);
            k[mode]<<<grid, THREADS>>>(y, out, ns);
            cudaError_t e = cudaGetLastError();
            if (e == cudaSuccess) e = cudaDeviceSynchronize();
            if (e != cudaSuccess) {
                printf("%s: %s\n", names[mode], cudaGetErrorString(e));
                return 1;
            }
            std::vector<long long> h(grid);
            cudaMemcpy(h.data(), ns, grid * 8, cudaMemcpyDeviceToHost);
            per.push_back((double)*std::max_element(h.begin(), h.end()) / PHASES);
            std::vector<double> o(grid * VEC);
            cudaMemcpy(o.data(), out, grid * VEC * 8, cudaMemcpyDeviceToHost);
            // Each phase adds one to a vector that was itself one phase old: the final value is PHASES.
            if (mode >= 2)
                for (double x : o)
                    if (x != PHASES) expect_ok = 0;
        }
        std::sort(per.begin(), per.end());
        printf("%-12s %7.1f ns per phase (min %.1f)%s\n", names[mode], per[per.size() / 2], per[0],
               mode >= 2 ? (expect_ok ? "  values ok" : "  VALUES WRONG") : "");
    }
    return 0;
}
