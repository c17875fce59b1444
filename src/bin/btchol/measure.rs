//! The runner: measures one [`Case`]. The plan is created once and the problem drawn once, outside
//! all timing; each repeat then uploads (untimed), factors (timed), refreshes the right-hand side
//! (untimed) and solves (timed), so the numbers are what a caller who re-factors per step pays.

use std::time::Instant;

use btchol::reference::{backward_error, random_problem, random_vec};
use btchol::schedule::sequential_factor_flops;
use btchol::{
    Algorithm, Backend, BlockTridiagRef, DType, Error, Layout, MixedPlan, Plan, PlanOptions, RefineOptions, RhsMut,
    RhsRef, RhsShape, Scalar,
};
use sha2::{Digest, Sha256};

use crate::config::{Case, RunSettings, AUTO_MAX_REPEATS, AUTO_MIN_REPEATS, AUTO_MIN_SECONDS};
use crate::system;

/// What one case measured, with everything resolved by the plan (backend, algorithm, threads).
#[derive(Clone, Debug)]
pub struct Measurement {
    pub case: Case,
    pub backend: Backend,
    pub device: String,
    pub algorithm: Algorithm,
    pub threads: usize,
    pub warmup: usize,
    pub factor_us: Stats,
    pub solve_us: Stats,
    /// The same calls timed by CUDA events on the plan's stream (GPU plans; else NaN): from the
    /// GPU reaching the call's start to its last work, as issue 5's cuDSS and socu references
    /// were timed. The wall-clock times above also hold the host's wait for the GPU.
    pub factor_events_us: Stats,
    pub solve_events_us: Stats,
    /// `--factor-solve`: `Plan::factor_solve` (upload + factor + solve, right-hand side in host
    /// memory) in one call, and the same as three calls (upload, factor, solve); with
    /// `--rhs device`, `Plan::factor_solve_device` (factor + solve, after an untimed upload) in one
    /// call, and factor + solve_device as two; else none.
    pub factor_solve_us: Stats,
    pub upload_factor_solve_us: Stats,
    pub backward_error: f64,
    /// Parallel levels of the algorithm that ran: ⌊log₂N⌋+1 for nested dissection, N sequential.
    pub levels: usize,
    /// Factor flops of the sequential algorithm for the whole batch (the gflops_factor numerator).
    pub flops_seq: f64,
    /// Factor flops the algorithm that ran actually does, whole batch.
    pub flops_schedule: f64,
    /// Bytes that must move at least: read D and E once, write the factor once.
    pub bytes_min: f64,
    pub settings: RunSettings,
    /// Refinement steps of the last solve (`mixed` only; else 0).
    pub refine_iterations: usize,
    /// The last mixed solve fell back to an f64 factor.
    pub fell_back: bool,
    /// Items factored and solved (B, or ⌊F·B⌋ with --mask-fraction F).
    pub active_items: usize,
    /// SHA-256 of the last solution's bytes (little-endian elements of all items, in order).
    pub solution_sha256: String,
    /// The solve ran on right-hand sides in GPU memory (`--rhs device` on a GPU plan).
    pub rhs_on_device: bool,
    /// How the plan chose its backend and algorithm (`Plan::dispatch_reason`).
    pub dispatch: String,
}

/// The backward error of dense row-major x against b, skipping the items in `skip`.
fn dense_backward_error<T: Scalar>(
    matrix: &BlockTridiagRef<T>,
    nrhs: usize,
    x: &[T],
    b: &[T],
    skip: &[usize],
) -> Result<f64, Error> {
    let dims = matrix.dims();
    Ok(backward_error(
        matrix,
        &RhsRef::dense(dims, nrhs, Layout::RowMajor, x)?,
        &RhsRef::dense(dims, nrhs, Layout::RowMajor, b)?,
        skip,
    ))
}

/// `--mask-fraction F`: ⌊F·B⌋ items (at least 1), spread evenly over the batch.
fn mask_for(batch: usize, fraction: f64) -> Vec<bool> {
    let count = ((fraction * batch as f64).floor() as usize).max(1);
    (0..batch).map(|k| (k + 1) * count / batch > k * count / batch).collect()
}

