//! Gradients for learning: the backward pass of x = Ψ⁻¹b with the existing factor, so PyTorch or
//! JAX users can wrap btchol in an autograd function.
//!
//! For a loss L(x) with g = ∂L/∂x: λ = Ψ⁻¹g is ∂L/∂b (Ψ is symmetric), and ∂L/∂Ψ = −λxᵀ. As Ψ is
//! symmetric and block-tridiagonal, the gradient returned is the block-tridiagonal part of the
//! symmetric matrix G = −½(λxᵀ + xλᵀ) (summed over right-hand sides): dL = ⟨G, dΨ⟩ for every
//! symmetric perturbation dΨ with Ψ's pattern. In terms of the uploaded arrays: a change h in
//! E_i(r, c) (which moves Ψ at (i+1, i) and its mirror) changes L by 2·h·G_{E_i}(r, c); a change h
//! in the lower-triangle entry D_i(r, c), r > c, by 2·h·G_{D_i}(r, c), and on the diagonal by
//! h·G_{D_i}(r, r).

use super::Plan;
use crate::error::{Error, Result};
use crate::model::{RhsMut, RhsRef};
use crate::scalar::Scalar;

impl<T: Scalar> Plan<T> {
    /// Backward pass of [`Plan::solve`]: `x` is the solution of the forward solve, `grad` holds
    /// ∂L/∂x on entry and ∂L/∂b on return; `grad_diag` (B·N blocks) and `grad_sub` (B·(N−1)
    /// blocks) receive the blocks of G = −½(λxᵀ + xλᵀ) (see the module docs) in the plan's layout,
    /// D blocks with both triangles. Needs the factor of the matrix `x` was solved with; failed
    /// items are left unchanged and reported as for [`Plan::solve`].
    pub fn gradient(
        &mut self,
        x: &RhsRef<T>,
        grad: &mut RhsMut<T>,
        grad_diag: &mut [T],
        grad_sub: &mut [T],
    ) -> Result<()> {
        let dims = self.dims;
        if x.shape().nrhs != grad.nrhs() {
            return Err(Error::InvalidArgument(format!(
                "gradient: x has {} right-hand sides, grad has {}",
                x.shape().nrhs,
                grad.nrhs()
            )));
        }
        x.shape().required_len(dims)?;
        for (what, needed, got) in
            [("gradient of D", dims.diag_len(), grad_diag.len()), ("gradient of E", dims.sub_len(), grad_sub.len())]
        {
            if got < needed {
                return Err(Error::BufferTooSmall { what, needed, got });
            }
        }
        x.check_finite(dims, self.host_passes())?;
        let solved = self.solve(grad); // λ = Ψ⁻¹ ∂L/∂x, in place
        if let Err(e) = &solved {
            if !matches!(e, Error::NotPositiveDefinite { .. }) {
                return solved;
            }
        }
        let (nb, n, m, layout) = (dims.n_blocks, dims.block_size, x.shape().nrhs, self.options.layout);
        let lam = grad.as_ref();
        let half = T::from_f64(0.5);
        // out(r, c) = −½ Σ_col (λ_{bi,r} x_{bj,c} + x_{bi,r} λ_{bj,c}) for block row bi, column bj.
        let outer = |out: &mut [T], item: usize, bi: usize, bj: usize| {
            for r in 0..n {
                for c in 0..n {
                    let mut s = T::ZERO;
                    for col in 0..m {
                        s += lam.get(item, bi * n + r, col) * x.get(item, bj * n + c, col)
                            + x.get(item, bi * n + r, col) * lam.get(item, bj * n + c, col);
                    }
                    out[layout.offset(r, c, n)] = -(half * s);
                }
            }
        };
        for item in 0..dims.batch {
            if !matches!(self.status[item], super::ItemStatus::Factored) {
                continue;
            }
            for i in 0..nb {
                outer(&mut grad_diag[(item * nb + i) * n * n..][..n * n], item, i, i);
                if i + 1 < nb {
                    outer(&mut grad_sub[(item * (nb - 1) + i) * n * n..][..n * n], item, i + 1, i);
                }
            }
        }
        solved
    }
}
