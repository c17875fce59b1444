//! The plan: created once for (B, N, n, dtype, options), it owns all workspace, and then uploads,
//! factors and solves without allocating. Eigen's `compute` / `info` / `solve` triad, LAPACK's
//! INFO semantics for failures.

use crate::cpu::CpuEngine;
use crate::cuda::{CudaEngine, GpuAlgorithm, GpuNumerics, SourceFormat};
use crate::dense::potrf::PivotPolicy;
use crate::error::{Error, Result};
use crate::host_parallel::Threads;
use crate::model::{BlockTridiagRef, Dims, Layout, RhsMut};
use crate::scalar::Scalar;
use crate::schedule::Schedule;

pub mod dispatch;
mod gradient;
mod half_input;
mod masked;
mod refine;

pub use half_input::HalfFloat;
pub use refine::{MixedPlan, RefineOptions, RefineReport};

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

/// How nested dissection orders the blocks (ignored by the sequential algorithm).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Partition {
    /// The plan's choice ([`Partition::auto_chunk`]): on the CUDA backend, for blocks of up to 32,
    /// short chunks (3 or 5) from N = 128, 1024 or 1536 by block size, then chunks of 7 from
    /// N = 2048, 15 from 8192, 31 (blocks of 17 to 32) from 16384; plain nested dissection
    /// elsewhere. The environment variable `BTCHOL_CHUNK=k` overrides it
    /// (`0`: plain), for experiments.
    #[default]
    Auto,
    /// Plain nested dissection, [`Schedule::new`]: ⌊log₂N⌋+1 levels.
    None,
    /// Chunks of k ≥ 1 blocks eliminated in order, then their separators by nested dissection
    /// ([`Schedule::partitioned`]): k + ⌊log₂(N/(k+1))⌋ + 1 levels, about half the bytes moved.
    Chunks(usize),
}

impl Partition {
    /// The chunk length `Auto` picks (0: plain nested dissection). Measured on the H200, one
    /// binary with `BTCHOL_CHUNK` varied (bench/results/ab/README.md, sixteenth and seventeenth
    /// sessions): chunks of 7 from N = 2048 at every block size up to 32 (f64 n = 32, N = 2048:
    /// factor 218 → 195 µs, solve 106 → 94; n = 8, N = 16384, where plain ran before: 192 → 114 /
    /// 195 → 118), of 15 from N = 8192, and of 31 for blocks of 17 to 32 from N = 16384 (f64
    /// n = 32: 698 → 645 / 289 → 269). Below N = 2048 short chunks pay where they win the factor
    /// as well as the solve: chunks of 5 for blocks of up to 8 from N = 128 (f64 n = 8, N = 1024:
    /// 51.4 → 47.5 / 62.6 → 56.6), of 3 for blocks of 9 to 16 from N = 1024 (f64 n = 16, N =
    /// 1536: 73.8 → 66.6 / 78.6 → 73.7) and for blocks of 17 to 32 from N = 1536 (f64 n = 32:
    /// 185.1 → 178.8 / 90.6 → 83.9). Shorter horizons of larger blocks factor faster plain (f64
    /// n = 32, N = 1024: 142 plain, 154 with chunks of 3). The chunk kernels need the
    /// small-block path (n ≤ 32).
    pub fn auto_chunk(cuda: bool, n_blocks: usize, block_size: usize) -> usize {
        if !cuda || !(1..=32).contains(&block_size) {
            return 0;
        }
        // Below N = 2048: from which N chunks pay, and their length, by block size.
        let (short_from, short_chunk) = match block_size {
            1..=8 => (128, 5),
            9..=16 => (1024, 3),
            _ => (1536, 3),
        };
        match n_blocks {
            _ if n_blocks < short_from => 0,
            ..2048 => short_chunk,
            2048..8192 => 7,
            8192..16384 => 15,
            _ if block_size <= 16 => 15,
            _ => 31,
        }
    }

    /// `InvalidArgument` for `Chunks(0)`.
    fn check(self) -> Result<()> {
        if self == Partition::Chunks(0) {
            return Err(Error::InvalidArgument("Partition::Chunks needs at least one block per chunk".into()));
        }
        Ok(())
    }