fn sha256_hex<T: Scalar>(x: &[T]) -> String {
    let mut h = Sha256::new();
    for v in x {
        h.update(bytes_of(*v));
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The element's own little-endian bytes (4 for f32, 8 for f64).
fn bytes_of<T: Scalar>(v: T) -> Vec<u8> {
    if std::mem::size_of::<T>() == 4 {
        (v.to_f64() as f32).to_le_bytes().to_vec()
    } else {
        v.to_f64().to_le_bytes().to_vec()
    }
}

/// Order statistics of a set of timings (µs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub count: usize,
    pub median: f64,
    pub min: f64,
    pub p90: f64,
}

impl Stats {
    /// No samples (a timer that does not apply): NaN, so empty cells.
    pub fn none() -> Stats {
        Stats { count: 0, median: f64::NAN, min: f64::NAN, p90: f64::NAN }
    }

    pub fn of(samples: &[f64]) -> Stats {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let k = s.len();
        if k == 0 {
            return Stats::default();
        }
        let median = if k % 2 == 1 { s[k / 2] } else { 0.5 * (s[k / 2 - 1] + s[k / 2]) };
        // Nearest-rank 90th percentile: the smallest sample ≥ 90 % of all samples.
        let p90 = s[((0.9 * k as f64).ceil() as usize).clamp(1, k) - 1];
        Stats { count: k, median, min: s[0], p90 }
    }
}

/// Measures one case in its dtype.
pub fn run_case(case: &Case, settings: &RunSettings) -> Result<Measurement, Error> {
    if case.mixed {
        return run_mixed(case, settings);
    }
    match case.dtype {
        DType::F64 => run_typed::<f64>(case, settings),
        DType::F32 => run_typed::<f32>(case, settings),
    }
}

/// Rough peak memory of one case (problem, plan workspace with nested-dissection fill, b and x),
/// to refuse a configuration that cannot fit instead of letting an allocation abort the process.
pub fn estimated_bytes(case: &Case) -> u64 {
    let d = case.dims;
    let blocks = (d.batch as u64) * (d.n_blocks as u64) * (d.block_len() as u64);
    let rhs = (d.batch as u64) * (d.rows() as u64) * (case.nrhs as u64);
    let elem = case.dtype.size_bytes() as u64;
    // Problem D + E (2 blocks per node) and workspace D + slots (at most 3 per node).
    (5 * blocks + 2 * rhs) * elem
}

fn plan_options(case: &Case, settings: &RunSettings) -> PlanOptions {
    PlanOptions {
        backend: case.backend,
        algorithm: case.algorithm,
        layout: Layout::RowMajor,
        threads: case.threads,
        deterministic: settings.deterministic,
        diag_shift: settings.diag_shift,
        ..Default::default()
    }
}

/// Repeats `once` (warm-up first) until the repeat settings are met; returns its timings.
fn repeat(
    settings: &RunSettings,
    mut once: impl FnMut() -> Result<(f64, f64), Error>,
) -> Result<(Stats, Stats), Error> {
    for _ in 0..settings.warmup {
        once()?;
    }
    let (mut factor_us, mut solve_us) = (Vec::new(), Vec::new());
    let start = Instant::now();
    loop {
        let (f, s) = once()?;
        factor_us.push(f);
        solve_us.push(s);
        let k = factor_us.len();
        let done = match settings.repeats {
            Some(r) => k >= r,
            // Adaptive: enough repeats for a stable median on fast cases, bounded time on slow ones.
            None => {
                k >= AUTO_MAX_REPEATS || (k >= AUTO_MIN_REPEATS && start.elapsed().as_secs_f64() >= AUTO_MIN_SECONDS)
            }
        };
        if done {
            return Ok((Stats::of(&factor_us), Stats::of(&solve_us)));
        }
    }
}

/// Mixed precision: f64 problem, f32 factor (timed as the factor), refinement (timed as the solve).
fn run_mixed(case: &Case, settings: &RunSettings) -> Result<Measurement, Error> {
    let dims = case.dims;
    if settings.mask_fraction.is_some() {
        return Err(Error::Unsupported("--mask-fraction with --precision mixed".into()));
    }
    if settings.factor_solve {
        return Err(Error::Unsupported("--factor-solve with --precision mixed (MixedPlan has no factor_solve)".into()));
    }
    let mut plan = MixedPlan::new(dims, plan_options(case, settings), RefineOptions::default())?;
    let (d, e) = random_problem::<f64>(settings.seed, dims, Layout::RowMajor, 1.0);
    let matrix = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e)?;
    let b = random_vec::<f64>(settings.seed.wrapping_add(1), dims.batch * dims.rows() * case.nrhs);
    let mut x = b.clone();
    let mut report = None;
    let (factor_us, solve_us) = repeat(settings, || {
        plan.upload(&matrix)?;
        plan.low_precision_plan().synchronize()?; // the factor's time starts after the upload's
        let t = Instant::now();
        plan.factor()?;
        plan.low_precision_plan().synchronize()?;
        let factor = t.elapsed().as_secs_f64() * 1e6;
        x.copy_from_slice(&b);
        let t = Instant::now();
        report = Some(plan.solve(&mut RhsMut::dense(dims, case.nrhs, Layout::RowMajor, &mut x)?)?);
        Ok((factor, t.elapsed().as_secs_f64() * 1e6))
    })?;
    let report = report.expect("at least one repeat");
    let low = plan.low_precision_plan();
    let mut m = measurement(case, settings, low.backend(), low.gpu_name(), low.algorithm(), low.threads(), 4);
    m.factor_us = factor_us;
    m.solve_us = solve_us;
    m.backward_error = dense_backward_error(&matrix, case.nrhs, &x, &b, &[])?;
    m.refine_iterations = report.iterations;
    m.fell_back = report.fell_back;
    m.solution_sha256 = sha256_hex(&x);
    m.dispatch = low.dispatch_reason().to_string();
    Ok(m)
}

