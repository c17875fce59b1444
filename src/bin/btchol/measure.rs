//! The runner: measures one [`Case`]. The plan is created once and the problem drawn once, outside
//! all timing; each repeat then uploads (untimed), factors (timed), refreshes the right-hand side
//! (untimed) and solves (timed), so the numbers are what a caller who re-factors per step pays.

use std::time::Instant;

use btchol::reference::{backward_error, random_problem, random_vec};
use btchol::schedule::{sequential_factor_flops, Schedule};
use btchol::{Algorithm, Backend, BlockTridiagRef, DType, Error, Layout, Plan, PlanOptions, RhsMut, RhsRef, Scalar};

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
    pub backward_error: f64,
    /// Parallel levels of the algorithm that ran: ⌊log₂N⌋+1 for nested dissection, N sequential.
    pub levels: usize,
    /// Factor flops of the sequential algorithm for the whole batch (the gflops_factor numerator).
    pub flops_seq: f64,
    /// Factor flops the algorithm that ran actually does, whole batch.
    pub flops_schedule: f64,
    /// Bytes that must move at least: read D and E once, write the factor once.
    pub bytes_min: f64,
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

fn run_typed<T: Scalar>(case: &Case, settings: &RunSettings) -> Result<Measurement, Error> {
    let dims = case.dims;
    let options = PlanOptions {
        backend: case.backend,
        algorithm: case.algorithm,
        layout: Layout::RowMajor,
        threads: case.threads,
        ..Default::default()
    };
    let mut plan = Plan::<T>::new(dims, options)?;
    let (d, e) = random_problem::<T>(settings.seed, dims, Layout::RowMajor, 1.0);
    let matrix = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e)?;
    let rhs_len = dims.batch * dims.rows() * case.nrhs;
    let b = random_vec::<T>(settings.seed.wrapping_add(1), rhs_len);
    let mut x = b.clone();

    // One repeat: returns (factor µs, solve µs); x holds the solution afterwards.
    let mut once = |x: &mut Vec<T>| -> Result<(f64, f64), Error> {
        plan.upload(&matrix)?;
        let t = Instant::now();
        plan.factor()?;
        // A GPU plan may return with work queued: the time must include it (no-op on the CPU).
        plan.synchronize()?;
        let factor = t.elapsed().as_secs_f64() * 1e6;
        x.copy_from_slice(&b);
        let mut rhs = RhsMut::dense(dims, case.nrhs, Layout::RowMajor, x)?;
        let t = Instant::now();
        plan.solve(&mut rhs)?;
        plan.synchronize()?;
        Ok((factor, t.elapsed().as_secs_f64() * 1e6))
    };

    for _ in 0..settings.warmup {
        once(&mut x)?;
    }
    let (mut factor_us, mut solve_us) = (Vec::new(), Vec::new());
    let start = Instant::now();
    loop {
        let (f, s) = once(&mut x)?;
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
            break;
        }
    }

    let backward_error = backward_error(
        &matrix,
        &RhsRef::dense(dims, case.nrhs, Layout::RowMajor, &x)?,
        &RhsRef::dense(dims, case.nrhs, Layout::RowMajor, &b)?,
        &[],
    );

    let (nb, n, batch) = (dims.n_blocks, dims.block_size, dims.batch as f64);
    let algorithm = plan.algorithm();
    let (levels, flops_item) = match algorithm {
        Algorithm::NestedDissection => {
            let s = Schedule::new(nb);
            (s.levels().len(), s.factor_flops(n))
        }
        _ => (nb, sequential_factor_flops(nb, n)),
    };
    let bytes_min = 2.0 * (2 * nb - 1) as f64 * (n * n) as f64 * batch * std::mem::size_of::<T>() as f64;
    Ok(Measurement {
        case: *case,
        backend: plan.backend(),
        device: system::device_name(plan.backend(), plan.gpu_name()),
        algorithm,
        threads: plan.threads(),
        warmup: settings.warmup,
        factor_us: Stats::of(&factor_us),
        solve_us: Stats::of(&solve_us),
        backward_error,
        levels,
        flops_seq: sequential_factor_flops(nb, n) * batch,
        flops_schedule: flops_item * batch,
        bytes_min,
    })
}

#[cfg(test)]
mod tests {
    use super::Stats;

    #[test]
    fn order_statistics() {
        let s = Stats::of(&[5.0, 1.0, 3.0, 2.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!((s.count, s.min, s.median, s.p90), (10, 1.0, 5.5, 9.0));
        let s = Stats::of(&[2.0]);
        assert_eq!((s.median, s.p90), (2.0, 2.0));
    }
}
