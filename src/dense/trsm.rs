//! Triangular solves with a block right-hand side, factor side (LAPACK trsm, side R, lower, T).

use super::{avx_or_fallthrough, gemm::gemm_nt_sub, madd};
use crate::scalar::Scalar;

const NB: usize = 4;

/// X[m×n] ← X · L⁻ᵀ for lower-triangular L (n×n): turns a coupling Ψ_{a,i} into L_{a,i}.
///
/// # Safety
/// `x` valid for m×n (leading dimension `ldx`), `l` for n×n (`ldl`), no aliasing.
#[inline(always)]
pub unsafe fn trsm_right_lower_trans<T: Scalar, const FMA: bool>(
    m: usize,
    n: usize,
    l: *const T,
    ldl: usize,
    x: *mut T,
    ldx: usize,
) {
    avx_or_fallthrough!(FMA, T, trsm_rlt(m, n, l.cast(), ldl, x.cast(), ldx));
    let mut j0 = 0;
    while j0 < n {
        let jb = NB.min(n - j0);
        // X[:, j0..j0+jb] −= X[:, 0..j0] · L[j0..j0+jb, 0..j0]ᵀ
        gemm_nt_sub::<T, FMA>(m, jb, j0, x, ldx, l.add(j0), ldl, x.add(j0 * ldx), ldx);
        for j in j0..j0 + jb {
            let xj = x.add(j * ldx);
            let inv = T::ONE / *l.add(j + j * ldl);
            for r in 0..m {
                *xj.add(r) *= inv;
            }
            for jj in j + 1..j0 + jb {
                let f = -*l.add(jj + j * ldl);
                let xjj = x.add(jj * ldx);
                for r in 0..m {
                    *xjj.add(r) = madd::<T, FMA>(*xj.add(r), f, *xjj.add(r));
                }
            }
        }
        j0 += jb;
    }
}
