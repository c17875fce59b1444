//! The plan: created once for (B, N, n, dtype, options), it owns all workspace, and then uploads,
//! factors and solves without allocating. Eigen's `compute` / `info` / `solve` triad, LAPACK's
//! INFO semantics for failures.

use crate::cpu::CpuEngine;
use crate::error::{Error, Result};
use crate::model::{BlockTridiagRef, Dims, Layout, RhsMut};
use crate::scalar::Scalar;

/// Where the work runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// The GPU when one is usable, else the CPU.
    #[default]
    Auto,
    Cpu,
    Cuda,
}

/// Which factorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Chosen by the plan from (B, N, n, threads): see [`Plan::algorithm`].
    #[default]
    Auto,
    /// Paper Algorithm 1: fewest flops, no fill, no parallelism inside one system.
    Sequential,
    /// Paper Algorithm 4 over the nested-dissection schedule: ⌊log₂N⌋+1 parallel levels,
    /// about 2.7× the flops of the sequential algorithm.
    NestedDissection,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
        }
    }
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::Sequential => "seq",
            Algorithm::NestedDissection => "nd",
        }
    }
}

/// Options fixed at plan creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PlanOptions {
    pub backend: Backend,
    pub algorithm: Algorithm,
    /// Element layout of the blocks passed to [`Plan::upload`].
    pub layout: Layout,
    /// CPU threads; 0 means all available cores.
    pub threads: usize,
}

/// Outcome of the last factorization for one batch item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemStatus {
    /// Not factored since the last upload.
    Pending,
    Factored,
    /// Pivot `column` of diagonal block `block` (0-based, caller's numbering) was not positive.
    NotPositiveDefinite { block: usize, column: usize },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Empty,
    Uploaded,
    Factored,
}

/// A solver for one shape of problem. Not `Sync`: one plan must not be used from two threads at
/// once; different plans may be used concurrently.
///
/// ```
/// use btchol::{Dims, Layout, Plan, PlanOptions, BlockTridiagRef, RhsMut};
/// // Ψ = tridiag(−1, 4, −1) with N = 3 blocks of size n = 1.
/// let dims = Dims::new(1, 3, 1).unwrap();
/// let mut plan = Plan::<f64>::new(dims, PlanOptions::default()).unwrap();
/// let (d, e) = ([4.0, 4.0, 4.0], [-1.0, -1.0]);
/// plan.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap();
/// plan.factor().unwrap();
/// let mut b = [3.0, 2.0, 3.0]; // Ψ·[1, 1, 1]
/// plan.solve(&mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut b).unwrap()).unwrap();
/// assert!(b.iter().all(|x| (x - 1.0).abs() < 1e-14));
/// ```
pub struct Plan<T: Scalar> {
    dims: Dims,
    options: PlanOptions,
    engine: CpuEngine<T>,
    state: State,
    status: Vec<ItemStatus>,
}

impl<T: Scalar> Plan<T> {
    /// Creates a plan and allocates all of its workspace.
    pub fn new(dims: Dims, options: PlanOptions) -> Result<Self> {
        let threads = if options.threads == 0 {
            std::thread::available_parallelism().map_or(1, |t| t.get())
        } else {
            options.threads
        };
        match options.backend {
            Backend::Cuda => {
                return Err(Error::BackendUnavailable(
                    "this build of btchol has no CUDA backend yet; use the CPU backend".into(),
                ))
            }
            Backend::Auto | Backend::Cpu => {}
        }
        let algorithm = match options.algorithm {
            Algorithm::Auto => Self::auto_cpu_algorithm(dims, threads),
            a => a,
        };
        let engine = CpuEngine::new(dims, algorithm, threads)?;
        Ok(Plan { dims, options, engine, state: State::Empty, status: vec![ItemStatus::Pending; dims.batch] })
    }

    /// CPU choice: nested dissection does ≈2.7× the flops of the sequential algorithm, so it only
    /// pays off for a single long system with at least 4 threads; batches parallelise over items.
    fn auto_cpu_algorithm(dims: Dims, threads: usize) -> Algorithm {
        if threads >= 4 && dims.batch < threads && dims.n_blocks >= 256 {
            Algorithm::NestedDissection
        } else {
            Algorithm::Sequential
        }
    }

