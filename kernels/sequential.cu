// Per-item sequential block Cholesky (paper Algorithm 1) for batches of short systems, BT_LD ≤ 32:
// one warp per item (a warp pair for batches too small to fill the device, btchol_factor_seq_pair_small)
// sweeps its N blocks, so a batch needs one launch and no grid-wide
// synchronisation, and does the fewest flops (no fill-in; nested dissection does ≈ 2.7×).
// Lane i holds row i of the current block in registers; the next step's blocks are staged into
// shared memory with cp.async while the warp computes, so the sweep waits on arithmetic, not on
// memory latency. Storage as the CPU backend's sequential algorithm (src/cpu/sequential.rs):
// D̂_i overwrites D_i in `diag` (lower part), L_{i+1,i} = E_i·D̂_i⁻ᵀ overwrites E_i in slot i
// (column-major; the plan uploads E_i untransposed for this algorithm).
#if BT_LD <= 32
#define SEQ_THREADS 32
// Padded leading dimension of the solves' shared blocks (the sequential solves here, the chunk
// sweeps in chunks.cu): lane i reading row i or column i is free of bank conflicts either way.
// Where LD is a multiple of two 16-byte pieces (SEQ_VEC), LD + one piece: the blocks are staged by
// 16-byte copies (stage_block) and columns read 16 bytes per load (load_col), whose column starts
// then fall on distinct 16-byte bank groups for 8 consecutive lanes (LD / piece + 1 odd), the
// minimum 4 wavefronts a warp. Otherwise LD + 1, by 8-byte copies and loads. Fewer instructions is
// the point: the chunk sweeps were issue-bound on the 8-byte copies' index arithmetic (Nsight
// Compute, H200, 2026-11-28: 22.8 % issue slots busy). jit.rs KernelSpec::solve_block_ld has the
// same rule.
#define SEQ_VEC (LD % (2 * VEC16_ELEMS) == 0)
#define SEQ_SLD (SEQ_VEC ? LD + VEC16_ELEMS : LD + 1)
// The chunk sweeps' (chunks.cu) alternative to that padding, a smaller footprint for the same
// conflict-free reads: blocks unpadded, piece p of column c (P pieces of 16 bytes a column) kept at
// p ^ s(c), s(c) = (c / R) mod P with R = max(1, 8 / P) columns a 128-byte bank row. Lane i
// reading column i, a piece per load, then hits 8 distinct bank groups in any 8 consecutive lanes;
// lane i reading row i stays inside the one column. Where P is a power of two (SEQ_SWIZZLE_OK).
// (f32 blocks of 32 padded to SEQ_SLD took a sweep CTA to 28.3 KB, 7 CTAs per SM instead of 8;
// swizzled, 24.6 KB, and the f32 n = 32, N = 16384 solve 209.7 → 186.3 µs on the H200, same bits:
// bench/results/ab/README.md, 2026-11-29.)
#define SEQ_SWIZZLE_OK (SEQ_VEC && ((LD / VEC16_ELEMS) & (LD / VEC16_ELEMS - 1)) == 0)
// Offset of element (r, c) of a shared block with leading dimension BLD, or swizzled (BLD = LD).
template <int BLD, bool SWIZZLE> __device__ __forceinline__ int block_at(int r, int c) {
    if constexpr (SWIZZLE) {
        static_assert(BLD == LD && SEQ_SWIZZLE_OK, "a swizzled block is unpadded, in 16-byte pieces");
        constexpr int V = VEC16_ELEMS, P = LD >= V ? LD / V : 1, R = P >= 8 ? 1 : 8 / P;  // (P: ≥ 1 to compile anywhere)
        return c * LD + ((r / V) ^ (c / R % P)) * V + r % V;
    } else {
        return r + c * BLD;
    }
}

