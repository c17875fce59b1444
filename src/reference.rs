//! Independent reference code for tests and benchmarks: seeded random problems, an f64
//! block-tridiagonal mat-vec, the relative backward error, and a dense f64 Cholesky of the whole
//! matrix. None of it shares code with the solver's kernels, so it can check them.

use crate::model::{BlockTridiagRef, Dims, Layout, RhsRef};
use crate::scalar::Scalar;

/// SplitMix64: small, seedable, good enough to draw test matrices.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [−1, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// A random SPD block-tridiagonal batch in caller layout: E entries uniform in [−1, 1), D
/// symmetric with uniform off-diagonal entries and a diagonal that makes Ψ strictly diagonally
/// dominant by `margin` (smaller margin, worse conditioning). Both triangles of D are filled.
pub fn random_problem<T: Scalar>(seed: u64, dims: Dims, layout: Layout, margin: f64) -> (Vec<T>, Vec<T>) {
    let mut rng = Rng::new(seed);
    let (n, nb, bl) = (dims.block_size, dims.n_blocks, dims.block_len());
    let mut d = vec![T::ZERO; dims.diag_len()];
    let mut e = vec![T::ZERO; dims.sub_len()];
    for b in 0..dims.batch {
        for i in 0..nb - 1 {
            let blk = &mut e[(b * (nb - 1) + i) * bl..][..bl];
            for r in 0..n {
                for c in 0..n {
                    blk[layout.offset(r, c, n)] = T::from_f64(rng.uniform());
                }
            }
        }
        for i in 0..nb {
            let mut full = vec![0.0f64; bl];
            for r in 0..n {
                for c in 0..r {
                    let v = rng.uniform();
                    full[r * n + c] = v;
                    full[c * n + r] = v;
                }
            }
            for r in 0..n {
                // Off-diagonal absolute row sum of Ψ in this row, rounded as stored.
                let mut s: f64 = (0..n).filter(|&c| c != r).map(|c| T::from_f64(full[r * n + c]).to_f64().abs()).sum();
                if i > 0 {
                    let eb = &e[(b * (nb - 1) + i - 1) * bl..];
                    s += (0..n).map(|c| eb[layout.offset(r, c, n)].to_f64().abs()).sum::<f64>();
                }
                if i + 1 < nb {
                    let eb = &e[(b * (nb - 1) + i) * bl..];
                    s += (0..n).map(|c| eb[layout.offset(c, r, n)].to_f64().abs()).sum::<f64>();
                }
                full[r * n + r] = s + margin;
            }
            let blk = &mut d[(b * nb + i) * bl..][..bl];
            for r in 0..n {
                for c in 0..n {
                    blk[layout.offset(r, c, n)] = T::from_f64(full[r * n + c]);
                }
            }
        }
    }
    (d, e)
}

/// `len` values uniform in [−1, 1).
pub fn random_vec<T: Scalar>(seed: u64, len: usize) -> Vec<T> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| T::from_f64(rng.uniform())).collect()
}

/// Ψ x in f64 for one item and one right-hand-side column (lower triangle of D only).
pub fn matvec_f64<T: Scalar>(m: &BlockTridiagRef<T>, item: usize, x: &[f64]) -> Vec<f64> {
    let Dims { n_blocks: nb, block_size: n, .. } = m.dims();
    let mut y = vec![0.0; nb * n];
    for i in 0..nb {
        for r in 0..n {
            let mut s = 0.0;
            for c in 0..n {
                s += m.d_sym(item, i, r, c).to_f64() * x[i * n + c];
            }
            if i > 0 {
                for c in 0..n {
                    s += m.e(item, i - 1, r, c).to_f64() * x[(i - 1) * n + c];
                }
            }
            if i + 1 < nb {
                for c in 0..n {
                    s += m.e(item, i, c, r).to_f64() * x[(i + 1) * n + c];
                }
            }
            y[i * n + r] = s;
        }
    }
    y
}

/// ‖Ψ‖∞ of one item (lower triangle of D mirrored).
pub fn norm_inf<T: Scalar>(m: &BlockTridiagRef<T>, item: usize) -> f64 {
    let Dims { n_blocks: nb, block_size: n, .. } = m.dims();
    let mut best: f64 = 0.0;
    for i in 0..nb {
        for r in 0..n {
            let mut s: f64 = (0..n).map(|c| m.d_sym(item, i, r, c).to_f64().abs()).sum();
            if i > 0 {
                s += (0..n).map(|c| m.e(item, i - 1, r, c).to_f64().abs()).sum::<f64>();
            }
            if i + 1 < nb {
                s += (0..n).map(|c| m.e(item, i, c, r).to_f64().abs()).sum::<f64>();
            }
            best = best.max(s);
        }
    }
    best
}