/// A measurement with the case's work counts and no timings yet (`elem`: bytes per element of the
/// factor).
fn measurement(
    case: &Case,
    settings: &RunSettings,
    backend: Backend,
    gpu: Option<&str>,
    algorithm: Algorithm,
    threads: usize,
    elem: usize,
) -> Measurement {
    let dims = case.dims;
    let (nb, n, batch) = (dims.n_blocks, dims.block_size, dims.batch as f64);
    // (The schedule the plan runs: partitioned where `Partition::Auto` picks it.)
    let (levels, flops_item) = match crate::limits::plan_schedule(algorithm, backend, dims) {
        Some(s) => (s.levels().len(), s.factor_flops(n)),
        None => (nb, sequential_factor_flops(nb, n)),
    };
    Measurement {
        case: *case,
        backend,
        device: system::device_name(backend, gpu),
        algorithm,
        threads,
        warmup: settings.warmup,
        factor_us: Stats::default(),
        solve_us: Stats::default(),
        factor_events_us: Stats::none(),
        solve_events_us: Stats::none(),
        factor_solve_us: Stats::none(),
        upload_factor_solve_us: Stats::none(),
        backward_error: f64::NAN,
        levels,
        flops_seq: sequential_factor_flops(nb, n) * batch,
        flops_schedule: flops_item * batch,
        bytes_min: 2.0 * (2 * nb - 1) as f64 * (n * n) as f64 * batch * elem as f64,
        settings: *settings,
        refine_iterations: 0,
        fell_back: false,
        active_items: dims.batch,
        solution_sha256: String::new(),
        rhs_on_device: false,
        dispatch: String::new(),
    }
}