// Stages an LD×LD block (global, leading dimension LD) into shared memory with leading dimension
// DST_LD, asynchronously, by one warp (the caller commits the group); LOWER: only the pieces that
// hold the lower triangle (diagonal included; the source's upper part must be zero, as L⁻¹'s
// is: a piece across the diagonal moves whole), about half the bytes, dst's upper part keeping
// what it held (zero_upper). By 16-byte copies where both leading dimensions keep the columns
// 16-byte aligned, fully unrolled: half the copies or fewer, and no address arithmetic beyond a
// constant per copy (the chunk sweeps were issue-bound on the 8-byte copies' index arithmetic:
// Nsight Compute, H200, 2026-11-28); element by element otherwise.
template <int DST_LD, bool LOWER = false, bool SWIZZLE = false>
__device__ __forceinline__ void stage_block(real* dst, const real* src, int lane) {
    constexpr int V = VEC16_ELEMS;
    if constexpr (LD % V == 0 && DST_LD % V == 0) {
        constexpr int COL_PIECES = LD / V, PIECES = LD * COL_PIECES;
#pragma unroll
        for (int t = 0; t < (PIECES + SEQ_THREADS - 1) / SEQ_THREADS; ++t) {
            const int idx = lane + SEQ_THREADS * t, c = idx / COL_PIECES, r = idx % COL_PIECES * V;
            if ((PIECES % SEQ_THREADS == 0 || idx < PIECES) && (!LOWER || r + V > c))
                copy_async_16(dst + block_at<DST_LD, SWIZZLE>(r, c), src + r + c * LD);
        }
    } else {
        for (int idx = lane; idx < LD * LD; idx += SEQ_THREADS)
            if (!LOWER || idx % LD >= idx / LD) copy_async(dst + block_at<DST_LD, SWIZZLE>(idx % LD, idx / LD), src + idx);
    }
}
// Column c of a shared block with leading dimension BLD (or swizzled; c = 0: a vector) into r[].
template <int BLD = SEQ_SLD, bool SWIZZLE = false>
__device__ __forceinline__ void load_col(real (&r)[LD], const real* B, int c) {
    if constexpr (SEQ_VEC && BLD % VEC16_ELEMS == 0) {
#pragma unroll
        for (int k = 0; k < LD; k += VEC16_ELEMS) {
            const vec16 piece = *reinterpret_cast<const vec16*>(B + block_at<BLD, SWIZZLE>(k, c));
#pragma unroll
            for (int e = 0; e < VEC16_ELEMS; ++e) r[k + e] = reinterpret_cast<const real*>(&piece)[e];
        }
    } else {
#pragma unroll
        for (int k = 0; k < LD; ++k) r[k] = B[block_at<BLD, SWIZZLE>(k, c)];
    }
}
// (Aᵀ·x)_lane, A a shared block with leading dimension SEQ_SLD, x_k held by lane k:
// matvec_warp(A, SEQ_SLD, 1, x, lane) with the lane's column by load_col.
__device__ __forceinline__ real matvec_trans_warp(const real* A, real x, int lane) {
    real a[LD];
    load_col(a, A, lane < LD ? lane : 0);
    real s[2] = {real(0), real(0)};
#pragma unroll
    for (int k = 0; k < LD; ++k) s[k & 1] += (lane < LD ? a[k] : real(0)) * __shfl_sync(FULL_MASK, x, k);
    return s[0] + s[1];
}
// Zeroes the upper part (above the diagonal) of a block with leading dimension DST_LD.
template <int DST_LD, bool SWIZZLE = false> __device__ __forceinline__ void zero_upper(real* dst, int lane) {
    for (int idx = lane; idx < LD * LD; idx += SEQ_THREADS)
        if (idx % LD < idx / LD) dst[block_at<DST_LD, SWIZZLE>(idx % LD, idx / LD)] = real(0);
}

// acc[k] −= Σ_{q0 ≤ q < q1} X[lane][q]·X[k][q] (X column-major in shared memory).
__device__ __forceinline__ void syrk_columns(real (&acc)[LD], const real* X, int q0, int q1, int lane) {
#pragma unroll
    for (int q = 0; q < LD; ++q)
        if (q >= q0 && q < q1) axpy_tail(acc, lane < LD ? X[lane + q * LD] : real(0), X + q * LD, 0);
}

// One warp's sweep over an item's right-hand sides, in place in y[col·rows + row] (both solves).
// The right-hand side is a register pipeline over the units (step, column) in sweep order: each
// unit loads the next unit's rows before its own products, and with one column the previous
// step's result stays in a register, so no step waits on a global round trip (ncu, 2026-11-23:
// the two loads' latency was 21 % of the warps' stall samples, n = 16, B = 1024).
struct SeqSweep {
    real* yb;
    int rows, n, n_blocks, m, lane;
    real next = real(0), prev = real(0);  // b of the next unit; the last result (with m = 1)
    // Row `lane` of block `i`, column `c` (0 outside the system).
    __device__ real row(int i, int c) const {
        return (lane < n && i >= 0 && i < n_blocks) ? yb[(long long)c * rows + (long long)i * n + lane] : real(0);
    }
    // The sweep's first unit: block 0 forward, block N − 1 backward (after the forward sweep wrote
    // it: each lane reads back only rows it wrote itself).
    __device__ void begin(bool forward) { next = row(forward ? 0 : n_blocks - 1, 0); }
    // Step i for every column: v ← b_i − X_{i−1}·y_{i−1} forward (X_iᵀ·x_{i+1} backward), then
    // diag(v), the diagonal block's solve.
    // (X's leading dimension: SEQ_SLD in the solve's staged blocks, LD in the factor's sX.)
    template <bool FORWARD, int XLD = SEQ_SLD, class Diag>
    __device__ __forceinline__ void step(int i, const real* X, Diag diag) {
        for (int c = 0; c < m; ++c) {
            real v = next;
            next = c + 1 < m ? row(i, c + 1) : row(FORWARD ? i + 1 : i - 1, 0);
            if (FORWARD ? i > 0 : i + 1 < n_blocks) {
                const real u = m == 1 ? prev : row(FORWARD ? i - 1 : i + 1, c);
                v -= FORWARD ? matvec_warp(X, 1, XLD, u, lane) : matvec_trans_warp(X, u, lane);
            }
            v = diag(v);
            if (lane < n) yb[(long long)c * rows + (long long)i * n + lane] = v;
            prev = v;
        }
    }
};

