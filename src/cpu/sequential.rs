//! The sequential block Cholesky (paper Algorithm 1) and its solve: the fewest flops, no fill.
//!
//! Storage of one item: `diag` holds D_0..D_{N−1}, `sub` holds L_{i+1,i} in slot i (the caller's
//! E_i, untransposed), all column-major n×n.

use super::isa::fma_dispatch;
use crate::dense::{
    gemm::syrk_lower_sub,
    potrf::{potrf_lower, PivotPolicy},
    trsm::trsm_right_lower_trans,
    trsv::*,
};
use crate::scalar::Scalar;

#[inline(always)]
unsafe fn factor_item_imp<T: Scalar, const FMA: bool>(
    n: usize,
    n_blocks: usize,
    diag: *mut T,
    sub: *mut T,
    piv: PivotPolicy<T>,
    boosted: &mut u32,
) -> Result<(), (usize, usize)> {
    let bl = n * n;
    potrf_lower::<T, FMA>(n, diag, n, piv, boosted).map_err(|c| (0, c))?;
    for i in 1..n_blocks {
        let e = sub.add((i - 1) * bl);
        let d_prev = diag.add((i - 1) * bl);
        let d = diag.add(i * bl);
        trsm_right_lower_trans::<T, FMA>(n, n, d_prev, n, e, n); // Ê_{i−1} ← E_{i−1} D̂_{i−1}^{−T}
        syrk_lower_sub::<T, FMA>(n, n, e, n, d, n); //             D_i ← D_i − Ê Êᵀ
        potrf_lower::<T, FMA>(n, d, n, piv, boosted).map_err(|c| (i, c))?; // D̂_i ← chol(D_i)
    }
    Ok(())
}

fma_dispatch! {
    /// Factors one item in place, pivots handled by `piv` (boosted ones counted in `boosted`).
    /// Err((block, column)) on the first failing pivot.
    pub(crate) unsafe fn factor_item => factor_item_imp(n: usize, n_blocks: usize, diag: *mut T, sub: *mut T, piv: PivotPolicy<T>, boosted: &mut u32) -> Result<(), (usize, usize)>
}

#[inline(always)]
unsafe fn solve_item_imp<T: Scalar, const FMA: bool>(
    n: usize,
    n_blocks: usize,
    m: usize,
    diag: *const T,
    sub: *const T,
    y: Strided<T>,
) {
    let bl = n * n;
    let block = |i: usize| Strided { ptr: y.ptr.add(i * n * y.rs), ..y };
    // Forward: L y = b.
    trsv_lower::<T, FMA>(n, m, diag, n, block(0));
    for i in 1..n_blocks {
        gemv_n_sub::<T, FMA>(n, m, sub.add((i - 1) * bl), n, block(i - 1), block(i));
        trsv_lower::<T, FMA>(n, m, diag.add(i * bl), n, block(i));
    }
    // Backward: Lᵀ x = y.
    trsv_lower_trans::<T, FMA>(n, m, diag.add((n_blocks - 1) * bl), n, block(n_blocks - 1));
    for i in (0..n_blocks - 1).rev() {
        gemv_t_sub::<T, FMA>(n, m, sub.add(i * bl), n, block(i + 1), block(i));
        trsv_lower_trans::<T, FMA>(n, m, diag.add(i * bl), n, block(i));
    }
}

fma_dispatch! {
    /// Solves one item in place; `y` points at the item's first row.
    pub(crate) unsafe fn solve_item => solve_item_imp(n: usize, n_blocks: usize, m: usize, diag: *const T, sub: *const T, y: Strided<T>)
}