fn run_typed<T: Scalar>(case: &Case, settings: &RunSettings) -> Result<Measurement, Error> {
    let dims = case.dims;
    let options = plan_options(case, settings);
    // (declared before the plan, so dropped after it: the plan uses the timer's stream till then)
    let events: Option<EventTimer>;
    let mut plan = Plan::<T>::new(dims, options)?;
    let (d, e) = random_problem::<T>(settings.seed, dims, Layout::RowMajor, 1.0);
    let matrix = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e)?;
    let rhs_len = dims.batch * dims.rows() * case.nrhs;
    let b = random_vec::<T>(settings.seed.wrapping_add(1), rhs_len);
    let mut x = b.clone();

    let mask = settings.mask_fraction.map(|f| mask_for(dims.batch, f));
    let device_rhs = if settings.rhs_on_device && plan.backend() == Backend::Cuda {
        if mask.is_some() {
            return Err(Error::Unsupported("--rhs device with --mask-fraction".into()));
        }
        Some(DeviceRhs::new(&b)?)
    } else {
        None
    };
    events = if settings.events && plan.backend() == Backend::Cuda { Some(EventTimer::new(&mut plan)?) } else { None };
    if settings.factor_solve && mask.is_some() {
        return Err(Error::Unsupported("--factor-solve with --mask-fraction".into()));
    }
    let (mut factor_events, mut solve_events) = (Vec::new(), Vec::new());
    let (mut one_call, mut three_calls) = (Vec::new(), Vec::new());
    let mut one_call_x = Vec::new(); // (the last factor_solve's solution, checked below)
    let mark = |k: usize| events.as_ref().map_or(Ok(()), |ev| ev.record(k));
    // One repeat: returns (factor µs, solve µs); x holds the solution afterwards.
    let (factor_us, solve_us) = repeat(settings, || {
        plan.upload(&matrix)?;
        // A GPU upload returns with its copy and layout conversion queued: the factor's time
        // starts after them (cuDSS's factor times, issue 5, start from values in GPU memory).
        plan.synchronize()?;
        let t = Instant::now();
        mark(0)?;
        match &mask {
            Some(m) => plan.factor_masked(m)?,
            None => plan.factor()?,
        }
        mark(1)?;
        // A GPU plan may return with work queued: the time must include it (no-op on the CPU).
        plan.synchronize()?;
        let factor = t.elapsed().as_secs_f64() * 1e6;
        let solve = if let Some(dr) = &device_rhs {
            dr.refresh()?;
            let t = Instant::now();
            mark(2)?;
            // SAFETY: dr.x holds B·rows·nrhs elements of device memory of the plan's context.
            unsafe { plan.solve_device(RhsShape::dense(dims, case.nrhs, Layout::RowMajor), dr.x as *mut T)? };
            mark(3)?;
            plan.synchronize()?;
            t.elapsed().as_secs_f64() * 1e6
        } else {
            x.copy_from_slice(&b);
            let mut rhs = RhsMut::dense(dims, case.nrhs, Layout::RowMajor, &mut x)?;
            let t = Instant::now();
            mark(2)?;
            match &mask {
                Some(m) => plan.solve_masked(m, &mut rhs)?,
                None => plan.solve(&mut rhs)?,
            }
            mark(3)?;
            plan.synchronize()?;
            t.elapsed().as_secs_f64() * 1e6
        };
        if let Some(ev) = &events {
            factor_events.push(ev.elapsed_us(0, 1)?);
            solve_events.push(ev.elapsed_us(2, 3)?);
        }
        if let (true, Some(dr)) = (settings.factor_solve, &device_rhs) {
            // Right-hand sides in GPU memory: the matrix uploaded first, untimed (as for the
            // factor), then Plan::factor_solve_device as one call and factor + solve_device as two.
            let shape = RhsShape::dense(dims, case.nrhs, Layout::RowMajor);
            plan.upload(&matrix)?;
            plan.synchronize()?;
            dr.refresh()?;
            let t = Instant::now();
            // SAFETY: dr.x holds B·rows·nrhs elements of device memory of the plan's context.
            unsafe { plan.factor_solve_device(shape, dr.x as *mut T)? };
            plan.synchronize()?;
            one_call.push(t.elapsed().as_secs_f64() * 1e6);
            one_call_x.resize(rhs_len, T::ZERO);
            dr.read(&mut one_call_x)?;
            plan.upload(&matrix)?;
            plan.synchronize()?;
            dr.refresh()?;
            let t = Instant::now();
            plan.factor()?;
            // SAFETY: as above.
            unsafe { plan.solve_device(shape, dr.x as *mut T)? };
            plan.synchronize()?;
            three_calls.push(t.elapsed().as_secs_f64() * 1e6);
        } else if settings.factor_solve {
            // As a caller with a new matrix and right-hand side each time would: one call, then
            // the same three steps as separate calls (host right-hand side both ways).
            let mut y = b.clone();
            let t = Instant::now();
            plan.factor_solve(&matrix, &mut RhsMut::dense(dims, case.nrhs, Layout::RowMajor, &mut y)?)?;
            plan.synchronize()?;
            one_call.push(t.elapsed().as_secs_f64() * 1e6);
            one_call_x.clone_from(&y);
            y.copy_from_slice(&b);
            let t = Instant::now();
            plan.upload(&matrix)?;
            plan.factor()?;
            plan.solve(&mut RhsMut::dense(dims, case.nrhs, Layout::RowMajor, &mut y)?)?;
            plan.synchronize()?;
            three_calls.push(t.elapsed().as_secs_f64() * 1e6);
        }
        Ok((factor, solve))
    })?;
    if let Some(dr) = &device_rhs {
        dr.read(&mut x)?;
    }
    // Unselected items were not solved: the error is over the selected ones.
    let skip: Vec<usize> = mask.as_ref().map_or(Vec::new(), |m| (0..dims.batch).filter(|&k| !m[k]).collect());
    let mut m = measurement(
        case,
        settings,
        plan.backend(),
        plan.gpu_name(),
        plan.algorithm(),
        plan.threads(),
        std::mem::size_of::<T>(),
    );
    m.factor_us = factor_us;
    m.solve_us = solve_us;
    if events.is_some() {
        // (the warm-up repeats come first)
        m.factor_events_us = Stats::of(&factor_events[settings.warmup..]);
        m.solve_events_us = Stats::of(&solve_events[settings.warmup..]);
    }
    if settings.factor_solve {
        m.factor_solve_us = Stats::of(&one_call[settings.warmup..]);
        m.upload_factor_solve_us = Stats::of(&three_calls[settings.warmup..]);
    }
    m.backward_error = dense_backward_error(&matrix, case.nrhs, &x, &b, &skip)?;
    if settings.factor_solve {
        // (the worse of the two: the row's error covers every solution it timed)
        m.backward_error = m.backward_error.max(dense_backward_error(&matrix, case.nrhs, &one_call_x, &b, &skip)?);
    }
    m.active_items = dims.batch - skip.len();
    m.solution_sha256 = sha256_hex(&x);
    m.rhs_on_device = device_rhs.is_some();
    m.dispatch = plan.dispatch_reason().to_string();
    Ok(m)
}

