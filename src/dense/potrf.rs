//! Cholesky factorization of one diagonal block (LAPACK potrf, lower).

use super::{avx_or_fallthrough, gemm::gemm_nt_sub, madd};
use crate::scalar::Scalar;

/// Width of the column panels: the panel update is one microkernel call.
const NB: usize = 4;

/// A ← chol(A), lower triangle, left-looking by panels of NB columns.
/// Returns `Err(j)` (0-based column) when pivot j is not positive or not finite; A is then
/// partially overwritten.
///
/// # Safety
/// `a` valid for n×n with leading dimension `lda`.
#[inline(always)]
pub unsafe fn potrf_lower<T: Scalar, const FMA: bool>(n: usize, a: *mut T, lda: usize) -> Result<(), usize> {
    avx_or_fallthrough!(FMA, T, potrf_lower(n, a.cast(), lda));
    let mut j0 = 0;
    while j0 < n {
        let jb = NB.min(n - j0);
        // A[j0.., j0..j0+jb] −= A[j0.., 0..j0] · A[j0..j0+jb, 0..j0]ᵀ
        gemm_nt_sub::<T, FMA>(n - j0, jb, j0, a.add(j0), lda, a.add(j0), lda, a.add(j0 + j0 * lda), lda);
        // Unblocked right-looking Cholesky of the panel.
        for j in j0..j0 + jb {
            let col = a.add(j * lda);
            let d = *col.add(j);
            if !(d > T::ZERO) || !d.is_finite() {
                return Err(j);
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
