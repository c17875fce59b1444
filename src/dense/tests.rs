//! The AVX2 kernels against the portable ones (FMA = false) on every shape class: full and
//! masked row tiles, 1..4-column panel tails, leading dimensions larger than the rows, and a
//! pivot failure. Padding rows (between the rows and the leading dimension) must stay untouched.

use super::{
    gemm::*,
    potrf::{potrf_lower, PivotPolicy},
    trsm::trsm_right_lower_trans,
};
use crate::scalar::Scalar;

/// Deterministic values in [−1, 1).
fn rand_vec<T: Scalar>(seed: u64, len: usize) -> Vec<T> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            T::from_f64((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0)
        })
        .collect()
}

/// A well-conditioned SPD n×n matrix (full storage, leading dimension `ld`), padding = `pad`.
fn spd<T: Scalar>(seed: u64, n: usize, ld: usize, pad: T) -> Vec<T> {
    let g = rand_vec::<f64>(seed, n * n);
    let mut a = vec![pad; ld * n];
    for j in 0..n {
        for i in 0..n {
            let mut s: f64 = (0..n).map(|k| g[i + k * n] * g[j + k * n]).sum::<f64>() / n as f64;
            if i == j {
                s += 1.0;
            }
            a[i + j * ld] = T::from_f64(s);
        }
    }
    a
}

fn fma_available() -> bool {
    crate::cpu::isa::has_fma()
}

/// max |x − y| over the entries selected by `keep(i, j)` of two m×p arrays with leading dimension
/// `ld`, relative to max |y|; and whether the padding rows agree bit for bit.
fn compare<T: Scalar>(
    x: &[T],
    y: &[T],
    m: usize,
    p: usize,
    ld: usize,
    keep: impl Fn(usize, usize) -> bool,
) -> (f64, bool) {
    let (mut err, mut scale, mut pad_ok) = (0.0f64, 0.0f64, true);
    for j in 0..p {
        for i in 0..ld {
            let (a, b) = (x[i + j * ld].to_f64(), y[i + j * ld].to_f64());
            if i >= m {
                pad_ok &= a.to_bits() == b.to_bits();
            } else if keep(i, j) {
                err = err.max((a - b).abs());
                scale = scale.max(b.abs());
            }
        }
    }
    (err / scale.max(1e-300), pad_ok)
}

fn tol<T: Scalar>(k: usize) -> f64 {
    20.0 * (k.max(1) as f64) * T::EPSILON
}

