//! One task of the nested-dissection schedule on the CPU: the two phases of a level
//! (see [`crate::schedule`]) for factor and solve. The executor in `cpu/mod.rs` runs the tasks of
//! a phase in parallel; the schedule guarantees they touch disjoint outputs.
//!
//! Storage of one item: `diag` holds D_0..D_{N−1}, `slots` the schedule's coupling slots, all
//! column-major n×n.

use super::isa::fma_dispatch;
use crate::dense::{
    gemm::{gemm_nt_neg, syrk_lower_sub},
    potrf::{potrf_lower, PivotPolicy},
    trsm::trsm_right_lower_trans,
    trsv::*,
};
use crate::scalar::Scalar;
use crate::schedule::{Elimination, SchurUpdate};

#[inline(always)]
unsafe fn eliminate_imp<T: Scalar, const FMA: bool>(
    n: usize,
    e: &Elimination,
    diag: *mut T,
    slots: *mut T,
    piv: PivotPolicy<T>,
    boosted: &mut u32,
) -> Result<(), usize> {
    let bl = n * n;
    let d = diag.add(e.block * bl);
    potrf_lower::<T, FMA>(n, d, n, piv, boosted)?; //                  D̂_i ← chol(D_i)
    for c in &e.couplings {
        trsm_right_lower_trans::<T, FMA>(n, n, d, n, slots.add(c.slot * bl), n);
        // L_{a,i} ← Ψ_{a,i} D̂_i^{−T}
    }
    if let Some(f) = e.fill {
        let r = slots.add(e.couplings[f.rows].slot * bl);
        let c = slots.add(e.couplings[f.cols].slot * bl);
        gemm_nt_neg::<T, FMA>(n, n, n, r, n, c, n, slots.add(f.slot * bl), n); // Ψ_{r,c} ← −L_{r,i} L_{c,i}ᵀ
    }
    Ok(())
}

fma_dispatch! {
    /// Phase 1 of a level for one eliminated block, pivots handled by `piv` (boosted ones counted
    /// in `boosted`). Err(column) on a failing pivot.
    pub(crate) unsafe fn eliminate => eliminate_imp(n: usize, e: &Elimination, diag: *mut T, slots: *mut T, piv: PivotPolicy<T>, boosted: &mut u32) -> Result<(), usize>
}

#[inline(always)]
unsafe fn schur_update_imp<T: Scalar, const FMA: bool>(n: usize, u: &SchurUpdate, diag: *mut T, slots: *const T) {
    let bl = n * n;
    for &(slot, _) in &u.sources {
        syrk_lower_sub::<T, FMA>(n, n, slots.add(slot * bl), n, diag.add(u.block * bl), n);
        // D_a −= L Lᵀ
    }
}

fma_dispatch! {
    /// Phase 2 of a level for one surviving block.
    pub(crate) unsafe fn schur_update => schur_update_imp(n: usize, u: &SchurUpdate, diag: *mut T, slots: *const T)
}

/// Rows of block `b` inside an item's right-hand sides.
#[inline(always)]
fn rows_of<T>(y: Strided<T>, n: usize, b: usize) -> Strided<T> {
    Strided { ptr: y.ptr.wrapping_add(b * n * y.rs), ..y }
}

#[inline(always)]
unsafe fn forward_eliminate_imp<T: Scalar, const FMA: bool>(
    n: usize,
    m: usize,
    e: &Elimination,
    diag: *const T,
    y: Strided<T>,
) {
    trsv_lower::<T, FMA>(n, m, diag.add(e.block * n * n), n, rows_of(y, n, e.block));
    // y_i ← D̂_i⁻¹ y_i
}

fma_dispatch! {
    /// Forward solve, phase 1 for one eliminated block.
    pub(crate) unsafe fn forward_eliminate => forward_eliminate_imp(n: usize, m: usize, e: &Elimination, diag: *const T, y: Strided<T>)
}

#[inline(always)]
unsafe fn forward_update_imp<T: Scalar, const FMA: bool>(
    n: usize,
    m: usize,
    u: &SchurUpdate,
    slots: *const T,
    y: Strided<T>,
) {
    for &(slot, src) in &u.sources {
        gemv_n_sub::<T, FMA>(n, m, slots.add(slot * n * n), n, rows_of(y, n, src), rows_of(y, n, u.block));
        // y_a −= L_{a,i} y_i
    }
}

fma_dispatch! {
    /// Forward solve, phase 2 for one surviving block.
    pub(crate) unsafe fn forward_update => forward_update_imp(n: usize, m: usize, u: &SchurUpdate, slots: *const T, y: Strided<T>)
}

#[inline(always)]
unsafe fn backward_eliminate_imp<T: Scalar, const FMA: bool>(
    n: usize,
    m: usize,
    e: &Elimination,
    diag: *const T,
    slots: *const T,
    y: Strided<T>,
) {
    let yi = rows_of(y, n, e.block);
    for c in &e.couplings {
        gemv_t_sub::<T, FMA>(n, m, slots.add(c.slot * n * n), n, rows_of(y, n, c.survivor), yi);
        // y_i −= L_{a,i}ᵀ x_a
    }
    trsv_lower_trans::<T, FMA>(n, m, diag.add(e.block * n * n), n, yi); // x_i ← D̂_i^{−T} y_i
}

fma_dispatch! {
    /// Backward solve for one eliminated block (levels run in reverse).
    pub(crate) unsafe fn backward_eliminate => backward_eliminate_imp(n: usize, m: usize, e: &Elimination, diag: *const T, slots: *const T, y: Strided<T>)
}
