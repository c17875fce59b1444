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
    wait_for_previous_kernel();
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
    __shared__ __align__(16) real s_col[2 * LD];  // potrf_panel_warp's column scratch
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
        const int boosted_before = nboost;
        // (Pivot from the shared column, not by shuffle: this sweep is throughput-bound.)
        int f = potrf_panel_warp<1, false, false>(a, x, lane, piv_thr, piv_boost, nboost, s_col);
        if (f == PANEL_SUBNORMAL) {  // rare: the step again with the exact square root (small.cu rsqrt_pivot)
            nboost = boosted_before;
#pragma unroll
            for (int k = 0; k < LD; ++k) a[k] = (lane < n && k < n) ? Di[lane + k * LD] : real(lane == k ? 1 : 0);
            if (i > 0)
#pragma unroll
                for (int q = 0; q < LD; ++q)  // X_{i−1}'s row (lanes beyond LD have none)
                    axpy_tail(a, lane < LD ? sX[lane + q * LD] : real(0), sX + q * LD, 0);
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
// The right-hand side is a register pipeline over the units (step, column) in sweep order: each
// unit loads the next unit's rows before its own substitution chain, and with one column the
// previous step's result stays in a register, so no step waits on a global round trip (ncu,
// 2026-11-23: the two loads' latency was 21 % of the warps' stall samples, n = 16, B = 1024).
extern "C" __global__ void __launch_bounds__(SEQ_THREADS) btchol_solve_seq_small(
    const real* diag, const real* slots, real* y, int n_blocks, int n, int m, int rows, long long item_diag,
    long long item_slots, long long item_rhs, const unsigned long long* fail) {
    wait_for_previous_kernel();
    __shared__ real sL[2][LD * SEQ_SLD], sX[2][LD * SEQ_SLD];
    const int item = blockIdx.x, lane = threadIdx.x;
    if (fail[item] != NO_FAILURE) return;
    const real* D = diag + item * item_diag;
    const real* S = slots + item * item_slots;
    real* yb = y + item * item_rhs;
    // Row `lane` of block `i`, column `c` of the right-hand sides (0 outside the system).
    auto row_of = [&](int i, int c) -> real {
        return (lane < n && i >= 0 && i < n_blocks) ? yb[(long long)c * rows + (long long)i * n + lane] : real(0);
    };
    // Forward: step i needs D̂_i and X_{i−1} (staged in buffer i & 1).
    stage_block(sL[0], D, SEQ_SLD, lane);
    commit_async();
    real next = row_of(0, 0), prev = real(0);  // b of the next unit; y_{i−1} when m = 1
    for (int i = 0; i < n_blocks; ++i) {
        const int cur = i & 1;
        if (i + 1 < n_blocks) {
            stage_block(sL[cur ^ 1], D + (i + 1) * BS, SEQ_SLD, lane);
            stage_block(sX[cur ^ 1], S + i * BS, SEQ_SLD, lane);
        }
        commit_async();
        wait_async<1>();
        __syncwarp();
        const real* L = sL[cur];
        const real* X = sX[cur];
        real l[LD];
#pragma unroll
        for (int k = 0; k < LD; ++k) l[k] = (lane < n && k <= lane) ? L[lane + k * SEQ_SLD] : real(lane == k ? 1 : 0);
        const real rdi = real(1) / (lane < n ? L[lane + lane * SEQ_SLD] : real(1));
        for (int c = 0; c < m; ++c) {
            real v = next;
            next = c + 1 < m ? row_of(i, c + 1) : row_of(i + 1, 0);
            if (i > 0) {
                const real yp = m == 1 ? prev : row_of(i - 1, c);
                v -= matvec_warp(X, 1, SEQ_SLD, yp, lane);  // (X_{i−1}·y_{i−1})_lane
            }
            v = trsv_lower_warp(v, l, rdi, lane);
            if (lane < n) yb[(long long)c * rows + (long long)i * n + lane] = v;
            prev = v;
        }
        __syncwarp();
    }
    // Backward: step i needs D̂_i and X_i. (Each lane reads back only rows it wrote itself.)
    wait_async<0>();
    __syncwarp();
    stage_block(sL[0], D + (n_blocks - 1) * BS, SEQ_SLD, lane);
    commit_async();
    next = row_of(n_blocks - 1, 0);
    for (int i = n_blocks - 1, buf = 0; i >= 0; --i, buf ^= 1) {
        if (i > 0) {
            stage_block(sL[buf ^ 1], D + (i - 1) * BS, SEQ_SLD, lane);
            stage_block(sX[buf ^ 1], S + (i - 1) * BS, SEQ_SLD, lane);
        }
        commit_async();
        wait_async<1>();
        __syncwarp();
        const real* L = sL[buf];
        const real* X = sX[buf];
        // Lane i holds column i of D̂_i (row i of D̂_iᵀ).
        real lc[LD];
#pragma unroll
        for (int k = 0; k < LD; ++k) lc[k] = (lane < n && k < n && k >= lane) ? L[k + lane * SEQ_SLD] : real(lane == k ? 1 : 0);
        const real rdi = real(1) / (lane < n ? L[lane + lane * SEQ_SLD] : real(1));
        for (int c = 0; c < m; ++c) {
            real v = next;
            next = c + 1 < m ? row_of(i, c + 1) : row_of(i - 1, 0);
            if (i + 1 < n_blocks) {
                const real xn = m == 1 ? prev : row_of(i + 1, c);
                v -= matvec_warp(X, SEQ_SLD, 1, xn, lane);  // (X_iᵀ·x_{i+1})_lane
            }
            v = trsv_lower_trans_warp(v, lc, rdi, lane);
            if (lane < n) yb[(long long)c * rows + (long long)i * n + lane] = v;
            prev = v;
        }
        __syncwarp();
    }
}
#endif
