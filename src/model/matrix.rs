use super::{Dims, Layout};
use crate::error::{Error, Operand, Result};
use crate::scalar::Scalar;

/// A read-only view of a batch of block-tridiagonal matrices in caller memory.
/// See the [module documentation](super) for the element layout.
#[derive(Clone, Copy, Debug)]
pub struct BlockTridiagRef<'a, T> {
    dims: Dims,
    layout: Layout,
    diag: &'a [T],
    sub: &'a [T],
}

impl<'a, T: Scalar> BlockTridiagRef<'a, T> {
    /// Wraps caller buffers after checking that they are long enough for `dims`.
    /// Longer buffers are accepted; only the leading elements are read.
    pub fn new(dims: Dims, layout: Layout, diag: &'a [T], sub: &'a [T]) -> Result<Self> {
        if diag.len() < dims.diag_len() {
            return Err(Error::BufferTooSmall {
                what: "diagonal blocks (batch·N·n·n)",
                needed: dims.diag_len(),
                got: diag.len(),
            });
        }
        if sub.len() < dims.sub_len() {
            return Err(Error::BufferTooSmall {
                what: "sub-diagonal blocks (batch·(N−1)·n·n)",
                needed: dims.sub_len(),
                got: sub.len(),
            });
        }
        Ok(BlockTridiagRef { dims, layout, diag, sub })
    }

    pub fn dims(&self) -> Dims {
        self.dims
    }
    pub fn layout(&self) -> Layout {
        self.layout
    }
    /// The caller's diagonal-block buffer (at least `dims.diag_len()` elements).
    pub fn diag_data(&self) -> &'a [T] {
        self.diag
    }
    /// The caller's sub-diagonal-block buffer (at least `dims.sub_len()` elements).
    pub fn sub_data(&self) -> &'a [T] {
        self.sub
    }

    /// Element (r, c) of D_block of item `item`.
    #[inline(always)]
    pub fn d(&self, item: usize, block: usize, r: usize, c: usize) -> T {
        let n = self.dims.block_size;
        self.diag[(item * self.dims.n_blocks + block) * n * n + self.layout.offset(r, c, n)]
    }

    /// Element (r, c) of E_block of item `item` (Ψ_{block+1, block}).
    #[inline(always)]
    pub fn e(&self, item: usize, block: usize, r: usize, c: usize) -> T {
        let n = self.dims.block_size;
        self.sub[(item * (self.dims.n_blocks - 1) + block) * n * n + self.layout.offset(r, c, n)]
    }

    /// Element (r, c) of D_block, reading only the lower triangle (the upper is its mirror).
    #[inline(always)]
    pub fn d_sym(&self, item: usize, block: usize, r: usize, c: usize) -> T {
        if r >= c {
            self.d(item, block, r, c)
        } else {
            self.d(item, block, c, r)
        }
    }

    /// Checks every element that is read (lower triangles of D, all of E) of one item for NaN/Inf.
    pub fn check_finite_item(&self, item: usize) -> Result<()> {
        let n = self.dims.block_size;
        for i in 0..self.dims.n_blocks {
            for c in 0..n {
                for r in c..n {
                    if !self.d(item, i, r, c).is_finite() {
                        return Err(Error::NonFinite { operand: Operand::Diagonal, item, block: i, row: r, col: c });
                    }
                }
            }
        }
        for i in 0..self.dims.n_blocks - 1 {
            for c in 0..n {
                for r in 0..n {
                    if !self.e(item, i, r, c).is_finite() {
                        return Err(Error::NonFinite { operand: Operand::SubDiagonal, item, block: i, row: r, col: c });
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks the whole batch for NaN/Inf; reports the first offender in (item, D before E) order.
    pub fn check_finite(&self) -> Result<()> {
        (0..self.dims.batch).try_for_each(|b| self.check_finite_item(b))
    }
}

impl<'a, T: Scalar> BlockTridiagRef<'a, T> {
    /// y ← Ψ x for every item and right-hand side, in the working precision (for residuals
    /// r = b − Ψx). `x` and `y` must have the same shape and `self`'s dims.
    pub fn matvec(&self, x: &super::RhsRef<T>, y: &mut super::RhsMut<T>) -> Result<()> {
        let d = self.dims;
        if x.shape().nrhs != y.shape().nrhs {
            return Err(Error::InvalidArgument("matvec: x and y have different numbers of columns".into()));
        }
        x.shape().required_len(d)?;
        y.shape().required_len(d)?;
        let (nb, n) = (d.n_blocks, d.block_size);
        for b in 0..d.batch {
            for col in 0..x.shape().nrhs {
                for i in 0..nb {
                    for r in 0..n {
                        let mut s = T::ZERO;
                        for c in 0..n {
                            s += self.d_sym(b, i, r, c) * x.get(b, i * n + c, col);
                        }
                        if i > 0 {
                            for c in 0..n {
                                s += self.e(b, i - 1, r, c) * x.get(b, (i - 1) * n + c, col);
                            }
                        }
                        if i + 1 < nb {
                            for c in 0..n {
                                s += self.e(b, i, c, r) * x.get(b, (i + 1) * n + c, col);
                            }
                        }
                        let off = y.shape().offset(b, i * n + r, col);
                        y.data[off] = s;
                    }
                }
            }
        }
        Ok(())
    }
}