// Factor: for i = 0..N−1: D_i ← D_i − X_{i−1}·X_{i−1}ᵀ, D̂_i ← chol(D_i), X_i ← E_i·D̂_i⁻ᵀ.
// D_i and E_i are staged STAGES − 1 steps ahead: 2 overlaps each warp's copies with its own
// chain; 1 keeps 3 blocks of shared memory instead of 5 (24 KB instead of 40 at f64 ld = 32), so
// that more items are resident per SM where the batch is large (engine.rs seq_one_warp_stages).
// Dynamic shared memory: seq_factor_smem_bytes (jit.rs): D and E (STAGES each), X.
// FORWARD (the factor-and-solve call, engine.rs Sequence::FactorSolve): the forward substitution
// rides along, y_i ← D̂_i⁻¹(b_i − X_{i−1}·y_{i−1}) on the m right-hand sides in
// y[item·item_rhs + col·rows + row] with D̂_i still in registers and X_{i−1} still in sX, the same
// operations in the same order as btchol_solve_seq_small's forward sweep (same bits), which then
// runs only its backward sweep: the solve reads the factor once instead of twice.
template <int STAGES, bool FORWARD>
__device__ __forceinline__ void factor_seq_warp(real* diag, real* slots, int n_blocks, int n, long long item_diag,
                                                long long item_slots, unsigned long long* fail, real piv_thr,
                                                real piv_boost, unsigned* boosted, real* y, int m, int rows,
                                                long long item_rhs) {
    constexpr int AHEAD = STAGES - 1;  // (buffer indices: 0 with one stage, step parity with two)
    wait_for_previous_kernel();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* sD = reinterpret_cast<real*>(smem_raw);  // [STAGES][BS] D_i, D_{i+1}
    real* sE = sD + STAGES * BS;                    // [STAGES][BS] E_i, E_{i+1}
    real* sX = sE + STAGES * BS;                    // X_{i−1}, column-major
    const int item = blockIdx.x, lane = threadIdx.x;
    if (fail[item] != NO_FAILURE) return;  // masked out
    real* D = diag + item * item_diag;
    real* S = slots + item * item_slots;
    if (AHEAD) {
        stage_block<LD>(sD, D, lane);
        if (n_blocks > 1) stage_block<LD>(sE, S, lane);
    }
    commit_async();
    __shared__ __align__(16) real s_col[2 * LD];  // potrf_panel_warp's column scratch
    real x[1][LD];  // this lane's row of X_{i−1}, then of X_i
#pragma unroll
    for (int k = 0; k < LD; ++k) x[0][k] = real(0);
    SeqSweep sweep{FORWARD ? y + item * item_rhs : nullptr, rows, n, n_blocks, m, lane};
    if (FORWARD) sweep.begin(true);
    int nboost = 0;
    for (int i = 0; i < n_blocks; ++i) {
        const int cur = i & AHEAD;
        // Stage step i + AHEAD (with two stages while step i computes; the buffers of step i−1
        // are free: the warp finished with them before the last __syncwarp).
        if (i + AHEAD < n_blocks) stage_block<LD>(sD + (cur ^ AHEAD) * BS, D + (i + AHEAD) * BS, lane);
        if (i + AHEAD + 1 < n_blocks) stage_block<LD>(sE + (cur ^ AHEAD) * BS, S + (i + AHEAD) * BS, lane);
        commit_async();
        wait_async<AHEAD>();
        __syncwarp();
        real a[LD];
        const real* Di = sD + cur * BS;
        load_diag_rows(a, Di, n, lane);
        if (i > 0) {
            // a[k] −= Σ_q X[lane][q]·X[k][q] (sX holds X column-major: X[k][q] at k + q·LD).
#pragma unroll
            for (int q = 0; q < LD; ++q) axpy_tail(a, x[0][q], sX + q * LD, 0);
        }
        // X_i ← E_i·D̂_i⁻ᵀ rides along the Cholesky of D_i (zero rows after the last block).
        const real* Ei = sE + cur * BS;
#pragma unroll
        for (int k = 0; k < LD; ++k) x[0][k] = (i + 1 < n_blocks && lane < LD) ? Ei[lane + k * LD] : real(0);
        const int boosted_before = nboost;
        // (Pivot from the shared column, not by shuffle: this sweep is throughput-bound.)
        int f = potrf_panel_warp<1, false, false>(a, x, lane, piv_thr, piv_boost, nboost, s_col);
        if (f == PANEL_SUBNORMAL) {  // rare: the step again with the exact square root (small.cu rsqrt_pivot)
            nboost = boosted_before;
            load_diag_rows(a, Di, n, lane);
            if (i > 0) syrk_columns(a, sX, 0, LD, lane);  // (X_{i−1}'s rows from sX: x[] now holds E_i's)
#pragma unroll
            for (int k = 0; k < LD; ++k) x[0][k] = (i + 1 < n_blocks && lane < LD) ? Ei[lane + k * LD] : real(0);
            f = potrf_panel_warp<1, true, false>(a, x, lane, piv_thr, piv_boost, nboost, s_col);
        }
        if (f >= 0) {
            if (lane == 0) atomicMin(&fail[item], fail_key(0, i, f));
            break;
        }
        real* Dg = D + i * BS;
#pragma unroll
        for (int k = 0; k < LD; ++k)
            if (lane < n && k <= lane) Dg[lane + k * LD] = a[k];
        if (FORWARD) {
            // Row `lane` of D̂_i as the solve forms it (identity beyond n), its pivot by select,
            // not a[lane]. A copy, captured by value: a[] (or l[]) taken by reference put it in
            // local memory for the whole factor (NVRTC 13.0: 128 B of stack at f64 LD = 16, the
            // B = 1024, N = 32 factor-solve 2.3× slower, H200 2026-11-29).
            real l[LD], dii = real(1);
#pragma unroll
            for (int k = 0; k < LD; ++k) {
                l[k] = (lane < n && k <= lane) ? a[k] : real(lane == k ? 1 : 0);
                if (k == lane) dii = a[k];
            }
            const real rdi = real(1) / (lane < n ? dii : real(1));
            sweep.template step<true, LD>(i, sX, [=](real v) { return trsv_lower_warp(v, l, rdi, lane); });
        }
        __syncwarp();  // every lane has read X_{i−1} from sX
        if (i + 1 < n_blocks) {
            real* Xg = S + i * BS;
#pragma unroll
            for (int k = 0; k < LD; ++k) {
                if (lane < LD) Xg[lane + k * LD] = x[0][k];
                if (lane < LD) sX[lane + k * LD] = x[0][k];
            }
        }
        __syncwarp();
    }
    wait_async<0>();
    if (lane == 0 && nboost > 0) boosted[item] = (unsigned)nboost;
}
#define BT_FACTOR_SEQ_WARP(NAME, STAGES)                                                                           \
    extern "C" __global__ void __launch_bounds__(SEQ_THREADS)                                                      \
        NAME(real* diag, real* slots, int n_blocks, int n, long long item_diag, long long item_slots,              \
             unsigned long long* fail, real piv_thr, real piv_boost, unsigned* boosted) {                          \
        factor_seq_warp<STAGES, false>(diag, slots, n_blocks, n, item_diag, item_slots, fail, piv_thr, piv_boost,  \
                                       boosted, nullptr, 0, 0, 0);                                                 \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(SEQ_THREADS)                                                      \
        NAME##_forward(real* diag, real* slots, int n_blocks, int n, long long item_diag, long long item_slots,    \
                       unsigned long long* fail, real piv_thr, real piv_boost, unsigned* boosted, real* y, int m,  \
                       int rows, long long item_rhs) {                                                             \
        factor_seq_warp<STAGES, true>(diag, slots, n_blocks, n, item_diag, item_slots, fail, piv_thr, piv_boost,   \
                                      boosted, y, m, rows, item_rhs);                                              \
    }