fn check_all<T: Scalar>() {
    if !fma_available() {
        return;
    }
    let pad = T::from_f64(12345.0);
    for n in (1..=41).chain([47, 48, 63, 64, 65, 70]) {
        for extra in [0, 3] {
            let ld = n + extra;
            let seed = (n * 100 + extra) as u64;

            // potrf
            let a0 = spd::<T>(seed, n, ld, pad);
            let (mut x, mut y) = (a0.clone(), a0.clone());
            unsafe {
                potrf_lower::<T, true>(n, x.as_mut_ptr(), ld, PivotPolicy::strict(), &mut 0).unwrap();
                potrf_lower::<T, false>(n, y.as_mut_ptr(), ld, PivotPolicy::strict(), &mut 0).unwrap();
            }
            let (e, ok) = compare(&x, &y, n, n, ld, |i, j| i >= j);
            assert!(e < tol::<T>(n) && ok, "potrf {:?} n={n} ld={ld}: err {e:e}, padding {ok}", T::DTYPE);
            let l = y;

            // trsm with several row counts
            for m in [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, n, n + 1] {
                let ldx = m + extra;
                let mut x0 = rand_vec::<T>(seed + m as u64, ldx * n);
                for j in 0..n {
                    for i in m..ldx {
                        x0[i + j * ldx] = pad;
                    }
                }
                let (mut x, mut y) = (x0.clone(), x0.clone());
                unsafe {
                    trsm_right_lower_trans::<T, true>(m, n, l.as_ptr(), ld, x.as_mut_ptr(), ldx);
                    trsm_right_lower_trans::<T, false>(m, n, l.as_ptr(), ld, y.as_mut_ptr(), ldx);
                }
                let (e, ok) = compare(&x, &y, m, n, ldx, |_, _| true);
                assert!(e < tol::<T>(n), "trsm {:?} m={m} n={n}: err {e:e}", T::DTYPE);
                assert!(ok, "trsm {:?} m={m} n={n}: padding touched", T::DTYPE);
            }

            // syrk (lower part only is meaningful)
            for k in [0, 1, 3, 4, 5, n] {
                let lda = n + extra;
                let a = rand_vec::<T>(seed + 7 + k as u64, lda * k);
                let (mut x, mut y) = (a0.clone(), a0.clone());
                unsafe {
                    syrk_lower_sub::<T, true>(n, k, a.as_ptr(), lda, x.as_mut_ptr(), ld);
                    syrk_lower_sub::<T, false>(n, k, a.as_ptr(), lda, y.as_mut_ptr(), ld);
                }
                let (e, ok) = compare(&x, &y, n, n, ld, |i, j| i >= j);
                assert!(e < tol::<T>(k) && ok, "syrk {:?} n={n} k={k}: err {e:e}, padding {ok}", T::DTYPE);
            }

            // gemm (sub and neg) on an m×p output
            for (m, p, k) in [(n, n, n), (n, 3, 5), (5, n, 2), (n + 2, n, 1)] {
                let ldc = m + extra;
                let a = rand_vec::<T>(seed + 11, m * k);
                let b = rand_vec::<T>(seed + 13, p * k);
                let mut c0 = rand_vec::<T>(seed + 17, ldc * p);
                for j in 0..p {
                    for i in m..ldc {
                        c0[i + j * ldc] = pad;
                    }
                }
                let (mut x, mut y) = (c0.clone(), c0.clone());
                unsafe {
                    gemm_nt_sub::<T, true>(m, p, k, a.as_ptr(), m, b.as_ptr(), p, x.as_mut_ptr(), ldc);
                    gemm_nt_sub::<T, false>(m, p, k, a.as_ptr(), m, b.as_ptr(), p, y.as_mut_ptr(), ldc);
                }
                let (e, ok) = compare(&x, &y, m, p, ldc, |_, _| true);
                assert!(e < tol::<T>(k) && ok, "gemm {:?} {m}×{p}×{k}: err {e:e}, padding {ok}", T::DTYPE);
                let (mut x, mut y) = (c0.clone(), c0.clone());
                unsafe {
                    gemm_nt_neg::<T, true>(m, p, k, a.as_ptr(), m, b.as_ptr(), p, x.as_mut_ptr(), ldc);
                    gemm_nt_neg::<T, false>(m, p, k, a.as_ptr(), m, b.as_ptr(), p, y.as_mut_ptr(), ldc);
                }
                let (e, ok) = compare(&x, &y, m, p, ldc, |_, _| true);
                assert!(e < tol::<T>(k) && ok, "gemm_neg {:?} {m}×{p}×{k}: err {e:e}, padding {ok}", T::DTYPE);
            }

            // A failing pivot is reported at the same column by both paths.
            for bad in [0, n / 2, n - 1] {
                let mut a = a0.clone();
                a[bad + bad * ld] = T::from_f64(-1.0);
                let mut b = a.clone();
                let r1 = unsafe { potrf_lower::<T, true>(n, a.as_mut_ptr(), ld, PivotPolicy::strict(), &mut 0) };
                let r2 = unsafe { potrf_lower::<T, false>(n, b.as_mut_ptr(), ld, PivotPolicy::strict(), &mut 0) };
                assert_eq!(r1, r2, "potrf {:?} n={n}: failing pivot", T::DTYPE);
                assert!(r1.is_err());
            }

            // A boosted pivot: both paths replace it by the boost, count it exactly once, and
            // agree on the rest of the factor.
            for bad in [0, n / 2, n - 1] {
                let mut a = a0.clone();
                a[bad + bad * ld] = T::from_f64(-1.0);
                let mut b = a.clone();
                let piv = PivotPolicy { threshold: T::from_f64(1e-3), boost: T::from_f64(1e4) };
                let (mut c1, mut c2) = (0, 0);
                let r1 = unsafe { potrf_lower::<T, true>(n, a.as_mut_ptr(), ld, piv, &mut c1) };
                let r2 = unsafe { potrf_lower::<T, false>(n, b.as_mut_ptr(), ld, piv, &mut c2) };
                assert_eq!((r1, r2, c1, c2), (Ok(()), Ok(()), 1, 1), "potrf {:?} n={n}: boosted pivot", T::DTYPE);
                assert_eq!(
                    a[bad + bad * ld],
                    T::from_f64(100.0),
                    "potrf {:?} n={n}: sqrt(boost) on the diagonal",
                    T::DTYPE
                );
                let (e, ok) = compare(&a, &b, n, n, ld, |i, j| i >= j);
                assert!(e < tol::<T>(n) && ok, "potrf {:?} n={n}: boosted factors differ by {e:e}", T::DTYPE);
            }
        }
    }
}

#[test]
fn avx_kernels_match_portable_f64() {
    check_all::<f64>();
}

#[test]
fn avx_kernels_match_portable_f32() {
    check_all::<f32>();
}
