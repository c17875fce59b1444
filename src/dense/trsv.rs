//! Solve-side kernels: a block of right-hand sides Y (n×m, arbitrary strides in caller memory)
//! against factor blocks (column-major, plan-owned).

use super::madd;
use crate::scalar::Scalar;

/// A strided n×m view of right-hand sides: element (r, c) at `ptr + r·rs + c·cs`.
#[derive(Clone, Copy, Debug)]
pub struct Strided<T> {
    pub ptr: *mut T,
    pub rs: usize,
    pub cs: usize,
}

impl<T> Strided<T> {
    /// Pointer to element (r, c).
    ///
    /// # Safety
    /// (r, c) must lie inside the matrix `ptr` points to.
    #[inline(always)]
    pub unsafe fn at(&self, r: usize, c: usize) -> *mut T {
        self.ptr.add(r * self.rs + c * self.cs)
    }
}

/// Y ← L⁻¹·Y (forward substitution with a diagonal factor block).
///
/// # Safety
/// `l` valid for n×n (`ldl`), `y` for n×m.
#[inline(always)]
pub unsafe fn trsv_lower<T: Scalar, const FMA: bool>(n: usize, m: usize, l: *const T, ldl: usize, y: Strided<T>) {
    for c in 0..m {
        for j in 0..n {
            let yj = *y.at(j, c) / *l.add(j + j * ldl);
            *y.at(j, c) = yj;
            let f = -yj;
            let lj = l.add(j * ldl);
            for r in j + 1..n {
                *y.at(r, c) = madd::<T, FMA>(*lj.add(r), f, *y.at(r, c));
            }
        }
    }
}

/// Y ← L⁻ᵀ·Y (backward substitution with a diagonal factor block).
///
/// # Safety
/// As [`trsv_lower`].
#[inline(always)]
pub unsafe fn trsv_lower_trans<T: Scalar, const FMA: bool>(n: usize, m: usize, l: *const T, ldl: usize, y: Strided<T>) {
    for c in 0..m {
        for j in (0..n).rev() {
            let lj = l.add(j * ldl);
            let mut s = *y.at(j, c);
            for r in j + 1..n {
                s = madd::<T, FMA>(-*lj.add(r), *y.at(r, c), s);
            }
            *y.at(j, c) = s / *lj.add(j);
        }
    }
}

/// Y ← Y − A·X with A (n×n, column-major) a factor block: the forward solve's update.
///
/// # Safety
/// `a` valid for n×n (`lda`), `y` and `x` for n×m and not aliasing each other.
#[inline(always)]
pub unsafe fn gemv_n_sub<T: Scalar, const FMA: bool>(
    n: usize,
    m: usize,
    a: *const T,
    lda: usize,
    x: Strided<T>,
    y: Strided<T>,
) {
    for c in 0..m {
        for k in 0..n {
            let f = -*x.at(k, c);
            let ak = a.add(k * lda);
            for r in 0..n {
                *y.at(r, c) = madd::<T, FMA>(*ak.add(r), f, *y.at(r, c));
            }
        }
    }
}

/// Y ← Y − Aᵀ·X: the backward solve's update.
///
/// # Safety
/// As [`gemv_n_sub`].
#[inline(always)]
pub unsafe fn gemv_t_sub<T: Scalar, const FMA: bool>(
    n: usize,
    m: usize,
    a: *const T,
    lda: usize,
    x: Strided<T>,
    y: Strided<T>,
) {
    for c in 0..m {
        for r in 0..n {
            let ar = a.add(r * lda);
            let mut s = *y.at(r, c);
            for k in 0..n {
                s = madd::<T, FMA>(-*ar.add(k), *x.at(k, c), s);
            }
            *y.at(r, c) = s;
        }
    }
}
