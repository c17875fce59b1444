// Shared definitions of every btchol kernel. NVRTC compiles one module per variant with
//   -DBT_T=double|float   element type
//   -DBT_LD=<padded n>    leading dimension of every stored block (n rounded up for aligned loads)
//   -DBT_NT=<threads>     threads per CTA
//   -DBT_FUSED=0|1        1: stage blocks in shared memory (small n); 0: work in global memory
//   -DBT_SPLIT=0|1        1: a level's fills and updates as 32×32 tiles, one CTA each (64 < n)
//   -DBT_BOOST=0|1        1: the pivot policy (boost small pivots) is compiled in
//   -DBT_ELIMINATE_CLUSTER=0|1  1: the blocked elimination's cluster variant is compiled in (jit.rs
//                         KernelSpec::eliminate_cluster decides where; elsewhere it is a no-op)
//   -DBT_SLD=<stride>     column stride of the couplings the fused factor kernels stage in shared
//                         memory for their products (jit.rs KernelSpec::staged_ld)
// Blocks are column-major with leading dimension BT_LD and block stride BT_LD·BT_LD; the problem's
// own block size n (≤ BT_LD) is a kernel argument.
typedef BT_T real;
#define LD BT_LD
#define NT BT_NT
#define BS ((long long)BT_LD * BT_LD)
#define SLD BT_SLD
// Two elements for 16-byte (f64) or 8-byte (f32) loads and stores.
template <typename T> struct pair_of;
template <> struct pair_of<double> { typedef double2 type; };
template <> struct pair_of<float> { typedef float2 type; };
typedef pair_of<real>::type real2;
// V elements of the element type as one 16-byte (or smaller) load or store.
template <int V> struct vec_of;
template <> struct vec_of<1> { typedef real type; };
template <> struct vec_of<2> { typedef real2 type; };
template <> struct vec_of<4> { typedef float4 type; };  // (f32 only: 16 / sizeof(float))

// std::conditional (NVRTC has no standard headers).
template <bool C, typename T, typename F> struct type_if { typedef T type; };
template <typename T, typename F> struct type_if<false, T, F> { typedef F type; };

// Schedule records, 8 int32 each, written by the host from crate::schedule (the single source):
//   elimination: block, slot_a, survivor_a, slot_c, survivor_c, fill_slot, fill_rows, n_couplings
//   update:      block, slot_0, source_0,   slot_1, source_1,   -1,        0,         n_sources
#define REC 8

// Failure key of an item: level·2^42 + block·2^16 + column, minimum = earliest failing pivot.
#define NO_FAILURE 0xffffffffffffffffull
__device__ __forceinline__ unsigned long long fail_key(int level, int block, int col) {
    return ((unsigned long long)level << 42) | ((unsigned long long)block << 16) | (unsigned long long)col;
}
// Key of an item a batch mask leaves out of this factor or solve (above every failure key, so it
// never wins an atomicMin; restored to the item's own key by btchol_mask_end).
#define MASKED_ITEM 0xfffffffffffffffeull
// An item stops at a level when it is masked out or failed at an earlier level (this level's
// failures are all recorded).
__device__ __forceinline__ bool skip_item(unsigned long long key, int level) {
    return key == MASKED_ITEM || key < fail_key(level, 0, 0);
}

// Programmatic dependent launch (sm_90; engine.rs launches every kernel of this module with it
// unless BTCHOL_PDL=0): a kernel may be scheduled while the previous kernel of the stream still
// runs, so its launch latency hides behind that kernel's work. Every kernel calls this before it
// reads or writes anything an earlier kernel writes (only constant inputs, such as the schedule's
// records, may be touched before), and on every path, early exits included: it returns once the
// previous kernel has finished and its writes are visible, then lets the next kernel be scheduled
// in turn (after the wait, so that at most two kernels hold SM resources). A no-op for kernels
// launched without the attribute and before sm_90.
__device__ __forceinline__ void wait_for_previous_kernel() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Pivot policy (PlanOptions::pivot_threshold / pivot_boost): a finite pivot d ≤ threshold is
// replaced by `boost` when boosting is on (boost > 0); otherwise d is kept and the caller's usual
// check (d > 0, finite) decides. Compiled out (the identity) in variants without boosting.
__device__ __forceinline__ real policy_pivot(real d, real threshold, real boost, bool& boosted) {
#if BT_BOOST
    boosted = !(d > threshold) && boost > real(0) && isfinite(d);
    return boosted ? boost : d;
#else
    boosted = false;
    return d;
#endif
}

