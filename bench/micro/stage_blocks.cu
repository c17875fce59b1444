// Microbenchmark: how long a CTA takes to stage K factor blocks (LD×LD, f64: 8 KB each) from
// global memory into shared memory, the wait before the cluster solve's first phase
// (kernels/small.cu btchol_solve_cluster_small: its producer lane issues one bulk copy per block).
// 16 CTAs (as a cluster solve's), each its own K blocks; ns from the CTA's start to every block
// in shared memory (globaltimer), median over CTAs and launches. The blocks are L2-resident (read
// by the launch before) or not (a 200 MB sweep in between: from HBM).
//   tma-1       one thread issues the K bulk copies (cp.async.bulk) on one mbarrier (the library)
//   tma-lanes   lane k of warp 0 issues copy k (the issue in parallel)
//   tma-split   each block as 4 bulk copies of 2 KB, issued by 4K lanes
//   ld-st       all 288 threads: 16-byte loads into registers, then stores to shared memory
//   cp-async    all 288 threads: cp.async 16-byte copies (LDGSTS), one commit and wait
//   nvcc -arch=sm_90 -O3 -std=c++17 -o stage_blocks stage_blocks.cu && ./stage_blocks
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#define LD 32
#define BS (LD * LD)
#define THREADS 288
#define CTAS 16
#define KMAX 24

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned long long gtime() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

template <int WAY>
__global__ void __launch_bounds__(THREADS, 1) stage(const double* src, int k, unsigned long long* ns, double* sink) {
    extern __shared__ __align__(128) unsigned char smem[];
    unsigned long long* bar = reinterpret_cast<unsigned long long*>(smem);
    double* ring = reinterpret_cast<double*>(smem + 128);
    const double* mine = src + (long long)blockIdx.x * KMAX * BS;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    if (t == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    const unsigned long long t0 = gtime();
    const unsigned bytes = BS * sizeof(double);
    if (WAY <= 2) {
        const int pieces = WAY == 2 ? 4 : 1, per = bytes / pieces;
        if (t == 0)
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(k * bytes)
                         : "memory");
        __syncthreads();
        for (int q = (WAY == 0 ? (t == 0 ? 0 : 1 << 30) : t); q < k * pieces; q += (WAY == 0 ? 1 : THREADS)) {
            const char* s = reinterpret_cast<const char*>(mine) + (long long)q * per;
            char* d = reinterpret_cast<char*>(ring) + (long long)q * per;
            asm volatile(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                    smem_addr(d)),
                "l"(s), "r"(per), "r"(smem_addr(bar))
                : "memory");
        }
        asm volatile(
            "{\n\t.reg .pred P1;\n\tLAB_WAIT:\n\t"
            "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n\t"
            "@P1 bra DONE;\n\tbra LAB_WAIT;\n\tDONE:\n\t}" ::"r"(smem_addr(bar))
            : "memory");
    } else if (WAY == 3) {
        const int n16 = k * bytes / 16;
        const uint4* s = reinterpret_cast<const uint4*>(mine);
        uint4* d = reinterpret_cast<uint4*>(ring);
        for (int p0 = 0; p0 * THREADS < n16; p0 += 8) {  // (8 loads in flight per thread)
            uint4 r[8];
#pragma unroll
            for (int p = 0; p < 8; ++p)
                if (t + (p0 + p) * THREADS < n16) r[p] = __ldcg(s + t + (p0 + p) * THREADS);
#pragma unroll
            for (int p = 0; p < 8; ++p)
                if (t + (p0 + p) * THREADS < n16) d[t + (p0 + p) * THREADS] = r[p];
        }
        __syncthreads();
    } else {
        const int n16 = k * bytes / 16;
        for (int i = t; i < n16; i += THREADS)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(ring + 2 * i)), "l"(mine + 2 * i)
                         : "memory");
        asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
        __syncthreads();
    }
    const unsigned long long t1 = gtime();
    if (t == 0) ns[blockIdx.x] = t1 - t0;
    if (t < 32 && ring[t * 37 % (k * BS)] == 12345.0) sink[0] = 1;  // (keeps the copies)
    (void)lane, (void)warp;
}

__global__ void sweep(double* big, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        big[i] += 1;
}

template <int WAY>
double run(const double* src, int k, bool from_hbm, double* big, long long nbig, unsigned long long* dns, double* sink) {
    const int smem = 128 + KMAX * BS * 8;
    cudaFuncSetAttribute(stage<WAY>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    std::vector<unsigned long long> all;
    for (int rep = 0; rep < 21; ++rep) {
        if (from_hbm) sweep<<<528, 256>>>(big, nbig);
        else stage<WAY><<<CTAS, THREADS, smem>>>(src, k, dns, sink);  // (brings the blocks into L2)
        stage<WAY><<<CTAS, THREADS, smem>>>(src, k, dns, sink);
        std::vector<unsigned long long> h(CTAS);
        cudaMemcpy(h.data(), dns, sizeof(unsigned long long) * CTAS, cudaMemcpyDeviceToHost);
        if (rep > 0) all.insert(all.end(), h.begin(), h.end());
    }
    std::sort(all.begin(), all.end());
    return cudaGetLastError() ? -1.0 : (double)all[all.size() / 2];
}

int main() {
    double *src, *big, *sink;
    unsigned long long* dns;
    const long long nbig = 200ll << 20 >> 3;
    cudaMalloc(&src, sizeof(double) * CTAS * KMAX * BS);
    cudaMemset(src, 0, sizeof(double) * CTAS * KMAX * BS);
    cudaMalloc(&big, sizeof(double) * nbig);
    cudaMemset(big, 0, sizeof(double) * nbig);
    cudaMalloc(&dns, sizeof(unsigned long long) * CTAS);
    cudaMalloc(&sink, sizeof(double));
    const char* names[] = {"tma-1", "tma-lanes", "tma-split", "ld-st", "cp-async"};
    printf("ns to stage K blocks of 8 KB per CTA, 16 CTAs (median)\n%-10s %-4s", "way", "from");
    const int ks[] = {4, 8, 12, 16, 24};
    for (int k : ks) printf(" %7s", ("K=" + std::to_string(k)).c_str());
    printf("\n");
    for (int from = 0; from < 2; ++from)
        for (int w = 0; w < 5; ++w) {
            printf("%-10s %-4s", names[w], from ? "HBM" : "L2");
            for (int k : ks) {
                double v = w == 0   ? run<0>(src, k, from, big, nbig, dns, sink)
                           : w == 1 ? run<1>(src, k, from, big, nbig, dns, sink)
                           : w == 2 ? run<2>(src, k, from, big, nbig, dns, sink)
                           : w == 3 ? run<3>(src, k, from, big, nbig, dns, sink)
                                    : run<4>(src, k, from, big, nbig, dns, sink);
                printf(" %7.0f", v);
            }
            printf("\n");
        }
    return 0;
}