BT_FACTOR_SEQ_WARP(btchol_factor_seq_small, 2)
BT_FACTOR_SEQ_WARP(btchol_factor_seq_small_1stage, 1)

// Factor, a warp pair per item, for batches too small to fill the device (each SM then holds a
// warp or two, and a step is the one warp's chain: the syrk D_{i+1} − X_i·X_iᵀ, ~1K FMAs per lane
// at LD = 32, then the pivot chain of D_{i+1}'s Cholesky). The warp that factors step i (the
// producer) writes each column of X_i to sX as it becomes final; the other warp (the consumer)
// accumulates X_i·X_iᵀ from those columns meanwhile, so when step i ends it holds D_{i+1}, updated,
// in registers and factors it next: the roles alternate, and a step costs its pivot chain and the
// last chunk of the syrk. Warp w stages its own blocks (D_p, E_p for p ≡ w mod 2, the syrk's
// sum is added to D_p at the end), so cp.async groups stay per warp. The columns are handed over
// in SEQ_CHUNKS chunks, each through a named barrier of the two warps. (A sync on both sides:
// the consumer is nearly always there first, so the producer does not wait; with bar.arrive on
// the producer's side compute-sanitizer's racecheck reports every handed-over column as a
// hazard.) Same storage, failure keys and pivot policy as btchol_factor_seq_small; the pivot
// comes by shuffle (PIVOT_SHUFFLE), as in the latency-bound level kernels.
#define SEQ_PAIR_THREADS 64
#define SEQ_CHUNKS (LD < 4 ? LD : 4)
// Named barriers (0 is __syncthreads): chunk c of a step of parity `par`; the handshake of a step
// swept again with the exact square root (PANEL_SUBNORMAL: the consumer is done with the first
// sweep's columns, then the exact sweep's columns are in).
#define SEQ_CHUNK_BAR(par, c) (1 + (par) * SEQ_CHUNKS + (c))
#define SEQ_REDO_ACK_BAR (1 + 2 * SEQ_CHUNKS)
#define SEQ_REDO_DONE_BAR (2 + 2 * SEQ_CHUNKS)

// The non-aligned barrier.sync, not bar.sync (= barrier.sync.aligned): the producer reaches it
// inside the unrolled sweep, where the compiler does not keep the warp converged, and an aligned
// barrier with divergent lanes is undefined (compute-sanitizer's synccheck: "Divergent thread(s)
// in block", also with a __syncwarp() before it). H200: n = 32 −2 %, n = 16 +9 % against bar.sync.
__device__ __forceinline__ void pair_bar_sync(int id) {
    asm volatile("barrier.sync %0, %1;" ::"r"(id), "n"(SEQ_PAIR_THREADS) : "memory");
}