// Asynchronous global → shared copies (cp.async, sm_80+; plain copies before): a warp stages the
// next blocks while it computes on the current ones. `wait_async<K>` waits until at most K
// committed groups are still in flight.
__device__ __forceinline__ void copy_async(real* dst, const real* src) {
#if __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(src), "n"(sizeof(real)));
#else
    *dst = *src;
#endif
}
// The same for 16 bytes (both addresses 16-byte aligned), past L1.
__device__ __forceinline__ void copy_async_16(real* dst, const real* src) {
#if __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
#else
    *reinterpret_cast<float4*>(dst) = *reinterpret_cast<const float4*>(src);
#endif
}
// 16 bytes of `real` as one vector (one shared-memory load or store instruction instead of
// VEC16_ELEMS): double2 or float4.
template <typename T> struct vec16_of;
template <> struct vec16_of<double> { typedef double2 type; };
template <> struct vec16_of<float> { typedef float4 type; };
typedef vec16_of<real>::type vec16;
#define VEC16_ELEMS ((int)(16 / sizeof(real)))
__device__ __forceinline__ void commit_async() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int K> __device__ __forceinline__ void wait_async() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(K));
#endif
}

// 1/√p for a pivot p > 0 (finite), inline: the hardware approximation and, in f64, CUDA's
// correction of order two, i.e. rsqrt()'s fast path, the same bits for a normal p. EXACT adds
// rsqrt()'s handling of a subnormal p (f64: scaled by 2^54 before and 2^27 after; f32: rsqrtf),
// which costs the pivot chain a multiply and two selects per column (H100, f64 n = 16, batch of
// 1024 sequential factors: 139 -> 173 µs), so sweeps run without it and are repeated with it in
// the rare case that a pivot was subnormal (potrf_panel_warp returns PANEL_SUBNORMAL).
template <bool EXACT> __device__ __forceinline__ double rsqrt_pivot(double p) {
    const bool tiny = EXACT && p < 2.2250738585072014e-308;  // DBL_MIN
    const double ps = tiny ? p * 18014398509481984.0 : p;    // 2^54
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(ps));
    const double e = fma(ps, -(y * y), 1.0);
    y = fma(fma(e, 0.375, 0.5), y * e, y);
    return tiny ? y * 134217728.0 : y;  // 2^27
}
// rsqrt_pivot<true>(p), the same bits, with the subnormal test after the approximations: both
// scalings side by side, so that a chain of pivots (the blocked sweep's, one column to the next)
// waits on one select after them, not on a test, a multiply and two selects before.
__device__ __forceinline__ double rsqrt_pivot_late(double p) {
    const double y = rsqrt_pivot<false>(p), z = rsqrt_pivot<false>(p * 18014398509481984.0);  // 2^54
    return p < 2.2250738585072014e-308 ? z * 134217728.0 : y;                                  // DBL_MIN; 2^27
}
template <bool EXACT> __device__ __forceinline__ float rsqrt_pivot(float p) {
    if (EXACT) return rsqrtf(p);
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(p));
    return y;
}
__device__ __forceinline__ float rsqrt_pivot_late(float p) { return rsqrt_pivot<true>(p); }
// The FP64 tensor cores (mma m8n8k4, sm_80+): c += a·b over one k-slice of an 8×8 tile; this
// lane's a = A[lane/4][slot lane%4], b = B[slot lane%4][lane/4], c = C[lane/4][2·(lane%4) + {0, 1}].
// All 32 lanes of the warp call it. Callers test DMMA_ARCH (without it, the call does nothing).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define DMMA_ARCH 1
#else
#define DMMA_ARCH 0
#endif
__device__ __forceinline__ void dmma_8x8x4(double (&c)[2], double a, double b) {
#if DMMA_ARCH
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+d"(c[0]), "+d"(c[1])
                 : "d"(a), "d"(b));
