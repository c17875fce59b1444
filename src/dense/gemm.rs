//! C ← C − A·Bᵀ on column-major operands: the one microkernel every block operation uses.

use super::{avx_or_fallthrough, madd};
use crate::scalar::Scalar;

/// Rows of the register tile (two AVX2 registers of f64).
const MR: usize = 8;
/// Columns of the register tile.
const NR: usize = 4;

/// C[m×p] ← C − A[m×k]·B[p×k]ᵀ, all column-major.
///
/// # Safety
/// `a`, `b`, `c` valid for their extents with leading dimensions `lda`, `ldb`, `ldc`; `c` does not
/// alias `a` or `b`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_nt_sub<T: Scalar, const FMA: bool>(
    m: usize,
    p: usize,
    k: usize,
    a: *const T,
    lda: usize,
    b: *const T,
    ldb: usize,
    c: *mut T,
    ldc: usize,
) {
    if k == 0 {
        return;
    }
    avx_or_fallthrough!(FMA, T, gemm_nt(m, p, k, a.cast(), lda, b.cast(), ldb, c.cast(), ldc, false));
    let mut j = 0;
    while j + NR <= p {
        let mut i = 0;
        while i + MR <= m {
            tile::<T, FMA>(k, a.add(i), lda, b.add(j), ldb, c.add(i + j * ldc), ldc);
            i += MR;
        }
        if i < m {
            edge::<T, FMA>(m - i, NR, k, a.add(i), lda, b.add(j), ldb, c.add(i + j * ldc), ldc);
        }
        j += NR;
    }
    if j < p {
        edge::<T, FMA>(m, p - j, k, a, lda, b.add(j), ldb, c.add(j * ldc), ldc);
    }
}

/// The MR×NR register tile.
#[inline(always)]
unsafe fn tile<T: Scalar, const FMA: bool>(
    k: usize,
    a: *const T,
    lda: usize,
    b: *const T,
    ldb: usize,
    c: *mut T,
    ldc: usize,
) {
    let mut acc = [[T::ZERO; MR]; NR];
    for l in 0..k {
        let ap = a.add(l * lda);
        let mut av = [T::ZERO; MR];
        for (ii, v) in av.iter_mut().enumerate() {
            *v = *ap.add(ii);
        }
        let bp = b.add(l * ldb);
        for (jj, col) in acc.iter_mut().enumerate() {
            let bv = *bp.add(jj);
            for ii in 0..MR {
                col[ii] = madd::<T, FMA>(av[ii], bv, col[ii]);
            }
        }
    }
    for (jj, col) in acc.iter().enumerate() {
        let cp = c.add(jj * ldc);
        for (ii, v) in col.iter().enumerate() {
            *cp.add(ii) -= *v;
        }
    }
}

/// Remainder tiles (m < MR or p < NR): same arithmetic, runtime extents.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn edge<T: Scalar, const FMA: bool>(
    m: usize,
    p: usize,
    k: usize,
    a: *const T,
    lda: usize,
    b: *const T,
    ldb: usize,
    c: *mut T,
    ldc: usize,
) {
    for jj in 0..p {
        let cp = c.add(jj * ldc);
        for l in 0..k {
            let bv = -*b.add(jj + l * ldb);
            let ap = a.add(l * lda);
            for ii in 0..m {
                *cp.add(ii) = madd::<T, FMA>(*ap.add(ii), bv, *cp.add(ii));
            }
        }
    }
}

/// Lower trapezoid of C[m×m] ← C − A[m×k]·A[m×k]ᵀ (syrk): only column panels on or below the
/// diagonal are touched, so the upper triangle of the diagonal panel gets harmless garbage.
///
/// # Safety
/// As [`gemm_nt_sub`].
#[inline(always)]
pub unsafe fn syrk_lower_sub<T: Scalar, const FMA: bool>(
    m: usize,
    k: usize,
    a: *const T,
    lda: usize,
    c: *mut T,
    ldc: usize,
) {
    avx_or_fallthrough!(FMA, T, syrk_lower(m, k, a.cast(), lda, c.cast(), ldc));
    let mut j = 0;
    while j < m {
        let jb = NR.min(m - j);
        gemm_nt_sub::<T, FMA>(m - j, jb, k, a.add(j), lda, a.add(j), lda, c.add(j + j * ldc), ldc);
        j += jb;
    }
}

/// C ← −A·Bᵀ (C overwritten): the fill of a nested-dissection elimination.
///
/// # Safety
/// As [`gemm_nt_sub`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_nt_neg<T: Scalar, const FMA: bool>(
    m: usize,
    p: usize,
    k: usize,
    a: *const T,
    lda: usize,
    b: *const T,
    ldb: usize,
    c: *mut T,
    ldc: usize,
) {
    avx_or_fallthrough!(FMA, T, gemm_nt(m, p, k, a.cast(), lda, b.cast(), ldb, c.cast(), ldc, true));
    for j in 0..p {
        for i in 0..m {
            *c.add(i + j * ldc) = T::ZERO;
        }
    }
    gemm_nt_sub::<T, FMA>(m, p, k, a, lda, b, ldb, c, ldc);
}