    /// The nested-dissection schedule a plan with this choice uses for `dims` on the CUDA
    /// backend (`cuda`) or the CPU (`BTCHOL_CHUNK` read as the plan reads it).
    pub fn schedule(self, dims: Dims, cuda: bool) -> Result<Schedule> {
        self.check()?;
        let n_blocks = dims.n_blocks;
        let chunk = match self {
            Partition::Auto => match std::env::var("BTCHOL_CHUNK") {
                Ok(v) => v.trim().parse::<usize>().map_err(|_| {
                    Error::InvalidArgument(format!("BTCHOL_CHUNK must be a block count (0: plain), got {v:?}"))
                })?,
                Err(_) => Self::auto_chunk(cuda, n_blocks, dims.block_size),
            },
            Partition::None => 0,
            Partition::Chunks(k) => k,
        };
        Ok(if chunk == 0 { Schedule::new(n_blocks) } else { Schedule::partitioned(n_blocks, chunk) })
    }
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
///
/// Regularisation (`diag_shift`, `pivot_threshold`, `pivot_boost`) is off by default (all zero),
/// and then the plan factors exactly the uploaded matrix and fails LAPACK-style on a pivot ≤ 0.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct PlanOptions {
    pub backend: Backend,
    pub algorithm: Algorithm,
    /// Element layout of the blocks passed to [`Plan::upload`].
    pub layout: Layout,
    /// CPU threads; 0 means all available cores.
    pub threads: usize,
    /// GPU only: right-hand sides solved per pass (more are solved in chunks); 0 means 16.
    /// Sizes the device workspace for right-hand sides.
    pub max_nrhs: usize,
    /// Static regularisation σ: the plan factors Ψ + σI, adding σ to every diagonal entry of the
    /// D_i as they are uploaded (the caller's arrays are not modified; solves, log-determinants
    /// and gradients are those of Ψ + σI). Any finite value; 0 (the default) is off. Both
    /// backends (CUDA: added on the device as blocks are converted, host or device uploads).
    pub diag_shift: f64,
    /// "Boost small pivots": when `pivot_boost` > 0, a pivot d (a diagonal entry of the Schur
    /// complement, before its square root) with d ≤ `pivot_threshold` is replaced by
    /// `pivot_boost` and counted in [`Plan::boosted_pivots`] instead of failing the item; a
    /// non-finite pivot still fails. Both must be finite and ≥ 0; a non-zero threshold needs a
    /// non-zero boost. With nested dissection the pivots are those of the nested-dissection
    /// order, so which pivots are boosted can differ from the sequential algorithm's. Both
    /// backends.
    pub pivot_threshold: f64,
    /// The value a boosted pivot is replaced by (0, the default: boosting off). See
    /// `pivot_threshold`.
    pub pivot_boost: f64,
    /// Guarantee bitwise-identical results for identical inputs, options and thread count on
    /// the same machine. Accepted on both backends and free today: the CPU backend fixes every
    /// reduction order (each output block is written by one task, in a fixed order, whatever the
    /// thread count or scheduling) and the CUDA kernels use no floating-point atomics (only an
    /// integer `atomicMin` for failure keys). A future backend that uses atomics for speed must
    /// honour this flag with ordered reductions.
    pub deterministic: bool,
    /// Nested dissection's block ordering (see [`Partition`]); both backends.
    pub partition: Partition,
}

impl PlanOptions {
    /// Checks the numerical options (regularisation) and returns the pivot policy they define.
    fn pivot_policy<T: Scalar>(&self) -> Result<PivotPolicy<T>> {
        if !self.diag_shift.is_finite() || !T::from_f64(self.diag_shift).is_finite() {
            return Err(Error::InvalidArgument(format!("diag_shift must be finite, got {}", self.diag_shift)));
        }
        for (name, v) in [("pivot_threshold", self.pivot_threshold), ("pivot_boost", self.pivot_boost)] {
            if !(v >= 0.0 && v.is_finite() && T::from_f64(v).is_finite()) {
                return Err(Error::InvalidArgument(format!(
                    "{name} must be finite and >= 0 in the plan's precision, got {v}"
                )));
            }
        }
        if self.pivot_boost == 0.0 && self.pivot_threshold != 0.0 {
            return Err(Error::InvalidArgument(format!(
                "pivot_threshold = {} needs pivot_boost > 0 (the value small pivots are replaced by)",
                self.pivot_threshold
            )));
        }
        Ok(PivotPolicy { threshold: T::from_f64(self.pivot_threshold), boost: T::from_f64(self.pivot_boost) })
    }