#endif
}
// Two 8 × 8 tiles stacked, rows 0..7 in c0 and 8..15 in c1, with the same B slice: c0 += a0·b,
// c1 += a1·b (fragments as dmma_8x8x4's). On sm_90 one mma m16n8k4, whose rate is twice
// m8n8k4's there (66 against 33 TFLOP/s, H200, bench/micro/dmma_shapes.cu); on sm_80 two m8n8k4.
// SKIP0 / SKIP1 (runtime, warp-uniform): leave that tile alone (the other one alone as m8n8k4).
__device__ __forceinline__ void dmma_16x8x4(double (&c0)[2], double (&c1)[2], double a0, double a1, double b,
                                            bool skip0 = false, bool skip1 = false) {
#if DMMA_ARCH && __CUDA_ARCH__ >= 900
    if (!skip0 && !skip1) {
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
                     "{%0, %1, %2, %3};"
                     : "+d"(c0[0]), "+d"(c0[1]), "+d"(c1[0]), "+d"(c1[1])
                     : "d"(a0), "d"(a1), "d"(b));
        return;
    }
#endif
    if (!skip0) dmma_8x8x4(c0, a0, b);
    if (!skip1) dmma_8x8x4(c1, a1, b);
}

// Asks for the 128-byte line at `p` in L1 (a hint: no result, no fault on the line's own data).
__device__ __forceinline__ void prefetch_l1(const void* p) {
    asm volatile("prefetch.global.L1 [%0];\n" ::"l"(p));
}

// Copies a whole LD×LD block (global ↔ shared; blocks are allocated LD×LD, so the padding is
// copied too), all threads: 16-byte pieces, each thread issuing a batch of loads before its
// stores. (Element by element, the compiler cannot move a load above the previous element's
// store, so every element waited a memory latency: ~10 µs of a 27 µs update at f64 n = 64.)
#define COPY_V ((LD * LD) % (16 / sizeof(real)) == 0 ? 16 / sizeof(real) : 1)
#define COPY_BATCH 8
// Copies `count` elements (a multiple of COPY_V, both ends 16-byte aligned), all threads.
__device__ __forceinline__ void copy_elems(real* __restrict__ dst, const real* __restrict__ src, int count) {
    typedef typename vec_of<COPY_V>::type piece;
    const int pieces = count / COPY_V;
    const piece* s = reinterpret_cast<const piece*>(src);
    piece* d = reinterpret_cast<piece*>(dst);
    for (int base = 0; base < pieces; base += NT * COPY_BATCH) {
        piece buf[COPY_BATCH];
#pragma unroll
        for (int b = 0; b < COPY_BATCH; ++b) {
            const int idx = base + b * NT + threadIdx.x;
            if (idx < pieces) buf[b] = s[idx];
        }
#pragma unroll
        for (int b = 0; b < COPY_BATCH; ++b) {
            const int idx = base + b * NT + threadIdx.x;
            if (idx < pieces) d[idx] = buf[b];
        }
    }
}
__device__ __forceinline__ void copy_block(real* __restrict__ dst, const real* __restrict__ src) {
    copy_elems(dst, src, LD * LD);
}
// The same into shared memory with column stride SLD (the fused factor kernels' staged couplings).
// (Written out beside copy_elems on purpose: one lambda-indexed copy for both made the 192-thread
// update kernel 3–5 % slower at f64 n = 64, N = 1024 / 4096; H200 A/B 2026-12-02,
// bench/results/ab/nvidia-h200-2026-12-02-copy-pieces-ab.csv.)
__device__ __forceinline__ void copy_block_staged(real* __restrict__ dst, const real* __restrict__ src) {
    constexpr int V = LD % (16 / sizeof(real)) == 0 && SLD % (16 / sizeof(real)) == 0 ? 16 / sizeof(real) : 1;
    typedef typename vec_of<V>::type piece;
    constexpr int per_col = LD / V, pieces = LD * per_col;
    const piece* s = reinterpret_cast<const piece*>(src);
    for (int base = 0; base < pieces; base += NT * COPY_BATCH) {
        piece buf[COPY_BATCH];
#pragma unroll
        for (int b = 0; b < COPY_BATCH; ++b) {
            const int idx = base + b * NT + threadIdx.x;
            if (idx < pieces) buf[b] = s[idx];
        }
#pragma unroll
        for (int b = 0; b < COPY_BATCH; ++b) {
            const int idx = base + b * NT + threadIdx.x;
            if (idx < pieces) *reinterpret_cast<piece*>(dst + idx / per_col * SLD + idx % per_col * V) = buf[b];
        }
    }
}