// D_p's rows from shared memory plus the syrk's sum (identity padding beyond n).
__device__ __forceinline__ void load_updated_rows(real (&a)[LD], const real* D, const real (&acc)[LD], int n, int lane) {
    load_diag_rows(a, D, n, lane);
#pragma unroll
    for (int k = 0; k < LD; ++k) a[k] += acc[k];
}

// potrf_panel_warp's column hook in the producer: X_p[lane][j] to sX, and after the last column of
// a chunk (but the last chunk, handed over once the step's status is known) the chunk's barrier.
struct PublishColumns {
    real* X;
    int lane, par;
    bool announce;
    __device__ __forceinline__ void operator()(int j, const real* xj) const {
        if (lane < LD) X[lane + j * LD] = xj[0];
        const int c = j * SEQ_CHUNKS / LD;
        if (announce && (j + 1) * SEQ_CHUNKS % LD == 0 && c + 1 < SEQ_CHUNKS) pair_bar_sync(SEQ_CHUNK_BAR(par, c));
    }
};

// Dynamic shared memory: seq_pair_factor_smem_bytes (jit.rs): D_p and E_p per warp, X by parity.
extern "C" __global__ void __launch_bounds__(SEQ_PAIR_THREADS) btchol_factor_seq_pair_small(
    real* diag, real* slots, int n_blocks, int n, long long item_diag, long long item_slots, unsigned long long* fail,
    real piv_thr, real piv_boost, unsigned* boosted) {
    wait_for_previous_kernel();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int item = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    real* sD = reinterpret_cast<real*>(smem_raw) + warp * BS;  // this warp's D_p
    real* sE = sD + 2 * BS;                                   // and E_p
    real* sX = reinterpret_cast<real*>(smem_raw) + 4 * BS;    // [2][BS] X_p by the parity of p
    __shared__ __align__(16) real s_col[2][2 * LD];            // potrf_panel_warp's scratch, per warp
    __shared__ int s_status;  // the producer's sweep result (−1, a failing column, PANEL_SUBNORMAL)
    if (fail[item] != NO_FAILURE) return;  // masked out
    real* D = diag + item * item_diag;
    real* S = slots + item * item_slots;
    auto stage = [&](int p) {  // this warp's blocks of step p
        if (p < n_blocks) stage_block<LD>(sD, D + p * BS, lane);
        if (p + 1 < n_blocks) stage_block<LD>(sE, S + p * BS, lane);
        commit_async();
    };
    // The consumer of step s: a ← D_{s+1} − X_s·X_sᵀ; false where step s failed.
    auto consume = [&](int s, real(&a)[LD]) -> bool {
        const real* X = sX + (s & 1) * BS;
        real acc[LD];
#pragma unroll
        for (int k = 0; k < LD; ++k) acc[k] = real(0);
#pragma unroll
        for (int c = 0; c < SEQ_CHUNKS; ++c) {
            pair_bar_sync(SEQ_CHUNK_BAR(s & 1, c));
            syrk_columns(acc, X, c * LD / SEQ_CHUNKS, (c + 1) * LD / SEQ_CHUNKS, lane);
        }
        int status = *(volatile int*)&s_status;
        if (status == PANEL_SUBNORMAL) {
            pair_bar_sync(SEQ_REDO_ACK_BAR);
            pair_bar_sync(SEQ_REDO_DONE_BAR);
#pragma unroll
            for (int k = 0; k < LD; ++k) acc[k] = real(0);
            syrk_columns(acc, X, 0, LD, lane);
            status = *(volatile int*)&s_status;
        }
        if (status >= 0) return false;
        wait_async<0>();
        __syncwarp();
        load_updated_rows(a, sD, acc, n, lane);
        return true;
    };
    stage(warp);
    real a[LD];
    bool go;
    if (warp == 0) {
        wait_async<0>();
        __syncwarp();
        load_diag_rows(a, sD, n, lane);
        go = true;
    } else {
        go = n_blocks > 1 && consume(0, a);
    }
    int nboost = 0;
    for (int p = warp; go; p += 2) {  // produce step p (a: D_p, updated), then consume step p + 1
        const bool publish = p + 1 < n_blocks;  // (X_p exists)
        real* X = sX + (p & 1) * BS;
        real x[1][LD];
        auto load_x = [&] {
#pragma unroll
            for (int k = 0; k < LD; ++k) x[0][k] = (publish && lane < LD) ? sE[lane + k * LD] : real(0);
        };
        load_x();
        const int boosted_before = nboost;
        int f = potrf_panel_warp<1, false, true>(a, x, lane, piv_thr, piv_boost, nboost, s_col[warp],
                                                 PublishColumns{X, lane, p & 1, publish});
        if (f == PANEL_SUBNORMAL) {  // rare: the step again with the exact square root (small.cu rsqrt_pivot)
            nboost = boosted_before;
            if (publish) {
                if (lane == 0) s_status = PANEL_SUBNORMAL;
                pair_bar_sync(SEQ_CHUNK_BAR(p & 1, SEQ_CHUNKS - 1));
                pair_bar_sync(SEQ_REDO_ACK_BAR);
            }
            // D_p as staged, minus X_{p−1}·X_{p−1}ᵀ (the other warp's columns, untouched until
            // it has consumed this step).
            real acc[LD];
#pragma unroll
            for (int k = 0; k < LD; ++k) acc[k] = real(0);
            if (p > 0) syrk_columns(acc, sX + ((p - 1) & 1) * BS, 0, LD, lane);
            load_updated_rows(a, sD, acc, n, lane);
            load_x();
            f = potrf_panel_warp<1, true, true>(a, x, lane, piv_thr, piv_boost, nboost, s_col[warp],
                                                PublishColumns{X, lane, p & 1, false});
            if (publish) {
                if (lane == 0) s_status = f;
                pair_bar_sync(SEQ_REDO_DONE_BAR);
            }
        } else if (publish) {
            if (lane == 0) s_status = f;
            pair_bar_sync(SEQ_CHUNK_BAR(p & 1, SEQ_CHUNKS - 1));
        }
        if (f >= 0) {
            if (lane == 0) atomicMin(&fail[item], fail_key(0, p, f));
            break;
        }
        __syncwarp();  // every lane has read D_p and E_p
        stage(p + 2);
        real* Dg = D + p * BS;
#pragma unroll
        for (int k = 0; k < LD; ++k)
            if (lane < n && k <= lane) Dg[lane + k * LD] = a[k];
        if (publish) {
            real* Xg = S + p * BS;
#pragma unroll
            for (int k = 0; k < LD; ++k)
                if (lane < LD) Xg[lane + k * LD] = x[0][k];
        }
        go = p + 2 < n_blocks && consume(p + 1, a);
    }
    wait_async<0>();
    if (lane == 0 && nboost > 0) atomicAdd(&boosted[item], (unsigned)nboost);
}