    /// The CPU threads `threads` asks for (0: every available core).
    fn resolved_threads(&self) -> usize {
        if self.threads == 0 {
            std::thread::available_parallelism().map_or(1, |t| t.get())
        } else {
            self.threads
        }
    }
}

/// Outcome of the last factorization for one batch item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemStatus {
    /// Not factored since the last upload.
    Pending,
    Factored,
    /// Pivot `column` of diagonal block `block` (0-based, caller's numbering) was not positive.
    NotPositiveDefinite {
        block: usize,
        column: usize,
    },
}

// One per plan, so the CPU engine's size inline costs nothing worth an indirection.
#[allow(clippy::large_enum_variant)]
enum Engine<T: Scalar> {
    Cpu(CpuEngine<T>),
    Cuda(Box<CudaEngine<T>>),
}

/// Work below this many flops (B·N·n³) is faster on the CPU than a GPU launch sequence: the
/// provisional rule, used only when the calibration table has no rows for the candidates (see
/// [`dispatch`]).
const AUTO_GPU_MIN_WORK: f64 = 4.0e6;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Empty,
    Uploaded,
    Factored,
}

/// A solver for one shape of problem. `Send` but not `Sync`: one plan must not be used from two
/// threads at once; different plans may be used concurrently.
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
    engine: Engine<T>,
    state: State,
    status: Vec<ItemStatus>,
    /// Boosted pivots per item in the last factorization.
    boosted: Vec<u32>,
    /// Per item: uploaded since its last factorization (the factor overwrites the matrix).
    fresh: Vec<bool>,
    /// 0..B: the item list of the unmasked operations.
    all_items: Vec<usize>,
    /// The items a mask selects (capacity B, so masked calls never allocate).
    active: Vec<usize>,
    /// How the backend and algorithm were chosen: [`Plan::dispatch_reason`].
    dispatch: String,
}