// Hopper (sm_90) thread-block clusters, mbarriers and bulk (TMA) copies, for kernels whose CTAs
// cooperate through cluster barriers instead of kernel boundaries (kernels/small.cu
// btchol_solve_cluster_small). Only compiled for sm_90 and later.
#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned cluster_size() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}
// Every thread of the cluster meets every other; no memory ordering beyond what mbarriers give
// (with release semantics the arrive is a GPU-scope fence: ~730 against ~46 ns per barrier on
// the H100, bench/micro/cluster_phase.cu).
__device__ __forceinline__ void cluster_barrier_relaxed() {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
}
// The two halves of that barrier, for a thread that has work to do between them. A relaxed
// arrive orders nothing: it is for readers whose loaded values were all used before it.
__device__ __forceinline__ void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait;" ::: "memory"); }
// This CTA's shared-memory address `local` in the CTA of cluster rank `rank`.
__device__ __forceinline__ unsigned cluster_map(unsigned local, unsigned rank) {
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(local), "r"(rank));
    return r;
}
// Stores v at `remote` (a shared::cluster address) and counts its bytes on the mbarrier `bar`
// of the same CTA (complete_tx, release at cluster scope): the receiver's wait on `bar` then sees
// the value, with no fence on the sender's side.
__device__ __forceinline__ void store_async(unsigned remote, double v, unsigned bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];" ::"r"(remote),
                 "l"(__double_as_longlong(v)), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void store_async(unsigned remote, float v, unsigned bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(remote),
                 "r"(__float_as_uint(v)), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void store_async(unsigned remote, unsigned long long v, unsigned bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];" ::"r"(remote), "l"(v),
                 "r"(bar)
                 : "memory");
}
// The same for two neighbouring elements (16-byte aligned): one store.
__device__ __forceinline__ void store_async_pair(unsigned remote, double v0, double v1, unsigned bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f64 [%0], {%1, %2}, [%3];" ::"r"(remote),
                 "d"(v0), "d"(v1), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void store_async_pair(unsigned remote, float v0, float v1, unsigned bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(remote),
                 "f"(v0), "f"(v1), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrivals) : "memory");
}
// The barrier's current phase also waits for `bytes` more of bulk copies.
__device__ __forceinline__ void mbar_expect_tx(unsigned long long* bar, unsigned bytes) {
    asm volatile("mbarrier.expect_tx.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// Arrives and makes the current phase also wait for `bytes` of asynchronous stores or copies.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
// Polls the barrier until its phase of the given parity has completed, acquiring at SCOPE.
#define BT_MBAR_WAIT(SCOPE, bar, parity)                                                      \
    asm volatile("{\n\t.reg .pred P1;\n\tLAB_WAIT:\n\t"                                      \
                 "mbarrier.try_wait.parity.acquire." SCOPE ".shared::cta.b64 P1, [%0], %1;\n\t" \
                 "@P1 bra DONE;\n\tbra LAB_WAIT;\n\tDONE:\n\t}" ::"r"(smem_addr(bar)),            \
                 "r"(parity)                                                                  \
                 : "memory")
// Waits at cluster scope (what other CTAs' store_async counted on the barrier is then visible).
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) { BT_MBAR_WAIT("cluster", bar, parity); }
// The same for a barrier between the warps of one CTA: acquiring at CTA scope, so a poll does not
// invalidate L1 (the cluster-scope acquire compiles to CCTL.IVALL per poll: a third of the stall
// samples of btchol_solve_seq_inv_small, ncu, H100, 2026-11-27).
__device__ __forceinline__ void mbar_wait_cta(unsigned long long* bar, unsigned parity) { BT_MBAR_WAIT("cta", bar, parity); }
// One thread copies `bytes` (a multiple of 16, both ends 16-byte aligned) from global to this
// CTA's shared memory; completion is counted on `bar` (mbar_expect_tx first).
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, unsigned bytes,
                                                    unsigned long long* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}
#endif
