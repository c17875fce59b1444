// Nested-dissection factorization, one launch pair per level (crate::schedule, paper Algorithm 4):
//   Grids are flattened: CTA x handles record x % n_work of item x / n_work.
//   btchol_factor_eliminate: per (elimination of the level, item); per eliminated block i
//       D̂_i ← chol(D_i); L_{a,i} ← Ψ_{a,i}·D̂_i⁻ᵀ for each survivor a; fill Ψ_{r,c} ← −L_{r,i}·L_{c,i}ᵀ
//   btchol_factor_update:    per (update of the level, item), survivor a
//       D_a ← D_a − Σ L_{a,i}·L_{a,i}ᵀ

extern "C" __global__ void __launch_bounds__(NT) btchol_factor_eliminate(
    real* diag, real* slots, const int* recs, int n_work, int n, long long item_diag, long long item_slots,
    unsigned long long* fail, int level, real piv_thr, real piv_boost, unsigned* boosted) {
    const int* r = recs + REC * (blockIdx.x % n_work);
    const int item = blockIdx.x / n_work;
    if (skip_item(fail[item], level)) return;
    real* D = diag + item * item_diag + r[0] * BS;
    real* slot_base = slots + item * item_slots;
    const int ncpl = r[7];
    real* C[2] = {slot_base + r[1] * BS, ncpl > 1 ? slot_base + r[3] * BS : nullptr};
    // Dynamic shared memory (factor_smem_bytes, jit.rs): fused, the blocks [D | X_0 | X_1];
    // otherwise the fill's staging buffer (the couplings stay in global memory).
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* smem = reinterpret_cast<real*>(smem_raw);
    real* stage = BT_FUSED ? nullptr : smem;
#if (TALL_PANEL && BT_FUSED) || BLOCKED_PANEL
    // potrf and trsm in register sweeps, straight from and to global memory; fused, the solved
    // couplings also go to shared memory for the fill.
    real* W[2] = {BT_FUSED ? smem + BS : C[0], BT_FUSED ? smem + 2 * BS : C[1]};
    int nboost = 0;
#if TALL_PANEL
    const int f = potrf_trsm_panel(D, C[0], C[1], ncpl, n, W[0], W[1], piv_thr, piv_boost, nboost);
#else
    const int f = potrf_trsm_blocked(D, C[0], C[1], ncpl, n, BT_FUSED ? W[0] : nullptr, BT_FUSED ? W[1] : nullptr,
                                     piv_thr, piv_boost, nboost);
#endif
    if (threadIdx.x == 0 && nboost > 0) atomicAdd(&boosted[item], (unsigned)nboost);
    if (f >= 0) {
        if (threadIdx.x == 0) atomicMin(&fail[item], fail_key(level, r[0], f));
        return;
    }
    __syncthreads();
    if (r[5] >= 0) gemm_nt_neg(slot_base + r[5] * BS, W[r[6]], W[1 - r[6]], n, stage);
#else
#if BT_FUSED
    real* sD = smem;
    real* W[2] = {sD + BS, sD + 2 * BS};
    copy_block(sD, D);
    for (int c = 0; c < ncpl; ++c) copy_block(W[c], C[c]);
#else
    real* sD = D;
    real* W[2] = {C[0], C[1]};
#endif
    int nboost = 0;
    const int f = potrf_lower(sD, n, piv_thr, piv_boost, nboost);
    if (threadIdx.x == 0 && nboost > 0) atomicAdd(&boosted[item], (unsigned)nboost);
    if (f >= 0) {
        if (threadIdx.x == 0) atomicMin(&fail[item], fail_key(level, r[0], f));
        return;
    }
#if TRSM_IN_REGISTERS
    trsm_right_lower_trans(W[0], W[1], ncpl, sD, n);
#else
    for (int idx = threadIdx.x; idx < ncpl * n; idx += NT) trsm_right_lower_trans_row(W[idx / n], sD, n, idx % n);
#endif
    __syncthreads();
    if (r[5] >= 0) gemm_nt_neg(slot_base + r[5] * BS, W[r[6]], W[1 - r[6]], n, stage);
#if BT_FUSED
    copy_block(D, sD);
    for (int c = 0; c < ncpl; ++c) copy_block(C[c], W[c]);
#endif
#endif
}

extern "C" __global__ void __launch_bounds__(NT) btchol_factor_update(
    real* diag, const real* slots, const int* recs, int n_work, int n, long long item_diag, long long item_slots,
    const unsigned long long* fail) {
    const int* r = recs + REC * (blockIdx.x % n_work);
    const int item = blockIdx.x / n_work;
    if (fail[item] != NO_FAILURE) return;
    real* D = diag + item * item_diag + r[0] * BS;
    const real* slot_base = slots + item * item_slots;
    const real* A[2] = {slot_base + r[1] * BS, r[7] > 1 ? slot_base + r[3] * BS : nullptr};
    // Dynamic shared memory: update_smem_bytes (jit.rs). Fused, the couplings are staged whole:
    // every element feeds MT FMAs of several threads, and from global memory the tiles waited on
    // L1 misses (ncu, H100, n = 64: 20 µs per 64×64×64 update); otherwise in column chunks.
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* smem = reinterpret_cast<real*>(smem_raw);
#if BT_FUSED
    for (int c = 0; c < r[7] && c < 2; ++c) {
        copy_block(smem + c * BS, A[c]);
        A[c] = smem + c * BS;
    }
    __syncthreads();
    syrk_lower_sub(D, A[0], A[1], n);
#else
    syrk_lower_sub(D, A[0], A[1], n, smem);
#endif
}
