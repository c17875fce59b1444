// Nested-dissection factorization, one launch pair per level (crate::schedule, paper Algorithm 4):
//   Grids are flattened: CTA x handles record x % n_work of item x / n_work.
//   btchol_factor_eliminate: per (elimination of the level, item); per eliminated block i
//       D̂_i ← chol(D_i); L_{a,i} ← Ψ_{a,i}·D̂_i⁻ᵀ for each survivor a; fill Ψ_{r,c} ← −L_{r,i}·L_{c,i}ᵀ
//   btchol_factor_update:    per (update of the level, item), survivor a
//       D_a ← D_a − Σ L_{a,i}·L_{a,i}ᵀ
//   Split levels (`fill` = 0; always when BT_SPLIT, 64 < LD): the eliminations do no fill, and
//       btchol_factor_gemm does the level's fills and updates instead, one CTA per 32×32 output
//       tile (btchol_factor_update is not launched); btchol_factor_gemm_wide the same in
//       64×64 tiles at wide levels (f64, LD > 64).

// Two CTAs per SM where 3·LD rows leave room for them (192 threads at LD = 64: at most 168
// registers each, instead of one CTA of 256 holding the SM's registers).
#define ELIMINATE_MIN_CTAS (TALL_PANEL && NT <= 192 ? 2 : 1)
extern "C" __global__ void __launch_bounds__(NT, ELIMINATE_MIN_CTAS) btchol_factor_eliminate(
    real* diag, real* slots, const int* recs, int n_work, int n, long long item_diag, long long item_slots,
    unsigned long long* fail, int level, real piv_thr, real piv_boost, unsigned* boosted, int fill) {
    wait_for_previous_kernel();
    const int* r = recs + REC * (blockIdx.x % n_work);
    const int item = blockIdx.x / n_work;
    if (skip_item(fail[item], level)) return;
    real* D = diag + item * item_diag + r[0] * BS;
    real* slot_base = slots + item * item_slots;
    const int ncpl = r[7];
    real* C[2] = {slot_base + r[1] * BS, ncpl > 1 ? slot_base + r[3] * BS : nullptr};
    // Dynamic shared memory (factor_smem_bytes, jit.rs), fused only: the blocks [D | X_0 | X_1].
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* smem = reinterpret_cast<real*>(smem_raw);
#if (TALL_PANEL && BT_FUSED) || BLOCKED_PANEL
    // potrf and trsm in register sweeps, straight from and to global memory; fused, the solved
    // couplings also go to shared memory (column stride SLD) for the fill.
    real* W[2] = {BT_FUSED ? smem + BS : C[0], BT_FUSED ? smem + BS + LD * SLD : C[1]};
    real* sW[2] = {BT_FUSED ? W[0] : nullptr, BT_FUSED ? W[1] : nullptr};
    int nboost = 0;
#if TALL_PANEL
    const int f = potrf_trsm_panel(D, C[0], C[1], ncpl, n, sW[0], sW[1], piv_thr, piv_boost, nboost);
#else
    const int f = potrf_trsm_blocked(D, C[0], C[1], ncpl, n, sW[0], sW[1], piv_thr, piv_boost, nboost);
#endif
    if (threadIdx.x == 0 && nboost > 0) atomicAdd(&boosted[item], (unsigned)nboost);
    if (f >= 0) {
        if (threadIdx.x == 0) atomicMin(&fail[item], fail_key(level, r[0], f));
        return;
    }
#if !BT_SPLIT
    __syncthreads();
    if (fill && r[5] >= 0) gemm_nt_neg<BT_FUSED>(slot_base + r[5] * BS, W[r[6]], W[1 - r[6]], n);
#endif
#else
    static_assert(LD <= 64, "blocks above 64 need the blocked panel: 3·LD threads (jit.rs)");
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
    if (fill && r[5] >= 0) gemm_nt_neg<false>(slot_base + r[5] * BS, W[r[6]], W[1 - r[6]], n);
#if BT_FUSED
    copy_block(D, sD);
    for (int c = 0; c < ncpl; ++c) copy_block(C[c], W[c]);
#endif
#endif
}

