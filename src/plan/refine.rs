//! Mixed precision: factor in f32 (half the bytes, twice the SIMD width), solve to f64 accuracy
//! by iterative refinement (Wilkinson; Higham, *Accuracy and Stability*, ch. 12):
//!
//! ```text
//! x ← 0, r ← b
//! repeat: d ← L⁻ᵀL⁻¹ r (f32 factor), x ← x + d, r ← b − Ψx (f64, against the f64 matrix)
//! until ‖r‖∞ / (‖Ψ‖∞‖x‖∞ + ‖b‖∞) ≤ tolerance, or it stops halving, or max_iterations
//! ```
//!
//! Each step gains about −log10(cond(Ψ)·ε₃₂) digits, so moderately conditioned problems
//! (cond ≲ 1e5) reach the f64 level in 2–4 steps. When refinement does not converge (cond ≳ 1e7),
//! or the f32 factorization itself fails, the plan falls back to an f64 factor of the same matrix
//! and says so in the report: the answer always has f64 accuracy, or the error is the f64 one.
//!
//! The f32 factor runs on the plan's backend (CPU or GPU). On the CPU the residuals are computed
//! in f64 from a copy of the matrix (rayon-parallel over items and block rows); on the GPU the f64
//! matrix, b, x and the residuals stay in device memory ([`crate::cuda::refine`]) and each step
//! reads back only per-column maxima for the backward error.

use super::{Backend, Plan, PlanOptions};
use crate::cuda::refine::DeviceRefiner;
use crate::error::{Error, Result};
use crate::host_parallel::Threads;
use crate::model::{BlockTridiagRef, Dims, Layout, RhsMut, RhsShape};
use rayon::prelude::*;

/// Options of [`MixedPlan`]; the defaults suit most problems.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefineOptions {
    /// Refinement steps at most; 0 means 10.
    pub max_iterations: usize,
    /// Target normwise backward error; 0 means 32·ε₆₄ ≈ 7.1e-15 (an f64 factor reaches
    /// ~1e-16–1e-15 on the same problems).
    pub tolerance: f64,
}

impl Default for RefineOptions {
    fn default() -> Self {
        RefineOptions { max_iterations: 0, tolerance: 0.0 }
    }
}

/// What the last [`MixedPlan::solve`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefineReport {
    /// Refinement steps taken (each one f32 solve and one f64 residual); 0 when the f64
    /// fallback factor solved directly.
    pub iterations: usize,
    /// Largest normwise backward error over items and right-hand sides of the returned solution,
    /// computed in f64.
    pub backward_error: f64,
    /// True when refinement did not converge (or the f32 factor failed) and the solution comes
    /// from an f64 factor; that factor is kept, so later solves of the same upload are direct.
    pub fell_back: bool,
}

