//! Dense kernels on n×n blocks, the building blocks of every CPU algorithm.
//!
//! Blocks live in plan-owned, column-major storage with leading dimension `ld`; only lower
//! triangles of diagonal blocks are meaningful. Every factor-side operation reduces to one
//! register-blocked microkernel, C ← C − A·Bᵀ ([`gemm::gemm_nt_sub`]), the same shape the paper's
//! algorithms use (potrf, trsm X ← X·L⁻ᵀ, syrk/gemm NT).
//!
//! The kernels are `#[inline(always)]` and generic over `const FMA: bool`: callers instantiate them
//! inside a `#[target_feature(enable = "avx2,fma")]` function when the CPU has FMA (see
//! [`crate::cpu::isa`]). With `FMA` on x86-64, gemm/syrk/trsm/potrf hand over to the AVX2 register
//! tiles of `avx` (8×4 f64 / 16×4 f32 tiles with the triangular solve and the diagonal
//! factorization done in registers; ~3× the portable code at n = 32); the portable code below each
//! dispatch is the fallback for CPUs without FMA and for other architectures.
//!
//! The measurement that chose hand-written kernels over a BLAS crate is in `bench/results/`
//! (n = 32: the block work is a few microseconds, where call overhead dominates).
//!
//! # Safety
//! All functions take raw pointers: the caller guarantees that each operand is valid for its
//! extent (`rows`, `cols`, `ld`) and that output operands do not alias inputs.

#[cfg(target_arch = "x86_64")]
mod avx;
pub mod gemm;
pub mod potrf;
#[cfg(target_arch = "x86_64")]
mod simd;
pub mod trsm;
pub mod trsv;

use crate::scalar::Scalar;

/// In a kernel instantiated with `FMA`, runs the AVX2 kernel `avx::$f` for the concrete scalar
/// type and returns its result; otherwise falls through to the portable code after it.
macro_rules! avx_or_fallthrough {
    ($fma:expr, $t:ty, $f:ident($($arg:expr),* $(,)?)) => {
        #[cfg(target_arch = "x86_64")]
        if $fma {
            match <$t as $crate::scalar::Scalar>::DTYPE {
                $crate::scalar::DType::F64 => return super::avx::$f::<f64>($($arg),*),
                $crate::scalar::DType::F32 => return super::avx::$f::<f32>($($arg),*),
            }
        }
    };
}
pub(crate) use avx_or_fallthrough;

/// `a·b + c`, fused when compiled for FMA.
#[inline(always)]
pub(crate) fn madd<T: Scalar, const FMA: bool>(a: T, b: T, c: T) -> T {
    if FMA {
        a.mul_add_fused(b, c)
    } else {
        a * b + c
    }
}

#[cfg(test)]
mod tests;