// The same elimination on a cluster of three CTAs (CLUSTER_ROW_THREADS threads each), CTA c of
// cluster x: block c's rows (D, X_0, X_1) of record x % n_work of item x / n_work (engine.rs
// EliminateCluster, at levels whose clusters fit the SMs at once). Compiled in where jit.rs
// KernelSpec::eliminate_cluster says (BT_ELIMINATE_CLUSTER); elsewhere not launched, and a no-op.
#if BLOCKED_PANEL_CODE
constexpr bool ELIMINATE_CLUSTER = BT_ELIMINATE_CLUSTER;
static_assert(!ELIMINATE_CLUSTER || BLOCKED_WARP_SWEEP, "the cluster variant needs the diagonal warp's sweep");
#else
constexpr bool ELIMINATE_CLUSTER = false;
#endif
// CTA `blk` (0: D, 1 and 2: the couplings) of the blocked elimination of record x % n_work of item
// x / n_work, as the cluster variant's; `couplings` false: the split elimination's potrf, D alone
// (no coupling CTA to signal, and the ones of a cluster beyond D return at once).
__device__ __forceinline__ void eliminate_blocked_cta(real* diag, real* slots, const int* recs, int n_work, int n,
                                                      long long item_diag, long long item_slots,
                                                      unsigned long long* fail, int level, real piv_thr,
                                                      real piv_boost, unsigned* boosted, int x, int blk,
                                                      bool couplings) {
#if BLOCKED_PANEL_CODE
    const int* r = recs + REC * (x % n_work);
    const int item = x / n_work;
    if (skip_item(fail[item], level)) return;  // (the same for the whole cluster: earlier levels' keys)
    real* D = diag + item * item_diag + r[0] * BS;
    real* slot_base = slots + item * item_slots;
    const int ncpl = couplings ? r[7] : 0;
    real* C1 = ncpl > 1 ? slot_base + r[3] * BS : nullptr;
    int nboost = 0;
    // (with couplings: the cluster kernel, whose D CTA has S's shared memory; without: the split potrf)
    const int f = couplings ? potrf_trsm_blocked_cluster<ELIMINATE_CLUSTER, true>(D, slot_base + r[1] * BS, C1, ncpl, n,
                                                                                   blk, piv_thr, piv_boost, nboost)
                            : potrf_trsm_blocked_cluster<ELIMINATE_CLUSTER, false>(D, slot_base + r[1] * BS, C1, ncpl,
                                                                                    n, blk, piv_thr, piv_boost, nboost);
    if (blk == 0 && threadIdx.x == 0) {
        if (nboost > 0) atomicAdd(&boosted[item], (unsigned)nboost);
        if (f >= 0) atomicMin(&fail[item], fail_key(level, r[0], f));
    }
#endif
}

extern "C" __global__ void __launch_bounds__(ELIMINATE_CLUSTER ? CLUSTER_ROW_THREADS : 32)
    btchol_factor_eliminate_cluster(real* diag, real* slots, const int* recs, int n_work, int n, long long item_diag, long long item_slots,
    unsigned long long* fail, int level, real piv_thr, real piv_boost, unsigned* boosted) {
    wait_for_previous_kernel();
    eliminate_blocked_cta(diag, slots, recs, n_work, n, item_diag, item_slots, fail, level, piv_thr, piv_boost, boosted,
                          blockIdx.x / 3, blockIdx.x % 3, true);
}

