//! Dense kernels on n×n blocks, the building blocks of every CPU algorithm.
//!
//! Blocks live in plan-owned, column-major storage with leading dimension `ld`; only lower
//! triangles of diagonal blocks are meaningful. Every factor-side operation reduces to one
//! register-blocked microkernel, C ← C − A·Bᵀ ([`gemm::gemm_nt_sub`]), the same shape the paper's
//! algorithms use (potrf, trsm X ← X·L⁻ᵀ, syrk/gemm NT).
//!
//! The kernels are `#[inline(always)]` and generic over `const FMA: bool`: callers instantiate them
//! inside a `#[target_feature(enable = "avx2,fma")]` function when the CPU has FMA (see
//! [`crate::cpu::isa`]), so the same source compiles to fused multiply-adds there and to plain
//! arithmetic elsewhere. The measurement that chose hand-written kernels over a BLAS crate is in
//! `bench/results/` (n = 32: the block work is a few microseconds, where call overhead dominates).
//!
//! # Safety
//! All functions take raw pointers: the caller guarantees that each operand is valid for its
//! extent (`rows`, `cols`, `ld`) and that output operands do not alias inputs.

pub mod gemm;
pub mod potrf;
pub mod trsm;
pub mod trsv;

use crate::scalar::Scalar;

/// `a·b + c`, fused when compiled for FMA.
#[inline(always)]
pub(crate) fn madd<T: Scalar, const FMA: bool>(a: T, b: T, c: T) -> T {
    if FMA {
        a.mul_add_fused(b, c)
    } else {
        a * b + c
    }
}