// Solve, one warp per item: forward y_i ← D̂_i⁻¹(b_i − X_{i−1}·y_{i−1}), then backward
// x_i ← D̂_i⁻ᵀ(y_i − X_iᵀ·x_{i+1}), in place in y[item·item_rhs + col·rows + row] (SeqSweep);
// backward_only: y already holds the forward sweep's result (btchol_factor_seq_small_forward).
// A step's blocks are staged STAGES − 1 steps ahead: 2 overlaps each warp's copies with its own
// products; 1 halves the static shared memory (17 KB instead of 34 at f64 ld = 32), so that more
// items are resident per SM where the batch is large, and the other resident warps hide the
// copies (engine.rs seq_one_warp_stages).
template <int STAGES>
__device__ __forceinline__ void solve_seq_warp(const real* diag, const real* slots, real* y, int n_blocks, int n,
                                               int m, int rows, long long item_diag, long long item_slots,
                                               long long item_rhs, const unsigned long long* fail,
                                               int backward_only) {
    wait_for_previous_kernel();
    __shared__ real sL[STAGES][LD * SEQ_SLD], sX[STAGES][LD * SEQ_SLD];
    const int item = blockIdx.x, lane = threadIdx.x;
    if (fail[item] != NO_FAILURE) return;
    const real* D = diag + item * item_diag;
    const real* S = slots + item * item_slots;
    SeqSweep sweep{y + item * item_rhs, rows, n, n_blocks, m, lane};
    constexpr int AHEAD = STAGES - 1;  // (buffer indices: 0 with one stage, step parity with two)
    // Forward: step i needs D̂_i and X_{i−1} (none after the factor that did it, backward_only).
    if (AHEAD && !backward_only) stage_block<SEQ_SLD>(sL[0], D, lane);
    commit_async();
    if (!backward_only) sweep.begin(true);
    for (int i = 0; i < (backward_only ? 0 : n_blocks); ++i) {
        const int cur = i & AHEAD;
        if (i + AHEAD < n_blocks) {
            stage_block<SEQ_SLD>(sL[cur ^ AHEAD], D + (i + AHEAD) * BS, lane);
            if (AHEAD || i > 0) stage_block<SEQ_SLD>(sX[cur ^ AHEAD], S + (i + AHEAD - 1) * BS, lane);
        }
        commit_async();
        wait_async<AHEAD>();
        __syncwarp();
        const real* L = sL[cur];
        const real* X = sX[cur];
        real l[LD];
#pragma unroll
        for (int k = 0; k < LD; ++k) l[k] = (lane < n && k <= lane) ? L[lane + k * SEQ_SLD] : real(lane == k ? 1 : 0);
        const real rdi = real(1) / (lane < n ? L[lane + lane * SEQ_SLD] : real(1));
        sweep.step<true>(i, X, [&](real v) { return trsv_lower_warp(v, l, rdi, lane); });
        __syncwarp();
    }
    // Backward: step i needs D̂_i and X_i.
    wait_async<0>();
    __syncwarp();
    if (AHEAD) stage_block<SEQ_SLD>(sL[0], D + (n_blocks - 1) * BS, lane);
    commit_async();
    sweep.begin(false);
    for (int i = n_blocks - 1, buf = 0; i >= 0; --i, buf ^= AHEAD) {
        if (i >= AHEAD) {
            stage_block<SEQ_SLD>(sL[buf ^ AHEAD], D + (i - AHEAD) * BS, lane);
            if (AHEAD || i + 1 < n_blocks) stage_block<SEQ_SLD>(sX[buf ^ AHEAD], S + (i - AHEAD) * BS, lane);
        }
        commit_async();
        wait_async<AHEAD>();
        __syncwarp();
        const real* L = sL[buf];
        const real* X = sX[buf];
        // Lane i holds column i of D̂_i (row i of D̂_iᵀ).
        real lc[LD];
        load_col(lc, L, lane < LD ? lane : 0);
#pragma unroll
        for (int k = 0; k < LD; ++k) lc[k] = (lane < n && k < n && k >= lane) ? lc[k] : real(lane == k ? 1 : 0);
        const real rdi = real(1) / (lane < n ? L[lane + lane * SEQ_SLD] : real(1));
        sweep.step<false>(i, X, [&](real v) { return trsv_lower_trans_warp(v, lc, rdi, lane); });
        __syncwarp();
    }
}
#define BT_SOLVE_SEQ_WARP(NAME, STAGES)                                                                            \
    extern "C" __global__ void __launch_bounds__(SEQ_THREADS)                                                      \
        NAME(const real* diag, const real* slots, real* y, int n_blocks, int n, int m, int rows, long long item_diag, \
             long long item_slots, long long item_rhs, const unsigned long long* fail, int backward_only) {        \
        solve_seq_warp<STAGES>(diag, slots, y, n_blocks, n, m, rows, item_diag, item_slots, item_rhs, fail,      \
                               backward_only);                                                                     \
    }