    pub fn dims(&self) -> Dims {
        self.dims
    }
    pub fn options(&self) -> PlanOptions {
        self.options
    }
    /// The backend that runs the work (never `Auto`).
    pub fn backend(&self) -> Backend {
        Backend::Cpu
    }
    /// The algorithm that runs (never `Auto`).
    pub fn algorithm(&self) -> Algorithm {
        self.engine.algorithm()
    }
    /// CPU threads the plan uses.
    pub fn threads(&self) -> usize {
        self.engine.threads()
    }
    /// Bytes of workspace the plan holds.
    pub fn workspace_bytes(&self) -> usize {
        self.engine.workspace_bytes()
    }
    /// Per-item outcome of the last factorization.
    pub fn item_status(&self) -> &[ItemStatus] {
        &self.status
    }

    /// Copies a batch into the plan (checking for NaN/Inf first; nothing is copied on error).
    /// The matrix must have the plan's dims and layout.
    pub fn upload(&mut self, matrix: &BlockTridiagRef<T>) -> Result<()> {
        if matrix.dims() != self.dims {
            return Err(Error::InvalidArgument(format!(
                "matrix dims {:?} differ from the plan's {:?}",
                matrix.dims(),
                self.dims
            )));
        }
        if matrix.layout() != self.options.layout {
            return Err(Error::InvalidArgument(format!(
                "matrix layout {:?} differs from the plan's {:?}",
                matrix.layout(),
                self.options.layout
            )));
        }
        matrix.check_finite()?;
        self.engine.upload(matrix);
        self.state = State::Uploaded;
        self.status.fill(ItemStatus::Pending);
        Ok(())
    }

    /// Factors the uploaded batch in place. Every item is attempted; on failure the error names
    /// the first failing item and [`Plan::item_status`] has the outcome of each. A second
    /// factor needs a new upload.
    pub fn factor(&mut self) -> Result<()> {
        match self.state {
            State::Empty => return Err(Error::InvalidState("factor called before upload".into())),
            State::Factored => {
                return Err(Error::InvalidState(
                    "factor called twice: the factor overwrote the matrix; upload it again".into(),
                ))
            }
            State::Uploaded => {}
        }
        self.engine.factor(&mut self.status);
        self.state = State::Factored;
        self.first_failure()
    }

    fn first_failure(&self) -> Result<()> {
        for (item, st) in self.status.iter().enumerate() {
            if let ItemStatus::NotPositiveDefinite { block, column } = *st {
                return Err(Error::NotPositiveDefinite { item, block, column });
            }
        }
        Ok(())
    }

    /// Solves Ψ x = b in place for every right-hand side. Items whose factorization failed are
    /// skipped (left unchanged) and the first of them is reported as the error.
    pub fn solve(&self, rhs: &mut RhsMut<T>) -> Result<()> {
        if self.state != State::Factored {
            return Err(Error::InvalidState("solve called before factor".into()));
        }
        rhs.shape().required_len(self.dims)?;
        rhs.check_finite(self.dims)?;
        self.engine.solve(&self.status, rhs);
        self.first_failure()
    }

    /// Upload, factor and solve in one call.
    pub fn factor_solve(&mut self, matrix: &BlockTridiagRef<T>, rhs: &mut RhsMut<T>) -> Result<()> {
        rhs.shape().required_len(self.dims)?;
        rhs.check_finite(self.dims)?;
        self.upload(matrix)?;
        let f = self.factor();
        self.engine.solve(&self.status, rhs);
        f
    }

    /// log det Ψ of each item (`out.len() ≥ batch`), from the factor; NaN for failed items.
    pub fn logdet(&self, out: &mut [f64]) -> Result<()> {
        if self.state != State::Factored {
            return Err(Error::InvalidState("logdet called before factor".into()));
        }
        if out.len() < self.dims.batch {
            return Err(Error::BufferTooSmall { what: "logdet output", needed: self.dims.batch, got: out.len() });
        }
        self.engine.logdet(&self.status, out);
        Ok(())
    }
}