/// What `Plan::new` chooses for the case (backend, algorithm, dispatch reason), without measuring.
pub fn auto_choice(case: &Case, settings: &RunSettings) -> Result<(Backend, Algorithm, String), Error> {
    fn typed<T: Scalar>(case: &Case, settings: &RunSettings) -> Result<(Backend, Algorithm, String), Error> {
        let plan = Plan::<T>::new(case.dims, plan_options(case, settings))?;
        Ok((plan.backend(), plan.algorithm(), plan.dispatch_reason().to_string()))
    }
    match case.dtype {
        DType::F64 => typed::<f64>(case, settings),
        DType::F32 => typed::<f32>(case, settings),
    }
}

/// `--events`: CUDA events around a GPU plan's timed calls, on a stream of the bench's own that
/// the plan is given (`Plan::set_stream`; a non-blocking stream, as the plan's own: measured the
/// same, H100 2026-11-26). It holds device 0's primary context (the plan's) so that its stream and
/// events outlive the plan's hold on it (without, the context went with the plan: a crash).
struct EventTimer {
    device: cudarc::driver::sys::CUdevice,
    context: cudarc::driver::sys::CUcontext,
    stream: cudarc::driver::sys::CUstream,
    events: [cudarc::driver::sys::CUevent; 4],
}

impl EventTimer {
    fn new<T: Scalar>(plan: &mut Plan<T>) -> Result<Self, Error> {
        use cudarc::driver::{result, sys};
        let gpu = |what: &str, e: cudarc::driver::DriverError| Error::Cuda(format!("bench {what}: {e:?}"));
        let device = result::device::get(0).map_err(|e| gpu("device", e))?;
        // SAFETY: retained here, released once in drop.
        let context = unsafe { result::primary_ctx::retain(device) }.map_err(|e| gpu("context", e))?;
        let (stream, events) = (std::ptr::null_mut(), [std::ptr::null_mut(); 4]);
        let mut me = EventTimer { device, context, stream, events };
        // SAFETY: the plan's (primary) context, current for what follows.
        unsafe { result::ctx::set_current(context) }.map_err(|e| gpu("context", e))?;
        me.stream = result::stream::create(result::stream::StreamKind::NonBlocking).map_err(|e| gpu("stream", e))?;
        for ev in &mut me.events {
            *ev = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map_err(|e| gpu("event", e))?;
        }
        // SAFETY: a stream of the current (primary) context, destroyed after the plan's last use
        // of it (the plan is synchronized after every timed call).
        unsafe { plan.set_stream(me.stream as *mut std::ffi::c_void)? };
        Ok(me)
    }
    fn record(&self, k: usize) -> Result<(), Error> {
        // SAFETY: event and stream created by `new`.
        unsafe { cudarc::driver::result::event::record(self.events[k], self.stream) }
            .map_err(|e| Error::Cuda(format!("bench recording an event: {e:?}")))
    }
    /// µs between two recorded events (both complete: the caller synchronized).
    fn elapsed_us(&self, from: usize, to: usize) -> Result<f64, Error> {
        // SAFETY: both events recorded and complete.
        unsafe { cudarc::driver::result::event::elapsed(self.events[from], self.events[to]) }
            .map(|ms| ms as f64 * 1e3)
            .map_err(|e| Error::Cuda(format!("bench reading an event: {e:?}")))
    }
}