// The split elimination (engine.rs, wide levels where the cluster variant is compiled in): at one
// CTA of 3·LD threads per elimination the SM idled while the diagonal warp swept (~45 % of an
// f64 n = 128 elimination, globaltimer, H200). Instead btchol_factor_potrf_split, one CTA per
// elimination, is the cluster variant's D CTA alone (D's potrf, four to an SM), and then
// btchol_factor_trsm_split, CTA x: coupling x % 2 + 1 of elimination x / 2 (as in
// btchol_factor_eliminate), that variant's coupling CTA with the finished factor read from
// global memory (trsm_blocked_split). Same arguments as btchol_factor_eliminate_cluster.
// (Four potrf CTAs per SM, 128 registers with 136 bytes of spills, against three: f64 n = 128,
// N = 1024 / 4096 −2 %, H200. Starting each elimination's trsm CTAs as its potrf ended, through
// a counter per elimination, instead of after the whole potrf launch: ±1 %, not kept.)
#ifndef SPLIT_POTRF_MIN_CTAS
#define SPLIT_POTRF_MIN_CTAS 4
#endif
extern "C" __global__ void __launch_bounds__(ELIMINATE_CLUSTER ? CLUSTER_ROW_THREADS : 32, SPLIT_POTRF_MIN_CTAS)
    btchol_factor_potrf_split(real* diag, real* slots, const int* recs, int n_work, int n, long long item_diag,
                              long long item_slots, unsigned long long* fail, int level, real piv_thr, real piv_boost,
                              unsigned* boosted) {
    wait_for_previous_kernel();
    eliminate_blocked_cta(diag, slots, recs, n_work, n, item_diag, item_slots, fail, level, piv_thr, piv_boost, boosted,
                          blockIdx.x, 0, false);
}

// (Three CTAs per SM: 168 registers, no spill; the dynamic shared memory allows no more.)
extern "C" __global__ void __launch_bounds__(ELIMINATE_CLUSTER ? CLUSTER_ROW_THREADS : 32, 3)
    btchol_factor_trsm_split(real* diag, real* slots, const int* recs, int n_work, int n, long long item_diag,
                             long long item_slots, const unsigned long long* fail) {
    wait_for_previous_kernel();
#if BLOCKED_PANEL_CODE
    const int x = blockIdx.x / 2, blk = blockIdx.x % 2 + 1;
    const int* r = recs + REC * (x % n_work);
    const int item = x / n_work;
    if (fail[item] != NO_FAILURE || blk > r[7]) return;  // (a failed item's couplings are never read)
    real* slot_base = slots + item * item_slots;
    trsm_blocked_split<ELIMINATE_CLUSTER>(diag + item * item_diag + r[0] * BS, slot_base + r[1] * BS,
                                          r[7] > 1 ? slot_base + r[3] * BS : nullptr, r[7], n, blk);
#endif
}

extern "C" __global__ void __launch_bounds__(NT) btchol_factor_update(
    real* diag, const real* slots, const int* recs, int n_work, int n, long long item_diag, long long item_slots,
    const unsigned long long* fail) {
    wait_for_previous_kernel();
    const int* r = recs + REC * (blockIdx.x % n_work);
    const int item = blockIdx.x / n_work;
    if (fail[item] != NO_FAILURE) return;
    real* D = diag + item * item_diag + r[0] * BS;
    const real* slot_base = slots + item * item_slots;
    const real* A[2] = {slot_base + r[1] * BS, r[7] > 1 ? slot_base + r[3] * BS : nullptr};
    // Fused, the couplings are staged in shared memory (update_smem_bytes, jit.rs; column stride
    // SLD): every element feeds several products, and from global memory the tiles waited on L1
    // misses (ncu, H100, n = 64: 20 µs per 64×64×64 update).
#if BT_FUSED
    extern __shared__ __align__(16) unsigned char smem_raw[];
    real* smem = reinterpret_cast<real*>(smem_raw);
    for (int c = 0; c < r[7] && c < 2; ++c) {
        copy_block_staged(smem + c * LD * SLD, A[c]);
        A[c] = smem + c * LD * SLD;
    }
    __syncthreads();
#endif
    syrk_lower_sub<BT_FUSED>(D, A[0], A[1], n);
}