/// An f64 problem solved with an f32 factor and iterative refinement (see the module docs).
/// Same life cycle as [`Plan`]: upload, factor, solve (many times).
pub struct MixedPlan {
    dims: Dims,
    options: PlanOptions,
    refine: RefineOptions,
    low: Plan<f32>,
    /// The f64 fallback, created on first need and kept.
    high: Option<Plan<f64>>,
    /// The uploaded matrix in f64, with the diagonal shift applied, D both triangles, row-major.
    diag: Vec<f64>,
    sub: Vec<f64>,
    /// ‖Ψ‖∞ per item.
    norm_inf: Vec<f64>,
    /// Scratch in the caller's block layout, f32 (upload).
    diag32: Vec<f32>,
    sub32: Vec<f32>,
    /// E blocks column-major (the row-major `sub` read as column-major is Eᵀ).
    sub_t: Vec<f64>,
    /// Dense column-major right-hand-side scratch (item, column, row): b, x, r (f64) and the
    /// correction (f32).
    b: Vec<f64>,
    x: Vec<f64>,
    r: Vec<f64>,
    d32: Vec<f32>,
    /// GPU refinement: per (item, column) max |b|, max |r|, max |x| (reused across solves).
    col_max: [Vec<f64>; 3],
    state: MixedState,
    /// GPU plans: the device side of the refinement (declared after `low`, which uses its
    /// stream, so that it is dropped after it).
    device: Option<DeviceRefiner>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MixedState {
    Empty,
    Uploaded,
    /// Factored in f32: solves refine.
    Low,
    /// Factored in f64 (the f32 factor failed): solves are direct.
    High,
}

impl MixedPlan {
    /// A mixed-precision plan: `options` as for [`Plan`] (backend, algorithm, layout, threads,
    /// diag_shift, pivot options, deterministic) apply to the f32 factor and to the fallback.
    pub fn new(dims: Dims, options: PlanOptions, refine: RefineOptions) -> Result<Self> {
        if !(refine.tolerance >= 0.0 && refine.tolerance.is_finite()) {
            return Err(Error::InvalidArgument(format!(
                "refinement tolerance must be finite and >= 0, got {}",
                refine.tolerance
            )));
        }
        if !options.diag_shift.is_finite() {
            return Err(Error::InvalidArgument(format!("diag_shift must be finite, got {}", options.diag_shift)));
        }
        // The shift is applied once, to the f64 copy, so f32 factor and residual see one matrix.
        let mut low = Plan::<f32>::new(dims, PlanOptions { diag_shift: 0.0, ..options })?;
        let device = match low.backend() {
            Backend::Cuda => {
                let refiner = DeviceRefiner::new(dims)?;
                // SAFETY: the refiner's stream lives as long as the plan (dropped after `low`).
                unsafe { low.set_stream(refiner.stream_ptr())? };
                Some(refiner)
            }
            _ => None,
        };
        Ok(MixedPlan {
            device,
            dims,
            options,
            refine,
            low,
            high: None,
            diag: Vec::new(),
            sub: Vec::new(),
            sub_t: Vec::new(),
            norm_inf: vec![0.0; dims.batch],
            diag32: Vec::new(),
            sub32: Vec::new(),
            b: Vec::new(),
            x: Vec::new(),
            r: Vec::new(),
            d32: Vec::new(),
            col_max: Default::default(),
            state: MixedState::Empty,
        })
    }

    pub fn dims(&self) -> Dims {
        self.dims
    }
    /// Element layout of the blocks passed to [`MixedPlan::upload`].
    pub fn layout(&self) -> Layout {
        self.options.layout
    }
    /// The f32 plan that factors (its backend, algorithm, item status).
    pub fn low_precision_plan(&self) -> &Plan<f32> {
        &self.low
    }

    /// Copies the f64 matrix (checked for NaN/Inf and for entries beyond the f32 range).
    pub fn upload(&mut self, matrix: &BlockTridiagRef<f64>) -> Result<()> {
        let (dims, layout) = (self.dims, self.options.layout);
        if matrix.dims() != dims || matrix.layout() != layout {
            return Err(Error::InvalidArgument(format!(
                "matrix dims {:?} / layout {:?} differ from the plan's {:?} / {:?}",
                matrix.dims(),
                matrix.layout(),
                dims,
                layout
            )));
        }
        self.state = MixedState::Empty;
        matrix.check_finite()?;
        let (nb, n) = (dims.n_blocks, dims.block_size);
        let shift = self.options.diag_shift;
        self.diag.resize(dims.diag_len(), 0.0);
        self.sub.resize(dims.sub_len(), 0.0);
        for b in 0..dims.batch {
            for i in 0..nb {
                let blk = &mut self.diag[(b * nb + i) * n * n..][..n * n];
                for r in 0..n {
                    for c in 0..n {
                        blk[r * n + c] = matrix.d_sym(b, i, r, c) + if r == c { shift } else { 0.0 };
                    }
                }
                if i + 1 < nb {
                    let blk = &mut self.sub[(b * (nb - 1) + i) * n * n..][..n * n];
                    for r in 0..n {
                        for c in 0..n {
                            blk[r * n + c] = matrix.e(b, i, r, c);
                        }
                    }
                }
            }
        }
        self.sub_t.resize(dims.sub_len(), 0.0);
        for (s, t) in self.sub.chunks_exact(n * n).zip(self.sub_t.chunks_exact_mut(n * n)) {
            for r in 0..n {
                for c in 0..n {
                    t[c * n + r] = s[r * n + c];
                }
            }
        }
        // f32 copies in the plan's layout (the row-major f64 copies, transposed back if needed).
        self.diag32.resize(dims.diag_len(), 0.0);
        self.sub32.resize(dims.sub_len(), 0.0);
        for (src, dst) in [(&self.diag, &mut self.diag32), (&self.sub, &mut self.sub32)] {
            for (s, d) in src.chunks_exact(n * n).zip(dst.chunks_exact_mut(n * n)) {
                for r in 0..n {
                    for c in 0..n {
                        d[layout.offset(r, c, n)] = s[r * n + c] as f32;
                    }
                }
            }
        }
        if let Some(v) = self.diag32.iter().chain(&self.sub32).find(|v| !v.is_finite()) {
            return Err(Error::InvalidArgument(format!(
                "a matrix entry overflows f32 ({v}): use an f64 plan for this problem"
            )));
        }
        for b in 0..dims.batch {
            self.norm_inf[b] = self.item_norm_inf(b);
        }
        if let Some(dr) = &mut self.device {
            dr.upload_matrix(&self.diag, &self.sub, &self.sub_t)?;
        }
        self.low.upload(&BlockTridiagRef::new(dims, layout, &self.diag32, &self.sub32)?)?;
        self.state = MixedState::Uploaded;
        Ok(())
    }