impl<T: Scalar> Plan<T> {
    /// Creates a plan and allocates all of its workspace (and, on the GPU, compiles or loads the
    /// kernels). With `Backend::Auto` and/or `Algorithm::Auto` the calibrated cost model of
    /// [`dispatch`] picks the cheapest target the options allow (factor + one solve; the GPU only
    /// when one is usable), and [`Plan::dispatch_reason`] says why; `Backend::Cuda` fails with
    /// [`Error::BackendUnavailable`] where there is none.
    pub fn new(dims: Dims, options: PlanOptions) -> Result<Self> {
        use dispatch::{Decision, Target};
        if let Some(target) = Target::of(options.backend, options.algorithm) {
            let mut plan = Self::create(dims, options)?;
            plan.dispatch = format!("requested: {}", target.name());
            return Ok(plan);
        }
        // Invalid options fail as themselves, not as "every candidate failed".
        options.pivot_policy::<T>()?;
        let threads = options.resolved_threads();
        let model = dispatch::CostModel::global();
        // Probe the GPU (once per process) only where a GPU target is allowed.
        let gpu = if options.backend != Backend::Cpu { dispatch::gpu_name() } else { None };
        let candidates = dispatch::candidates(&options, gpu.is_some());
        let query = dispatch::Query {
            dtype: T::DTYPE,
            n: dims.block_size,
            n_blocks: dims.n_blocks,
            batch: dims.batch,
            threads,
        };
        let ranked = match dispatch::decide(model, &candidates, &query, gpu) {
            Decision::Ranked(r) => r,
            Decision::NoCalibration => {
                let mut plan = Self::create(dims, options)?;
                let chosen = Target::of(plan.backend(), plan.algorithm()).map_or("?", |t| t.name());
                plan.dispatch =
                    format!("auto: {chosen} by the provisional rule (no calibration rows for the candidates)");
                return Ok(plan);
            }
        };
        let (mut skipped, mut first_error, mut missing) = (Vec::new(), None, Vec::new());
        for &(target, _) in &ranked {
            if missing.contains(&target.backend()) {
                continue;
            }
            let concrete = PlanOptions { backend: target.backend(), algorithm: target.algorithm(), ..options };
            match Self::create(dims, concrete) {
                Ok(mut plan) => {
                    plan.dispatch = dispatch::reason(target, &ranked, &skipped, model);
                    return Ok(plan);
                }
                // A target this build, device or shape cannot run: try the next. A GPU that fails
                // otherwise (driver, NVRTC, memory) also falls back, as Auto always did.
                Err(e)
                    if matches!(
                        e,
                        Error::InvalidArgument(_) | Error::Unsupported(_) | Error::BackendUnavailable(_)
                    ) || (target.is_gpu() && matches!(e, Error::Cuda(_) | Error::OutOfMemory(_))) =>
                {
                    if matches!(e, Error::BackendUnavailable(_)) {
                        missing.push(target.backend());
                    }
                    skipped.push(format!("{}: {e}", target.name()));
                    first_error.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        // The preferred target's error: "no GPU" rather than a later target's complaint.
        Err(first_error.unwrap_or_else(|| Error::BackendUnavailable("no backend can run this plan".into())))
    }

    /// How the backend and algorithm were chosen, in one line: "requested: cpu-seq" for explicit
    /// options, else e.g. "auto: cuda-nd, est 123 us vs cpu-seq 456 us (calibration: default)"
    /// (estimates are factor + one solve).
    pub fn dispatch_reason(&self) -> &str {
        &self.dispatch
    }

    /// The plan for `options` as given; an `Auto` part is resolved by the provisional rule.
    fn create(dims: Dims, options: PlanOptions) -> Result<Self> {
        let threads = options.resolved_threads();
        let max_nrhs = if options.max_nrhs == 0 { 16 } else { options.max_nrhs };
        let pivots = options.pivot_policy::<T>()?;
        options.partition.check()?; // (also where the chosen algorithm builds no schedule)
        let work = dims.batch as f64 * dims.n_blocks as f64 * (dims.block_size as f64).powi(3);
        let want_gpu = match options.backend {
            Backend::Cuda => true,
            Backend::Cpu => false,
            Backend::Auto => work >= AUTO_GPU_MIN_WORK && options.algorithm != Algorithm::Sequential,
        };
        if want_gpu {
            let algorithm = match options.algorithm {
                Algorithm::Sequential => GpuAlgorithm::Sequential,
                _ => GpuAlgorithm::NestedDissection,
            };
            let numerics = GpuNumerics {
                threshold: pivots.threshold,
                boost: pivots.boost,
                diag_shift: T::from_f64(options.diag_shift),
            };
            match CudaEngine::new(dims, options.partition.schedule(dims, true)?, max_nrhs, algorithm, numerics) {
                Ok(e) => return Ok(Self::with_engine(dims, options, Engine::Cuda(Box::new(e)))),
                Err(e) if options.backend == Backend::Cuda => return Err(e),
                Err(_) => {} // Auto: fall back to the CPU.
            }
        }
        let algorithm = match options.algorithm {
            Algorithm::Auto => Self::auto_cpu_algorithm(dims, threads),
            a => a,
        };
        let schedule = match algorithm {
            Algorithm::NestedDissection => Some(options.partition.schedule(dims, false)?),
            _ => None,
        };
        let engine = CpuEngine::new(dims, algorithm, schedule, threads, T::from_f64(options.diag_shift), pivots)?;
        Ok(Self::with_engine(dims, options, Engine::Cpu(engine)))
    }

    fn with_engine(dims: Dims, options: PlanOptions, engine: Engine<T>) -> Self {
        Plan {
            dims,
            options,
            engine,
            state: State::Empty,
            status: vec![ItemStatus::Pending; dims.batch],
            boosted: vec![0; dims.batch],
            fresh: vec![false; dims.batch],
            all_items: (0..dims.batch).collect(),
            active: Vec::with_capacity(dims.batch),
            dispatch: String::new(),
        }
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
        match self.engine {
            Engine::Cpu(_) => Backend::Cpu,
            Engine::Cuda(_) => Backend::Cuda,
        }
    }
    /// The algorithm that runs (never `Auto`).
    pub fn algorithm(&self) -> Algorithm {
        match &self.engine {
            Engine::Cpu(e) => e.algorithm(),
            Engine::Cuda(e) => match e.algorithm() {
                GpuAlgorithm::Sequential => Algorithm::Sequential,
                GpuAlgorithm::NestedDissection => Algorithm::NestedDissection,
            },
        }
    }
    /// CPU threads the plan uses (1 for a GPU plan: the host thread that launches).
    pub fn threads(&self) -> usize {
        match &self.engine {
            Engine::Cpu(e) => e.threads(),
            Engine::Cuda(_) => 1,
        }
    }
    /// The GPU's name for a CUDA plan, `None` for a CPU plan.
    pub fn gpu_name(&self) -> Option<&str> {
        match &self.engine {
            Engine::Cpu(_) => None,
            Engine::Cuda(e) => Some(e.device_name()),
        }
    }
    /// Bytes of workspace the plan holds (device memory for a GPU plan).
    pub fn workspace_bytes(&self) -> usize {
        match &self.engine {
            Engine::Cpu(e) => e.workspace_bytes(),
            Engine::Cuda(e) => e.workspace_bytes(),
        }
    }
    /// Per-item outcome of the last factorization.
    pub fn item_status(&self) -> &[ItemStatus] {
        &self.status
    }
    /// Per-item number of pivots the last factorization boosted (see
    /// [`PlanOptions::pivot_boost`]); all zero when boosting is off or before the first factor.
    /// Counts of items that failed cover the pivots before the failure.
    pub fn boosted_pivots(&self) -> &[u32] {
        &self.boosted
    }

    /// Copies a batch into the plan (checking for NaN/Inf first; nothing is copied on error).
    /// The matrix must have the plan's dims and layout.
    pub fn upload(&mut self, matrix: &BlockTridiagRef<T>) -> Result<()> {
        self.check_matrix(matrix)?;
        // On any error the plan holds no matrix (a GPU upload may have overwritten part of it).
        self.state = State::Empty;
        self.status.fill(ItemStatus::Pending);
        self.fresh.fill(false);
        match &mut self.engine {
            Engine::Cpu(e) => {
                matrix.check_finite()?;
                e.upload(matrix, &self.all_items);
            }
            Engine::Cuda(e) => e.upload_host(matrix.layout(), matrix.diag_data(), matrix.sub_data(), None)?,
        }
        self.state = State::Uploaded;
        self.fresh.fill(true);
        Ok(())
    }

    /// The matrix has the plan's dims and layout.
    fn check_matrix(&self, matrix: &BlockTridiagRef<T>) -> Result<()> {
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
        Ok(())
    }

    /// Uploads blocks that are already in GPU memory, in the plan's layout (`diag`: B·N blocks,
    /// `sub`: B·(N−1) blocks of n·n elements). The copy is ordered on the plan's stream.
    ///
    /// # Safety
    /// Both pointers must be device memory of the current device holding those extents.
    pub unsafe fn upload_device(&mut self, diag: *const T, sub: *const T) -> Result<()> {
        self.state = State::Empty;
        self.status.fill(ItemStatus::Pending);
        self.fresh.fill(false);
        match &mut self.engine {
            Engine::Cpu(_) => return Err(Self::no_cuda()),
            Engine::Cuda(e) => {
                e.upload_device(self.options.layout, SourceFormat::Native, diag as u64, sub as u64, None)?
            }
        }
        self.state = State::Uploaded;
        self.fresh.fill(true);
        Ok(())
    }

    /// Who runs the plan's host passes over right-hand sides (`host_parallel`): threads for a GPU
    /// plan, the caller's thread alone for a CPU plan (whose `threads` the caller chose).
    fn host_passes(&self) -> Threads {
        match self.engine {
            Engine::Cpu(_) => Threads::Caller,
            Engine::Cuda(_) => Threads::Host,
        }
    }

    fn no_cuda() -> Error {
        Error::BackendUnavailable("no CUDA backend: this plan runs on the CPU".into())
    }

    /// Makes a GPU plan enqueue all work on a stream the caller owns (a `CUstream` /
    /// `cudaStream_t`; null is the legacy default stream). Until then the plan runs on a
    /// non-blocking stream of its own, not ordered after the caller's work (the legacy default
    /// stream included): set the stream that produces device inputs, or synchronize it first.
    /// A CPU plan returns [`Error::BackendUnavailable`].
    ///
    /// # Safety
    /// The stream must belong to device 0's primary context and outlive its use by the plan.
    pub unsafe fn set_stream(&mut self, stream: *mut std::ffi::c_void) -> Result<()> {
        match &mut self.engine {
            Engine::Cpu(_) => Err(Self::no_cuda()),
            Engine::Cuda(e) => e.set_stream(stream),
        }
    }

    /// Waits for the plan's queued GPU work (no-op on the CPU, where every call is synchronous).
    pub fn synchronize(&self) -> Result<()> {
        match &self.engine {
            Engine::Cpu(_) => Ok(()),
            Engine::Cuda(e) => e.synchronize(),
        }
    }

    /// Factors the uploaded batch in place. Every item is attempted; on failure the error names
    /// the first failing item and [`Plan::item_status`] has the outcome of each. A second
    /// factor needs a new upload.
    pub fn factor(&mut self) -> Result<()> {
        self.check_uploaded()?;
        match &mut self.engine {
            Engine::Cpu(e) => e.factor(&mut self.status, &mut self.boosted, &self.all_items),
            Engine::Cuda(e) => {
                if let Err(err) = e.factor(&mut self.status, &mut self.boosted) {
                    self.state = State::Empty;
                    return Err(err);
                }
            }
        }
        self.state = State::Factored;
        self.fresh.fill(false);
        self.first_failure()
    }

    /// Every item was uploaded since its last factorization (the factor overwrites the matrix).
    fn check_uploaded(&self) -> Result<()> {
        if self.state == State::Empty {
            return Err(Error::InvalidState("factor called before upload".into()));
        }
        if !self.fresh.iter().any(|&f| f) {
            return Err(Error::InvalidState(
                "factor called twice: the factor overwrote the matrix; upload it again".into(),
            ));
        }
        if let Some(k) = self.fresh.iter().position(|&f| !f) {
            return Err(Error::InvalidState(format!(
                "item {k} was not uploaded since its last factorization (the factor overwrote it): \
                 upload it again, or factor the other items with factor_masked"
            )));
        }
        Ok(())
    }

    fn first_failure(&self) -> Result<()> {
        self.first_failure_in(&self.all_items)
    }

    /// The first of `items` whose factorization failed, as the error.
    fn first_failure_in(&self, items: &[usize]) -> Result<()> {
        for &item in items {
            if let ItemStatus::NotPositiveDefinite { block, column } = self.status[item] {
                return Err(Error::NotPositiveDefinite { item, block, column });
            }
        }
        Ok(())
    }

    /// The first of `items` that is not factored (uploaded since the last factor), as the error.
    fn check_factored(&self, items: &[usize]) -> Result<()> {
        match items.iter().find(|&&b| self.status[b] == ItemStatus::Pending) {
            Some(k) => Err(Error::InvalidState(format!(
                "item {k} is not factored (it was uploaded after the last factorization): factor it, \
                 or solve the other items with solve_masked"
            ))),
            None => Ok(()),
        }
    }

    /// Solves Ψ x = b in place for every right-hand side. Items whose factorization failed are
    /// skipped (left unchanged) and the first of them is reported as the error.
    pub fn solve(&mut self, rhs: &mut RhsMut<T>) -> Result<()> {
        if self.state != State::Factored {
            return Err(Error::InvalidState("solve called before factor".into()));
        }
        self.check_factored(&self.all_items)?;
        rhs.shape().required_len(self.dims)?;
        rhs.check_finite(self.dims, self.host_passes())?;
        self.solve_checked(rhs)?;
        self.first_failure()
    }

    /// Solves right-hand sides that live in GPU memory, in place, on the plan's stream. The values
    /// are checked for NaN/Inf on the device and the check is read back once, after the solve has
    /// been queued, so the call returns when the solve is complete (one wait per call, none
    /// between the check and the solve). A non-finite value is reported as [`Error::NonFinite`]
    /// and leaves the array unwritten from its pass of `max_nrhs` columns on (earlier passes are
    /// solved).
    ///
    /// # Safety
    /// `data` must be device memory of the current device holding `shape.required_len(dims)`
    /// elements.
    pub unsafe fn solve_device(&mut self, shape: crate::model::RhsShape, data: *mut T) -> Result<()> {
        if self.state != State::Factored {
            return Err(Error::InvalidState("solve called before factor".into()));
        }
        shape.required_len(self.dims)?;
        match &mut self.engine {
            Engine::Cpu(_) => return Err(Self::no_cuda()),
            Engine::Cuda(e) => e.solve_device(shape, SourceFormat::Native, data as u64, data as u64)?,
        }
        self.first_failure()
    }

    fn solve_checked(&mut self, rhs: &mut RhsMut<T>) -> Result<()> {
        match &mut self.engine {
            Engine::Cpu(e) => e.solve(&self.status, rhs, &self.all_items),
            Engine::Cuda(e) => e.solve_host(&self.status, rhs.shape, rhs.data, None)?,
        }
        Ok(())
    }

    /// [`Plan::factor`] and [`Plan::solve_device`] in one call: one launch sequence and one wait
    /// (none between the factor and the solve). With the sequential algorithm on large f64 batches
    /// (more than four items per multiprocessor) the factor does the forward substitution as it
    /// goes, so the solve reads the factor once instead of twice (same bits as `factor` then
    /// `solve_device`). The
    /// uploaded matrix is factored and the right-hand sides in GPU memory solved in place, with
    /// the errors of those two: items whose factorization failed keep their right-hand side and
    /// the first of them is the error; a non-finite right-hand side leaves the array unwritten
    /// (the factor stands, as after `factor`) and is the error. More columns than one pass of
    /// `solve_device` takes: `factor`, then `solve_device`.
    ///
    /// # Safety
    /// As [`Plan::solve_device`].
    pub unsafe fn factor_solve_device(&mut self, shape: crate::model::RhsShape, data: *mut T) -> Result<()> {
        self.check_uploaded()?;
        shape.required_len(self.dims)?;
        let Engine::Cuda(e) = &mut self.engine else { return Err(Self::no_cuda()) };
        if shape.nrhs > e.max_nrhs() {
            let f = self.factor();
            if self.state == State::Factored {
                self.solve_device(shape, data)?;
            }
            return f;
        }
        if let Err(err) = e.factor_solve_device(&mut self.status, &mut self.boosted, shape, data as u64, data as u64) {
            self.state = State::Empty;
            return Err(err);
        }
        self.state = State::Factored;
        self.fresh.fill(false);
        e.device_rhs_nonfinite()?;
        self.first_failure()
    }

    /// Upload, factor and solve in one call.
    pub fn factor_solve(&mut self, matrix: &BlockTridiagRef<T>, rhs: &mut RhsMut<T>) -> Result<()> {
        rhs.shape().required_len(self.dims)?;
        rhs.check_finite(self.dims, self.host_passes())?;
        self.upload(matrix)?;
        if let Engine::Cuda(e) = &mut self.engine {
            if rhs.shape.nrhs <= e.max_nrhs() {
                // One launch sequence and one synchronisation (engine.rs Sequence::FactorSolve).
                if let Err(err) = e.factor_solve_host(&mut self.status, &mut self.boosted, rhs.shape, rhs.data) {
                    self.state = State::Empty;
                    return Err(err);
                }
                self.state = State::Factored;
                self.fresh.fill(false);
                return self.first_failure();
            }
        }
        let f = self.factor();
        if self.state == State::Factored {
            self.solve_checked(rhs)?;
        }
        f
    }

    /// log det Ψ of each item (`out.len() ≥ batch`), from the factor; NaN for failed items.
    pub fn logdet(&mut self, out: &mut [f64]) -> Result<()> {
        if self.state != State::Factored {
            return Err(Error::InvalidState("logdet called before factor".into()));
        }
        if out.len() < self.dims.batch {
            return Err(Error::BufferTooSmall { what: "logdet output", needed: self.dims.batch, got: out.len() });
        }
        match &mut self.engine {
            Engine::Cpu(e) => e.logdet(&self.status, out),
            Engine::Cuda(e) => e.logdet(out)?,
        }
        Ok(())
    }
}