BT_SOLVE_SEQ_WARP(btchol_solve_seq_small, 2)
BT_SOLVE_SEQ_WARP(btchol_solve_seq_small_1stage, 1)
// Solve, one CTA per item for batches too small to fill the device (a few items per SM: the host's
// SEQ_INV_MAX_ITEMS_PER_SM): the one-warp solve above then spends a third of its time in the
// substitution chains (32 dependent shuffle → FMA steps per block; bench/results/experiments/
// README.md, 2026-11-26 ablation). Here
// SEQ_INV_HELPERS helper warps stage each step's blocks and invert D̂_i off the critical path,
// so the sweeping warp's step is two products: y_i ← D̂_i⁻¹·(b_i − X_{i−1}·y_{i−1}) forward,
// x_i ← D̂_i⁻ᵀ·(y_i − X_iᵀ·x_{i+1}) backward. Same arguments and results as btchol_solve_seq_small.
// Step t (0 ≤ t < 2N: the forward sweep's blocks, then the backward's) belongs to helper t mod H
// and to slot 2(t mod H) + (t / H mod 2), so each helper stages its next step while it inverts
// the current one; per slot, `full` (the helper's 32 lanes arrive) and `empty` (the sweeper's).
// Dynamic shared memory: seq_inv_solve_smem_bytes (jit.rs). sm_90 and later (mbarriers) and
// blocks of at least 16 bytes a column (16-byte copies and loads); the host picks
// btchol_solve_seq_small elsewhere (engine.rs seq_inv_solve).
#define SEQ_INV_HELPERS 3
#define SEQ_INV_SLOTS (2 * SEQ_INV_HELPERS)
#define SEQ_INV_THREADS (32 * (1 + SEQ_INV_HELPERS))
// Leading dimension of a slot's inverse: columns start 16-byte aligned (the inversion reads them
// by 16-byte broadcasts), and lane i reading row i is free of bank conflicts.
#define SEQ_INV_LD (LD + VEC16_ELEMS)
#define SEQ_INV_SLOT (LD * SEQ_INV_LD + LD * SEQ_SLD)  // reals: the inverse, then the coupling

// In place: M holds D̂_i's lower triangle (leading dimension SEQ_INV_LD); afterwards M(r, c) =
// (D̂_i⁻¹)(r, c), or (D̂_i⁻ᵀ)(r, c) with `transpose`, identity beyond n. Lane c forms column c
// of D̂_i⁻¹ by forward substitution on e_c in registers: every lane runs every update (the
// zeros above the diagonal stay zero), so no lane idles and no shuffle sits in the chain.
template <bool FULL>
__device__ __forceinline__ void seq_invert_lower(real* M, int n, bool transpose, int lane) {
    constexpr int V = VEC16_ELEMS;
    const real rpiv = real(1) / (lane < n ? M[lane + lane * SEQ_INV_LD] : real(1));
    real z[LD];
#pragma unroll
    for (int k = 0; k < LD; ++k) z[k] = real(k == lane ? 1 : 0);
#pragma unroll
    for (int j = 0; j < LD; ++j) {
        z[j] *= __shfl_sync(FULL_MASK, rpiv, j);
        if (FULL || j < n) {
#pragma unroll
            for (int k0 = (j + 1) / V * V; k0 < LD; k0 += V) {
                const vec16 piece = *reinterpret_cast<const vec16*>(M + k0 + j * SEQ_INV_LD);
                const real* col = reinterpret_cast<const real*>(&piece);
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const int k = k0 + e;
                    if (k > j) z[k] = fma(-(FULL || k < n ? col[e] : real(0)), z[j], z[k]);
                }
            }
        }
    }
    __syncwarp();
    if (lane < LD) {
#pragma unroll
        for (int k = 0; k < LD; ++k) M[transpose ? lane + k * SEQ_INV_LD : k + lane * SEQ_INV_LD] = z[k];
    }
}