impl Drop for EventTimer {
    fn drop(&mut self) {
        use cudarc::driver::result;
        // SAFETY: created by `new` in the retained context, destroyed once; the stream's work is
        // complete. Then the context is released.
        unsafe {
            let _ = result::ctx::set_current(self.context);
            for &ev in &self.events {
                if !ev.is_null() {
                    let _ = result::event::destroy(ev);
                }
            }
            if !self.stream.is_null() {
                let _ = result::stream::synchronize(self.stream);
                let _ = result::stream::destroy(self.stream);
            }
            let _ = result::primary_ctx::release(self.device);
        }
    }
}

/// `--rhs device`: b and x in GPU memory (of the context the plan made current); x is refreshed
/// from b on the device before each solve, untimed.
struct DeviceRhs {
    b: u64,
    x: u64,
    bytes: usize,
}

impl DeviceRhs {
    fn new<T: Scalar>(b: &[T]) -> Result<Self, Error> {
        let bytes = std::mem::size_of_val(b);
        let gpu = |what: &str, e: cudarc::driver::DriverError| Error::Cuda(format!("bench {what}: {e:?}"));
        // SAFETY: plain driver calls on the current context; sizes match the host slice.
        unsafe {
            let db = cudarc::driver::result::malloc_sync(bytes).map_err(|e| gpu("allocating b", e))?;
            let dx = match cudarc::driver::result::malloc_sync(bytes) {
                Ok(p) => p,
                Err(e) => {
                    let _ = cudarc::driver::result::free_sync(db);
                    return Err(gpu("allocating x", e));
                }
            };
            let me = DeviceRhs { b: db, x: dx, bytes };
            cudarc::driver::result::memcpy_htod_sync(db, b).map_err(|e| gpu("copying b", e))?;
            // (runs on the legacy default stream, which the plan's stream is not ordered after)
            btchol::cuda::runtime::sync_legacy_stream("bench copying b")?;
            Ok(me)
        }
    }
    fn refresh(&self) -> Result<(), Error> {
        // SAFETY: both buffers hold `bytes` bytes.
        unsafe { cudarc::driver::result::memcpy_dtod_sync(self.x, self.b, self.bytes) }
            .map_err(|e| Error::Cuda(format!("bench refreshing x: {e:?}")))?;
        // (a device-to-device copy returns before it is done, on the legacy default stream)
        btchol::cuda::runtime::sync_legacy_stream("bench refreshing x")
    }
    fn read<T: Scalar>(&self, x: &mut [T]) -> Result<(), Error> {
        // SAFETY: x has `bytes` bytes (the same length as b).
        unsafe { cudarc::driver::result::memcpy_dtoh_sync(x, self.x) }
            .map_err(|e| Error::Cuda(format!("bench reading x: {e:?}")))
    }
}

impl Drop for DeviceRhs {
    fn drop(&mut self) {
        // SAFETY: allocated by malloc_sync, freed once.
        unsafe {
            let _ = cudarc::driver::result::free_sync(self.b);
            let _ = cudarc::driver::result::free_sync(self.x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Stats;
    use crate::config::BenchConfig;

    /// `--factor-solve` times both ways on every repeat but the warm-up ones, and the row's
    /// backward error covers factor_solve's solution too.
    #[test]
    fn factor_solve_columns_are_filled_when_asked() {
        let mut cfg = BenchConfig {
            backend: btchol::Backend::Cpu,
            block_sizes: vec![3],
            n_blocks: vec![7],
            nrhs: vec![2],
            ..Default::default()
        };
        cfg.run.repeats = Some(4);
        cfg.run.warmup = 1;
        for asked in [false, true] {
            cfg.run.factor_solve = asked;
            let m = super::run_case(&cfg.cases().unwrap()[0], &cfg.run).unwrap();
            assert_eq!(m.factor_solve_us.count, if asked { 4 } else { 0 });
            assert_eq!(m.upload_factor_solve_us.count, m.factor_solve_us.count);
            assert_eq!(m.factor_solve_us.median.is_nan(), !asked);
            assert!(!asked || (m.factor_solve_us.min > 0.0 && m.upload_factor_solve_us.min > 0.0));
            assert!(m.backward_error < 1e-14, "{}", m.backward_error);
        }
    }

    #[test]
    fn order_statistics() {
        let s = Stats::of(&[5.0, 1.0, 3.0, 2.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!((s.count, s.min, s.median, s.p90), (10, 1.0, 5.5, 9.0));
        let s = Stats::of(&[2.0]);
        assert_eq!((s.median, s.p90), (2.0, 2.0));
    }
}