    /// Factors in f32; if that fails (the f32 rounding of a nearly singular matrix need not be
    /// positive definite), factors in f64 instead. The error is the f64 factor's.
    pub fn factor(&mut self) -> Result<()> {
        match self.state {
            MixedState::Empty => return Err(Error::InvalidState("factor called before upload".into())),
            MixedState::Low | MixedState::High => {
                return Err(Error::InvalidState("factor called twice: upload the matrix again".into()))
            }
            MixedState::Uploaded => {}
        }
        match self.low.factor() {
            Ok(()) => {
                self.state = MixedState::Low;
                Ok(())
            }
            Err(Error::NotPositiveDefinite { .. }) => {
                self.factor_high()?;
                self.state = MixedState::High;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// The f64 plan, uploaded and factored (the f32 plan's options, row-major blocks).
    fn factor_high(&mut self) -> Result<()> {
        let dims = self.dims;
        if self.high.is_none() {
            let options = PlanOptions { diag_shift: 0.0, layout: Layout::RowMajor, ..self.options };
            self.high = Some(Plan::<f64>::new(dims, options)?);
        }
        let high = self.high.as_mut().expect("created above");
        high.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &self.diag, &self.sub)?)?;
        high.factor()
    }

    /// Solves Ψ x = b in place to f64 accuracy (see the module docs) and reports how.
    pub fn solve(&mut self, rhs: &mut RhsMut<f64>) -> Result<RefineReport> {
        if !matches!(self.state, MixedState::Low | MixedState::High) {
            return Err(Error::InvalidState("solve called before factor".into()));
        }
        let dims = self.dims;
        rhs.shape().required_len(dims)?;
        rhs.check_finite(dims, Threads::Caller)?;
        let m = rhs.nrhs();
        let len = dims.batch * dims.rows() * m;
        let dense = RhsShape::dense(dims, m, Layout::ColMajor);
        self.b.resize(len, 0.0);
        for item in 0..dims.batch {
            for row in 0..dims.rows() {
                for col in 0..m {
                    self.b[dense.offset(item, row, col)] = rhs.data[rhs.shape.offset(item, row, col)];
                }
            }
        }
        let report = if self.state == MixedState::High { self.solve_high(m, 0)? } else { self.refine(m)? };
        for item in 0..dims.batch {
            for row in 0..dims.rows() {
                for col in 0..m {
                    rhs.data[rhs.shape.offset(item, row, col)] = self.x[dense.offset(item, row, col)];
                }
            }
        }
        Ok(report)
    }

    /// (max iterations, tolerance) with the defaults filled in.
    fn limits(&self) -> (usize, f64) {
        let max_iterations = if self.refine.max_iterations == 0 { 10 } else { self.refine.max_iterations };
        let tolerance = if self.refine.tolerance == 0.0 { 32.0 * f64::EPSILON } else { self.refine.tolerance };
        (max_iterations, tolerance)
    }

    /// The refinement loop on the dense column-major b; the result in x.
    fn refine(&mut self, m: usize) -> Result<RefineReport> {
        if self.device.is_some() {
            return self.refine_device(m);
        }
        let dims = self.dims;
        let dense = RhsShape::dense(dims, m, Layout::ColMajor);
        let (max_iterations, tolerance) = self.limits();
        let len = self.b.len();
        self.x.clear();
        self.x.resize(len, 0.0);
        self.r.clear();
        self.r.extend_from_slice(&self.b);
        self.d32.resize(len, 0.0);
        let mut berr = f64::INFINITY;
        let mut iterations = 0;
        while iterations < max_iterations {
            // Scale the residual to O(1) before rounding it to f32: it shrinks by ~1e-8 per step
            // and would otherwise leave the f32 range (or lose precision to subnormals).
            let scale = self.r.iter().fold(0.0f64, |s, v| s.max(v.abs()));
            if scale == 0.0 {
                berr = 0.0;
                break;
            }
            for (d, r) in self.d32.iter_mut().zip(&self.r) {
                *d = (r / scale) as f32;
            }
            self.low.solve(&mut RhsMut::new(dims, dense, &mut self.d32)?)?;
            for (x, d) in self.x.iter_mut().zip(&self.d32) {
                *x += *d as f64 * scale;
            }
            iterations += 1;
            self.residual(m);
            let next = self.backward_error(m);
            // Negated on purpose: a NaN error counts as stalled.
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            let stalled = !(next <= 0.5 * berr);
            berr = berr.min(next);
            if next <= tolerance || stalled {
                berr = next;
                break;
            }
        }
        self.finish(m, iterations, berr, tolerance)
    }

    /// The refinement's outcome: converged, or (ill-conditioned for f32) an f64 factor is made
    /// and kept, so later solves of this matrix go direct instead of failing to refine again.
    fn finish(&mut self, m: usize, iterations: usize, berr: f64, tolerance: f64) -> Result<RefineReport> {
        if berr <= tolerance {
            return Ok(RefineReport { iterations, backward_error: berr, fell_back: false });
        }
        self.factor_high()?;
        self.state = MixedState::High;
        self.solve_high(m, iterations)
    }

    /// The refinement loop with the vectors on the GPU: per step, round the residual to f32,
    /// solve with the f32 factor (same stream), update x and take the residual in f64, and read
    /// back the per-column maxima that give the backward error.
    fn refine_device(&mut self, m: usize) -> Result<RefineReport> {
        let dims = self.dims;
        let dense = RhsShape::dense(dims, m, Layout::ColMajor);
        let (max_iterations, tolerance) = self.limits();
        let (rows, columns) = (dims.rows(), dims.batch * m);
        let [mut bmax, mut rmax, mut xmax] = std::mem::take(&mut self.col_max);
        bmax.clear();
        bmax.extend(self.b.chunks_exact(rows).map(|c| c.iter().fold(0.0f64, |s, v| s.max(v.abs()))));
        rmax.resize(columns, 0.0);
        xmax.resize(columns, 0.0);
        let dr = self.device.as_mut().expect("GPU plan");
        dr.start(&self.b, m)?;
        dr.read_maxima(m, &mut rmax, &mut xmax)?;
        let norm_inf = &self.norm_inf;
        let error = |rmax: &[f64], xmax: &[f64]| {
            (0..columns).fold(0.0f64, |worst, c| {
                let denom = norm_inf[c / m] * xmax[c] + bmax[c];
                let e = if denom > 0.0 { rmax[c] / denom } else { rmax[c] };
                worst.max(if e.is_nan() { f64::INFINITY } else { e })
            })
        };
        let (mut berr, mut iterations) = (f64::INFINITY, 0);
        if rmax.iter().all(|&r| r == 0.0) {
            berr = 0.0; // b = 0: x = 0 is exact
        }
        while berr > 0.0 && iterations < max_iterations {
            let d = dr.round(m)?;
            // SAFETY: d holds B·rows·m f32 on the device, the f32 plan runs on the refiner's stream.
            unsafe { self.low.solve_device(dense, d)? };
            dr.update(m)?;
            dr.read_maxima(m, &mut rmax, &mut xmax)?;
            iterations += 1;
            let next = error(&rmax, &xmax);
            // Negated on purpose: a NaN error counts as stalled.
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            let stalled = !(next <= 0.5 * berr);
            berr = berr.min(next);
            if next <= tolerance || stalled {
                berr = next;
                break;
            }
        }
        self.col_max = [bmax, rmax, xmax];
        self.x.resize(self.b.len(), 0.0);
        dr.read_x(m, &mut self.x)?;
        self.finish(m, iterations, berr, tolerance)
    }

    /// x ← Ψ⁻¹b with the f64 factor (dense column-major b, m columns), and its report.
    fn solve_high(&mut self, m: usize, iterations: usize) -> Result<RefineReport> {
        let dense = RhsShape::dense(self.dims, m, Layout::ColMajor);
        self.x.clear();
        self.x.extend_from_slice(&self.b);
        self.high.as_mut().expect("factored in f64").solve(&mut RhsMut::new(self.dims, dense, &mut self.x)?)?;
        self.residual(m);
        Ok(RefineReport { iterations, backward_error: self.backward_error(m), fell_back: true })
    }

    /// r ← b − Ψx in f64 (dense column-major, m columns), parallel over (item, column, block row)
    /// segments of n rows. Every product is a sum of contiguous column axpys, which vectorise.
    fn residual(&mut self, m: usize) {
        let Dims { n_blocks: nb, block_size: n, .. } = self.dims;
        self.r.resize(self.b.len(), 0.0);
        let (diag, sub, sub_t, x, b) = (&self.diag, &self.sub, &self.sub_t, &self.x, &self.b);
        self.r.par_chunks_mut(n).enumerate().for_each(|(q, r)| {
            // Segment q: block row i of column (item, col); the column starts at (q − i)·n.
            let (column, i) = (q / nb, q % nb);
            let item = column / m;
            let x_block = |blk: usize| &x[(column * nb + blk) * n..][..n];
            r.copy_from_slice(&b[q * n..][..n]);
            // Column-major Ψ_{i,i} = D_i (symmetric), Ψ_{i,i−1} = E_{i−1} (sub_t), Ψ_{i,i+1} = E_iᵀ
            // (the row-major E read as column-major).
            axpy_sub(r, &diag[(item * nb + i) * n * n..][..n * n], x_block(i));
            if i > 0 {
                axpy_sub(r, &sub_t[(item * (nb - 1) + i - 1) * n * n..][..n * n], x_block(i - 1));
            }
            if i + 1 < nb {
                axpy_sub(r, &sub[(item * (nb - 1) + i) * n * n..][..n * n], x_block(i + 1));
            }
        });
    }

    /// max over items and columns of ‖r‖∞ / (‖Ψ‖∞‖x‖∞ + ‖b‖∞).
    fn backward_error(&self, m: usize) -> f64 {
        let rows = self.dims.rows();
        let mut worst: f64 = 0.0;
        for item in 0..self.dims.batch {
            for col in 0..m {
                let (mut rn, mut xn, mut bn) = (0.0f64, 0.0f64, 0.0f64);
                for row in 0..rows {
                    let k = (item * m + col) * rows + row;
                    rn = rn.max(self.r[k].abs());
                    xn = xn.max(self.x[k].abs());
                    bn = bn.max(self.b[k].abs());
                }
                let denom = self.norm_inf[item] * xn + bn;
                let e = if denom > 0.0 { rn / denom } else { rn };
                worst = worst.max(if e.is_nan() { f64::INFINITY } else { e });
            }
        }
        worst
    }

    fn item_norm_inf(&self, item: usize) -> f64 {
        let Dims { n_blocks: nb, block_size: n, .. } = self.dims;
        let mut worst: f64 = 0.0;
        for i in 0..nb {
            for r in 0..n {
                let mut s: f64 = self.diag[(item * nb + i) * n * n + r * n..][..n].iter().map(|v| v.abs()).sum();
                if i > 0 {
                    s +=
                        self.sub[(item * (nb - 1) + i - 1) * n * n + r * n..][..n].iter().map(|v| v.abs()).sum::<f64>();
                }
                if i + 1 < nb {
                    let e = &self.sub[(item * (nb - 1) + i) * n * n..][..n * n];
                    s += (0..n).map(|c| e[c * n + r].abs()).sum::<f64>();
                }
                worst = worst.max(s);
            }
        }
        worst
    }
}

/// r ← r − A·x for a column-major n×n A and vectors of length n: one axpy per column of A.
fn axpy_sub(r: &mut [f64], a: &[f64], x: &[f64]) {
    let n = r.len();
    for (k, &xk) in x.iter().enumerate() {
        for (rr, av) in r.iter_mut().zip(&a[k * n..(k + 1) * n]) {
            *rr -= av * xk;
        }
    }
}
