//! AVX2 vectors of the two scalar types, behind one trait so the register-tile kernels in
//! [`super::avx`] are written once for f64 (4 lanes) and f32 (8 lanes).
//!
//! Every method is `#[inline(always)]` and only meaningful inside a function compiled with
//! `avx2,fma` (the kernels' entry points are `#[target_feature(enable = "avx2,fma")]`).

use std::arch::x86_64::*;

use crate::scalar::Scalar;

/// A scalar type with a 256-bit AVX2 vector of `W` lanes.
pub(crate) trait Vx: Scalar {
    /// The vector register type.
    type V: Copy;
    /// Lanes per vector.
    const W: usize;
    /// All-zero vector.
    unsafe fn vzero() -> Self::V;
    /// Unaligned load of `W` consecutive elements.
    unsafe fn vload(p: *const Self) -> Self::V;
    /// Unaligned store of `W` consecutive elements.
    unsafe fn vstore(p: *mut Self, v: Self::V);
    /// Lane mask with the first `n` (< `W`) lanes on.
    unsafe fn vmask(n: usize) -> __m256i;
    /// Load of the masked-on lanes (others read as 0, never touched in memory).
    unsafe fn vload_m(p: *const Self, m: __m256i) -> Self::V;
    /// Store of the masked-on lanes only.
    unsafe fn vstore_m(p: *mut Self, m: __m256i, v: Self::V);
    /// Broadcast of one element from memory.
    unsafe fn vbcast(p: *const Self) -> Self::V;
    /// Broadcast of a value.
    unsafe fn vsplat(x: Self) -> Self::V;
    /// c − a·b (fused).
    unsafe fn vnmadd(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// a + b.
    unsafe fn vadd(a: Self::V, b: Self::V) -> Self::V;
    /// a·b.
    unsafe fn vmul(a: Self::V, b: Self::V) -> Self::V;
}

/// Lane-mask source: `MASK_SRC[16 - n..]` starts with n ones (as i32 lanes).
static MASK_SRC: [i32; 32] =
    [-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

impl Vx for f64 {
    type V = __m256d;
    const W: usize = 4;
    #[inline(always)]
    unsafe fn vzero() -> __m256d {
        _mm256_setzero_pd()
    }
    #[inline(always)]
    unsafe fn vload(p: *const f64) -> __m256d {
        _mm256_loadu_pd(p)
    }
    #[inline(always)]
    unsafe fn vstore(p: *mut f64, v: __m256d) {
        _mm256_storeu_pd(p, v)
    }
    #[inline(always)]
    unsafe fn vmask(n: usize) -> __m256i {
        _mm256_loadu_si256(MASK_SRC.as_ptr().add(16 - 2 * n) as *const __m256i)
    }
    #[inline(always)]
    unsafe fn vload_m(p: *const f64, m: __m256i) -> __m256d {
        _mm256_maskload_pd(p, m)
    }
    #[inline(always)]
    unsafe fn vstore_m(p: *mut f64, m: __m256i, v: __m256d) {
        _mm256_maskstore_pd(p, m, v)
    }
    #[inline(always)]
    unsafe fn vbcast(p: *const f64) -> __m256d {
        _mm256_broadcast_sd(&*p)
    }
    #[inline(always)]
    unsafe fn vsplat(x: f64) -> __m256d {
        _mm256_set1_pd(x)
    }
    #[inline(always)]
    unsafe fn vnmadd(a: __m256d, b: __m256d, c: __m256d) -> __m256d {
        _mm256_fnmadd_pd(a, b, c)
    }
    #[inline(always)]
    unsafe fn vadd(a: __m256d, b: __m256d) -> __m256d {
        _mm256_add_pd(a, b)
    }
    #[inline(always)]
    unsafe fn vmul(a: __m256d, b: __m256d) -> __m256d {
        _mm256_mul_pd(a, b)
    }
}

impl Vx for f32 {
    type V = __m256;
    const W: usize = 8;
    #[inline(always)]
    unsafe fn vzero() -> __m256 {
        _mm256_setzero_ps()
    }
    #[inline(always)]
    unsafe fn vload(p: *const f32) -> __m256 {
        _mm256_loadu_ps(p)
    }
    #[inline(always)]
    unsafe fn vstore(p: *mut f32, v: __m256) {
        _mm256_storeu_ps(p, v)
    }
    #[inline(always)]
    unsafe fn vmask(n: usize) -> __m256i {
        _mm256_loadu_si256(MASK_SRC.as_ptr().add(16 - n) as *const __m256i)
    }
    #[inline(always)]
    unsafe fn vload_m(p: *const f32, m: __m256i) -> __m256 {
        _mm256_maskload_ps(p, m)
    }
    #[inline(always)]
    unsafe fn vstore_m(p: *mut f32, m: __m256i, v: __m256) {
        _mm256_maskstore_ps(p, m, v)
    }
    #[inline(always)]
    unsafe fn vbcast(p: *const f32) -> __m256 {
        _mm256_broadcast_ss(&*p)
    }
    #[inline(always)]
    unsafe fn vsplat(x: f32) -> __m256 {
        _mm256_set1_ps(x)
    }
    #[inline(always)]
    unsafe fn vnmadd(a: __m256, b: __m256, c: __m256) -> __m256 {
        _mm256_fnmadd_ps(a, b, c)
    }
    #[inline(always)]
    unsafe fn vadd(a: __m256, b: __m256) -> __m256 {
        _mm256_add_ps(a, b)
    }
    #[inline(always)]
    unsafe fn vmul(a: __m256, b: __m256) -> __m256 {
        _mm256_mul_ps(a, b)
    }
}