/// One column of a right-hand-side batch, as f64.
pub fn column_f64<T: Scalar>(v: &RhsRef<T>, dims: Dims, item: usize, col: usize) -> Vec<f64> {
    (0..dims.rows()).map(|r| v.get(item, r, col).to_f64()).collect()
}

/// Normwise relative backward error max over items and columns of
/// ‖Ψx − b‖∞ / (‖Ψ‖∞‖x‖∞ + ‖b‖∞), computed in f64. `skip` lists items not to check.
pub fn backward_error<T: Scalar>(m: &BlockTridiagRef<T>, x: &RhsRef<T>, b: &RhsRef<T>, skip: &[usize]) -> f64 {
    let dims = m.dims();
    let mut worst: f64 = 0.0;
    for item in (0..dims.batch).filter(|i| !skip.contains(i)) {
        let a = norm_inf(m, item);
        for col in 0..x.shape().nrhs {
            let xv = column_f64(x, dims, item, col);
            let bv = column_f64(b, dims, item, col);
            let ax = matvec_f64(m, item, &xv);
            let r = ax.iter().zip(&bv).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
            let xn = xv.iter().fold(0.0f64, |s, v| s.max(v.abs()));
            let bn = bv.iter().fold(0.0f64, |s, v| s.max(v.abs()));
            let denom = a * xn + bn;
            let be = if denom > 0.0 { r / denom } else { r };
            worst = worst.max(if be.is_nan() { f64::INFINITY } else { be });
        }
    }
    worst
}

/// The whole matrix of one item as a dense row-major f64 array (for small problems).
pub fn dense_matrix<T: Scalar>(m: &BlockTridiagRef<T>, item: usize) -> Vec<f64> {
    let Dims { n_blocks: nb, block_size: n, .. } = m.dims();
    let rows = nb * n;
    let mut a = vec![0.0; rows * rows];
    for i in 0..nb {
        for r in 0..n {
            for c in 0..n {
                a[(i * n + r) * rows + i * n + c] = m.d_sym(item, i, r, c).to_f64();
                if i + 1 < nb {
                    let v = m.e(item, i, r, c).to_f64();
                    a[((i + 1) * n + r) * rows + i * n + c] = v;
                    a[(i * n + c) * rows + (i + 1) * n + r] = v;
                }
            }
        }
    }
    a
}

/// Dense unblocked Cholesky (row-major, lower) of an SPD matrix. Err(row) on a non-positive pivot.
pub fn dense_cholesky(a: &mut [f64], rows: usize) -> Result<(), usize> {
    for j in 0..rows {
        let mut d = a[j * rows + j];
        for k in 0..j {
            d -= a[j * rows + k] * a[j * rows + k];
        }
        #[allow(clippy::neg_cmp_op_on_partial_ord)] // (a NaN pivot fails too)
        if !(d > 0.0) {
            return Err(j);
        }
        let d = d.sqrt();
        a[j * rows + j] = d;
        for i in j + 1..rows {
            let mut s = a[i * rows + j];
            for k in 0..j {
                s -= a[i * rows + k] * a[j * rows + k];
            }
            a[i * rows + j] = s / d;
        }
    }
    Ok(())
}

/// Solves with a dense Cholesky factor from [`dense_cholesky`].
pub fn dense_cholesky_solve(l: &[f64], rows: usize, b: &[f64]) -> Vec<f64> {
    let mut y = b.to_vec();
    for i in 0..rows {
        let mut s = y[i];
        for k in 0..i {
            s -= l[i * rows + k] * y[k];
        }
        y[i] = s / l[i * rows + i];
    }
    for i in (0..rows).rev() {
        let mut s = y[i];
        for k in i + 1..rows {
            s -= l[k * rows + i] * y[k];
        }
        y[i] = s / l[i * rows + i];
    }
    y
}

/// log det from a dense Cholesky factor.
pub fn dense_logdet(l: &[f64], rows: usize) -> f64 {
    2.0 * (0..rows).map(|i| l[i * rows + i].ln()).sum::<f64>()
}
