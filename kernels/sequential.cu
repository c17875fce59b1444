// Per-item sequential block Cholesky (paper Algorithm 1) for batches of short systems, BT_LD ≤ 32:
// one warp per item sweeps its N blocks, so a batch needs one launch and no grid-wide
// synchronisation, and does the fewest flops (no fill-in; nested dissection does ≈ 2.7×).
// Lane i holds row i of the current block in registers; the next step's blocks are staged into
// shared memory with cp.async while the warp computes, so the sweep waits on arithmetic, not on
// memory latency. Storage as the CPU backend's sequential algorithm (src/cpu/sequential.rs):
// D̂_i overwrites D_i in `diag` (lower part), L_{i+1,i} = E_i·D̂_i⁻ᵀ overwrites E_i in slot i
// (column-major; the plan uploads E_i untransposed for this algorithm).
#if BT_LD <= 32
#define SEQ_THREADS 32
// Padded leading dimension of the solve's shared blocks: lane i reading row or column i is free
// of bank conflicts either way.
#define SEQ_SLD (LD + 1)

// Stages an LD×LD block (global, leading dimension LD) into shared memory with leading dimension
// `sld`, asynchronously, by one warp (the caller commits the group).
__device__ __forceinline__ void stage_block(real* dst, const real* src, int sld, int lane) {
    for (int idx = lane; idx < LD * LD; idx += SEQ_THREADS) copy_async(dst + idx % LD + (idx / LD) * sld, src + idx);
}

// Factor: for i = 0..N−1: D_i ← D_i − X_{i−1}·X_{i−1}ᵀ, D̂_i ← chol(D_i), X_i ← E_i·D̂_i⁻ᵀ.
// Dynamic shared memory: seq_factor_smem_bytes (jit.rs): D and E double-buffered, X.
extern "C" __global__ void __launch_bounds__(SEQ_THREADS) btchol_factor_seq_small(
    real* diag, real* slots, int n_blocks, int n, long long item_diag, long long item_slots, unsigned long long* fail,
    real piv_thr, real piv_boost, unsigned* boosted) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* sD = reinterpret_cast<real*>(smem_raw);  // [2][BS] D_i, D_{i+1}
    real* sE = sD + 2 * BS;                         // [2][BS] E_i, E_{i+1}
    real* sX = sE + 2 * BS;                         // X_{i−1}, column-major
    const int item = blockIdx.x, lane = threadIdx.x;
    if (fail[item] != NO_FAILURE) return;  // masked out
    real* D = diag + item * item_diag;
    real* S = slots + item * item_slots;
    stage_block(sD, D, LD, lane);
    if (n_blocks > 1) stage_block(sE, S, LD, lane);
    commit_async();
    real x[1][LD];  // this lane's row of X_{i−1}, then of X_i