extern "C" __global__ void __launch_bounds__(SEQ_INV_THREADS) btchol_solve_seq_inv_small(
    const real* diag, const real* slots, real* y, int n_blocks, int n, int m, int rows, long long item_diag,
    long long item_slots, long long item_rhs, const unsigned long long* fail, int backward_only) {
    // (backward_only is always 0 here: the host lets the factor do the forward sweep only before
    // btchol_solve_seq_small, whose forward sweep it reproduces bit for bit; this one forms the
    // forward sweep's products with D̂_i⁻¹, other roundings. The argument keeps the launches alike.)
#if __CUDA_ARCH__ >= 900
    if (LD * sizeof(real) < 16) return;  // (not launched)
    wait_for_previous_kernel();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __shared__ unsigned long long full[SEQ_INV_SLOTS], empty[SEQ_INV_SLOTS];
    const int item = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (fail[item] != NO_FAILURE) return;  // the whole CTA, before any barrier
    const real* D = diag + item * item_diag;
    const real* S = slots + item * item_slots;
    real* yb = y + item * item_rhs;
    auto slot_inv = [&](int s) { return reinterpret_cast<real*>(smem_raw) + s * SEQ_INV_SLOT; };
    auto slot_x = [&](int s) { return slot_inv(s) + LD * SEQ_INV_LD; };
    const int steps = 2 * n_blocks;
    if (threadIdx.x < SEQ_INV_SLOTS) {
        mbar_init(&full[threadIdx.x], 32);
        mbar_init(&empty[threadIdx.x], 32);
    }
    __syncthreads();

    if (warp > 0) {  // a helper: steps h, h + H, h + 2H, …
        const int h = warp - 1;
        // Step t's blocks into slot s: D̂_i's lower triangle (16-byte pieces; the inversion reads
        // only the lower triangle) and the coupling (X_{i−1} forward, X_i backward; none at the ends).
        auto stage = [&](int t, int s) {
            const bool forward = t < n_blocks;
            const int i = forward ? t : steps - 1 - t;
            stage_block<SEQ_INV_LD, true>(slot_inv(s), D + i * BS, lane);
            const int xb = forward ? i - 1 : i;
            if (xb >= 0 && xb + 1 < n_blocks) stage_block<SEQ_SLD>(slot_x(s), S + xb * BS, lane);
            commit_async();
        };
        if (h < steps) stage(h, 2 * h);
        for (int k = 0, t = h; t < steps; ++k, t += SEQ_INV_HELPERS) {
            const int s = 2 * h + (k & 1);
            if (t + SEQ_INV_HELPERS < steps) {
                const int sn = 2 * h + ((k + 1) & 1);
                if (k >= 1) mbar_wait_cta(&empty[sn], ((k - 1) >> 1) & 1);  // the sweeper is done with step t − H
                stage(t + SEQ_INV_HELPERS, sn);
            } else {
                commit_async();  // an empty group: wait_async<1> below still means step t's
            }
            wait_async<1>();
            __syncwarp();
            if (n == LD)
                seq_invert_lower<true>(slot_inv(s), n, t >= n_blocks, lane);
            else
                seq_invert_lower<false>(slot_inv(s), n, t >= n_blocks, lane);
            mbar_arrive(&full[s]);  // each lane releases its own copies and writes
        }
        return;
    }

    // The sweeper.
    SeqSweep sweep{yb, rows, n, n_blocks, m, lane};
    // Step t's slot, once its helper has filled it.
    auto acquire = [&](int t) {
        const int k = t / SEQ_INV_HELPERS, s = 2 * (t % SEQ_INV_HELPERS) + (k & 1);
        mbar_wait_cta(&full[s], (k >> 1) & 1);
        return s;
    };
    // (D̂_i⁻¹·v)_lane forward, (D̂_i⁻ᵀ·v)_lane backward: the slot holds whichever the step needs.
    auto product = [&](const real* M) {
        return [=](real v) { return matvec_warp(M, 1, SEQ_INV_LD, lane < n ? v : real(0), lane); };
    };
    sweep.begin(true);
    for (int i = 0; i < n_blocks; ++i) {
        const int s = acquire(i);
        sweep.step<true>(i, slot_x(s), product(slot_inv(s)));
        __syncwarp();
        mbar_arrive(&empty[s]);
    }
    sweep.begin(false);
    for (int i = n_blocks - 1; i >= 0; --i) {
        const int s = acquire(steps - 1 - i);
        sweep.step<false>(i, slot_x(s), product(slot_inv(s)));
        __syncwarp();
        mbar_arrive(&empty[s]);
    }
#endif
}
#endif
