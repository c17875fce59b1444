//! Cholesky factorization of one diagonal block (LAPACK potrf, lower).

use super::{avx_or_fallthrough, gemm::gemm_nt_sub, madd};
use crate::scalar::Scalar;

/// Width of the column panels: the panel update is one microkernel call.
const NB: usize = 4;

/// What potrf does with a pivot d (the diagonal entry before its square root) that is not above
/// `threshold`: fail (`boost` = 0, the default, LAPACK's behaviour with threshold 0), or replace d
/// by `boost` and count it ("boost small pivots", as interior-point solvers need). A non-finite
/// pivot always fails.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PivotPolicy<T> {
    pub threshold: T,
    pub boost: T,
}

impl<T: Scalar> PivotPolicy<T> {
    /// Fail on any pivot ≤ 0 (no boosting).
    pub fn strict() -> Self {
        PivotPolicy { threshold: T::ZERO, boost: T::ZERO }
    }

    /// The pivot to use for `d`, which is not above the threshold (or not finite): `boost`
    /// (counted in `boosted`), or `None` when boosting is off or `d` is not finite. Kept out of
    /// line: the fast path of every kernel is the single comparison `d > threshold`.
    #[cold]
    #[inline(never)]
    pub fn small_pivot(&self, d: T, boosted: &mut u32) -> Option<T> {
        if self.boost > T::ZERO && d.is_finite() {
            *boosted += 1;
            Some(self.boost)
        } else {
            None
        }
    }
}

/// A ← chol(A), lower triangle, left-looking by panels of NB columns, with pivots handled by
/// `piv` (boosted pivots are added to `*boosted`).
/// Returns `Err(j)` (0-based column) when pivot j is not positive or not finite; A is then
/// partially overwritten.
///
/// # Safety
/// `a` valid for n×n with leading dimension `lda`.
#[inline(always)]
pub unsafe fn potrf_lower<T: Scalar, const FMA: bool>(
    n: usize,
    a: *mut T,
    lda: usize,
    piv: PivotPolicy<T>,
    boosted: &mut u32,
) -> Result<(), usize> {
    avx_or_fallthrough!(
        FMA,
        T,
        potrf_lower(
            n,
            a.cast(),
            lda,
            PivotPolicy { threshold: piv.threshold.to_f64(), boost: piv.boost.to_f64() },
            boosted
        )
    );
    let mut j0 = 0;
    while j0 < n {
        let jb = NB.min(n - j0);
        // A[j0.., j0..j0+jb] −= A[j0.., 0..j0] · A[j0..j0+jb, 0..j0]ᵀ
        gemm_nt_sub::<T, FMA>(n - j0, jb, j0, a.add(j0), lda, a.add(j0), lda, a.add(j0 + j0 * lda), lda);
        // Unblocked right-looking Cholesky of the panel.
        for j in j0..j0 + jb {
            let col = a.add(j * lda);
            let mut d = *col.add(j);
            if !(d > piv.threshold && d.is_finite()) {
                d = piv.small_pivot(d, boosted).ok_or(j)?;
            }
            let d = d.sqrt();
            *col.add(j) = d;
            let inv = T::ONE / d;
            for r in j + 1..n {
                *col.add(r) *= inv;
            }
            for jj in j + 1..j0 + jb {
                let coljj = a.add(jj * lda);
                let f = -*col.add(jj);
                for r in jj..n {
                    *coljj.add(r) = madd::<T, FMA>(*col.add(r), f, *coljj.add(r));
                }
            }
        }
        j0 += jb;
    }
    Ok(())
}