// CTA x: item x / per_item; then, in order, the lower tiles of each update (column by column) and
// the tiles of each elimination's fill (none where it has no fill); TILE × TILE tiles (jit.rs
// gemm_ctas_per_item). Launched with GEMM_TILE_THREADS threads, after the level's eliminations:
// the fill slots it writes are read by nobody at this level (crate::schedule: each is written
// once and consumed at the next level).
template <int TILE>
__device__ __forceinline__ void factor_gemm_tiles(real* diag, real* slots, const int* elim_recs, int n_elim,
                                                  const int* update_recs, int n_update, int n, long long item_diag,
                                                  long long item_slots, const unsigned long long* fail, real* stage) {
    constexpr int T = (LD + TILE - 1) / TILE, lower_tiles = T * (T + 1) / 2;
    const int per_item = n_update * lower_tiles + n_elim * T * T;
    const int item = blockIdx.x / per_item;
    int w = blockIdx.x % per_item;
    if (fail[item] != NO_FAILURE) return;
    real* slot_base = slots + item * item_slots;
    if (w < n_update * lower_tiles) {
        const int* r = update_recs + REC * (w / lower_tiles);
        int t = w % lower_tiles, tj = 0;
        while (t >= T - tj) t -= T - tj++;  // column tj of the lower tiles holds T − tj of them
        const int i0 = (tj + t) * TILE, j0 = tj * TILE;
        if (i0 >= n) return;
        const real* A0 = slot_base + r[1] * BS;
        const real* A1 = r[7] > 1 ? slot_base + r[3] * BS : nullptr;
        gemm_out_tile<TILE, true, true>(diag + item * item_diag + r[0] * BS, A0, A0, A1, A1, n, i0, j0, real(-1), stage);
    } else {
        w -= n_update * lower_tiles;
        const int* r = elim_recs + REC * (w / (T * T));
        const int t = w % (T * T), i0 = t % T * TILE, j0 = t / T * TILE;
        if (r[5] < 0 || i0 >= n || j0 >= n) return;
        const real *L0 = slot_base + r[1] * BS, *L1 = slot_base + r[3] * BS;  // (selects: no local array)
        gemm_out_tile<TILE, false, false>(slot_base + r[5] * BS, r[6] ? L1 : L0, r[6] ? L0 : L1, nullptr, nullptr, n, i0,
                                          j0, real(-1), stage);
    }
}

// 32 × 32 tiles: the narrow levels' many small CTAs (with 64 × 64 tiles f64 n = 128, N = 64 was
// 12 % slower, H200).
extern "C" __global__ void __launch_bounds__(GEMM_TILE_THREADS, 2) btchol_factor_gemm(
    real* diag, real* slots, const int* elim_recs, int n_elim, const int* update_recs, int n_update, int n,
    long long item_diag, long long item_slots, const unsigned long long* fail) {
    wait_for_previous_kernel();
    __shared__ __align__(16) real stage[2 * GEMM_TILE_KC * GEMM_STAGE_LD];
    factor_gemm_tiles<32>(diag, slots, elim_recs, n_elim, update_recs, n_update, n, item_diag, item_slots, fail, stage);
}

// 64 × 64 tiles at the wide levels (BT_GEMM_WIDE; engine.rs gemm_wide_min_ctas), f64: half
// the operand traffic per flop (f64 n = 128, N = 4096: factor 7053 → 6115 µs, H200), with
// GEMM64_SMEM_BYTES of dynamic shared memory; three CTAs per SM (at most 85 registers: 80, no
// spill; against two, 6115 → 5840 µs).
extern "C" __global__ void __launch_bounds__(GEMM_TILE_THREADS, 3) btchol_factor_gemm_wide(
    real* diag, real* slots, const int* elim_recs, int n_elim, const int* update_recs, int n_update, int n,
    long long item_diag, long long item_slots, const unsigned long long* fail) {
    wait_for_previous_kernel();
#if BT_GEMM_WIDE
    extern __shared__ __align__(16) unsigned char smem_raw[];
    factor_gemm_tiles<64>(diag, slots, elim_recs, n_elim, update_recs, n_update, n, item_diag, item_slots, fail,
                          reinterpret_cast<real*>(smem_raw));
#endif
}