#pragma unroll
    for (int k = 0; k < LD; ++k) x[0][k] = real(0);
    int nboost = 0;
    for (int i = 0; i < n_blocks; ++i) {
        const int cur = i & 1;
        // Stage step i+1 while step i computes (the buffers of step i−1 are free: the warp
        // finished with them before the last __syncwarp).
        if (i + 1 < n_blocks) stage_block(sD + (cur ^ 1) * BS, D + (i + 1) * BS, LD, lane);
        if (i + 2 < n_blocks) stage_block(sE + (cur ^ 1) * BS, S + (i + 1) * BS, LD, lane);
        commit_async();
        wait_async<1>();
        __syncwarp();
        real a[LD];
        const real* Di = sD + cur * BS;
#pragma unroll
        for (int k = 0; k < LD; ++k) a[k] = (lane < n && k < n) ? Di[lane + k * LD] : real(lane == k ? 1 : 0);
        if (i > 0) {
            // a[k] −= Σ_q X[lane][q]·X[k][q] (sX holds X column-major: X[k][q] at k + q·LD).
#pragma unroll
            for (int q = 0; q < LD; ++q) axpy_tail(a, x[0][q], sX + q * LD, 0);
        }
        // X_i ← E_i·D̂_i⁻ᵀ rides along the Cholesky of D_i (zero rows after the last block).
        const real* Ei = sE + cur * BS;
#pragma unroll
        for (int k = 0; k < LD; ++k) x[0][k] = (i + 1 < n_blocks && lane < LD) ? Ei[lane + k * LD] : real(0);
        const int f = potrf_panel_warp<1>(a, x, lane, piv_thr, piv_boost, nboost);
        if (f >= 0) {
            if (lane == 0) atomicMin(&fail[item], fail_key(0, i, f));
            break;
        }
        real* Dg = D + i * BS;
#pragma unroll
        for (int k = 0; k < LD; ++k)
            if (lane < n && k <= lane) Dg[lane + k * LD] = a[k];
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

// Solve, one warp per item: forward y_i ← D̂_i⁻¹(b_i − X_{i−1}·y_{i−1}), then backward
// x_i ← D̂_i⁻ᵀ(y_i − X_iᵀ·x_{i+1}), in place in y[item·item_rhs + col·rows + row].
// A batch solve streams the whole factor through one warp per item, so each step's wait on memory
// is what costs: the blocks of `stages` − 1 steps ahead (2 ≤ stages ≤ 4, the host's choice from the
// shared memory per CTA the batch leaves: jit.rs seq_solve_stages) are in flight while a step
// computes, only the lower triangle of D̂_i is copied, and the right-hand side rows of the step
// furthest ahead are prefetched. With one right-hand side the previous step's result stays in
// registers. Dynamic shared memory: seq_solve_smem_bytes(stages) (jit.rs), per stage D̂ then X,
// leading dimension SEQ_SLD.
#define SEQ_STAGE (2 * LD * SEQ_SLD)

// As stage_block, the lower triangle only (D̂_i: the upper part is never read).
__device__ __forceinline__ void stage_block_lower(real* dst, const real* src, int sld, int lane) {
    for (int idx = lane; idx < LD * LD; idx += SEQ_THREADS)
        if (idx % LD >= idx / LD) copy_async(dst + idx % LD + (idx / LD) * sld, src + idx);
}

// cp.async.wait_group takes an immediate: at most `pending` (0..3) committed groups in flight.
__device__ __forceinline__ void wait_async_upto(int pending) {
    switch (pending) {
        case 0: wait_async<0>(); break;
        case 1: wait_async<1>(); break;
        case 2: wait_async<2>(); break;
        default: wait_async<3>(); break;
    }
}

// Prefetches rows step·n .. step·n + n − 1 of every right-hand side column into L1.
__device__ __forceinline__ void prefetch_rhs_rows(const real* yb, int step, int n, int m, int rows, int lane) {
    if (lane < n)
        for (int c = 0; c < m; ++c) prefetch_l1(yb + (long long)c * rows + (long long)step * n + lane);
}

extern "C" __global__ void __launch_bounds__(SEQ_THREADS) btchol_solve_seq_small(
    const real* diag, const real* slots, real* y, int n_blocks, int n, int m, int rows, long long item_diag,
    long long item_slots, long long item_rhs, const unsigned long long* fail, int stages) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* const stage_base = reinterpret_cast<real*>(smem_raw);
    const int item = blockIdx.x, lane = threadIdx.x;
    if (fail[item] != NO_FAILURE) return;
    const real* D = diag + item * item_diag;
    const real* S = slots + item * item_slots;
    real* yb = y + item * item_rhs;
    // Step k of a sweep uses stage buffer k % stages: D̂ at its start, X after it.
    auto stage_of = [&](int k) { return stage_base + (k % stages) * SEQ_STAGE; };

    // Forward: step i needs D̂_i and X_{i−1} = slot i − 1.
    auto stage_forward = [&](int i) {
        if (i >= n_blocks) return;
        real* st = stage_of(i);
        stage_block_lower(st, D + i * BS, SEQ_SLD, lane);
        if (i > 0) stage_block(st + LD * SEQ_SLD, S + (i - 1) * BS, SEQ_SLD, lane);
        prefetch_rhs_rows(yb, i, n, m, rows, lane);
    };
    for (int k = 0; k + 1 < stages; ++k) {
        stage_forward(k);
        commit_async();  // (empty groups too: the count of groups in flight stays `stages` − 1)
    }
    real carry = real(0);  // m = 1: this lane's row of y_{i−1}
    for (int i = 0; i < n_blocks; ++i) {
        // The buffer of step i − 1 is free: every lane passed the __syncwarp that ended it.
        stage_forward(i + stages - 1);
        commit_async();
        wait_async_upto(stages - 1);
        __syncwarp();
        const real* L = stage_of(i);
        const real* X = L + LD * SEQ_SLD;
        real l[LD];
#pragma unroll
        for (int k = 0; k < LD; ++k) l[k] = (lane < n && k <= lane) ? L[lane + k * SEQ_SLD] : real(lane == k ? 1 : 0);
        const real rdi = real(1) / (lane < n ? L[lane + lane * SEQ_SLD] : real(1));
        for (int c = 0; c < m; ++c) {
            real* yc = yb + (long long)c * rows;
            real v = lane < n ? yc[(long long)i * n + lane] : real(0);
            if (i > 0) {
                const real yp = m == 1 ? carry : lane < n ? yc[(long long)(i - 1) * n + lane] : real(0);
                v -= matvec_warp(X, 1, SEQ_SLD, yp, lane);  // (X_{i−1}·y_{i−1})_lane
            }
            v = trsv_lower_warp(v, l, rdi, lane);
            if (lane < n) yc[(long long)i * n + lane] = v;
            carry = lane < n ? v : real(0);
        }
        __syncwarp();
    }
    // Backward, in sweep order t = 0, 1, ... over blocks i = N − 1 − t: D̂_i and X_i = slot i.
    wait_async<0>();
    __syncwarp();
    auto stage_backward = [&](int t) {
        const int i = n_blocks - 1 - t;
        if (i < 0) return;
        real* st = stage_of(t);
        stage_block_lower(st, D + i * BS, SEQ_SLD, lane);
        if (i + 1 < n_blocks) stage_block(st + LD * SEQ_SLD, S + i * BS, SEQ_SLD, lane);
        prefetch_rhs_rows(yb, i, n, m, rows, lane);
    };
    for (int k = 0; k + 1 < stages; ++k) {
        stage_backward(k);
        commit_async();
    }
    for (int t = 0; t < n_blocks; ++t) {
        const int i = n_blocks - 1 - t;
        stage_backward(t + stages - 1);
        commit_async();
        wait_async_upto(stages - 1);
        __syncwarp();
        const real* L = stage_of(t);
        const real* X = L + LD * SEQ_SLD;
        // Lane i holds column i of D̂_i (row i of D̂_iᵀ).
        real lc[LD];
#pragma unroll
        for (int k = 0; k < LD; ++k) lc[k] = (lane < n && k < n && k >= lane) ? L[k + lane * SEQ_SLD] : real(lane == k ? 1 : 0);
        const real rdi = real(1) / (lane < n ? L[lane + lane * SEQ_SLD] : real(1));
        for (int c = 0; c < m; ++c) {
            real* yc = yb + (long long)c * rows;
            real v = lane < n ? yc[(long long)i * n + lane] : real(0);
            if (i + 1 < n_blocks) {
                const real xn = m == 1 ? carry : lane < n ? yc[(long long)(i + 1) * n + lane] : real(0);
                v -= matvec_warp(X, SEQ_SLD, 1, xn, lane);  // (X_iᵀ·x_{i+1})_lane
            }
            v = trsv_lower_trans_warp(v, lc, rdi, lane);
            if (lane < n) yc[(long long)i * n + lane] = v;
            carry = lane < n ? v : real(0);
        }
        __syncwarp();
    }
    wait_async<0>();
}
#endif
